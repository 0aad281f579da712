#!/usr/bin/env bash
# The frontier search (issue 28, docs/sweep.md "Exact top-K"): llama3-70b, seq 8192, on 1,024 H100, the sweep's
# default space (every valid tp, pp, micro-batch, sp, checkpointing none/every_layer and attention kernel) ranked
# for its top 10 by bound and prune, RUNS times (default 1): per run the layouts enumerated, invalid, pruned by
# memory, pruned by bound, replayed, the wall time and the CPU time (user and system, children included) per
# replayed layout; then the median wall time and the last run's top 10. Then the check: the top 10 of llama3-8b
# on 64 H100 by bound and prune equal the exhaustive sweep's (--exhaustive), with both wall times.
# SPACE=full: the issue's full space (--space full: ZeRO 0-3, both overlaps, every schedule and virtual stages, cp to
# 8, every checkpointing, fp8) instead: its size for the 70b on 1,024 H100 and llama3-8b on 64 H100 (one run refuses
# above 100,000), then RUNS timed runs of the 8b's slice at micro-batch 1, flash2+rmsnorm, bf16 (SLICE overrides),
# with the CPU time per layout and the full space's CPU time at that rate, then (CHECK 1) the top 10 of a
# smaller slice (CHECK_SLICE) against --exhaustive.
# Usage: bash bench/search.sh [RUNS [JOBS [CHECK]]]   (after tools/setup.sh; CHECK 0 skips the check)
# EXTRA (environment): more sweep options for the 70b run, e.g. EXTRA="--schedule 1f1b,interleaved --cp 1,2".
# CHECK_EXTRA: more for the check (default: --attention-kernel flash2+rmsnorm, which keeps its exhaustive sweep
# to a few minutes on 2 cores; empty quotes for the whole default space).
set -euo pipefail
runs=${1:-1} jobs=${2:-2} check=${3:-1}
for v in "$runs" "$jobs"; do [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "search.sh: '$v' is not a positive integer" >&2; exit 2; }; done
[[ "$check" =~ ^[01]$ ]] || { echo "search.sh: CHECK '$check' is not 0 or 1" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || { echo "search.sh: no $bin: build first (bash tools/setup.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a extra <<< "${EXTRA:-}"
read -r -a check_extra <<< "${CHECK_EXTRA---attention-kernel flash2+rmsnorm}"
big=(--model llama3-70b --seq-len 8192 --gpus 1024 --profile h100-sxm5-80gb --top 10 -j "$jobs" "${extra[@]}")

# one timed sweep: its text to $1, "wall user sys" (seconds, children included) to $1.time
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$out.time" "$bin" sweep "$@" > "$out"
}

# the counts of a sweep's text summary: enumerated invalid do_not_fit pruned_by_bound replayed
counts() {
  awk 'NR == 2 { e = $2; i = $4; n = 0; b = 0; r = 0
         for (k = 1; k <= NF; k++) {
           if ($(k) == "do" && $(k + 1) == "not" && $(k + 2) == "fit") n = $(k - 1)
           if ($(k) == "pruned" && $(k + 1) == "by" && $(k + 2) == "bound") b = $(k - 1)
           if ($(k) == "replayed" && $(k + 1) ~ /^\(/) r = $(k - 1) }
         sub(/,/, "", e); sub(/,/, "", i); print e, i, n, b, r }' "$1"
}

# RUNS timed sweeps of "$@", the text to $1, one row each (to $work/runs too): the counts of its summary, the wall
# time and the CPU time (user, system), per enumerated layout (PER layout: the full space's rate, in ms) or per
# replayed layout (PER replay, in s)
runs_table() {
  local out=$1 per=$2
  shift 2
  if [ "$per" = layout ]; then
    printf "%4s %10s %8s %13s %15s %9s %8s %8s %8s %12s\n" run enumerated invalid pruned_memory pruned_bound replayed \
      wall_s user_s sys_s cpu_ms/layout
  else
    printf "%4s %10s %8s %13s %15s %9s %8s %15s %15s\n" run enumerated invalid pruned_memory pruned_bound replayed \
      wall_s user_s/replay sys_s/replay
  fi
  for ((i = 1; i <= runs; i++)); do
    timed "$out" "$@"
    read -r e inv oom b r < <(counts "$out")
    read -r wall user sys < "$out.time"
    awk -v per="$per" -v i="$i" -v e="$e" -v inv="$inv" -v oom="$oom" -v b="$b" -v r="$r" -v w="$wall" -v u="$user" \
      -v s="$sys" 'BEGIN {
        if (per == "layout")
          printf "%4d %10d %8d %13d %15d %9d %8.1f %8.1f %8.1f %12.2f\n", i, e, inv, oom, b, r, w, u, s, 1000 * (u + s) / e
        else
          printf "%4d %10d %8d %13d %15d %9d %8.1f %15.4f %15.4f\n", i, e, inv, oom, b, r, w, r ? u / r : 0, r ? s / r : 0 }' |
      tee -a "$work/runs"
  done
}

