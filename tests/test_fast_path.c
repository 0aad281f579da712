/* test_fast_path -- the replay's two shortcuts against the full replay of every rank. Mirrors (graph.h):
 * with cp 2 the dp-cp group holds the mirrors of two explicit programs (one per cp index), and ZeRO-2/3 and
 * the overlaps put its collectives inside the micro-batches, where every mirror is still passive: the
 * symmetric replay (one explicit rank per stage and cp index) gives the step time of the replay of every
 * rank explicit (--no-symmetry), within 1e-9 relative, on 1F1B and interleaved, ZeRO 0-3, with and without
 * the overlaps; one combination is not exact and is held to a documented bound (see below). The fast path (analysis/pool.h: two replays at the schedule's affine counts, extrapolated)
 * gives the full replay's step time, within 1e-9 relative, where the step has a communication stream: ZeRO 0-3
 * with and without the overlapped gradient reduction and parameter gather, on 1F1B, with tensor
 * parallelism and without, and a slow network (communication the overlaps cannot hide). The expected value
 * is the full replay of the whole step (--fidelity full), computed independently of the extrapolation. The
 * breakdown categories are held to 1e-3 of the step (see below). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/pool.h"
#include "check_main.h"
#include "check_request.h"
#include "workloads/schedule.h"
#include "test_layout.h"

/* Runs rq at fidelity f and in full; the f run must have replayed in full (its line judged bent or too costly)
 * and so give the full replay's step time to the last bit. */
static void replays_in_full(sim_request *rq, pool_fidelity f, const char *what)
{
  prediction got, full;
  pool_cfg cfg = {.jobs = 2, .fidelity = f};
  pool_run(&rq, 1, &cfg, &got);
  cfg.fidelity = POOL_FULL;
  pool_run(&rq, 1, &cfg, &full);
  ck_assert_msg(got.status == PRED_OK && full.status == PRED_OK, "%s: %s %s", what, got.error, full.error);
  ck_assert_msg(got.how == PRED_HOW_FULL, "%s: extrapolated (%.9g s, the full replay %.9g s)", what, got.step_time_s,
                full.step_time_s);
  ck_assert_double_eq(got.step_time_s, full.step_time_s);
}

static sim_request request(layout l, double ib_gbps)
{
  sim_request rq = {.l = l, .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named("llama-7b", &rq.m, &err), "%s", err ? err->message : "");
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &rq.prof, &err));
  if (ib_gbps > 0) rq.prof.ib_bytes_per_s = ib_gbps * 1e9 / 8;
  rq.capacity_gib = 1000; /* every layout replayed */
  return rq;
}

