#!/usr/bin/env bash
# The nemo stack (platforms/stacks/nemo.json): NVIDIA's DGX Cloud runs of NeMo on H100
# (../shared/validation/nvidia_dgxc_h100.csv), the BF16 rows bench/external-rows.awk expresses, and
# from them a fit of the stack's timing constants on profile h100-sxm5-80gb, started at
# platforms/stacks/nemo-prior.json (the megatron-deepspeed constants fitted on A100 runs). Then every
# expressible row is validated with the fitted stack, so the rows left out of the fit judge it.
#
# The fit's rows: the Llama 3.1 rows (8B, 70B, the 405B proxies) at up to 256 GPUs, one per model and
# GPU count (the file repeats runs of one layout), not the full 405B (predicted out of memory: the
# memory model is the study code's, docs/stacks.md), the profile column dropped (calibrate fits on
# --profile). Left out and judged: the Llama rows above 256 GPUs and every GPT-3 175B row.
#
# The prior's code keys are NeMo's (docs/stacks.md, "Defaults"): TransformerEngine's tensor-parallel overlap
# (tp_comm_overlap 1) and the distributed optimizer (zero 1). DP_OVERLAP 1 also turns on the data-parallel
# overlaps (overlap_grad_reduce, overlap_param_gather: what the rows ran) in a copy of the prior in WORK_DIR, so
# the fitted stack defaults to them; 0 (the default) leaves them off: with cp > 1 they cost the rank symmetry
# until it holds there, and an evaluation then takes minutes.
#
# Usage: bash bench/calibrate-nemo.sh VALIDATION_DIR WORK_DIR [MAX_EVALS [DP_OVERLAP]]   (MAX_EVALS default 60,
#   calibrate's: about 6-15 min on 2 shared cores). Writes WORK_DIR/nemo.json (copy it to platforms/stacks/ to ship it) and
#   WORK_DIR/nemo-trust.json (analysis/trust/nemo.json), and prints MAPE and bias per model before
#   (megatron-deepspeed, and the shipped nemo stack) and after (the fit). WORK_DIR must lie outside the repository.
. "$(dirname "$0")/lib.sh"
bench_start calibrate-nemo "VALIDATION_DIR WORK_DIR [MAX_EVALS [DP_OVERLAP]]" 2 4 "$@"
evals=${3:-60}
bench_positive MAX_EVALS "$evals"
dp_overlap=${4:-1}
[[ "$dp_overlap" =~ ^[01]$ ]] || die "DP_OVERLAP '$dp_overlap' is not 0 or 1 (allowed: 0, 1)"
src="$1/nvidia_dgxc_h100.csv"
[ -f "$src" ] || die "no $src"
bench_work "$2" models
bench_rows external-rows external-rows.awk -v models="$work/models" -v standin=0 "$src" > "$work/dgxc.csv"
# the fit's rows, the profile column dropped
awk -v who=calibrate-nemo -f "$here/csv.awk" -f /dev/stdin "$work/dgxc.csv" > "$work/fit.csv" <<'AWK'
NR == 1 { need("model gpus profile", "as bench/external-rows.awk writes"); pc = col["profile"] }
{ keep = NR == 1 || (cell("model") ~ /^llama/ && cell("model") !~ /405b-kv/ && cell("gpus") + 0 <= 256 && !seen[cell("model") " " cell("gpus")]++) }
keep { out = ""; for (i = 1; i <= nf; i++) if (i != pc) out = out (out == "" ? "" : ",") v[i]; print out }
END { if (bad) exit 2 }
AWK
# the prior, with the data-parallel overlaps where asked
prior="$repo/platforms/stacks/nemo-prior.json"
if [ "$dp_overlap" = 1 ]; then
  awk '/"overlap_grad_reduce"/ { sub(/: *[0-9]+/, ": 1"); r = 1 } /"overlap_param_gather"/ { sub(/: *[0-9]+/, ": 1"); p = 1 } { l[NR] = $0 }
    END { print l[1]; if (!r) print "\t\"overlap_grad_reduce\": 1,"; if (!p) print "\t\"overlap_param_gather\": 1,"; for (i = 2; i <= NR; i++) print l[i] }' \
    "$prior" > "$work/nemo-prior.json"
  prior="$work/nemo-prior.json"
fi
echo "calibrate-nemo: $(($(wc -l < "$work/fit.csv") - 1)) rows to fit, $(($(wc -l < "$work/dgxc.csv") - 1)) to validate, data-parallel overlaps $dp_overlap"
"$bin" calibrate "$work/fit.csv" --stack "$prior" --profile h100-sxm5-80gb \
  --fit timing --max-evals "$evals" -o "$work/nemo.json"
"$bin" validate "$work/fit.csv" --stack "$work/nemo.json" --profile h100-sxm5-80gb --trust-out "$work/nemo-trust.json" > /dev/null
for st in megatron-deepspeed "$repo/platforms/stacks/nemo.json" "$work/nemo.json"; do
  "$bin" validate "$work/dgxc.csv" --stack "$st" -o "$work/rows.csv" > /dev/null
  echo "== --stack $(basename "$st"): per model, all expressible rows (in the fit: the Llama rows up to 256 GPUs)"
  awk -v who=calibrate-nemo -f "$here/csv.awk" -f /dev/stdin "$work/rows.csv" <<'AWK'
NR == 1 { need("setting error_pct", "as validate -o writes"); next }
cell("error_pct") != "" {
  s = cell("setting"); g = s; sub(/ seq .*/, "", s); sub(/.*, /, "", g); sub(/ GPUs.*/, "", g)
  k = s (s ~ /^llama/ && g + 0 > 256 ? " (> 256 GPUs, left out)" : "")
  e = cell("error_pct") + 0; n[k]++; a[k] += e < 0 ? -e : e; b[k] += e; N++; A += e < 0 ? -e : e
}
END {
  if (bad) exit 2
  printf "  %-48s %5s %7s %7s\n", "model", "rows", "mape%", "bias%"
  for (k in n) printf "  %-48s %5d %7.2f %+7.2f\n", k, n[k], a[k] / n[k], b[k] / n[k] | "sort"
  close("sort")
  printf "  %-48s %5d %7.2f\n", "all", N, A / N
}
AWK
done
