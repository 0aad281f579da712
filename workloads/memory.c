/* memory -- see memory.h and docs/memory.md (which derives each line).
 * Per layer and micro-batch, one rank: T = b*s tokens, t = tp, Tl = T/t with
 * sequence parallelism else T, h hidden, f ffn, a heads, V vocab, and
 * B = b*a/t*s^2 elements of the score matrix of the rank's heads.
 *
 * Saved for backward (bytes):
 *   RMSNorm       fused: 2*Tl*h (its bf16 input); torch: 10*Tl*h (fp32 input
 *                 copy kept by pow/mul, fp32 normalised product, bf16 output
 *                 kept by *weight)
 *   QKV GEMM      2*T*h (its input: the norm output, gathered over tp with sp)
 *   attention     flash: q, k, v, o 8*T*h/t + fp32 log-sum-exp 4*T*a/t;
 *                 unfused: q, k, v 6*T*h/t + probabilities 2*B (fused softmax)
 *                 or 2*B + 4*B (torch: fp32 softmax output for its backward and
 *                 the bf16 copy the AV bmm keeps)
 *   out-proj GEMM 2*T*h/t (its contiguous input)
 *   MLP up+gate   2*T*h (the shared input)
 *   SwiGLU        6*T*f/t (up output, gate output, silu(up))
 *   down GEMM     2*T*f/t (its input)
 *   head          final norm as above, logits GEMM input 2*T*h,
 *                 fp32 log-softmax 4*T*V (the gathered bf16 logits 2*T*V are
 *                 the stage output, see mem_transient_bytes and generate.c)
 */
#include "memory.h"

#define BF16 2.0
#define FP32 4.0
/* torch RMSNorm: fp32 input copy (pow, mul), fp32 normalised product (kept by
 * the weight multiply done in fp32), bf16 output cast */
#define NORM_TORCH_SAVED_PER_EL (FP32 + FP32 + BF16)

void mem_ctx_init(mem_ctx *c, const model *m, const layout *l)
{
  c->m = m;
  c->l = l;
  c->T = (double)l->micro_batch * l->seq_len;
  c->Tl = l->sp ? c->T / l->tp : c->T;
}

/* Elements of the score matrix of one rank, one micro-batch. */
static double score_elements(const mem_ctx *c)
{
  return (double)c->l->micro_batch * c->m->heads / c->l->tp * c->l->seq_len * c->l->seq_len;
}

double mem_saved_bytes(const mem_ctx *c, graph_op op)
{
  const model *m = c->m;
  const layout *l = c->l;
  double h = m->hidden, f = m->ffn, t = l->tp, T = c->T, B = score_elements(c);
  switch (op) {
  case OP_NORM: return c->Tl * h * (layout_attn_fused_norm(l->attn) ? BF16 : NORM_TORCH_SAVED_PER_EL);
  case OP_QKV: return T * h * BF16;
  case OP_ATTENTION:
    if (layout_attn_is_flash(l->attn)) return 4 * T * h / t * BF16 + T * m->heads / t * FP32;
    return 3 * T * h / t * BF16 + B * (l->attn == ATTN_TORCH ? BF16 + FP32 : BF16);
  case OP_ATTN_OUT: return T * h / t * BF16;
  case OP_MLP_UP: return T * h * BF16;
  case OP_SWIGLU: return 3 * T * f / t * BF16;
  case OP_MLP_DOWN: return T * f / t * BF16;
  case OP_LOGITS: return T * h * BF16;
  case OP_LOSS: return T * m->vocab * FP32;
  default: return 0;
  }
}

double mem_layer_bytes(const mem_ctx *c)
{
  static const graph_op ops[] = {OP_NORM, OP_QKV, OP_ATTENTION, OP_ATTN_OUT, OP_NORM, OP_MLP_UP, OP_SWIGLU, OP_MLP_DOWN};
  double sum = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) sum += mem_saved_bytes(c, ops[i]);
  return sum;
}

double mem_checkpoint_bytes(const mem_ctx *c) { return c->Tl * c->m->hidden * BF16; }

/* Backward of a GEMM (T x k).(k x n): the incoming output gradient, the input
 * gradient it writes and the weight gradient it writes before AccumulateGrad
 * adds it into param.grad. */
static double gemm_backward_bytes(double T, double k, double n, int count)
{
  return count * (T * n + T * k + k * n) * BF16;
}

