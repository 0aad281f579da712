/* test_straggler -- the expected slowest of N ranks (sim/straggler.h) against the closed forms of the
 * expected maximum of N standard normals (N = 2: 1/sqrt(pi); N = 3: 3/(2 sqrt(pi))) and the tabulated
 * values (Harter 1961, "Expected values of normal order statistics", Biometrika 48: N = 5 1.16296, 10
 * 1.53875, 100 2.50759), and the replay applying it to compute: a step of one kernel per GPU on 8 GPUs
 * takes 1 + sigma x E[max of 8] (1.42360) times the kernel. */
#include <check.h>
#include <math.h>

#include "check_main.h"
#include "platforms/kernel_cost.h"
#include "platforms/profile.h"
#include "analysis/simulate.h"
#include "sim/straggler.h"
#include "sim_child.h"

START_TEST(test_expected_max_of_n_normals_matches_closed_forms_and_tables)
{
  ck_assert_double_eq(straggler_expected_max(1), 0);
  ck_assert_double_eq_tol(straggler_expected_max(2), 1 / sqrt(M_PI), 1e-9);
  ck_assert_double_eq_tol(straggler_expected_max(3), 3 / (2 * sqrt(M_PI)), 1e-9);
  ck_assert_double_eq_tol(straggler_expected_max(5), 1.16296, 1e-5);
  ck_assert_double_eq_tol(straggler_expected_max(10), 1.53875, 1e-5);
  ck_assert_double_eq_tol(straggler_expected_max(100), 2.50759, 1e-5);
  /* grows like sqrt(2 ln n): slowly (Blom's approximation Phi^-1((n - 0.375) / (n + 0.25)) within 1% at 1000) */
  double e1000 = straggler_expected_max(1000);
  ck_assert(e1000 > 3.2 && e1000 < 3.3);
}
END_TEST

START_TEST(test_slowdown_is_one_plus_sigma_times_expected_max)
{
  ck_assert_double_eq(straggler_slowdown(0, 512), 1);
  ck_assert_double_eq(straggler_slowdown(0.02, 1), 1);
  ck_assert_double_eq_tol(straggler_slowdown(0.015, 2), 1 + 0.015 / sqrt(M_PI), 1e-11);
}
END_TEST

static graph_event gemm(void)
{
  double n = 8192;
  return (graph_event){.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .m = n, .n = n, .k = n, .launches = 1,
                       .flops = 2 * n * n * n, .bytes = 3 * n * n * 2, .micro_batch = 0, .layer = 0};
}

/* out[0]: the step time of one GEMM on each of 8 GPUs, stack sigma *arg */
static void run_step(void *arg, double out[SIM_CHILD_MAX])
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &p, NULL));
  p.stack.host_dispatch_s = 0;
  p.stack.straggler_sigma = *(double *)arg;
  graph *g = graph_new(8);
  graph_event a = gemm();
  for (int r = 0; r < 8; r++) g_array_append_val(graph_program_of(g, r)->events, a);
  GError *err = NULL;
  sim_outcome o = {0};
  ck_assert_msg(sim_run_graph(g, &p, 80, NULL, &o, &err), "%s", err ? err->message : "");
  out[0] = o.met->step_time_s;
  out[1] = kcost_seconds(&p, &a);
  sim_outcome_clear(&o); /* frees the graph */
}

START_TEST(test_replay_slows_compute_by_the_expected_slowest_of_the_job)
{
  double none = 0, sigma = 0.02, a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_step, &none, a);
  sim_child_run(run_step, &sigma, b);
  ck_assert_double_eq_tol(a[0], a[1], 1e-9);
  ck_assert_double_eq_tol(b[0], a[1] * (1 + 0.02 * 1.42360), 1e-5 * a[1]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("straggler");
  TCase *tc = tcase_create("straggler");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_expected_max_of_n_normals_matches_closed_forms_and_tables);
  tcase_add_test(tc, test_slowdown_is_one_plus_sigma_times_expected_max);
  tcase_add_test(tc, test_replay_slows_compute_by_the_expected_slowest_of_the_job);
  suite_add_tcase(s, tc);
  return check_run(s);
}
