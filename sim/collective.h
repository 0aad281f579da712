/* collective -- the collective algorithms as a table, and the one place that dispatches to them.
 *
 * A collective of a group runs one algorithm (docs/collectives.md):
 *   ring      NCCL's ring (sim/coll_ring.c): all-reduce, reduce-scatter, all-gather; any group
 *   tree      NCCL's double binary tree across NVLink domains with a chain inside each (sim/coll_tree.c):
 *             all-reduce; as many members in every domain
 *   nvls      NVLink SHARP, the reduction in the NVSwitch (sim/coll_nvls.c): all-reduce inside one domain
 *   hier      reduce-scatter in each domain, all-reduce across domains among the members of the same
 *             local index, all-gather in each domain (sim/coll_hier.c): all-reduce; as many members in
 *             every domain, two or more domains and members per domain
 *   pairwise  all-to-all as concurrent sends of bytes/n to every other member (sim/coll_alltoall.c)
 *   flex      all-to-all of Megatron's flex dispatcher (DeepEP, HybridEP): each token once per destination
 *             NVLink domain over the network, then once per destination GPU over NVLink
 *             (sim/coll_alltoall_flex.c); where the group carries its routing (coll_group.flex_top_k)
 * Which one runs: the forced one (--nccl-algo) where it supports the collective and fits the group,
 * else NCCL's own choice (platforms/nccl_tune.h: ring, tree or nvls), all-to-all pairwise (flex where the
 * group carries its routing and has as many members in every domain);
 * with no tuner (coll_group.tune NULL) the ring. Adding an algorithm: one module sim/coll_NAME.c and
 * one entry in ALGOS (sim/collective.c), its value in coll_algo here, and its name in meson.build.
 *
 * Every algorithm supports passive members (mirrors of a symmetric rank, graph.h) and the lone fast
 * path (coll_alone_seconds): a passive member does not run, an active one sends towards it as a
 * direct host-to-host transfer and skips what it would receive from it (a streamed member receives
 * it as a direct transfer too: coll_member.streamed).
 *
 * Owns: the algorithm table, the group's domain shape, the dispatch. May not touch: graphs' meaning,
 * metrics.
 */
#ifndef COLLECTIVE_H
#define COLLECTIVE_H

#include <simgrid/forward.h>

#include "platforms/nccl_tune.h"
#include "workloads/graph.h"

typedef enum {
  COLL_ALGO_AUTO, /* NCCL's choice */
  COLL_ALGO_RING,
  COLL_ALGO_TREE,
  COLL_ALGO_NVLS,
  COLL_ALGO_HIER,
  COLL_ALGO_PAIRWISE,
  COLL_ALGO_FLEX,
  COLL_ALGO_N
} coll_algo;

/* "auto|ring|tree|nvls|hier": the values --nccl-algo takes */
#define COLL_ALGO_ALLOWED "auto, ring, tree, nvls, hier"

typedef struct coll_member {
  sg_mailbox_t inbox; /* where the predecessor's chunks arrive */
  sg_host_t host;
  int node;           /* the member's NVLink domain (the replay sets it: today its node) */
  gboolean streamed;  /* its rank runs other streams beside this collective's (graph.h): what its passive
                       * neighbours send it must load its links (coll_algo.h) */
} coll_member;

/* How a group's algorithm is chosen: what --nccl-algo forces, and the communicator NCCL's tuner sees
 * (its nranks, nnodes and node_net_bytes_per_s are filled per group: the NICs of a node its members
 * reach, ceil(members per node x nics_per_node / gpus_per_node) of them). */
typedef struct coll_tune {
  coll_algo forced;
  nccl_tune_comm comm;
  int gpus_per_node, nics_per_node;
  double nic_bytes_per_s;
  gboolean latency_tuned; /* the stack's nccl_latency "tuned": ring, tree and NVLS pay NCCL's own latency
                           * (nccl_tune_latency_us) once per call instead of the per-step overhead */
} coll_tune;

typedef struct coll_plan coll_plan;

/* How many of its last algorithm choices a group remembers (coll_choose). */
#define COLL_CHOSEN_N 8

