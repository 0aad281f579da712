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
echo "export: $n checks, $bad failed"
[ $bad -eq 0 ] && [ $n -ge 12 ]
