#!/usr/bin/env bash
# Build and run the libFuzzer harnesses of tests/fuzz/ (docs/hardening.md).
# Usage: bash tools/fuzz.sh build                 configure ./build-fuzz (clang, -Dfuzz=true, ASan + UBSan), build them
#        bash tools/fuzz.sh run NAME [SECONDS] [LIBFUZZER OPTIONS...]
#                                                 fuzz one harness (model, profile, graph, table, options, platform, merge) for
#                                                 SECONDS (default 600), one process
#        bash tools/fuzz.sh ci [SECONDS]          build, replay every seed, then each harness SECONDS (default 20)
# The seeds (tests/fuzz/corpus/NAME) are only read; what a run learns goes to build-fuzz/corpus/NAME, kept
# from run to run, and a crash, leak or slow input (over 10 s) to build-fuzz/crashes/NAME/. Exit status 1
# when any harness failed: its input is there, and to be kept as a seed once it is fixed.
set -uo pipefail
cd "$(dirname "$0")/.."
HARNESSES=(model profile graph table options platform merge)
B=build-fuzz

build() {
  if [ -f $B/build.ninja ]; then
    meson setup $B --reconfigure >/dev/null || return 1
  else
    CC=clang CXX=clang++ meson setup $B -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false >/dev/null ||
      return 1
  fi
  ninja -C $B "${HARNESSES[@]/#/tests/fuzz/fuzz_}" > $B/ninja.log || { tail -30 $B/ninja.log; return 1; }
}

# run NAME SECONDS [OPTIONS...]: fuzz from the seeds and what earlier runs found; libFuzzer's status
run() {
  local name=$1 seconds=$2
  shift 2
  mkdir -p $B/corpus/"$name" $B/crashes/"$name"
  $B/tests/fuzz/fuzz_"$name" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    -artifact_prefix=$B/crashes/"$name"/ "$@" $B/corpus/"$name" tests/fuzz/corpus/"$name"
}

# every seed once, no fuzzing: the crashes kept as seeds stay fixed
regress() {
  local name=$1
  $B/tests/fuzz/fuzz_"$name" -runs=0 -timeout=10 tests/fuzz/corpus/"$name"
}

case "${1:-}" in
build) build ;;
run)
  [ $# -ge 2 ] || { echo "usage: bash tools/fuzz.sh run NAME [SECONDS] [LIBFUZZER OPTIONS...]" >&2; exit 2; }
  name=$2
  seconds=${3:-600}
  shift $(($# < 3 ? $# : 3))
  build && run "$name" "$seconds" "$@"
  ;;
ci)
  seconds=${2:-20}
  build || { echo "fuzz: the harnesses do not build"; exit 1; }
  failed=()
  for h in "${HARNESSES[@]}"; do
    # -seed=1: the same mutations in the same order on every run, so that CI explores a fixed prefix
    # (a slower machine a shorter one) and a red run is a finding, not a dice roll; hours-long runs
    # (run) take libFuzzer's random seed
    regress "$h" > $B/fuzz-"$h".log 2>&1 && run "$h" "$seconds" -seed=1 >> $B/fuzz-"$h".log 2>&1 || failed+=("$h")
    echo "fuzz $h: $(grep -E '^#[0-9]+[[:space:]]+DONE' $B/fuzz-"$h".log | tail -1)"
  done
  if ((${#failed[@]})); then
    for h in "${failed[@]}"; do
      echo "fuzz $h FAILED ($B/fuzz-$h.log, input in $B/crashes/$h/):"
      grep -E 'ERROR|fuzz:|SUMMARY' $B/fuzz-"$h".log | head -5
    done
    exit 1
  fi
  ;;
*) sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
