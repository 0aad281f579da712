/* block -- a model's operators as data: for one transformer layer (and the embedding and head items
 * around the layers), the table of its operators in forward order, each with its cost class (GEMM
 * with its shape, attention, memory-bound pass), FLOPs, HBM bytes and kernel launches forward and
 * backward, the bytes it saves for backward and holds only while it runs, and the points where
 * tensor (and sequence) parallelism communicates; and the one parameter count.
 *
 * The generator emits a layer by walking the table forward (and backward in reverse), the memory
 * model sums it, the partition and the model states count parameters with block_*_params: one
 * description, read alike. Which operators a layer has follows from the model's architecture keys
 * (model.h) and the layout's kernels; docs/model.md and docs/memory.md derive every number.
 *
 * Numbers are per micro-batch and per rank: T = micro_batch * seq / cp tokens (context parallelism: the
 * rank's share of every sequence), t = tp, Tl = T/t under sequence parallelism (else T), h, f, V, d the
 * head size, kv the key/value heads.
 *
 * Owns: the operator tables, the parameter counts. May not touch: hardware, schedules, time.
 */
#ifndef BLOCK_H
#define BLOCK_H

#include <glib.h>

#include "layout.h"
#include "model.h"

typedef enum {
  BLOCK_GEMM,      /* count GEMMs (T x k).(k x n); backward = dgrad + wgrad */
  BLOCK_ATTENTION, /* core attention: attn_kind, heads per rank, sequence, head size; with context parallelism
                    * ring_steps kernels, between them the KV block's exchanges around the cp ring */
  BLOCK_MEMORY,    /* a memory-bound pass: bytes and launches */
  BLOCK_TP_ENTER,  /* entry of a column-parallel region: sp all-gather forward; backward the input gradient's
                    * all-reduce (bwd_reduces of them, one per GEMM) or, with sp, its reduce-scatter */
  BLOCK_TP_EXIT,   /* exit of a row-parallel GEMM: all-reduce (sp: reduce-scatter) forward; sp all-gather backward */
  BLOCK_EP_DISPATCH, /* MoE: the permuted tokens to their experts' ranks, an all-to-all over ep of bytes[0] per rank
                      * (then with etp > 1 an all-gather over etp of etp_bytes); backward the reverse (docs/moe.md) */
  BLOCK_EP_COMBINE   /* MoE: the experts' outputs back (with etp > 1 first a reduce-scatter over etp), all-to-all */
} block_kind;

/* What an operator is called, for people (the graph's op labels, in this order: generate.c registers them). */
typedef enum {
  BL_COMM, /* communication events (the graph's default label, GRAPH_OP_COMM) */
  BL_EMBED,
  BL_NORM,
  BL_QKV,
  BL_ROTARY,
  BL_ATTENTION,
  BL_ATTN_OUT,
  BL_RESIDUAL,
  BL_MLP_UP,
  BL_SWIGLU,
  BL_MLP_DOWN,
  BL_LOGITS,
  BL_LOSS,
  BL_OPTIMIZER,
  BL_BIAS,      /* a bias add after a column-parallel GEMM */
  BL_GELU,      /* GeLU (fused with its bias) */
  BL_DROPOUT,   /* dropout (the embedding's) */
  BL_POSITIONS, /* learned position embedding added */
  BL_FP8_CAST,  /* Transformer Engine's amax and cast(-transpose) of an FP8 linear layer's operands */
  BL_ROUTER,    /* MoE (docs/moe.md): the router GEMM h -> experts */
  BL_TOPK,      /* the router's score function and top-k */
  BL_PERMUTE,   /* the tokens copied top_k times, grouped by expert (Megatron's permute) */
  BL_EXPERT_UP, /* the local experts' grouped input GEMMs */
  BL_EXPERT_ACT, /* their SwiGLU (GeLU) */
  BL_EXPERT_DOWN, /* their grouped output GEMMs */
  BL_UNPERMUTE, /* the experts' outputs weighted by the router's probabilities and summed per token */
  BL_Q_DOWN,    /* MLA (docs/moe.md, "MLA"): the queries' down-projection h -> q_lora_rank, replicated over tp */
  BL_KV_DOWN,   /* the keys' and values' down-projection h -> kv_lora_rank + qk_rope_head_dim, replicated */
  BL_Q_UP,      /* q_lora_rank -> heads x (qk_nope + qk_rope), column-parallel (or h -> that without q_lora_rank) */
  BL_KV_UP,     /* kv_lora_rank -> heads x (qk_nope + v), column-parallel */
  BL_MTP_EMBED, /* multi-token prediction (docs/moe.md, "MTP"): the next tokens' embedding lookup */
  BL_MTP_PROJ,  /* its projection of [norm(hidden); norm(embedding)] 2h -> h */
  BL_N
} block_label;

/* The labels a model without experts uses (a dense model's graph lists only these ops). */
#define BL_N_DENSE BL_ROUTER

