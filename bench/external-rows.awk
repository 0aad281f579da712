# external-rows.awk -- one measured-runs table of ../shared/validation/ (columns source, model_name,
# layers, hidden, heads, ffn, vocab, seq_len, arch, gpus, gpu_type, tp, pp, dp, sp, micro_batch,
# global_batch, recompute, schedule, measured_step_time_s, ..., notes; its README) -> a table
# `layoutsim validate` reads, for the rows today's features can express. Prepend bench/csv.awk and bench/rows.awk (skip, note, pad).
#
#   awk -v who=external-rows -v models=DIR -v skips=SKIPS.tsv -f bench/csv.awk -f bench/rows.awk -f bench/external-rows.awk IN.csv > OUT.csv
#
# Each kept row gets a model file in DIR (written at run time: the measured data stay outside the
# repository) and the columns model, model_file, seq_len, global_batch, vocab, gpus, checkpointing,
# attention_kernel, micro_batch, tp, pp, cp, sp, partition, ib_gbps, nics_per_node (empty: the profile's),
# schedule, virtual_stages (interleaved-vN: Megatron's interleaved 1F1B with N chunks),
# profile (h100-sxm5-80gb for H100 rows; a100-jean-zay for BLOOM's, its machine; empty: the A100's), status, step_time_s, plus
# `source_row` (its line in IN) and `size` (the model size, for statistics per size). Grouped-query
# attention goes to the model file (kv_heads); context parallelism (notes cp=N) to the cp column, gpus =
# tp*cp*dp*pp (a cp row layoutsim cannot express -- its sequence not in 2*cp chunks, or no flash kernel -- is
# skipped); a row's precision (notes precision=: bf16, fp8, fp8-cs, mxfp8) goes to the `precision` column,
# and rows of a precision not in PRECISIONS (-v precisions="bf16 fp8"; default bf16: FP8 rows skipped as "FP8")
# or not expressible (nvfp4) are skipped. With -v fp16=bf16 (bench/scale.sh) a precision's remark in
# parentheses is dropped and fp16 rows run as bf16 (the same tensor-core peak on A100 and H100; the loss
# scaling's cost is not modelled). A skipped row goes to SKIPS as "FILE<TAB>LINE<TAB>MODEL<TAB>REASON".
#
# GPT models run as the GPT block (model file keys, docs/model.md): LayerNorm, GeLU MLP of the row's
# ffn (4h), biases, learned positions (a table of seq_len rows, Megatron's --max-position-embeddings),
# tied embeddings, dropout 0.1 (Megatron's default). BLOOM: ALiBi instead of learned positions, the
# embedding LayerNorm, dropout 0.1 (tr11's README: "The default Megatron-LM dropout settings are inherited:
# --attention-dropout 0.1 --hidden-dropout default=0.1"; bigscience-workshop/bigscience@9e64ede), and its machine: profile a100-jean-zay (4 Omni-Path
# NICs per node at the bandwidth NCCL measured there, docs/trust.md "BLOOM's step"). With STANDIN=1 (-v standin=1) GPT rows run as the earlier
# Llama-style stand-in instead: SwiGLU with ffn = 8h/3 rounded to a multiple of 8 (the GPT MLP's GEMM
# FLOPs to 0.1%), RMSNorm and rotary, no biases; BLOOM rows are then skipped. The vocabulary is padded as
# Megatron pads it (make-vocab-size-divisible-by 128, times tp).
# Attention: Megatron's fused scale-mask-softmax (no FlashAttention in Megatron-DeepSpeed of 2022-23);
# NeMo's rows (NVIDIA's DGX Cloud recipes, Transformer Engine): FlashAttention-2.
# Every layer is recomputed for `recompute` full; the partition is Megatron's/DeepSpeed's
# type:transformer (`layers`: the same number of layers on every stage).
NR == 1 {
  need("model_name layers hidden heads ffn vocab seq_len arch gpus gpu_type tp pp dp sp micro_batch global_batch recompute schedule measured_step_time_s notes", "as in ../shared/validation/README.md")
  print "model,model_file,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,cp,sp,partition,ib_gbps,nics_per_node,schedule,virtual_stages,profile,status,step_time_s,source_row,size,precision"
  if (precisions == "") precisions = "bf16"
  np = split(precisions, plist, / +/); for (i = 1; i <= np; i++) wanted[plist[i]] = 1
  next
}
{
  g = cell("gpu_type"); s = cell("schedule"); rc = cell("recompute"); n = cell("notes"); src = cell("source")
  if (g !~ /^A100/ && g !~ /^H100/) { skip("GPU " g ": no profile (a100-sxm4-80gb, h100-sxm5-80gb)"); next }
  if (s == "") { skip("schedule not stated"); next }
  if (s != "1f1b" && s !~ /^interleaved-v[0-9]+$/) { skip("schedule " s); next }
  pr = tolower(note("precision")); pr = pr == "" ? "bf16" : pr
  if (fp16 == "bf16") { sub(/ *\(.*$/, "", pr); if (pr == "fp16") pr = "bf16" } # -v fp16=bf16 (bench/scale.sh)
  if (pr != "bf16" && pr != "fp8" && pr != "fp8-cs" && pr != "mxfp8") { skip("precision " pr); next }
  if (!(pr in wanted)) { skip(pr == "bf16" ? "BF16" : "FP8"); next }
  cp = note("cp") == "" ? 1 : note("cp")
  if (cp !~ /^[1-9][0-9]*$/) { skip("context parallelism " cp); next }
  if (cell("seq_len") % (2 * cp) != 0) { skip("context parallelism " cp ": seq_len not in 2*cp chunks"); next }
  if (rc == "selective") { skip("selective recompute"); next }
  if (rc == "") { skip("recompute not stated"); next }
  if (n ~ /ZeRO-3/) { skip("ZeRO-3"); next }
  if (cell("arch") != "gpt" && cell("arch") != "llama") { skip("arch " cell("arch")); next }
  bloom = n ~ /ALiBi/ || src ~ /bigscience/
  if (bloom && standin) { skip("BLOOM block with the stand-in: ALiBi, embedding LayerNorm"); next }
  if (cell("tp") * cp * cell("pp") * cell("dp") != cell("gpus") + 0) { skip("gpus != tp*cp*pp*dp"); next }
  if (cell("gpus") + 0 > 16384) { skip("more GPUs than layoutsim takes (" cell("gpus") ", at most 16384)"); next }
  if (cell("sp") == "") { skip("sequence parallelism not stated"); next }
  sched = s == "1f1b" ? "1f1b" : "interleaved"; vs = s == "1f1b" ? 1 : substr(s, 14) + 0
  if (sched == "interleaved" && (L0 = cell("layers")) % (cell("pp") * vs) != 0) {
    skip("interleaved: " L0 " layers not divisible by pp*V = " cell("pp") * vs " (Megatron's constraint)"); next
  }
  prof = g ~ /^H100/ ? "h100-sxm5-80gb" : bloom ? "a100-jean-zay" : ""
  nemo = src ~ /dgxc|DGX Cloud|NVIDIA\/dgxc/
  if (cp > 1 && !nemo) { skip("context parallelism " cp " without Transformer Engine's flash kernels"); next }
  kv = note("kv_heads"); sub(/[^0-9].*/, "", kv) # "8 (GQA)": its number
  h = cell("hidden"); L = cell("layers"); t = cell("tp")
  gpt = cell("arch") == "gpt"
  f = gpt && standin ? int(8 * h / 3 / 8 + 0.5) * 8 : cell("ffn")
  size = cell("model_name")
  name = tolower(size) (gpt && standin ? "-swiglu-standin" : "") (gpt && !standin && !bloom ? "-s" cell("seq_len") : "") \
         (kv != "" ? "-kv" kv : "")
  gsub(/[^a-z0-9.+-]/, "-", name)
  file = models "/" name ".json"
  arch = ""
  if (gpt && !standin)
    arch = bloom ? ", \"norm\": \"layernorm\", \"mlp\": \"gelu\", \"positions\": \"alibi\", \"bias\": true, \"tied_embeddings\": true, \"embedding_norm\": true, \"dropout\": 0.1" \
                 : sprintf(", \"norm\": \"layernorm\", \"mlp\": \"gelu\", \"positions\": \"learned\", \"max_positions\": %d, \"bias\": true, \"tied_embeddings\": true, \"dropout\": 0.1", cell("seq_len"))
  if (kv != "") arch = arch sprintf(", \"kv_heads\": %d", kv)
  if (!(file in written)) {
    printf "{ \"name\": \"%s\", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"ffn\": %d, \"vocab\": %d%s }\n", name, L, h, cell("heads"), f, cell("vocab"), arch > file
    close(file)
    written[file] = 1
  }
  printf "%s,%s,%d,%d,%d,%d,%s,%s,%d,%d,%d,%d,%d,layers,%s,%s,%s,%d,%s,ok,%s,%d,%s,%s\n", name, file, cell("seq_len"), cell("global_batch"),
    pad(cell("vocab"), t), cell("gpus"), rc == "full" ? "every_layer" : "none", nemo ? "flash2" : "fused-softmax",
    cell("micro_batch"), t, cell("pp"), cp, cell("sp"), "", "", sched, vs, prof,
    cell("measured_step_time_s"), NR, size, pr
}
END { if (bad) exit 2 }
