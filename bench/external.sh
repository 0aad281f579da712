#!/usr/bin/env bash
# The public measured runs of other stacks (../shared/validation/*.csv, its README): every row today's
# features can express, converted by bench/external-rows.awk (GPT and BLOOM models as their own block:
# LayerNorm, GeLU, biases, learned positions or ALiBi; STANDIN=1 in the environment: the earlier Llama-style
# stand-in; model files written into WORK_DIR), validated with the stack that ran
# it, and `layoutsim validate`'s statistics per file and per model size; then, per file, the rows
# skipped and why (GPT block, interleaved schedule, H100, GQA, context parallelism, ...).
#   vtrain_single.csv, bloom176b.csv: Megatron-DeepSpeed -> --stack megatron-deepspeed
#   narayanan2021.csv: Megatron-LM (no stack of its own yet) -> --stack megatron-deepspeed, its nearest;
#     1F1B and interleaved rows alike, up to 3,072 GPUs
#   nvidia_dgxc_h100.csv: NeMo on H100 -> the BF16 rows: GPT-3 and Llama 3.1 8B/70B/405B and its proxies
#     (GQA, cp 2: context parallelism; profile h100-sxm5-80gb, uncalibrated), --stack megatron-deepspeed
# WORK_DIR must lie outside the repository (it holds rows derived from other people's measurements).
# Usage: bash bench/external.sh VALIDATION_DIR WORK_DIR [JOBS]
. "$(dirname "$0")/lib.sh"
bench_start external "VALIDATION_DIR WORK_DIR [JOBS]" 2 3 "$@"
jobs=${3:-2}
bench_positive JOBS "$jobs"
[ -d "$1" ] || die "no directory '$1'"
bench_work "$2" models
shopt -s nullglob
files=("$1"/*.csv)
[ ${#files[@]} -gt 0 ] || die "no *.csv in '$1'"
for f in "${files[@]}"; do
  name=$(basename "$f" .csv)
  out="$work/$name.csv"
  bench_rows external-rows external-rows.awk -v models="$work/models" -v standin="${STANDIN:-0}" "$f" > "$out"
  rows=$(($(wc -l < "$f") - 1))
  kept=$(($(wc -l < "$out") - 1))
  echo "== $name: $kept of $rows rows expressible"
  [ "$kept" -gt 0 ] || continue
  "$bin" validate "$out" --stack megatron-deepspeed -j "$jobs" -o "$work/$name-rows.csv" | sed 's/^/  /'
  # per model size: the statistics of validate over each size's rows (its settings are (model, seq_len, gpus))
  awk -v who=external -f "$here/csv.awk" -f /dev/stdin "$work/$name-rows.csv" <<'AWK'
NR == 1 { need("setting error_pct", "as validate -o writes") ; next }
{
  s = cell("setting"); sub(/-swiglu-standin.*/, "", s); sub(/ seq .*/, "", s)
  n[s]++
  if (cell("error_pct") != "") { e = cell("error_pct") + 0; t[s]++; a[s] += e < 0 ? -e : e; b[s] += e }
}
END {
  if (bad) exit 2
  printf "  per model size (all its GPU counts):\n  %-28s %6s %6s %8s %8s\n", "model", "rows", "timed", "mape%", "bias%"
  for (s in n) printf "  %-28s %6d %6d %8.2f %+8.2f\n", s, n[s], t[s], t[s] ? a[s] / t[s] : 0, t[s] ? b[s] / t[s] : 0
}
AWK
done
echo "== skipped rows, per file and reason"
awk -F'\t' '{ n[$1 "\t" $4]++ } END { for (k in n) { split(k, a, "\t"); sub(/.*\//, "", a[1]); printf "  %-24s %4d  %s\n", a[1], n[k], a[2] } }' \
  "$work/skipped.tsv" | sort
