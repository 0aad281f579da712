/* model -- a transformer's dimensions and architecture (the keys of a model file), and the counts
 * that follow from them alone (parameters, model FLOPs per token).
 *
 * The architecture keys say which operators a layer has (workloads/block.h turns them into the
 * table the generator, the memory model and the partition read); every one is optional, with the
 * Llama value as default, so a model file of the six dimensions means a Llama (multi-head) model.
 *
 * Owns: struct model, loading it from JSON (built-in names or a user file).
 * May not touch: layouts, hardware, the simulator.
 */
#ifndef MODEL_H
#define MODEL_H

#include <glib.h>

typedef enum { MODEL_NORM_RMSNORM, MODEL_NORM_LAYERNORM } model_norm;
typedef enum { MODEL_MLP_SWIGLU, MODEL_MLP_GELU } model_mlp;
typedef enum { MODEL_POS_ROTARY, MODEL_POS_LEARNED, MODEL_POS_ALIBI } model_positions;
/* How a mixture-of-experts layer's router scores the experts before its top-k (Mixtral, Qwen3, GPT-OSS: softmax;
 * DeepSeek-V3: sigmoid, Megatron's --moe-router-score-function). */
typedef enum { MODEL_ROUTER_SOFTMAX, MODEL_ROUTER_SIGMOID } model_router;

/* The largest layer count of a model file (and the size of the dense-layer mask). */
#define MODEL_MAX_LAYERS 1024

/* Mixture of experts (docs/model.md, "Mixture of experts"): absent (experts 0) in a dense model. Which layers are
 * MoE is model_layer_is_moe (the others have the dense MLP of width `ffn`). What expert parallelism reads: the
 * routed experts, their width and top_k (tokens per expert = T * top_k / experts when balanced), the shared
 * experts (a dense MLP every token takes, beside the routed ones), the router, and capacity. */
typedef struct model_moe {
  int experts;           /* routed experts per MoE layer; 0: a dense model */
  int top_k;             /* experts each token is routed to */
  int expert_ffn;        /* each routed expert's SwiGLU (or GeLU) inner size (HF moe_intermediate_size) */
  int shared_experts;    /* experts every token takes (DeepSeek's n_shared_experts); 0: none */
  int shared_expert_ffn; /* each shared expert's inner size (default expert_ffn) */
  guint32 dense_mask[MODEL_MAX_LAYERS / 32]; /* bit i set: layer i has the dense MLP (first_dense_layers,
                                              * moe_layer_freq or dense_layers in the file) */
  model_router router;
  double capacity_factor; /* tokens an expert takes at most, over its balanced share; 0: dropless (Megatron's
                           * default, --moe-expert-capacity-factor unset) */
} model_moe;

/* Multi-head latent attention (DeepSeek-V2/V3, docs/model.md "MLA"): kv_lora_rank 0 means none. Queries are
 * compressed to q_lora_rank (0: a direct projection), keys and values to kv_lora_rank plus a shared rotary key of
 * qk_rope_head_dim; each head's query/key is qk_nope_head_dim + qk_rope_head_dim wide, its value v_head_dim. */
typedef struct model_mla {
  int q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
} model_mla;

typedef struct model {
  char name[64];
  int layers;
  int hidden;
  int heads;
  int kv_heads;  /* key/value heads (grouped-query attention); = heads for multi-head attention */
  int ffn;       /* the MLP's inner size (SwiGLU: of each of its two input projections; GELU: 4h for GPT) */
  int vocab;
  int vocab_unpadded; /* the tokenizer's vocabulary where the stack's code padded it to `vocab` (sim_request_prepare);
                       * 0: not padded */
  model_norm norm;
  model_mlp mlp;
  model_positions positions;
  int max_positions;        /* learned positions: rows of the position table (else unused, 0) */
  gboolean bias;            /* biases in the attention and MLP linear layers (GPT) */
  gboolean qkv_bias;        /* a bias on the QKV projection only (Qwen2); implied by bias */
  int attention_window;     /* sliding-window attention's window in tokens (Mistral 7B: 4096); 0: full causal.
                             * Exact only while seq_len <= window (then the window never cuts): a longer
                             * sequence is refused (sim_request_prepare) */
  gboolean tied_embeddings; /* the output head is the input embedding (GPT, BLOOM); FALSE: untied (Llama) */
  gboolean embedding_norm;  /* a norm right after the embedding (BLOOM's word_embeddings_layernorm) */
  double dropout;           /* attention and hidden dropout probability (0: none, Llama's) */
  int head_dim;             /* each head's width where it is not hidden / heads (Qwen3, GPT-OSS); 0: hidden / heads.
                             * Queries are heads x head_dim wide, keys and values kv_heads x head_dim */
  gboolean qk_norm;         /* a per-head RMSNorm of queries and keys after their projection (Qwen3) */
  int window_every;         /* attention_window on every layer (0) or on every other one from layer 0 (2: GPT-OSS's
                             * alternating sliding and full layers) */
  model_moe moe;
  model_mla mla;
  int mtp_layers;           /* multi-token prediction modules after the last layer (DeepSeek-V3: 1), each a
                             * projection of [norm(h); norm(embedding)] 2h -> h and one transformer layer like the
                             * last, sharing the embedding and the output head; 0: none */
} model;

