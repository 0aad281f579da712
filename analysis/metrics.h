/* metrics -- what a simulated step means: step time, tokens/s, MFU exactly
 * as the study defines it (PaLM: tokens/s * (6N + 12 L H Q T) / (gpus *
 * peak)), HFU (all executed FLOPs, recompute included), the bubble fraction
 * (time a GPU waits in pipeline send/recv and pipeline-group collectives -- the
 * timeline's pp-wait category -- divided by step time, docs/metrics.md),
 * the time breakdown, peak memory per stage and the energy of the step.
 *
 * Owns: struct metrics and its computation from a timeline.
 * May not touch: SimGrid, the generator.
 */
#ifndef METRICS_H
#define METRICS_H

#include <glib.h>

#include "energy.h"
#include "platforms/profile.h"
#include "traces/timeline.h"

typedef struct stage_metrics {
  double bubble_fraction;
  double seconds[TL_N];     /* mean over the stage's ranks */
  /* Memory of one rank of the stage at its peak (docs/memory.md):
   * peak = params + grads + optimizer + activations + buffers + overhead. */
  double mem_params_bytes, mem_grads_bytes, mem_optimizer_bytes;
  double mem_static_bytes;          /* the model states above plus persistent buffers */
  double mem_activation_peak_bytes; /* saved activations at the peak */
  double mem_buffers_bytes;         /* persistent buffers + pipe buffers + transients at the peak */
  double mem_overhead_bytes;        /* CUDA context, NCCL buffers, fragmentation (profile) */
  double mem_dynamic_bytes;         /* activations + pipe buffers + transients at the peak */
  double mem_peak_bytes;
  double mem_peak_time_s;           /* when the peak is reached */
} stage_metrics;

typedef struct metrics {
  double step_time_s, tokens_per_s, mfu, hfu; /* mfu < 0 when the graph carries no model FLOPs, hfu < 0 when the step takes no time */
  double bubble_fraction;
  double seconds[TL_N];     /* mean over all ranks */
  double *rank_seconds;     /* [world_size * TL_N]: per rank, per category */
  int world_size;
  int stages;
  stage_metrics *stage;     /* [stages] */
  double mem_peak_bytes;    /* max over stages */
  int mem_peak_stage;
  double mem_capacity_bytes;
  gboolean oom;
  /* The largest allocator fragmentation at which every stage still fits: the
   * verdict is oom exactly when the profile's fragmentation exceeds it
   * (negative: does not fit even without fragmentation). calibrate fits the
   * fragmentation constant to measured ok/oom labels with it. */
  double mem_fragmentation_limit;
  /* Energy of the step (energy.h, docs/energy.md): the GPUs' by what they do, the nodes' beside them. */
  double energy_seconds[EN_N]; /* summed over all ranks */
  double energy_gpu_j, energy_node_j, energy_j;
} metrics;

/* Overheads the profile adds to the graph's memory: CUDA context, NCCL
 * buffers, and allocator fragmentation proportional to the bytes that come
 * and go during the step (activations, pipe buffers, transients). */
double metrics_mem_overhead_bytes(const gpu_profile *p, double dynamic_bytes);
metrics *metrics_compute(const timeline *tl, const gpu_profile *p, double capacity_gib);
/* The memory part of the metrics (stages' memory, peak, verdict, fragmentation limit) from a graph
 * alone, without a replay: each stage's first rank walked in program order, the order a rank runs
 * its events in (the replay only gives them times, so the peak is the same; peak times are 0). */
metrics *metrics_memory_only(const graph *g, const gpu_profile *p, double capacity_gib);
void metrics_free(metrics *m);

#endif
