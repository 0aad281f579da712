/* test_fast_path -- the fast path (analysis/pool.h: two replays at the schedule's affine counts, extrapolated)
 * gives the full replay's step time, within 1e-9 relative, where the step has a communication stream: ZeRO 0-3
 * with and without the overlapped gradient reduction and parameter gather, on 1F1B, with tensor
 * parallelism and without, and a slow network (communication the overlaps cannot hide). The expected value
 * is the full replay of the whole step (--fidelity full), computed independently of the extrapolation. The
 * breakdown categories are held to 1e-3 of the step (see below). */
#include <check.h>
#include <math.h>

#include "analysis/pool.h"
#include "check_main.h"
#include "workloads/schedule.h"
#include "test_layout.h"

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
  struct { int tp, zero, ogr, opg, sched; double ib_gbps; } cases[] = {
      {2, 1, 1, 1, 0, 0},  {2, 2, 1, 0, 0, 0},  {2, 3, 0, 0, 0, 0}, {2, 3, 1, 0, 0, 0},
      {1, 2, 1, 1, 0, 25}, {1, 3, 1, 0, 0, 25}, {2, 0, 1, 0, 0, 25}, {2, 2, 1, 0, 0, 25},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int tp = cases[i].tp, pp = 4, dp = 2;
    layout l = test_layout(tp * pp * dp, tp, pp, 1, CKPT_NONE);
    l.seq_len = 512;
    l.global_batch = dp * 12; /* 12 micro-batches: above 2 m2 = 10, so auto takes the fast path too */
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
  pool_cfg cfg = {.jobs = 2, .fidelity = POOL_AUTO};
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
    ck_assert_msg(rel < 1e-9, "case %u: tp%d %s zero%d ogr%d opg%d: fast %.15g s, full %.15g s (rel %.3g)", i, l->tp,
                  sched_name(l->schedule), l->zero, l->overlap_grad_reduce, l->overlap_param_gather,
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

int main(void)
{
  Suite *s = suite_create("fast_path");
  TCase *tc = tcase_create("fast_path");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_fast_path_equals_the_full_replay_with_overlaps_and_zero);
  suite_add_tcase(s, tc);
  return check_run(s);
}
