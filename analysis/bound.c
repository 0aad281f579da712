/* bound -- see bound.h. */
#include "bound.h"

#include <float.h>

#include "platforms/fabric.h"
#include "platforms/kernel_cost.h"
#include "platforms/topology.h"
#include "workloads/schedule.h"

/* The least seconds a collective keeps its stream for, on platform pl (docs/sweep.md "The communication term"). */
typedef struct comm_floor {
  const graph *g;
  const plat_params *pl; /* NULL: no communication term (a platform file) */
  int per_stage;         /* ranks per pipeline stage (graph_meta.ranks_per_stage) */
  struct group_links *links; /* by group id, for the program being summed (NULL entries: not yet known) */
} comm_floor;

/* What a member's links offer towards the other members of one group. */
typedef struct group_links {
  gboolean known, counted; /* counted: the group lies in one stage */
  int n, outside;          /* members; members outside the member's NVLink domain */
  double out_bytes_per_s;  /* the most the member's own flows can leave its GPU at */
  double in_bytes_per_s;   /* the most the group's flows can enter the member's domain at (0: none outside) */
} group_links;

/* What every collective algorithm of sim/ makes one member of n send for a per-rank buffer of `bytes`: a ring's
 * all-gather and reduce-scatter (n-1)/n of it, an all-reduce at least the buffer once (ring 2(n-1)/n, NVLS its
 * buffer over the NVLS efficiency <= 1, tree its chunk once on each of its 2k channel-trees, hier 2(k-1)/k +
 * 2(D-1)/(Dk)); -1 for an all-to-all (the flex dispatcher sends a token once per destination domain). */
static double least_sent_bytes(graph_coll c, int n, double bytes)
{
  if (n < 2) return 0;
  switch (c) {
  case COLL_ALL_REDUCE: return bytes;
  case COLL_REDUCE_SCATTER:
  case COLL_ALL_GATHER: return bytes * (n - 1) / n;
  default: return -1;
  }
}

/* What must enter the member's NVLink domain before its call can end, whatever the algorithm, with `outside` of
 * the n members elsewhere: an all-gather's result holds their shards, (outside/n) of the buffer; an
 * all-reduce's every element depends on their data, so at least the buffer once (sim/ reduces in no switch
 * between domains). 0 for a reduce-scatter (its member's shard needs only a partial sum: not bounded here) and
 * an all-to-all. */
static double least_inbound_bytes(graph_coll c, int n, int outside, double bytes)
{
  if (outside < 1 || n < 2) return 0;
  if (c == COLL_ALL_GATHER) return bytes * outside / n;
  return c == COLL_ALL_REDUCE ? bytes : 0;
}

/* The links of member `rank` towards group gr (platforms/cluster.h): its flows leave its GPU by its own NVLink
 * link (to a member of its domain) or its node's NIC (to one elsewhere; on a PXN rail fabric by NVLink to the
 * GPU of the destination's rail first: both), each at most its bandwidth (CM02, no factors), so at most their
 * sum together. A flow from another domain enters through the NIC of its destination member's rail (PXN relays
 * at the sender's side; counted there as every NIC of the members' nodes): the domain's members' distinct NICs
 * bound what enters. Not counted: a group spanning pipeline stages (the embedding's gradient between the first
 * and last), a call both ends meet in, which the pipeline terms would count on either side. */
static group_links links_of(const comm_floor *cf, int rank, const graph_group *gr)
{
  const plat_params *pl = cf->pl;
  group_links k = {.known = TRUE, .n = (int)gr->ranks->len};
  int dom = pl->gpus_per_domain > 0 ? pl->gpus_per_domain : pl->gpus_per_node;
  int G = pl->gpus_per_node > 0 ? pl->gpus_per_node : 1;
  if (dom <= 0 || pl->nics_per_node <= 0) return k;
  gboolean pxn = pl->fabric == FABRIC_RAIL_PXN, local = FALSE;
  g_autoptr(GHashTable) nics = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < gr->ranks->len; i++) {
    int r = g_array_index(gr->ranks, int, i);
    if (r / cf->per_stage != rank / cf->per_stage) return k;
    if (r / dom != rank / dom) {
      k.outside++;
      continue;
    }
    local |= r != rank;
    int node = r / G;
    if (pxn)
      for (int c = 0; c < pl->nics_per_node; c++) g_hash_table_add(nics, GINT_TO_POINTER(node * pl->nics_per_node + c));
    else g_hash_table_add(nics, GINT_TO_POINTER(node * pl->nics_per_node + topo_rail_of(pl, r)));
  }
  k.counted = TRUE;
  k.out_bytes_per_s = (local || (k.outside && pxn) ? pl->nvlink_bytes_per_s : 0) + (k.outside ? pl->ib_bytes_per_s : 0);
  k.in_bytes_per_s = k.outside ? g_hash_table_size(nics) * pl->ib_bytes_per_s : 0;
  return k;
}

