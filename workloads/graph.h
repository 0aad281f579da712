/* graph -- the task graph of one training step: for every GPU rank, the
 * ordered program of events it executes. This is the contract between
 * workloads/ (which writes it) and sim/ (which replays it): anything the
 * replay needs is in here; sim/ knows nothing about transformers.
 *
 * Owns: the event and graph structs, their JSON form (docs/graph-format.md).
 * May not touch: models, layouts, hardware, SimGrid.
 *
 * Streams: a rank runs its events on one of GRAPH_STREAMS streams (CUDA
 * streams): stream 0, the compute stream, and stream 1, a communication
 * stream. Events of one stream are sequential: the next starts when the
 * previous ended, in program order (the study's code uses stream 0 alone and
 * overlaps nothing; see docs/model.md). Across a rank's streams the only
 * order is the program's dependencies (graph_dep: an event starts once an
 * earlier event of the program ended). Cross-rank dependencies are the
 * matched send/recv pairs and the collectives.
 *
 * Symmetry: a rank may be a *mirror* of another rank q. It stays passive
 * (its work is identical to q's and uses disjoint links) until q reaches
 * event `active_from`; from there it executes q's events itself, with the
 * groups it uses translated by `group_map`. Members of a collective group
 * that never execute it are passive: active members send to them as in a
 * ring, and their own (identical) ring steps are not simulated. A passive
 * mirror's sends and receives (its source's, not simulated) have their own
 * other end: where the source talks to peer x, the mirror talks to x's
 * counterpart in a group it maps (graph_peer_for).
 */
#ifndef GRAPH_H
#define GRAPH_H

#include <glib.h>
#include <stdint.h>

#include "traffic_class.h"

/* The graph file format this layoutsim writes and reads (docs/graph-format.md); versions 1 to 4 are read
 * through a converter (bf16 events, groups classed by their label, meta strings read as numbers; an attention
 * event's numeric variant as its class). */
#define GRAPH_FORMAT_VERSION 5

typedef enum { EV_COMPUTE, EV_COLLECTIVE, EV_SEND, EV_RECV, EV_N_KINDS } graph_kind;
/* COLL_ALL_TO_ALL: `bytes` is what each rank sends in all, bytes/n to each member (itself included) */
typedef enum { COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_ALL_TO_ALL, COLL_N } graph_coll;

/* What part of the step an event belongs to (drives the time breakdown). */
typedef enum { PH_FORWARD, PH_BACKWARD, PH_RECOMPUTE, PH_DP, PH_OPTIMIZER, PH_N } graph_phase;

/* What a compute event costs, the only thing the replay asks of it (platforms/kernel_cost.h): a GEMM
 * (m x k).(k x n), an attention kernel of a kind (variant), or a memory-bound pass (bytes; flops if any). */
typedef enum { COST_NONE, COST_GEMM, COST_ATTENTION, COST_MEMORY, COST_N } graph_cost;

/* An attention event's efficiency class (its variant; the file's "kernel", by name): which kernel the code runs,
 * the score matrix materialized in HBM (torch, fused softmax) or a FlashAttention kernel of the first or second
 * generation. The graph names the class only; the stack says how its kernel of the class runs and how fast (its
 * "attention" table, platforms/stack.h): a new kernel is a row here and an entry in the stacks' tables. */
enum { GRAPH_ATTN_SCORES, GRAPH_ATTN_FLASH1, GRAPH_ATTN_FLASH2, GRAPH_ATTN_N };
/* The name of an attention class ("scores", "flash1", "flash2"), and the class of a name (-1: none). */
const char *graph_attn_name(int c);
int graph_attn_from_name(const char *name);

/* The data type a compute event's math runs in (its GEMMs' inputs: FP8 GEMMs take FP8 operands and
 * accumulate in FP32) or a transfer's elements travel in. bf16 is the default and every version 1-3 file's. */
