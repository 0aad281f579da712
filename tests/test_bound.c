/* test_bound -- the lower bound on a step (analysis/bound.h) and the exact top-K it allows (analysis/sweep.h):
 * the bound is never above the replayed step time, over layouts of every schedule, checkpointing, ZeRO stage
 * and overlap; and a sweep that stops replaying by the bound ranks its best K exactly as the exhaustive sweep,
 * on three spaces, with layouts pruned in each. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/bound.h"
#include "analysis/pool.h"
#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "check_main.h"
#include "sim/collective.h"
#include "sim/replay.h"
#include "sim_child.h"
#include "workloads/generate.h"
#include "platforms/plat_params.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"
#include "test_layout.h"

static double work_bound(const sim_request *req);
static double own_bound_at_one(const sim_request *req);

static sim_request request(const char *model, const char *profile, layout l)
{
  sim_request rq = {.l = l, .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named(model, &rq.m, &err), "%s", err ? err->message : "");
  ck_assert(profile_load_with_stack(profile, NULL, &rq.prof, &err));
  rq.capacity_gib = 1000; /* every layout replayed: the bound is about time, not memory */
  return rq;
}

/* The bound of rq from its whole graph (m micro-batches) and from the memory verdict's (the schedule's
 * sched_memory_micro_batches: 1F1B min(m, pp + 1)). */
