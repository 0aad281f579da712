/* layout -- a parallelization layout: how one training step of a model is
 * spread over GPUs (data / tensor / context / pipeline / sequence parallel
 * degrees, micro-batch, checkpointing, kernels).
 *
 * Owns: struct layout, its field table (layout.c LAYOUT_FIELDS), parsing its enumerations, validating it
 * against a model.
 * May not touch: hardware, task graphs, the simulator.
 *
 * Adding a layout field (docs/options.md, "Adding a layout field"): the member here; one LAYOUT_FIELDS line
 * in layout.c (a switch, a gboolean said only when on: SWITCH or SWITCH_META with where it shows, its report
 * phrase; SWITCH_META also X(name) in graph.h GRAPH_META_SWITCHES; an enumeration: ENUM with its layout_enum, its
 * names or its registry's, aliases, case rule, sweep counts); its option in cli/option_table.c; the code that acts on
 * it. The layout string, graph meta, the report,
 * predict's columns and the enumerations' parsing iterate the table.
 */
#ifndef LAYOUT_H
#define LAYOUT_H

#include <glib.h>

#include "graph.h"
#include "model.h"
#include "pipeline_layout.h"

/* none; every layer recomputed in backward (its input kept); selective: the attention core's score-sized
 * tensors recomputed (Korthikanti et al. 2022), nothing else; mlp: the MLP sub-block recomputed (its input
 * kept), nothing else (Megatron-Core's --recompute-modules mlp) */
/* CKPT_MLA_UP_PROJ: Megatron-Core's --recompute-modules mla_up_proj (a model with MLA; docs/moe.md) */
typedef enum { CKPT_NONE, CKPT_EVERY_LAYER, CKPT_SELECTIVE, CKPT_MLP, CKPT_MLA_UP_PROJ } layout_ckpt;

typedef enum {
  ATTN_TORCH,          /* plain PyTorch attention, materializes s x s scores */
  ATTN_FUSED_SOFTMAX,  /* Megatron fused scale-mask-softmax, still materializes scores */
  ATTN_FLASH1,         /* FlashAttention 1.0.8 */
  ATTN_FLASH1_LEGACY,  /* an older FlashAttention build */
  ATTN_FLASH2,         /* FlashAttention 2 */
  ATTN_FLASH2_RMSNORM, /* the study's old name of FlashAttention 2 with the fused norm kernel (norm_kernel fused) */
  ATTN_N_KERNELS
} layout_attn;

/* The norm kernel: as the stack's code does (fused when the stack says so, or with flash2+rmsnorm: the study's
 * code fused RMSNorm only in the runs of that name), or set: the study's PyTorch RMSNorm (torch) or one fused
 * kernel (fused). */
typedef enum { NORMK_STACK, NORMK_TORCH, NORMK_FUSED, NORMK_N } layout_norm_kernel;

/* How context parallelism exchanges the sequence in attention (Megatron's --cp-comm-type, docs/context.md): p2p,
 * TransformerEngine's ring (AttnFuncWithCPAndKVP2P: the KV blocks passed around the cp group); a2a, its all-to-all
 * (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses style: q, k, v all-to-all'd from sequence to head shards, one kernel
 * over the whole sequence on heads/cp heads, its output all-to-all'd back). */
typedef enum { CP_COMM_P2P, CP_COMM_A2A, CP_COMM_N } layout_cp_comm;

/* Which part of each transformer layer is captured as a CUDA graph (Megatron-Core's --cuda-graph-scope with
 * --cuda-graph-impl transformer_engine, its CudaGraphScope: megatron/core/transformer/enums.py; docs/moe.md "CUDA
 * graph scope"): a set of these bits, 0 none (eager). The names in this order are Megatron's. FULL is the whole
 * layer (Megatron's "full", an empty list); FULL_ITERATION the whole step, which layout_validate turns into the
 * switch cuda_graph (the same graph as --cuda-graph). MAMBA is a name only: no model here has Mamba layers. */
