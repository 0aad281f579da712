/* coll_ring -- NCCL's ring all-reduce, reduce-scatter and all-gather, built from point-to-point
 * communications between the members' hosts.
 *
 * A ring over n members moves bytes/n per step: n-1 steps for
 * reduce-scatter and all-gather, 2(n-1) for all-reduce, so an uncontended
 * all-reduce takes 2(n-1)/n * S/B + 2(n-1) * (alpha + step overhead).
 *
 * Across nodes NCCL runs one ring per channel, each entering and leaving a
 * node through a different GPU (and so a different NIC): with k members per
 * node, channel c visits each node's members rotated by c, and carries
 * bytes/k. A group inside one node uses one ring (NVSwitch gives every GPU
 * its own link, so more channels would change nothing).
 *
 * When every member is active, each channel's ring is run as NCCL pipelines
 * it: every member streams all its steps' bytes to its successor as one
 * flow, then the members meet at a barrier (data that crossed the slowest
 * hop is what everyone waits for), then pay the remaining per-step
 * latencies. For a uniform ring this equals the step-by-step ring exactly;
 * for a mixed one it is bounded by the slowest hop, as a pipelined ring is.
 *
 * Passive members (mirrors of a symmetric rank, see graph.h) do not run:
 * an active member still sends each channel's bytes to its successor's host
 * (a direct host-to-host transfer, nobody needs to receive it), and skips
 * the receive from a passive predecessor, whose hop is identical; a member
 * whose rank runs other streams (coll_member.streamed) takes that hop as a
 * direct transfer into its own host, so that its links carry the ring beside
 * its other traffic. When a member is the only active one, it runs these
 * flows alone, one per channel (run_alone); with several (one per cp index of
 * a dp-cp group) the ring is the pipelined one with its channels, the active
 * members meeting at their own barrier (run_mixed). docs/sweep.md says where
 * this is exact.
 *
 * Owns: the ring algorithm. May not touch: graphs' meaning, metrics.
 */
#include "coll_algo.h"

#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <glib.h>
#include <math.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

#include "host_flow.h"

static int payload; /* SimGrid aborts on NULL payloads; the data itself is never read */

int coll_steps(graph_coll c, int n)
{
  if (n < 2) return 0;
  return c == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
}


int coll_channels(const int *node, int n)
{
  int per = 1;
  while (per < n && node[per] == node[0]) per++;
  if (per == n || n % per) return 1;
  for (int i = 0; i < n; i++)
    if (node[i] != node[(i / per) * per] || (i % per == 0 && i > 0 && node[i] == node[i - 1])) return 1;
  return per;
}

/* Ring position -> member index for channel c: each node's block rotated by c. */
static int member_at(int pos, int n, int per, int c)
{
  pos = ((pos % n) + n) % n;
  int block = pos / per, off = pos % per;
  return block * per + (off + c) % per;
}

/* Position of member `me` in channel c's ring. */
static int position_of(int me, int per, int c)
{
  int block = me / per, off = me % per;
  return block * per + ((off - c) % per + per) % per;
}

int coll_ring_next(int me, int n, int channels, int c)
{
  return member_at(position_of(me, channels, c) + 1, n, channels, c);
}

int coll_ring_prev(int me, int n, int channels, int c)
{
  return member_at(position_of(me, channels, c) - 1, n, channels, c);
}

/* Member me's lone hops: per channel, seconds per byte at its share of the narrowest link, and the
 * route latency. */
