/* timeline -- see timeline.h. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"

timeline tl_make(const graph *g, const replay_result *res)
{
  timeline tl = {.g = g, .res = res, .step_time_s = res->step_time_s};
  return tl;
}

/* The rank at the other end of a send/recv, or a collective's group, for a mirror its own
 * (graph_peer_for searches groups; a program has few peers, so they are remembered). */
static int peer_of(tl_cursor *c, const graph_event *e)
{
  if (e->kind == EV_COLLECTIVE) return graph_group_for(c->p, e->peer);
  if (e->kind != EV_SEND && e->kind != EV_RECV) return -1;
  if (c->p->mirror_of < 0) return e->peer;
  if (!c->peers) c->peers = g_hash_table_new(g_direct_hash, g_direct_equal);
  gpointer own;
  if (g_hash_table_lookup_extended(c->peers, GINT_TO_POINTER(e->peer), NULL, &own)) return GPOINTER_TO_INT(own);
  int r = graph_peer_for(c->tl->g, c->p, e->peer);
  g_hash_table_insert(c->peers, GINT_TO_POINTER(e->peer), GINT_TO_POINTER(r));
  return r;
}

void tl_cursor_init(tl_cursor *c, const timeline *tl, int rank, gboolean tiled)
{
  *c = (tl_cursor){.tl = tl, .tiled = tiled, .main = tiled};
  c->p = g_ptr_array_index(tl->g->programs, rank);
  c->ev = graph_program_events(tl->g, c->p, &c->n, &c->first);
  c->own = &tl->res->ranks[rank];
  /* a mirror's events before active_from are its source's, as its source executed them */
  c->src = c->p->mirror_of >= 0 ? &tl->res->ranks[c->p->mirror_of] : c->own;
  c->i = c->p->mirror_of >= 0 ? 0 : c->first;
}

/* The next executed event's interval. */
static gboolean next_event(tl_cursor *c, tl_interval *iv)
{
  for (; c->i < c->n; c->i++) {
    const replay_rank *rr = c->i < c->first ? c->src : c->own;
    if (isnan(rr->start_s[c->i])) continue;
    const graph_event *e = &c->ev[c->i];
    if (c->main && e->stream != 0) continue;
    *iv = (tl_interval){rr->start_s[c->i], rr->end_s[c->i], tl_category(c->tl->g, e), e, c->i, peer_of(c, e)};
    c->i++;
    return TRUE;
  }
  return FALSE;
}

/* What the compute stream waits for before event iv: the category of the other stream's event it depends
 * on, when that event's end is what it started at; TL_IDLE otherwise. */
static tl_cat waited_category(const tl_cursor *c, const tl_interval *iv)
{
  const graph_program *src = c->p->mirror_of >= 0 ? g_ptr_array_index(c->tl->g->programs, c->p->mirror_of) : c->p;
  int d = graph_dep_of(src, iv->index);
  if (d < 0 || c->ev[d].stream == iv->ev->stream) return TL_IDLE;
  const replay_rank *rr = d < c->first ? c->src : c->own;
  double end_s = rr->end_s[d];
  if (isnan(end_s) || end_s < iv->start_s - 1e-9 * MAX(1.0, fabs(iv->start_s))) return TL_IDLE;
  return tl_category(c->tl->g, &c->ev[d]);
}

gboolean tl_cursor_next(tl_cursor *c, tl_interval *iv)
{
  if (!c->tiled && !c->main) return next_event(c, iv);
  if (!c->held) c->held = next_event(c, &c->next);
  /* the gap up to the next event, or after the last one up to the end of the step (tiled); the main view
   * yields a gap only where stream 0 waits for the other stream, in that event's category */
  double until = c->held ? c->next.start_s : c->tiled ? c->tl->step_time_s : c->t;
  if (until > c->t) {
    tl_cat wait = c->held ? waited_category(c, &c->next) : TL_IDLE;
    double from = c->t;
    c->t = until;
    if (c->tiled || wait != TL_IDLE) {
      *iv = (tl_interval){from, until, wait, NULL, -1, -1};
      return TRUE;
    }
  }
  if (!c->held) return FALSE;
  *iv = c->next;
  c->held = FALSE;
  if (iv->end_s > c->t) c->t = iv->end_s;
  return TRUE;
}

void tl_cursor_clear(tl_cursor *c)
{
  if (c->peers) g_hash_table_destroy(c->peers);
  c->peers = NULL;
}

/* Visit rank's intervals in order (tiled: as the tiled traces draw them, the compute stream's; main: the
 * compute stream's only). */
static gboolean walk(const timeline *tl, int rank, gboolean tiled, gboolean main, tl_visit_fn fn, gpointer data)
{
  tl_cursor c;
  tl_cursor_init(&c, tl, rank, tiled);
  c.main = c.main || main; /* a tiled walk is the compute stream's already */
  tl_interval iv;
  gboolean done = TRUE;
  while (done && tl_cursor_next(&c, &iv)) done = fn(&iv, data);
  tl_cursor_clear(&c);
  return done;
}