typedef enum {
  CG_SCOPE_FULL = 1 << 0,
  CG_SCOPE_ATTN = 1 << 1,           /* TransformerLayer._forward_attention: the input norm to the residual add */
  CG_SCOPE_MLP = 1 << 2,            /* _forward_mlp of a dense layer: the pre-MLP norm, the MLP, the residual add */
  CG_SCOPE_MOE = 1 << 3,            /* _forward_mlp of an MoE layer, all of it (drop-and-pad only) */
  CG_SCOPE_MOE_ROUTER = 1 << 4,     /* an MoE layer's pre-MLP norm, router and top-k (and its shared experts) */
  CG_SCOPE_MOE_PREPROCESS = 1 << 5, /* MoELayer.preprocess: the tokens' permutation (with moe_router only) */
  CG_SCOPE_MAMBA = 1 << 6,
  CG_SCOPE_FULL_ITERATION = 1 << 7,
  CG_SCOPE_N = 8 /* names */
} layout_cg_scope;
/* The longest name of a scope: every member, '+'-joined. */
#define LAYOUT_CG_SCOPE_NAME_MAX 72
/* A scope named s: "none", or members separated by '+' (or ',', as Megatron-Core's TransformerConfig splits a
 * string); else the one line "cuda_graph_scope: unknown 'X' (allowed: ...)". */
gboolean layout_cg_scope_parse(const char *s, int *out, GError **err);
/* Its name: "none", or its members '+'-joined in Megatron's order, into buf (LAYOUT_CG_SCOPE_NAME_MAX). */
const char *layout_cg_scope_name(int scope, char *buf);

typedef struct layout {
  int gpus, tp, pp, dp; /* dp is derived: gpus / (tp * cp * pp) */
  int ep, etp;          /* expert parallelism and expert tensor parallelism (Megatron's --expert-model-parallel-size,
                         * --expert-tensor-parallel-size), folded onto the tp*cp*dp ranks of a stage (axes.h) */
  double moe_imbalance; /* max-over-mean tokens per expert (--moe-imbalance, >= 1; docs/moe.md): the slowest EP
                         * rank's expert GEMMs and the all-to-all's largest message scale with it */
  double moe_capacity_factor; /* tokens an expert takes at most over its balanced share (--moe-capacity-factor;
                               * Megatron's --moe-expert-capacity-factor): the slowest rank's load is
                               * min(moe_imbalance, it), the rest dropped; 0: the model's capacity_factor (0: dropless) */
  int cp;               /* context parallelism (Megatron's --context-parallel-size): each rank holds seq_len/cp
                         * tokens of every sequence, attention is TransformerEngine's ring (docs/model.md) */
  int cp_comm;          /* layout_cp_comm: the ring (p2p, the default) or the all-to-all (a2a) */
  gboolean sp;          /* Megatron sequence parallelism */
  int micro_batch, global_batch, seq_len;
  layout_ckpt ckpt;
  layout_attn attn;
  layout_norm_kernel norm_kernel;
  int zero;             /* ZeRO stage over dp (docs/memory.md): 0 none, 1 optimizer states (the study's), 2 and
                         * gradients, 3 and parameters (gathered per layer, FSDP) */
  gboolean overlap_grad_reduce;  /* the gradient reduction overlapped with the backward (docs/schedules.md) */
  gboolean overlap_param_gather; /* ZeRO 1/2's parameter all-gather overlapped with the next step's forward */
  gboolean cuda_graph; /* the step captured as one CUDA graph (Megatron's cuda_graph_impl full_iteration: docs/moe.md) */
  int cuda_graph_scope; /* layout_cg_scope bits: the parts of each layer captured as CUDA graphs (Transformer
                         * Engine's partial graphs, Megatron's --cuda-graph-scope; docs/moe.md); 0 none */
  gboolean overlap_moe_ep_comm;  /* MoE all-to-alls of an F&B pair beside the other pass's compute (docs/schedules.md) */
  gboolean moe_flex_dispatcher;  /* Megatron's flex token dispatcher (DeepEP, HybridEP): each token sent once per
                                  * destination NVLink domain and GPU, not once per expert (docs/moe.md) */
  gboolean fp8_param_gather;     /* FP8 primary weights (Megatron's --fp8-param-gather, Transformer Engine's
                                  * fp8_param): the linear layers' weights kept in FP8 only, no bf16 copy
                                  * (docs/precision.md) */
  int grad_accum;       /* derived: global_batch / (dp * micro_batch) */
  int schedule;         /* pipeline schedule: an id of the schedule table (schedule.h); 0 = 1f1b, the study's */
  int virtual_stages;   /* model chunks per stage (the interleaved schedule's V); 1 otherwise */
  int precision;        /* precision (precision.h): PREC_BF16 (0), the study's, or FP8 linear layers */
  char pipeline_layout[PIPELINE_LAYOUT_MAX]; /* Megatron's layout string (pipeline_layout.h): which virtual stage
                                              * holds which layers; empty: the partition method's split */
} layout;

