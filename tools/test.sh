#!/usr/bin/env bash
# Run the whole test suite and print one closing line "N passed, N failed" (docs/hardening.md):
#   1. the meson suite (Check and tesh tests) in ./build;
#   2. the same suite in an ASan + UBSan build, and its sanitizer logs free of reports (tools/sanitize.sh);
#   3. one simulate under valgrind memcheck with zero errors (tools/valgrind.sh);
#   4. each fuzz harness over its seeds, then for 20 s (tools/fuzz.sh ci).
# Each meson test counts one, and so do the sanitizer logs, the valgrind run and each harness.
# Usage: bash tools/test.sh [--quick]   (after tools/setup.sh; --quick: step 1 only)
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0
failed=0

# the results of a meson run: its testlog's OK and SKIP tests pass and skip, the others fail; none is a failure
count_meson() {
  local log=$1/meson-logs/testlog.json ok skip total
  if [ ! -f "$log" ]; then
    failed=$((failed + 1))
    return
  fi
  ok=$(grep -c '"result": "OK"' "$log")
  skip=$(grep -c '"result": "SKIP"' "$log")
  total=$(grep -c '"result"' "$log")
  passed=$((passed + ok))
  failed=$((failed + total - ok - skip))
}

# one check: pass when its status is 0
count_one() {
  if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

rm -f build/meson-logs/testlog.json
meson test -C build --print-errorlogs --num-processes 2
count_meson build
if [ "${1:-}" != "--quick" ]; then
  echo "== the suite under ASan + UBSan (build-asan)"
  rm -f build-asan/meson-logs/testlog.json
  bash tools/sanitize.sh | tee build/sanitize.log
  count_meson build-asan
  grep -q '^sanitizer reports: 0 ' build/sanitize.log
  count_one $?
  echo "== simulate under valgrind memcheck"
  bash tools/valgrind.sh
  count_one $?
  echo "== fuzz harnesses (build-fuzz)"
  bash tools/fuzz.sh ci 20 | tee build/fuzz.log
  harnesses=$(grep -cE '^fuzz [a-z]+: ' build/fuzz.log)
  bad=$(grep -cE '^fuzz [a-z]+ FAILED' build/fuzz.log)
  if [ "$harnesses" -eq 0 ]; then bad=1; fi # it did not build
  passed=$((passed + harnesses - bad))
  failed=$((failed + bad))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
