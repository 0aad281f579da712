/* coll_nvls -- NVLink SHARP all-reduce inside one NVLink domain: every GPU sends its buffer S once
 * into the NVSwitch, which reduces it and multicasts the result, so each GPU's link carries S each way
 * (a ring's carries 2(k-1)/k S) and the reduction is two steps, up and down, whatever k. The switch
 * is no host of the platform: the GPU's S is sent as S/(k-1) to each other member, which loads every
 * GPU's NVLink up and down by S as the switch does (the NVSwitch fabric itself is not the bottleneck).
 * Time alone: S / B + 2 (hop latency + step overhead).
 *
 * Owns: the NVLS algorithm. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

static void nvls_plan(const coll_group *g, int me, coll_plan *p)
{
  for (int i = 0; i < g->n; i++)
    if (i != me) coll_plan_add(p, i, 1.0 / (g->n - 1));
  p->lat_s = 2 * coll_hop_latency(g, me, (me + 1) % g->n);
  p->steps = 2;
}

static gboolean nvls_fits(const coll_group *g) { return g->domains == 1; }

const coll_algo_def coll_nvls_def = {
    .name = "nvls", .colls = 1u << COLL_ALL_REDUCE, .fits = nvls_fits, .plan = nvls_plan,
};
