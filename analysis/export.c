/* export -- see export.h. Names: Megatron-LM megatron/training/arguments.py (tests/export/megatron-arguments.txt),
 * NeMo 2's MegatronStrategy, MegatronDataModule and TransformerConfig fields, torchtitan's JobConfig
 * (torchtitan/config/job_config.py). */
#include "export.h"

#include <string.h>

#include "common/lsim_error.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

static const char *const TARGETS[EXPORT_N] = {"megatron", "nemo", "torchtitan"};

gboolean export_parse_target(const char *s, export_target *out, GError **err)
{
  for (int i = 0; i < EXPORT_N; i++)
    if (!g_ascii_strcasecmp(s, TARGETS[i])) {
      *out = (export_target)i;
      return TRUE;
    }
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--export: invalid value '%s' (allowed: megatron, nemo, torchtitan)", s);
  return FALSE;
}

/* A CUDA graph scope's members (layout.h layout_cg_scope) separated by sep, each quoted in q (g_free it). */
static char *scope_words(int scope, const char *sep, const char *q)
{
  char name[LAYOUT_CG_SCOPE_NAME_MAX];
  g_auto(GStrv) parts = g_strsplit(layout_cg_scope_name(scope, name), "+", -1);
  GString *out = g_string_new(NULL);
  for (char **p = parts; *p; p++) g_string_append_printf(out, "%s%s%s%s", p == parts ? "" : sep, q, *p, q);
  return g_string_free(out, FALSE);
}

/* The schedule's kind: 1f1b, interleaved (virtual stages), gpipe or another (zero-bubble ...). */
static const char *sched(const layout *l) { return sched_name(l->schedule); }
static gboolean is_1f1b(const layout *l) { return !strcmp(sched(l), "1f1b"); }
static gboolean is_interleaved(const layout *l) { return l->virtual_stages > 1 && !strcmp(sched(l), "interleaved"); }
static gboolean is_gpipe(const layout *l) { return !strcmp(sched(l), "gpipe"); }

/* Transformer Engine's recipe of a precision, as Megatron-LM's --fp8-recipe and NeMo's fp8_recipe name it (fp8:
 * delayed scaling; fp8-cs: current, per-tensor scaling; mxfp8: block scaling), and its format (hybrid: E4M3
 * forward, E5M2 backward; MXFP8 is E4M3 throughout). */
static const char *fp8_recipe(const layout *l)
{
  return l->precision == PREC_FP8 ? "delayed" : l->precision == PREC_FP8_CS ? "tensorwise" : "mxfp8";
}
static const char *fp8_format(const layout *l) { return l->precision == PREC_MXFP8 ? "e4m3" : "hybrid"; }

/* The MoE layers' pattern as Megatron's --moe-layer-freq takes a list ("[0,0,1,...]": 1 a MoE layer); NULL where
 * every layer is one. Caller frees. */
static char *moe_layer_pattern(const model *m)
{
  if (model_moe_layers(m) == m->layers) return NULL;
  GString *p = g_string_new("[");
  for (int i = 0; i < m->layers; i++) g_string_append_printf(p, "%s%d", i ? "," : "", model_layer_is_moe(m, i) ? 1 : 0);
  g_string_append_c(p, ']');
  return g_string_free(p, FALSE);
}

/* The capacity factor a layout runs with (its own, else the model's); 0: dropless. */
static double capacity(const sim_request *rq)
{
  return rq->l.moe_capacity_factor > 0 ? rq->l.moe_capacity_factor : rq->m.moe.capacity_factor;
}

static void header(const sim_request *rq, const char *cm, export_target t, GString *o)
{
  const layout *l = &rq->l;
  g_string_append_printf(o, "%s layoutsim export %s: %s on %d GPUs (dp %d, tp %d, pp %d, cp %d), stack %s\n", cm,
                         TARGETS[t], rq->m.name, l->gpus, l->dp, l->tp, l->pp, l->cp, rq->prof.stack.name);
}