gboolean tl_foreach(const timeline *tl, int rank, tl_visit_fn fn, gpointer data)
{
  return walk(tl, rank, FALSE, FALSE, fn, data);
}

gboolean tl_foreach_main(const timeline *tl, int rank, tl_visit_fn fn, gpointer data)
{
  return walk(tl, rank, FALSE, TRUE, fn, data);
}

static gboolean add_seconds(const tl_interval *iv, gpointer data)
{
  double *out = data;
  out[iv->cat] += iv->end_s - iv->start_s;
  return TRUE;
}

void tl_rank_seconds(const timeline *tl, int rank, double out[TL_N])
{
  for (int c = 0; c < TL_N; c++) out[c] = 0;
  tl_foreach_main(tl, rank, add_seconds, out);
  double busy = 0;
  for (int c = 0; c < TL_IDLE; c++) busy += out[c];
  out[TL_IDLE] = tl->step_time_s - busy;
  if (out[TL_IDLE] < 0) out[TL_IDLE] = 0;
}

/* A meta integer, or dflt where the graph does not say (0). */
static int meta_int(int v, int dflt) { return v > 0 ? v : dflt; }

int tl_stages(const timeline *tl) { return MAX(1, meta_int(tl->g->meta.pp, 1)); }

int tl_stage_of(const timeline *tl, int rank)
{
  int per = meta_int(tl->g->meta.ranks_per_stage, tl->g->world_size);
  return per > 0 ? MIN(rank / per, tl_stages(tl) - 1) : 0;
}

void tl_chunks_init(tl_chunks *c, const timeline *tl, int rank)
{
  int n, first;
  const graph_event *ev = graph_program_events(tl->g, g_ptr_array_index(tl->g->programs, rank), &n, &first);
  int top = -1;
  for (int i = 0; i < n; i++)
    if (ev[i].kind == EV_COMPUTE && ev[i].layer > top) top = ev[i].layer;
  *c = (tl_chunks){.n_layers = top + 1, .chunk_of = g_new(int, top + 1)};
  g_autofree gboolean *runs = g_new0(gboolean, top + 1);
  for (int i = 0; i < n; i++)
    if (ev[i].kind == EV_COMPUTE && ev[i].layer >= 0) runs[ev[i].layer] = TRUE;
  for (int l = 0; l <= top; l++) {
    if (runs[l] && (l == 0 || !runs[l - 1])) c->n++; /* a run starts: the next chunk */
    c->chunk_of[l] = runs[l] ? c->n - 1 : -1;
  }
}

int tl_chunk_of(const tl_chunks *c, const graph_event *e)
{
  return e && e->kind == EV_COMPUTE && e->layer >= 0 && e->layer < c->n_layers ? c->chunk_of[e->layer] : -1;
}

void tl_chunks_clear(tl_chunks *c)
{
  g_free(c->chunk_of);
  *c = (tl_chunks){0};
}

gboolean tl_foreach_tiled(const timeline *tl, int rank, tl_visit_fn fn, gpointer data)
{
  return walk(tl, rank, TRUE, TRUE, fn, data);
}

const char *tl_event_op_name(const graph *g, const graph_event *e)
{
  if (!e) return "idle";
  switch (e->kind) {
  case EV_SEND: return "send";
  case EV_RECV: return "recv";
  case EV_COLLECTIVE: return graph_coll_name((graph_coll)e->variant);
  default: return graph_op_name(g, e->op);
  }
}

int tl_tp_degree(const timeline *tl)
{
  for (guint i = 0; i < tl->g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(tl->g->groups, i);
    if (tc_info_of(gr->tclass)->tp_degree) return (int)gr->ranks->len;
  }
  return 1;
}

int tl_dp_replica_of(const timeline *tl, int rank)
{
  int per = meta_int(tl->g->meta.ranks_per_stage, tl->g->world_size);
  return per > 0 ? (rank % per) / tl_tp_degree(tl) : 0;
}

int tl_gpus_per_node(const timeline *tl) { return MAX(1, meta_int(tl->g->meta.gpus_per_node, 8)); }

static int int_cmp(gconstpointer a, gconstpointer b) { return *(const int *)a - *(const int *)b; }

static gboolean bad_ranks(GError **err, const char *spec, int world)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
              "--trace-ranks: invalid value '%s' (allowed: all, dp0, or a list of ranks 0-%d like 0-7,16)", spec,
              world - 1);
  return FALSE;
}

/* A rank the list names twice (0,0 or 0-3,2): refused, as a value listed twice in a sweep's list. */
static gboolean twice_ranks(GError **err, const char *spec, int rank)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
              "--trace-ranks: rank %d is listed twice in '%s' (allowed: each rank once)", rank, spec);
  return FALSE;
}

