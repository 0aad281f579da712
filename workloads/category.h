/* category -- the one table of a step's time categories (forward, backward, recompute, tp-comm, cp-comm,
 * ep-comm, pp-wait, dp-comm, optimizer, idle): each one's name, where its work runs (the stream the trace
 * writers draw), its colours, its SVG legend, the simulate report's stage-table head, the sweep's CSV column
 * and what the sweep report calls a gap in it; and the category of an event (tl_category), the one rule the
 * timeline (traces/timeline.c) and SimGrid's own Paje states (sim/replay.c) both follow. Every writer reads
 * its names and colours from here: a new category is a row of this table (and, for a traffic class's
 * layer traffic, its layer_category in traffic_class.c). It lives in workloads/ because the lowest readers,
 * traffic_class.c and sim/, need it; its names keep the tl_ (timeline) prefix every reader knows them by.
 *
 * Owns: the categories, streams and the event -> category rule. May not touch: models, hardware, SimGrid.
 */
#ifndef CATEGORY_H
#define CATEGORY_H

#include <glib.h>

typedef enum {
  TL_FORWARD,
  TL_BACKWARD,
  TL_RECOMPUTE,
  TL_TP_COMM,
  TL_CP_COMM,
  TL_EP_COMM, /* expert-parallel all-to-all (traffic class ep: its layer_category) */
  TL_PP_WAIT,
  TL_DP_COMM,
  TL_OPTIMIZER,
  TL_IDLE, /* the gaps: the step time minus the rest (the last row, past every busy one) */
  TL_N
} tl_cat;

/* Streams a GPU runs its events on, as drawn by the trace writers: compute kernels, and one stream per
 * communication kind (a Chrome trace's thread per GPU and stream, in this order). */
typedef enum { TL_STREAM_COMPUTE, TL_STREAM_TP, TL_STREAM_CP, TL_STREAM_PP, TL_STREAM_DP, TL_STREAM_EP, TL_STREAM_N } tl_stream;

typedef struct tl_cat_info {
  const char *name;        /* the timeline's, Paje state's, Chrome category's and CSV kind; the JSON breakdown's <name>_s */
  const char *legend;      /* the SVG legend */
  const char *gap;         /* what the sweep report calls a gap in it (its JSON key) */
  const char *column;      /* the sweep CSV's column */
  const char *head;        /* the simulate report's stage-table head */
  const char *svg_colour;  /* CSS */
  const char *paje_colour; /* "r g b", SimGrid's state and traces/paje.c's */
  tl_stream stream;        /* where its work runs */
  gboolean compute;        /* counted in the report's compute_s */
  gboolean when_present;   /* the stage table shows it only where a stage has some (a layout without it keeps its table) */
  gboolean late_column;    /* sweep CSV: a column added after the first table's (after moe_imbalance; optional in a
                            * CSV from before it) */
} tl_cat_info;

const tl_cat_info *tl_cat_info_of(tl_cat c);
const char *tl_cat_name(tl_cat c);
/* The category named `name`, or -1. */
int tl_cat_from_name(const char *name);
tl_stream tl_stream_of(tl_cat c);
const char *tl_stream_name(tl_stream s);

/* Category of an event: send/recv and collectives over a pipeline-counted class (pp) are pp-wait (waiting for
 * the pipeline), other collectives dp-comm in the dp and optimizer phases and in a layer their class's
 * layer_category (traffic_class.c: tp-comm, cp-comm, ep-comm); a layer's send/recv (GRAPH_P2P_LAYER: the
 * context-parallel KV ring) is its class's, cp-comm; a compute event its phase's. */
struct graph;
struct graph_event;
tl_cat tl_category(const struct graph *g, const struct graph_event *e);

#endif