static const double *alone_hops(coll_group *g, int me)
{
  int ch = g->channels, n = g->n;
  if (!g->alone) {
    g->alone = g_new(double, (gsize)n * ch * 2);
    for (gsize i = 0; i < (gsize)n * ch * 2; i++) g->alone[i] = NAN;
  }
  double *h = &g->alone[(gsize)me * ch * 2];
  if (!isnan(h[0])) return h;
  g_autoptr(GHashTable) uses = g_hash_table_new(g_direct_hash, g_direct_equal); /* link -> my hops on it */
  g_autofree xbt_dynar_t *routes = g_new(xbt_dynar_t, ch);
  for (int k = 0; k < ch; k++) {
    const coll_member *next = &g->members[coll_ring_next(me, n, ch, k)];
    routes[k] = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(g->members[me].host, next->host, routes[k]);
    unsigned i;
    sg_link_t l;
    xbt_dynar_foreach (routes[k], i, l) {
      gpointer c = g_hash_table_lookup(uses, l);
      g_hash_table_insert(uses, l, GINT_TO_POINTER(GPOINTER_TO_INT(c) + 1));
    }
  }
  for (int k = 0; k < ch; k++) {
    const coll_member *next = &g->members[coll_ring_next(me, n, ch, k)];
    double per_byte = 0;
    unsigned i;
    sg_link_t l;
    xbt_dynar_foreach (routes[k], i, l) {
      double share = sg_link_get_bandwidth(l) / GPOINTER_TO_INT(g_hash_table_lookup(uses, l));
      if (1.0 / share > per_byte) per_byte = 1.0 / share;
    }
    h[2 * k] = per_byte;
    h[2 * k + 1] = sg_host_get_route_latency(g->members[me].host, next->host);
    xbt_dynar_free(&routes[k]);
  }
  return h;
}

/* Member me's ring hop: the largest route latency to its successors over the channels, from its lone hops
 * (alone_hops: the routes are fixed, so SimGrid is asked once per member, not at every ring call). */
static double ring_hop(coll_group *g, int me)
{
  const double *h = alone_hops(g, me);
  double hop = 0;
  for (int k = 0; k < g->channels; k++)
    if (h[2 * k + 1] > hop) hop = h[2 * k + 1];
  return hop;
}

/* The lone ring's flows (returned) and what run_alone returns after them (*owed_s). */
static double ring_alone_wait(graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s, double *owed_s)
{
  int steps = coll_steps(c, g->n), ch = g->channels;
  *owed_s = 0;
  if (steps == 0) return 0;
  const double *h = alone_hops(g, me);
  double flows = 0, hop = 0, each = bytes / g->n * steps / ch;
  for (int k = 0; k < ch; k++) {
    flows = MAX(flows, h[2 * k + 1] + each * h[2 * k]);
    hop = MAX(hop, h[2 * k + 1]);
  }
  *owed_s = (steps - 1) * hop + steps * step_overhead_s;
  return flows;
}

static double ring_alone(graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s)
{
  double owed, flows = ring_alone_wait(c, g, me, bytes, step_overhead_s, &owed);
  return flows + owed;
}

/* The one active member, the others mirroring it: its own hops, one flow per channel as in the
 * pipelined ring, towards passive successors. By symmetry every member's flows load their links as
 * these load the active member's (NVLink up: the channels that stay in the node; NIC: the one that
 * leaves it; the fabric is non-blocking), so the time is the pipelined ring's. */
static double run_alone(coll_group *g, int me, double bytes_per_step, int steps, double overhead_s)
{
  int ch = g->channels, n = g->n;
  g_autofree sg_comm_t *comms = g_new(sg_comm_t, 2 * ch);
  double hop = ring_hop(g, me);
  int nc = ch;
  for (int k = 0; k < ch; k++) {
    const coll_member *next = &g->members[coll_ring_next(me, n, ch, k)];
    comms[k] = net_sendto_async(g->members[me].host, next->host, bytes_per_step * steps / ch);
    if (g->members[me].streamed) /* its passive predecessor's hop, into its links (see the header) */
      comms[nc++] = net_sendto_async(g->members[coll_ring_prev(me, n, ch, k)].host, g->members[me].host,
                                     bytes_per_step * steps / ch);
  }
  sg_comm_wait_all(comms, nc);
  return (steps - 1) * hop + steps * overhead_s;
}

