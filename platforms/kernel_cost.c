/* kernel_cost -- see kernel_cost.h. */
#include "kernel_cost.h"

#include <math.h>

/* Useful fraction of the tiles covering an a x b output with t_a x t_b tiles, times
 * the fraction of the last wave of tiles over the SMs that is busy. */
static double quantization(const gpu_profile *p, double a, double b, double ta, double tb)
{
  double tiles_a = ceil(a / ta), tiles_b = ceil(b / tb);
  double tiles = tiles_a * tiles_b;
  double tile_q = (a * b) / (tiles_a * ta * tiles_b * tb);
  double waves = ceil(tiles / p->sm_count);
  return tile_q * tiles / (waves * p->sm_count);
}

/* The peak a GEMM of dtype dt runs against, and the stack's efficiency of a large one: FP8 formats on the
 * profile's FP8 tensor cores at the stack's FP8 efficiency, every other dtype as bf16. */
double kcost_gemm_peak(const gpu_profile *p, graph_dtype dt)
{
  return graph_dtype_is_fp8(dt) ? p->peak_fp8_flops : p->peak_flops;
}

/* The stack's efficiency times the GPU's scale of it (profile.h; 0, a profile built in code: 1). */
static double scale_of(double s) { return s > 0 ? s : 1; }

static double base_efficiency(const gpu_profile *p, graph_dtype dt)
{
  return graph_dtype_is_fp8(dt) ? p->stack.fp8_gemm_efficiency * scale_of(p->fp8_gemm_efficiency_scale)
                                : p->stack.gemm_efficiency * scale_of(p->gemm_efficiency_scale);
}

double kcost_gemm_efficiency_of(const gpu_profile *p, graph_dtype dt, double m, double n, double k)
{
  if (m < 1 || n < 1 || k < 1) return base_efficiency(p, dt);
  double q1 = quantization(p, m, n, p->stack.gemm_tile_m, p->stack.gemm_tile_n);
  double q2 = quantization(p, m, n, p->stack.gemm_tile_n, p->stack.gemm_tile_m);
  return base_efficiency(p, dt) * (q1 > q2 ? q1 : q2) * k / (k + p->stack.gemm_k_half);
}

double kcost_gemm_efficiency(const gpu_profile *p, double m, double n, double k)
{
  return kcost_gemm_efficiency_of(p, DT_BF16, m, n, k);
}

double kcost_fused_attention_efficiency(const gpu_profile *p, int cls, double seq, double head_dim)
{
  double base = p->stack.attention[cls].efficiency;
  return base * seq / (seq + p->stack.attn_seq_half) * head_dim / (head_dim + p->stack.attn_head_dim_half);
}

static double memory_s(const gpu_profile *p, double bytes) { return bytes / (p->hbm_bytes_per_s * p->stack.hbm_efficiency); }

static double max2(double a, double b) { return a > b ? a : b; }

/* The rate (FLOP/s) of a GEMM of e's dtype with output a x b and reduction c. */
static double gemm_rate(const gpu_profile *p, const graph_event *e, double a, double b, double c)
{
  graph_dtype dt = (graph_dtype)e->dtype;
  return kcost_gemm_peak(p, dt) * kcost_gemm_efficiency_of(p, dt, a, b, c);
}

static double gemm_s(const gpu_profile *p, const graph_event *e)
{
  double m = e->m, n = e->n, k = e->k;
  double math;
  int part = e->variant & ~GRAPH_GEMM_SM_SHARED;
  if (e->phase == PH_BACKWARD && part == 1) { /* a split backward's B: dgrad only */
    math = e->flops / gemm_rate(p, e, m, k, n);
  } else if (e->phase == PH_BACKWARD && part == 2) { /* its W: wgrad only */
    math = e->flops / gemm_rate(p, e, k, n, m);
  } else if (e->phase == PH_BACKWARD) {
    double half = e->flops / 2;
    math = half / gemm_rate(p, e, m, k, n) + /* dgrad: dY (m x n) . W^T */
           half / gemm_rate(p, e, k, n, m);  /* wgrad: X^T (k x m) . dY */
  } else {
    math = e->flops / gemm_rate(p, e, m, n, k);
  }
  /* beside an overlapped reduce-scatter (TransformerEngine's userbuffers): on the SMs it leaves */
  if (e->variant & GRAPH_GEMM_SM_SHARED) math /= 1 - p->stack.tp_overlap_sm_fraction;
  return max2(math, memory_s(p, e->bytes));
}

/* A fused attention's softmax beside its tensor-core work (NVIDIA, "Making Softmax More Efficient with NVIDIA
 * Blackwell Ultra": BMM2 waits for the SFU's exponentials): per score element 4 d FLOPs forward (QK^T, PV) and 10 d
 * backward, one exponential each (the backward recomputes P). Taken in series, the exponentials add rho / (c d) to
 * the tensor time, rho the GPU's peak FLOPs per exponential: the stack's efficiency was fitted at its GPU's rho,
 * so a GPU runs (1 + rho / (c d)) / (1 + rho_fit / (c d)) of the fitted time. 1 where either is unknown. */
static double exp_factor(const gpu_profile *p, const graph_event *e)
{
  double ref = p->stack.attn_fit_flops_per_exp;
  if (p->exp_per_s <= 0 || ref <= 0 || e->k < 1) return 1;
  double c = (e->phase == PH_BACKWARD ? 10.0 : 4.0) * e->k;
  return (1 + p->peak_flops / p->exp_per_s / c) / (1 + ref / c);
}

/* m = batch * heads (local), n = seq, k = head dim; flops are the full (non-causal) model FLOPs. The event's
 * efficiency class (its variant) is looked up in the stack, which says how its kernel runs. */
static double attention_s(const gpu_profile *p, const graph_event *e)
{
  if (p->stack.attention[e->variant].model == STACK_ATTN_FUSED) {
    double work = e->flops * 0.5 * (e->phase == PH_BACKWARD ? 1.25 : 1.0);
    double eff = kcost_fused_attention_efficiency(p, e->variant, e->n, e->k);
    return max2(work / (p->peak_flops * eff) * exp_factor(p, e), memory_s(p, e->bytes));
  }
  /* QK^T and AV: batched (s x d).(d x s) and (s x s).(s x d) GEMMs over the full score matrix;
   * batch * heads of them fill every wave, so only the short head-dim reduction costs */
  double eff = base_efficiency(p, DT_BF16) * e->k / (e->k + p->stack.gemm_k_half);
  return e->flops / (p->peak_flops * eff) + memory_s(p, e->bytes);
}

double kcost_seconds(const gpu_profile *p, const graph_event *e) { return kcost_seconds_in(p, e, FALSE); }

double kcost_seconds_in(const gpu_profile *p, const graph_event *e, gboolean cuda_graph)
{
  double launch = cuda_graph ? 0 : graph_event_launches_issued(e) * p->stack.launch_overhead_s;
  switch (e->cost) {
  case COST_GEMM: return launch + gemm_s(p, e);
  case COST_ATTENTION: return launch + attention_s(p, e);
  default: return launch + max2(e->flops / p->peak_flops, memory_s(p, e->bytes)); /* a memory-bound pass */
  }
}
