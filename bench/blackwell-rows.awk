# blackwell-rows.awk -- the dense Llama rows of ../shared/validation/megatron_bridge.csv (Llama3-8B,
# Llama3-70B; NeMo's Megatron-Bridge perf recipes on H100, B200, B300, GB200, GB300) and every row of
# simumax_b200.csv (Megatron-LM on one 8x B200 node, truncated Llama 3 models) -> a table `layoutsim
# validate` reads, for bench/blackwell.sh (docs/blackwell.md). Prepend bench/csv.awk and bench/rows.awk (the functions the rows scripts share).
#
#   awk -v who=blackwell-rows -v models=DIR -v skips=SKIPS.tsv -f bench/csv.awk -f bench/rows.awk -f bench/blackwell-rows.awk IN.csv > OUT.csv
#
# Per row: profile from gpu_type (H100 -> h100-sxm5-80gb, B200 -> b200, B300 -> b300, GB200 ->
# gb200-nvl72, GB300 -> gb300-nvl72), stack nemo, precision from notes precision= (bf16, fp8-cs, mxfp8;
# mxfp8 on the H100 and nvfp4 are skipped), cp from notes cp= and its exchange from cp_comm_type= (SimuMax's cp rows:
# a2a, its launcher's default; not stated: p2p, Megatron's and TE's default; column cp_comm_type, docs/context.md), the schedule (interleaved-vN: N chunks),
# ZeRO: Megatron-Bridge's fsdp>0 (Megatron-FSDP) -> 3, else the distributed optimizer -> 1 (SimuMax's
# runs pass --use-distributed-optimizer; Megatron-Bridge's perf recipes default to it); overlaps off
# (neither table states them on; the nemo stack was fitted without them). Recompute not stated (the
# Megatron-Bridge tables) runs as none; sp not stated runs as on where tp > 1 (the perf recipes'
# default). Attention: Transformer Engine's flash kernels (flash2), the stack's fused norms; partition
# layers. Stack nemo (NeMo's defaults: TransformerEngine's tp overlap) on the Megatron-Bridge rows; on SimuMax's rows
# the stack file given as -v simumax_stack=FILE where set (its Megatron-LM runs disable the tp overlap,
# --disable-tp-comm-overlap-ag/rs, and reduce gradients in fp32, --accumulate-allreduce-grads-in-fp32: the
# scripts write nemo with tp_comm_overlap 0 and grad_reduce_bytes 4 into their WORK_DIR), else nemo. Megatron-Bridge rows use the shipped llama3-8b / llama3-70b; SimuMax's truncated models get a
# model file in DIR (its layers, kv_heads from notes). Extra columns: system, source (megatron-bridge or
# simumax), mem_gib, mem_reserved_gib, simumax_err_pct, simumax_mem_err_pct (SimuMax rows). A skipped row goes to SKIPS as
# "FILE<TAB>LINE<TAB>MODEL<TAB>REASON".
FNR == 1 {
  rows_need()
  if (!header++) print "model,model_file,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,cp,sp,partition,schedule,virtual_stages,profile,stack,zero,overlap_grad_reduce,overlap_param_gather,precision,status,step_time_s,system,source,mem_gib,mem_reserved_gib,simumax_err_pct,simumax_mem_err_pct,cp_comm_type"
  simumax = FILENAME ~ /simumax/
  next
}
{
  m = cell("model_name"); g = cell("gpu_type")
  if (!simumax && (cell("arch") != "llama" || (m != "Llama3-8B" && m != "Llama3-70B"))) next # not a dense row of this check: not counted
  sys = rows_system()
  if ((prof = rows_profile(sys)) == "" || (pr = rows_precision(sys)) == "" || !rows_schedule()) next # bench/rows.awk
  cp = rows_cp()
  if (cell("seq_len") % (2 * cp) != 0) { skip("context parallelism " cp ": seq_len not in 2*cp chunks"); next }
  t = cell("tp"); pp = cell("pp")
  if (t * cp * pp * cell("dp") != cell("gpus") + 0) { skip("gpus != tp*cp*pp*dp"); next }
  if (sched == "interleaved" && cell("layers") % (pp * vs) != 0) { skip("interleaved: layers not divisible by pp*V"); next }
  rc = cell("recompute")
  if (rc == "selective") { skip("selective recompute"); next }
  sp = rows_sp(t)
  fs = num(note("fsdp")); zero = fs != "" && fs > 0 ? 3 : 1
  kv = num(note("kv_heads"))
  if (simumax) {
    name = tolower(m); gsub(/[^a-z0-9.+-]+/, "-", name); sub(/-+$/, "", name); name = name "-kv" kv
    file = models "/" name ".json"
    if (!(file in written)) {
      printf "{ \"name\": \"%s\", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"ffn\": %d, \"vocab\": %d, \"kv_heads\": %d }\n", name, cell("layers"), cell("hidden"), cell("heads"), cell("ffn"), cell("vocab"), kv > file
      close(file); written[file] = 1
    }
  } else { name = tolower(m); file = "" }
  cc = note("cp_comm_type"); sub(/[^a-z0-9].*/, "", cc) # "a2a (launcher default ...)" -> a2a; not stated: p2p, TE's default
  if (cc != "" && cc != "p2p" && cc != "a2a") { skip("cp_comm_type " cc ": not modelled"); next }
  printf "%s,%s,%d,%d,%d,%d,%s,flash2,%d,%d,%d,%d,%d,layers,%s,%d,%s,%s,%d,0,0,%s,ok,%s,%s,%s,%s,%s,%s,%s,%s\n", name, file, cell("seq_len"),
    cell("global_batch"), pad(cell("vocab"), t), cell("gpus"), rc == "full" ? "every_layer" : "none", cell("micro_batch"), t, pp, cp, sp,
    sched, vs, prof, simumax && simumax_stack != "" ? simumax_stack : "nemo", zero, pr, cell("measured_step_time_s"), sys, simumax ? "simumax" : "megatron-bridge",
    num(note("mem_gib")), num(note("mem_reserved_gib")), num(note("simumax_err_pct")), num(note("simumax_mem_err_pct")), cc
}
END { if (bad) exit 2 }