typedef enum { DT_BF16, DT_FP16, DT_FP8_E4M3, DT_FP8_E5M2, DT_MXFP8, DT_FP32, DT_N } graph_dtype;
/* Whether a dtype is one of the 8-bit floating formats (the profile's FP8 peak, the stack's FP8 efficiency). */
gboolean graph_dtype_is_fp8(graph_dtype d);

/* An event's op is a label for people (the traces, the breakdown by operator): an index into the graph's
 * op_names, which the writer of the graph chooses. Label 0 is "comm", every graph's first. */
#define GRAPH_OP_COMM 0
/* Most labels a graph may hold, and the longest. */
#define GRAPH_MAX_OPS 4096
#define GRAPH_MAX_OP_NAME 31

typedef struct graph_event {
  uint8_t kind;    /* graph_kind */
  uint8_t cost;    /* compute: graph_cost; COST_NONE for communication */
  uint8_t phase;   /* graph_phase */
  uint8_t variant : 4; /* collective: graph_coll; attention: its efficiency class (GRAPH_ATTN_*);
                        * backward GEMM: 0 dgrad + wgrad, 1 dgrad only, 2 wgrad only; send/recv: GRAPH_P2P_* bits */
  uint8_t dtype : 4;   /* graph_dtype (the event stays 64 bytes) */
  uint16_t op : 12;    /* label: index into the graph's op_names, < GRAPH_MAX_OPS (for people; the replay never reads it) */
  uint16_t stream : 2; /* the rank's stream it runs on: 0 compute, 1 communication, 2 tensor-parallel
                        * communication overlapped with GEMMs (< GRAPH_STREAMS) */
  uint16_t captured : 1;     /* compute: its kernels replay from a partial CUDA graph (a layer's part captured by
                              * Transformer Engine, the layout's cuda_graph_scope): no per-kernel launch gap and no
                              * host dispatch (graph_event_launches_issued; docs/moe.md "CUDA graph scope") */
  uint16_t graph_launch : 1; /* captured: the graph's first event, whose one launch starts the graph: it pays one
                              * launch gap and one host dispatch for the whole graph */
  int16_t layer;   /* layer index for people, -1 when none */
  int32_t micro_batch; /* -1 when none */
  int32_t peer;        /* send/recv: the other global rank; collective: group id */
  int32_t m, n, k;     /* GEMM shape (m x k) . (k x n); attention: m = batch * heads per rank, n = sequence,
                        * k = head size; memory pass: elements (for people) */
  int32_t launches;    /* compute: kernel launches this event stands for (>= 1) */
  double flops;        /* model FLOPs this event executes */
  double bytes;        /* compute: HBM bytes moved; send/recv: payload; collective: per-rank buffer */
  double mem_delta_bytes;     /* change of the rank's allocated memory when the event ends (docs/memory.md) */
  double mem_transient_bytes; /* extra memory held only while the event runs (workspaces, temporaries), >= 0 */
} graph_event;

/* A dependency across streams: event `event` of a program starts only once its earlier event `after` has
 * ended (its stream's order aside). */
typedef struct graph_dep {
  int32_t event, after;
} graph_dep;

/* Streams a rank has (graph_event.stream, 2 bits). */
#define GRAPH_STREAMS 3
G_STATIC_ASSERT(GRAPH_STREAMS <= 4);
G_STATIC_ASSERT(sizeof(graph_event) == 64);

/* The kernel launches a compute event makes the host issue and the GPU wait a launch gap for: its launches when
 * eager; inside a partial CUDA graph none, but the graph's own one launch at its first event (graph_launch). A
 * step captured whole (graph_meta.cuda_graph) issues none: the caller's case. */
static inline int graph_event_launches_issued(const graph_event *e)
{
  return e->captured ? e->graph_launch : e->launches;
}

