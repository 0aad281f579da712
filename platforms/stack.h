/* stack -- a training code's software stack on a GPU type: how fast its kernels and
 * collectives run against the hardware profile's datasheet figures (efficiencies,
 * per-launch and per-step latencies), the memory it holds beside the model (CUDA
 * context, NCCL buffers, allocator fragmentation), and what it does differently in
 * the task graph (fused kernels, tensor-parallel all-reduces, gradient precision,
 * pipeline partition). Loaded from one JSON file (platforms/stacks/NAME.json;
 * docs/stacks.md documents every field); `layoutsim calibrate` fits and writes one.
 *
 * The machine is the hardware profile's (profile.h); a simulation runs a profile with
 * a stack (gpu_profile.stack).
 *
 * Owns: struct stack_profile, loading and saving it. May not touch: SimGrid, the datasheet figures.
 */
#ifndef STACK_H
#define STACK_H

#include <glib.h>

#include "workloads/generate.h"
#include "workloads/partition.h"

/* How a stack's attention kernel of one efficiency class runs (platforms/kernel_cost.c): FUSED, a FlashAttention-like
 * kernel that keeps the scores on chip and skips the causal mask's half, at `efficiency` of peak (for s, d -> inf);
 * MATERIALIZED, the scores written to HBM: two batched GEMMs at the stack's GEMM efficiency plus the passes over
 * the scores (the event's bytes); no efficiency of its own. */
typedef enum { STACK_ATTN_MATERIALIZED, STACK_ATTN_FUSED, STACK_ATTN_N_MODELS } stack_attn_model;
typedef struct stack_attention {
  int model;         /* stack_attn_model */
  double efficiency; /* FUSED: fraction of peak on its causal work, s, d -> inf; MATERIALIZED: 0 */
} stack_attention;

