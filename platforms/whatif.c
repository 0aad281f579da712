/* whatif -- see whatif.h. */
#include "whatif.h"

#include <errno.h>
#include <stdlib.h>

#include "common/lsim_error.h"
#include "fabric.h"

/* the profile's ranges: link bandwidths 1e6..1e14 B/s (0.008..8e5 Gbit/s), memory 0.1..1e5 GiB */
static const struct {
  const char *option, *column;
  double lo, hi;
  gboolean integer;
} AXES[WHATIF_N] = {
    {"ib-gbps", "ib_gbps", 0.008, 8e5, FALSE},
    {"nvlink-gbps", "nvlink_gbps", 0.008, 8e5, FALSE},
    {"nics-per-node", "nics_per_node", 1, 1024, TRUE},
    {"gpu-memory", "gpu_memory", 0.1, 1e5, FALSE},
    {"fabric", "fabric", FABRIC_FAT_TREE, FABRIC_RAIL_PXN, TRUE}, /* by name */
    {"leaf-nodes", "leaf_nodes", 0, 1e6, TRUE}, /* 0: no leaf groups (WHATIF_NO_LEAVES) */
    {"oversubscription", "oversubscription", 1, 1e3, FALSE},
};

const char *whatif_option(whatif_axis a) { return AXES[a].option; }
const char *whatif_column(whatif_axis a) { return AXES[a].column; }

gboolean whatif_parse(whatif_axis a, const char *field, const char *s, double *out, GError **err)
{
  if (a == WHATIF_FABRIC) {
    int f;
    if (fabric_parse(s, &f)) return *out = f, TRUE;
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: invalid value '%s' (allowed: %s)", field, s, FABRIC_ALLOWED);
    return FALSE;
  }
  char *end;
  errno = 0;
  double v = AXES[a].integer ? (double)strtol(s, &end, 10) : strtod(s, &end);
  gboolean ok = !errno && end != s && !*end && (g_ascii_isdigit(*s) || *s == '.') && v >= AXES[a].lo && v <= AXES[a].hi;
  if (ok) {
    *out = a == WHATIF_LEAF_NODES && v == 0 ? WHATIF_NO_LEAVES : v;
    return TRUE;
  }
  /* the bounds as lsim_number writes them: a count in full (1000000, not %g's 1e+06) */
  g_autofree char *lo = lsim_number(AXES[a].lo), *hi = lsim_number(AXES[a].hi);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: invalid value '%s' (allowed: %s from %s to %s)", field, s,
              AXES[a].integer ? "an integer" : "a number", lo, hi);
  return FALSE;
}

double whatif_profile_value(whatif_axis a, const gpu_profile *p)
{
  switch (a) {
  case WHATIF_IB_GBPS: return p->ib_bytes_per_s * 8 / 1e9;
  case WHATIF_NVLINK_GBPS: return p->nvlink_bytes_per_s * 8 / 1e9;
  case WHATIF_NICS_PER_NODE: return p->nics_per_node;
  case WHATIF_FABRIC: return p->fabric;
  case WHATIF_LEAF_NODES: return p->leaf_nodes;
  case WHATIF_OVERSUBSCRIPTION: return p->oversubscription;
  default: return p->memory_gib;
  }
}

char *whatif_format(whatif_axis a, double v)
{
  return a == WHATIF_FABRIC ? g_strdup(fabric_name((int)v)) : g_strdup_printf("%.10g", v);
}

char *whatif_describe(const gpu_profile *p, double capacity_gib)
{
  GString *s = g_string_new(NULL);
  for (int a = 0; a < WHATIF_N; a++) {
    double v = a == WHATIF_GPU_MEMORY ? capacity_gib : whatif_profile_value((whatif_axis)a, p);
    if (a == WHATIF_FABRIC) g_string_append_printf(s, ", %s %s", AXES[a].column, fabric_name((int)v));
    else g_string_append_printf(s, "%s%s %g", a ? ", " : "", AXES[a].column, v);
  }
  return g_string_free(s, FALSE);
}

gboolean whatif_apply(const plat_whatif *w, gpu_profile *p, double *capacity_gib, GError **err)
{
  gboolean any = FALSE;
  for (int a = 0; a < WHATIF_N; a++) any |= w->v[a] != 0;
  if (!any) return TRUE; /* the profile as it is */
  if (w->v[WHATIF_IB_GBPS] > 0) p->ib_bytes_per_s = w->v[WHATIF_IB_GBPS] * 1e9 / 8;
  if (w->v[WHATIF_NVLINK_GBPS] > 0) p->nvlink_bytes_per_s = w->v[WHATIF_NVLINK_GBPS] * 1e9 / 8;
  if (w->v[WHATIF_NICS_PER_NODE] > 0) p->nics_per_node = (int)w->v[WHATIF_NICS_PER_NODE];
  if (w->v[WHATIF_GPU_MEMORY] > 0) *capacity_gib = w->v[WHATIF_GPU_MEMORY];
  if (w->v[WHATIF_FABRIC] > 0) p->fabric = (int)w->v[WHATIF_FABRIC];
  if (w->v[WHATIF_LEAF_NODES] != 0) p->leaf_nodes = w->v[WHATIF_LEAF_NODES] < 0 ? 0 : w->v[WHATIF_LEAF_NODES];
  if (w->v[WHATIF_OVERSUBSCRIPTION] > 0) p->oversubscription = w->v[WHATIF_OVERSUBSCRIPTION];
  int node = p->gpus_per_node;
  if (node % p->nics_per_node == 0 && p->nics_per_node <= node) return TRUE;
  g_autoptr(GString) allowed = g_string_new("1");
  for (int d = 2; d <= node; d++)
    if (node % d == 0) g_string_append_printf(allowed, ", %d", d);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "nics_per_node: %d does not divide the %d GPUs of a node (allowed: %s)",
              p->nics_per_node, node, allowed->str);
  return FALSE;
}
