/* kernel_cost -- see kernel_cost.h. */
#include "kernel_cost.h"

#include "workloads/layout.h"

static double roofline(const gpu_profile *p, double flops, double eff, double bytes)
{
  double t_math = flops / (p->peak_flops * eff);
  double t_mem = bytes / (p->hbm_bytes_per_s * p->hbm_efficiency);
  return t_math > t_mem ? t_math : t_mem;
}

static double attention(const gpu_profile *p, const graph_event *e)
{
  if (layout_attn_is_flash((layout_attn)e->variant)) /* causal: the kernel skips the masked half */
    return roofline(p, e->flops * 0.5, p->attention_efficiency, e->bytes);
  /* unfused: two batched GEMMs over the full score matrix, plus the memory passes over it */
  return e->flops / (p->peak_flops * p->gemm_efficiency) + e->bytes / (p->hbm_bytes_per_s * p->hbm_efficiency);
}

double kcost_seconds(const gpu_profile *p, const graph_event *e)
{
  double launch = e->launches * p->launch_overhead_s;
  switch (e->op) {
  case OP_QKV:
  case OP_ATTN_OUT:
  case OP_MLP_UP:
  case OP_MLP_DOWN:
  case OP_LOGITS: return launch + roofline(p, e->flops, p->gemm_efficiency, e->bytes);
  case OP_ATTENTION: return launch + attention(p, e);
  default: return launch + roofline(p, e->flops, 1.0, e->bytes);
  }
}
