/* timeline -- what was seen: for every rank, the intervals of one simulated
 * step, each with its category (forward, backward, recompute, tp-comm,
 * pp-wait, dp-comm, optimizer). Built from a graph and its replay; every
 * output format (Paje aside, which SimGrid writes during the run) and every
 * metric of analysis/ reads it, so they agree by construction.
 *
 * A mirror rank's intervals are its source's before active_from (identical
 * by symmetry) and its own after: the timeline references, never copies.
 *
 * Owns: the interval view and categories. May not touch: SimGrid, metrics.
 */
#ifndef TIMELINE_H
#define TIMELINE_H

#include <glib.h>

#include "sim/replay.h"
#include "workloads/graph.h"

typedef enum {
  TL_FORWARD,
  TL_BACKWARD,
  TL_RECOMPUTE,
  TL_TP_COMM,
  TL_PP_WAIT,
  TL_DP_COMM,
  TL_OPTIMIZER,
  TL_IDLE,
  TL_N
} tl_cat;

typedef struct tl_interval {
  double start_s, end_s;
  tl_cat cat;
  const graph_event *ev; /* NULL for idle */
  int index;             /* event index in the program */
} tl_interval;

typedef struct timeline {
  const graph *g;
  const replay_result *res;
  double step_time_s;
} timeline;

timeline tl_make(const graph *g, const replay_result *res);
tl_cat tl_category(const graph_event *e);
const char *tl_cat_name(tl_cat c);

/* Call fn for every interval of `rank` in time order. Returns FALSE if fn stopped early. */
typedef gboolean (*tl_visit_fn)(const tl_interval *iv, gpointer data);
gboolean tl_foreach(const timeline *tl, int rank, tl_visit_fn fn, gpointer data);
/* Seconds per category for `rank` (idle = step time minus the rest). */
void tl_rank_seconds(const timeline *tl, int rank, double out[TL_N]);
/* Stage of a rank, from the graph meta (ranks_per_stage); 0 when unknown. */
int tl_stage_of(const timeline *tl, int rank);
int tl_stages(const timeline *tl);

#endif