/* Every member active: pipelined rings, one flow per channel, then a barrier. */
static double run_pipelined(coll_group *g, int me, double bytes_per_step, int steps, double overhead_s)
{
  int ch = g->channels, n = g->n;
  g_autofree sg_comm_t *comms = g_new(sg_comm_t, 2 * ch);
  g_autofree void **got = g_new(void *, ch);
  double hop = ring_hop(g, me);
  for (int k = 0; k < ch; k++) {
    const coll_member *next = &g->members[coll_ring_next(me, n, ch, k)];
    comms[k] = sg_mailbox_put_async(next->inbox, &payload, (long)(bytes_per_step * steps / ch));
    comms[ch + k] = sg_mailbox_get_async(g->members[me].inbox, &got[k]);
  }
  sg_comm_wait_all(comms, 2 * ch);
  sg_barrier_wait(g->barrier);
  return (steps - 1) * hop + steps * overhead_s;
}

/* Several members active, some passive (the mirrors of several explicit programs, e.g. one per cp index in a
 * dp-cp group): the pipelined ring with its channels, as every member active runs it. An active member
 * streams each channel's bytes to its successor: as a message to an active one, as a direct host-to-host
 * transfer to a passive one (nobody receives it; its links carry it as the full ring's would); it receives
 * from an active predecessor and skips a passive one, whose hop is the mirror of one an active member
 * sends. Then the active members meet at their barrier (the passive ones' flows are mirrors of theirs, so
 * the slowest simulated hop is the ring's slowest) and pay the remaining per-step latencies. */
static double run_mixed(coll_group *g, const int *active, int n_active, int me, double bytes_per_step, int steps,
                        double overhead_s)
{
  int ch = g->channels, n = g->n, k_comm = 0;
  g_autofree sg_comm_t *comms = g_new(sg_comm_t, 2 * ch);
  g_autofree void **got = g_new(void *, ch);
  double hop = ring_hop(g, me), each = bytes_per_step * steps / ch;
  for (int k = 0; k < ch; k++) {
    int inext = coll_ring_next(me, n, ch, k), iprev = coll_ring_prev(me, n, ch, k);
    const coll_member *next = &g->members[inext];
    comms[k_comm++] = active[inext] ? sg_mailbox_put_async(next->inbox, &payload, (long)each)
                                    : net_sendto_async(g->members[me].host, next->host, each);
    if (active[iprev]) comms[k_comm++] = sg_mailbox_get_async(g->members[me].inbox, &got[k]);
    else if (g->members[me].streamed) /* its passive predecessor's hop, into its links */
      comms[k_comm++] = net_sendto_async(g->members[iprev].host, g->members[me].host, each);
  }
  sg_comm_wait_all(comms, (size_t)k_comm);
  sg_barrier_wait(coll_group_barrier(g, n_active));
  return (steps - 1) * hop + steps * overhead_s;
}

static double ring_run(graph_coll c, coll_group *g, const int *active, int me, double bytes, double step_overhead_s)
{
  int steps = coll_steps(c, g->n);
  if (steps == 0) return 0;
  double per_step = bytes / g->n;
  int n_active = 0;
  for (int i = 0; i < g->n; i++) n_active += active[i] != 0;
  if (n_active == 1) return run_alone(g, me, per_step, steps, step_overhead_s);
  if (n_active == g->n) return run_pipelined(g, me, per_step, steps, step_overhead_s);
  return run_mixed(g, active, n_active, me, per_step, steps, step_overhead_s);
}

const coll_algo_def coll_ring_def = {
    .name = "ring",
    .colls = 1u << COLL_ALL_REDUCE | 1u << COLL_REDUCE_SCATTER | 1u << COLL_ALL_GATHER,
    .run = ring_run,
    .alone = ring_alone,
    .alone_wait = ring_alone_wait,
};