static double comm_floor_s(comm_floor *cf, const graph_program *p, const graph_event *e)
{
  if (!cf->pl || e->kind != EV_COLLECTIVE) return 0;
  int grp = graph_group_for(p, e->peer);
  if (grp < 0 || grp >= (int)cf->g->groups->len) return 0;
  group_links *k = &cf->links[grp];
  if (!k->known) *k = links_of(cf, p->rank, g_ptr_array_index(cf->g->groups, grp));
  if (!k->counted) return 0;
  double sent = least_sent_bytes((graph_coll)e->variant, k->n, e->bytes), s = 0;
  if (sent > 0 && k->out_bytes_per_s > 0) s = sent / k->out_bytes_per_s;
  double in = least_inbound_bytes((graph_coll)e->variant, k->n, k->outside, e->bytes);
  if (in > 0 && k->in_bytes_per_s > 0) s = MAX(s, in / k->in_bytes_per_s);
  return s;
}

/* What one program's compute stream holds, at the graph's micro-batch count. */
typedef struct prog_sums {
  double pre_s;      /* compute before its first micro-batch event */
  double mid_s;      /* compute of no micro-batch between its first and last micro-batch events */
  double post_s;     /* compute after its last micro-batch event (the optimizer) */
  double mb_min_s;   /* the cheapest micro-batch's compute */
  double fwd_min_s;  /* the cheapest micro-batch's forward */
  double bwd_min_s;  /* the cheapest micro-batch's backward (recompute not counted) */
  double other_s;    /* the largest other stream's compute (a stream that is not 0) */
  int first_phase, last_phase; /* the phase of its first and last micro-batch events (-1: none) */
} prog_sums;

/* Whether schedule `id` with pp stages splits the backward into B and W (zb-h1): then a stage's last
 * micro-batch event may be a W that nobody waits for. */
static gboolean splits_backward(int id, int pp)
{
  for (int s = 0; s < pp; s++) {
    g_autoptr(GArray) in = sched_instructions(id, s, pp, 1, 2 * pp + 2);
    for (guint i = 0; i < in->len; i++)
      if (g_array_index(in, sched_instr, i).kind == SCHED_BACKWARD_W) return TRUE;
  }
  return FALSE;
}

/* Whether an event is the micro-batches' work: forward, backward or recompute (bound_step_work). */
static gboolean is_work(const graph_event *e)
{
  return e->phase == PH_FORWARD || e->phase == PH_BACKWARD || e->phase == PH_RECOMPUTE;
}

/* work_only: only the micro-batches' work counted (bound_step_work) */
static prog_sums sums_of(const graph *g, const graph_program *p, const gpu_profile *prof, const plat_params *pl,
                         int m_graph, gboolean work_only)
{
  g_autofree group_links *links = pl ? g_new0(group_links, g->groups->len + 1) : NULL;
  comm_floor cf = {.g = g, .pl = pl, .links = links,
                   .per_stage = g->meta.ranks_per_stage > 0 ? g->meta.ranks_per_stage : (int)g->programs->len};
  int n, first;
  const graph_event *ev = graph_program_events(g, p, &n, &first);
  g_autofree double *mb = g_new0(double, m_graph), *fwd = g_new0(double, m_graph), *bwd = g_new0(double, m_graph);
  double streams[GRAPH_STREAMS] = {0}, nonmb_s = 0;
  prog_sums s = {.first_phase = -1, .last_phase = -1};
  int seen_mb = 0;
  double after_last_s = 0; /* compute of no micro-batch since the last micro-batch event */
  for (int i = 0; i < n; i++) {
    const graph_event *e = &ev[i];
    double d;
    if (work_only && !is_work(e)) continue;
    if (e->kind == EV_COMPUTE) d = kcost_seconds_in(prof, e, g->meta.cuda_graph);
    else if (e->kind == EV_COLLECTIVE && pl) d = comm_floor_s(&cf, p, e);
    else continue;
    if (e->stream != 0) {
      streams[e->stream < GRAPH_STREAMS ? e->stream : 0] += d;
      continue;
    }
    if (e->micro_batch >= 0 && e->micro_batch < m_graph && is_work(e)) { /* other micro-batch events (the last one's gradient casts): once, below */
      mb[e->micro_batch] += d;
      if (e->phase == PH_FORWARD) fwd[e->micro_batch] += d;
      else if (e->phase == PH_BACKWARD) bwd[e->micro_batch] += d;
      if (!seen_mb) s.first_phase = e->phase;
      s.last_phase = e->phase;
      seen_mb = 1;
      nonmb_s += after_last_s; /* what lay between two micro-batch events is in the middle */
      after_last_s = 0;
    } else if (!seen_mb) s.pre_s += d;
    else after_last_s += d;
  }
  s.mid_s = nonmb_s;
  s.post_s = after_last_s;
  s.mb_min_s = s.fwd_min_s = s.bwd_min_s = DBL_MAX;
  for (int j = 0; j < m_graph; j++) {
    s.mb_min_s = MIN(s.mb_min_s, mb[j]);
    s.fwd_min_s = MIN(s.fwd_min_s, fwd[j]);
    s.bwd_min_s = MIN(s.bwd_min_s, bwd[j]);
  }
  for (int k = 1; k < GRAPH_STREAMS; k++) s.other_s = MAX(s.other_s, streams[k]);
  return s;
}

