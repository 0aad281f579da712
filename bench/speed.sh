#!/usr/bin/env bash
# Wall-clock speed of layoutsim on reference layouts: median of N runs each (machines are noisy).
# Usage: bash bench/speed.sh [RUNS]     (after tools/setup.sh; default 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=./build/layoutsim
cases=(
  "13b-64gpu-default|simulate"
  "65b-128gpu-tp2pp4-mb1 (study's best 65B)|simulate --model llama-65b --gpus 128 --tp 2 --pp 4 --micro-batch 1"
  "65b-64gpu-tp8pp8-mb1 (2048 micro-batches)|simulate --model llama-65b --gpus 64 --tp 8 --pp 8 --micro-batch 1"
  "13b-256gpu-tp2pp4-every_layer|simulate --gpus 256 --tp 2 --pp 4 --checkpointing every_layer --attention-kernel flash2"
)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-45s %10s %10s\n" "case" "median_s" "runs"
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  m=$(for ((i = 0; i < runs; i++)); do
    s=$(date +%s.%N); $bin $args >/dev/null; e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN {print e - s}'
  done | median)
  printf "%-45s %10.3f %10d\n" "$name" "$m" "$runs"
done