static bound_parts bound_of(const sim_request *req, gboolean small)
{
  sim_request rq = *req;
  GError *err = NULL;
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  int m = rq.l.grad_accum;
  int mg = small ? MIN(m, sched_memory_micro_batches(rq.l.schedule, rq.l.pp, m)) : m;
  sim_request g_rq = rq;
  g_rq.l.global_batch = rq.l.dp * rq.l.micro_batch * mg;
  ck_assert(sim_request_prepare(&g_rq, &err));
  graph *g = gen_graph(&g_rq.m, &g_rq.l, &g_rq.gen, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  plat_params pl = plat_params_of(&g_rq.prof, g_rq.l.gpus);
  bound_parts b = bound_step(g, &g_rq.prof, &pl, &g_rq.l, mg, m);
  graph_free(g);
  return b;
}

/* Over 40 layouts of llama-7b on 8 H100 (tp, pp, micro-batch, checkpointing, every schedule, ZeRO 0-3, both
 * overlaps): bound <= replayed step time, from the whole graph and from the memory verdict's; the bound is not
 * trivial (at least 40% of the step: compute dominates these layouts), and the pipeline's fill and drain add
 * to it where pp > 1 with one chunk per stage. */
START_TEST(test_bound_is_below_the_replay_over_many_layouts)
{
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  int zb = -1, inter = -1, gpipe = -1;
  ck_assert(sched_parse("zb-h1", &zb, NULL) && sched_parse("interleaved", &inter, NULL) && sched_parse("gpipe", &gpipe, NULL));
  int n = 0;
  for (int tp = 1; tp <= 4; tp *= 2)
    for (int pp = 1; pp <= 4; pp *= 2)
      for (int v = 0; v < 5; v++) {
        if (tp * pp > 8) continue;
        layout l = test_layout(8, tp, pp, 1 + (v % 2), v == 1 ? CKPT_EVERY_LAYER : v == 3 ? CKPT_MLP : CKPT_NONE);
        l.seq_len = 1024;
        l.global_batch = 8 / (tp * pp) * 8 * l.micro_batch; /* 8 micro-batches */
        l.sp = tp > 1 && v == 2;
        if (pp > 1) l.schedule = v == 2 ? gpipe : v == 3 ? zb : v == 4 ? inter : 0;
        if (l.schedule == inter) l.virtual_stages = 2;
        if (l.schedule != inter && l.schedule != zb) {
          l.zero = v % 4;
          l.overlap_grad_reduce = v >= 2;
          l.overlap_param_gather = v == 2;
        }
        sim_request rq = request("llama-7b", "h100-sxm5-80gb", l);
        g_array_append_val(rqs, rq);
        n++;
      }
  { /* the gradient casts of the last micro-batch, counted once (a one-micro-batch graph holds them) */
    layout l = test_layout(8, 1, 1, 1, CKPT_NONE);
    l.seq_len = 1024;
    l.global_batch = 8 * 16;
    l.zero = 1;
    l.overlap_grad_reduce = TRUE;
    sim_request rq = request("llama-7b", "h100-sxm5-80gb", l);
    g_array_append_val(rqs, rq);
    n++;
  }
  ck_assert_int_ge(n, 40);
  g_autofree sim_request **ptr = g_new(sim_request *, n);
  for (int i = 0; i < n; i++) ptr[i] = &g_array_index(rqs, sim_request, i);
  g_autofree prediction *out = g_new0(prediction, n);
  pool_cfg cfg = {.jobs = 2, .fidelity = POOL_FULL};
  pool_run(ptr, (guint)n, &cfg, out);
  int piped = 0;
  for (int i = 0; i < n; i++) {
    const layout *l = &ptr[i]->l;
    ck_assert_msg(out[i].status == PRED_OK, "layout %d: %s", i, out[i].error);
    bound_parts whole = bound_of(ptr[i], FALSE), small = bound_of(ptr[i], TRUE);
    double t = out[i].step_time_s;
    ck_assert_msg(whole.total_s <= t * (1 + 1e-12), "tp%d pp%d mb%d %s %s zero%d: bound %.6g s above the replay's %.6g s",
                  l->tp, l->pp, l->micro_batch, layout_ckpt_name(l->ckpt), sched_name(l->schedule), l->zero,
                  whole.total_s, t);
    ck_assert_msg(small.total_s <= whole.total_s * (1 + 1e-12), "the memory graph's bound above the whole graph's");
    double work = work_bound(ptr[i]), one = own_bound_at_one(ptr[i]);
    ck_assert_msg(work > 0 && work <= t * (1 + 1e-12), "tp%d pp%d %s: work bound %.6g s above the replay's %.6g s",
                  l->tp, l->pp, sched_name(l->schedule), work, t);
    ck_assert_msg(one <= t * (1 + 1e-12), "tp%d pp%d %s zero%d ogr%d: bound at one micro-batch %.6g s above the "
                  "replay's %.6g s", l->tp, l->pp, sched_name(l->schedule), l->zero, l->overlap_grad_reduce, one, t);
    ck_assert_msg(whole.total_s >= 0.4 * t, "tp%d pp%d: bound %.4g s is under 40%% of %.4g s", l->tp, l->pp,
                  whole.total_s, t);
    if (l->pp > 1 && l->virtual_stages == 1) {
      piped++;
      ck_assert_msg(whole.pipeline_s > whole.compute_s, "pp%d %s: no fill or drain in the bound", l->pp,
                    sched_name(l->schedule));
    }
  }
  ck_assert_int_gt(piped, 5);
  g_array_free(rqs, TRUE);
}
END_TEST

/* The static pre-check (analysis/pool.c static_oom): pool_verdicts (the top-K sweep's, which gives a layout whose
 * static memory and overheads alone exceed the capacity its OOM without a graph) against the memory walk of
 * every layout (pool_run, memory only): the same status for each of 64 layouts of llama-7b on 8 H100 at 40 GiB
 * (tp 1-8, pp 1-2, ZeRO 0-3, micro-batch 1-2, seq 4096), the pre-check's peak ("at least") never above the
 * walk's, and both kinds of OOM present (by static memory alone, and by the activations on top of it). */
START_TEST(test_static_verdict_equals_the_walk)
{
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  for (int tp = 1; tp <= 8; tp *= 2)
    for (int pp = 1; pp <= 2; pp++)
      for (int zero = 0; zero <= 3; zero++)
        for (int mb = 1; mb <= 2; mb++) {
          layout l = test_layout(8, tp, pp, mb, CKPT_NONE);
          l.seq_len = 4096;
          l.global_batch = 8 / (tp * pp) * 4 * mb;
          l.zero = zero;
          sim_request rq = request("llama-7b", "h100-sxm5-80gb", l);
          rq.capacity_gib = 40;
          g_array_append_val(rqs, rq);
        }
  guint n = rqs->len;
  ck_assert_uint_eq(n, 64);
  g_autofree sim_request **ptr = g_new(sim_request *, n);
  for (guint i = 0; i < n; i++) ptr[i] = &g_array_index(rqs, sim_request, i);
  g_autofree prediction *quick = g_new0(prediction, n), *walk = g_new0(prediction, n);
  g_autofree double *bound = g_new0(double, n);
  pool_cfg cfg = {.jobs = 1, .fidelity = POOL_FULL, .prune_oom = TRUE};
  pool_verdicts(ptr, n, &cfg, quick, bound);
  cfg.memory_only = TRUE;
  pool_run(ptr, n, &cfg, walk);
  int by_static = 0, by_walk = 0, fit = 0;
  for (guint i = 0; i < n; i++) {
    const layout *l = &ptr[i]->l;
    ck_assert_msg(quick[i].status == walk[i].status, "tp%d pp%d zero%d mb%d: %s against the walk's %s", l->tp, l->pp,
                  l->zero, l->micro_batch, predict_status_name(quick[i].status), predict_status_name(walk[i].status));
    gboolean pre = strstr(quick[i].error, "at least") != NULL;
    if (pre)
      ck_assert_msg(quick[i].peak_gib <= walk[i].peak_gib * (1 + 1e-12), "static %.3f GiB above the walk's %.3f GiB",
                    quick[i].peak_gib, walk[i].peak_gib);
    else ck_assert_double_eq_tol(quick[i].peak_gib, walk[i].peak_gib, 1e-9);
    by_static += pre;
    by_walk += walk[i].status == PRED_OOM && !pre;
    fit += walk[i].status == PRED_OK;
  }
  ck_assert_msg(by_static > 0 && by_walk > 0 && fit > 0, "%d OOM by static memory, %d by the walk, %d fit", by_static,
                by_walk, fit);
  g_array_free(rqs, TRUE);
}
END_TEST

/* ---- the communication term (docs/sweep.md, "The communication term") ---- */

typedef struct floor_case {
  int world, n, members[16];
  graph_coll coll;
  coll_algo algo; /* forced */
} floor_case;

/* One collective of 1 GiB on stream 0 of every member of a group (H100, the study stack without per-step
 * latency): out[0] the replay's step, out[1] the bound of the same graph, out[2] the bound without a platform. */
static void run_floor(void *arg, double out[SIM_CHILD_MAX])
{
  floor_case *c = arg;
  gpu_profile p;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "study", &p, NULL));
  p.stack.nccl_step_latency_s = 0;
  graph *g = graph_new(c->world);
  for (int r = 0; r < c->world; r++) graph_program_of(g, r);
  int gid = graph_add_group(g, c->members, c->n, "dp");
  graph_event e = {.kind = EV_COLLECTIVE, .op = GRAPH_OP_COMM, .phase = PH_DP, .peer = gid, .bytes = 1073741824.0,
                   .micro_batch = -1, .layer = -1, .variant = (uint8_t)c->coll};
  for (int i = 0; i < c->n; i++) g_array_append_val(graph_program_of(g, c->members[i])->events, e);
  GError *err = NULL;
  ck_assert(graph_check(g, &err));
  plat_params pl = plat_params_of(&p, c->world);
  replay_options o = {.nccl_algo = c->algo};
  replay_result *res = replay_run(g, &p, &pl, &o, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  layout l = test_layout(c->world, 1, 1, 1, CKPT_NONE);
  out[0] = res->step_time_s;
  out[1] = bound_step(g, &p, &pl, &l, 1, 1).total_s;
  out[2] = bound_step(g, &p, NULL, &l, 1, 1).total_s;
  replay_result_free(res);
  graph_free(g);
}

