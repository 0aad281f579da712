/* graph_check -- a task graph's consistency (graph_check): every program's events, streams and groups, the
 * matching of every send with its receive, and the meta's numbers; run on every graph loaded and in tests
 * on every graph generated.
 *
 * Owns: what makes a graph replayable (the messages of a refused one).
 * May not touch: the file format (graph_save.c, graph_load.c).
 */
#include "graph_private.h"

#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

/* Streams of an explicit program: sends and receives on stream 0 only (their FIFOs are a rank's), and a
 * group's collectives never two at a time on one rank (they share the group's mailboxes and barrier): a
 * collective of a group whose previous collective on the rank ran on the other stream must come after it,
 * through a dependency (of its own or of an earlier event of its stream). */
static gboolean check_streams(const graph *g, const graph_program *p, GError **err)
{
  if (!graph_program_streamed(p)) return TRUE;
  g_autofree int *last_at = g_new(int, MAX(g->groups->len, 1));    /* per group: its last collective's index */
  for (guint k = 0; k < g->groups->len; k++) last_at[k] = -1;
  int known[GRAPH_STREAMS][GRAPH_STREAMS]; /* known[s][t]: latest event of stream t known ended on stream s */
  for (int s = 0; s < GRAPH_STREAMS; s++)
    for (int t = 0; t < GRAPH_STREAMS; t++) known[s][t] = -1;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    int s = e->stream, d = graph_dep_of(p, (int)i);
    if (d >= 0) {
      int t = g_array_index(p->events, graph_event, d).stream;
      known[s][t] = MAX(known[s][t], d);
      for (int u = 0; u < GRAPH_STREAMS; u++) known[s][u] = MAX(known[s][u], known[t][u]);
    }
    known[s][s] = (int)i;
    if (s != 0 && (e->kind == EV_SEND || e->kind == EV_RECV)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %u: a %s on stream %d (allowed: sends and "
                  "receives on stream 0)", p->rank, i, graph_kind_name((graph_kind)e->kind), s);
      return FALSE;
    }
    if (e->kind != EV_COLLECTIVE || e->peer < 0 || e->peer >= (int)g->groups->len) continue;
    int j = last_at[e->peer];
    if (j >= 0) {
      int t = g_array_index(p->events, graph_event, j).stream;
      if (t != s && known[s][t] < j) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %u: a collective of group %d on stream %d "
                    "while event %d, one of the group's on stream %d, may still run (allowed: an 'after' that orders "
                    "them)", p->rank, i, e->peer, s, j, t);
        return FALSE;
      }
    }
    last_at[e->peer] = (int)i;
  }
  return TRUE;
}

static gboolean check_program(const graph *g, const graph_program *p, GError **err)
{
  if (p->mirror_of >= 0) {
    const graph_program *src = p->mirror_of < g->world_size ? g_ptr_array_index(g->programs, p->mirror_of) : NULL;
    if (!src || src->mirror_of >= 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d: mirror_of %d is %s (allowed: the rank of an explicit "
                  "program, 0 to %d)", p->rank, p->mirror_of, src ? "itself a mirror" : "not a rank", g->world_size - 1);
      return FALSE;
    }
    if (p->active_from < 0 || p->active_from > (int)src->events->len) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d: active_from %d (allowed: an event index of rank %d, "
                  "0 to %u)", p->rank, p->active_from, p->mirror_of, src->events->len);
      return FALSE;
    }
  }
  int n, first;
  const graph_event *ev = graph_program_events(g, p, &n, &first);
  double level_bytes = 0; /* memory allocated by events: frees must follow allocations */
  for (int i = 0; i < n; i++) {
    level_bytes += ev[i].mem_delta_bytes;
    if (level_bytes < -1.0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "rank %d event %d: mem_delta_bytes frees more than was allocated (level %.0f bytes; allowed: frees of "
                  "what the rank's earlier events allocated)", p->rank, i, level_bytes);
      return FALSE;
    }
  }
  if (p->mirror_of < 0 && !check_streams(g, p, err)) return FALSE;
  for (int i = first; i < n; i++) {
    const graph_event *e = &ev[i];
    if (e->kind == EV_COLLECTIVE) {
      int gid = graph_group_for(p, e->peer);
      if (gid < 0 || gid >= (int)g->groups->len) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: group %d does not exist (allowed: %s)",
                    p->rank, i, gid, g->groups->len ? "a group id from the graph's 'groups'" : "none: the graph has no groups");
        return FALSE;
      }
      if (graph_group_place(g_ptr_array_index(g->groups, gid), p->rank) < 0) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: rank is not a member of group %d (allowed: "
                    "a group that lists rank %d)", p->rank, i, gid, p->rank);
        return FALSE;
      }
    } else if (e->kind != EV_COMPUTE) {
      if (p->mirror_of >= 0) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "rank %d: a mirror may not execute send/recv (event %d); give it its own program", p->rank, i);
        return FALSE;
      }
      if (e->peer < 0 || e->peer >= g->world_size || e->peer == p->rank) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: peer %d out of range (allowed: another rank, "
                    "0 to %d)", p->rank, i, e->peer, g->world_size - 1);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* Every send from a to b must be matched, in order and size, by a recv on b from a. */
