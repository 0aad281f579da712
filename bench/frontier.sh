#!/usr/bin/env bash
# One training step of a 405B-class model (llama3-405b, seq 8192, tp8 pp16, every-layer checkpointing, the nemo
# stack) on 1,024, 16,384 and 131,072 GPUs of H100 (DGX, fat-tree) and GB200 NVL72: wall, user and system CPU
# time and maximum RSS of each `layoutsim simulate` (/usr/bin/time -v), 16 micro-batches per data-parallel
# replica at every size (weak scaling: the global batch grows with dp). docs/sweep.md, "131,072 GPUs".
# Usage: bash bench/frontier.sh [GPUS...]   (default 1024 16384 131072; after tools/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/layoutsim
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 16384 131072)
printf "%-16s %8s %10s %8s %8s %8s %10s %s\n" profile gpus step_s wall_s user_s sys_s maxrss_MiB status
for prof in h100-sxm5-80gb gb200-nvl72; do
  for g in "${sizes[@]}"; do
    dp=$((g / 128))
    log=$(mktemp)
    set +e
    /usr/bin/time -v "$bin" simulate --profile "$prof" --model llama3-405b --seq-len 8192 --stack nemo --gpus "$g" \
      --tp 8 --pp 16 --checkpointing every_layer --global-batch $((dp * 16)) --format json >"$log.out" 2>"$log"
    rc=$?
    set -e
    step=$(awk -F'[:,]' '/"step_time_s"/ {gsub(/[ \t]/, "", $2); printf "%.3f", $2; exit}' "$log.out")
    awk -v p="$prof" -v g="$g" -v s="${step:--}" -v rc="$rc" -F': ' '
      /Elapsed \(wall clock\)/ {n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i]}
      /User time/ {u = $2} /System time/ {y = $2} /Maximum resident/ {m = $2 / 1024}
      END {printf "%-16s %8d %10s %8.2f %8.2f %8.2f %10.0f %s\n", p, g, s, w, u, y, m, rc ? "FAILED" : "ok"}' "$log"
    [ "$rc" = 0 ] || grep -v '^\s' "$log" | head -2 >&2
    rm -f "$log" "$log.out"
  done
done
