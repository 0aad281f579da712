/* collective -- NCCL-style ring all-reduce, reduce-scatter and all-gather,
 * built from point-to-point communications between the members' hosts.
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
 * an active member still sends each step to its successor's host (a direct
 * host-to-host transfer, nobody needs to receive it),
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
  sg_host_t host;
  int node;           /* node index, for channel construction */
} coll_member;

typedef struct coll_group {
  coll_member *members;
  int n;
  int channels;       /* rings across nodes (members per node), 1 inside a node */
  sg_bar_t barrier;   /* all n members, for the pipelined ring */
  double *alone;      /* per member: channels x (seconds per byte, latency) of its lone hops; NAN: not yet */
} coll_group;

/* Prepare a group (members filled in by the caller). */
void coll_group_init(coll_group *g);
void coll_group_clear(coll_group *g);

/* Number of ring steps of a collective over n members. */
int coll_steps(graph_coll c, int n);
/* The rings every member runs when all are active (no SimGrid needed, so that a trace writer can
 * follow the replay's traffic): channels for n members on nodes node[0..n-1] in ring order (the
 * members per node when every node holds as many, consecutive; else 1), and the member after and
 * before member `me` in channel c's ring. */
int coll_channels(const int *node, int n);
int coll_ring_next(int me, int n, int channels, int c);
int coll_ring_prev(int me, int n, int channels, int c);

/* Run member `me` of group g; active[i] says whether member i takes part
 * (the caller decides, identically on every member). Returns the extra
 * delay (s) the caller must still spend (latencies folded out of flows,
 * per-step overheads). */
double coll_run(graph_coll c, const coll_group *g, const int *active, int me, double bytes, double step_overhead_s);
/* The whole time coll_run takes for member `me` alone (every other member passive) when no flow but
 * its own crosses its links and its successors' (the replay knows when: sim/replay.c), without
 * simulating it: each channel's hop carries bytes/channels, at the bandwidth of the narrowest link of
 * its route shared by me's hops on it (CM02 without cross-traffic: a flow takes latency + size /
 * rate, flows sharing a link share it equally, the NVLink hops of one member are equal and end
 * together); then the latencies and overheads coll_run returns. */
double coll_alone_seconds(graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s);

#endif
