/* graph -- see graph.h. The data model: the graph, its programs, groups, dependencies and mirrors, and
 * the names of its enumerations. Its JSON form is written by graph_save.c, read by graph_load.c, and
 * checked by graph_check.c (graph_private.h holds what they share).
 */
#include "graph_private.h"

#include <stdlib.h>
#include <string.h>

const char *const GRAPH_COST_NAMES[COST_N] = {"none", "gemm", "attention", "memory"};

const char *const GRAPH_PHASE_NAMES[PH_N] = {"forward", "backward", "recompute", "dp", "optimizer"};

const char *const GRAPH_KIND_NAMES[EV_N_KINDS] = {"compute", "collective", "send", "recv"};

const char *const GRAPH_COLL_NAMES[COLL_N] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"};

const char *const GRAPH_DTYPE_NAMES[DT_N] = {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "fp32"};

/* the attention efficiency classes (graph.h GRAPH_ATTN_*): the graph file's "kernel", the stacks' "attention" keys */
const char *const GRAPH_ATTN_NAMES[GRAPH_ATTN_N] = {"scores", "flash1", "flash2"};

G_STATIC_ASSERT(DT_N <= 16); /* graph_event.dtype is 4 bits */
G_STATIC_ASSERT(GRAPH_ATTN_N <= 16); /* and an attention event's variant */

/* analysis/footprint.c counts 64 bytes an event */
G_STATIC_ASSERT(sizeof(graph_event) == 64);

const char *graph_cost_name(graph_cost c) { return GRAPH_COST_NAMES[c]; }

int graph_op_id(graph *g, const char *name)
{
  for (guint i = 0; i < g->op_names->len; i++)
    if (!strcmp(g_ptr_array_index(g->op_names, i), name)) return (int)i;
  if (g->op_names->len >= GRAPH_MAX_OPS) return -1;
  g_ptr_array_add(g->op_names, g_strdup(name));
  return (int)g->op_names->len - 1;
}

const char *graph_op_name(const graph *g, int op)
{
  return op >= 0 && (guint)op < g->op_names->len ? g_ptr_array_index(g->op_names, op) : "?";
}

const char *graph_phase_name(graph_phase ph) { return GRAPH_PHASE_NAMES[ph]; }

const char *graph_kind_name(graph_kind k) { return GRAPH_KIND_NAMES[k]; }

const char *graph_coll_name(graph_coll c) { return GRAPH_COLL_NAMES[c]; }

const char *graph_dtype_name(graph_dtype d) { return GRAPH_DTYPE_NAMES[d]; }

const char *graph_attn_name(int c) { return c >= 0 && c < GRAPH_ATTN_N ? GRAPH_ATTN_NAMES[c] : "?"; }

int graph_attn_from_name(const char *name)
{
  for (int c = 0; c < GRAPH_ATTN_N; c++)
    if (!strcmp(GRAPH_ATTN_NAMES[c], name)) return c;
  return -1;
}

gboolean graph_dtype_is_fp8(graph_dtype d) { return d == DT_FP8_E4M3 || d == DT_FP8_E5M2 || d == DT_MXFP8; }

static void program_free(gpointer data)
{
  graph_program *p = data;
  if (!p) return; /* a rank a partly loaded graph never reached */
  if (p->events) g_array_free(p->events, TRUE);
  if (p->deps) g_array_free(p->deps, TRUE);
  if (p->group_map) g_hash_table_destroy(p->group_map);
  g_free(p);
}

static void group_free(gpointer data)
{
  graph_group *gr = data;
  g_array_free(gr->ranks, TRUE);
  g_free(gr);
}

graph *graph_new(int world_size)
{
  graph *g = g_new0(graph, 1);
  g->world_size = world_size;
  g->programs = g_ptr_array_new_with_free_func(program_free);
  g_ptr_array_set_size(g->programs, world_size);
  g->groups = g_ptr_array_new_with_free_func(group_free);
  g->op_names = g_ptr_array_new_with_free_func(g_free);
  graph_op_id(g, "comm"); /* GRAPH_OP_COMM */
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++) /* the texts of any length: "" until set */
    if (META_KEYS[i].heap) meta_set_text(&g->meta, &META_KEYS[i], "");
  return g;
}

void graph_meta_set_text(graph *g, const char *key, const char *text)
{
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++)
    if (META_KEYS[i].heap && !strcmp(META_KEYS[i].key, key)) {
      meta_set_text(&g->meta, &META_KEYS[i], text);
      return;
    }
  g_assert_not_reached(); /* a programming error: not a text entry of any length */
}

void graph_free(graph *g)
{
  if (!g) return;
  g_ptr_array_free(g->programs, TRUE);
  g_ptr_array_free(g->groups, TRUE);
  g_ptr_array_free(g->op_names, TRUE);
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++)
    if (META_KEYS[i].heap) g_free(*(char **)((char *)&g->meta + META_KEYS[i].off));
  g_free(g);
}

