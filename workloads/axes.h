/* axes -- the table of parallel axes: every way a training step is split over GPUs (tp, cp, dp, pp; ep next)
 * declared once -- its name, option, CSV column, help line, sweep default, valid values, position in the rank
 * order, what it shards, and the group its collectives run over. The rank order, the groups, the generator's
 * group look-ups, memory sharding, the footprint, the output columns and trust read this table; how to add
 * an axis: docs/axes.md.
 *
 * Owns: the axis table and reading/writing an axis' degree in a layout.
 * May not touch: ranks and groups (mesh.h), hardware, task graphs, the simulator.
 */
#ifndef AXES_H
#define AXES_H

#include <glib.h>

struct layout;

/* The axes in Megatron-Core's rank order, fastest-varying first (parallel_state.py's default order
 * "tp-cp-ep-dp-pp"). ep and etp are folded axes (axis_info.folded): Megatron's "parallel folding" puts the expert
 * layers on the same ranks in a second order, etp-ep-edp-pp (mesh.h mesh_init_expert), with the expert
 * data-parallel edp = tp*cp*dp / (etp*ep); in the dense layers' order their degree is 1. */
typedef enum { AXIS_TP, AXIS_CP, AXIS_EP, AXIS_DP, AXIS_PP, AXIS_ETP, AXIS_N } axis_id;

/* A set of axes as a bit mask: AXIS_BIT(AXIS_DP) | AXIS_BIT(AXIS_CP) is Megatron's dp-cp. */
#define AXIS_BIT(a) (1u << (a))
/* The folded (expert) axes: they do not multiply the world. */
#define AXIS_FOLDED (AXIS_BIT(AXIS_EP) | AXIS_BIT(AXIS_ETP))
/* Every axis of the dense layers' order: the world is their product. */
#define AXIS_ALL (((1u << AXIS_N) - 1) & ~AXIS_FOLDED)

/* What an axis splits across its ranks (bits of axis_info.shards). */
enum {
  AXIS_SHARDS_PARAMS = 1u << 0,      /* each rank holds 1/size of the weights (tp: within a layer; pp: layers) */
  AXIS_SHARDS_ACTIVATIONS = 1u << 1, /* each rank holds 1/size of a micro-batch's activations (tp with sp, cp) */
  AXIS_REPLICATES_WEIGHTS = 1u << 2, /* its ranks hold the same weights: gradients are reduced and ZeRO shards
                                      * the optimizer states over the product of these axes (Megatron's dp-cp) */
};

typedef struct axis_info {
  const char *name;        /* "tp": the layout string's, the graph's group label, trust's */
  const char *option;      /* "--tp" (NULL: not an option, the derived dp) */
  const char *column;      /* the CSV column of sweep and predict tables (NULL: not a column) */
  gboolean column_optional; /* a table without the column (from before the axis) reads degree 1 */
  const char *help;        /* the help line's text after the option's name */
  const char *sweep_default; /* what a sweep enumerates when the axis is not listed, in words */
  int max;                 /* the largest degree an option may give (divisibility: layout_validate) */
  gboolean derived;        /* its degree is gpus / (the others' product): dp */
  gboolean listable;       /* a sweep takes a list of values for it */
  gboolean mirrored;       /* ranks along it run the same program (the generator's symmetry: mirrors) */
  gboolean stage;          /* the pipeline axis: neighbours along it hand activations on */
  gboolean folded;         /* an expert axis (ep, etp): degree 1 in the dense order, its groups those of the expert
                            * order over the same ranks (mesh_init_expert); not in the world's product */
  unsigned shards;         /* AXIS_SHARDS_* bits */
  unsigned group;          /* the axes of the group its collectives run over (AXIS_BIT mask, its own among them):
                            * dp's is dp-cp, the ranks that hold the same weights (Megatron's gradient group) */
  gsize offset;            /* of its degree (an int) in struct layout */
} axis_info;

const axis_info *axis_get(axis_id a);
/* The axis of a name ("tp"), or -1. */
int axis_by_name(const char *name);

/* The degree of an axis in a layout, and setting it (a derived axis is set by layout_validate). */
int axis_size(const struct layout *l, axis_id a);
void axis_set_size(struct layout *l, axis_id a, int v);
/* The expert data-parallel degree of Megatron's folding: tp*cp*dp / (etp*ep), the ranks of a stage holding the
 * same experts (their gradients are reduced, and the distributed optimizer shards, over it). */
int axis_edp(const struct layout *l);
/* The product of the degrees of the axes in a mask. */
gint64 axis_product(const struct layout *l, unsigned mask);
/* The mask of the axes whose info has every bit of `shards` set (e.g. AXIS_REPLICATES_WEIGHTS). */
unsigned axis_mask_sharding(unsigned shards);
/* The mask of the mirrored axes (axis_info.mirrored), of the stage axis (axis_info.stage). */
unsigned axis_mask_mirrored(void);
unsigned axis_mask_stage(void);

/* A group's label: its axes' names, slowest first, joined by '-', leaving out those of degree 1 but the
 * first-named axis `own` ("dp-cp" at cp 2, "dp" at cp 1; Megatron-Core's names). */
void axis_group_label(const struct layout *l, axis_id own, char *out, gsize n);

#endif
