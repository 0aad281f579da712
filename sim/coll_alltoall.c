/* coll_alltoall -- all-to-all as NCCL runs it (grouped ncclSend/ncclRecv): each member sends bytes/n
 * to every other member at once (its own share stays), one step. Time alone inside a node:
 * (n-1)/n S / B + hop latency + step overhead. all-to-allv (uneven splits) is not carried by the graph.
 *
 * Owns: the pairwise all-to-all. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

static void pairwise_plan(const coll_group *g, int me, coll_plan *p)
{
  double hop = 0;
  for (int i = 0; i < g->n; i++)
    if (i != me) {
      coll_plan_add(p, i, 1.0 / g->n);
      hop = MAX(hop, coll_hop_latency(g, me, i));
    }
  p->lat_s = hop;
  p->steps = 1;
}

const coll_algo_def coll_pairwise_def = {
    .name = "pairwise", .colls = 1u << COLL_ALL_TO_ALL, .plan = pairwise_plan,
};
