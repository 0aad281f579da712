/* memory -- see memory.h and docs/memory.md (which derives each line). What
 * each operator saves for backward and holds while it runs is in the block's
 * table (block.c); here: the model states, checkpoints, pipe buffers, the
 * optimizer's transients and the walk.
 */
#include "memory.h"

#include "axes.h"
#include "precision.h"
#include "schedule.h"

#define BF16 2.0
#define FP32 4.0

void mem_ctx_init(mem_ctx *c, const model *m, const layout *l)
{
  c->m = m;
  c->l = l;
  c->T = layout_tokens_per_rank(l); /* the rank's share of each sequence */
  c->Tl = l->sp ? c->T / l->tp : c->T;
  c->code = (block_code){.fused_norm = layout_norm_fused(l, FALSE), .mlp_in_gemms = 2}; /* the study's code */
}

double mem_layer_bytes(const mem_ctx *c)
{
  block b;
  block_layer(c->m, c->l, &c->code, &b);
  return block_saved_bytes(&b);
}

double mem_checkpoint_bytes(const mem_ctx *c) { return c->Tl * c->m->hidden * BF16; }

double mem_pipe_buffer_bytes(const mem_ctx *c, gboolean gradient)
{
  /* Megatron: the received input is the tensor the first layer saves (counted there) and carries no position
   * ids (only the first stage makes them) */
  if (!gradient && c->code.pipe_tensors_shared) return 0;
  return c->Tl * c->m->hidden * BF16 + (gradient ? 0 : c->T * 8.0);
}

double mem_pipe_output_bytes(const mem_ctx *c)
{
  return c->code.pipe_tensors_shared ? 0 : c->Tl * c->m->hidden * BF16; /* deallocate_output_tensor: 1 element */
}

double mem_layer_dense_params(const model *m, const layout *l, int i)
{
  return model_layer_is_moe(m, i) ? block_moe_dense_params(m, l->tp) : block_layer_params(m, l->tp);
}

/* a layer's linear parameters but its routed experts' (block_layer_linear_params_at counts them) */
static double layer_dense_linear_params(const model *m, const layout *l, int i)
{
  double n = block_layer_linear_params_at(m, l, i);
  return model_layer_is_moe(m, MIN(i, m->layers - 1)) ? n - block_moe_expert_params(m, l) : n;
}

double mem_chunk_dense_linear_params(const model *m, const layout *l, const partition *p, int v)
{
  int first, count;
  partition_layers(p, m, v, &first, &count);
  double n = 0;
  for (int i = first; i < first + count; i++) n += layer_dense_linear_params(m, l, i);
  if (partition_has_head(p, m, v)) n += m->mtp_layers * layer_dense_linear_params(m, l, m->layers); /* its layer */
  return n;
}

/* A stage's sum of a per-chunk count over the chunks the schedule gives it. */
static double over_stage_chunks(double (*chunk)(const model *, const layout *, const partition *, int),
                                const model *m, const layout *l, const partition *p, int stage)
{
  double n = 0;
  for (int c = 0; c < p->chunks; c++) n += chunk(m, l, p, sched_vstage(l->schedule, stage, c, p->pp, p->chunks));
  return n;
}

double mem_stage_dense_linear_params(const model *m, const layout *l, const partition *p, int stage)
{
  return over_stage_chunks(mem_chunk_dense_linear_params, m, l, p, stage);
}

double mem_param_gather_bytes(const layout *l, double params, double linear)
{
  return BF16 * params - (l->fp8_param_gather ? (BF16 - 1) * linear : 0);
}

double mem_chunk_expert_params(const model *m, const layout *l, const partition *p, int v)
{
  double params = 0;
  int first, count;
  partition_layers(p, m, v, &first, &count);
  for (int i = first; i < first + count; i++)
    if (model_layer_is_moe(m, i)) params += block_moe_expert_params(m, l);
  if (partition_has_head(p, m, v)) params += block_mtp_expert_params(m, l);
  return params;
}

