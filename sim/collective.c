/* collective -- see collective.h. */
#include "collective.h"

#include <glib.h>
#include <simgrid/barrier.h>
#include <string.h>

#include "coll_algo.h"

/* The algorithm table: one entry per coll_algo (AUTO chooses among them). */
static const coll_algo_def *const ALGOS[COLL_ALGO_N] = {
    [COLL_ALGO_RING] = &coll_ring_def, [COLL_ALGO_TREE] = &coll_tree_def, [COLL_ALGO_NVLS] = &coll_nvls_def,
    [COLL_ALGO_HIER] = &coll_hier_def, [COLL_ALGO_PAIRWISE] = &coll_pairwise_def,
    [COLL_ALGO_FLEX] = &coll_flex_def,
};

const char *coll_algo_name(coll_algo a) { return a == COLL_ALGO_AUTO ? "auto" : ALGOS[a]->name; }

int coll_algo_parse(const char *s)
{
  for (int a = 0; a < COLL_ALGO_N; a++)
    if (!strcmp(s, coll_algo_name((coll_algo)a))) return a;
  return -1;
}

/* The domain shape: domains in order of their first member, per_domain when all hold as many. */
static void init_shape(coll_group *g)
{
  int n = g->n;
  g->dom = g_new(int, MAX(n, 1));
  g->loc = g_new(int, MAX(n, 1));
  g_autofree int *node_of_dom = g_new(int, MAX(n, 1));
  g_autofree int *count = g_new0(int, MAX(n, 1));
  g->domains = 0;
  for (int i = 0; i < n; i++) {
    int d = 0;
    while (d < g->domains && node_of_dom[d] != g->members[i].node) d++;
    if (d == g->domains) node_of_dom[g->domains++] = g->members[i].node;
    g->dom[i] = d;
    g->loc[i] = count[d]++;
  }
  g->per_domain = g->domains ? count[0] : 0;
  for (int d = 1; d < g->domains; d++)
    if (count[d] != g->per_domain) g->per_domain = 0;
  if (g->per_domain) {
    g->at = g_new(int, MAX(n, 1));
    for (int i = 0; i < n; i++) g->at[g->dom[i] * g->per_domain + g->loc[i]] = i;
  }
}

void coll_group_init(coll_group *g)
{
  g_autofree int *node = g_new(int, g->n > 0 ? g->n : 1);
  for (int i = 0; i < g->n; i++) node[i] = g->members[i].node;
  g->channels = coll_channels(node, g->n);
  g->barrier = g->n > 1 ? sg_barrier_init((unsigned)g->n) : NULL;
  init_shape(g);
  if (g->tune && g->tune->forced == COLL_ALGO_HIER) coll_hier_make_subs(g);
}

sg_bar_t coll_group_barrier(coll_group *g, int k)
{
  if (k >= g->n) return g->barrier;
  if (!g->barriers) g->barriers = g_new0(sg_bar_t, g->n);
  if (!g->barriers[k]) g->barriers[k] = sg_barrier_init((unsigned)k);
  return g->barriers[k];
}

void coll_group_clear(coll_group *g)
{
  if (g->barrier) sg_barrier_destroy(g->barrier);
  for (int k = 0; g->barriers && k < g->n; k++)
    if (g->barriers[k]) sg_barrier_destroy(g->barriers[k]);
  g_free(g->barriers);
  coll_plans_clear(g);
  if (g->sub) {
    for (int i = 0; i < g->domains + g->per_domain; i++) coll_group_clear(&g->sub[i]);
    g_free(g->sub);
  }
  g_free(g->members);
  g_free(g->alone);
  g_free(g->dom);
  g_free(g->loc);
  g_free(g->at);
}

static gboolean runs(coll_algo a, const coll_group *g, graph_coll c)
{
  const coll_algo_def *d = ALGOS[a];
  return (d->colls & (1u << c)) && (!d->fits || d->fits(g));
}

/* The communicator NCCL's tuner sees for group g (coll_tune). */
static nccl_tune_comm tune_comm(const coll_group *g)
{
  nccl_tune_comm cm = g->tune->comm;
  cm.nranks = g->n;
  cm.nnodes = g->domains;
  const coll_tune *t = g->tune;
  int ppn = (g->n + g->domains - 1) / g->domains;
  int nics = MIN(t->nics_per_node, (ppn * t->nics_per_node + t->gpus_per_node - 1) / t->gpus_per_node);
  cm.node_net_bytes_per_s = t->nic_bytes_per_s * MAX(nics, 1);
  return cm;
}

static coll_algo choose(const coll_group *g, graph_coll c, double bytes);

