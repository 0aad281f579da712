/* model_params -- how many parameters a model has, in all, per token (a mixture of experts activates top_k of
 * its routed experts) and on one GPU of a layout: what every output prints so that a model's translation (a
 * HuggingFace config, --vocab, the stack's vocabulary padding) can be checked against its published count.
 *
 * Every count is at tensor-parallel degree 1. A dense layer without MLA is workloads/block.h's
 * block_layer_params (tests/test_model.c checks this file's parts add up to it); the mixture-of-experts and
 * MLA layers are counted here (docs/model.md, "Mixture of experts" and "MLA", derives each term).
 *
 * Owns: the total, active and per-GPU counts. May not touch: hardware.
 */
#ifndef MODEL_PARAMS_H
#define MODEL_PARAMS_H

#include <glib.h>

#include "layout.h"
#include "model.h"
#include "partition.h"

/* One layer's attention: its projections (standard: q of heads x head size, k and v of kv_heads x head size, the
 * output projection; MLA: the down and up projections of queries and of keys and values, the shared rotary key,
 * the output projection from heads x v_head_dim), their biases, and the norms inside it (qk_norm's two of
 * head_dim; MLA's latent norms of q_lora_rank and kv_lora_rank). Not the layer's input norm. */
double model_attention_params(const model *m);
/* One MLP (a dense layer's, an expert, or a shared expert) of inner width ffn: SwiGLU 3 h ffn, GeLU 2 h ffn,
 * with biases (bias) on its input and output projections. */
double model_mlp_params(const model *m, int ffn);
/* The router of an MoE layer: h x experts (and a bias of experts with bias, GPT-OSS). */
double model_router_params(const model *m);
/* Layer i's parameters (0-based; i >= layers: the transformer layer of a multi-token prediction module, built like
 * the last layer): two norms, attention, and the dense MLP or the router, the routed and the shared experts;
 * active: top_k routed experts instead of all. */
double model_layer_params_at(const model *m, int i, gboolean active);
/* The multi-token prediction modules (mtp_layers of them): each two norms of h, the 2h -> h projection, a
 * transformer layer and its output norm; the embedding and the head are shared with the model (not counted). */
double model_mtp_params(const model *m, gboolean active);
/* Every parameter, counted once: layers, final norm, input embedding (with positions and its norm), output head
 * (not when tied) and the multi-token prediction modules. model_params (model.h) is this. */
double model_params_total(const model *m);
/* The parameters one token's forward uses: model_params_total with top_k of the routed experts of each MoE layer
 * (equal to the total for a dense model). The input embedding is counted (a token reads its row): published
 * counts that leave it out (DeepSeek-V3's 36.6B, GPT-OSS's 5.13B) are this minus model_input_embedding_params. */
double model_params_active(const model *m);
/* The input embedding's parameters (vocab x hidden, and learned positions and the embedding norm). */
double model_input_embedding_params(const model *m);

/* Parameters of one GPU of the stage holding the most: its layers' matrices split over tp, norms replicated,
 * the embedding and head where the partition puts them (workloads/memory.h mem_stage_params), and a model with
 * experts' routed experts, experts/ep of them each split over etp (mem_stage_expert_params). ZeRO-3 shards
 * these further over dp x cp; the count is the model-parallel shard, before it. -1 where the partition fails. */
double model_params_per_gpu(const model *m, const layout *l, partition_method method);

#endif
