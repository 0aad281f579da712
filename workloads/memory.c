/* memory -- see memory.h. Per layer and micro-batch, with T tokens, t = tp,
 * Tl = T/t with sequence parallelism else T, a = heads, s = seq:
 *   each RMSNorm  : fused 2*Tl*h (its input); torch 6*Tl*h (fp32 x, bf16 out)
 *   QKV input     : 2*T*h (the gathered norm output, replicated over tp)
 *   attention     : flash: q,k,v,o 8*T*h/t + fp32 log-sum-exp 4*T*a/t;
 *                   unfused: q,k,v 6*T*h/t + probabilities 2*b*a*s^2/t
 *                   (+ scores 2*b*a*s^2/t for plain torch) + out-proj input 2*T*h/t
 *   MLP           : up/gate input 2*T*h, SwiGLU 6*T*f/t (gate, silu, up),
 *                   down input 2*T*f/t
 *   head          : final-norm as above, logits input 2*T*h, fp32 log-probs 4*T*V
 */
#include "memory.h"

#define BF16 2.0
#define FP32 4.0

void mem_ctx_init(mem_ctx *c, const model *m, const layout *l)
{
  c->m = m;
  c->l = l;
  c->T = (double)l->micro_batch * l->seq_len;
  c->Tl = l->sp ? c->T / l->tp : c->T;
}

double mem_saved_bytes(const mem_ctx *c, graph_op op)
{
  const model *m = c->m;
  const layout *l = c->l;
  double h = m->hidden, f = m->ffn, t = l->tp, T = c->T;
  double scores = (double)l->micro_batch * m->heads / t * l->seq_len * l->seq_len;
  switch (op) {
  case OP_NORM: return c->Tl * h * (layout_attn_fused_norm(l->attn) ? BF16 : BF16 + FP32);
  case OP_QKV: return T * h * BF16;
  case OP_ATTENTION:
    if (layout_attn_is_flash(l->attn)) return 4 * T * h / t * BF16 + T * m->heads / t * FP32;
    return 3 * T * h / t * BF16 + scores * (l->attn == ATTN_TORCH ? 2 * BF16 : BF16);
  case OP_ATTN_OUT: return layout_attn_is_flash(l->attn) ? 0 : T * h / t * BF16; /* flash already saved o */
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

double mem_stage_params(const model *m, const layout *l, const partition *p, int stage)
{
  double h = m->hidden, t = l->tp;
  int first, count;
  partition_layers(p, m, stage, &first, &count);
  double params = count * ((4.0 * h * h + 3.0 * h * m->ffn) / t + 2.0 * h);
  if (partition_has_embedding(p, stage)) params += (double)m->vocab * h / t;
  if (partition_has_final_norm(p, m, stage)) params += h;
  if (partition_has_head(p, m, stage)) params += (double)m->vocab * h / t;
  return params;
}

double mem_static_bytes(const model *m, const layout *l, const partition *p, int stage)
{
  double n = mem_stage_params(m, l, p, stage);
  double states = 3 * FP32 * n; /* fp32 master weights, AdamW exp_avg and exp_avg_sq */
  return n * (BF16 + BF16) + (l->zero1 ? states / l->dp : states + FP32 * n);
}