int graph_add_group_class(graph *g, const int *ranks, int n, const char *label, traffic_class c)
{
  graph_group *gr = g_new0(graph_group, 1);
  gr->ranks = g_array_sized_new(FALSE, FALSE, sizeof(int), n);
  g_array_append_vals(gr->ranks, ranks, n);
  g_strlcpy(gr->label, label ? label : "", sizeof gr->label);
  gr->tclass = (uint8_t)c;
  g_ptr_array_add(g->groups, gr);
  return (int)g->groups->len - 1;
}

int graph_add_group(graph *g, const int *ranks, int n, const char *label)
{
  int c = tc_from_name(label);
  return graph_add_group_class(g, ranks, n, label, c < 0 ? TC_OTHER : (traffic_class)c);
}

graph_program *graph_program_of(graph *g, int rank)
{
  graph_program *p = g_ptr_array_index(g->programs, rank);
  if (!p) {
    p = g_new0(graph_program, 1);
    p->rank = rank;
    p->mirror_of = -1;
    p->events = g_array_new(FALSE, FALSE, sizeof(graph_event));
    g->programs->pdata[rank] = p;
  }
  return p;
}

void graph_make_mirror(graph *g, int rank, int mirror_of, int active_from)
{
  graph_program *p = graph_program_of(g, rank);
  if (p->events) g_array_free(p->events, TRUE);
  p->events = NULL;
  p->mirror_of = mirror_of;
  p->active_from = active_from;
}

void graph_add_dep(graph *g, int rank, int event, int after)
{
  graph_program *p = graph_program_of(g, rank);
  if (!p->deps) p->deps = g_array_new(FALSE, FALSE, sizeof(graph_dep));
  graph_dep d = {event, after};
  g_array_append_val(p->deps, d);
}

int graph_dep_of(const graph_program *p, int i)
{
  if (!p->deps) return -1;
  guint lo = 0, hi = p->deps->len; /* deps are by increasing event */
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    const graph_dep *d = &g_array_index(p->deps, graph_dep, mid);
    if (d->event == i) return d->after;
    if (d->event < i) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

gboolean graph_program_streamed(const graph_program *p)
{
  if (!p->events) return FALSE;
  if (p->deps && p->deps->len) return TRUE;
  for (guint i = 0; i < p->events->len; i++)
    if (g_array_index(p->events, graph_event, i).stream) return TRUE;
  return FALSE;
}

void graph_map_group(graph *g, int rank, int from_group, int to_group)
{
  graph_program *p = graph_program_of(g, rank);
  if (!p->group_map) p->group_map = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(p->group_map, GINT_TO_POINTER(from_group), GINT_TO_POINTER(to_group));
}

const graph_event *graph_program_events(const graph *g, const graph_program *p, int *n_out, int *first_out)
{
  const graph_program *src = p->mirror_of >= 0 ? g_ptr_array_index(g->programs, p->mirror_of) : p;
  *first_out = p->mirror_of >= 0 ? p->active_from : 0;
  *n_out = (int)src->events->len;
  return (const graph_event *)src->events->data;
}

int graph_group_for(const graph_program *p, int gid)
{
  gpointer v;
  if (p->group_map && g_hash_table_lookup_extended(p->group_map, GINT_TO_POINTER(gid), NULL, &v))
    return GPOINTER_TO_INT(v);
  return gid;
}

/* Place of `rank` in the ring order of `gr`, -1 when not a member. */
int graph_group_place(const graph_group *gr, int rank)
{
  for (guint j = 0; j < gr->ranks->len; j++)
    if (g_array_index(gr->ranks, int, j) == rank) return (int)j;
  return -1;
}

int graph_peer_for(const graph *g, const graph_program *p, int peer)
{
  if (p->mirror_of < 0) return peer;
  if (!p->group_map) return -1;
  int found = -1, found_gid = G_MAXINT, n_groups = (int)g->groups->len;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, p->group_map);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    int from = GPOINTER_TO_INT(k), to = GPOINTER_TO_INT(v);
    if (from >= found_gid || from < 0 || from >= n_groups || to < 0 || to >= n_groups) continue;
    const graph_group *a = g_ptr_array_index(g->groups, from), *b = g_ptr_array_index(g->groups, to);
    if (a->ranks->len != b->ranks->len) continue;
    int src_at = graph_group_place(a, p->mirror_of), peer_at = graph_group_place(a, peer);
    /* the map must put the mirror where its source was, or places do not correspond */
    if (src_at < 0 || peer_at < 0 || g_array_index(b->ranks, int, src_at) != p->rank) continue;
    found = g_array_index(b->ranks, int, peer_at);
    found_gid = from;
  }
  return found;
}