/* The layout's fields besides the axes' degrees (axes.h holds those), declared once (layout.c LAYOUT_FIELDS) with
 * what the memory verdict makes of them, so that a cache key of what the memory depends on (analysis/pool.c) is
 * derived and a new field cannot be left out of it: tests/test_memory_key.c checks the table and the axes cover
 * every byte of struct layout but alignment padding.
 *
 * A switch (a gboolean, off by default, said only when on) also says where it shows (`shows`, LAYOUT_SHOW_* bits),
 * and every place that shows switches iterates the table instead of naming each one: so a new switch is its
 * option-table entry (cli/option_table.c), its LAYOUT_FIELDS entry, and the code that acts on it (recipe:
 * docs/options.md, "Adding a layout field"; tests/test_layout_fields.c round-trips every entry). */
typedef enum { LAYOUT_FIELD_INT, LAYOUT_FIELD_DOUBLE, LAYOUT_FIELD_TEXT } layout_field_type;
/* A field's tag: MEMORY, the memory verdict depends on it; DERIVED, layout_validate computes it from the others. */
typedef enum { LAYOUT_KEY_MEMORY = 1, LAYOUT_KEY_DERIVED } layout_key_tag;
/* Where a switch shows when on (nothing is said of it when off): */
enum {
  LAYOUT_SHOW_STRING = 1 << 0, /* " NAME=1" at the end of the graph's layout string (generate.c set_meta) */
  LAYOUT_SHOW_REPORT = 1 << 1, /* "NAME": true in the report's layout JSON, ", TEXT" in its text summary (report.c) */
  LAYOUT_SHOW_COLUMN = 1 << 2, /* an optional 0/1 column NAME of predict's tables, empty: off (predict.c) */
  LAYOUT_SHOW_META = 1 << 3,   /* the graph meta entry NAME, 1 (graph.h GRAPH_META_SWITCHES): what the replay reads */
};
/* An enumeration (a field of type INT whose values have names; value 0 its default), declared with its names once
 * (layout.c ENUM), or with its registry's (the schedules', the precisions'): its option (cli/option_table.c,
 * CLI_V_ENUM without .parse) and a sweep's list of it, its predict column, its report key and its layout-string
 * entry are parsed and printed from here, and what a sweep without a list covers (analysis/sweep.c) read from here
 * (docs/options.md, "Adding a layout field"). */
typedef struct layout_enum_alias {
  const char *name; /* another name of value */
  int value;
  gboolean shown;   /* said in the allowed list, "VALUE'S NAME (or NAME)"; else accepted silently */
} layout_enum_alias;
#define LAYOUT_SWEEP_ALL (-1)
typedef struct layout_enum {
  const char *key;          /* its name outside: the predict column, the report's JSON key, the layout string's */
  const char *const *names; /* value i's name, i < n; 0 the default; NULL where a registry owns the names: */
  int n;
  int (*count)(void);               /* the registry's number of values (names NULL), e.g. sched_count */
  const char *(*name_of)(int v);    /* and value v's name, e.g. sched_name (workloads/sched_*.c) */
  unsigned shows;           /* LAYOUT_SHOW_STRING: " KEY=NAME" after cp in the layout string when said and not 0;
                             * LAYOUT_SHOW_REPORT: "KEY": "NAME" after cp in the report's layout JSON when said;
                             * LAYOUT_SHOW_COLUMN: an optional predict column KEY, empty: 0 */
  gboolean (*said)(const struct layout *l); /* whether it means anything in l (NULL: always) */
  gboolean any_case;                /* names accepted in any case (1F1B, FULL) */
  const layout_enum_alias *aliases; /* other names, ended by {NULL}; NULL: none */
  int sweep_default, sweep_full;    /* a sweep without a list of it covers values 0..N-1 by default and with --space
                                     * full; LAYOUT_SWEEP_ALL every value; 0 not said here (no sweep axis, or
                                     * analysis/sweep.c's own rule: the profile's kernels) */
} layout_enum;
typedef struct layout_field {
  const char *name;
  gsize offset, size;
  layout_field_type type; /* INT: an int, a gboolean or an enumeration */
  layout_key_tag tag;
  unsigned shows;         /* a switch: LAYOUT_SHOW_* bits; 0 for the others (each shown by its own code) */
  const char *text;       /* LAYOUT_SHOW_REPORT: the text summary's phrase when on */
  gsize meta_offset;      /* LAYOUT_SHOW_META: of its int in graph_meta */
  const layout_enum *en;  /* an enumeration: its names and where it shows; NULL for the others */
} layout_field;
const layout_field *layout_fields(gsize *n);
/* The layout's part of a memory verdict's cache key: every non-derived axis' degree and every field tagged
 * MEMORY, named, appended to out. */
