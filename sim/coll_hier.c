/* coll_hier -- hierarchical all-reduce: reduce-scatter of S inside each NVLink domain (a ring of its k
 * members), all-reduce of the S/k shard across domains among the members of the same local index (a
 * ring of D members, one per domain), all-gather of S inside each domain. Each phase is the ring of
 * sim/coll_ring.c on a subgroup, one after the other: time = RS_k(S) + AR_D(S/k) + AG_k(S), each the
 * ring's closed form. Not an NCCL algorithm (NCCL's nearest, NVLS-tree and CollNet, need NVLS or a
 * SHARP network), so NCCL's tuner never picks it: --nccl-algo hier forces it.
 *
 * Owns: the hierarchical composition. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

#include <glib.h>
#include <simgrid/actor.h>
#include <simgrid/mailbox.h>

/* g->sub: [0, D) the domains, [D, D + k) the local indices across domains (made by coll_group_init,
 * outside the simulation: SimGrid creates barriers there) */
void coll_hier_make_subs(coll_group *g)
{
  if (g->sub || !(g->per_domain > 1 && g->domains > 1)) return;
  int D = g->domains, k = g->per_domain;
  g->sub = g_new0(coll_group, D + k);
  for (int s = 0; s < D + k; s++) {
    coll_group *sg = &g->sub[s];
    sg->n = s < D ? k : D;
    sg->members = g_new0(coll_member, sg->n);
    for (int i = 0; i < sg->n; i++) {
      int m = s < D ? g->at[s * k + i] : g->at[i * k + (s - D)];
      g_autofree char *name = g_strdup_printf("%p.h%d.%d", (void *)g, s, i);
      sg->members[i] = g->members[m];
      sg->members[i].inbox = sg_mailbox_by_name(name);
    }
    coll_group_init(sg);
  }
}

static double hier_run(graph_coll c, coll_group *g, const int *active, int me, double bytes, double overhead_s)
{
  (void)c;
  g_assert(g->sub);
  int D = g->domains, k = g->per_domain, d = g->dom[me], l = g->loc[me];
  g_autofree int *in = g_new(int, k), *across = g_new(int, D);
  for (int i = 0; i < k; i++) in[i] = active[g->at[d * k + i]];
  for (int j = 0; j < D; j++) across[j] = active[g->at[j * k + l]];
  sg_actor_sleep_for(coll_ring_def.run(COLL_REDUCE_SCATTER, &g->sub[d], in, l, bytes, overhead_s));
  sg_actor_sleep_for(coll_ring_def.run(COLL_ALL_REDUCE, &g->sub[D + l], across, d, bytes / k, overhead_s));
  return coll_ring_def.run(COLL_ALL_GATHER, &g->sub[d], in, l, bytes, overhead_s);
}

static double hier_alone(graph_coll c, coll_group *g, int me, double bytes, double overhead_s)
{
  (void)c;
  g_assert(g->sub);
  int D = g->domains, k = g->per_domain, d = g->dom[me], l = g->loc[me];
  return coll_ring_def.alone(COLL_REDUCE_SCATTER, &g->sub[d], l, bytes, overhead_s) +
         coll_ring_def.alone(COLL_ALL_REDUCE, &g->sub[D + l], d, bytes / k, overhead_s) +
         coll_ring_def.alone(COLL_ALL_GATHER, &g->sub[d], l, bytes, overhead_s);
}

static gboolean hier_fits(const coll_group *g) { return g->per_domain > 1 && g->domains > 1; }

const coll_algo_def coll_hier_def = {
    .name = "hier", .colls = 1u << COLL_ALL_REDUCE, .fits = hier_fits, .run = hier_run, .alone = hier_alone,
};
