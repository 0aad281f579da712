/* simulate -- see simulate.h. */
#include "simulate.h"

gboolean sim_run_graph(graph *g, const gpu_profile *prof, double capacity_gib, const replay_options *ro,
                       sim_outcome *out, GError **err)
{
  out->g = g;
  plat_params pp = replay_platform_for(prof, g->world_size);
  out->res = replay_run(g, prof, &pp, ro, err);
  if (!out->res) return FALSE;
  out->tl = tl_make(g, out->res);
  out->met = metrics_compute(&out->tl, prof, capacity_gib);
  return TRUE;
}

gboolean sim_run_layout(sim_request *rq, sim_outcome *out, GError **err)
{
  if (!layout_validate(&rq->l, &rq->m, err)) return FALSE;
  graph *g = gen_graph(&rq->m, &rq->l, &rq->gen, err);
  if (!g) return FALSE;
  return sim_run_graph(g, &rq->prof, rq->capacity_gib, &rq->replay, out, err);
}

void sim_outcome_clear(sim_outcome *o)
{
  metrics_free(o->met);
  replay_result_free(o->res);
  graph_free(o->g);
  o->met = NULL;
  o->res = NULL;
  o->g = NULL;
}
