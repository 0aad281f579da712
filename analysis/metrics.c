/* metrics -- see metrics.h. */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "workloads/memory.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

double metrics_mem_overhead_bytes(const gpu_profile *p, double dynamic_bytes)
{
  return (p->stack.cuda_context_gib + p->stack.nccl_buffers_gib) * GIB + p->stack.fragmentation * dynamic_bytes;
}

/* The memory walk of workloads/memory, fed in timeline order so the peak has a time. */
typedef struct walk_state {
  mem_walk w;
  double peak_time;
} walk_state;

static gboolean walk_memory(const tl_interval *iv, gpointer data)
{
  walk_state *s = data;
  if (iv->ev && mem_walk_event(&s->w, iv->ev, iv->index)) s->peak_time = iv->start_s;
  return TRUE;
}

/* FLOPs all ranks execute: each explicit program summed once, counted for itself and each of its mirrors. */
static double graph_flops(const graph *g)
{
  g_autofree int *copies = g_new0(int, g->world_size);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    copies[p->mirror_of >= 0 ? p->mirror_of : r]++;
  }
  double total = 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) continue;
    double f = 0;
    for (guint i = 0; i < p->events->len; i++) f += g_array_index(p->events, graph_event, i).flops;
    total += f * copies[r];
  }
  return total;
}

/* A stage's memory at its peak from the walk of its first rank's events. */
static void stage_memory_of(const graph_program *prog, const gpu_profile *p, const mem_walk *w, double peak_time,
                            stage_metrics *sm)
{
  double dynamic = w->peak_act_bytes + w->peak_buf_bytes;
  sm->mem_params_bytes = prog->mem_params_bytes;
  sm->mem_grads_bytes = prog->mem_grads_bytes;
  sm->mem_optimizer_bytes = prog->mem_optimizer_bytes;
  sm->mem_static_bytes = prog->mem_static_bytes;
  sm->mem_activation_peak_bytes = w->peak_act_bytes;
  sm->mem_buffers_bytes =
      prog->mem_static_bytes - prog->mem_params_bytes - prog->mem_grads_bytes - prog->mem_optimizer_bytes +
      w->peak_buf_bytes;
  sm->mem_dynamic_bytes = dynamic;
  sm->mem_overhead_bytes = metrics_mem_overhead_bytes(p, dynamic);
  sm->mem_peak_time_s = peak_time;
  sm->mem_peak_bytes = prog->mem_static_bytes + dynamic + sm->mem_overhead_bytes;
}

static void stage_memory(const timeline *tl, const gpu_profile *p, int rank, stage_metrics *sm)
{
  walk_state s = {.peak_time = 0};
  mem_walk_init(&s.w);
  tl_foreach(tl, rank, walk_memory, &s);
  stage_memory_of(g_ptr_array_index(tl->g->programs, rank), p, &s.w, s.peak_time, sm);
}

/* Whether rank's main view (tl_foreach_main) is all its intervals, as tl_foreach gives them: its events
 * (its source's, for a mirror) all on stream 0 with no dependency across streams, so no event is left out
 * and no gap is shown where the compute stream waits for another. */
static gboolean main_is_all(const graph *g, int rank)
{
  const graph_program *prog = g_ptr_array_index(g->programs, rank);
  return !graph_program_streamed(prog->mirror_of >= 0 ? g_ptr_array_index(g->programs, prog->mirror_of) : prog);
}

/* Stage s fits while static + context + NCCL + (1 + f) * dynamic <= capacity. */
static double fragmentation_limit(const metrics *m, const gpu_profile *p)
{
  double limit = G_MAXDOUBLE;
  for (int s = 0; s < m->stages; s++) {
    const stage_metrics *sm = &m->stage[s];
    double room = m->mem_capacity_bytes - sm->mem_static_bytes - metrics_mem_overhead_bytes(p, 0) - sm->mem_dynamic_bytes;
    double f = sm->mem_dynamic_bytes > 0 ? room / sm->mem_dynamic_bytes : (room >= 0 ? G_MAXDOUBLE : -G_MAXDOUBLE);
    limit = MIN(limit, f);
  }
  return limit;
}

/* The peak stage, the verdict and the fragmentation limit from the stages' memory. */
static void memory_verdict(metrics *m, const gpu_profile *p, double capacity_gib)
{
  m->mem_peak_bytes = 0;
  m->mem_peak_stage = 0;
  for (int s = 0; s < m->stages; s++)
    if (m->stage[s].mem_peak_bytes > m->mem_peak_bytes) {
      m->mem_peak_bytes = m->stage[s].mem_peak_bytes;
      m->mem_peak_stage = s;
    }
  m->mem_capacity_bytes = capacity_gib * GIB;
  m->oom = m->mem_peak_bytes > m->mem_capacity_bytes;
  m->mem_fragmentation_limit = fragmentation_limit(m, p);
}

