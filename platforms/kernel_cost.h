/* kernel_cost -- how long a compute event of the task graph takes on a GPU
 * of a given profile: the hardware side of the cost model (docs/profile.md).
 *
 *   time = launches * launch_overhead_s + max(math time, memory time)
 *
 * - GEMMs: flops / (peak * eff(m, n, k)), peak the profile's bf16 peak (or its FP8 peak for an event of an
 *   FP8 dtype, with fp8_gemm_efficiency in place of gemm_efficiency), eff = gemm_efficiency x the profile's
 *   gemm_efficiency_scale (fp8_: for FP8; 1 but where fitted: docs/blackwell.md) x tile
 *   quantization x wave quantization (tiles of gemm_tile_m x gemm_tile_n over
 *   sm_count SMs; cuBLAS picks the better of the tile and its transpose)
 *   x k / (k + gemm_k_half) (short reductions amortize the tile prologue and
 *   epilogue badly). A backward GEMM event is dgrad (m x k output, reduction
 *   n) plus wgrad (k x n output, reduction m), each half its flops.
 * - attention: the event's efficiency class (graph.h GRAPH_ATTN_*, its variant) is an entry of the stack's
 *   attention table (stack.h stack_attention), which says how the code's kernel of that class runs:
 *   - fused (FlashAttention): the causal kernels skip the masked half; the work runs
 *     at the entry's efficiency x s / (s + attn_seq_half) x d / (d + attn_head_dim_half)
 *     of peak; the backward does 2.5x the forward's matmul work (it recomputes
 *     the scores) where the graph counts 2x.
 *   - materialized (torch, fused softmax): two batched GEMMs (s x s x d) over the
 *     full score matrix at GEMM efficiency, plus the memory passes over the
 *     scores at effective HBM bandwidth (workloads/ops.h says how many bytes).
 * - memory-bound operators: bytes / (hbm * hbm_efficiency).
 * - launch_overhead_s: the GPU-side gap per kernel launch the event issues (graph_event_launches_issued: its
 *   launches, or inside a partial CUDA graph only the graph's own launch at its first event). The host dispatch of eager
 *   PyTorch runs ahead of the GPU (asynchronous launches) and is hidden for
 *   the study's kernel sizes, so it is not added (docs/profile.md).
 *
 * It reads an event's cost class (graph.h: GEMM, attention of an efficiency class, memory-bound pass), never which
 * transformer operator or which attention kernel the event is: a new kernel is an entry of the stacks' tables.
 *
 * Owns: the time of one compute event. May not touch: SimGrid, schedules, models.
 */
#ifndef KERNEL_COST_H
#define KERNEL_COST_H

#include "profile.h"
#include "workloads/graph.h"

double kcost_seconds(const gpu_profile *p, const graph_event *e);
/* The same inside a captured CUDA graph (graph_meta.cuda_graph): the kernels replay back to back from the
 * graph, so no launch_overhead_s gap per launch (the graph's own per-node cost, about a microsecond, is left
 * out); the host dispatch is not paid either (sim/replay.c). Otherwise as kcost_seconds. */
double kcost_seconds_in(const gpu_profile *p, const graph_event *e, gboolean cuda_graph);

/* Fraction of peak a bf16 GEMM (m x k).(k x n) reaches (exposed for tests). */
double kcost_gemm_efficiency(const gpu_profile *p, double m, double n, double k);
/* The same for a GEMM of dtype dt: an FP8 one (fp8_e4m3, fp8_e5m2, mxfp8) at the stack's fp8_gemm_efficiency
 * of the profile's FP8 peak (kcost_gemm_peak), with the same tile, wave and reduction terms. */
double kcost_gemm_efficiency_of(const gpu_profile *p, graph_dtype dt, double m, double n, double k);
double kcost_gemm_peak(const gpu_profile *p, graph_dtype dt);
/* Fraction of peak the stack's fused attention kernel of efficiency class cls (graph.h GRAPH_ATTN_*) reaches on its
 * causal work. */
double kcost_fused_attention_efficiency(const gpu_profile *p, int cls, double seq, double head_dim);

#endif