const char *block_label_name(block_label b);

typedef struct block_op {
  block_kind kind;
  block_label label;
  double n, k;              /* GEMM: output columns and reduction on the rank (rows are the T tokens) */
  int count;                /* GEMM: how many such GEMMs (kernel launches forward) */
  double elements;          /* memory pass: elements of its main tensor (for people) */
  double bytes[2];          /* memory pass, attention: HBM bytes read + written, [0] forward, [1] backward */
  int launches[2];          /* memory pass, attention: kernels, forward and backward */
  double flops;             /* attention: forward model FLOPs (backward twice); with cp, of one ring step */
  int attn_kind;            /* attention: GRAPH_ATTN_* (graph.h) */
  int attn_m, attn_n, attn_k; /* attention: micro_batch * heads / t, sequence (seq / cp: a ring step's), head size;
                               * cp a2a: micro_batch * heads / (t cp), seq */
  int ring_steps;           /* attention: kernels per pass, cp (TransformerEngine's ring attention, p2p); 1 without */
  double kv_block_bytes;    /* attention with cp: the K and V of the rank's T tokens (bf16) that travel the ring;
                             * bytes[] and launches[] are then of one ring step */
  double cp_a2a_bytes[4];   /* attention with cp a2a: q, k, v and the output of the rank's T tokens (bf16), each
                             * all-to-all'd over the cp group (forward q, k, v in and the output back; backward
                             * the output gradient in and dq, dk, dv back); 0 without */
  double saved_bytes;       /* kept from the forward (or recompute) until the backward */
  double score_bytes;       /* attention: the part of saved_bytes that is score-sized (s x s per head), which
                             * selective recomputation drops at the forward and recomputes (0 for flash) */
  gboolean mlp;             /* in the MLP sub-block, its tp entry to its exit: what mlp recomputation runs again */
  double mlp_input_bytes;   /* the part of saved_bytes that is the MLP sub-block's input (its first GEMM's), the
                             * one tensor of the sub-block mlp recomputation keeps from the forward */
  double transient_bytes[2]; /* held only while it runs, forward and backward */
  int bwd_reduces;          /* TP_ENTER: all-reduces of the input gradient in backward without sp */
  int dtype[2];             /* GEMM: its graph_dtype forward and backward (bf16 but a linear layer's under FP8) */
  double step_bytes;        /* FP8 cast: bytes of the weights' cast, once a step (the first micro-batch's forward) */
  double rows;              /* GEMM: its rows where they are not the T tokens (MoE's; 0: T) */
  double scale;             /* GEMM: its FLOPs and bytes times this (the slowest EP rank's load under --moe-imbalance,
                             * docs/moe.md; 0: 1) */
  double etp_bytes;         /* EP_DISPATCH, EP_COMBINE: what each rank gathers over etp (0: etp 1) */
  double width;             /* TP_ENTER: the width (elements per token) of the tensor gathered or reduced; 0: h
                             * (MLA gathers its latents, q_lora_rank, kv_lora_rank and the rotary key) */
  gboolean up_proj;         /* MLA: an operator of the up-projections and rotary, the function Megatron's
                             * --recompute-modules mla_up_proj checkpoints (the attention core is marked too) */
  double up_proj_bytes;     /* of saved_bytes, what mla_up_proj drops at the forward and its recompute brings back:
                             * the up-projections' normalised inputs, the attention's q, k and v (docs/moe.md) */
  gboolean captured;        /* in the layer's partial CUDA graph (the layout's cuda_graph_scope, block_layer): its
                             * kernels replay from the graph, forward and backward (docs/moe.md "CUDA graph scope") */
} block_op;

#define BLOCK_MAX_OPS 48

typedef struct block {
  block_op op[BLOCK_MAX_OPS];
  int n;
} block;

/* What a training code makes of the block (the stack's: generate.h gen_code). */
typedef struct block_code {
  gboolean fused_norm; /* every norm one fused kernel */
  int mlp_in_gemms;    /* SwiGLU's input projection as 2 GEMMs (each its own tp all-reduce backward) or 1 fused */
  int fused_softmax_batches; /* fused-softmax's availability rule (generate.h gen_code); 0: always fused */
  int fused_softmax_max_seq; /* and its longest sequence (generate.h gen_code); 0: any */
  gboolean sp_saves_shard;   /* with sp, column-parallel GEMMs save their input's sp shard (Tl x h), not T x h */
  gboolean pipe_tensors_shared; /* pipe buffers: the input is the first layer's saved tensor, the output freed once
                                 * sent (memory.h mem_pipe_buffer_bytes, mem_pipe_output_bytes) */
  gboolean fused_swiglu;     /* SwiGLU saves its input alone (Megatron's fused function; generate.h) */
  gboolean attn_out_shared;  /* bf16: the attention's output is the output projection's saved input (generate.h) */
  gboolean wgrad_in_main_grad; /* the layer's TE linears write their weight gradient into the fp32 main_grad: no
                                * bf16 weight gradient in their backward's transient (generate.h te_dummy_wgrad) */
  double vocab_parallel_loss_bytes; /* 0: the study's loss on all-gathered logits; else the vocab-parallel loss
                                     * keeping this many bytes an element of the rank's logits (generate.h) */
} block_code;