double mem_stage_expert_params(const model *m, const layout *l, const partition *p, int stage)
{
  return over_stage_chunks(mem_chunk_expert_params, m, l, p, stage);
}

double mem_stage_params(const model *m, const layout *l, const partition *p, int stage)
{
  double params = 0;
  gboolean embedding = FALSE, head = FALSE;
  for (int c = 0; c < p->chunks; c++) { /* one chunk unless interleaved */
    int v = sched_vstage(l->schedule, stage, c, p->pp, p->chunks), first, count;
    partition_layers(p, m, v, &first, &count);
    if (model_has_experts(m))
      for (int i = first; i < first + count; i++) params += mem_layer_dense_params(m, l, i);
    else params += count * block_layer_params(m, l->tp);
    embedding |= partition_has_embedding(p, v);
    head |= partition_has_head(p, m, v);
    if (partition_has_final_norm(p, m, v)) params += block_final_norm_params(m);
  }
  if (embedding) params += block_embedding_params(m, l->tp);
  /* tied embeddings: the head's stage keeps a copy of the embedding unless it is the embedding's stage */
  if (head && !(m->tied_embeddings && embedding)) params += block_head_params(m, l->tp);
  /* multi-token prediction on the head's stage, with a copy of the embedding unless the stage holds it */
  if (head) params += block_mtp_dense_params(m, l, embedding);
  return params;
}

void mem_model_states(const model *m, const layout *l, const gen_code *code, const partition *p, int stage,
                      mem_states *out)
{
  gen_code study = gen_default_code();
  if (!code) code = &study;
  double n = mem_stage_params(m, l, p, stage), moe_linear = 0; /* moe_linear: a model with experts' linear params */
  int layers = 0;
  for (int c = 0; c < p->chunks; c++) {
    int first, count;
    partition_layers(p, m, sched_vstage(l->schedule, stage, c, p->pp, p->chunks), &first, &count);
    layers += count;
    for (int i = first; model_has_experts(m) && i < first + count; i++) moe_linear += block_layer_linear_params_at(m, l, i);
    if (partition_has_head(p, m, sched_vstage(l->schedule, stage, c, p->pp, p->chunks))) {
      layers += m->mtp_layers; /* each one layer */
      if (model_has_experts(m)) moe_linear += m->mtp_layers * block_layer_linear_params_at(m, l, m->layers);
    }
  }
  /* ZeRO shards over the ranks that hold the same weights, Megatron's dp-cp group (dp with cp 1). ZeRO-3
   * keeps 1/shards of the bf16 weights (a layer's whole weights only while it runs: the events'), ZeRO-2
   * and 3 1/shards of the bf16 gradients (each micro-batch's reduce-scattered as its backward completes
   * them) */
  double shards = (double)layout_dp_cp(l);
  /* the study: param.grad, accumulated over micro-batches in bf16; Megatron: its DDP's buffer, in the reduction's
   * precision (fp32 with --accumulate-allreduce-grads-in-fp32, which bf16 training implies) */
  double grad = code->grad_buffer ? code->grad_reduce_bytes : BF16;
  out->params_bytes = BF16 * n / (l->zero >= 3 ? shards : 1);
  out->grads_bytes = grad * n / (l->zero >= 2 ? shards : 1);
  /* fp32 master weights + exp_avg + exp_avg_sq; ZeRO-1 and up keep 1/shards of them. Without ZeRO the study's
   * optimizer also keeps full fp32 gradients; Megatron's uses its buffer (fp32) or copies them at the step (the
   * step's transient, mem_adam_transient_bytes) */
  double states = code->grad_buffer ? 3 : 4;
  out->optimizer_bytes = l->zero >= 1 ? 3 * FP32 * n / shards : states * FP32 * n;
  /* the routed experts (docs/moe.md): on a rank experts/ep of them, each 1/etp; the distributed optimizer shards
   * their states over the expert data-parallel ranks edp (Megatron's expert_data_parallel group) */
  double ne = mem_stage_expert_params(m, l, p, stage), eshards = axis_edp(l);
  out->params_bytes += BF16 * ne / (l->zero >= 3 ? eshards : 1);
  out->grads_bytes += grad * ne / (l->zero >= 2 ? eshards : 1);
  out->optimizer_bytes += l->zero >= 1 ? 3 * FP32 * ne / eshards : states * FP32 * ne;
  /* per layer: the rotary cos/sin tables (bf16, max_seq_len x head_dim each), if any; under FP8 the FP8 copies
   * of its linear layers' weights and their transposes Transformer Engine keeps for the step (docs/precision.md) */
  out->buffers_bytes = layers * block_layer_buffer_bytes(m, l);
  /* Transformer Engine's dummy weight gradients (stack te_dummy_wgrad): one cached bf16 tensor per distinct linear
   * weight shape, from the first backward on; a dense layer's four shapes (qkv, out, gate-and-up, down) once per
   * rank whatever its layer count (the routed experts' grouped linears are not counted: docs/memory.md) */
  if (code->te_dummy_wgrad && layers > 0) out->buffers_bytes += block_layer_linear_params(m, l->tp) * BF16;
  double linear = model_has_experts(m) ? moe_linear : layers * block_layer_linear_params(m, l->tp);
  if (l->precision != PREC_BF16)
    out->buffers_bytes += linear * precision_weight_copy_bytes((precision)l->precision); /* the experts': docs/moe.md */
  /* FP8 primary weights (--fp8-param-gather): the FP8 weight and its transpose above are the linear layers' only
   * copy, their bf16 weights are not kept (zero 3 refused: layout.c) */
  if (l->fp8_param_gather) out->params_bytes -= BF16 * linear;
}

