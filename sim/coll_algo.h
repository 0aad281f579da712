/* coll_algo -- what an algorithm module provides to the table of sim/collective.c, and the flow
 * engine most of them are written with (sim/coll_flows.c).
 *
 * Flow engine: an algorithm gives, per member, its plan: the members it sends to with the fraction of
 * the buffer each gets, the same members sending it as much back (the algorithms here are symmetric
 * that way: a tree's reduction goes up the edges its broadcast comes down), the latency of its
 * critical path beyond one hop, and its step count (each step pays the stack's per-step overhead).
 * All flows of a member are pipelined: posted together, then the members meet at a barrier, as the
 * pipelined ring (sim/coll_ring.c). A member's time with its flows alone on its links:
 *   max over me's flows of (hop latency + bytes of all me's flows on the flow's busiest link / its bandwidth)
 *   + (lat_s - the longest hop latency of me's flows) + steps * overhead,
 * and the group's alone (coll_alone_seconds) the slowest member's: roles differ (a tree's inner domain
 * carries more than a leaf), and all members meet at the barrier. With passive members, an active one
 * runs its own flows and then waits for the difference to the slowest role.
 *
 * Owns: the module interface. May not touch: graphs' meaning.
 */
#ifndef COLL_ALGO_H
#define COLL_ALGO_H

#include "collective.h"

typedef struct coll_algo_def {
  const char *name;
  unsigned colls;                                   /* 1 << graph_coll it runs */
  gboolean (*fits)(const coll_group *g);            /* the group shape it needs (NULL: any) */
  double (*run)(graph_coll c, coll_group *g, const int *active, int me, double bytes, double overhead_s);
  double (*alone)(graph_coll c, coll_group *g, int me, double bytes, double overhead_s);
  /* alone's parts (collective.h coll_alone_wait_seconds): the flows' wait, and *owed_s (NULL: not split) */
  double (*alone_wait)(graph_coll c, coll_group *g, int me, double bytes, double overhead_s, double *owed_s);
  /* flow-engine algorithms: the plan of member me (run/alone NULL then) */
  void (*plan)(const coll_group *g, int me, coll_plan *p);
} coll_algo_def;

struct coll_plan {
  int n_to;
  int *to;        /* members */
  double *frac;   /* of the per-rank buffer, per flow (sent and received) */
  double lat_s;   /* latency of the critical path, whole */
  int steps;
  double *alone;  /* per flow: seconds per byte alone, route latency; NULL: not yet */
  double hop_s;   /* the longest route latency of its flows, once hop_known (a route look-up allocates: asked for
                   * every member of a group at every collective, it dominated sweeps of all-to-alls over ep 64) */
  gboolean hop_known;
};

/* coll_plan building: add `frac` towards member `to` (merged with an earlier flow to it). */
void coll_plan_add(coll_plan *p, int to, double frac);
/* Route latency between members a and b. */
double coll_hop_latency(const coll_group *g, int a, int b);

double coll_flows_run(const coll_algo_def *d, coll_algo a, coll_group *g, const int *active, int me, double bytes,
                      double overhead_s);
double coll_flows_alone(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s);
double coll_flows_alone_wait(const coll_algo_def *d, coll_algo a, coll_group *g, int me, double bytes, double overhead_s,
                             double *owed_s);
void coll_plans_clear(coll_group *g);
/* hier's subgroups of g, where hier fits (sim/coll_hier.c) */
void coll_hier_make_subs(coll_group *g);

extern const coll_algo_def coll_ring_def, coll_tree_def, coll_nvls_def, coll_hier_def, coll_pairwise_def, coll_flex_def;

#endif