/* The choice depends on the group, the collective and the size only: a group remembers its last few. */
coll_algo coll_choose(coll_group *g, graph_coll c, double bytes)
{
  for (int k = 0; k < g->n_chosen; k++)
    if (g->chosen[k].c == c && g->chosen[k].bytes == bytes) return g->chosen[k].a;
  coll_algo a = choose(g, c, bytes);
  int k = g->next_chosen;
  g->chosen[k].c = c;
  g->chosen[k].bytes = bytes;
  g->chosen[k].a = a;
  g->next_chosen = (k + 1) % COLL_CHOSEN_N;
  g->n_chosen = MAX(g->n_chosen, k + 1);
  return a;
}

static coll_algo choose(const coll_group *g, graph_coll c, double bytes)
{
  if (c == COLL_ALL_TO_ALL) return runs(COLL_ALGO_FLEX, g, c) ? COLL_ALGO_FLEX : COLL_ALGO_PAIRWISE;
  if (!g->tune || g->n < 2) return COLL_ALGO_RING;
  if (g->tune->forced != COLL_ALGO_AUTO) return runs(g->tune->forced, g, c) ? g->tune->forced : COLL_ALGO_RING;
  nccl_tune_comm cm = tune_comm(g);
  switch (nccl_tune_choose(&cm, c, bytes, NULL)) {
  case NCCL_TUNE_TREE: return runs(COLL_ALGO_TREE, g, c) ? COLL_ALGO_TREE : COLL_ALGO_RING;
  case NCCL_TUNE_NVLS: return runs(COLL_ALGO_NVLS, g, c) ? COLL_ALGO_NVLS : COLL_ALGO_RING;
  default: return COLL_ALGO_RING;
  }
}

double coll_nccl_latency_s(coll_algo a, graph_coll c, const coll_group *g, double bytes)
{
  if (!g->tune || !g->tune->latency_tuned || g->n < 2) return -1;
  nccl_tune_algo na = a == COLL_ALGO_RING ? NCCL_TUNE_RING : a == COLL_ALGO_TREE ? NCCL_TUNE_TREE
                    : a == COLL_ALGO_NVLS ? NCCL_TUNE_NVLS : NCCL_TUNE_N_ALGOS;
  if (na == NCCL_TUNE_N_ALGOS) return -1;
  nccl_tune_comm cm = tune_comm(g);
  double us = nccl_tune_latency_us(&cm, c, na, bytes, NULL);
  return us < 0 ? -1 : us * 1e-6;
}

double coll_run(coll_algo a, graph_coll c, coll_group *g, const int *active, int me, double bytes,
                double step_overhead_s)
{
  const coll_algo_def *d = ALGOS[a];
  g_assert(a != COLL_ALGO_AUTO && runs(a, g, c));
  if (g->n < 2) return 0;
  double tuned = coll_nccl_latency_s(a, c, g, bytes);
  if (tuned >= 0) step_overhead_s = 0;
  return MAX(tuned, 0) + (d->run ? d->run(c, g, active, me, bytes, step_overhead_s)
                                 : coll_flows_run(d, a, g, active, me, bytes, step_overhead_s));
}

double coll_alone_seconds(coll_algo a, graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s)
{
  const coll_algo_def *d = ALGOS[a];
  g_assert(a != COLL_ALGO_AUTO && runs(a, g, c));
  if (g->n < 2) return 0;
  double tuned = coll_nccl_latency_s(a, c, g, bytes);
  if (tuned >= 0) step_overhead_s = 0;
  return MAX(tuned, 0) + (d->alone ? d->alone(c, g, me, bytes, step_overhead_s)
                                   : coll_flows_alone(d, a, g, me, bytes, step_overhead_s));
}

double coll_alone_wait_seconds(coll_algo a, graph_coll c, coll_group *g, int me, double bytes, double step_overhead_s,
                               double *owed_s)
{
  const coll_algo_def *d = ALGOS[a];
  g_assert(a != COLL_ALGO_AUTO && runs(a, g, c) && (d->plan || d->alone_wait));
  *owed_s = 0;
  if (g->n < 2) return 0;
  double tuned = coll_nccl_latency_s(a, c, g, bytes), owed = 0, wait;
  if (tuned >= 0) step_overhead_s = 0;
  wait = d->alone_wait ? d->alone_wait(c, g, me, bytes, step_overhead_s, &owed)
                       : coll_flows_alone_wait(d, a, g, me, bytes, step_overhead_s, &owed);
  *owed_s = MAX(tuned, 0) + owed; /* as coll_run adds it to what the algorithm returns */
  return wait;
}
