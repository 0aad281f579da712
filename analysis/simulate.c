/* simulate -- see simulate.h. */
#include "simulate.h"

#include "common/lsim_error.h"

/* A graph reduced by symmetry (mirrored ranks) stands for ranks with links of their own: where GPUs
 * share NICs it would hide their contention (docs/model.md). */
static gboolean check_mirrors(const graph *g, const gpu_profile *prof, GError **err)
{
  if (prof->nics_per_node >= prof->gpus_per_node) return TRUE;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of < 0) continue;
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "nics_per_node: %d GPUs share a NIC, but the graph mirrors ranks (symmetry reduction), which assumes "
                "a NIC per GPU (allowed: a graph written with --no-symmetry, or %d NICs per node)",
                prof->gpus_per_node / prof->nics_per_node, prof->gpus_per_node);
    return FALSE;
  }
  return TRUE;
}

gboolean sim_run_graph(graph *g, const gpu_profile *prof, double capacity_gib, const replay_options *ro,
                       sim_outcome *out, GError **err)
{
  out->g = g;
  if (!check_mirrors(g, prof, err)) return FALSE;
  out->plat = replay_platform_for(prof, g->world_size);
  out->res = replay_run(g, prof, &out->plat, ro, err);
  if (!out->res) return FALSE;
  out->tl = tl_make(g, out->res);
  out->met = metrics_compute(&out->tl, prof, capacity_gib);
  return TRUE;
}

/* The task graph holds about 2 KB per (explicit rank, layer of its stage, micro-batch). With symmetry
 * one rank per stage is explicit, without it every rank: bound the product either way, 2^20 units
 * being about 2 GB (LAYOUT_MAX_MICRO_BATCHES alone bounds it only for models of up to 128 layers). */
#define MAX_GRAPH_UNITS (1 << 20)

static gboolean check_graph_size(const sim_request *rq, GError **err)
{
  gint64 layers = (rq->m.layers + rq->l.pp - 1) / rq->l.pp;
  gint64 ranks = rq->gen.symmetry ? rq->l.pp : rq->l.gpus;
  gint64 units = ranks * rq->l.grad_accum * layers;
  if (units <= MAX_GRAPH_UNITS) return TRUE;
  if (rq->gen.symmetry)
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "global_batch: %d micro-batches x %d layers of %s is more than the simulator holds in memory (allowed: "
                "micro-batches x layers at most %d)",
                rq->l.grad_accum, rq->m.layers, rq->m.name, MAX_GRAPH_UNITS);
  else
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "gpus: %d ranks simulated one by one (--no-symmetry, or GPUs sharing NICs) x %d micro-batches x %"
                G_GINT64_FORMAT " layers per stage is more than the simulator holds in memory (allowed: at most %d; "
                "fewer GPUs or micro-batches, or one NIC per GPU without --no-symmetry)",
                rq->l.gpus, rq->l.grad_accum, layers, MAX_GRAPH_UNITS);
  return FALSE;
}

gboolean sim_request_prepare(sim_request *rq, GError **err)
{
  if (!layout_validate(&rq->l, &rq->m, err)) return FALSE;
  int node = rq->prof.gpus_per_node;
  if (node % rq->l.tp != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "tp: %d does not divide the %d GPUs of a node of profile '%s' (tensor-parallel groups stay inside "
                "a node)",
                rq->l.tp, node, rq->prof.name);
    return FALSE;
  }
  rq->gen.gpus_per_node = node;
  /* mirrors stand for ranks with links of their own; GPUs sharing a NIC contend, so emit every rank */
  if (rq->prof.nics_per_node < node) rq->gen.symmetry = FALSE;
  return check_graph_size(rq, err);
}

gboolean sim_run_layout(sim_request *rq, sim_outcome *out, GError **err)
{
  if (!sim_request_prepare(rq, err)) return FALSE;
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
