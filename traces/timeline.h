/* timeline -- what was seen: for every rank, the intervals of one simulated
 * step, each with its category (forward, backward, recompute, tp-comm,
 * pp-wait, dp-comm, optimizer). Built from a graph and its replay; every
 * output format and every metric of analysis/ reads it, so they agree by
 * construction.
 *
 * A mirror rank's intervals are its source's before active_from (identical
 * by symmetry) and its own after: the timeline references, never copies.
 * Its source's events name the source's peers and groups; the interval says
 * the mirror's own (tl_interval.peer), so no writer translates them again.
 *
 * Owns: the interval view (the categories: workloads/category.h). May not touch: SimGrid, metrics.
 */
#ifndef TIMELINE_H
#define TIMELINE_H

#include <glib.h>

#include "sim/replay.h"
#include "workloads/category.h" /* the categories and streams (tl_cat, tl_stream), one table */
#include "workloads/graph.h"

typedef struct tl_interval {
  double start_s, end_s;
  tl_cat cat;
  const graph_event *ev; /* NULL for idle */
  int index;             /* event index in the program */
  /* send/recv: the rank at the other end, a mirror's own (graph_peer_for; -1 when its graph does not
   * say); collective: the group it runs over (graph_group_for); -1 otherwise */
  int peer;
} tl_interval;

typedef struct timeline {
  const graph *g;
  const replay_result *res;
  double step_time_s;
} timeline;

timeline tl_make(const graph *g, const replay_result *res);

/* A rank's intervals one at a time, in time order: what tl_foreach yields or, `tiled`, what
 * tl_foreach_tiled yields. A position in the rank's program, never a list of its intervals: a writer
 * can hold one per rank and merge them (traces/paje.c). */
typedef struct tl_cursor {
  const timeline *tl;
  const graph_program *p;
  const graph_event *ev;
  const replay_rank *src; /* where events [0, first) were executed: a mirror's source */
  const replay_rank *own;
  int n, first, i;
  GHashTable *peers; /* a mirror's source's peer -> its own, created on first use */
  gboolean tiled;
  gboolean main;      /* stream 0 only, with the waits for the other stream (tiled: always) */
  double t;           /* tiled: end of the last interval yielded */
  gboolean held;      /* tiled: `next` is an event interval held back behind the gap before it */
  tl_interval next;
} tl_cursor;
void tl_cursor_init(tl_cursor *c, const timeline *tl, int rank, gboolean tiled);
/* The next interval into *iv; FALSE when there is none left. */
gboolean tl_cursor_next(tl_cursor *c, tl_interval *iv);
void tl_cursor_clear(tl_cursor *c);

/* Call fn for every interval of `rank` in time order (a rank with two streams: in program order, both
 * streams'). Returns FALSE if fn stopped early. */
typedef gboolean (*tl_visit_fn)(const tl_interval *iv, gpointer data);
gboolean tl_foreach(const timeline *tl, int rank, tl_visit_fn fn, gpointer data);
/* The compute stream's view (the breakdown's and the energy's): stream 0's intervals, and where it waits for
 * an event of the communication stream (graph.h, graph_dep) the wait as an interval of that event's
 * category (ev NULL), so that communication shows where it is exposed only. The tiled view is the same,
 * with the other gaps as idle. Without streams: tl_foreach's intervals. */
gboolean tl_foreach_main(const timeline *tl, int rank, tl_visit_fn fn, gpointer data);
/* Seconds per category for `rank` (idle = step time minus the rest). */
void tl_rank_seconds(const timeline *tl, int rank, double out[TL_N]);
/* Like tl_foreach, but also yields the idle gaps (ev NULL, cat TL_IDLE,
 * index and peer -1), the tail after the rank finished included: the intervals tile
 * [0, step time]. */
gboolean tl_foreach_tiled(const timeline *tl, int rank, tl_visit_fn fn, gpointer data);

/* Short operator name of an event: "qkv", "all-reduce", "send", ...; "idle" for NULL. */
const char *tl_event_op_name(const graph *g, const graph_event *e);

/* A rank's model chunks (interleaved schedules: virtual stage chunk * pp + stage), found from its program: the
 * layers its compute events run, sorted, in maximal runs of consecutive indices, chunk c the c-th run (the graph
 * carries no chunk; a stage's chunks are pp - 1 virtual stages apart, so two of them are adjacent only where the
 * stages between hold no layer). Events without a layer (embedding, head, communication) have none: -1. */
typedef struct tl_chunks {
  int n;             /* chunks the rank holds (0: no layer at all) */
  int n_layers;      /* size of chunk_of */
  int *chunk_of;     /* layer -> chunk, -1 for a layer the rank does not run */
} tl_chunks;
void tl_chunks_init(tl_chunks *c, const timeline *tl, int rank);
int tl_chunk_of(const tl_chunks *c, const graph_event *e);
void tl_chunks_clear(tl_chunks *c);

/* Stage of a rank, from the graph meta (ranks_per_stage); 0 when unknown. */
int tl_stage_of(const timeline *tl, int rank);
int tl_stages(const timeline *tl);
/* Tensor-parallel degree (size of the groups labelled "tp"; 1 when none). */
int tl_tp_degree(const timeline *tl);
/* Data-parallel replica of a rank (rank = stage*dp*tp + replica*tp + tp_rank). */
int tl_dp_replica_of(const timeline *tl, int rank);
int tl_gpus_per_node(const timeline *tl);

/* A selection of ranks for the trace writers. */
typedef struct tl_ranks {
  int n;
  int *rank; /* ascending, owned */
} tl_ranks;
/* Parse "all", "dp0" (data-parallel replica 0: rank 0 and every rank it reaches through the groups of a class
 * inside one replica, traffic_class.h's in_replica: its tensor-, context- and pipeline-parallel partners) or a
 * list "0-7,16,24-25" naming each rank once; NULL means the default: all ranks up to `all_limit` GPUs, else dp0. */
/* Check a --trace-ranks spec against a world size before anything is simulated. */
gboolean tl_ranks_spec_check(const char *spec, int world, GError **err);
gboolean tl_ranks_parse(const timeline *tl, const char *spec, int all_limit, tl_ranks *out, GError **err);
void tl_ranks_clear(tl_ranks *r);

/* Memory a GPU holds: the program's mem_static_bytes + activations (the
 * running sum of mem_delta_bytes) * act_factor + const_bytes. The factor and
 * constant carry the profile's overheads (fragmentation, CUDA context, NCCL
 * buffers) so that the traced peak is the reported peak; {0, 1} = the graph alone. */
typedef struct tl_mem_model {
  double const_bytes, act_factor;
} tl_mem_model;
double tl_mem_bytes(const timeline *tl, int rank, const tl_mem_model *mm, double activation_bytes);
/* Dynamic memory around one event, as workloads/memory.h's walk counts it:
 * `*during` while it runs (what it allocates and its transient buffers),
 * `*after` once it ended; *act_bytes (the level before) advances to *after.
 * FALSE when the event changes nothing. */
gboolean tl_mem_step(const graph_event *e, double *act_bytes, double *during, double *after);

#endif
