/* generate -- the task graph generator: model + layout -> one training step
 * as per-rank programs (graph.h), following the study's code
 * (Aleph-Alpha/scaling): its 1F1B schedule or another of the table (schedule.h), stage partition
 * (partition.h), Megatron tensor parallelism (2 all-reduces per layer
 * forward, 3 backward, or 2 with the MLP input GEMMs fused (gen_code);
 * with sp 2 all-gathers + 2 reduce-scatters each way),
 * vocab-parallel embedding, LM head whose logits are all-gathered and whose
 * fp32 cross-entropy runs on every tp rank, and at the end of the step the
 * optimizer: fp32 gradient all-reduce over dp in 500M-element buckets, grad
 * norm all-reduces over tp and pp, AdamW on the (ZeRO-1) shard, all-gather
 * of the updated bf16 parameters. docs/model.md explains every term.
 *
 * Owns: turning a (model, layout) into events. May not touch: hardware, time.
 */
#ifndef GENERATE_H
#define GENERATE_H

#include <glib.h>

#include "graph.h"
#include "layout.h"
#include "model.h"
#include "partition.h"

/* What a training code does that shows in the task graph, where codes differ (a software stack's: the stack
 * profile sets it, platforms/stack.h; docs/stacks.md). The defaults are the study's code. */
typedef struct gen_code {
  int mlp_in_gemms;         /* the MLP's column-parallel input projection as 2 GEMMs (the study's w1 and w3 apart,
                             * each with its own tensor-parallel all-reduce of the input gradient in backward: 3
                             * per layer) or 1 (Megatron's fused [w1; w3] or h -> 4h: 2 per layer) */
  gboolean fused_norm;      /* every norm one fused kernel (Megatron's); FALSE: only with flash2+rmsnorm (the study) */
  double grad_reduce_bytes; /* bytes per gradient element of the data-parallel all-reduce: 4 (the study casts the
                             * bf16 gradients to fp32 first) or 2 (DeepSpeed's fp16 engine reduces them as they are) */
  int fused_softmax_batches; /* fused-softmax: 0, always the fused kernel (the study); k > 0, Megatron's constraint:
                              * the fused kernel runs only where micro-batch x heads/tp is a multiple of k and
                              * 16 < seq_len <= 2048, seq_len a multiple of 4; elsewhere torch's softmax */
  int fused_softmax_max_seq; /* fused-softmax: the longest sequence its kernel takes, longer ones falling back to
                              * torch's fp32 softmax (Megatron's FusedScaleMaskSoftmax.is_kernel_available: 16 < sk
                              * <= 4096, the study's code's kernel; docs/memory.md section 3); 0: no bound */
  gboolean sp_saves_shard;  /* with sp, column-parallel GEMMs save the sequence-parallel shard of their input, not
                             * the all-gathered one (Megatron, Transformer Engine; docs/memory.md); FALSE: the study */
  gboolean pipe_tensors_shared; /* the received stage input is what its first layer saves, and the stage output is
                                 * freed once sent (Megatron's deallocate_output_tensor; docs/memory.md section 5) */
  gboolean grad_buffer;     /* Megatron's DDP: gradients accumulate in one persistent buffer of grad_reduce_bytes an
                             * element (--accumulate-allreduce-grads-in-fp32 / grad_reduce_in_fp32: 4), reduced in place;
                             * the optimizer a fused Adam with no temporaries, whose fp32 gradients are that buffer
                             * (4) or a copy of the owned ones made at the step (2). FALSE: the study's bf16
                             * param.grad, bucket copies cast for the reduction, torch's AdamW (docs/memory.md) */
  double vocab_parallel_loss_bytes; /* 0: the study's head: logits all-gathered over tp, fp32 cross-entropy on all of
                                     * them on every rank. Else Megatron's vocab-parallel cross-entropy: each rank's
                                     * logits shard stays where it is (3 all-reduces of a number per token) and the
                                     * loss keeps this many bytes per element of it for the backward: 4, the fp32
                                     * softmax (logits.float(), tensor_parallel/cross_entropy.py); 2, a fused kernel's
                                     * bf16 gradient written over the logits (--cross-entropy-loss-fusion) */
  gboolean fused_swiglu;    /* SwiGLU saves only its input (Megatron's bias_swiglu_impl); FALSE: torch's, gate, up and
                             * silu(gate) (platforms/stack.h fused_swiglu) */
  gboolean attn_out_shared; /* in bf16 the attention's output and the output projection's saved input are one tensor
                             * (Transformer Engine in Megatron; stack.h attn_out_shared) */
  gboolean te_dummy_wgrad;  /* Transformer Engine's cached dummy weight gradients: one layer's linear weights in bf16
                             * per rank, persistent (stack.h te_dummy_wgrad; workloads/memory.c) */
  gboolean tp_comm_overlap; /* with sp: each tensor-parallel all-gather and reduce-scatter beside its GEMM, on a
                             * stream of its own (TransformerEngine's userbuffers; workloads/tp_overlap.h) */
  double grad_accum_bytes;  /* HBM bytes per parameter of a pass's gradient accumulation outside the GEMM, once per
                             * backward (stage_driver.c grad_accum_pass): 0, none (Megatron's fused accumulation, the
                             * study); 18, DeepSpeed's BF16_Optimizer (cast to fp32, then add: 2 + 4 + 4 + 4 + 4) */
  gboolean pipe_scatter_gather; /* without sp at tp > 1, each tensor-parallel rank sends 1/tp of a pipeline tensor and
                                 * the receiver all-gathers it over tp (Megatron-LM 2021's
                                 * --scatter-gather-tensors-in-pipeline, DeepSpeed's PartitionedTensor); FALSE: every
                                 * tp rank sends all of it (the study) */
  gboolean tp_async_grad_reduce; /* Megatron's column-parallel backward: the input gradient's all-reduce (sp:
                                  * reduce-scatter) beside the weight-gradient GEMM, with sp the saved shard's
                                  * all-gather beside the input-gradient GEMM (workloads/tp_overlap.c) */
} gen_code;