static bound_parts bound_of(const graph *g, const gpu_profile *prof, const plat_params *pl, const layout *l,
                            int m_graph, int m, gboolean work_only)
{
  bound_parts b = {0};
  int n = (int)g->programs->len, pp = g->meta.pp > 0 ? g->meta.pp : 1;
  int per_stage = g->meta.ranks_per_stage > 0 ? g->meta.ranks_per_stage : n;
  if (m_graph < 1 || m < m_graph || n < 1) return b;
  /* each explicit program once; a mirror runs its source's events (graph.h) */
  g_autofree prog_sums *own = g_new0(prog_sums, n);
  g_autofree gboolean *done = g_new0(gboolean, n);
  g_autofree double *fwd_stage = g_new(double, pp), *bwd_stage = g_new(double, pp), *post_stage = g_new(double, pp);
  for (int s = 0; s < pp; s++) fwd_stage[s] = bwd_stage[s] = post_stage[s] = DBL_MAX;
  for (int r = 0; r < n; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    int src = p->mirror_of >= 0 ? p->mirror_of : r;
    if (!done[src]) {
      own[src] = sums_of(g, g_ptr_array_index(g->programs, src), prof, pl, m_graph, work_only);
      done[src] = TRUE;
    }
    int st = MIN(r / per_stage, pp - 1);
    fwd_stage[st] = MIN(fwd_stage[st], own[src].fwd_min_s);
    bwd_stage[st] = MIN(bwd_stage[st], own[src].bwd_min_s);
    post_stage[st] = MIN(post_stage[st], own[src].post_s);
  }
  /* the pipeline's fill and drain: only where a stage holds one chunk (an interleaved stage's first forward
   * waits for the earlier stages' first chunk only) */
  gboolean chain = l->virtual_stages <= 1 && !sched_get(l->schedule)->chunked;
  gboolean drain = chain && !splits_backward(l->schedule, l->pp);
  for (int r = 0; r < n; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    const prog_sums *s = &own[p->mirror_of >= 0 ? p->mirror_of : r];
    double mbs = s->mb_min_s * m; /* the step's m micro-batches, each at least the cheapest */
    double stream0 = s->pre_s + s->mid_s + mbs + s->post_s;
    b.compute_s = MAX(b.compute_s, MAX(stream0, s->other_s));
    if (!chain) continue;
    int st = MIN(r / per_stage, pp - 1);
    double fill = 0, back = 0;
    for (int k = 0; k < st; k++) {
      fill += fwd_stage[k];
      back += bwd_stage[k];
    }
    /* the chain holds where this rank's first micro-batch event is a forward and its last a backward */
    if (s->first_phase != PH_FORWARD) fill = 0;
    double tail = drain && st > 0 && s->last_phase == PH_BACKWARD ? MAX(s->post_s, back + post_stage[0]) : s->post_s;
    b.pipeline_s = MAX(b.pipeline_s, MAX(fill, s->pre_s) + s->mid_s + mbs + tail);
  }
  b.total_s = MAX(b.compute_s, b.pipeline_s);
  return b;
}

bound_parts bound_step(const graph *g, const gpu_profile *prof, const plat_params *pl, const layout *l, int m_graph,
                       int m)
{
  return bound_of(g, prof, pl, l, m_graph, m, FALSE);
}

bound_parts bound_step_work(const graph *g, const gpu_profile *prof, const plat_params *pl, const layout *l,
                            int m_graph, int m)
{
  return bound_of(g, prof, pl, l, m_graph, m, TRUE);
}