typedef struct graph_program {
  int rank;
  GArray *events;   /* of graph_event; NULL for a mirror */
  GArray *deps;     /* of graph_dep, by increasing event, one at most per event; NULL: none (and for a mirror) */
  int mirror_of;    /* -1 for an explicit program */
  int active_from;  /* mirror: first event index of mirror_of's program it executes */
  GHashTable *group_map; /* mirror: group id -> group id (GINT_TO_POINTER), may be NULL */
  /* Memory held for the whole step (docs/memory.md): mem_static_bytes is the
   * sum of the four parts; the timeline of the events adds to it. */
  double mem_params_bytes;    /* bf16 weights */
  double mem_grads_bytes;     /* bf16 gradients (param.grad) */
  double mem_optimizer_bytes; /* fp32 master weights + AdamW moments (+ fp32 grads without ZeRO-1) */
  double mem_buffers_bytes;   /* persistent non-parameter buffers (rotary tables) */
  double mem_static_bytes;
} graph_program;

typedef struct graph_group {
  GArray *ranks; /* of int, in ring order */
  char label[16]; /* "tp", "dp", ... for people */
  uint8_t tclass; /* traffic_class (traffic_class.h): what the replay and the traces read */
} graph_group;

/* The layout's switches the graph carries, for the replay to read (layout.h LAYOUT_SHOW_META): each an int member
 * of graph_meta, 1 on and 0 off, and the meta entry of the same name (graph_private.h META_KEYS). One X(name) each:
 *   cuda_graph: the step replays as one captured CUDA graph (no per-kernel launch gap or host dispatch:
 *               platforms/kernel_cost.h, docs/moe.md "CUDA graphs"); 0 eager */
#define GRAPH_META_SWITCHES(X) X(cuda_graph)

/* What a graph says of itself (the file's "meta"): descriptions for people, the platform it was generated
 * for, and the numbers the metrics and the traces read. 0 (or "") where unknown. The texts of any length are
 * owned by the graph, never NULL ("" where unknown; set with graph_meta_set_text), freed by graph_free:
 *   layout: as long as the layout makes it (a --pipeline-layout, the switches, expert parallelism);
 *   profile, stack: the --profile and --stack `graph` ran with (a shipped name, or a file's path as given), and
 *   stack_set: the stack's keys set (--stack-set, "KEY=VALUE;KEY=VALUE"): what `replay` runs on by default
 *   (docs/graph-format.md, "The platform"). */
typedef struct graph_meta {
  char model[64], partition[16], precision[16];
  char *layout, *profile, *stack, *stack_set;
  double tokens_per_step, model_flops_per_step; /* enable tokens/s and MFU */
  int pp, ranks_per_stage;                      /* enable per-stage reports */
  int gpus_per_node;                            /* how ranks group into nodes in the traces */
  int flex_experts, flex_top_k; /* Megatron's flex token dispatcher (DeepEP, HybridEP; the layout's moe_flex_dispatcher):
                                 * the routing (experts, top-k) its ep all-to-alls deduplicate by
                                 * (sim/coll_alltoall_flex.c); 0: the alltoall dispatcher */
#define GRAPH_META_SWITCH_MEMBER(name) int name;
  GRAPH_META_SWITCHES(GRAPH_META_SWITCH_MEMBER) /* the switches above */
#undef GRAPH_META_SWITCH_MEMBER
} graph_meta;

typedef struct graph {
  int world_size;
  GPtrArray *programs; /* graph_program*, index = rank */
  GPtrArray *groups;   /* graph_group*, index = group id */
  graph_meta meta;
  GPtrArray *op_names; /* char*, index = an event's op: labels for people, "comm" first */
} graph;

/* Largest world a graph or a layout may declare: a bound on the integers, not on what runs. What runs is
 * guarded by the footprint estimate (analysis/footprint.h): its memory, and its actors (one SimGrid actor
 * per explicitly simulated rank, each with its own stack mapping: Linux's vm.max_map_count, 65530 by
 * default, runs out a little above 32,000 of them). With symmetry a step of 131,072 GPUs has a few dozen
 * actors (docs/sweep.md, "131,072 GPUs"). */
#define GRAPH_MAX_RANKS 1048576
/* Largest byte count (transfers, memory) and FLOP count an event may carry: far above any real step,
 * and small enough that a byte count converts exactly to SimGrid's integral message sizes. */
#define GRAPH_MAX_BYTES 1e18
#define GRAPH_MAX_FLOPS 1e24