void layout_memory_key(const layout *l, GString *out);
/* Whether switch f (a field with `shows` bits) is on in l. */
gboolean layout_switch_on(const layout *l, const layout_field *f);
/* The enumeration whose key (layout_enum) or member name is key, NULL when none; the field at offset, NULL when none. */
const layout_field *layout_enum_field(const char *key);
const layout_field *layout_field_at(gsize offset);
/* An enumeration's value named s; else an error "KEY: unknown 's' (allowed: its names)". */
gboolean layout_enum_parse(const layout_field *f, const char *s, int *out, GError **err);
/* Its names as the error lists them, separated by ", ", each shown alias after its value's: "none, every_layer (or
 * full), ..." (g_free it). */
char *layout_enum_allowed(const layout_field *f);
/* Its number of values (its names' or its registry's), its value in l, and value v's name ("?" out of range). */
int layout_enum_count(const layout_field *f);
int layout_enum_value(const layout *l, const layout_field *f);
const char *layout_enum_name(const layout_field *f, int v);
/* How many of its values, 0..N-1, a sweep without a list of it covers (layout_enum sweep_default, sweep_full). */
int layout_enum_sweep_count(const layout_field *f, gboolean full);
/* Whether it means anything in l (layout_enum.said). */
gboolean layout_enum_said(const layout *l, const layout_field *f);
/* The enumerations' layout-string entries (LAYOUT_SHOW_STRING), " KEY=NAME" each, appended to out. */
void layout_enums_string(const layout *l, GString *out);

/* Highest ZeRO stage. */
#define LAYOUT_MAX_ZERO 3

/* The built-in default: 64 GPUs, tp1 pp1 mb1, 2k, global batch 2048, flash2+rmsnorm, 1F1B, ZeRO-1. */
layout layout_default(void);

/* The names of the enumerations' values (their LAYOUT_FIELDS entries: layout_enum_name). */
const char *layout_attn_name(layout_attn a);
const char *layout_ckpt_name(layout_ckpt c);
gboolean layout_attn_is_flash(layout_attn a);
/* The efficiency class of the kernel (graph.h GRAPH_ATTN_*): what its attention events name, and the stack prices. */
int layout_attn_class(layout_attn a);
/* Whether attention runs the all-to-all context parallelism (cp > 1 and cp_comm a2a). */
gboolean layout_cp_a2a(const layout *l);
const char *layout_norm_kernel_name(layout_norm_kernel k);
/* Whether the norms run as one fused kernel, for a stack whose code fuses them (stack_fused) or not. */
gboolean layout_norm_fused(const layout *l, gboolean stack_fused);

/* Most micro-batches per step a layout may have: the task graph grows linearly with them (about 0.1 MB
 * each for a 40-layer stage, some 1.5 KB per layer), and the study's layouts need at most 2048. Within it, what
 * a run would take in memory is bounded by analysis/footprint.h. */
#define LAYOUT_MAX_MICRO_BATCHES 8192
/* Most GPUs a layout may use: one simulated rank each, so the graph's limit. */
#define LAYOUT_MAX_GPUS GRAPH_MAX_RANKS
/* Most tokens in one micro-batch (micro_batch * seq_len): GEMM shapes are 32-bit, and 2^24 tokens is
 * far above anything that fits in a GPU's memory. */
#define LAYOUT_MAX_MICRO_BATCH_TOKENS (1 << 24)

/* Tokens of one micro-batch a rank holds: micro_batch * seq_len / cp. */
double layout_tokens_per_rank(const layout *l);
/* Whether the layout runs Megatron-Core's combined 1F1B without pipelining: the MoE all-to-all overlap
 * (overlap_moe_ep_comm) with 1f1b at pp 1 (schedule.h, sched_combine_no_pipelining). */
gboolean layout_combined_1f1b(const layout *l);
/* The slowest EP rank's expert load over the balanced one (docs/moe.md, "Capacity factor"): --moe-imbalance F,
 * capped at the capacity factor c (the layout's, else the model's): min(F, c); dropless (no c): F. */
double layout_moe_load(const layout *l, const model *m);
/* Ranks that hold the same weights: the data-parallel replicas times the context-parallel ranks (Megatron's
 * dp-cp group), over which gradients are reduced and ZeRO shards. */
int layout_dp_cp(const layout *l);

/* Check the layout against the model and its schedule and fill the derived fields (dp, grad_accum). */
gboolean layout_validate(layout *l, const model *m, GError **err);

#endif