double mem_static_bytes(const model *m, const layout *l, const gen_code *code, const partition *p, int stage)
{
  mem_states s;
  mem_model_states(m, l, code, p, stage, &s);
  return s.params_bytes + s.grads_bytes + s.optimizer_bytes + s.buffers_bytes;
}

double mem_bucket_transient_bytes(const gen_code *code, double bucket_elements)
{
  return code->grad_buffer ? 0 : bucket_elements * (BF16 + FP32);
}

double mem_adam_transient_bytes(const gen_code *code, const layout *l, double shard)
{
  /* Megatron (Float16OptimizerWithFloat16Params, DistributedOptimizer): main_param.grad = main_grad.float(), a copy
   * of the owned gradients unless the buffer is fp32 already; apex's / Transformer Engine's FusedAdam (multi-tensor
   * apply) allocates nothing */
  if (code->grad_buffer) return code->grad_reduce_bytes < FP32 ? FP32 * shard : 0;
  /* the study's ZeRO-1: the fp32 gradient of the owned slice; torch's foreach AdamW: one
   * fp32 temporary per parameter (the denominator sqrt(v)+eps) */
  return (l->zero >= 1 ? FP32 * shard : 0) + FP32 * shard;
}

void mem_walk_init(mem_walk *w)
{
  *w = (mem_walk){.peak_index = -1};
}

gboolean mem_walk_event(mem_walk *w, const graph_event *e, int index)
{
  /* while the event runs: its transient, and what it allocates (a free happens at its end) */
  double act = w->act_bytes + MAX(e->mem_delta_bytes, 0);
  double buf = e->mem_transient_bytes;
  gboolean peak = FALSE;
  if (act + buf > w->peak_bytes) {
    w->peak_bytes = act + buf;
    w->peak_act_bytes = act;
    w->peak_buf_bytes = buf;
    w->peak_index = index;
    peak = TRUE;
  }
  w->act_bytes += e->mem_delta_bytes;
  w->min_bytes = MIN(w->min_bytes, w->act_bytes);
  return peak;
}

void mem_walk_program(const graph *g, const graph_program *p, mem_walk *w)
{
  const graph_program *src = p->mirror_of >= 0 ? g_ptr_array_index(g->programs, p->mirror_of) : p;
  for (guint i = 0; i < src->events->len; i++) mem_walk_event(w, &g_array_index(src->events, graph_event, i), (int)i);
}
