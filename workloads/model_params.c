/* model_params -- see model_params.h. */
#include "model_params.h"

#include "block.h"
#include "memory.h"

static double norm_params(const model *m) { return m->norm == MODEL_NORM_LAYERNORM ? 2.0 * m->hidden : m->hidden; }

double model_attention_params(const model *m)
{
  double h = m->hidden, heads = m->heads;
  if (model_has_mla(m)) {
    const model_mla *a = &m->mla;
    double qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
    double q = a->q_lora_rank ? h * a->q_lora_rank + a->q_lora_rank + a->q_lora_rank * heads * qk /* down, norm, up */
                              : h * heads * qk;
    double kv = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank /* down with the rotary key, norm */
                + a->kv_lora_rank * heads * (a->qk_nope_head_dim + a->v_head_dim); /* up to every head's k and v */
    double o = heads * a->v_head_dim * h;
    double bias = m->bias ? (a->q_lora_rank ? a->q_lora_rank + heads * qk : heads * qk) + a->kv_lora_rank +
                                a->qk_rope_head_dim + heads * (a->qk_nope_head_dim + a->v_head_dim) + h
                          : 0;
    return q + kv + o + bias;
  }
  double d = model_head_dim(m), qd = heads * d, kvd = m->kv_heads * d;
  double params = h * (qd + 2 * kvd) + qd * h;
  if (m->bias) params += qd + 2 * kvd + h;
  else if (m->qkv_bias) params += qd + 2 * kvd;
  if (m->qk_norm) params += 2 * d;
  return params;
}

double model_mlp_params(const model *m, int ffn)
{
  double h = m->hidden, f = ffn;
  gboolean gelu = m->mlp == MODEL_MLP_GELU;
  return (gelu ? 2.0 : 3.0) * h * f + (m->bias ? (gelu ? f : 2 * f) + h : 0);
}

double model_router_params(const model *m)
{
  return (double)m->hidden * m->moe.experts + (m->bias ? m->moe.experts : 0);
}

double model_layer_params_at(const model *m, int i, gboolean active)
{
  int last = i >= m->layers ? m->layers - 1 : i;
  double params = 2 * norm_params(m) + model_attention_params(m);
  if (!model_layer_is_moe(m, last)) return params + model_mlp_params(m, m->ffn);
  const model_moe *e = &m->moe;
  return params + model_router_params(m) + (active ? e->top_k : e->experts) * model_mlp_params(m, e->expert_ffn) +
         e->shared_experts * model_mlp_params(m, e->shared_expert_ffn);
}

double model_mtp_params(const model *m, gboolean active)
{
  double h = m->hidden;
  return m->mtp_layers * (2 * norm_params(m) + 2 * h * h + model_layer_params_at(m, m->layers, active) + norm_params(m));
}

double model_input_embedding_params(const model *m) { return block_embedding_params(m, 1); }

/* The dense models without MLA or MTP as they were always counted (block.h), bit for bit. */
static gboolean plain(const model *m) { return !model_has_experts(m) && !model_has_mla(m) && !m->mtp_layers; }

static double counted(const model *m, gboolean active)
{
  double outer = block_final_norm_params(m) + block_embedding_params(m, 1) + (m->tied_embeddings ? 0 : block_head_params(m, 1));
  if (plain(m)) return m->layers * block_layer_params(m, 1) + outer;
  double layers = 0;
  for (int i = 0; i < m->layers; i++) layers += model_layer_params_at(m, i, active);
  return layers + outer + model_mtp_params(m, active);
}

double model_params_total(const model *m) { return counted(m, FALSE); }
double model_params_active(const model *m) { return counted(m, TRUE); }

double model_params_per_gpu(const model *m, const layout *l, partition_method method)
{
  partition p;
  if (!partition_make_for(&p, m, l, method, NULL)) return -1;
  double most = 0;
  for (int s = 0; s < l->pp; s++) /* a model with experts: its routed experts too (mem_stage_params leaves them out) */
    most = MAX(most, mem_stage_params(m, l, &p, s) + (model_has_experts(m) ? mem_stage_expert_params(m, l, &p, s) : 0));
  partition_clear(&p);
  return most;
}
