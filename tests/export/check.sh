#!/usr/bin/env bash
# check -- layoutsim simulate --export against the expected files of tests/export/cases.txt (every case, every
# target), and every argument of each Megatron-LM export against Megatron-LM's own argument names
# (tests/export/megatron-arguments.txt): an exported name Megatron does not have would stop its launch.
# Usage: bash tests/export/check.sh LAYOUTSIM SRCDIR
set -uo pipefail
bin=$(realpath "$1")
cd "$2" || exit 1
bad=0
n=0
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  for t in megatron nemo torchtitan; do
    n=$((n + 1))
    got=$(eval "\"$bin\" simulate $args --export $t" 2>&1)
    if [ "$got" != "$(cat "tests/export/$name.$t")" ]; then
      echo "not ok $n - $name $t differs:"; diff <(echo "$got") "tests/export/$name.$t" | head -20; bad=$((bad + 1)); continue
    fi
    echo "ok $n - $name $t"
    [ "$t" = megatron ] || continue
    n=$((n + 1))
    unknown=$(echo "$got" | grep -v '^#' | grep -oE '^--[a-z0-9-]+' | while read -r a; do
      grep -qxF -- "$a" tests/export/megatron-arguments.txt || echo "$a"; done)
    if [ -n "$unknown" ]; then echo "not ok $n - $name: not Megatron-LM arguments: $unknown"; bad=$((bad + 1))
    else echo "ok $n - $name: every argument is one of Megatron-LM's"; fi
  done
done < tests/export/cases.txt
# sweep --export: the preferred layout's export, rebuilt from its ranked row, is the export of the same options
# given to simulate (every layout column carried: cp, sp, the interleaved schedule, recompute, ZeRO, overlaps)
one="--model llama3-8b --profile h100-sxm5-80gb --gpus 32 --tp 2 --pp 2 --cp 2 --sp 1 --schedule interleaved
  --virtual-stages 2 --global-batch 64 --seq-len 8192 --checkpointing selective --attention-kernel flash2
  --micro-batch 1 --zero 1 --overlap-grad-reduce 1 --overlap-param-gather 1"
for t in megatron nemo torchtitan; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  swept=$("$bin" sweep $one --export $t 2>/dev/null | sed -n '/^# rank 1 (preferred): /,$p' | tail -n +2)
  # shellcheck disable=SC2086
  if [ -n "$swept" ] && [ "$swept" = "$("$bin" simulate $one --export $t 2>&1)" ]; then echo "ok $n - sweep --export $t"
  else echo "not ok $n - sweep --export $t differs from simulate's"; bad=$((bad + 1)); fi
done
echo "export: $n checks, $bad failed"
[ $bad -eq 0 ] && [ $n -ge 15 ]
