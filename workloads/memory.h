/* memory -- bytes a rank holds: model states for the whole step, and the
 * activations each operator saves for its backward pass (Korthikanti et al.
 * 2022 adapted to Llama: RMSNorm, rotary, SwiGLU, no biases, no dropout;
 * docs/memory.md derives every term).
 *
 * The generator attaches these numbers to the events of the task graph
 * (+saved at forward/recompute, -saved at backward), so the memory timeline
 * the replay walks is the one source of truth.
 *
 * Owns: mem_ctx and the byte formulas. May not touch: hardware overheads
 * (CUDA context, NCCL buffers, fragmentation live in platforms/profile).
 */
#ifndef MEMORY_H
#define MEMORY_H

#include "graph.h"
#include "layout.h"
#include "model.h"
#include "partition.h"

typedef struct mem_ctx {
  const model *m;
  const layout *l;
  double T;  /* tokens per micro-batch */
  double Tl; /* tokens in the sequence-parallel region (T/tp with sp) */
} mem_ctx;

void mem_ctx_init(mem_ctx *c, const model *m, const layout *l);
/* Bytes operator `op` of one layer (or of the head) saves for backward, one micro-batch. */
double mem_saved_bytes(const mem_ctx *c, graph_op op);
/* Bytes one transformer layer saves (sum over its operators). */
double mem_layer_bytes(const mem_ctx *c);
/* Bytes kept per layer under every-layer checkpointing: the layer's input. */
double mem_checkpoint_bytes(const mem_ctx *c);

/* Parameters held by one rank of `stage` (matrices split over tp, norms replicated). */
double mem_stage_params(const model *m, const layout *l, const partition *p, int stage);
/* Model-state bytes of one rank: bf16 weights and grads, fp32 master + AdamW moments (sharded over dp with ZeRO-1). */
double mem_static_bytes(const model *m, const layout *l, const partition *p, int stage);

#endif