START_TEST(test_fast_path_equals_the_full_replay_with_overlaps_and_zero)
{
  int gpipe = -1;
  ck_assert(sched_parse("gpipe", &gpipe, NULL));
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  struct { int tp, zero, ogr, opg, sched; double ib_gbps; int cp; } cases[] = {
      {2, 1, 1, 1, 0, 0, 1},  {2, 2, 1, 0, 0, 0, 1},  {2, 3, 0, 0, 0, 0, 1}, {2, 3, 1, 0, 0, 0, 1},
      {1, 2, 1, 1, 0, 25, 1}, {1, 3, 1, 0, 0, 25, 1}, {2, 0, 1, 0, 0, 25, 1}, {2, 2, 1, 0, 0, 25, 1},
      {2, 2, 1, 0, 0, 0, 2},  {1, 3, 1, 0, 0, 25, 2}, {2, 1, 1, 1, 0, 0, 2}, /* cp 2: mirrored, sim/replay.c */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int tp = cases[i].tp, pp = 4, dp = 2;
    layout l = test_layout(tp * pp * dp * cases[i].cp, tp, pp, 1, CKPT_NONE);
    l.cp = cases[i].cp;
    l.seq_len = 512;
    l.global_batch = dp * 12; /* 12 micro-batches: above 2 m2 = 10, so the check's third run is made */
    l.zero = cases[i].zero;
    l.overlap_grad_reduce = cases[i].ogr;
    l.overlap_param_gather = cases[i].opg;
    if (cases[i].sched) l.schedule = gpipe;
    sim_request rq = request(l, cases[i].ib_gbps);
    g_array_append_val(rqs, rq);
  }
  guint n = rqs->len;
  g_autofree sim_request **ptr = g_new(sim_request *, n);
  for (guint i = 0; i < n; i++) ptr[i] = &g_array_index(rqs, sim_request, i);
  g_autofree prediction *fast = g_new0(prediction, n), *full = g_new0(prediction, n);
  pool_cfg cfg = {.jobs = 2, .fidelity = POOL_FAST}; /* auto: a full replay, cheaper than the three runs at 12 */
  pool_run(ptr, n, &cfg, fast);
  cfg.fidelity = POOL_FULL;
  pool_run(ptr, n, &cfg, full);
  for (guint i = 0; i < n; i++) {
    const layout *l = &ptr[i]->l;
    ck_assert_msg(full[i].status == PRED_OK && fast[i].status == PRED_OK, "case %u: %s %s", i, full[i].error,
                  fast[i].error);
    ck_assert_msg(fast[i].how == PRED_HOW_FAST, "case %u: zero%d ogr%d opg%d not on the fast path", i, l->zero,
                  l->overlap_grad_reduce, l->overlap_param_gather);
    ck_assert_int_eq(full[i].how, PRED_HOW_FULL);
    double rel = fabs(fast[i].step_time_s - full[i].step_time_s) / full[i].step_time_s;
    /* one case is not affine to 1e-9: cp 2, ZeRO-3 with the gradient overlap at 25 Gbit/s, 1.3e-4 (docs/sweep.md) */
    double tol = l->cp > 1 && l->zero == 3 && l->overlap_grad_reduce ? 1e-3 : 1e-9;
    ck_assert_msg(rel < tol, "case %u: tp%d cp%d %s zero%d ogr%d opg%d: fast %.15g s, full %.15g s (rel %.3g)", i, l->tp,
                  l->cp, sched_name(l->schedule), l->zero, l->overlap_grad_reduce, l->overlap_param_gather,
                  fast[i].step_time_s, full[i].step_time_s, rel);
    /* the breakdown: where a communication stream overlaps the compute, which category a second of a rank
     * is counted in may shift between the two counts (measured: 6.6e-5 s of pp-wait in a 0.3 s step, tp1
     * ZeRO-3 at 25 Gbit/s): within 1e-3 of the step, not exact (docs/sweep.md) */
    for (int c = 0; c < TL_N; c++)
      ck_assert_msg(fabs(fast[i].seconds[c] - full[i].seconds[c]) <= 1e-3 * full[i].step_time_s,
                    "case %u: category %d: fast %.15g, full %.15g", i, c, fast[i].seconds[c], full[i].seconds[c]);
  }
  g_array_free(rqs, TRUE);
}
END_TEST

/* Each request of rqs replayed in full twice: as generated (mirrored: a, in order) and with every rank explicit
 * (b), where nothing is a mirror, so nothing is lone or absorbed and every flow is simulated. */
static void replay_mirrored_and_every_rank(GArray *rqs, prediction *a, prediction *b)
{
  guint n = rqs->len;
  g_autofree sim_request **sym = g_new(sim_request *, n), **every = g_new(sim_request *, n);
  g_autofree sim_request *copies = g_new(sim_request, n);
  for (guint i = 0; i < n; i++) {
    sym[i] = &g_array_index(rqs, sim_request, i);
    copies[i] = *sym[i];
    copies[i].gen.symmetry = FALSE;
    every[i] = &copies[i];
  }
  pool_cfg cfg = {.jobs = 2, .fidelity = POOL_FULL};
  pool_run(sym, n, &cfg, a);
  pool_run(every, n, &cfg, b);
}