if [ "${SPACE:-default}" = full ]; then
  full=(--seq-len 8192 --profile h100-sxm5-80gb --space full --top 10 -j "$jobs")
  # the size of a full space: the refusal's count (one run holds at most 100,000)
  size() { { "$bin" sweep "$@" 2>&1 || true; } | sed -n 's/.*sweep: \([0-9]*\) layouts to enumerate.*/\1/p' | head -1; }
  n70=$(size --model llama3-70b --gpus 1024 "${full[@]}")
  n8=$(size --model llama3-8b --gpus 64 "${full[@]}")
  echo "full space: llama3-70b on 1,024 H100: ${n70:-?} layouts; llama3-8b on 64 H100: ${n8:-?} layouts"
  read -r -a slice <<< "${SLICE:---micro-batch 1 --attention-kernel flash2+rmsnorm --precision bf16}"
  echo "llama3-8b, seq 8192, 64 H100, full space at ${slice[*]}, top 10 by bound and prune, -j $jobs"
  runs_table "$work/slice.txt" layout --model llama3-8b --gpus 64 "${full[@]}" "${slice[@]}"
  awk -v n70="${n70:-0}" -v n8="${n8:-0}" -v j="$jobs" '{ c[NR] = $10 } END {
    for (i = 1; i <= NR; i++) for (k = i + 1; k <= NR; k++) if (c[k] < c[i]) { t = c[i]; c[i] = c[k]; c[k] = t }
    m = NR % 2 ? c[(NR + 1) / 2] : (c[NR / 2] + c[NR / 2 + 1]) / 2
    printf "median CPU %.2f ms per layout: the 8b full space %.1f CPU-hours, the 70b full space %.1f CPU-hours at that rate", m, m * n8 / 3.6e6, m * n70 / 3.6e6
    printf " (%.1f h wall on %d cores; target: 60 s)\n", m * n70 / 3.6e6 / j, j }' "$work/runs"
  sed -n '/^rank /,/^[0-9]* fit/p' "$work/slice.txt" | head -12
  [ "$check" = 1 ] || exit 0
  read -r -a cs <<< "${CHECK_SLICE:---tp 8 --pp 1,2 --micro-batch 1 --attention-kernel flash2+rmsnorm --precision bf16 --cp 1,2}"
  small=(--model llama3-8b --gpus 64 "${full[@]}" "${cs[@]}")
  echo
  echo "check: llama3-8b, seq 8192, 64 H100, full space at ${cs[*]}: top 10 by bound and prune against --exhaustive"
else
echo "llama3-70b, seq 8192, 1,024 H100 (h100-sxm5-80gb), sweep's default space${EXTRA:+ + $EXTRA}, top 10 by bound and prune, -j $jobs"
runs_table "$work/big.txt" replay "${big[@]}"
awk '{ w[NR] = $7 } END {
  for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
  printf "median wall %.1f s over %d runs (target: at most 60 s)\n", NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2, NR }' "$work/runs"
echo
echo "top 10 (the last run):"
sed -n '/^rank /,/^[0-9]* fit/p' "$work/big.txt" | head -12

[ "$check" = 1 ] || exit 0
echo
small=(--model llama3-8b --seq-len 8192 --gpus 64 --profile h100-sxm5-80gb --top 10 -j "$jobs" "${check_extra[@]}")
echo "check: llama3-8b, seq 8192, 64 H100${check_extra[*]:+, ${check_extra[*]}}: top 10 by bound and prune against --exhaustive"
fi
timed "$work/pruned.txt" "${small[@]}"
timed "$work/all.txt" "${small[@]}" --exhaustive
# the ranked rows shown: rank, layout and figures, without the summary lines (which count the pruned)
rows() { sed -n '/^ *[0-9]*  tp/p' "$1"; }
read -r pe _ _ pb pr < <(counts "$work/pruned.txt")
read -r _ _ _ _ ar < <(counts "$work/all.txt")
read -r pw _ _ < "$work/pruned.txt.time"
read -r aw _ _ < "$work/all.txt.time"
echo "by bound: $pe enumerated, $pb pruned by bound, $pr replayed, $pw s; exhaustive: $ar replayed, $aw s" \
  "($(awk -v a="$aw" -v p="$pw" 'BEGIN { printf "%.1f", (p > 0 ? a / p : 0) }')x the time)"
if cmp -s <(rows "$work/pruned.txt") <(rows "$work/all.txt") && [ -n "$(rows "$work/all.txt")" ]; then
  echo "PASS: the top 10 rows are identical"
else
  echo "FAIL: the top 10 rows differ"
  diff <(rows "$work/pruned.txt") <(rows "$work/all.txt") || true
  exit 1
fi