/* The least bytes a member sends over the most its GPU's links carry: below the replay for every collective and
 * every algorithm (ring, tree, NVLS, hier, forced: one that does not fit the group runs the ring), inside one
 * NVLink domain and across two; and a ring's all-gather and reduce-scatter, which send exactly (n-1)/n of the
 * buffer over the one link they use (NVLink inside the node; the NIC between nodes), within 1% of it. With no
 * platform the term is 0. */
START_TEST(test_comm_floor_is_below_every_algorithm_and_a_rings_time)
{
  floor_case groups[] = {
      {.world = 8, .n = 8, .members = {0, 1, 2, 3, 4, 5, 6, 7}},
      {.world = 16, .n = 2, .members = {0, 8}},
      {.world = 16, .n = 16, .members = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
  };
  coll_algo algos[] = {COLL_ALGO_RING, COLL_ALGO_TREE, COLL_ALGO_NVLS, COLL_ALGO_HIER};
  graph_coll colls[] = {COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER};
  int tight = 0;
  for (guint gi = 0; gi < G_N_ELEMENTS(groups); gi++)
    for (guint ai = 0; ai < G_N_ELEMENTS(algos); ai++)
      for (guint ci = 0; ci < G_N_ELEMENTS(colls); ci++) {
        floor_case c = groups[gi];
        c.algo = algos[ai];
        c.coll = colls[ci];
        double out[SIM_CHILD_MAX];
        sim_child_run(run_floor, &c, out);
        ck_assert_msg(out[1] > 0 && out[1] <= out[0] * (1 + 1e-12), "%d members of %d, %s %d: bound %.6g s, replay %.6g s",
                      c.n, c.world, coll_algo_name(c.algo), c.coll, out[1], out[0]);
        ck_assert_msg(out[2] == 0, "a bound with no platform counts communication");
        if (c.algo == COLL_ALGO_RING && c.coll != COLL_ALL_REDUCE && c.n < 16) {
          ck_assert_msg(out[1] >= 0.99 * out[0], "%d members of %d, ring %d: bound %.6g s, replay %.6g s", c.n, c.world,
                        c.coll, out[1], out[0]);
          tight++;
        }
      }
  ck_assert_int_eq(tight, 4);
}
END_TEST

/* Across nodes, where the communication term matters (docs/sweep.md "The communication term"): 16 layouts of
 * llama-7b on 32 H100 (4 nodes) at 100 Gbit/s InfiniBand (tp 2 and 8, so data-parallel groups inside a node and
 * across; pp 1 and 2; ZeRO 0 and 3; the gradient overlap off and on): the bound never above the replayed step,
 * and where the data-parallel all-reduce sits on the compute stream (ZeRO 0, no overlap) the term adds to it and
 * the bound is at least 70% of the step (compute alone: about half). */
START_TEST(test_bound_with_communication_is_below_the_replay_across_nodes)
{
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  for (int tp = 2; tp <= 8; tp *= 4)
    for (int pp = 1; pp <= 2; pp++)
      for (int zero = 0; zero <= 3; zero += 3)
        for (int ogr = 0; ogr <= 1; ogr++) {
          layout l = test_layout(32, tp, pp, 1, CKPT_NONE);
          l.seq_len = 2048;
          l.global_batch = 32 / (tp * pp) * 4; /* 4 micro-batches */
          l.zero = zero;
          l.overlap_grad_reduce = ogr;
          sim_request rq = request("llama-7b", "h100-sxm5-80gb", l);
          rq.prof.ib_bytes_per_s = 100e9 / 8;
          g_array_append_val(rqs, rq);
        }
  guint n = rqs->len;
  g_autofree sim_request **ptr = g_new(sim_request *, n);
  for (guint i = 0; i < n; i++) ptr[i] = &g_array_index(rqs, sim_request, i);
  g_autofree prediction *out = g_new0(prediction, n);
  pool_cfg cfg = {.jobs = 2, .fidelity = POOL_FULL};
  pool_run(ptr, n, &cfg, out);
  int sharper = 0;
  for (guint i = 0; i < n; i++) {
    const layout *l = &ptr[i]->l;
    ck_assert_msg(out[i].status == PRED_OK, "layout %u: %s", i, out[i].error);
    sim_request rq = *ptr[i];
    GError *err = NULL;
    ck_assert(sim_request_prepare(&rq, &err));
    graph *g = gen_graph(&rq.m, &rq.l, &rq.gen, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    plat_params pl = plat_params_of(&rq.prof, rq.l.gpus);
    double with = bound_step(g, &rq.prof, &pl, &rq.l, rq.l.grad_accum, rq.l.grad_accum).total_s;
    double without = bound_step(g, &rq.prof, NULL, &rq.l, rq.l.grad_accum, rq.l.grad_accum).total_s;
    graph_free(g);
    double t = out[i].step_time_s;
    ck_assert_msg(with <= t * (1 + 1e-12), "tp%d pp%d zero%d ogr%d: bound %.6g s above the replay's %.6g s", l->tp,
                  l->pp, l->zero, l->overlap_grad_reduce, with, t);
    ck_assert_msg(with >= without, "the communication term lowered the bound");
    double work = work_bound(ptr[i]);
    ck_assert_msg(work > 0 && work <= t * (1 + 1e-12), "tp%d pp%d zero%d: work bound %.6g s above the replay's %.6g s",
                  l->tp, l->pp, l->zero, work, t);
    if (!l->overlap_grad_reduce && l->zero < 2) {
      ck_assert_msg(with > without * 1.02 && with >= 0.7 * t, "tp%d pp%d zero%d: bound %.4g s (compute alone %.4g s), "
                    "step %.4g s", l->tp, l->pp, l->zero, with, without, t);
      sharper++;
    }
  }
  ck_assert_int_eq(sharper, 4);
  g_array_free(rqs, TRUE);
}
END_TEST

/* ---- the micro-batches' work (docs/sweep.md, "Work first") ---- */

/* req prepared at the micro-batches pool_bounds' graph has: one, or the memory verdict's count where the schedule
 * takes no fewer. */
static sim_request at_bound_count(const sim_request *req)
{
  sim_request rq = *req, one;
  GError *err = NULL;
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  int m = rq.l.grad_accum;
  one = rq;
  one.l.global_batch = rq.l.dp * rq.l.micro_batch;
  if (sim_request_prepare(&one, &err)) return one;
  g_clear_error(&err);
  rq.l.global_batch = rq.l.dp * rq.l.micro_batch * MIN(m, sched_memory_micro_batches(rq.l.schedule, rq.l.pp, m));
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  return rq;
}

typedef bound_parts (*bound_fn)(const graph *, const gpu_profile *, const plat_params *, const layout *, int, int);

/* Bound `fn` (bound_step or bound_step_work) of req from pool_bounds' graph (pool_bound's and its class's). */
static double bound_at_one(const sim_request *req, bound_fn fn)
{
  sim_request rq = *req, p;
  GError *err = NULL;
  ck_assert(sim_request_prepare(&rq, &err));
  p = at_bound_count(req);
  graph *g = gen_graph(&p.m, &p.l, &p.gen, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  plat_params pl = plat_params_of(&p.prof, p.l.gpus);
  double b = fn(g, &p.prof, &pl, &p.l, p.l.grad_accum, rq.l.grad_accum).total_s;
  graph_free(g);
  return b;
}

static double work_bound(const sim_request *req) { return bound_at_one(req, bound_step_work); }
static double own_bound_at_one(const sim_request *req) { return bound_at_one(req, bound_step); }

/* The forward, backward and recompute events of every program of rq's graph at pool_bounds' count, as text (a
 * collective's group by its ranks, not its id). */
static char *work_events(const sim_request *req)
{
  sim_request rq = at_bound_count(req);
  GError *err = NULL;
  graph *g = gen_graph(&rq.m, &rq.l, &rq.gen, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  GString *o = g_string_new(NULL);
  for (guint r = 0; r < g->programs->len; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    g_string_append_printf(o, "program %d mirror of %d\n", p->rank, p->mirror_of);
    if (!p->events) continue;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->phase != PH_FORWARD && e->phase != PH_BACKWARD && e->phase != PH_RECOMPUTE) continue;
      g_string_append_printf(o, "%d %d %d %d %d %d %d %d %d %d %d %.17g %.17g", e->kind, e->cost, e->phase, e->variant,
                             e->dtype, e->stream, e->captured, e->micro_batch, e->m, e->n, e->k, e->flops, e->bytes);
      if (e->kind == EV_COLLECTIVE) {
        const graph_group *gr = g_ptr_array_index(g->groups, graph_group_for(p, e->peer));
        for (guint j = 0; j < gr->ranks->len; j++) g_string_append_printf(o, " %d", g_array_index(gr->ranks, int, j));
      } else if (e->kind != EV_COMPUTE) g_string_append_printf(o, " peer %d", e->peer);
      g_string_append_c(o, '\n');
    }
  }
  graph_free(g);
  return g_string_free(o, FALSE);
}

/* The bound of the micro-batches' work holds for a class of layouts only if the generator emits that work alike for
 * every ZeRO stage and both overlaps: over 18 layouts (llama-7b on 16 H100 and mixtral-8x7b with experts: tp, pp,
 * cp, every schedule, checkpointing none, selective and every_layer, bf16 and fp8), every valid (ZeRO, overlap,
 * overlap) variant has the same forward, backward and recompute events, program by program, as ZeRO 0 without
 * overlaps; and its bound_step_work is the same and below the variant's replayed step (checked on the first
 * variant of each, replayed). */
START_TEST(test_work_is_the_same_for_every_zero_stage_and_overlap)
{
  int zb = -1, inter = -1, gpipe = -1, dv = -1;
  ck_assert(sched_parse("zb-h1", &zb, NULL) && sched_parse("interleaved", &inter, NULL) &&
            sched_parse("gpipe", &gpipe, NULL) && sched_parse("dualpipev", &dv, NULL));
  int checked = 0, variants = 0;
  for (int c = 0; c < 18; c++) {
    gboolean moe = c >= 15;
    layout l = test_layout(16, c % 3 == 0 ? 1 : 2, 1 + c % 2 + (c % 5 == 4), 1, c % 4 == 1 ? CKPT_EVERY_LAYER : c % 4 == 2 ? CKPT_SELECTIVE : CKPT_NONE);
    l.seq_len = 1024;
    l.cp = c % 6 == 5 ? 2 : 1;
    l.sp = l.tp > 1 && c % 2;
    l.precision = c % 7 == 3 ? PREC_FP8 : PREC_BF16;
    if (l.pp > 1) l.schedule = c % 5 == 0 ? gpipe : c % 5 == 1 ? inter : c % 5 == 2 ? zb : c % 5 == 3 ? dv : 0;
    if (l.schedule == inter || l.schedule == dv) l.virtual_stages = 2;
    if (moe) {
      l.tp = 1;
      l.cp = 1;
      l.sp = FALSE;
      l.ep = 8;
    }
    l.global_batch = 16 / (l.tp * l.pp * l.cp) * 8; /* 8 micro-batches per replica */
    sim_request base = request(moe ? "mixtral-8x7b" : "llama-7b", "h100-sxm5-80gb", l);
    base.l.zero = 0;
    sim_request tmp = base;
    GError *err = NULL;
    if (!sim_request_prepare(&tmp, &err)) { /* a combination the model refuses: not this test's */
      g_clear_error(&err);
      continue;
    }
    g_autofree char *want = work_events(&base);
    double want_b = -1;
    for (int z = 0; z <= 3; z++)
      for (int og = 0; og <= 1; og++)
        for (int op = 0; op <= 1; op++) {
          sim_request v = base;
          v.l.zero = z;
          v.l.overlap_grad_reduce = og;
          v.l.overlap_param_gather = op;
          sim_request p = v;
          if (!sim_request_prepare(&p, &err)) { /* ZeRO's rules (layout_validate) */
            g_clear_error(&err);
            continue;
          }
          int m = p.l.grad_accum;
          g_autofree char *got = work_events(&v);
          ck_assert_msg(!strcmp(got, want), "case %d (tp%d pp%d cp%d %s %s): ZeRO %d ogr %d opg %d changes the work",
                        c, l.tp, l.pp, l.cp, sched_name(l.schedule), layout_ckpt_name(l.ckpt), z, og, op);
          p = at_bound_count(&v);
          graph *g = gen_graph(&p.m, &p.l, &p.gen, &err);
          plat_params pl = plat_params_of(&p.prof, p.l.gpus);
          double b = bound_step_work(g, &p.prof, &pl, &p.l, p.l.grad_accum, m).total_s;
          graph_free(g);
          if (want_b < 0) want_b = b;
          ck_assert_msg(fabs(b - want_b) <= 1e-12 * want_b, "case %d: work bound %.9g vs %.9g", c, b, want_b);
          variants++;
        }
    checked++;
  }
  ck_assert_int_ge(checked, 14);
  ck_assert_int_ge(variants, 60);
}
END_TEST

/* A one-point sweep spec of `model` on `gpus` GPUs of `profile`; the caller sets the lists. */
static sweep_spec spec(const char *model, const char *profile, int gpus, int seq, int gb)
{
  sweep_spec s = {.seq_len = seq, .global_batch = gb, .zero = 1, .gen = gen_default_options(), .shard_i = 1,
                  .shard_n = 1, .pool = {.jobs = 2, .fidelity = POOL_AUTO, .prune_oom = TRUE}};
  GError *err = NULL;
  ck_assert(model_load_named(model, &s.m, &err));
  s.profiles = g_ptr_array_new();
  g_ptr_array_add(s.profiles, (gpointer)profile);
  s.stacks = g_ptr_array_new();
  g_ptr_array_add(s.stacks, NULL);
  s.gpus = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_val(s.gpus, gpus);
  return s;
}

static GArray *ints(int n, const int *v)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(a, v, (guint)n);
  return a;
}

static void spec_clear(sweep_spec *s)
{
  for (int a = 0; a < AX_N; a++)
    if (s->layout[a]) g_array_unref(s->layout[a]);
  for (int a = 0; a < WHATIF_N; a++)
    if (s->whatif[a]) g_array_unref(s->whatif[a]);
  g_array_unref(s->gpus);
  g_ptr_array_unref(s->profiles);
  g_ptr_array_unref(s->stacks);
}

/* The first k ranked rows of status ok of each point, as "point|index|step time" lines. */
static char *top_rows(const csv_table *ranked, int k)
{
  GString *o = g_string_new(NULL);
  int st = csv_column(ranked, "status"), ix = csv_column(ranked, "index"), ts = csv_column(ranked, "step_time_s"),
      ib = csv_column(ranked, "ib_gbps"), rk = csv_column(ranked, "rank"), same = csv_column(ranked, "same_as");
  GHashTable *shown = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint r = 0; r < ranked->rows->len; r++) {
    if (strcmp(csv_cell(ranked, r, st), "ok")) continue;
    const char *point = csv_cell(ranked, r, ib);
    int n = GPOINTER_TO_INT(g_hash_table_lookup(shown, point));
    if (n >= k) continue;
    if (!*csv_cell(ranked, r, same)) g_hash_table_insert(shown, g_strdup(point), GINT_TO_POINTER(n + 1));
    g_string_append_printf(o, "%s|%s|%s|%s|%s\n", point, csv_cell(ranked, r, rk), csv_cell(ranked, r, ix),
                           csv_cell(ranked, r, ts), csv_cell(ranked, r, same));
  }
  g_hash_table_destroy(shown);
  return g_string_free(o, FALSE);
}