typedef struct stack_profile {
  char name[64];
  char comment[512];           /* free text, kept on save */
  char set[256];               /* the keys overridden since it was loaded (--stack-set, a table's stack_set cell:
                                * platforms/stack_set.h), "KEY=VALUE;..."; empty: none. Never saved. */
  /* kernels (platforms/kernel_cost.h) */
  double gemm_tile_m, gemm_tile_n; /* output tile of the GEMM library's large bf16 kernels */
  double gemm_efficiency;      /* fraction of peak a large, well-quantized GEMM reaches */
  double fp8_gemm_efficiency;  /* the same for an FP8 GEMM, of the profile's FP8 peak (docs/precision.md) */
  double gemm_k_half;          /* reduction length at which a GEMM loses half its efficiency */
  double hbm_efficiency;       /* fraction of HBM bandwidth a streaming kernel reaches */
  /* attention kernels, by the graph's efficiency class (graph.h GRAPH_ATTN_*: an attention event's variant): how
   * the code's kernel of each class runs (the JSON's "attention" table; a new kernel is an entry there) */
  stack_attention attention[GRAPH_ATTN_N];
  double attn_seq_half, attn_head_dim_half;   /* sequence length, head dim at which a fused kernel's efficiency is
                                                * halved */
  double launch_overhead_s;    /* GPU-side gap per kernel launch */
  double host_dispatch_s;      /* host (Python, PyTorch) time to issue one kernel: a kernel cannot start before
                                * the host has issued it (sim/replay.c); 0: the host is always ahead */
  double launch_blocking;      /* 0 or 1: CUDA_LAUNCH_BLOCKING=1, every launch returns to the host when its kernel or
                                * collective has ended, so the host never runs ahead (sim/replay.c) */
  /* collectives (sim/collective.c) */
  double nccl_bw_efficiency_nvlink, nccl_bw_efficiency_ib; /* achieved / link bandwidth */
  double nccl_step_latency_s;  /* per ring step, on top of link latency */
  double p2p_bw_efficiency_ib; /* achieved / link bandwidth of a pipeline send between nodes (NCCL send/recv); 0: the
                                * collectives' nccl_bw_efficiency_ib (sim/replay.c run_comm) */
  gboolean nccl_latency_tuned; /* JSON "nccl_latency": "tuned" (NCCL's own per-collective latency, tuning.cc's
                                * baseLat + hwLat per step by link type, replacing nccl_step_latency_s; docs/trust.md)
                                * or "fitted" (the default: nccl_step_latency_s per step) */
  /* the fit GPU's dense bf16 peak over its exponential rate (profile.h exp_per_s), FLOPs per exponential: what the
   * fused attention efficiency was fitted beside (kernel_cost.c); 0: no such correction */
  double attn_fit_flops_per_exp;
  /* stragglers (sim/straggler.h) */
  double straggler_sigma;      /* relative standard deviation of per-GPU speed (0, the default: off) */
  double flex_nvlink_efficiency; /* the flex dispatcher's (DeepEP, HybridEP) NVLink throughput / link bandwidth
                                  * (sim/coll_alltoall_flex.c; 0, the default: nccl_bw_efficiency_nvlink's) */
  double flex_ib_efficiency;     /* its network (RDMA) throughput / NIC bandwidth (0, the default:
                                  * nccl_bw_efficiency_ib's) */
  double flex_sms;               /* the SMs its kernels hold while they run (Megatron's moe_hybridep_num_sms), taken from
                                  * the compute an overlapped all-to-all runs beside (0, the default: none) */
  /* memory beside the model (docs/memory.md) */
  double cuda_context_gib, nccl_buffers_gib, fragmentation;
  /* the code's graph (workloads/generate.h gen_code) */
  double mlp_in_gemms;         /* 1 or 2 */
  double fused_norm;           /* 0 or 1 */
  double grad_reduce_bytes;    /* 2 or 4 */
  double fused_softmax_batches; /* 0, or the multiple micro-batch x heads/tp must be for the fused softmax to run */
  double fused_softmax_max_seq; /* the longest sequence the fused softmax takes (0: any); longer: torch's fp32 softmax */
  double sp_saves_shard;       /* 0 or 1: with sp, a column-parallel GEMM saves its sequence-parallel shard of the
                                * input and all-gathers it again in backward (Megatron, Transformer Engine) */
  double pipe_tensors_shared;  /* 0 or 1: a stage's received input is the tensor its first layer saves (no copy, no
                                * position ids) and its output is freed once sent (Megatron's
                                * deallocate_output_tensor); 0: both kept apart until the backward (the study) */
  double grad_buffer;          /* 0 or 1: gradients accumulate in a persistent buffer of grad_reduce_bytes an element,
                                * reduced in place, stepped by a fused Adam (Megatron's DDP and optimizers;
                                * docs/memory.md section 2); 0: bf16 param.grad, bucket copies, torch AdamW (the study) */
  double vocab_parallel_loss_bytes; /* 0: the study's loss on all-gathered logits; 4 or 2: Megatron's vocab-parallel
                                     * cross-entropy, keeping an fp32 softmax (4) or a fused kernel's bf16 gradient
                                     * (2) of the rank's logits shard (workloads/generate.h, docs/memory.md) */
  double fused_swiglu;         /* 0 or 1: SwiGLU one fused function saving only its input, the gate and up GEMM's
                                * output (Megatron's bias_swiglu_impl, --bias-swiglu-fusion, on by default); 0:
                                * torch's silu(gate) * up, saving gate, up and silu(gate) (the study) */
  double attn_out_shared;      /* 0 or 1: in bf16 the attention's saved output is the tensor the output projection
                                * saves as its input (Transformer Engine's attention in Megatron's sbhd layout: one
                                * storage); 0: a contiguous copy apart from it (the study's transpose) */
  double te_dummy_wgrad;       /* 0 or 1: Transformer Engine >= 2.3 with gradient-accumulation fusion hands autograd
                                * a cached empty bf16 weight gradient per distinct linear weight shape
                                * (module/base.py get_dummy_wgrad), held from the first backward on: one layer's
                                * linear weights in bf16 per rank (docs/memory.md) */
  double vocab_pad_multiple;   /* 0: the code does not pad its vocabulary (the study's asserts tp divides it); k: it
                                * pads a vocabulary tp does not divide to a multiple of k * tp (Megatron's
                                * --make-vocab-size-divisible-by, 128): workloads/model.h model_padded_vocab */
  partition_method partition;  /* how it splits layers over pipeline stages when a layout does not say */
  /* what the code runs by default (docs/stacks.md, "Defaults"): a layout's ZeRO stage and data-parallel
   * overlaps where the table or command line does not say (stack_layout_defaults) */
  double zero;                 /* 0: Megatron-LM's --use-distributed-optimizer off; 1: on (NeMo), or the study's */
  double overlap_grad_reduce, overlap_param_gather; /* 0 or 1 (Megatron-Core DDP's, NeMo's recipes: 1) */
  /* tensor-parallel communication overlapped with the adjacent GEMM (TransformerEngine's userbuffers, NeMo's
   * tp_comm_overlap; with sp only): 0 or 1, and the fraction of the SMs an overlapped reduce-scatter takes from
   * the GEMM beside it (workloads/tp_overlap.c, platforms/kernel_cost.c) */
  double tp_comm_overlap, tp_overlap_sm_fraction;
  /* bytes per parameter of the code's gradient accumulation pass after each backward, outside the GEMM (0: none;
   * 18: DeepSpeed's BF16_Optimizer; workloads/generate.h gen_code, docs/trust.md "BLOOM's step") */
  double grad_accum_bytes;
  /* 0 or 1: without sp, pipeline tensors sent 1/tp per tensor-parallel rank and all-gathered over tp by the receiver
   * (workloads/generate.h gen_code, docs/trust.md "BLOOM's step") */
  double pipe_scatter_gather;
  /* Megatron-LM's asynchronous tensor-parallel communication in a column-parallel GEMM's backward
   * (LinearWithGradAccumulationAndAsyncCommunication, --async-tensor-model-parallel-allreduce, on by default
   * since 2021): the input gradient's all-reduce (sp: reduce-scatter) beside the weight-gradient GEMM, with sp the
   * saved input shard's all-gather beside the input-gradient GEMM; 0 or 1 (workloads/tp_overlap.c) */
  double tp_async_grad_reduce;
} stack_profile;

