/* whatif -- the platform what-if values a user sets on top of a profile
 * (InfiniBand and NVLink bandwidth, NICs per node, memory per GPU, the
 * fabric, its leaf groups and their oversubscription): their
 * option and column names, their allowed ranges (those of the profile
 * file, platforms/profile.c) and applying them. The command line
 * (--ib-gbps ...), table columns (ib_gbps ...) and sweep axes all go
 * through here, so they accept and refuse the same values.
 *
 * Owns: plat_whatif. May not touch: the profile's file format.
 */
#ifndef WHATIF_H
#define WHATIF_H

#include <glib.h>

#include "profile.h"

typedef enum {
  WHATIF_IB_GBPS, WHATIF_NVLINK_GBPS, WHATIF_NICS_PER_NODE, WHATIF_GPU_MEMORY, WHATIF_FABRIC,
  WHATIF_LEAF_NODES, WHATIF_OVERSUBSCRIPTION, WHATIF_N
} whatif_axis;

/* 0 leaves the profile's value. The fabric is a plat_fabric (fabric.h), its values named. leaf_nodes 0
 * (no leaf groups: one non-blocking fabric) is a value a user sets, held as WHATIF_NO_LEAVES. */
#define WHATIF_NO_LEAVES (-1.0)
typedef struct plat_whatif {
  double v[WHATIF_N];
} plat_whatif;

const char *whatif_option(whatif_axis a); /* "ib-gbps" */
const char *whatif_column(whatif_axis a); /* "ib_gbps" */
/* Parse one value of axis a; `field` names it in the error ("--ib-gbps", "ib_gbps"). */
gboolean whatif_parse(whatif_axis a, const char *field, const char *s, double *out, GError **err);
/* The profile's own value of axis a (memory: its capacity). */
double whatif_profile_value(whatif_axis a, const gpu_profile *p);
/* Value v of axis a as the outputs write it ("%.10g"; the fabric: its name). Caller frees. */
char *whatif_format(whatif_axis a, double v);
/* "ib_gbps 200, nvlink_gbps 2400, ...": every axis's value on p (memory: capacity_gib), in axis order,
 * for the outputs that record what they were computed with. Caller frees. */
char *whatif_describe(const gpu_profile *p, double capacity_gib);
/* Apply w to p and to the memory capacity *capacity_gib (left as it is where w sets none): FALSE
 * with err when the NICs do not divide the node. */
gboolean whatif_apply(const plat_whatif *w, gpu_profile *p, double *capacity_gib, GError **err);

#endif
