#!/usr/bin/env bash
# Run the whole test suite (meson + Check) and print one closing line "N passed, N failed".
# Usage: bash tools/test.sh   (after tools/setup.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
meson test -C build --print-errorlogs --num-processes 2
rc=$?
log=build/meson-logs/testlog.json
passed=$(grep -c '"result": "OK"' "$log" || true)
total=$(grep -c '"result"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
echo "$passed passed, $((total - passed - skipped)) failed"
exit $rc
