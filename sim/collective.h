/* collective -- NCCL-style ring all-reduce, reduce-scatter and all-gather,
 * built from point-to-point communications between the members' hosts.
 *
 * A ring over n members moves bytes/n per step: n-1 steps for
 * reduce-scatter and all-gather, 2(n-1) for all-reduce, so an uncontended
 * all-reduce takes 2(n-1)/n * S/B + 2(n-1) * (alpha + step overhead).
 *
 * Passive members (mirrors of a symmetric rank, see graph.h) do not run:
 * an active member still sends each step to its successor (a sink receives),
 * and skips the receive from a passive predecessor, whose hop is identical.
 * When a member is the only active one, the ring is sent as one flow of
 * all steps' bytes plus the remaining per-step latencies: the same time as
 * the step-by-step ring in the symmetric case, with far fewer activities.
 *
 * Owns: the ring algorithm. May not touch: graphs' meaning, metrics.
 */
#ifndef COLLECTIVE_H
#define COLLECTIVE_H

#include <simgrid/forward.h>

#include "workloads/graph.h"

typedef struct coll_member {
  sg_mailbox_t inbox; /* where the predecessor's chunks arrive */
  sg_mailbox_t sink;  /* where chunks go when this member is passive */
  sg_host_t host;
  const int *active;  /* points to the member's activity flag */
} coll_member;

/* Number of ring steps of a collective over n members. */
int coll_steps(graph_coll c, int n);

/* Run member `me` of a ring of `n` members. Returns the extra delay (s) the
 * caller must still spend (latency of steps folded into one flow, per-step overheads). */
double coll_run(graph_coll c, const coll_member *members, int n, int me, double bytes, double step_overhead_s);

#endif