/* "a" or "a-b" with 0 <= a <= b < world. */
static gboolean parse_range(const char *s, int world, int *lo, int *hi)
{
  char *end;
  long a = strtol(s, &end, 10), b = a;
  if (end == s) return FALSE;
  if (*end == '-') {
    const char *t = end + 1;
    b = strtol(t, &end, 10);
    if (end == t) return FALSE;
  }
  if (*end || a < 0 || b < a || b >= world) return FALSE;
  *lo = (int)a;
  *hi = (int)b;
  return TRUE;
}

gboolean tl_ranks_spec_check(const char *spec, int world, GError **err)
{
  if (!spec || !strcmp(spec, "all") || !strcmp(spec, "dp0")) return TRUE;
  g_auto(GStrv) parts = g_strsplit(spec, ",", -1);
  g_autofree gboolean *seen = g_new0(gboolean, MAX(world, 1));
  int lo, hi;
  for (char **p = parts; *p; p++) {
    if (!parse_range(*p, world, &lo, &hi)) return bad_ranks(err, spec, world);
    for (int i = lo; i <= hi; i++)
      if (seen[i]) return twice_ranks(err, spec, i);
      else seen[i] = TRUE;
  }
  return parts[0] != NULL || bad_ranks(err, spec, world);
}

/* Data-parallel replica 0: rank 0 and every rank it reaches through groups inside one replica (traffic_class.c's
 * in_replica: tensor, context and pipeline parallel), so every partner of the ranks shown but their data-parallel
 * replicas' is shown too. */
static void replica0(const timeline *tl, GArray *r)
{
  int world = tl->g->world_size;
  g_autofree gboolean *in = g_new0(gboolean, world);
  in[0] = TRUE;
  for (gboolean grew = TRUE; grew;) {
    grew = FALSE;
    for (guint i = 0; i < tl->g->groups->len; i++) {
      const graph_group *gr = g_ptr_array_index(tl->g->groups, i);
      if (!tc_info_of(gr->tclass)->in_replica) continue;
      gboolean touches = FALSE;
      for (guint k = 0; k < gr->ranks->len && !touches; k++) touches = in[g_array_index(gr->ranks, int, k)];
      for (guint k = 0; k < gr->ranks->len && touches; k++) {
        int m = g_array_index(gr->ranks, int, k);
        if (!in[m]) in[m] = grew = TRUE;
      }
    }
  }
  for (int i = 0; i < world; i++)
    if (in[i]) g_array_append_val(r, i);
}

gboolean tl_ranks_parse(const timeline *tl, const char *spec, int all_limit, tl_ranks *out, GError **err)
{
  int world = tl->g->world_size;
  g_autoptr(GArray) r = g_array_new(FALSE, FALSE, sizeof(int));
  g_autofree gboolean *seen = g_new0(gboolean, world);
  const char *s = spec ? spec : world <= all_limit ? "all" : "dp0";
  if (!strcmp(s, "dp0")) replica0(tl, r);
  else if (!strcmp(s, "all"))
    for (int i = 0; i < world; i++) g_array_append_val(r, i);
  else {
    g_auto(GStrv) parts = g_strsplit(s, ",", -1);
    for (char **p = parts; *p; p++) {
      int lo, hi;
      if (!parse_range(*p, world, &lo, &hi)) return bad_ranks(err, s, world);
      for (int i = lo; i <= hi; i++) {
        if (seen[i]) return twice_ranks(err, s, i); /* as a repeated option or list value: refused */
        seen[i] = TRUE;
        g_array_append_val(r, i);
      }
    }
    if (r->len == 0) return bad_ranks(err, s, world);
    g_array_sort(r, int_cmp);
  }
  out->n = (int)r->len;
  out->rank = (int *)g_array_free(g_steal_pointer(&r), FALSE);
  return TRUE;
}

void tl_ranks_clear(tl_ranks *r)
{
  g_free(r->rank);
  r->rank = NULL;
  r->n = 0;
}

double tl_mem_bytes(const timeline *tl, int rank, const tl_mem_model *mm, double activation_bytes)
{
  const graph_program *p = g_ptr_array_index(tl->g->programs, rank);
  return p->mem_static_bytes + activation_bytes * mm->act_factor + mm->const_bytes;
}

gboolean tl_mem_step(const graph_event *e, double *act_bytes, double *during, double *after)
{
  if (e->mem_delta_bytes == 0 && e->mem_transient_bytes == 0) return FALSE;
  *during = *act_bytes + MAX(e->mem_delta_bytes, 0) + e->mem_transient_bytes;
  *act_bytes += e->mem_delta_bytes;
  *after = *act_bytes;
  return TRUE;
}