gen_code gen_default_code(void);

typedef struct gen_options {
  partition_method partition;
  gen_code code;         /* the training code's graph shape */
  gboolean symmetry;     /* emit one explicit program per stage and mirrors for the rest */
  int gpus_per_node;     /* for the rank -> node placement recorded in the graph meta */
  gboolean mirrors_active_in_step; /* mirrors run the optimizer step themselves (off: they stay mirrors
                                    * to the end, and their collectives are their source's by symmetry) */
} gen_options;

gen_options gen_default_options(void);

/* Whether the mirrors of a graph run the optimizer step themselves: as the options say (any layout may be
 * mirrored, cp > 1 with ZeRO-2/3 and the overlaps included: the replay's passive members are every mirror
 * before its active part, whichever explicit program it mirrors; docs/sweep.md). */
gboolean gen_mirrors_active_in_step(const gen_options *o, const layout *l);

/* Rank of coordinates (stage, data-parallel, context-parallel, tensor-parallel index): Megatron's order, tp
 * fastest, then cp, dp, pp. gen_rank: of context-parallel index 0. */
int gen_rank_cp(const layout *l, int stage, int dpi, int cpi, int tpi);
int gen_rank(const layout *l, int stage, int dpi, int tpi);

graph *gen_graph(const model *m, const layout *l, const gen_options *o, GError **err);

/* How many events gen_graph writes into the program of a rank of `stage` (exactly; every rank of a
 * stage has as many), counted without writing them: doubles, since a model file's gradient buckets
 * may outnumber an int. The layout must be validated (grad_accum set). */
typedef struct gen_stage_size {
  double events;             /* the whole program */
  double micro_batch_events; /* per micro-batch: its forward, backward (and recompute), sends and receives */
  double step_events;        /* once per step: gradient reduction and optimizer */
  double bucket_events;      /* of step_events, the gradient buckets' (3 each) and the parameter all-gathers' */
} gen_stage_size;
void gen_stage_events(const model *m, const layout *l, const gen_code *code, const partition *part, int stage,
                      gen_stage_size *out);

#endif