/* Sweep s with top-K and exhaustively: the same top K rows of each point (rank, index, step time, the row it is
 * the same step as), and at least one layout pruned by the bound. */
static void check_top_k(sweep_spec *s, int k)
{
  GError *err = NULL;
  s->top = 0;
  g_autoptr(csv_table) all = sweep_run(s, &err);
  ck_assert_msg(all != NULL, "%s", err ? err->message : "");
  s->top = k;
  g_autoptr(csv_table) pruned = sweep_run(s, &err);
  ck_assert_msg(pruned != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(all->rows->len, pruned->rows->len);
  g_autoptr(csv_table) ra = sweep_rank(all), rp = sweep_rank(pruned);
  g_autofree char *ta = top_rows(ra, k), *tb = top_rows(rp, k);
  ck_assert_str_eq(tb, ta);
  int st = csv_column(pruned, "status"), n_pruned = 0, n_ok = 0;
  for (guint r = 0; r < pruned->rows->len; r++) {
    n_pruned += !strcmp(csv_cell(pruned, r, st), "pruned");
    n_ok += !strcmp(csv_cell(pruned, r, st), "ok");
  }
  ck_assert_msg(n_pruned > 0, "no layout pruned by the bound (%d replayed)", n_ok);
}

/* Space 1: tp x pp x micro-batch x checkpointing of llama-7b on 8 A100, K = 3. */
START_TEST(test_top_k_equals_exhaustive_tp_pp_mb_ckpt)
{
  sweep_spec s = spec("llama-7b", "a100-sxm4-80gb", 8, 1024, 16);
  s.layout[AX_TP] = ints(3, (int[]){1, 2, 4});
  s.layout[AX_PP] = ints(2, (int[]){1, 2});
  s.layout[AX_MB] = ints(2, (int[]){1, 2});
  s.layout[AX_CKPT] = ints(2, (int[]){CKPT_NONE, CKPT_EVERY_LAYER});
  s.layout[AX_ATTN] = ints(1, (int[]){ATTN_FLASH2});
  check_top_k(&s, 3);
  spec_clear(&s);
}
END_TEST

/* Space 2: schedules (1f1b, gpipe, interleaved) x pp x tp on 16 H100 at InfiniBand 400 and 10 Gbit/s (two points,
 * each its own top K), K = 4. */
START_TEST(test_top_k_equals_exhaustive_schedules_two_points)
{
  sweep_spec s = spec("llama-7b", "h100-sxm5-80gb", 16, 1024, 64);
  int gpipe, inter;
  ck_assert(sched_parse("gpipe", &gpipe, NULL) && sched_parse("interleaved", &inter, NULL));
  s.layout[AX_TP] = ints(2, (int[]){1, 2});
  s.layout[AX_PP] = ints(2, (int[]){2, 4});
  s.layout[AX_MB] = ints(1, (int[]){1});
  s.layout[AX_SP] = ints(1, (int[]){0});
  s.layout[AX_CKPT] = ints(2, (int[]){CKPT_NONE, CKPT_EVERY_LAYER});
  s.layout[AX_ATTN] = ints(1, (int[]){ATTN_FLASH2});
  s.layout[AX_SCHED] = ints(3, (int[]){0, gpipe, inter});
  s.whatif[WHATIF_IB_GBPS] = g_array_new(FALSE, FALSE, sizeof(double));
  double ib[] = {400, 10}; /* the faster point first: a threshold taken from the wrong point would prune the slower one */
  g_array_append_vals(s.whatif[WHATIF_IB_GBPS], ib, 2);
  check_top_k(&s, 4);
  spec_clear(&s);
}
END_TEST

/* Space 3: ZeRO 0-3 x both overlaps x precision (bf16, fp8) x tp on 8 H100, K = 5. */
START_TEST(test_top_k_equals_exhaustive_zero_overlaps_precision)
{
  sweep_spec s = spec("llama-7b", "h100-sxm5-80gb", 8, 1024, 32);
  s.layout[AX_TP] = ints(2, (int[]){1, 2});
  s.layout[AX_PP] = ints(1, (int[]){1});
  s.layout[AX_MB] = ints(2, (int[]){1, 2});
  s.layout[AX_SP] = ints(1, (int[]){0});
  s.layout[AX_CKPT] = ints(1, (int[]){CKPT_NONE});
  s.layout[AX_ATTN] = ints(1, (int[]){ATTN_FLASH2});
  s.layout[AX_ZERO] = ints(4, (int[]){0, 1, 2, 3});
  s.layout[AX_OGR] = ints(2, (int[]){0, 1});
  s.layout[AX_OPG] = ints(2, (int[]){0, 1});
  s.layout[AX_PREC] = ints(2, (int[]){PREC_BF16, PREC_FP8});
  check_top_k(&s, 5);
  spec_clear(&s);
}
END_TEST

/* Memory last (docs/sweep.md): a top-K sweep takes a layout's memory verdict only once its bound admits it. On
 * llama-7b at seq 4096 on 8 H100 cut to 40 GiB (tp 1-2, pp 1-2, micro-batch 1-2, checkpointing none and
 * every_layer), K = 3: the top K as the exhaustive sweep's; every layout it found not to fit is the exhaustive
 * sweep's OOM with the same peak, and one at least was found by its walk (not by static memory alone: its bound
 * was below the K-th best); every pruned row has no memory columns and says so; none counted twice. */
START_TEST(test_top_k_takes_memory_verdicts_last)
{
  sweep_spec s = spec("llama-7b", "h100-sxm5-80gb", 8, 4096, 32);
  s.layout[AX_TP] = ints(2, (int[]){1, 2});
  s.layout[AX_PP] = ints(2, (int[]){1, 2});
  s.layout[AX_MB] = ints(2, (int[]){1, 2});
  s.layout[AX_SP] = ints(1, (int[]){0});
  s.layout[AX_CKPT] = ints(2, (int[]){CKPT_NONE, CKPT_EVERY_LAYER});
  s.layout[AX_ATTN] = ints(1, (int[]){ATTN_FLASH2});
  s.whatif[WHATIF_GPU_MEMORY] = g_array_new(FALSE, FALSE, sizeof(double));
  double gib = 40;
  g_array_append_val(s.whatif[WHATIF_GPU_MEMORY], gib);
  check_top_k(&s, 3);
  GError *err = NULL;
  s.top = 0;
  g_autoptr(csv_table) all = sweep_run(&s, &err);
  s.top = 3;
  g_autoptr(csv_table) top = sweep_run(&s, &err);
  ck_assert(all && top);
  int st = csv_column(top, "status"), pk = csv_column(top, "peak_mem_gib"), er = csv_column(top, "error"),
      ix = csv_column(top, "index");
  int walked_oom = 0, pruned = 0, ok = 0;
  for (guint r = 0; r < top->rows->len; r++) {
    const char *status = csv_cell(top, r, st);
    guint a = 0; /* the same layout in the exhaustive sweep */
    while (a < all->rows->len && strcmp(csv_cell(all, a, ix), csv_cell(top, r, ix))) a++;
    ck_assert_uint_lt(a, all->rows->len);
    if (!strcmp(status, "oom")) {
      ck_assert_str_eq(csv_cell(all, a, st), "oom");
      if (!strstr(csv_cell(top, r, er), "at least")) {
        ck_assert_str_eq(csv_cell(top, r, pk), csv_cell(all, a, pk));
        walked_oom++;
      }
    } else if (!strcmp(status, "pruned")) {
      ck_assert_str_eq(csv_cell(top, r, pk), "");
      ck_assert_msg(strstr(csv_cell(top, r, er), "memory not checked"), "%s", csv_cell(top, r, er));
      pruned++;
    } else if (!strcmp(status, "ok")) {
      ck_assert_str_eq(csv_cell(all, a, st), "ok");
      ck_assert_str_eq(csv_cell(top, r, pk), csv_cell(all, a, pk));
      ok++;
    }
  }
  ck_assert_int_gt(walked_oom, 0);
  ck_assert_int_gt(pruned, 0);
  ck_assert_int_ge(ok, 3);
  spec_clear(&s);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("bound");
  TCase *tc = tcase_create("bound");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_bound_is_below_the_replay_over_many_layouts);
  tcase_add_test(tc, test_static_verdict_equals_the_walk);
  tcase_add_test(tc, test_comm_floor_is_below_every_algorithm_and_a_rings_time);
  tcase_add_test(tc, test_bound_with_communication_is_below_the_replay_across_nodes);
  tcase_add_test(tc, test_work_is_the_same_for_every_zero_stage_and_overlap);
  suite_add_tcase(s, tc);
  tc = tcase_create("top_k"); /* CK_RUN_CASE=bound or top_k runs one */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_top_k_equals_exhaustive_tp_pp_mb_ckpt);
  tcase_add_test(tc, test_top_k_equals_exhaustive_schedules_two_points);
  tcase_add_test(tc, test_top_k_equals_exhaustive_zero_overlaps_precision);
  tcase_add_test(tc, test_top_k_takes_memory_verdicts_last);
  suite_add_tcase(s, tc);
  return check_run(s);
}
