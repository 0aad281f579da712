# external-rows.awk -- one measured-runs table of ../shared/validation/ (columns source, model_name,
# layers, hidden, heads, ffn, vocab, seq_len, arch, gpus, gpu_type, tp, pp, dp, sp, micro_batch,
# global_batch, recompute, schedule, measured_step_time_s, ..., notes; its README) -> a table
# `layoutsim validate` reads, for the rows today's features can express. Prepend bench/csv.awk.
#
#   awk -v who=external-rows -v models=DIR -v skips=SKIPS.tsv -f bench/csv.awk -f bench/external-rows.awk IN.csv > OUT.csv
#
# Each kept row gets a model file in DIR (written at run time: the measured data stay outside the
# repository) and the columns model, model_file, seq_len, global_batch, vocab, gpus, checkpointing,
# attention_kernel, micro_batch, tp, pp, sp, partition, status, step_time_s, plus `source_row` (its
# line in IN) and `size` (the model size, for statistics per size). A skipped row goes to SKIPS as
# "FILE<TAB>LINE<TAB>MODEL<TAB>REASON".
#
# GPT models (LayerNorm, GELU 4h MLP, biases, learned positions) have no block of their own in
# layoutsim yet: they run as a Llama-style STAND-IN, SwiGLU with ffn = 8h/3 rounded to a multiple of
# 8 (the GPT MLP's 2 x h x 4h GEMM FLOPs to 0.1%: 3 GEMMs of h x 8h/3), RMSNorm and rotary in place of
# LayerNorm and learned positions (memory-bound kernels of the same size), no biases. The vocabulary is
# padded as Megatron pads it (make-vocab-size-divisible-by 128, times tp).
# Attention: Megatron's fused scale-mask-softmax (no FlashAttention in Megatron-DeepSpeed of 2022-23).
# Every layer is recomputed for `recompute` full; the partition is Megatron's/DeepSpeed's
# type:transformer (`layers`: the same number of layers on every stage).
function skip(reason) { printf "%s\t%d\t%s\t%s\n", FILENAME, NR, cell("model_name"), reason >> skips }
function note(key,    n, a, i) { n = split(cell("notes"), a, /; */); for (i = 1; i <= n; i++) if (index(a[i], key "=") == 1) return substr(a[i], length(key) + 2); return "" }
function pad(v, t,    q) { q = 128 * t; return int((v + q - 1) / q) * q }
NR == 1 {
  need("model_name layers hidden heads ffn vocab seq_len arch gpus gpu_type tp pp dp sp micro_batch global_batch recompute schedule measured_step_time_s notes", "as in ../shared/validation/README.md")
  print "model,model_file,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp,partition,status,step_time_s,source_row,size"
  next
}
{
  g = cell("gpu_type"); s = cell("schedule"); rc = cell("recompute"); n = cell("notes"); src = cell("source")
  if (g !~ /^A100/) { skip("GPU " g ": no profile (only a100-sxm4-80gb)"); next }
  if (s != "1f1b" && s != "") { skip("schedule " s ": no interleaved 1F1B"); next }
  if (s == "") { skip("schedule not stated"); next }
  if (note("kv_heads") != "") { skip("grouped-query attention (kv_heads " note("kv_heads") ")"); next }
  if (note("cp") != "" && note("cp") != "1") { skip("context parallelism " note("cp")); next }
  if (rc == "selective") { skip("selective recompute"); next }
  if (rc == "") { skip("recompute not stated"); next }
  if (n ~ /ZeRO-3/) { skip("ZeRO-3"); next }
  if (cell("arch") != "gpt" && cell("arch") != "llama") { skip("arch " cell("arch")); next }
  if (n ~ /ALiBi/ || src ~ /bigscience/) { skip("BLOOM block: ALiBi, embedding LayerNorm (and 4 Omni-Path NICs per node)"); next }
  if (cell("tp") * cell("pp") * cell("dp") != cell("gpus") + 0) { skip("gpus != tp*pp*dp"); next }
  if (cell("gpus") + 0 > 1024) { skip("more GPUs than a simulation here takes (" cell("gpus") ")"); next }
  if (cell("sp") == "") { skip("sequence parallelism not stated"); next }
  h = cell("hidden"); L = cell("layers"); t = cell("tp")
  f = cell("arch") == "gpt" ? int(8 * h / 3 / 8 + 0.5) * 8 : cell("ffn")
  size = cell("model_name")
  name = tolower(size) (cell("arch") == "gpt" ? "-swiglu-standin" : "")
  gsub(/[^a-z0-9.+-]/, "-", name)
  file = models "/" name ".json"
  if (!(file in written)) {
    printf "{ \"name\": \"%s\", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"ffn\": %d, \"vocab\": %d }\n", name, L, h, cell("heads"), f, cell("vocab") > file
    close(file)
    written[file] = 1
  }
  printf "%s,%s,%d,%d,%d,%d,%s,fused-softmax,%d,%d,%d,%d,layers,ok,%s,%d,%s\n", name, file, cell("seq_len"), cell("global_batch"),
    pad(cell("vocab"), t), cell("gpus"), rc == "full" ? "every_layer" : "none", cell("micro_batch"), t, cell("pp"), cell("sp"),
    cell("measured_step_time_s"), NR, size
}
END { if (bad) exit 2 }
