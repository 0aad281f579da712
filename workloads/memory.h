/* memory -- the bytes a rank holds, as the study's code (Aleph-Alpha/scaling,
 * PyTorch autograd, bf16) allocates them; docs/memory.md derives every term.
 *
 *  - model states for the whole step: bf16 weights, bf16 gradients, fp32
 *    master weights and AdamW moments (sharded over dp with ZeRO-1);
 *  - activations each operator saves for its backward pass and the
 *    transients it holds while it runs: the block's table (block.h), summed
 *    here for a layer;
 *  - the optimizer step's transients (the fp32 all-reduce bucket, AdamW's);
 *  - pipeline buffers per micro-batch in flight.
 *
 * The generator attaches these numbers to the events of the task graph
 * (mem_delta_bytes, mem_transient_bytes), so the memory timeline is read from
 * the same graph the replay runs; mem_walk_* reads it back.
 *
 * Owns: mem_ctx, the byte formulas, the memory walk over a program.
 * May not touch: hardware overheads (CUDA context, NCCL buffers,
 * fragmentation live in platforms/profile), time.
 */
#ifndef MEMORY_H
#define MEMORY_H

#include "block.h"
#include "generate.h"
#include "graph.h"
#include "layout.h"
#include "model.h"
#include "partition.h"

typedef struct mem_ctx {
  const model *m;
  const layout *l;
  double T;  /* tokens per micro-batch */
  double Tl; /* tokens in the sequence-parallel region (T/tp with sp) */
  block_code code; /* the training code's block (the study's by default: mem_ctx_init) */
} mem_ctx;

void mem_ctx_init(mem_ctx *c, const model *m, const layout *l);

/* Bytes one transformer layer saves (the sum over its table, block.h). */
double mem_layer_bytes(const mem_ctx *c);
/* Bytes kept per layer under every-layer checkpointing: the layer's input. */
double mem_checkpoint_bytes(const mem_ctx *c);
/* One stage-boundary activation tuple (bf16 activations + int64 position ids), or its gradient. */
double mem_pipe_buffer_bytes(const mem_ctx *c, gboolean gradient);
/* What a stage keeps of its output from its send to the backward: the tensor, or nothing where the code frees it
 * once sent (block_code pipe_tensors_shared). */
double mem_pipe_output_bytes(const mem_ctx *c);

/* Model states of one rank of `stage`. */
typedef struct mem_states {
  double params_bytes, grads_bytes, optimizer_bytes, buffers_bytes;
} mem_states;

/* Parameters held by one rank of `stage` (matrices split over tp, norms replicated). */
double mem_stage_params(const model *m, const layout *l, const partition *p, int stage);
/* Of a model with experts: a layer's parameters dp-cp replicates (an MoE layer's all but its routed experts), and
 * the routed experts' parameters a rank of the stage holds (docs/moe.md; mem_stage_params leaves them out). */
double mem_layer_dense_params(const model *m, const layout *l, int i);
double mem_stage_expert_params(const model *m, const layout *l, const partition *p, int stage);
double mem_chunk_expert_params(const model *m, const layout *l, const partition *p, int v); /* of virtual stage v */
/* The linear layers' parameters of virtual stage v a rank holds and dp-cp replicates (the routed experts left out,
 * as in mem_stage_params; the embedding, head, norms and router are not linear layers), and the same summed over
 * `stage`'s chunks: what --fp8-param-gather keeps, and the distributed optimizer gathers, in FP8. */
double mem_chunk_dense_linear_params(const model *m, const layout *l, const partition *p, int v);
double mem_stage_dense_linear_params(const model *m, const layout *l, const partition *p, int stage);
/* Bytes of the distributed optimizer's parameter all-gather of `params` parameters of which `linear` are the linear
 * layers': bf16 each, the linear ones in FP8 (1 byte) under --fp8-param-gather (Megatron's param buffers hold the
 * FP8 weights as uint8: megatron/core/distributed/param_and_grad_buffer.py group_params_for_buffers). */
double mem_param_gather_bytes(const layout *l, double params, double linear);
/* `code` (NULL: the study's, gen_default_code) says how the gradients are held (gen_code grad_buffer). */
void mem_model_states(const model *m, const layout *l, const gen_code *code, const partition *p, int stage,
                      mem_states *out);
/* Sum of the model states (what a program's mem_static_bytes holds). */
double mem_static_bytes(const model *m, const layout *l, const gen_code *code, const partition *p, int stage);
/* Transient of one gradient bucket reduced over dp: the study's flattened bf16 copy + its cast for the reduction;
 * 0 with a gradient buffer (reduced in place). */
double mem_bucket_transient_bytes(const gen_code *code, double bucket_elements);
/* Transient of the optimizer step on `shard` parameters: the study's fp32 grad slice (ZeRO-1) and torch's foreach
 * AdamW temporary; with a gradient buffer, the fp32 copy of the owned gradients where the buffer is not fp32. */
double mem_adam_transient_bytes(const gen_code *code, const layout *l, double shard);

/* Walking a program's events in execution order. The level is what persists
 * between events (saved activations, checkpoints, pipe buffers); at each event
 * the rank holds level + what the event allocates + its transient. */
typedef struct mem_walk {
  double act_bytes;       /* current level */
  double peak_bytes;      /* max over the step of level (+ allocation) + transient */
  double peak_act_bytes;  /* the persisting part at the peak */
  double peak_buf_bytes;  /* the transient part at the peak */
  int peak_index;         /* event at the peak, -1 before any */
  double min_bytes;       /* lowest level reached (never negative if consistent) */
} mem_walk;

void mem_walk_init(mem_walk *w);
/* Account one event; returns TRUE if it set a new peak. */
gboolean mem_walk_event(mem_walk *w, const graph_event *e, int index);
/* Walk a whole program (a mirror walks its source's events). */
void mem_walk_program(const graph *g, const graph_program *p, mem_walk *w);

#endif
