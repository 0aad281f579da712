# moe-rows.awk -- the Mixture-of-Experts rows (arch moe) of ../shared/validation/megatron_bridge.csv (NeMo's
# Megatron-Bridge perf recipes: Qwen3-30B-A3B, GPT-OSS-120B, Kimi-K2, Nemotron-3 on H100, B200, B300, GB200,
# GB300) and those of simumax_b200.csv (none in the version at hand: its rows are dense Llama) -> a table
# `layoutsim validate` and `predict` read, for bench/moe.sh (docs/moe.md, "Validation"). Prepend bench/csv.awk and bench/rows.awk (the functions the rows scripts share).
#
#   awk -v who=moe-rows -v skips=SKIPS.tsv -f bench/csv.awk -f bench/rows.awk -f bench/moe-rows.awk IN.csv... > OUT.csv
#
# Per row: the shipped model of its name (qwen3-30b-a3b, gpt-oss-120b), checked against the row's shape (layers,
# hidden, heads, vocab, experts, top-k); the profile from gpu_type (H100 -> h100-sxm5-80gb, B200 -> b200, B300 ->
# b300, GB200 -> gb200-nvl72, GB300 -> gb300-nvl72), stack nemo, precision from notes precision= (bf16, fp8-cs,
# mxfp8), ep from notes ep=, etp 1 (not stated; Megatron-Bridge's MoE recipes set expert_tensor_parallel_size 1,
# and every kept row has tp 1), imbalance 1 (the tables' runs force-balance the routing), cp from notes, the
# schedule (interleaved-vN: N chunks), ZeRO 1 (the distributed optimizer; fsdp only on skipped rows), overlaps
# off, release (NeMo container) from notes, sp on where tp > 1, flash2 attention, partition layers.
# Recompute, where the row leaves it blank (the tables never state it): the recipe's, RECIPE_RECOMPUTE below. Every
# Megatron-Bridge perf config that produced a Qwen3-30B-A3B row sets recompute_granularity = None (no recomputation):
# 25.09 scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml@fa0315a (recompute_granularity: null);
# 25.11, 26.02, 26.04, 26.06 scripts/performance/configs/qwen/qwen3_llm_pretrain.py@97ad8cc, @c0b9a00, @74695a0,
# @63b08b3 (the common Qwen3 settings); 26.06.01 and 26.08 src/megatron/bridge/perf_recipes/qwen/{h100,b200,b300,gb200,
# gb300}/qwen3_moe.py@4ab94df (each qwen3_30b_a3b_pretrain_* config). So blank -> none, as the rows ran before.
# Token-drop rows (25.09, label 'tokendrop'): scripts/performance/run_script.py@fa0315a applies
# src/megatron/bridge/training/utils/moe_token_drop.py's apply_moe_token_drop with its defaults, capacity factor 1.0
# padded to capacity: every expert computes exactly 1.0x its balanced share -> moe_capacity_factor 1 (docs/moe.md).
# The 26.06+ MXFP8 recipes of B300, GB200 and GB300 run Megatron-Core's combined 1F1B (the EP all-to-all of one
# micro-batch beside another's compute) and the whole step as one CUDA graph: at 26.06
# scripts/performance/configs/qwen/qwen3_workload_base_configs.py@63b08b3 QWEN3_30B_A3B_PRETRAIN_CONFIG_{GB300,GB200,
# B300}_FP8_MX_V1 (moe_a2a_overlap=True, cuda_graph_impl="full_iteration"); at 26.06.01 and 26.08
# src/megatron/bridge/perf_recipes/qwen/{b300,gb200,gb300}/qwen3_moe.py@4ab94df qwen3_30b_a3b_pretrain_8gpu_*_fp8mx_config
# -> common.py _enable_hybridep_full_iteration_mxfp8 (cuda_graph_impl "full_iteration",
# overlap_moe_expert_parallel_comm=True). Their other recipes (bf16, fp8-cs, B200, H100, every release before
# 26.06) do neither (H100: moe_a2a_overlap=False; the others capture parts of each layer, below) ->
# columns overlap_moe_ep_comm and cuda_graph (1 on those rows, 0 else).
# The partial CUDA graphs (column cuda_graph_scope, layoutsim's --cuda-graph-scope: Transformer Engine's graphs of
# the parts of each layer Megatron-Core's cuda_graph_scope names; docs/moe.md "CUDA graph scope"), as each recipe
# sets cuda_graph_impl "transformer_engine" and cuda_graph_scope (none on the full-iteration rows above):
#   25.09: the whole layer ("full") on GB200 (scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml
#     @fa0315a gb200 num_gpus_8: cuda_graphs: true, with the rows' layout, pp 1, micro-batch 4 ->
#     scripts/performance/utils/helpers.py set_cuda_graph_overrides: enable_cuda_graph, Megatron-Core's local
#     per-layer graphs of its default scope "full"; the rows are token-drop, padded to capacity: static shapes), none
#     on H100 (cuda_graphs: false); B200 left eager, unresolved: its row's layout (pp 1) is not the yaml's b200
#     preset (pp 8, vp 12, cuda_graphs: true), so which recipe ran is not known;
#   25.11 (scripts/performance/configs/qwen/qwen3_workload_base_configs.py@97ad8cc), 26.02 (@c0b9a00), 26.02.01
#     (tag v0.3.1, 9c9dd84), 26.04 (@74695a0), 26.04.01 (tag v0.4.1): ["moe_router", "moe_preprocess"] on GB300, B300,
#     GB200 mxfp8 and B200 up to 26.02; ["attn", "moe_router", "moe_preprocess"] on GB200 bf16 and fp8-cs and on B200
#     from 26.02.01 (QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_{BF16,FP8_CS,FP8_MX}_V1, micro-batch 4); H100's fp8-cs config
#     sets no CUDA graph at any release (its bf16 one ["moe_router", "moe_preprocess"]);
#   26.06 (@63b08b3), 26.06.01 and 26.08 (@4ab94df): the same on the rows not captured whole.
# The token dispatcher (column moe_flex_dispatcher: 1 where the recipe runs Megatron's flex dispatcher, DeepEP or
# HybridEP, which sends a token once per destination node and GPU; 0 where it runs the alltoall one):
#   25.09: alltoall (scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml@fa0315a sets no dispatcher);
#   25.11: flex on GB200 and GB300 only (scripts/performance/configs/qwen/qwen3_workload_base_configs.py@97ad8cc gives
#     moe_flex_dispatcher_backend "hybridep" to their Qwen3-30B-A3B configs only, and
#     src/megatron/bridge/training/flex_dispatcher_backend.py apply_flex_dispatcher_backend turns HybridEP on only on
#     GB200/GB300; B200 and H100 have no backend);
#   26.02: flex on GB300, GB200, B300, H100, alltoall on B200 (scripts/performance/configs/qwen/
#     qwen3_llm_pretrain.py@c0b9a00 qwen3_30b_a3b_pretrain_config_* set moe_token_dispatcher_type "flex" / "alltoall");
#   26.02.01: flex on all five (the same file at tag v0.3.1, 9c9dd84, the 26.02.01 container: the B200 config sets
#     "flex" too, with its workload config's backend "hybridep", which src/megatron/bridge/training/
#     flex_dispatcher_backend.py there turns on for compute capability 8-10, B200's 10 among them);
#   26.04, 26.04.01, 26.06: flex on all five (the same file @74695a0, @63b08b3);
#   26.06.01, 26.08: flex (src/megatron/bridge/perf_recipes/qwen/{h100,gb200,gb300}/qwen3_moe.py@4ab94df: "hybridep").
# Skipped (to SKIPS as "FILE<TAB>LINE<TAB>MODEL<TAB>REASON"): Nemotron-3 (hybrid Mamba layers), Kimi-K2 (not
# shipped: DeepSeek-V3's MLA attention), GPT-OSS-120B (its 128-token sliding window cuts the sequence: refused), rows whose
# gradient accumulation disagrees with GBS/(MBS*DP), nvfp4, mxfp8 on the H100.
BEGIN { RECIPE_RECOMPUTE["Qwen3-30B-A3B"] = "none" } # the sources above
FNR == 1 {
  rows_need()
  if (!header++) print "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,cp,sp,ep,etp,partition,schedule,virtual_stages,profile,stack,zero,overlap_grad_reduce,overlap_param_gather,precision,status,step_time_s,system,source,release,moe_capacity_factor,overlap_moe_ep_comm,cuda_graph,moe_flex_dispatcher,fp8_param_gather,cuda_graph_scope"
  src = FILENAME ~ /simumax/ ? "simumax" : "megatron-bridge"
  next
}
cell("arch") != "moe" { next } # a dense row: not this check's, not counted
{
  m = cell("model_name"); g = cell("gpu_type"); n = cell("notes")
  if (m ~ /^Nemotron/) { skip("hybrid Mamba layers (Nemotron-3): no Mamba block"); next }
  if (m ~ /^Kimi/) { skip("not shipped: Kimi-K2 (DeepSeek-V3's architecture with 384 experts) has no model file"); next }
  # the shipped models and their shapes (workloads/models/*.json: layers hidden heads vocab experts top-k)
  if (m == "Qwen3-30B-A3B") { name = "qwen3-30b-a3b"; shape = "48 2048 32 151936 128 8" }
  else if (m == "GPT-OSS-120B") { name = "gpt-oss-120b"; shape = "36 2880 64 201088 128 4" }
  else { skip("not shipped: " m); next }
  got = cell("layers") " " cell("hidden") " " cell("heads") " " cell("vocab") " " num(note("num_experts")) " " num(note("top_k"))
  if (got != shape) { skip("shape " got " differs from the shipped " name "'s " shape); next }
  if (m == "GPT-OSS-120B") { skip("sliding-window attention (128 tokens) cuts the sequence: layoutsim refuses it (models a window only where it never cuts)"); next }
  cf = n ~ /token-drop/ ? 1 : "" # apply_moe_token_drop's capacity factor (above)
  if (n ~ /GA_INCONSISTENT/) { skip("gradient accumulation disagrees with GBS/(MBS*DP)"); next }
  sys = rows_system()
  if ((prof = rows_profile(sys)) == "" || (pr = rows_precision(sys)) == "" || !rows_schedule()) next # bench/rows.awk
  cp = rows_cp()
  t = cell("tp"); pp = cell("pp")
  if (t * cp * pp * cell("dp") != cell("gpus") + 0) { skip("gpus != tp*cp*pp*dp"); next }
  ep = num(note("ep")); if (ep == "") { skip("ep not stated"); next }
  rc = cell("recompute")
  if (rc == "") rc = m in RECIPE_RECOMPUTE ? RECIPE_RECOMPUTE[m] : "none"
  if (rc == "selective") { skip("selective recompute"); next }
  sp = rows_sp(t)
  rel = note("release"); sub(/^NeMo /, "", rel); sub(/ .*/, "", rel)
  full = rel >= "26.06" && pr == "mxfp8" && (sys == "B300" || sys == "GB200" || sys == "GB300") # the recipes above
  flex = rel >= "26.02.01" || (rel == "26.02" && sys != "B200") || (rel == "25.11" && (sys == "GB200" || sys == "GB300")) # above
  # FP8 primary weights (column fp8_param_gather): the fp8-cs recipe sets fp8_param_gather = True
  # (bf16_with_fp8_current_scaling_mixed, src/megatron/bridge/training/mixed_precision.py@97ad8cc); mxfp8's differs by
  # release (False in some versions, True with reuse_grad_buf_for_mxfp8_param_ag in others): not set, not resolved
  f8p = pr == "fp8-cs"
  # the partial CUDA graphs (above)
  if (full) scope = "none"
  else if (rel == "25.09") scope = sys == "GB200" && cf != "" ? "full" : "none"
  else if (sys == "H100") scope = pr == "bf16" ? "moe_router+moe_preprocess" : "none"
  else if ((sys == "B200" && rel >= "26.02.01") || (sys == "GB200" && pr != "mxfp8")) scope = "attn+moe_router+moe_preprocess"
  else scope = "moe_router+moe_preprocess"
  printf "%s,%d,%d,%d,%d,%s,flash2,%d,%d,%d,%d,%d,%d,1,layers,%s,%d,%s,nemo,1,0,0,%s,ok,%s,%s,%s,%s,%s,%d,%d,%d,%d,%s\n", name, cell("seq_len"),
    cell("global_batch"), pad(cell("vocab"), t), cell("gpus"), rc == "full" ? "every_layer" : "none", cell("micro_batch"), t, pp, cp, sp, ep,
    sched, vs, prof, pr, cell("measured_step_time_s"), sys, src, rel, cf, full, full, flex, f8p, scope
}
END { if (bad) exit 2 }
