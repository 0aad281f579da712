#!/usr/bin/env bash
# One simulate under valgrind memcheck, with zero errors (docs/hardening.md): a pipelined, tensor- and
# data-parallel layout (mirrored ranks, send/recv, every collective) with every trace written, so that
# the replay, the timeline and each trace writer run. Memory definitely lost at exit counts as an error.
# No suppression file: memcheck finds no error in SimGrid or GLib on this run (nor a warning about
# SimGrid's switches between its ranks' stacks), and simulate frees what it allocated.
# Usage: bash tools/valgrind.sh   (after tools/setup.sh; tools/test.sh runs it)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/layoutsim-valgrind-XXXXXX)
trap 'rm -rf "$out"' EXIT
valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file="$out/memcheck.log" \
  ./build/layoutsim simulate --model llama-7b --gpus 16 --tp 2 --pp 4 --global-batch 16 \
  --timeline-svg "$out/t.svg" --memory-svg "$out/m.svg" --chrome-trace "$out/c.json" --timeline-csv "$out/t.csv" \
  --paje "$out/t.paje" -o "$out/summary.txt"
rc=$?
grep -E 'ERROR SUMMARY|definitely lost' "$out/memcheck.log" | sed 's/^==[0-9]*== /valgrind: /'
if [ $rc -ne 0 ]; then
  echo "valgrind: simulate exited with status $rc (99: memcheck found errors):"
  grep -vE '^==[0-9]+== *$' "$out/memcheck.log" | head -80
  exit 1
fi