metrics *metrics_memory_only(const graph *g, const gpu_profile *p, double capacity_gib)
{
  timeline tl = {.g = g};
  metrics *m = g_new0(metrics, 1);
  m->world_size = g->world_size;
  m->rank_seconds = g_new0(double, (gsize)g->world_size * TL_N);
  m->stages = tl_stages(&tl);
  m->stage = g_new0(stage_metrics, m->stages);
  g_autofree gboolean *seen = g_new0(gboolean, m->stages);
  m->mfu = m->hfu = m->tokens_per_s = -1;
  for (int r = 0; r < g->world_size; r++) {
    int s = tl_stage_of(&tl, r);
    if (seen[s]) continue;
    seen[s] = TRUE;
    const graph_program *prog = g_ptr_array_index(g->programs, r);
    mem_walk w;
    mem_walk_init(&w);
    mem_walk_program(g, prog, &w);
    stage_memory_of(prog, p, &w, 0, &m->stage[s]);
  }
  memory_verdict(m, p, capacity_gib);
  return m;
}

metrics *metrics_compute(const timeline *tl, const gpu_profile *p, double capacity_gib)
{
  const graph *g = tl->g;
  metrics *m = g_new0(metrics, 1);
  int world = g->world_size;
  m->step_time_s = tl->step_time_s;
  m->world_size = world;
  m->rank_seconds = g_new0(double, (gsize)world * TL_N);
  m->stages = tl_stages(tl);
  m->stage = g_new0(stage_metrics, m->stages);
  g_autofree int *count = g_new0(int, m->stages);
  g_autofree double *en = g_new0(double, (gsize)world * EN_N); /* per rank, per energy class */
  for (int r = 0; r < world; r++) {
    double *sec = &m->rank_seconds[(gsize)r * TL_N], *esec = &en[(gsize)r * EN_N];
    const graph_program *prog = g_ptr_array_index(g->programs, r);
    const graph_program *src = prog->mirror_of >= 0 ? g_ptr_array_index(g->programs, prog->mirror_of) : NULL;
    gboolean memory_done = FALSE;
    if (src && prog->mirror_of < r && prog->active_from >= (int)src->events->len) { /* its source's intervals throughout */
      memcpy(sec, &m->rank_seconds[(gsize)prog->mirror_of * TL_N], sizeof(double) * TL_N);
      memcpy(esec, &en[(gsize)prog->mirror_of * EN_N], sizeof(double) * EN_N);
    } else if (count[tl_stage_of(tl, r)] == 0 && main_is_all(g, r)) { /* and its stage's memory, in the same pass */
      walk_state ws = {.peak_time = 0};
      mem_walk_init(&ws.w);
      energy_rank_seconds_and(tl, r, p, sec, esec, walk_memory, &ws);
      stage_memory_of(prog, p, &ws.w, ws.peak_time, &m->stage[tl_stage_of(tl, r)]);
      memory_done = TRUE;
    } else {
      energy_rank_seconds(tl, r, p, sec, esec); /* the categories and the energy classes in one pass */
    }
    for (int c = 0; c < EN_N; c++) m->energy_seconds[c] += esec[c];
    int s = tl_stage_of(tl, r);
    if (count[s]++ == 0 && !memory_done) stage_memory(tl, p, r, &m->stage[s]);
    for (int c = 0; c < TL_N; c++) {
      m->seconds[c] += sec[c] / world;
      m->stage[s].seconds[c] += sec[c];
    }
  }
  double flops = graph_flops(g);
  for (int s = 0; s < m->stages; s++) {
    for (int c = 0; c < TL_N; c++) m->stage[s].seconds[c] /= MAX(count[s], 1);
    m->stage[s].bubble_fraction = m->step_time_s > 0 ? m->stage[s].seconds[TL_PP_WAIT] / m->step_time_s : 0;
  }
  m->bubble_fraction = m->step_time_s > 0 ? m->seconds[TL_PP_WAIT] / m->step_time_s : 0;
  double tokens = g->meta.tokens_per_step, model_flops = g->meta.model_flops_per_step; /* 0: unknown */
  m->tokens_per_s = tokens > 0 && m->step_time_s > 0 ? tokens / m->step_time_s : -1;
  double denom = world * p->peak_flops * m->step_time_s;
  m->mfu = model_flops > 0 && denom > 0 ? model_flops / denom : -1;
  m->hfu = denom > 0 ? flops / denom : -1;
  memory_verdict(m, p, capacity_gib);
  m->energy_gpu_j = energy_joules(p, m->energy_seconds);
  m->energy_node_j = energy_node_joules(p, world, m->step_time_s);
  m->energy_j = m->energy_gpu_j + m->energy_node_j;
  return m;
}

void metrics_free(metrics *m)
{
  if (!m) return;
  g_free(m->stage);
  g_free(m->rank_seconds);
  g_free(m);
}
