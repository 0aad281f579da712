#!/usr/bin/env bash
# Leave one setting out: for each measured file of the study (one setting each: model, sequence
# length, GPUs), calibrate on the other files and validate on it, next to the in-sample line of the
# shipped stack (docs/calibration.md, "Leave one setting out"). A finer cut than bench/loo.sh's
# leave one model out: how the simulator does on a setting it was not fitted to when the other
# settings of the same model were.
#   1. bench/study-runs.sh writes the study's runs, annotated with each run's partition and time_fit,
#      to WORK_DIR/study;
#   2. per file F: layoutsim calibrate (fragmentation and timing, from the prior stack study-prior,
#      31 evaluations) on the others -> WORK_DIR/cal-without-F.json (a stack), then layoutsim
#      validate F with it and with the shipped stack.
# WORK_DIR must lie outside the repository (it holds copies of the study's data). About 12 minutes
# per file on 2 cores. Usage: bash bench/loso.sh PAPER_DIR WORK_DIR [JOBS]
set -euo pipefail
die() { echo "loso: $*" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: bash bench/loso.sh PAPER_DIR WORK_DIR [JOBS]"
jobs=${3:-2}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "JOBS '$jobs' is not a positive integer"
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
bash "$here/study-runs.sh" "$1" "$2/study" # checks PAPER_DIR, and that WORK_DIR is outside the repository
shopt -s nullglob
all=("$2"/study/*.csv)
[ ${#all[@]} -ge 2 ] || die "fewer than two measured files in '$1'"
for held in "${all[@]}"; do
  name=$(basename "$held" .csv)
  train=()
  for f in "${all[@]}"; do [ "$f" = "$held" ] || train+=("$f"); done
  echo "== fit without $name, validate on it (then the shipped stack, in sample)"
  "$bin" calibrate "${train[@]}" --stack study-prior -o "$2/cal-without-$name.json" --max-evals 31 \
    -j "$jobs" 2> >(grep -E "best objective|fragmentation [0-9]" >&2)
  "$bin" validate "$held" --stack "$2/cal-without-$name.json" -j "$jobs" | tail -n +3
  "$bin" validate "$held" -j "$jobs" | tail -n 2
done