/* Whether layouts a and b, alike but for their attention kernel, make one block under their codes (emit_code_of):
 * the same norms (fused or not: the kernel may fuse them, flash2+rmsnorm, or the stack), and one attention op:
 * two FlashAttention kernels of one efficiency class (layout_attn_class: the op carries the class alone and the
 * stack's attention table prices by class), or two unfused kernels that run the same softmax (fused-softmax
 * outside its fused kernel's constraints runs torch's). Their graphs, and so their results, are then equal. */
gboolean block_same_attention(const model *m, const layout *a, const block_code *ca, const layout *b,
                              const block_code *cb);

/* One transformer layer, in forward order; its operators in the layout's cuda_graph_scope marked captured (what
 * Megatron-Core's TransformerLayer hands Transformer Engine to capture, transformer_layer.py
 * _get_submodules_under_cudagraphs: attn the input norm to the attention's residual add; mlp the pre-MLP norm, the
 * MLP and its residual add; full both). */
void block_layer(const model *m, const layout *l, const block_code *c, block *out);
/* A mixture-of-experts transformer layer (model_layer_is_moe): the attention as block_layer's, then the MoE
 * block (docs/moe.md): router, top-k, permute, all-to-all dispatch over ep, the E/ep local experts' grouped GEMMs,
 * combine, unpermute, and the shared experts as a dense MLP. Captured (cuda_graph_scope): attn as block_layer's;
 * moe the pre-MLP norm, the whole MoE block and the residual add; moe_router the pre-MLP norm, router, top-k and
 * the shared experts (Megatron computes them in the graph when not overlapped with the all-to-all, which is not
 * modelled); moe_preprocess the permutation. */
void block_moe_layer(const model *m, const layout *l, const block_code *c, block *out);
/* Routed-expert parameters of one MoE layer on a rank: experts/ep experts, each split over etp. */
double block_moe_expert_params(const model *m, const layout *l);
/* The other parameters of an MoE layer on a rank (attention, norms, router, shared experts over tp): what dp-cp
 * replicates. */
double block_moe_dense_params(const model *m, int tp);
/* Multi-token prediction, one module (docs/moe.md, "MTP"), on the stage of the output head: the next tokens'
 * embedding lookup, the norms of it and of the hidden state, the 2h -> h projection; then one transformer layer
 * (the last layer's table), then the module's final norm and the shared head's logits and loss (block_head). */
void block_mtp_entry(const model *m, const layout *l, const block_code *c, block *out);
/* The parameters of the MTP modules on a rank of the head's stage, dense (what dp-cp replicates: norms, the
 * projection over tp, its layer's dense parameters, and the embedding's copy the stage keeps unless it holds the
 * embedding) and routed-expert ones (its layer's local experts, when that layer is MoE). */
double block_mtp_dense_params(const model *m, const layout *l, gboolean has_embedding);
double block_mtp_expert_params(const model *m, const layout *l);
/* The embedding item: the lookup first (the generator puts its tp collective after it). */
void block_embedding(const model *m, const layout *l, const block_code *c, block *out);
/* The head items: [0] the final norm, [1] the logits GEMM, [2] the fp32 cross-entropy. */
void block_head(const model *m, const layout *l, const block_code *c, block *out);
/* Bytes a block's operators save for backward, summed. */
double block_saved_bytes(const block *b);

/* Parameters on one rank of tensor-parallel degree tp (tp 1: of the model): matrices and the biases of
 * column-parallel layers split over tp, the rest (norms, row-parallel biases, positions) replicated. */
double block_layer_params(const model *m, int tp);
double block_embedding_params(const model *m, int tp); /* word embedding (+ positions, + its norm) */
double block_final_norm_params(const model *m);
double block_head_params(const model *m, int tp);      /* the output projection (a copy when tied) */
/* The parameters of one layer's linear layers on a rank (its GEMMs' weights: what FP8 copies). */
double block_layer_linear_params(const model *m, int tp);
/* The same for layer i of a model with experts (i >= layers: an MTP module's layer, built like the last): an MoE
 * layer's attention linear layers, its E/ep local experts (1/etp each: TE's GroupedLinear weights) and its shared
 * experts over tp; the router is not one (it runs in bf16). A dense layer's: block_layer_linear_params. */
double block_layer_linear_params_at(const model *m, const layout *l, int i);
/* Persistent non-parameter buffers of one layer (rotary cos/sin tables), bytes. */
double block_layer_buffer_bytes(const model *m, const layout *l);

#endif
