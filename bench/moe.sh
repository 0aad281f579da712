#!/usr/bin/env bash
# The MoE validation (docs/moe.md, "Validation"): the Mixture-of-Experts rows of megatron_bridge.csv (NeMo's
# Megatron-Bridge perf recipes: Qwen3-30B-A3B and GPT-OSS-120B on H100, B200, B300, GB200, GB300; bf16, fp8-cs,
# mxfp8; expert parallelism 8-16, force-balanced dropless routing) and simumax_b200.csv's MoE rows (none in the
# version at hand), converted by bench/moe-rows.awk, run with the shipped models, profiles and the nemo stack
# (the H100-fitted one; the Blackwell profiles' GEMM scales from bench/calibrate-blackwell.sh). Nothing is fitted.
#   1. `layoutsim validate` on the rows as stated (its summary: the OOM verdict, the timed rows' MAPE);
#   2. the same rows with the memory limit lifted (gpu_memory 100000 GiB; the tables do not state the recompute,
#      the rows run the recipes' documented one, none: bench/moe-rows.awk cites it), predicted with `layoutsim
#      predict`: MAPE and bias of the step time per model and system, per model, system and precision, per release,
#      per routing (dropless or token-drop), per release era (up to 26.04.01, 26.06 on), per token dispatcher
#      (alltoall, or flex: DeepEP/HybridEP, bench/moe-rows.awk cites which recipes ran it) and per CUDA graph (the
#      whole step, or the parts of each layer the recipe's cuda_graph_scope names: bench/moe-rows.awk cites them); the mean share of the step the breakdown puts
#      in ep-comm (the all-to-all) and in the expert layers' GEMMs is not separable here: see docs/moe.md;
#   3. the SimuMax rows (MoE ones only): layoutsim's mean |error| of time and memory next to SimuMax's own;
#   4. the rows skipped and why.
# WORK_DIR must lie outside the repository (it holds rows derived from other people's measurements).
# Usage: bash bench/moe.sh VALIDATION_DIR WORK_DIR [JOBS]
. "$(dirname "$0")/lib.sh"
bench_start moe "VALIDATION_DIR WORK_DIR [JOBS]" 2 3 "$@"
jobs=${3:-2}
bench_positive JOBS "$jobs"
for f in megatron_bridge simumax_b200; do [ -f "$1/$f.csv" ] || die "no $1/$f.csv"; done
bench_work "$2"
bench_rows moe-rows moe-rows.awk "$1/megatron_bridge.csv" "$1/simumax_b200.csv" > "$work/rows.csv"
simumax_moe=$(awk -F, 'FNR > 1 && $9 == "moe"' "$1/simumax_b200.csv" | wc -l)
echo "== 1. validate, the rows as stated ($(($(wc -l < "$work/rows.csv") - 1)) rows; profile per row, stack nemo)"
{ "$bin" validate "$work/rows.csv" -j "$jobs" -o "$work/validate-rows.csv" 2> "$work/validate.err" || true; } | tail -3 | sed 's/^/  /'
[ -s "$work/validate.err" ] && sed 's/^/  validate: /' "$work/validate.err" | tail -3
bench_lifted moe "$work/rows.csv" "$work/rows-lifted.csv"
"$bin" predict "$work/rows.csv" -j "$jobs" -o "$work/pred.csv" > /dev/null 2>&1
"$bin" predict "$work/rows-lifted.csv" -j "$jobs" -o "$work/pred-lifted.csv" > /dev/null 2>&1
echo "== 2. step time with the memory limit lifted (all rows timed); error = (predicted - measured) / measured"
awk -v who=moe -f "$here/csv.awk" -f /dev/stdin "$work/pred.csv" "$work/pred-lifted.csv" <<'AWK'
FNR == 1 { need("model system precision ep release moe_capacity_factor moe_flex_dispatcher cuda_graph cuda_graph_scope pred_status pred_step_time_s step_time_s", "as predict -o writes"); f++; next }
f == 1 { oom[FNR] = cell("pred_status") == "oom"; next }
cell("pred_status") == "ok" {
  e = 100 * (cell("pred_step_time_s") / cell("step_time_s") - 1); a = e < 0 ? -e : e
  k[1] = cell("model") " " cell("system"); k[2] = cell("model") " " cell("system") " " cell("precision") " ep" cell("ep")
  k[3] = cell("model") " (all)"; k[4] = "all"; k[5] = cell("model") " " cell("system") " release " cell("release")
  k[6] = cell("model") " " (cell("moe_capacity_factor") == "" ? "dropless" : "token-drop, capacity " cell("moe_capacity_factor"))
  k[7] = "all, releases " (cell("release") >= "26.06" ? "26.06 on" : "up to 26.04.01")
  k[8] = cell("model") " " cell("system") " ep" cell("ep") " dispatcher " (cell("moe_flex_dispatcher") == 1 ? "flex" : "alltoall")
  k[9] = cell("model") " CUDA graphs " (cell("cuda_graph") == 1 ? "full_iteration" : cell("cuda_graph_scope") == "" ? "none" : cell("cuda_graph_scope"))
  for (i = 1; i <= 9; i++) { n[k[i]]++; A[k[i]] += a; B[k[i]] += e; O[k[i]] += oom[FNR]; if (a > M[k[i]]) M[k[i]] = a }
}
END {
  if (bad) exit 2
  printf "  %-44s %4s %7s %7s %7s %s\n", "rows", "n", "mape%", "bias%", "max%", "oom at the profile's memory"
  for (s in n) printf "  %-44s %4d %7.1f %+7.1f %7.1f %d\n", s, n[s], A[s] / n[s], B[s] / n[s], M[s], O[s] | "sort"
  close("sort")
}
AWK
echo "== 3. SimuMax rows with experts: $simumax_moe (simumax_b200.csv's rows are dense Llama: nothing to compare)"
echo "== 4. rows skipped, per file and reason"
awk -F'\t' '{ n[$1 "\t" $3 "\t" $4]++ } END { for (k in n) { split(k, a, "\t"); sub(/.*\//, "", a[1]); printf "  %-20s %3d  %-28s %s\n", a[1], n[k], a[2], a[3] } }' \
  "$work/skipped.tsv" | sort