/* The symmetric and the every-rank replay of llama-7b with cp 2: 1F1B (pp 2) and interleaved (pp 2, 2 virtual
 * stages), tp 2 (two dp-cp members per node: 4 channels), tp 1 (8) and tp 8 (one: the node is the tensor-parallel
 * group), ZeRO 0-3, the overlaps, a slow network (25 Gbit/s: communication the overlaps cannot hide). */
START_TEST(test_mirrors_with_cp_equal_every_rank_explicit_with_overlaps_and_zero)
{
  int inter = -1;
  ck_assert(sched_parse("interleaved", &inter, NULL));
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  /* exact: 1e-9; else held to 5e-3 (measured 2.8e-3 at most), see below */
  struct { int tp, zero, ogr, opg, v; double ib_gbps; gboolean exact; } cases[] = {
      {2, 0, 0, 0, 1, 0, TRUE},  {2, 1, 0, 0, 1, 0, TRUE},  {2, 2, 0, 0, 1, 0, TRUE},   {2, 3, 0, 0, 1, 0, TRUE},
      {2, 0, 1, 0, 1, 0, TRUE},  {2, 1, 1, 1, 1, 0, TRUE},  {2, 2, 1, 1, 1, 0, TRUE},   {2, 2, 1, 0, 1, 25, FALSE},
      {1, 1, 1, 1, 1, 25, TRUE}, {1, 2, 1, 0, 1, 0, TRUE},  {1, 3, 0, 0, 1, 25, TRUE},  {2, 1, 1, 1, 2, 0, TRUE},
      {2, 1, 1, 1, 2, 25, FALSE}, {2, 0, 1, 0, 2, 0, TRUE}, {1, 1, 1, 1, 2, 0, TRUE},   {2, 1, 0, 0, 2, 0, TRUE},
      {2, 3, 1, 0, 1, 0, FALSE}, {1, 3, 1, 0, 1, 25, TRUE}, {1, 2, 1, 0, 1, 25, TRUE},
      /* tp 8, a whole node: the streamed explicit rank's tensor-parallel collectives taken alone (sim/replay.c
       * streamed_alone: its dp-cp ring crosses only NICs), against the every-rank replay that simulates them */
      {8, 1, 1, 1, 1, 0, TRUE},  {8, 1, 1, 1, 2, 25, TRUE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int tp = cases[i].tp, pp = 2, cp = 2, dp = 2;
    layout l = test_layout(tp * pp * cp * dp * 2, tp, pp, 1, CKPT_NONE); /* dp 4 */
    l.cp = cp;
    l.seq_len = 1024;
    l.global_batch = 4 * 6; /* 6 micro-batches */
    l.zero = cases[i].zero;
    l.overlap_grad_reduce = cases[i].ogr;
    l.overlap_param_gather = cases[i].opg;
    if (cases[i].v > 1) {
      l.schedule = inter;
      l.virtual_stages = cases[i].v;
      l.global_batch = 4 * 8; /* interleaved: a multiple of pp micro-batches */
    }
    sim_request rq = request(l, cases[i].ib_gbps);
    g_array_append_val(rqs, rq);
  }
  guint n = rqs->len;
  g_autofree prediction *a = g_new0(prediction, n), *b = g_new0(prediction, n);
  replay_mirrored_and_every_rank(rqs, a, b);
  for (guint i = 0; i < n; i++) {
    const layout *l = &g_array_index(rqs, sim_request, i).l;
    ck_assert_msg(a[i].status == PRED_OK && b[i].status == PRED_OK, "case %u: %s %s", i, a[i].error, b[i].error);
    double rel = fabs(a[i].step_time_s - b[i].step_time_s) / b[i].step_time_s;
    /* Not exact where a communication stream's ring shares NVLink with tensor parallelism's collectives (tp 2)
     * while a slow network or ZeRO-3's gathers keep it busy: the flow an active member sends its passive
     * successor (a direct transfer) is limited by the sender's links and by the successor's, which carry
     * none of that rank's own traffic, whereas in the full ring they carry its mirror's (docs/sweep.md) */
    double tol = cases[i].exact ? 1e-9 : 5e-3;
    ck_assert_msg(rel < tol, "case %u: tp%d cp%d %s v%d zero%d ogr%d opg%d: mirrored %.15g s, every rank %.15g s (rel %.3g)",
                  i, l->tp, l->cp, sched_name(l->schedule), l->virtual_stages, l->zero, l->overlap_grad_reduce,
                  l->overlap_param_gather, a[i].step_time_s, b[i].step_time_s, rel);
  }
  g_array_free(rqs, TRUE);
}
END_TEST

/* NeMo's tensor-parallel overlap (tp_comm_overlap: an all-gather or reduce-scatter on stream 2 beside each GEMM)
 * with tp 8 and sp: the explicit rank's stream 2 is absorbed into its compute stream (sim/replay.c
 * setup_absorbed, docs/sweep.md "Absorbed lanes": its collectives timed inline, no actor), and its group's calls
 * on both streams are lone (streamed_alone_two). The mirrored replay must equal the every-rank replay, where
 * nothing is lone or absorbed and every flow is simulated, to 1e-9, the breakdown too: ZeRO 0-3, the overlaps,
 * cp 1 and 2, 400 and 25 Gbit/s. */
START_TEST(test_absorbed_tensor_parallel_overlap_equals_every_rank_explicit)
{
  GArray *rqs = g_array_new(FALSE, FALSE, sizeof(sim_request));
  struct { int zero, ogr, opg, cp; double ib_gbps; int ckpt; } cases[] = {
      {1, 1, 1, 1, 0, CKPT_NONE}, {1, 1, 1, 2, 25, CKPT_NONE}, {3, 1, 0, 2, 0, CKPT_NONE}, {3, 1, 0, 2, 25, CKPT_NONE},
      {1, 0, 0, 1, 0, CKPT_NONE}, {0, 0, 0, 1, 25, CKPT_NONE}, {1, 1, 0, 2, 0, CKPT_NONE}, {2, 1, 0, 1, 0, CKPT_NONE},
      {3, 0, 0, 1, 0, CKPT_NONE}, {3, 0, 0, 2, 25, CKPT_NONE},
      /* llama-13b (two 500M-element gradient buckets a stage): the first bucket's copy-back on stream 1 holds the
       * GPU beside the rest of the backward, so stream 2 is absorbed only up to it, then runs with an actor */
      {1, 0, 0, 2, 0, CKPT_EVERY_LAYER}, {1, 1, 1, 1, 25, CKPT_NONE}, {2, 1, 0, 2, 0, CKPT_EVERY_LAYER},
      /* not ZeRO-3 with the gradient overlap at cp 1, 400 Gbit/s: mirrored 4.7e-4 off the every-rank replay with
       * or without absorbing (the mirrors' own approximation, test_mirrors_with_cp_... above) */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int tp = 8, pp = 2, dp = 2, cp = cases[i].cp;
    layout l = test_layout(tp * pp * cp * dp, tp, pp, 1, cases[i].ckpt);
    l.cp = cp;
    l.sp = TRUE;
    l.seq_len = 1024;
    l.global_batch = dp * 5; /* 5 micro-batches */
    l.zero = cases[i].zero;
    l.overlap_grad_reduce = cases[i].ogr;
    l.overlap_param_gather = cases[i].opg;
    sim_request rq = request(l, cases[i].ib_gbps);
    if (i >= 10) {
      GError *err = NULL;
      ck_assert_msg(model_load_named("llama-13b", &rq.m, &err), "%s", err ? err->message : "");
    }
    ck_assert_int_eq(rq.prof.stack.tp_comm_overlap, 1); /* nemo's default: the overlap under test */
    g_array_append_val(rqs, rq);
  }
  guint n = rqs->len;
  g_autofree prediction *a = g_new0(prediction, n), *b = g_new0(prediction, n);
  replay_mirrored_and_every_rank(rqs, a, b);
  for (guint i = 0; i < n; i++) {
    ck_assert_msg(a[i].status == PRED_OK && b[i].status == PRED_OK, "case %u: %s %s", i, a[i].error, b[i].error);
    double rel = fabs(a[i].step_time_s - b[i].step_time_s) / b[i].step_time_s;
    ck_assert_msg(rel < 1e-9, "case %u: zero%d cp%d %g Gbit/s: mirrored %.15g s, every rank %.15g s (rel %.3g)", i,
                  cases[i].zero, cases[i].cp, cases[i].ib_gbps, a[i].step_time_s, b[i].step_time_s, rel);
    for (int c = 0; c < TL_N; c++) /* the breakdown too: the absorbed events' times are in the timeline */
      ck_assert_msg(fabs(a[i].seconds[c] - b[i].seconds[c]) <= 1e-9 * b[i].step_time_s,
                    "case %u: category %d: mirrored %.15g, every rank %.15g", i, c, a[i].seconds[c], b[i].seconds[c]);
  }
  g_array_free(rqs, TRUE);
}
END_TEST

/* The fast path's check (docs/sweep.md, "Where the line bends"): a third run at m3 = 2 m2 must lie on the line
 * of the first two within POOL_AFFINE_TOL (0.1%) of its own step time, else the step is replayed in full. The
 * line through (4, 1.0) and (5, 1.2) puts m3 = 10 at 1.0 + 0.2 * 6 = 2.2 s. */
START_TEST(test_a_third_run_off_the_line_sends_the_step_to_a_full_replay)
{
  double t1 = 1.0, t2 = 1.2, on = 1.0 + 0.2 * (10 - 4);
  ck_assert(pool_affine_holds(t1, 4, t2, 5, on, 10));
  ck_assert(pool_affine_holds(t1, 4, t2, 5, on * (1 + 0.5e-3), 10));  /* inside 0.1% */
  ck_assert(!pool_affine_holds(t1, 4, t2, 5, on * (1 + 2e-3), 10));   /* bent up by 0.2% */
  ck_assert(!pool_affine_holds(t1, 4, t2, 5, on * (1 - 2e-3), 10));   /* or down */
  /* the case that showed it: llama3-70b, 1,024 H100, tp8 pp32 cp2 ZeRO-3 with the overlapped reduction, a step
   * of m = 256 micro-batches: 2.2901 s at 32, 2.3322 at 33 (a slope of 0.04214 s), 3.9240 at 66, where the
   * line says 3.6808 */
  ck_assert(!pool_affine_holds(2.2901073879121716, 32, 2.3322481714241365, 33, 3.923986903566907, 66));
}
END_TEST

/* The same inside pool_run: llama3-70b at seq 8192 on 1,024 H100, tp8 pp32 cp2 dp2 with sp and ZeRO-3 with the
 * overlapped reduction, 100 micro-batches: its step is not affine from 32 on (above; stage 0's work grows by 53.5
 * ms a micro-batch, the line by 42.1 ms: the stage check refuses it before the third run), so `fast` replays it
 * in full and gives the full replay's step time exactly (auto replays 100 micro-batches in full anyway: the three
 * runs would replay 32 + 33 + 66). */
START_TEST(test_a_step_whose_line_bends_is_replayed_in_full)
{
  layout l = test_layout(1024, 8, 32, 1, CKPT_NONE);
  l.cp = 2;
  l.sp = TRUE;
  l.seq_len = 8192;
  l.global_batch = 2 * 100;
  l.zero = 3;
  l.overlap_grad_reduce = TRUE;
  sim_request rq = {.l = l, .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named("llama3-70b", &rq.m, &err), "%s", err ? err->message : "");
  check_request_platform(&rq, "h100-sxm5-80gb", "nemo");
  check_request_stack_generator(&rq);
  rq.capacity_gib = 1000;
  replays_in_full(&rq, POOL_FAST, "pp 32 ZeRO-3, a bend the third run sees");
}
END_TEST

/* The stage check (docs/sweep.md, "Where the line bends"): a stage's own work (every category but pp-wait and idle)
 * is never more than the step, so where it grows faster per micro-batch than the line of the two runs, the line
 * must bend. Closed form: the line through (4, 1.0) and (5, 1.1) has a slope of 0.1 s; two stages whose work grows
 * by 0.1 s a micro-batch lie under it, one that grows by 0.1002 s (0.2%) does not, one by 0.10009 s (0.09%) is
 * inside POOL_STAGE_TOL (0.1%). */
START_TEST(test_a_stage_whose_work_outgrows_the_line_sends_the_step_to_a_full_replay)
{
  double w1[] = {0.5, 0.45}, on[] = {0.5 + 0.1, 0.45 + 0.1}, over[] = {0.5 + 0.1002, 0.45 + 0.1},
         inside[] = {0.5 + 0.10009, 0.45 + 0.1};
  ck_assert(pool_stages_within_slope(w1, on, 2, 1.0, 4, 1.1, 5));
  ck_assert(!pool_stages_within_slope(w1, over, 2, 1.0, 4, 1.1, 5));
  ck_assert(pool_stages_within_slope(w1, inside, 2, 1.0, 4, 1.1, 5));

  /* The smallest step found whose line bends (docs/sweep.md): a llama of 9 layers (hidden 2048, vocab 8000) on 4
   * H100 in 4 stages of 3, 2, 2, 2 layers: the first stage does the most work per micro-batch, but nothing waits
   * for its backward and its warm-up forwards run ahead, so the line of 4 and 5 micro-batches follows the stages
   * after it, and stage 0 falls behind until the pipeline waits for it (T(8) is 4.9% above the line). `fast`
   * at m = 8 makes no third run (2 m2 = 10 >= 8): the stage check alone sends it to a full replay. */
  layout l = test_layout(4, 1, 4, 1, CKPT_NONE);
  l.seq_len = 2048;
  l.global_batch = 8;
  sim_request rq = {.l = l, .gen = gen_default_options(), .m = model_llama("small9", 9, 2048, 16, 5632, 8000)};
  check_request_platform(&rq, "h100-sxm5-80gb", "nemo");
  check_request_stack_generator(&rq);
  rq.capacity_gib = 1000;
  replays_in_full(&rq, POOL_FAST, "9 layers on 4 stages");
}
END_TEST

/* Two more parts of a stage's least time, each decisive in one case (`fast` at m <= 2 m2: no third run), each
 * replayed in full with the full replay's step time:
 *  - the host's gaps between kernels: the 9-layer llama above with tp 8 on 32 H100 (4 stages of 3, 2, 2, 2 layers):
 *    its small kernels leave the GPU waiting for the host (idle 1.4 ms a micro-batch on stage 0); T(8) is 1.0%
 *    above the line of 4 and 5;
 *  - the pipeline's messages: llama3-70b at seq 8192 on 1,024 H100, tp8 pp32 cp2 dp2 sp, ZeRO-1, at 100 Gbit/s
 *    InfiniBand, 60 micro-batches: stage 0's own time grows by 97% of the line's slope, its two rendezvous
 *    messages of 8.4 MB a micro-batch (at most 12.5 GB/s each) make it more; T(66) is 1.9% above the line. */
START_TEST(test_host_gaps_and_pipeline_messages_count_in_a_stage_least_time)
{
  struct { const char *model; int gpus, tp, pp, cp, seq, m; double ib_gbps; } cases[] = {
      {NULL, 32, 8, 4, 1, 2048, 8, 0},
      {"llama3-70b", 1024, 8, 32, 2, 8192, 60, 100},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    layout l = test_layout(cases[i].gpus, cases[i].tp, cases[i].pp, 1, CKPT_NONE);
    l.cp = cases[i].cp;
    l.sp = cases[i].cp > 1;
    l.seq_len = cases[i].seq;
    l.global_batch = l.gpus / (l.tp * l.pp * l.cp) * cases[i].m;
    l.zero = 1;
    sim_request rq = {.l = l, .gen = gen_default_options()};
    GError *err = NULL;
    if (cases[i].model) ck_assert_msg(model_load_named(cases[i].model, &rq.m, &err), "%s", err ? err->message : "");
    else rq.m = model_llama("small9", 9, 2048, 16, 5632, 8000);
    check_request_platform(&rq, "h100-sxm5-80gb", "nemo");
    check_request_stack_generator(&rq);
    if (cases[i].ib_gbps > 0) rq.prof.ib_bytes_per_s = cases[i].ib_gbps * 1e9 / 8;
    rq.capacity_gib = 1000;
    g_autofree char *what = g_strdup_printf("case %zu", i);
    replays_in_full(&rq, POOL_FAST, what);
  }
}
END_TEST

/* The case, a bend the third run misses (docs/sweep.md, "Where the line bends"): llama3-70b at seq 8192 on
 * 1,024 H100, tp8 pp32 cp2 dp2 with sp and ZeRO-1, 200 micro-batches. Its line from 32 and 33 holds to within 1e-9 up
 * to m = 153, so the third run at 66 lies on it; stage 0 (3 layers, the embedding and its tensor-parallel
 * all-reduce) does 0.5% more work per micro-batch than the line's slope and the step bends after 153 (T(200)
 * is 0.67% above the line). auto replays it in full, with the full replay's step time. */
START_TEST(test_a_bend_after_the_third_run_is_replayed_in_full)
{
  layout l = test_layout(1024, 8, 32, 1, CKPT_NONE);
  l.cp = 2;
  l.sp = TRUE;
  l.seq_len = 8192;
  l.global_batch = 2 * 200;
  l.zero = 1;
  sim_request rq = {.l = l, .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named("llama3-70b", &rq.m, &err), "%s", err ? err->message : "");
  check_request_platform(&rq, "h100-sxm5-80gb", "nemo");
  check_request_stack_generator(&rq);
  rq.capacity_gib = 1000;
  replays_in_full(&rq, POOL_AUTO, "pp 32 ZeRO-1 at m 200");
}
END_TEST

/* No argument: the fast path; "mirrors": the mirrored replay against every rank (its own meson test, each within
 * the suite's timeout on a loaded machine). */
int main(int argc, char **argv)
{
  gboolean mirrors = argc > 1 && strcmp(argv[1], "mirrors") == 0;
  Suite *s = suite_create("fast_path");
  TCase *tc = tcase_create("fast_path");
  tcase_set_timeout(tc, 600);
  if (mirrors) {
    tcase_add_test(tc, test_mirrors_with_cp_equal_every_rank_explicit_with_overlaps_and_zero);
    tcase_add_test(tc, test_absorbed_tensor_parallel_overlap_equals_every_rank_explicit);
  } else {
    tcase_add_test(tc, test_a_third_run_off_the_line_sends_the_step_to_a_full_replay);
    tcase_add_test(tc, test_a_step_whose_line_bends_is_replayed_in_full);
    tcase_add_test(tc, test_a_stage_whose_work_outgrows_the_line_sends_the_step_to_a_full_replay);
    tcase_add_test(tc, test_a_bend_after_the_third_run_is_replayed_in_full);
    tcase_add_test(tc, test_host_gaps_and_pipeline_messages_count_in_a_stage_least_time);
    tcase_add_test(tc, test_fast_path_equals_the_full_replay_with_overlaps_and_zero);
  }
  suite_add_tcase(s, tc);
  return check_run(s);
}
