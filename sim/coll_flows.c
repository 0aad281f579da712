/* coll_flows -- the flow engine of coll_algo.h: a member's plan run as pipelined flows. */
#include "coll_algo.h"

#include <glib.h>
#include <math.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <xbt/dynar.h>

#include "host_flow.h"

static int payload; /* SimGrid aborts on NULL payloads; the data itself is never read */

void coll_plan_add(coll_plan *p, int to, double frac)
{
  for (int i = 0; i < p->n_to; i++)
    if (p->to[i] == to) {
      p->frac[i] += frac;
      return;
    }
  p->to = g_renew(int, p->to, p->n_to + 1);
  p->frac = g_renew(double, p->frac, p->n_to + 1);
  p->to[p->n_to] = to;
  p->frac[p->n_to++] = frac;
}

double coll_hop_latency(const coll_group *g, int a, int b)
{
  return sg_host_get_route_latency(g->members[a].host, g->members[b].host);
}

static const coll_plan *plan_of(const coll_algo_def *d, coll_algo a, coll_group *g, int me);
static double own_alone(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s);
static double group_alone(const coll_algo_def *d, coll_algo a, coll_group *g, double bytes, double overhead_s);

static const coll_plan *plan_of(const coll_algo_def *d, coll_algo a, coll_group *g, int me)
{
  if (!g->plans[a]) g->plans[a] = g_new0(coll_plan *, g->n);
  if (!g->plans[a][me]) {
    g->plans[a][me] = g_new0(coll_plan, 1);
    d->plan(g, me, g->plans[a][me]);
  }
  return g->plans[a][me];
}

void coll_plans_clear(coll_group *g)
{
  for (int a = 0; a < COLL_ALGO_N; a++) {
    if (!g->plans[a]) continue;
    for (int i = 0; i < g->n; i++)
      if (g->plans[a][i]) {
        g_free(g->plans[a][i]->to);
        g_free(g->plans[a][i]->frac);
        g_free(g->plans[a][i]->alone);
        g_free(g->plans[a][i]);
      }
    g_free(g->plans[a]);
  }
}

/* The latency the caller still owes after me's flows, which paid their longest hop (looked up once per plan). */
static double owed(const coll_group *g, int me, const coll_plan *p, double overhead_s)
{
  coll_plan *q = (coll_plan *)p; /* the plan's cache: hop_s */
  if (!q->hop_known) {
    q->hop_s = 0;
    for (int i = 0; i < p->n_to; i++) q->hop_s = MAX(q->hop_s, coll_hop_latency(g, me, p->to[i]));
    q->hop_known = TRUE;
  }
  return MAX(0, p->lat_s - p->hop_s) + p->steps * overhead_s;
}

double coll_flows_run(const coll_algo_def *d, coll_algo a, coll_group *g, const int *active, int me, double bytes,
                      double overhead_s)
{
  const coll_plan *p = plan_of(d, a, g, me);
  int n_active = 0;
  for (int i = 0; i < g->n; i++) n_active += active[i] != 0;
  g_autofree sg_comm_t *comms = g_new(sg_comm_t, 2 * p->n_to + 1);
  g_autofree void **got = g_new(void *, p->n_to + 1);
  int k = 0, in = 0;
  for (int i = 0; i < p->n_to; i++) {
    const coll_member *to = &g->members[p->to[i]];
    if (active[p->to[i]]) {
      comms[k++] = sg_mailbox_put_async(to->inbox, &payload, (long)(bytes * p->frac[i]));
      comms[k++] = sg_mailbox_get_async(g->members[me].inbox, &got[in++]); /* it sends me as much */
    } else {
      comms[k++] = net_sendto_async(g->members[me].host, to->host, bytes * p->frac[i]);
      if (g->members[me].streamed) /* what it sends me, into my links beside my other streams' traffic */
        comms[k++] = net_sendto_async(to->host, g->members[me].host, bytes * p->frac[i]);
    }
  }
  sg_comm_wait_all(comms, (size_t)k);
  if (n_active == g->n) {
    sg_barrier_wait(g->barrier);
    return owed(g, me, p, overhead_s);
  }
  /* passive members do not run their roles: wait, beyond the own flows, for the slowest role alone (the
   * barrier an all-active group meets) */
  return owed(g, me, p, overhead_s) +
         MAX(0, group_alone(d, a, g, bytes, overhead_s) - own_alone(d, a, g, me, bytes, overhead_s));
}

/* Member me's flows alone on its links: the wait for the slowest (coll_algo.h). */
static double own_flows(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes)
{
  coll_plan *p = (coll_plan *)plan_of(d, a, g, me);
  if (!p->alone) { /* per flow: seconds per buffer byte until its busiest link has carried all of me's flows
                    * on it (equal sharing is work-conserving), route latency */
    p->alone = g_new(double, 2 * MAX(p->n_to, 1));
    g_autoptr(GHashTable) uses = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free); /* link -> fractions */
    g_autofree xbt_dynar_t *routes = g_new(xbt_dynar_t, MAX(p->n_to, 1));
    for (int i = 0; i < p->n_to; i++) {
      routes[i] = xbt_dynar_new(sizeof(sg_link_t), NULL);
      sg_host_get_route(g->members[me].host, g->members[p->to[i]].host, routes[i]);
      unsigned j;
      sg_link_t l;
      xbt_dynar_foreach (routes[i], j, l) {
        double *f = g_hash_table_lookup(uses, l);
        if (!f) g_hash_table_insert(uses, l, f = g_new0(double, 1));
        *f += p->frac[i];
      }
    }
    for (int i = 0; i < p->n_to; i++) {
      double per_byte = 0;
      unsigned j;
      sg_link_t l;
      xbt_dynar_foreach (routes[i], j, l) {
        per_byte = MAX(per_byte, *(double *)g_hash_table_lookup(uses, l) / sg_link_get_bandwidth(l));
      }
      p->alone[2 * i] = per_byte;
      p->alone[2 * i + 1] = coll_hop_latency(g, me, p->to[i]);
      xbt_dynar_free(&routes[i]);
    }
  }
  double flows = 0;
  for (int i = 0; i < p->n_to; i++) flows = MAX(flows, p->alone[2 * i + 1] + bytes * p->alone[2 * i]);
  return flows;
}

/* Member me's time with its flows alone on its links (coll_algo.h). */
static double own_alone(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s)
{
  return own_flows(d, a, g, me, bytes) + owed(g, me, plan_of(d, a, g, me), overhead_s);
}

/* The group's time alone: the slowest member's (a tree's roles differ; every member ends at the barrier). */
static double group_alone(const coll_algo_def *d, coll_algo a, coll_group *g, double bytes, double overhead_s)
{
  double t = 0;
  for (int m = 0; m < g->n; m++) t = MAX(t, own_alone(d, a, g, m, bytes, overhead_s));
  return t;
}

double coll_flows_alone(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s)
{
  (void)me;
  return group_alone(d, a, g, bytes, overhead_s);
}

/* coll_flows_run's parts for me alone (the others passive): its flows' wait, then what it returns. */
double coll_flows_alone_wait(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s,
                             double *owed_s)
{
  const coll_plan *p = plan_of(d, a, g, me);
  *owed_s = owed(g, me, p, overhead_s) +
            MAX(0, group_alone(d, a, g, bytes, overhead_s) - own_alone(d, a, g, me, bytes, overhead_s));
  return own_flows(d, a, g, me, bytes);
}
