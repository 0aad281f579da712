#!/usr/bin/env bash
# The shipped Blackwell profiles against every row (docs/blackwell.md): the dense Llama rows of
# megatron_bridge.csv (Llama3-8B, Llama3-70B: NeMo's Megatron-Bridge perf recipes on H100, B200, B300,
# GB200, GB300; FP8 current scaling, MXFP8) and every row of simumax_b200.csv (Megatron-LM, bf16, one
# 8x B200 node, truncated Llama 3 models) converted by bench/blackwell-rows.awk, run with the shipped
# profiles (b200 and gb200-nvl72 carry GEMM efficiency scales fitted on half of these rows by
# bench/calibrate-blackwell.sh, which reports the held-out half) and the H100-fitted nemo stack. Nothing is fitted here.
#   1. `layoutsim validate` on the rows as stated (its summary: the OOM verdict, the timed rows' MAPE);
#   2. the same rows with the memory limit lifted (gpu_memory 100000 GiB: the Megatron-Bridge tables do not
#      state the recompute/offload their 70B recipes needed to fit; the rows run with none), predicted with
#      `layoutsim predict`: MAPE and bias of the step time per system, per system and precision, per source;
#   3. the SimuMax rows: mean |error| of layoutsim's step time and memory (its allocated memory, the peak of the
#      stack copy without context, NCCL buffers and fragmentation, against the measured max allocated, mem_gib; its
#      peak less context and NCCL buffers against reserved, mem_reserved_gib) next to SimuMax's own
#      (simumax_err_pct, simumax_mem_err_pct: its error against max allocated);
#   4. the rows skipped and why.
# WORK_DIR must lie outside the repository (it holds rows derived from other people's measurements).
# Usage: bash bench/blackwell.sh VALIDATION_DIR WORK_DIR [JOBS]
. "$(dirname "$0")/lib.sh"
bench_start blackwell "VALIDATION_DIR WORK_DIR [JOBS]" 2 3 "$@"
jobs=${3:-2}
bench_positive JOBS "$jobs"
for f in megatron_bridge simumax_b200; do [ -f "$1/$f.csv" ] || die "no $1/$f.csv"; done
bench_work "$2" models
bench_rows blackwell-rows blackwell-rows.awk -v models="$work/models" "$1/megatron_bridge.csv" "$1/simumax_b200.csv" > "$work/rows-stated.csv"
# SimuMax's Megatron-LM runs: the nemo stack with the tp overlap off and gradients reduced in fp32, as they ran
# (--disable-tp-comm-overlap-ag/rs, --accumulate-allreduce-grads-in-fp32), the fused cross-entropy they state
# (--cross-entropy-loss-fusion: vocab_parallel_loss_bytes 2) and Transformer Engine 2.11's cached dummy weight
# gradients (te_dummy_wgrad 1: TE >= 2.3 with gradient-accumulation fusion; docs/memory.md): a stack_set cell
# (docs/stacks.md)
awk -v who=blackwell -f "$here/csv.awk" -f /dev/stdin "$work/rows-stated.csv" > "$work/rows.csv" <<'AWK'
NR == 1 { need("source", "as bench/blackwell-rows.awk writes"); print $0 ",stack_set"; next }
{ print $0 "," (cell("source") == "simumax" ? "tp_comm_overlap=0;grad_reduce_bytes=4;vocab_parallel_loss_bytes=2;te_dummy_wgrad=1" : "") }
END { if (bad) exit 2 }
AWK
echo "== 1. validate, the rows as stated ($(($(wc -l < "$work/rows.csv") - 1)) rows; profiles per row, stack nemo)"
"$bin" validate "$work/rows.csv" -j "$jobs" -o "$work/validate-rows.csv" 2> /dev/null | sed 's/^/  /'
# the OOM verdict per system, from the same run
bench_lifted blackwell "$work/rows.csv" "$work/rows-lifted.csv"
"$bin" predict "$work/rows.csv" -j "$jobs" -o "$work/pred.csv" > /dev/null 2>&1
"$bin" predict "$work/rows-lifted.csv" -j "$jobs" -o "$work/pred-lifted.csv" > /dev/null 2>&1
# layoutsim's allocated memory, what torch.cuda.max_memory_allocated counts: the SimuMax rows' stack without the CUDA
# context, the NCCL buffers and the allocator's fragmentation (their peak is then the model's tensors alone)
sed 's/te_dummy_wgrad=1/te_dummy_wgrad=1;cuda_context_gib=0;nccl_buffers_gib=0;fragmentation=0/' "$work/rows-lifted.csv" > "$work/rows-alloc.csv"
"$bin" predict "$work/rows-alloc.csv" -j "$jobs" -o "$work/pred-alloc.csv" > /dev/null 2>&1
echo "== 2. step time with the memory limit lifted (all rows timed); error = (predicted - measured) / measured"
awk -v who=blackwell -f "$here/csv.awk" -f /dev/stdin "$work/pred.csv" "$work/pred-lifted.csv" <<'AWK'
FNR == 1 { need("system precision source pred_status pred_step_time_s step_time_s", "as predict -o writes"); f++; next }
f == 1 { oom[FNR] = cell("pred_status") == "oom"; next }
cell("pred_status") == "ok" {
  e = 100 * (cell("pred_step_time_s") / cell("step_time_s") - 1); a = e < 0 ? -e : e
  k[1] = cell("system") " (all)"; k[2] = cell("system") " " cell("precision"); k[3] = "source " cell("source"); k[4] = "all"
  k[5] = cell("system") == "H100" ? "" : "Blackwell " cell("precision")
  for (i = 1; i <= 5; i++) if (k[i] != "") { n[k[i]]++; A[k[i]] += a; B[k[i]] += e; O[k[i]] += oom[FNR]; if (a > M[k[i]]) M[k[i]] = a }
}
END {
  if (bad) exit 2
  printf "  %-28s %5s %7s %7s %7s %s\n", "rows", "n", "mape%", "bias%", "max%", "predicted oom at the profile's memory"
  for (s in n) printf "  %-28s %5d %7.1f %+7.1f %7.1f %d\n", s, n[s], A[s] / n[s], B[s] / n[s], M[s], O[s] | "sort"
  close("sort")
}
AWK
echo "== 3. SimuMax rows: mean |error| (%) of layoutsim and of SimuMax (its own, as published); memory: layoutsim's"
echo "   allocated (its peak without context, NCCL buffers, fragmentation) against max allocated, its peak less context"
echo "   and NCCL buffers (the fragmentation as the allocator's reserve) against max reserved"
awk -v who=blackwell -f "$here/csv.awk" -f /dev/stdin "$work/pred-alloc.csv" "$work/pred-lifted.csv" <<'AWK'
FNR == 1 { need("source model pred_step_time_s step_time_s pred_peak_mem_gib mem_gib mem_reserved_gib simumax_err_pct simumax_mem_err_pct", "as predict -o writes"); f++; next }
f == 1 { alloc[FNR] = cell("pred_peak_mem_gib"); next }
cell("source") == "simumax" && cell("pred_step_time_s") != "" {
  m = cell("model"); sub(/-[0-9]+-layer.*/, "", m)
  split(m " all", ks, " ")
  t = 100 * (cell("pred_step_time_s") / cell("step_time_s") - 1)
  # the reserved: the peak less the stack's cuda_context_gib and nccl_buffers_gib (nemo leaves them at 0.75, 0.5)
  ma = 100 * (alloc[FNR] / cell("mem_gib") - 1); mr = 100 * ((cell("pred_peak_mem_gib") - 1.25) / cell("mem_reserved_gib") - 1)
  st = cell("simumax_err_pct"); sm = cell("simumax_mem_err_pct")
  for (i = 1; i <= 2; i++) { k = ks[i]; n[k]++; T[k] += abs(t); Tb[k] += t; MA[k] += abs(ma); MAb[k] += ma; MR[k] += abs(mr); ST[k] += abs(st); SM[k] += abs(sm) }
}
function abs(x) { return x < 0 ? -x : x }
END {
  if (bad) exit 2
  printf "  %-22s %4s %15s %15s %17s %17s %17s\n", "model", "rows", "time layoutsim", "time SimuMax", "mem/alloc lsim", "mem/alloc SimuMax", "mem/reserved lsim"
  for (k in n) printf "  %-22s %4d %8.1f (%+5.1f) %15.1f %10.1f (%+5.1f) %17.1f %17.1f\n", k, n[k], T[k] / n[k], Tb[k] / n[k], ST[k] / n[k], MA[k] / n[k], MAb[k] / n[k], SM[k] / n[k], MR[k] / n[k] | "sort"
  close("sort")
}
AWK
echo "== 4. rows skipped, per file and reason"
awk -F'\t' '{ n[$1 "\t" $4]++ } END { for (k in n) { split(k, a, "\t"); sub(/.*\//, "", a[1]); printf "  %-22s %4d  %s\n", a[1], n[k], a[2] } }' \
  "$work/skipped.tsv" | sort
