/* graph_private -- the graph module's private header (graph.c, graph_save.c, graph_load.c, graph_check.c;
 * nothing else includes it): the names of its enumerations as the JSON form spells them, the known meta
 * entries, and a group's ring-order lookup. Public interface: graph.h.
 *
 * Owns: what the graph's files share.
 * May not touch: anything outside the graph module includes this header.
 */
#ifndef GRAPH_PRIVATE_H
#define GRAPH_PRIVATE_H

#include "graph.h"

#include <math.h>
#include <stddef.h>

extern const char *const GRAPH_COST_NAMES[COST_N];
extern const char *const GRAPH_PHASE_NAMES[PH_N];
extern const char *const GRAPH_KIND_NAMES[EV_N_KINDS];
extern const char *const GRAPH_COLL_NAMES[COLL_N];
extern const char *const GRAPH_DTYPE_NAMES[DT_N];
extern const char *const GRAPH_ATTN_NAMES[GRAPH_ATTN_N];

/* Place of `rank` in the ring order of `gr`, -1 when not a member. */
int graph_group_place(const graph_group *gr, int rank);

/* The known meta entries: a string of at most `size` - 1 bytes at `off` (a char array), a string of any length
 * (`heap`: a char * at `off`, owned by the graph, never NULL: "" where unknown), or a number (an integer from 1 to
 * max, max 0: world_size; or a positive number below 1e30). */
typedef struct meta_key {
  const char *key;
  size_t off, size; /* size 0 and not heap: a number */
  gboolean integer;
  int max;
  gboolean heap;
} meta_key;
#define MS(k) {#k, offsetof(graph_meta, k), sizeof ((graph_meta *)NULL)->k, FALSE, 0, FALSE}
#define MH(k) {#k, offsetof(graph_meta, k), 0, FALSE, 0, TRUE}
#define MN(k, integer, max) {#k, offsetof(graph_meta, k), 0, integer, max, FALSE}
#define MSWITCH(k) MN(k, TRUE, 1), /* a layout switch (graph.h GRAPH_META_SWITCHES): 1, absent when off */
/* in the order the files write them: the strings, then the numbers */
static const meta_key META_KEYS[] = {
    MS(model), MH(layout), MS(partition), MS(precision), MH(profile), MH(stack), MH(stack_set), MN(tokens_per_step, FALSE, 0),
    MN(model_flops_per_step, FALSE, 0), MN(pp, TRUE, 0), MN(ranks_per_stage, TRUE, 0), MN(gpus_per_node, TRUE, 4096),
    MN(flex_experts, TRUE, 65536), MN(flex_top_k, TRUE, 65536), GRAPH_META_SWITCHES(MSWITCH)};
#undef MS
#undef MH
#undef MN
#undef MSWITCH
static inline gboolean meta_is_text(const meta_key *k) { return k->size || k->heap; }
/* The text of entry k (a text entry) of m: "" where unknown. */
static inline const char *meta_text(const graph_meta *m, const meta_key *k)
{
  const char *at = (const char *)m + k->off;
  return k->heap ? *(char *const *)at : at;
}
/* Set text entry k of m to a copy of s: the whole of it for a heap entry, at most size - 1 bytes for an array. */
static inline void meta_set_text(graph_meta *m, const meta_key *k, const char *s)
{
  char *at = (char *)m + k->off;
  if (!k->heap) {
    g_strlcpy(at, s, k->size);
    return;
  }
  g_free(*(char **)at);
  *(char **)at = g_strdup(s);
}
static inline gboolean meta_number_ok(const meta_key *k, double d, int world)
{
  int max = k->max ? k->max : world;
  return k->integer ? d >= 1 && d <= max && d == floor(d) : d > 0 && d < 1e30;
}

#endif
