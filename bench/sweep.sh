#!/usr/bin/env bash
# How fast is a sweep? Runs the full default layout space of llama-30b, seq 2048, 256 GPUs, crossed
# with --ib-gbps 200,400 (every valid tp, pp, micro-batch, sp, checkpointing and attention kernel),
# RUNS times (default 3), and prints per run the layouts enumerated, invalid, pruned as out of
# memory (not replayed), replayed (fast and full) and the wall time, then the median wall time and
# layouts per second, and the CPU time of each run (user and system, its workers included: /usr/bin/time).
# The target of issue 14 is at most 30 s on a 2-core machine; issue 28's, system time under 15% of user.
# SWEEP_CSV=FILE keeps the last run's CSV (to compare two builds' output with cmp).
# Usage: bash bench/sweep.sh [RUNS [JOBS]]   (after tools/setup.sh)
set -euo pipefail
runs=${1:-3} jobs=${2:-2}
for v in "$runs" "$jobs"; do [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "sweep.sh: '$v' is not a positive integer" >&2; exit 2; }; done
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || { echo "sweep.sh: no $bin: build first (bash tools/setup.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--model llama-30b --seq-len 2048 --gpus 256 --ib-gbps 200,400 -j "$jobs")
printf "%4s %10s %8s %8s %9s %6s %6s %9s %8s %8s %6s\n" run enumerated invalid pruned replayed fast full wall_s user_s sys_s sys%
for ((i = 1; i <= runs; i++)); do
  s=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/cpu" "$bin" sweep "${args[@]}" --format csv -o "$work/s.csv"
  e=$(date +%s.%N)
  read -r user sys < "$work/cpu"
  awk -F, -v run="$i" -v wall="$(awk -v s="$s" -v e="$e" 'BEGIN {print e - s}')" -v user="$user" -v sys="$sys" '
    NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
    { n++; st = $c["status"]; f = $c["fidelity"]
      if (st == "invalid") inv++; else if (f == "memory") pr++; else { rep++; fa += f == "fast"; fu += f == "full" } }
    END { printf "%4d %10d %8d %8d %9d %6d %6d %9.2f %8.2f %8.2f %5.1f%%\n", run, n, inv, pr, rep, fa, fu, wall, user, sys,
                 (user > 0 ? 100 * sys / user : 0) }' "$work/s.csv" | tee -a "$work/runs"
done
[ -z "${SWEEP_CSV:-}" ] || cp "$work/s.csv" "$SWEEP_CSV"
awk '{ w[NR] = $8; n = $2 } END {
  for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
  m = NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2
  printf "median wall %.2f s over %d runs: %.0f layouts/s (target: %d layouts in at most 30 s)\n", m, NR, n / m, n
}' "$work/runs"
awk '{ u += $9; y += $10 } END { printf "CPU over the runs: user %.2f s, system %.2f s: system %.1f%% of user (target: under 15%%)\n", u, y, (u > 0 ? 100 * y / u : 0) }' "$work/runs"
