/* energy -- see energy.h. */
#include "energy.h"

energy_class energy_class_of(const graph_event *e, const gpu_profile *p)
{
  if (e->kind != EV_COMPUTE) return EN_COMM;
  return e->flops / p->peak_flops >= e->bytes / p->hbm_bytes_per_s ? EN_COMPUTE : EN_MEMORY;
}

double energy_power_w(const gpu_profile *p, energy_class c)
{
  const double w[EN_N] = {p->power_compute_w, p->power_memory_w, p->power_comm_w, p->power_idle_w};
  return w[c];
}

typedef struct seconds_of {
  const gpu_profile *p;
  double *cat, *out;
  tl_visit_fn also;
  gpointer data;
} seconds_of;

static gboolean add(const tl_interval *iv, gpointer data)
{
  seconds_of *s = data;
  double d = iv->end_s - iv->start_s;
  s->cat[iv->cat] += d;
  if (iv->ev) s->out[energy_class_of(iv->ev, s->p)] += d;
  if (s->also) s->also(iv, s->data);
  return TRUE;
}

void energy_rank_seconds(const timeline *tl, int rank, const gpu_profile *p, double cat[TL_N], double out[EN_N])
{
  energy_rank_seconds_and(tl, rank, p, cat, out, NULL, NULL);
}

void energy_rank_seconds_and(const timeline *tl, int rank, const gpu_profile *p, double cat[TL_N], double out[EN_N],
                             tl_visit_fn also, gpointer data)
{
  for (int c = 0; c < EN_N; c++) out[c] = 0;
  for (int c = 0; c < TL_N; c++) cat[c] = 0;
  seconds_of s = {p, cat, out, also, data};
  tl_foreach_main(tl, rank, add, &s);
  double busy = out[EN_COMPUTE] + out[EN_MEMORY] + out[EN_COMM], cat_busy = 0;
  out[EN_IDLE] = tl->step_time_s > busy ? tl->step_time_s - busy : 0;
  for (int c = 0; c < TL_IDLE; c++) cat_busy += cat[c];
  cat[TL_IDLE] = MAX(tl->step_time_s - cat_busy, 0);
}

double energy_joules(const gpu_profile *p, const double seconds[EN_N])
{
  double j = 0;
  for (int c = 0; c < EN_N; c++) j += energy_power_w(p, (energy_class)c) * seconds[c];
  return j;
}

double energy_node_joules(const gpu_profile *p, int world_size, double step_time_s)
{
  int nodes = (world_size + p->gpus_per_node - 1) / p->gpus_per_node;
  return nodes * p->node_power_w * step_time_s;
}

double energy_kwh_per_mtok(double energy_j, double tokens) { return energy_j / 3.6e6 / (tokens / 1e6); }
