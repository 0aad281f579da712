/* bound -- a provable lower bound on a layout's simulated step time, from its task graph, without a replay
 * (docs/sweep.md, "Exact top-K"). The sweep replays layouts in order of their bound and stops once K replayed
 * layouts are faster than the next bound: whatever it did not replay is slower than those K, so the top K is
 * the exhaustive sweep's.
 *
 * Why each term is a lower bound of the replay (sim/replay.c):
 *  - compute: a compute event takes exactly kcost_seconds (platforms/kernel_cost.h) of its stream when it runs
 *    (the replay executes that many seconds on the rank's host; the host's dispatch and a stream shared with
 *    other work only add), and the events of one stream run one after another in program order. So a rank
 *    ends no earlier than the sum of its stream's compute, and the step (the latest rank's end) no earlier.
 *    Every micro-batch's compute is counted at the cheapest micro-batch's (the graph is the memory verdict's,
 *    at min(m, pp + 1) micro-batches: the step's m micro-batches are at least m times the cheapest).
 *  - pipeline (schedules with one chunk per stage): stage k's first micro-batch event is a forward, which
 *    waits for the activations of stages 0..k-1 (each sends once its forward ended), so it starts no earlier
 *    than the sum of their forwards (each at least the cheapest micro-batch's forward on its stage); where the
 *    schedule does not split the backward, stage k's last micro-batch event is a backward whose gradient
 *    stages k-1..0 wait for, one after another, and stage 0's compute after its last micro-batch (the
 *    optimizer) follows: the bubble's closed form, (p - 1) (f + b) for p equal stages, is this sum. Recompute
 *    is not counted in the chain (it only adds); a stage's collectives are (its send follows them).
 *  - communication (with a platform): a collective on a stream keeps that stream until it ends (sim/replay.c runs
 *    it in the stream's lane; NCCL's kernel holds the CUDA stream), so it counts as the stream's compute does, at
 *    the least time any algorithm of sim/ could take for it alone: the bytes each of them makes the member send
 *    (all-gather and reduce-scatter (n-1)/n of the buffer, an all-reduce at least the buffer once: a ring twice
 *    (n-1)/n, NVLS once over its efficiency, a tree once per channel-tree, hier more) over the most the GPU's links
 *    can carry at once (its NVLink where a member shares its domain, its NIC where one is in another, both on a
 *    PXN rail fabric): every flow leaves the GPU by one of them at most at its bandwidth, and contention, latency
 *    and per-step overheads only add. Or, where larger, what must enter the member's NVLink domain before its
 *    call ends (an all-gather's shards of the members outside it; an all-reduce's whole buffer, every element
 *    depending on their data) over the NICs of the domain's members (a flow enters by its destination's NIC;
 *    on PXN every NIC of their nodes). All-to-alls (the flex dispatcher sends a token once per domain) and groups
 *    that span stages (met by both ends: the pipeline terms would count them twice) are not counted, nor are
 *    pipeline messages.
 *  Without a platform (a platform file's links are not the profile's) communication is not counted at all.
 *
 * Owns: the bound. May not touch: the replay, the enumeration.
 */
#ifndef BOUND_H
#define BOUND_H

#include "platforms/cluster.h"
#include "platforms/profile.h"
#include "workloads/graph.h"
#include "workloads/layout.h"

typedef struct bound_parts {
  double compute_s;  /* the largest rank's stream compute at m micro-batches */
  double pipeline_s; /* the largest rank's compute with the pipeline's fill and drain before and after it */
  double total_s;    /* the bound: max of the two */
} bound_parts;

/* The bound on the step of layout l (its schedule, pp, virtual stages) at m micro-batches, from graph g of the
 * same layout at m_graph micro-batches (1 <= m_graph <= m), compute costed on profile p, communication on
 * platform pl (NULL: not counted, as for a platform file, whose links are not pl's). */
bound_parts bound_step(const graph *g, const gpu_profile *p, const plat_params *pl, const layout *l, int m_graph,
                       int m);
/* The same bound counting only the micro-batches' work: the forward, backward and recompute events (compute and
 * collectives), no data-parallel traffic, no optimizer. Still below the replay (each term holds for any subset of
 * a stream's events, in its order; the drain's chain ends with the last backward, whose gradient the earlier
 * stages wait for). The generator emits these events alike for every ZeRO stage and both overlaps
 * (tests/test_bound.c checks it), so one graph bounds every layout that differs only there (docs/sweep.md,
 * "Work first"). */
bound_parts bound_step_work(const graph *g, const gpu_profile *p, const plat_params *pl, const layout *l,
                            int m_graph, int m);

#endif