double mem_transient_bytes(const mem_ctx *c, graph_op op, gboolean backward)
{
  const model *m = c->m;
  const layout *l = c->l;
  double h = m->hidden, f = m->ffn, t = l->tp, T = c->T, V = m->vocab, B = score_elements(c);
  gboolean fused = layout_attn_fused_norm(l->attn), flash = layout_attn_is_flash(l->attn);
  if (!backward) {
    switch (op) {
    case OP_NORM: return fused ? 0 : c->Tl * h * 2 * FP32; /* pow and product in fp32 */
    case OP_ATTENTION:
      if (flash) return 0;
      /* raw scores (and for torch the masked copy and its fp32 cast) live until softmax ends */
      return l->attn == ATTN_TORCH ? B * (BF16 + BF16 + FP32) : B * BF16;
    case OP_LOGITS: /* the rank's vocab shard, and the all-gather list before torch.cat */
      return t > 1 ? T * V / t * BF16 + T * V * BF16 : 0;
    case OP_LOSS: return T * V * FP32; /* logits.float() */
    default: return 0;
    }
  }
  switch (op) {
  case OP_NORM: return c->Tl * h * (BF16 + BF16 + (fused ? FP32 : 2 * FP32));
  case OP_QKV: return gemm_backward_bytes(T, h, 3 * h / t, 1);
  case OP_ATTENTION:
    if (flash) return T * h / t * (BF16 + 3 * BF16 + FP32); /* dO, dq dk dv, fp32 dq accumulator */
    /* dO, dq dk dv, and the gradients of the probabilities and of the scores */
    return T * h / t * 4 * BF16 + B * (l->attn == ATTN_TORCH ? 2 * FP32 + BF16 : 2 * BF16);
  case OP_ATTN_OUT: return gemm_backward_bytes(T, h / t, h, 1);
  case OP_MLP_UP: return gemm_backward_bytes(T, h, f / t, 2);
  case OP_SWIGLU: return 4 * T * f / t * BF16; /* incoming grad, two outgoing, silu' temporary */
  case OP_MLP_DOWN: return gemm_backward_bytes(T, f / t, h, 1);
  case OP_LOGITS: return gemm_backward_bytes(T, h, V / t, 1) - T * V / t * BF16 + T * V * BF16; /* full dlogits */
  /* nll backward writes d log-softmax (fp32); log-softmax backward writes the
   * fp32 d logits while both it and the saved log-softmax are held; autograd
   * then frees both before the cast to bf16 (fp32 + bf16 < the first pair) */
  case OP_LOSS: return T * V * (FP32 + FP32);
  case OP_EMBED: return T * h * BF16 + V / t * h * BF16; /* incoming grad, dense weight grad */
  default: return 0;
  }
}

double mem_pipe_buffer_bytes(const mem_ctx *c, gboolean gradient)
{
  return c->Tl * c->m->hidden * BF16 + (gradient ? 0 : c->T * 8.0);
}

double mem_stage_params(const model *m, const layout *l, const partition *p, int stage)
{
  double h = m->hidden, t = l->tp, params = 0;
  for (int c = 0; c < p->chunks; c++) { /* one chunk unless interleaved */
    int v = partition_vstage(p, stage, c), first, count;
    partition_layers(p, m, v, &first, &count);
    params += count * ((4.0 * h * h + 3.0 * h * m->ffn) / t + 2.0 * h);
    if (partition_has_embedding(p, v)) params += (double)m->vocab * h / t;
    if (partition_has_final_norm(p, m, v)) params += h;
    if (partition_has_head(p, m, v)) params += (double)m->vocab * h / t;
  }
  return params;
}

void mem_model_states(const model *m, const layout *l, const partition *p, int stage, mem_states *out)
{
  double n = mem_stage_params(m, l, p, stage);
  int layers = 0;
  for (int c = 0; c < p->chunks; c++) {
    int first, count;
    partition_layers(p, m, partition_vstage(p, stage, c), &first, &count);
    layers += count;
  }
  out->params_bytes = BF16 * n;
  out->grads_bytes = BF16 * n; /* param.grad, accumulated over micro-batches in bf16 */
  /* fp32 master weights + exp_avg + exp_avg_sq; ZeRO-1 keeps 1/dp of them.
   * Without ZeRO the optimizer also keeps full fp32 gradients. */
  out->optimizer_bytes = l->zero1 ? 3 * FP32 * n / l->dp : 4 * FP32 * n;
  /* rotary cos/sin tables (bf16, max_seq_len x head_dim each) per attention layer */
  out->buffers_bytes = layers * 2.0 * l->seq_len * model_head_dim(m) * BF16;
}

double mem_static_bytes(const model *m, const layout *l, const partition *p, int stage)
{
  mem_states s;
  mem_model_states(m, l, p, stage, &s);
  return s.params_bytes + s.grads_bytes + s.optimizer_bytes + s.buffers_bytes;
}

double mem_bucket_transient_bytes(double bucket_elements) { return bucket_elements * (BF16 + FP32); }

double mem_adam_transient_bytes(const layout *l, double shard)
{
  /* ZeRO-1: the fp32 gradient of the owned slice; torch's foreach AdamW: one
   * fp32 temporary per parameter (the denominator sqrt(v)+eps) */
  return (l->zero1 ? FP32 * shard : 0) + FP32 * shard;
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
