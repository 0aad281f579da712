/* traffic_class -- the one table of communication classes a task graph's groups carry (tp, cp, dp, dp-cp,
 * pp, ep, other): each class's name (the graph file's `class`, the group labels the generator writes), how
 * the time breakdown counts a collective of the class (by phase, as pipeline waiting, or in a category of its
 * own: ep's all-to-alls are ep-comm), and whether its group size is the tensor-parallel degree. category.c (an event's category: the timeline's and SimGrid's Paje states), traces/ and analysis/ read a
 * group's class from here; nobody compares label strings.
 *
 * Owns: the class table. May not touch: models, layouts, hardware, SimGrid.
 */
#ifndef TRAFFIC_CLASS_H
#define TRAFFIC_CLASS_H

#include <glib.h>

#include "category.h"

typedef enum { TC_OTHER, TC_TP, TC_CP, TC_DP, TC_DP_CP, TC_PP, TC_EP, TC_N } traffic_class;

/* Where the time breakdown counts a collective of a class. BY_PHASE: a layer's communication (tp-comm) in
 * the forward and backward, a gradient's (dp-comm) in the dp and optimizer phases; PIPELINE: always
 * pp-wait (it waits for the pipeline to drain: the grad-norm all-reduce over the pipeline group). */
typedef enum { TC_COUNT_BY_PHASE, TC_COUNT_PIPELINE } tc_count;

typedef struct tc_info {
  const char *name;    /* the graph file's `class` and the generator's group label */
  tc_count count;      /* how the breakdown counts its collectives */
  gboolean tp_degree;  /* its group's size is the tensor-parallel degree (traces: the dp replica of a rank) */
  /* BY_PHASE: the breakdown category (category.h) of its traffic in a layer's forward, backward
   * and recompute: its collectives and, for the class whose ring it is (context parallelism's KV ring,
   * GRAPH_P2P_LAYER), its layer messages; the dp and optimizer phases' traffic is always dp-comm */
  tl_cat layer_category;
  gboolean in_replica; /* its groups lie inside one data-parallel replica: the default trace follows them */
} tc_info;

/* The class of a layer's point-to-point messages (graph.h, GRAPH_P2P_LAYER): context parallelism's ring. */
#define TC_LAYER_P2P TC_CP

const tc_info *tc_info_of(traffic_class c);
const char *tc_name(traffic_class c);
/* The class named `name`, or -1. */
int tc_from_name(const char *name);
/* "tp, cp, ..." for error messages (static string). */
const char *tc_names_list(void);

#endif