/* The largest vocabulary a model may have, from a model file, --vocab or a table's vocab column:
 * far above any model (Llama: 32000 to 128256), low enough that no product with the other
 * dimensions overflows. */
#define MODEL_MAX_VOCAB (1 << 24)

/* The Llama architecture (every optional key at its default) with the given dimensions. */
model model_llama(const char *name, int layers, int hidden, int heads, int ffn, int vocab);

/* The names users type that stand for a built-in model ("llama3.1-70b": llama3-70b), as one line (static). */
const char *model_alias_names(void);
/* Whether `name` is a built-in model ("llama-13b", ...), an alias of one, in any case. */
gboolean model_is_builtin(const char *name);
/* Load a built-in model from the shipped JSON files; an unknown name is an error listing the
 * built-in ones. */
gboolean model_load_named(const char *name, model *out, GError **err);
/* Load a model from a user JSON file with the same keys, or from a HuggingFace config.json (recognised by its
 * "architectures" or "model_type" key: workloads/hf_config.h). */
gboolean model_load_file(const char *path, model *out, GError **err);
/* Comma-separated list of built-in names (static string). */
const char *model_builtin_names(void);
/* The shipped files of the built-in models, NULL-terminated (g_strfreev). */
char **model_builtin_paths(void);

int model_head_dim(const model *m);
/* Whether layer i (0-based) of a model with experts is a mixture-of-experts layer (FALSE for a dense model). */
gboolean model_layer_is_moe(const model *m, int i);
/* MoE layers among the model's layers (0 for a dense model). */
int model_moe_layers(const model *m);
gboolean model_has_experts(const model *m);
gboolean model_has_mla(const model *m);
/* Whether a simulation can run the model: FALSE with err (LSIM_ERROR_INVALID, exit 2) naming what is not modelled
 * (MLA with biases: its operators, workloads/block.c, have none). */
gboolean model_check_simulable(const model *m, GError **err);
/* Whether the model is the study's Llama block (every architecture key at its default but kv_heads). */
gboolean model_is_llama(const model *m);
/* The architecture in one line ("layernorm gelu learned bias tied ..."), for keys and reports. Caller frees. */
char *model_arch_string(const model *m);
/* Parameters of one transformer layer (workloads/block.h, block_layer_params at tp 1). */
double model_layer_params(const model *m);
/* All parameters: layers, final norm, input embedding (and positions) and output head (once when tied), and the
 * multi-token prediction modules (workloads/model_params.h model_params_total). */
double model_params(const model *m);
/* The vocabulary the training code embeds at tensor-parallel degree tp: `vocab` where tp divides it, else, with
 * pad_multiple > 0 (Megatron's --make-vocab-size-divisible-by, 128), the next multiple of pad_multiple * tp
 * (Megatron's _vocab_size_with_padding); pad_multiple 0 (a code that does not pad): `vocab`. */
int model_padded_vocab(int vocab, int tp, int pad_multiple);
/* The study's (PaLM) model FLOPs per token: 6N + 12 L H Q T, N the parameters a token activates
 * (model_params_active: all of them in a dense model) and H the attention width heads x head size. */
double model_flops_per_token(const model *m, int seq_len);

#endif
