#!/usr/bin/env bash
# Leave one model out: calibrate on one model's measured runs, validate on the other's, both ways
# (docs/calibration.md, "Leave one model out"). The out-of-sample error is the figure that tells how
# the simulator will do on settings it was not fitted to.
#   1. bench/study-runs.sh writes the study's runs, annotated with each run's partition and time_fit,
#      to WORK_DIR/study;
#   2. for each of llama-13b and llama-65b: layoutsim calibrate (fragmentation and timing, from the
#      prior stack study-prior, 31 evaluations) on that model's files -> WORK_DIR/cal-MODEL.json (a stack);
#   3. layoutsim validate of the other model's files with that stack: all their rows, then the rows
#      a timing fit would use (without those marked time_fit no by study-runs.sh, whose oom rows go
#      too, so the OOM accuracy there is over fewer labels; copies in WORK_DIR/fit-rows).
# WORK_DIR must lie outside the repository (it holds copies of the study's data). About 25 minutes
# on 2 cores. Usage: bash bench/loo.sh PAPER_DIR WORK_DIR [JOBS]
set -euo pipefail
die() { echo "loo: $*" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: bash bench/loo.sh PAPER_DIR WORK_DIR [JOBS]"
jobs=${3:-2}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "JOBS '$jobs' is not a positive integer"
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
bash "$here/study-runs.sh" "$1" "$2/study" # checks PAPER_DIR, and that WORK_DIR is outside the repository
shopt -s nullglob
for fit in 13b 65b; do
  other=$([ "$fit" = 13b ] && echo 65b || echo 13b)
  train=("$2"/study/llama"$fit"-*.csv) test=("$2"/study/llama"$other"-*.csv)
  [ ${#train[@]} -gt 0 ] && [ ${#test[@]} -gt 0 ] || die "no llama$fit-*.csv or llama$other-*.csv in '$1'"
  echo "== fit on llama-$fit, validate on llama-$other"
  "$bin" calibrate "${train[@]}" --stack study-prior -o "$2/cal-$fit.json" --max-evals 31 -j "$jobs" \
    2> >(grep -E "best objective|fragmentation [0-9]|rows measured ok" >&2)
  "$bin" validate "${test[@]}" --stack "$2/cal-$fit.json" -j "$jobs"
  echo "== the same, without the rows marked time_fit no"
  mkdir -p "$2/fit-rows"
  kept=()
  for f in "${test[@]}"; do
    dst="$2/fit-rows/$(basename "$f")"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_fit") c = i } !c || NR == 1 || $c != "no"' "$f" > "$dst"
    kept+=("$dst")
  done
  "$bin" validate "${kept[@]}" --stack "$2/cal-$fit.json" -j "$jobs"
done