typedef struct coll_group {
  coll_member *members;
  int n;
  const coll_tune *tune; /* NULL: the ring always */
  /* the ring's */
  int channels;       /* rings across nodes (members per node), 1 inside a node */
  sg_bar_t barrier;   /* all n members, for the pipelined ring and the other algorithms */
  sg_bar_t *barriers; /* per count k < n of active members: theirs (coll_group_barrier); NULL: none yet */
  double *alone;      /* per member: channels x (seconds per byte, latency) of its lone hops; NAN: not yet */
  /* the domain shape: domains in order of first member; per_domain members in each (0: not the same
   * in all); dom and loc per member; at[d * per_domain + l]: member l of domain d */
  int domains, per_domain;
  int *dom, *loc, *at;
  coll_plan **plans[COLL_ALGO_N]; /* per algorithm per member, built on first use (sim/coll_flows.c) */
  /* coll_choose's last answers (a group's calls repeat a few sizes: NCCL's tuner, nine cost evaluations a
   * call, was a sixth of a sweep server's time, docs/sweep.md "Speed"); n_chosen valid, next overwritten next */
  struct { graph_coll c; double bytes; coll_algo a; } chosen[COLL_CHOSEN_N];
  int n_chosen, next_chosen;
  struct coll_group *sub;         /* hier's subgroups: the domains, then the per_domain local indices across */
  /* the flex all-to-all's routing (an ep group whose graph says meta.flex_top_k): experts over the group, top-k;
   * 0: its all-to-alls are pairwise (the replay sets them before coll_group_init) */
  int flex_experts, flex_top_k;
  double flex_nvlink_scale; /* its NVLink bytes x this: NCCL's NVLink efficiency (the links' rate) over the flex
                             * kernels' (the stack's flex_nvlink_efficiency); 0 or 1: as NCCL's */
  double flex_ib_scale;     /* its network bytes x this: NCCL's network efficiency over the flex kernels' RDMA one
                             * (the stack's flex_ib_efficiency); 0 or 1: as NCCL's */
  double flex_sm_share;     /* the share of a member's SMs its flex kernels hold while they run (the stack's flex_sms
                             * over the profile's sm_count; the replay takes it from compute beside them); 0: none */
} coll_group;

/* The chance that a token routed uniformly to top_k of `experts` experts has one or more of them on a given one
 * of `parts` equal parts (domains, GPUs): 1 - C(E - E/parts, k) / C(E, k); parts x it is the expected number
 * of parts a token reaches (sim/coll_alltoall_flex.c). */
double coll_flex_reach(int experts, int top_k, int parts);

/* Prepare a group (members filled in by the caller). */
void coll_group_init(coll_group *g);
void coll_group_clear(coll_group *g);
/* The barrier of k active members of g (k = n: g->barrier; else made on first use, shared by the calls with
 * k active: a group's calls are sequential on every member, and the active set of a call is the same on all). */
sg_bar_t coll_group_barrier(coll_group *g, int k);

/* Algorithm names ("ring", ...) and the value of one (-1: none such). */
const char *coll_algo_name(coll_algo a);
int coll_algo_parse(const char *s);
/* The algorithm that runs collective c of `bytes` per rank on g (never AUTO); the same on every member. */
coll_algo coll_choose(coll_group *g, graph_coll c, double bytes);

/* Number of ring steps of a collective over n members. */
int coll_steps(graph_coll c, int n);
/* The rings every member runs when all are active (no SimGrid needed, so that a trace writer can
 * follow the replay's traffic): channels for n members on nodes node[0..n-1] in ring order (the
 * members per node when every node holds as many, consecutive; else 1), and the member after and
 * before member `me` in channel c's ring. */
int coll_channels(const int *node, int n);
int coll_ring_next(int me, int n, int channels, int c);
int coll_ring_prev(int me, int n, int channels, int c);

/* With the stack's nccl_latency "tuned" (coll_tune.latency_tuned): the latency (s) NCCL's model charges
 * algorithm a (ring, tree, NVLS) for this call (platforms/nccl_tune.h nccl_tune_latency_us), which coll_run
 * and coll_alone_seconds then add once in place of the per-step overheads; -1 otherwise (fitted latency, or
 * an algorithm NCCL's model does not have). */
double coll_nccl_latency_s(coll_algo a, graph_coll c, const coll_group *g, double bytes);
/* Run member `me` of group g with algorithm a (coll_choose's); active[i] says whether member i takes
 * part (the caller decides, identically on every member). Returns the extra delay (s) the caller must
 * still spend (latencies folded out of flows, per-step overheads). */
double coll_run(coll_algo a, graph_coll c, coll_group *g, const int *active, int me, double bytes,
                double step_overhead_s);
/* The whole time coll_run takes for member `me` alone (every other member passive) when no flow but
 * its own crosses its links and its successors' (the replay knows when: sim/replay.c), without
 * simulating it: each of me's flows at the bandwidth of the narrowest link of its route shared by
 * me's flows on it (CM02 without cross-traffic: a flow takes latency + size / rate, flows sharing a
 * link share it equally); then the latencies and overheads coll_run returns. */
double coll_alone_seconds(coll_algo a, graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s);
/* coll_alone_seconds in the two parts coll_run spends them in for member `me`, the only active one: the wait
 * for its flows (returned; what sg_comm_wait_all takes when they are alone on their links) and what coll_run
 * then returns for the caller to owe (*owed_s: latencies, overheads, the slowest role's difference). Their sum
 * is coll_alone_seconds. Not for hier (several domains: run as phases). */
double coll_alone_wait_seconds(coll_algo a, graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s,
                               double *owed_s);

#endif
