#!/usr/bin/env bash
# Annotate the study's measured runs with what their CSVs leave out. Writes annotated copies of
# PAPER_DIR/*.csv to OUT_DIR with two extra columns (docs/calibration.md):
#   partition: how each run split its layers over the pipeline stages ("Two software stacks"):
#     trial < 110000 (torch, fused-softmax, flash1 sweeps: the earlier software stack) -> uniform, the
#                    scaling library's default;
#     later trials   (flash2, flash2+rmsnorm) -> empty = the command's --partition (default auto =
#                    balanced, the study code's example configuration).
#   time_fit: `no` on the later stack's runs (trial >= 110000) with pp 2 and tp <= 2 (54 rows: 27
#     measured ok, 27 oom), whose step times carry about six pipeline-bubble periods that no mechanism
#     of the model explains ("What the data say the model is missing"); calibrate leaves those times
#     out of its timing fit (their OOM labels still count), validate still reports them. Empty
#     elsewhere (= yes).
# The copies are the study authors' data (CC BY-NC-SA): OUT_DIR must be outside the repository, and
# must not be PAPER_DIR.
# Usage: bash bench/study-runs.sh PAPER_DIR OUT_DIR
#        then e.g. ./build/layoutsim validate OUT_DIR/*.csv -j 2
set -euo pipefail
die() { echo "study-runs: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: bash bench/study-runs.sh PAPER_DIR OUT_DIR"
[ -d "$1" ] || die "PAPER_DIR '$1' is not a directory"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
in=$(cd "$1" && pwd -P)
out=$(realpath -m "$2")
case "$out/" in "$repo"/*) die "OUT_DIR '$2' is inside the repository; the study's data may not be copied into it" ;; esac
[ "$out" != "$in" ] || die "OUT_DIR '$2' is PAPER_DIR; the copies would overwrite the originals"
[ ! -e "$out" ] || [ -d "$out" ] || die "OUT_DIR '$2' exists and is not a directory"
shopt -s nullglob
files=("$in"/*.csv)
[ ${#files[@]} -gt 0 ] || die "no .csv files in '$1'"
mkdir -p "$out"
for f in "${files[@]}"; do
  dst="$out/$(basename "$f")"
  if ! awk -F, -v OFS=, '
      { sub(/\r$/, "") }
      NF == 0 { print; next }
      !tc { for (i = 1; i <= NF; i++) c[$i] = i
            if (!("trial" in c) || !("tp" in c) || !("pp" in c)) { print FILENAME ": needs columns trial, tp and pp" > "/dev/stderr"; exit 1 }
            tc = c["trial"]; print $0, "partition", "time_fit"; next }
      { early = $tc != "" && $tc + 0 < 110000; late = $tc != "" && $tc + 0 >= 110000
        print $0, early ? "uniform" : "", (late && $c["pp"] + 0 == 2 && $c["tp"] + 0 <= 2) ? "no" : "" }' "$f" > "$dst.tmp"; then
    rm -f "$dst.tmp"
    exit 2
  fi
  [ -s "$dst.tmp" ] || { rm -f "$dst.tmp"; die "$f is empty"; }
  mv "$dst.tmp" "$dst"
done
echo "study-runs: ${#files[@]} files annotated in $out"