/* The bits of stack_layout_defaults' `given`: what the table or command line said itself. */
#define STACK_GIVEN_ZERO 1u
#define STACK_GIVEN_OVERLAP_GRAD_REDUCE 2u
#define STACK_GIVEN_OVERLAP_PARAM_GATHER 4u

/* The stack every command runs unless told otherwise. */
#define STACK_DEFAULT "study"

/* The bits of a stack key's tags (plat_field.tags): STACK_KEY_MEMORY, the memory verdict depends on it
 * (analysis/pool.c's memory key, stack_memory_key); STACK_KEY_NOT_MEMORY, it moves only times (kernels, links, the
 * host), or reaches the memory through the layout (the zero and overlap defaults, stack_layout_defaults, and the
 * partition, through the request's). Every key of the table has exactly one of the two. */
#define STACK_KEY_MEMORY 1u
#define STACK_KEY_NOT_MEMORY 2u

gboolean stack_load_file(const char *path, stack_profile *out, GError **err);
gboolean stack_load_named(const char *name, stack_profile *out, GError **err);
/* The file a --stack value names: itself if it looks like a path (a '/' or ".json"), else the shipped
 * stack of that name (which may not exist). Caller frees. */
char *stack_path(const char *name);
/* Written as the shipped files are: every key without a default, and those with one where they differ from it. */
gboolean stack_save(const stack_profile *s, const char *path, GError **err);
/* The effective stack, every key with its value (defaults included), as JSON text (`layoutsim stack NAME`). Caller
 * frees. */
char *stack_show(const stack_profile *s);
/* The stack's part of a memory verdict's cache key: every key tagged STACK_KEY_MEMORY, with its name, appended to
 * out (analysis/pool.c). */
void stack_memory_key(const stack_profile *s, GString *out);
/* The numeric key table (for tests, and stack_set.c's overrides): its entries and their count. */
const struct plat_field *stack_key_table(size_t *n);
/* The values a key may take where its range holds some that mean nothing ("2, 4" for grad_reduce_bytes, a
 * precision), as a file's load checks them; NULL where every value of its range is allowed. */
const char *stack_key_values(const char *key);
/* What the generator does for this stack. */
gen_code stack_gen_code(const stack_profile *s);
/* The attention kernels of a sweep's default space under this stack (bit 1u << layout_attn), where the profile
 * names none (gpu_profile.sweep_kernels 0): the kernels of the fused class its attention table prices most
 * efficient (flash2 and flash2+rmsnorm in every shipped stack). The other kernels are dominated there: a fused
 * class of lower efficiency is slower at every sequence and head size (one attn_seq_half, attn_head_dim_half for
 * all) with the same memory (a flash kernel keeps no scores), an unfused one slower and larger. Every kernel
 * where the table prices no class fused. */
guint stack_sweep_kernels(const stack_profile *s);
/* A layout's ZeRO stage and overlaps as the stack's code runs them where `given` (STACK_GIVEN_* bits) does not
 * say: the stack's zero, overlap_grad_reduce, and overlap_param_gather where the ZeRO stage has a parameter
 * all-gather to overlap (1 or 2). */
void stack_layout_defaults(const stack_profile *s, layout *l, unsigned given);

#endif