/* A send's variant bits: EAGER, the sender does not wait for the receive (an isend; without it a send is a
 * rendezvous); GRAD_CHANNEL (send and recv), the message travels in its own FIFO between the two ranks,
 * apart from the messages without the bit. */
/* A GEMM's variant bit: it runs beside an overlapped tensor-parallel reduce-scatter that holds a fraction of the
 * SMs (the stack's tp_overlap_sm_fraction; platforms/kernel_cost.c) */
#define GRAPH_GEMM_SM_SHARED 4
#define GRAPH_P2P_EAGER 1
#define GRAPH_P2P_GRAD_CHANNEL 2
/* LAYER (send and recv): the message is part of a layer's work, not the pipeline's (context parallelism's KV
 * ring): the timeline counts its time as tp-comm, not pp-wait, and the host does not wait for it (it is
 * ordered on the GPU's stream, as a collective; a pipeline message returns to the host when it completes). */
#define GRAPH_P2P_LAYER 4

graph *graph_new(int world_size);
void graph_free(graph *g);
/* Set the meta text of any length `key` (layout, profile, stack, stack_set) to a copy of `text`, whole. */
void graph_meta_set_text(graph *g, const char *key, const char *text);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(graph, graph_free)

/* Add a group; returns its id. `ranks` is copied. Its traffic class is the one `label` names (traffic_class.h;
 * TC_OTHER for a label that names none); graph_add_group_class sets it apart from the label. */
int graph_add_group(graph *g, const int *ranks, int n, const char *label);
int graph_add_group_class(graph *g, const int *ranks, int n, const char *label, traffic_class c);
/* The program of `rank` (created empty and explicit on first use). */
graph_program *graph_program_of(graph *g, int rank);
void graph_make_mirror(graph *g, int rank, int mirror_of, int active_from);
void graph_map_group(graph *g, int rank, int from_group, int to_group);
/* Make event `event` of rank's (explicit) program wait for its event `after` (< event); events are added in
 * increasing order. */
void graph_add_dep(graph *g, int rank, int event, int after);
/* The event that event i of explicit program p waits for, or -1. */
int graph_dep_of(const graph_program *p, int i);
/* Whether p (explicit) uses more than stream 0 or has dependencies. */
gboolean graph_program_streamed(const graph_program *p);
/* Events a program executes (its own, or its source's from active_from on). */
const graph_event *graph_program_events(const graph *g, const graph_program *p, int *n_out, int *first_out);
/* The group a rank uses for group id `gid` (mirror translation applied). */
int graph_group_for(const graph_program *p, int gid);
/* The rank at the other end of a send/recv to `peer` in the events of `p`
 * (mirror translation applied). A mirror's is the rank at peer's place in
 * the group its group_map puts where its source uses a group holding both
 * the source and peer, the source's own place holding the mirror (the
 * generator's pipeline group: the mirror's own replica and tensor-parallel
 * rank, next stage). Lowest such group id first; -1 when there is none. */
int graph_peer_for(const graph *g, const graph_program *p, int peer);

gboolean graph_save(const graph *g, const char *path, GError **err);
graph *graph_load(const char *path, GError **err);
/* The same, refusing (err) a file whose text and JSON tree would take more than max_bytes to read
 * (lsim_json_read_file_within; 0: no bound). */
graph *graph_load_within(const char *path, double max_bytes, GError **err);
/* Structural checks: peers and groups in range, sends matched by recvs in order. */
gboolean graph_check(const graph *g, GError **err);

/* The label id of `name` in g, added if new (at most GRAPH_MAX_OPS; -1 beyond). */
int graph_op_id(graph *g, const char *name);
/* The label of op id `op` ("?" if g has none such). */
const char *graph_op_name(const graph *g, int op);
const char *graph_cost_name(graph_cost c);
const char *graph_phase_name(graph_phase ph);
const char *graph_kind_name(graph_kind k);
const char *graph_coll_name(graph_coll c);
const char *graph_dtype_name(graph_dtype d);

#endif
