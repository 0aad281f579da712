#!/usr/bin/env bash
# The whole test suite again in an ASan + UBSan build (./build-asan), failing on any sanitizer report
# (docs/hardening.md). Usage: bash tools/sanitize.sh   (after tools/setup.sh; tools/test.sh runs it)
# The sanitizer runtimes write to build-asan/sanitizer-logs/ (log_path), not to stderr, which the tesh
# tests compare; what they say there is checked after the suite. Built by clang: GCC 12's UBSan, linked
# with its ASan, ignores log_path and reports on stderr, where a Check test's report would pass unseen.
# - detect_stack_use_after_return=0: SimGrid runs each rank on a stack of its own and switches between
#   them; ASan's fake stacks for use-after-return do not follow the switches. (Each switch also makes
#   ASan warn "ignoring requested __asan_handle_no_return": a warning, not a report, and left in the log.)
# - detect_leaks=0: layoutsim leaves what it holds at exit to the kernel (a pool worker frees nothing
#   before it exits, analysis/pool.c), and LeakSanitizer would change every exit status to 23. Leaks
#   while running are the fuzz harnesses' business (tools/fuzz.sh: LeakSanitizer after every input).
# - intercept_strstr=0: ASan's strstr measures the whole haystack at every call, which makes GLib's
#   g_strsplit of pj_dump's 10 MB output in test_traces quadratic (it timed out after 300 s).
set -uo pipefail
cd "$(dirname "$0")/.."
B=build-asan
if [ -f $B/build.ninja ]; then
  meson setup $B --reconfigure >/dev/null
else
  CC=clang CXX=clang++ meson setup $B -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi || exit 1
ninja -C $B > $B/ninja.log || { tail -30 $B/ninja.log; exit 1; }
logs=$PWD/$B/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
export ASAN_OPTIONS="log_path=$logs/asan:detect_stack_use_after_return=0:detect_leaks=0:intercept_strstr=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1"
meson test -C $B --print-errorlogs --num-processes 2
rc=$?
# a report: ASan's "ERROR: AddressSanitizer: ...", UBSan's "FILE:LINE:COL: runtime error: ..."
reports=$(cat "$logs"/* 2>/dev/null | grep -cE 'ERROR: [A-Za-z]+Sanitizer|runtime error:')
if [ "$reports" -gt 0 ]; then
  echo "sanitizer reports: $reports, in:"
  grep -lE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$logs"/*
  grep -hE -A12 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$logs"/* | head -60
  exit 1
fi
echo "sanitizer reports: 0 ($(ls "$logs" | wc -l) logs of warnings only, in $B/sanitizer-logs)"
exit $rc