static gboolean check_p2p(const graph *g, GError **err)
{
  g_autoptr(GHashTable) sends = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) continue;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind != EV_SEND) continue;
      gint64 key = ((gint64)r * g->world_size + e->peer) * 2 + ((e->variant & GRAPH_P2P_GRAD_CHANNEL) != 0);
      GArray *q = g_hash_table_lookup(sends, &key);
      if (!q) {
        gint64 *k = g_memdup2(&key, sizeof key);
        q = g_array_new(FALSE, FALSE, sizeof(double));
        g_hash_table_insert(sends, k, q);
      }
      g_array_append_val(q, e->bytes);
    }
  }
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) continue;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind != EV_RECV) continue;
      gint64 key = ((gint64)e->peer * g->world_size + r) * 2 + ((e->variant & GRAPH_P2P_GRAD_CHANNEL) != 0);
      GArray *q = g_hash_table_lookup(sends, &key);
      gint64 *cnt = g_hash_table_lookup(seen, &key);
      if (!cnt) {
        cnt = g_new0(gint64, 2);
        cnt[0] = key;
        g_hash_table_insert(seen, cnt, cnt + 1);
        cnt = cnt + 1;
      }
      if (!q || *cnt >= q->len || g_array_index(q, double, *cnt) != e->bytes) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "rank %d event %u: recv from %d has no matching send of %.0f bytes (allowed: receives matching, in "
                    "order and size, the sends of rank %d to rank %d)", r, i, e->peer, e->bytes, e->peer, r);
        return FALSE;
      }
      (*cnt)++;
    }
  }
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, sends);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    gint64 *cnt = g_hash_table_lookup(seen, k);
    guint got = cnt ? (guint)*cnt : 0;
    if (got != ((GArray *)v)->len) {
      gint64 key = *(gint64 *)k / 2;
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d sends %u messages to rank %d, which receives %u",
                  (int)(key / g->world_size), ((GArray *)v)->len, (int)(key % g->world_size), got);
      return FALSE;
    }
  }
  return TRUE;
}

/* The meta's numbers in range (a generated graph's too), and the stages: stage-wise readers (timelines,
 * memory plots) index ranks as stage * ranks_per_stage + i, so pp and ranks_per_stage (defaults 1 and
 * world_size) must tile the ranks exactly. */
static gboolean check_meta(const graph *g, GError **err)
{
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++) {
    const meta_key *k = &META_KEYS[i];
    if (meta_is_text(k)) continue;
    double d = k->integer ? *(const int *)((const char *)&g->meta + k->off) : *(const double *)((const char *)&g->meta + k->off);
    if (d == 0 || meta_number_ok(k, d, g->world_size)) continue;
    g_autofree char *got = lsim_number(d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "meta.%s: %s (allowed: %s)", k->key, got,
                k->integer ? "an integer from 1 to the world size or node limit" : "a positive number below 1e30");
    return FALSE;
  }
  long stages = g->meta.pp ? g->meta.pp : 1, ranks = g->meta.ranks_per_stage ? g->meta.ranks_per_stage : g->world_size;
  if (stages * ranks == g->world_size) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
              "meta.pp (%ld) * meta.ranks_per_stage (%ld) must equal world_size (%d)", stages, ranks, g->world_size);
  return FALSE;
}

gboolean graph_check(const graph *g, GError **err)
{
  if (!check_meta(g, err)) return FALSE;
  g_autofree gboolean *seen = g_new0(gboolean, g->world_size);
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(g->groups, i);
    for (guint j = 0; j < gr->ranks->len; j++) {
      int r = g_array_index(gr->ranks, int, j);
      if (r < 0 || r >= g->world_size || seen[r]) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "group %u: rank %d %s (allowed: ranks from 0 to %d, each once)",
                    i, r, r < 0 || r >= g->world_size ? "out of range" : "listed twice", g->world_size - 1);
        return FALSE;
      }
      seen[r] = TRUE;
    }
    for (guint j = 0; j < gr->ranks->len; j++) seen[g_array_index(gr->ranks, int, j)] = FALSE;
  }
  for (int r = 0; r < g->world_size; r++)
    if (!check_program(g, g_ptr_array_index(g->programs, r), err)) return FALSE;
  return check_p2p(g, err);
}