static void megatron(const sim_request *rq, GString *o)
{
  const layout *l = &rq->l;
  const model *m = &rq->m;
  header(rq, "#", EXPORT_MEGATRON, o);
  GString *a = g_string_new(NULL), *c = g_string_new(NULL); /* arguments; comments on what is not expressed */
#define ARG(...) (g_string_append_printf(a, __VA_ARGS__), g_string_append_c(a, '\n'))
#define NOTE(...) (g_string_append(c, "# "), g_string_append_printf(c, __VA_ARGS__), g_string_append_c(c, '\n'))
  ARG("--tensor-model-parallel-size %d", l->tp);
  ARG("--pipeline-model-parallel-size %d", l->pp);
  if (l->pipeline_layout[0]) /* it gives the chunks per stage itself */
    ARG("--pipeline-model-parallel-layout '%s'", l->pipeline_layout);
  else if (is_interleaved(l)) ARG("--num-virtual-stages-per-pipeline-rank %d", l->virtual_stages);
  if (!l->pipeline_layout[0] && l->pp > 1 && m->layers % (l->pp * l->virtual_stages))
    NOTE("%d layers on %d stages: Megatron-LM splits them evenly only; give --pipeline-model-parallel-layout (or "
         "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers) to split them as the prediction "
         "did (its --partition)", m->layers, l->pp * l->virtual_stages);
  ARG("--context-parallel-size %d", l->cp);
  if (layout_cp_a2a(l)) ARG("--cp-comm-type a2a");
  if (l->sp) ARG("--sequence-parallel");
  ARG("--micro-batch-size %d", l->micro_batch);
  ARG("--global-batch-size %d", l->global_batch);
  ARG("--seq-length %d", l->seq_len);
  switch (l->ckpt) {
  case CKPT_EVERY_LAYER:
    ARG("--recompute-granularity full");
    ARG("--recompute-method uniform");
    ARG("--recompute-num-layers 1");
    break;
  case CKPT_SELECTIVE: ARG("--recompute-granularity selective"); break; /* core_attn, Megatron's default module */
  case CKPT_MLP:
    ARG("--recompute-granularity selective");
    ARG("--recompute-modules mlp");
    break;
  case CKPT_MLA_UP_PROJ:
    ARG("--recompute-granularity selective");
    ARG("--recompute-modules mla_up_proj");
    break;
  case CKPT_NONE: break;
  }
  if (l->zero >= 1) ARG("--use-distributed-optimizer");
  if (l->zero >= 2)
    NOTE("zero %d: Megatron's distributed optimizer shards optimizer states and reduce-scatters gradients but keeps "
         "full gradient buffers%s; ZeRO-%d is not an argument", l->zero, l->zero == 3 ? " and weights" : "", l->zero);
  if (l->overlap_grad_reduce) ARG("--overlap-grad-reduce");
  if (l->overlap_param_gather) ARG("--overlap-param-gather");
  /* the stack's code as simulated: gradients reduced in bf16 (Megatron's default is fp32), TransformerEngine's tp
   * overlap (with sp) */
  if (rq->prof.stack.grad_buffer && rq->prof.stack.grad_reduce_bytes == 2) ARG("--grad-reduce-in-bf16");
  if (rq->prof.stack.tp_comm_overlap && l->sp && l->tp > 1) ARG("--tp-comm-overlap");
  if (is_gpipe(l)) NOTE("schedule gpipe: Megatron-LM runs 1F1B (or interleaved); no argument selects GPipe");
  else if (!is_1f1b(l) && !is_interleaved(l))
    NOTE("schedule %s: not one of Megatron-LM's schedules (1F1B, interleaved)", sched(l));
  ARG("--attention-backend %s", layout_attn_is_flash(l->attn) ? "flash" : "unfused");
  if (l->attn == ATTN_FUSED_SOFTMAX) NOTE("attention fused-softmax: the unfused backend with Megatron's fused softmax");
  ARG("--num-layers %d", m->layers);
  ARG("--hidden-size %d", m->hidden);
  ARG("--ffn-hidden-size %d", m->ffn);
  ARG("--num-attention-heads %d", m->heads);
  if (m->kv_heads != m->heads) {
    ARG("--group-query-attention");
    ARG("--num-query-groups %d", m->kv_heads);
  }
  if (m->head_dim) ARG("--kv-channels %d", m->head_dim);
  if (m->mla.kv_lora_rank) {
    ARG("--multi-latent-attention");
    if (m->mla.q_lora_rank) ARG("--q-lora-rank %d", m->mla.q_lora_rank);
    ARG("--kv-lora-rank %d", m->mla.kv_lora_rank);
    ARG("--qk-head-dim %d", m->mla.qk_nope_head_dim);
    ARG("--qk-pos-emb-head-dim %d", m->mla.qk_rope_head_dim);
    ARG("--v-head-dim %d", m->mla.v_head_dim);
  }
  if (model_has_experts(m)) {
    ARG("--num-experts %d", m->moe.experts);
    ARG("--moe-router-topk %d", m->moe.top_k);
    ARG("--moe-ffn-hidden-size %d", m->moe.expert_ffn);
    if (m->moe.router == MODEL_ROUTER_SIGMOID) ARG("--moe-router-score-function sigmoid");
    if (m->moe.shared_experts)
      ARG("--moe-shared-expert-intermediate-size %d", m->moe.shared_experts * m->moe.shared_expert_ffn);
    g_autofree char *freq = moe_layer_pattern(m);
    if (freq) ARG("--moe-layer-freq '%s'", freq);
    ARG("--moe-grouped-gemm");
    ARG("--expert-model-parallel-size %d", l->ep);
    ARG("--expert-tensor-parallel-size %d", l->etp);
    if (capacity(rq) > 0) ARG("--moe-expert-capacity-factor %g", capacity(rq));
    if (l->moe_flex_dispatcher) {
      ARG("--moe-token-dispatcher-type flex");
      NOTE("moe_flex_dispatcher: choose the flex dispatcher's backend (--moe-enable-deepep or "
           "--moe-flex-dispatcher-backend) as your Megatron-LM version names it");
    } else ARG("--moe-token-dispatcher-type alltoall");
    if (l->overlap_moe_ep_comm) ARG("--overlap-moe-expert-parallel-comm");
    if (l->moe_imbalance != 1)
      NOTE("moe_imbalance %g: the router's load the prediction assumed (max over mean tokens per expert), not an "
           "argument", l->moe_imbalance);
  }
  if (m->mtp_layers) ARG("--mtp-num-layers %d", m->mtp_layers);
  if (m->qk_norm) ARG("--qk-layernorm");
  if (m->mlp == MODEL_MLP_SWIGLU) ARG("--swiglu");
  ARG("--normalization %s", m->norm == MODEL_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
  if (!m->bias) ARG("--disable-bias-linear");
  if (m->qkv_bias && !m->bias) ARG("--add-qkv-bias");
  if (!m->tied_embeddings) ARG("--untie-embeddings-and-output-weights");
  if (m->positions == MODEL_POS_ROTARY) {
    ARG("--position-embedding-type rope");
    NOTE("rope: layoutsim's model keeps no rotary base, rope scaling or norm epsilon (they cost no time): add "
         "--rotary-base, --use-rope-scaling and --norm-epsilon as your model's config has them (Megatron-LM's "
         "defaults: 10000, off, 1e-5; Llama 3: 500000, on for 3.1, 1e-5)");
  }
  else if (m->positions == MODEL_POS_LEARNED) {
    ARG("--position-embedding-type learned_absolute");
    ARG("--max-position-embeddings %d", m->max_positions);
  } else NOTE("positions alibi: not a Megatron-LM position embedding type");
  if (m->embedding_norm) NOTE("embedding_norm: BLOOM's norm after the embedding is not a Megatron-LM argument");
  if (m->attention_window) NOTE("attention_window %d: sliding-window attention (--window-size in Megatron-core)", m->attention_window);
  ARG("--attention-dropout %g", m->dropout);
  ARG("--hidden-dropout %g", m->dropout);
  ARG("--vocab-size %d", m->vocab_unpadded ? m->vocab_unpadded : m->vocab);
  ARG("--make-vocab-size-divisible-by %d", rq->prof.stack.vocab_pad_multiple > 0 ? (int)rq->prof.stack.vocab_pad_multiple : 1);
  ARG("--bf16");
  if (l->precision != PREC_BF16) { /* Transformer Engine's FP8 linear layers, on top of bf16 (docs/precision.md) */
    ARG("--fp8-format %s", fp8_format(l));
    ARG("--fp8-recipe %s", fp8_recipe(l));
    if (l->fp8_param_gather) ARG("--fp8-param-gather");
  }
  if (l->cuda_graph) ARG("--cuda-graph-impl full_iteration");
  if (l->cuda_graph_scope) { /* Transformer Engine's partial graphs; the whole layer ("full"): no scope */
    ARG("--cuda-graph-impl transformer_engine");
    g_autofree char *words = scope_words(l->cuda_graph_scope, " ", "");
    if (l->cuda_graph_scope != CG_SCOPE_FULL) {
      ARG("--cuda-graph-scope %s", words);
      NOTE("Megatron-LM since e41b370 (2026-05) names it --cuda-graph-modules (--cuda-graph-scope kept, hidden)");
    }
  }
#undef ARG
#undef NOTE
  g_string_append(o, c->str);
  /* one argument a line, continued: pastes into a launch script */
  g_auto(GStrv) lines = g_strsplit(a->str, "\n", -1);
  for (char **p = lines; *p && **p; p++) g_string_append_printf(o, "%s%s\n", *p, p[1] && *p[1] ? " \\" : "");
  g_string_free(a, TRUE);
  g_string_free(c, TRUE);
}

static const char *py_bool(gboolean b) { return b ? "True" : "False"; }

static void nemo(const sim_request *rq, GString *o)
{
  const layout *l = &rq->l;
  header(rq, "#", EXPORT_NEMO, o);
  g_string_append(o, "# overrides of a NeMo 2 pretraining recipe (nemo.collections.llm), e.g. recipe = llm.llama3_70b"
                     ".pretrain_recipe(...)\n");
  g_string_append_printf(o, "recipe.trainer.num_nodes = %d  # of %d GPUs each\n",
                         (l->gpus + rq->prof.gpus_per_node - 1) / rq->prof.gpus_per_node, rq->prof.gpus_per_node);
  g_string_append_printf(o, "recipe.trainer.strategy.tensor_model_parallel_size = %d\n", l->tp);
  g_string_append_printf(o, "recipe.trainer.strategy.pipeline_model_parallel_size = %d\n", l->pp);
  if (is_interleaved(l))
    g_string_append_printf(o, "recipe.trainer.strategy.virtual_pipeline_model_parallel_size = %d\n", l->virtual_stages);
  else g_string_append(o, "recipe.trainer.strategy.virtual_pipeline_model_parallel_size = None\n");
  if (l->pipeline_layout[0])
    g_string_append_printf(o, "recipe.trainer.strategy.pipeline_model_parallel_layout = \"%s\"\n", l->pipeline_layout);
  g_string_append_printf(o, "recipe.trainer.strategy.context_parallel_size = %d\n", l->cp);
  if (layout_cp_a2a(l)) g_string_append(o, "recipe.model.config.cp_comm_type = \"a2a\"\n");
  if (model_has_experts(&rq->m)) {
    g_string_append_printf(o, "recipe.trainer.strategy.expert_model_parallel_size = %d\n", l->ep);
    g_string_append_printf(o, "recipe.trainer.strategy.expert_tensor_parallel_size = %d\n", l->etp);
    if (capacity(rq) > 0)
      g_string_append_printf(o, "recipe.model.config.moe_expert_capacity_factor = %g\n", capacity(rq));
    g_string_append_printf(o, "recipe.model.config.moe_token_dispatcher_type = \"%s\"\n",
                           l->moe_flex_dispatcher ? "flex" : "alltoall");
    if (l->overlap_moe_ep_comm) g_string_append(o, "recipe.model.config.overlap_moe_expert_parallel_comm = True\n");
    if (l->moe_imbalance != 1)
      g_string_append_printf(o, "# moe_imbalance %g: the router's load the prediction assumed, not a field\n",
                             l->moe_imbalance);
  }
  g_string_append_printf(o, "recipe.trainer.strategy.sequence_parallel = %s\n", py_bool(l->sp));
  g_string_append_printf(o, "recipe.data.micro_batch_size = %d\n", l->micro_batch);
  g_string_append_printf(o, "recipe.data.global_batch_size = %d\n", l->global_batch);
  g_string_append_printf(o, "recipe.data.seq_length = %d\n", l->seq_len);
  g_string_append_printf(o, "recipe.model.config.seq_length = %d\n", l->seq_len);
  switch (l->ckpt) {
  case CKPT_EVERY_LAYER:
    g_string_append(o, "recipe.model.config.recompute_granularity = \"full\"\n"
                       "recipe.model.config.recompute_method = \"uniform\"\n"
                       "recipe.model.config.recompute_num_layers = 1\n");
    break;
  case CKPT_SELECTIVE: g_string_append(o, "recipe.model.config.recompute_granularity = \"selective\"\n"); break;
  case CKPT_MLP:
    g_string_append(o, "recipe.model.config.recompute_granularity = \"selective\"\n"
                       "recipe.model.config.recompute_modules = [\"mlp\"]\n");
    break;
  case CKPT_MLA_UP_PROJ:
    g_string_append(o, "recipe.model.config.recompute_granularity = \"selective\"\n"
                       "recipe.model.config.recompute_modules = [\"mla_up_proj\"]\n");
    break;
  case CKPT_NONE: g_string_append(o, "recipe.model.config.recompute_granularity = None\n"); break;
  }
  g_string_append_printf(o, "recipe.optim.config.use_distributed_optimizer = %s\n", py_bool(l->zero >= 1));
  if (l->zero >= 2)
    g_string_append_printf(o, "# zero %d: NeMo's distributed optimizer is Megatron's (optimizer states sharded, gradients "
                           "reduce-scattered); ZeRO-%d is not a field\n", l->zero, l->zero);
  g_string_append_printf(o, "recipe.trainer.strategy.ddp.overlap_grad_reduce = %s\n", py_bool(l->overlap_grad_reduce));
  g_string_append_printf(o, "recipe.trainer.strategy.ddp.overlap_param_gather = %s\n", py_bool(l->overlap_param_gather));
  if (rq->prof.stack.grad_buffer)
    g_string_append_printf(o, "recipe.trainer.strategy.ddp.grad_reduce_in_fp32 = %s\n",
                           py_bool(rq->prof.stack.grad_reduce_bytes != 2));
  if (rq->prof.stack.tp_comm_overlap && l->sp && l->tp > 1)
    g_string_append(o, "# tp_comm_overlap: the stack's TransformerEngine tp overlap, as simulated: keep the recipe's "
                       "MegatronCommOverlapCallback(tp_comm_overlap=True)\n");
  if (is_gpipe(l)) g_string_append(o, "# schedule gpipe: NeMo runs Megatron's 1F1B or interleaved schedule\n");
  else if (!is_1f1b(l) && !is_interleaved(l))
    g_string_append_printf(o, "# schedule %s: not one of NeMo's schedules (1F1B, interleaved)\n", sched(l));
  g_string_append_printf(o, "recipe.model.config.attention_backend = \"%s\"  # megatron.core.transformer.enums.AttnBackend\n",
                         layout_attn_is_flash(l->attn) ? "flash" : "unfused");
  g_string_append_printf(o, "recipe.model.config.make_vocab_size_divisible_by = %d\n",
                         rq->prof.stack.vocab_pad_multiple > 0 ? (int)rq->prof.stack.vocab_pad_multiple : 1);
  if (l->precision != PREC_BF16) { /* the precision plugin's fields, which it sets on the model's config */
    g_string_append(o, "recipe.trainer.plugins = bf16_with_fp8_mixed()  # nemo.collections.llm.recipes.precision."
                       "mixed_precision\n");
    g_string_append_printf(o, "recipe.trainer.plugins.fp8 = \"%s\"\n", fp8_format(l));
    g_string_append_printf(o, "recipe.trainer.plugins.fp8_recipe = \"%s\"\n", fp8_recipe(l));
    g_string_append_printf(o, "recipe.trainer.plugins.fp8_param_gather = %s\n", py_bool(l->fp8_param_gather));
  }
  if (l->cuda_graph)
    g_string_append(o, "# cuda_graph: the whole step as one CUDA graph (Megatron-Core's cuda_graph_impl "
                       "\"full_iteration\"); set it as your NeMo version exposes it\n");
  if (l->cuda_graph_scope) { /* TransformerConfig's fields (Megatron-Bridge's perf configs set them so) */
    g_string_append(o, "recipe.model.config.cuda_graph_impl = \"transformer_engine\"\n");
    g_autofree char *list = scope_words(l->cuda_graph_scope, ", ", "\"");
    g_string_append_printf(o, "recipe.model.config.cuda_graph_scope = [%s]\n", l->cuda_graph_scope == CG_SCOPE_FULL ? "" : list);
  }
}

static void torchtitan(const sim_request *rq, GString *o)
{
  const layout *l = &rq->l;
  header(rq, "#", EXPORT_TORCHTITAN, o);
  /* torchtitan's data parallelism is FSDP2 (ZeRO-3: data_parallel_shard_degree) or replication (DDP, ZeRO 0) */
  int shard = l->zero >= 3 ? l->dp : 1, replicate = l->zero >= 3 ? 1 : l->dp;
  const model *m = &rq->m;
  if (m->norm != MODEL_NORM_RMSNORM || m->mlp != MODEL_MLP_SWIGLU || m->positions != MODEL_POS_ROTARY || m->bias ||
      m->qkv_bias || m->tied_embeddings || m->embedding_norm)
    g_string_append_printf(o, "# model %s: torchtitan's [model] names a Llama-style flavour (RMSNorm, SwiGLU, rotary, no "
                           "biases, untied); this architecture is not one\n", m->name);
  g_string_append(o, "[parallelism]\n");
  g_string_append_printf(o, "data_parallel_replicate_degree = %d\n", replicate);
  g_string_append_printf(o, "data_parallel_shard_degree = %d\n", shard);
  if (l->zero == 1 || l->zero == 2)
    g_string_append_printf(o, "# zero %d: torchtitan shards everything (FSDP2, ZeRO-3: data_parallel_shard_degree) or "
                           "nothing (replicate); ZeRO-%d is not expressible\n", l->zero, l->zero);
  g_string_append_printf(o, "tensor_parallel_degree = %d\n", l->tp);
  if (l->tp > 1 && !l->sp)
    g_string_append(o, "# sp off: torchtitan's tensor parallelism always shards the sequence of the norm regions "
                       "(sequence parallelism); no field turns it off\n");
  g_string_append_printf(o, "context_parallel_degree = %d\n", l->cp);
  if (layout_cp_a2a(l))
    g_string_append(o, "# cp_comm_type a2a: torchtitan's context parallelism is a ring (its rotate method allgather or "
                       "alltoall exchanges the KV shards), not Ulysses' all-to-all over heads\n");
  if (model_has_experts(m)) {
    g_string_append_printf(o, "expert_parallel_degree = %d\n", l->ep);
    g_string_append_printf(o, "expert_tensor_parallel_degree = %d\n", l->etp);
    if (l->moe_flex_dispatcher || l->overlap_moe_ep_comm || capacity(rq) > 0)
      g_string_append(o, "# moe: the flex dispatcher, the overlapped all-to-alls and a capacity factor are "
                         "Megatron's; torchtitan has none of them as a field\n");
    if (l->moe_imbalance != 1)
      g_string_append_printf(o, "# moe_imbalance %g: the router's load the prediction assumed, not a field\n",
                             l->moe_imbalance);
  }
  g_string_append_printf(o, "pipeline_parallel_degree = %d\n", l->pp);
  if (l->pp > 1) {
    const char *s = is_interleaved(l) ? "Interleaved1F1B" : is_gpipe(l) ? "GPipe" : is_1f1b(l) ? "1F1B" : NULL;
    if (s) g_string_append_printf(o, "pipeline_parallel_schedule = \"%s\"\n", s);
    else g_string_append_printf(o, "# schedule %s: no torchtitan schedule of that name (1F1B, Interleaved1F1B, GPipe, "
                                "InterleavedZeroBubble, ZBVZeroBubble)\n", sched(l));
    g_string_append_printf(o, "pipeline_parallel_microbatch_size = %d\n", l->micro_batch);
    if (l->pipeline_layout[0])
      g_string_append_printf(o, "# pipeline layout '%s': torchtitan splits by module names "
                             "(module_fqns_per_model_part), not by a layout string; write them by hand\n",
                             l->pipeline_layout);
    else if (is_interleaved(l))
      g_string_append_printf(o, "pipeline_parallel_layers_per_stage = %d\n", rq->m.layers / (l->pp * l->virtual_stages));
  }
  if (l->overlap_grad_reduce || l->overlap_param_gather)
    g_string_append(o, "# overlaps: FSDP2 prefetches and reduce-scatters under compute by itself; no field\n");
  g_string_append(o, "\n[training]\n");
  g_string_append_printf(o, "local_batch_size = %d  # per data-parallel rank: micro-batch x %d accumulation steps\n",
                         l->global_batch / MAX(1, l->dp), l->grad_accum);
  g_string_append_printf(o, "global_batch_size = %d\n", l->global_batch);
  g_string_append_printf(o, "seq_len = %d\n", l->seq_len);
  g_string_append(o, "mixed_precision_param = \"bfloat16\"\n");
  if (l->precision != PREC_BF16)
    g_string_append_printf(o, "# precision %s: torchtitan's float8 training is torchao's (its float8 or quantize "
                           "section, as your version names it), not Transformer Engine's %s recipe: set it by hand\n",
                           precision_name(l->precision), fp8_recipe(l));
  if (l->cuda_graph) g_string_append(o, "# cuda_graph: the step as one CUDA graph is Megatron-Core's; no field\n");
  if (l->cuda_graph_scope) g_string_append(o, "# cuda_graph_scope: Transformer Engine's partial CUDA graphs are "
                                              "Megatron-Core's; no field\n");
  g_string_append(o, "\n[activation_checkpoint]\n");
  switch (l->ckpt) {
  case CKPT_EVERY_LAYER: g_string_append(o, "mode = \"full\"\n"); break;
  case CKPT_SELECTIVE:
    g_string_append(o, "mode = \"selective\"\nselective_ac_option = \"op\"  # saves the matmuls, recomputes the rest "
                       "(attention's scores among them)\n");
    break;
  case CKPT_MLP: g_string_append(o, "mode = \"none\"\n# checkpointing mlp: torchtitan has no MLP-only recompute\n"); break;
  case CKPT_MLA_UP_PROJ:
    g_string_append(o, "mode = \"none\"\n# checkpointing mla_up_proj: torchtitan has no MLA up-projection recompute\n");
    break;
  case CKPT_NONE: g_string_append(o, "mode = \"none\"\n"); break;
  }
  if (!layout_attn_is_flash(l->attn))
    g_string_append_printf(o, "# attention %s: torchtitan runs scaled_dot_product_attention (flash)\n",
                           layout_attn_name(l->attn));
}

void export_layout(const sim_request *rq, export_target target, GString *out)
{
  if (target == EXPORT_MEGATRON) megatron(rq, out);
  else if (target == EXPORT_NEMO) nemo(rq, out);
  else torchtitan(rq, out);
}
