/* coll_nvls -- NVLink SHARP all-reduce inside one NVLink domain: every GPU sends its buffer S once
 * into the NVSwitch, which reduces it and multicasts the result, so each GPU's link carries S each way
 * (a ring's carries 2(k-1)/k S) and the reduction is two steps, up and down, whatever k. The switch
 * is no host of the platform: the GPU's S is sent as S/(k-1) to each other member, which loads every
 * GPU's NVLink up and down by S as the switch does (the NVSwitch fabric itself is not the bottleneck).
 * NCCL's nvlsEfficiency of the GPU (platforms/nccl_tune.h: 0.85 Hopper, 0.74 Blackwell) is the fraction of the
 * link the multicast/reduce traffic sustains: each flow carries S / (k-1) / eff (a GPU NCCL runs no NVLS on,
 * forced here by --nccl-algo nvls, at eff 1). Time alone: S / (B eff) + 2 (hop latency + step overhead).
 *
 * Owns: the NVLS algorithm. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

#include "platforms/nccl_tune.h"

static double nvls_efficiency(const coll_group *g)
{
  double eff = g->tune ? nccl_tune_nvls_efficiency(g->tune->comm.compcap) : 0;
  return eff > 0 ? eff : 1;
}

static void nvls_plan(const coll_group *g, int me, coll_plan *p)
{
  double eff = nvls_efficiency(g);
  for (int i = 0; i < g->n; i++)
    if (i != me) coll_plan_add(p, i, 1.0 / (g->n - 1) / eff);
  p->lat_s = 2 * coll_hop_latency(g, me, (me + 1) % g->n);
  p->steps = 2;
}

static gboolean nvls_fits(const coll_group *g) { return g->domains == 1; }

const coll_algo_def coll_nvls_def = {
    .name = "nvls", .colls = 1u << COLL_ALL_REDUCE, .fits = nvls_fits, .plan = nvls_plan,
};
