#!/usr/bin/env bash
# Annotate the study's measured runs with the one setup fact their CSVs leave out: how each run split
# its layers over the pipeline stages. Writes annotated copies of PAPER_DIR/*.csv to OUT_DIR with an
# extra column `partition` (docs/calibration.md, "Two software stacks"):
#   trial < 110000 (torch, fused-softmax, flash1 sweeps, Aug.-Sep. 2023 stack) -> uniform, the
#                  scaling library's default;
#   later trials   (flash2, flash2+rmsnorm)                                    -> empty = the
#                  command's --partition (default auto = balanced, the study code's example config).
# The copies are the study authors' data (CC BY-NC-SA): OUT_DIR must be outside the repository.
# Usage: bash bench/study-runs.sh PAPER_DIR OUT_DIR
#        then e.g. ./build/layoutsim validate OUT_DIR/*.csv -j 2
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bash bench/study-runs.sh PAPER_DIR OUT_DIR" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$2")
case "$out/" in "$repo"/*)
  echo "study-runs: OUT_DIR '$2' is inside the repository; the study's data may not be copied into it" >&2
  exit 2 ;;
esac
shopt -s nullglob
files=("$1"/*.csv)
if [ ${#files[@]} -eq 0 ]; then
  echo "study-runs: no .csv files in '$1'" >&2
  exit 2
fi
mkdir -p "$out"
for f in "${files[@]}"; do
  awk -F, -v OFS=, '
    { sub(/\r$/, "") }
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "trial") tc = i
              if (!tc) { print FILENAME ": no column trial" > "/dev/stderr"; exit 1 }
              print $0, "partition"; next }
    { print $0, ($tc != "" && $tc + 0 < 110000) ? "uniform" : "" }' "$f" > "$out/$(basename "$f")" || { rm -f "$out/$(basename "$f")"; exit 2; }
done
echo "study-runs: ${#files[@]} files annotated in $out"
