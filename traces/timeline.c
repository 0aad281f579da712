/* timeline -- see timeline.h. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>

static const char *const NAMES[TL_N] = {"forward", "backward", "recompute", "tp-comm",
                                        "pp-wait", "dp-comm",  "optimizer", "idle"};

const char *tl_cat_name(tl_cat c) { return NAMES[c]; }

timeline tl_make(const graph *g, const replay_result *res)
{
  timeline tl = {.g = g, .res = res, .step_time_s = res->step_time_s};
  return tl;
}

tl_cat tl_category(const graph_event *e)
{
  if (e->kind == EV_SEND || e->kind == EV_RECV) return TL_PP_WAIT;
  if (e->kind == EV_COLLECTIVE) return e->phase == PH_DP || e->phase == PH_OPTIMIZER ? TL_DP_COMM : TL_TP_COMM;
  switch (e->phase) {
  case PH_FORWARD: return TL_FORWARD;
  case PH_BACKWARD: return TL_BACKWARD;
  case PH_RECOMPUTE: return TL_RECOMPUTE;
  default: return TL_OPTIMIZER;
  }
}

static gboolean visit_range(const replay_rank *rr, const graph_event *ev, int from, int to, tl_visit_fn fn,
                            gpointer data)
{
  for (int i = from; i < to; i++) {
    if (isnan(rr->start_s[i])) continue;
    tl_interval iv = {rr->start_s[i], rr->end_s[i], tl_category(&ev[i]), &ev[i], i};
    if (!fn(&iv, data)) return FALSE;
  }
  return TRUE;
}

gboolean tl_foreach(const timeline *tl, int rank, tl_visit_fn fn, gpointer data)
{
  const graph_program *p = g_ptr_array_index(tl->g->programs, rank);
  int n, first;
  const graph_event *ev = graph_program_events(tl->g, p, &n, &first);
  const replay_rank *own = &tl->res->ranks[rank];
  if (p->mirror_of >= 0 && !visit_range(&tl->res->ranks[p->mirror_of], ev, 0, first, fn, data)) return FALSE;
  return visit_range(own, ev, first, n, fn, data);
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
  tl_foreach(tl, rank, add_seconds, out);
  double busy = 0;
  for (int c = 0; c < TL_IDLE; c++) busy += out[c];
  out[TL_IDLE] = tl->step_time_s - busy;
  if (out[TL_IDLE] < 0) out[TL_IDLE] = 0;
}

static int meta_int(const graph *g, const char *key, int dflt)
{
  const char *v = g_hash_table_lookup(g->meta, key);
  return v ? atoi(v) : dflt;
}

int tl_stages(const timeline *tl) { return MAX(1, meta_int(tl->g, "pp", 1)); }

int tl_stage_of(const timeline *tl, int rank)
{
  int per = meta_int(tl->g, "ranks_per_stage", tl->g->world_size);
  return per > 0 ? MIN(rank / per, tl_stages(tl) - 1) : 0;
}
