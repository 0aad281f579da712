/* test_energy -- the energy of a step (analysis/energy.h) against power x time by hand: a synthetic
 * step of two GPUs (a GEMM above the roofline's ridge point, a memory pass below it, an all-reduce
 * the second GPU waits in, a last pass it idles through) replayed, its energy against the profile's powers times the seconds the
 * kernel cost model gives each kernel; and the ridge point itself. */
#include <check.h>
#include <math.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "platforms/kernel_cost.h"
#include "sim_child.h"

static gpu_profile test_profile(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &p, NULL));
  /* distinct powers: a kernel counted in the wrong class changes the sum */
  p.power_compute_w = 400;
  p.power_memory_w = 290;
  p.power_comm_w = 130;
  p.power_idle_w = 50;
  p.node_power_w = 1000;
  return p;
}

static graph_event gemm(void)
{
  double n = 4096;
  return (graph_event){.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .m = n, .n = n, .k = n, .launches = 1,
                       .flops = 2 * n * n * n, .bytes = 3 * n * n * 2, .micro_batch = 0, .layer = 0};
}

static graph_event pass(void) /* an elementwise pass over 1 GB: no FLOPs to speak of */
{
  return (graph_event){.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_FORWARD, .m = 1, .launches = 1, .flops = 1e6,
                       .bytes = 1e9, .micro_batch = 0, .layer = 0};
}

/* out: step time, the GPUs' and the nodes' joules, and the class seconds of both ranks */
static void run_step(void *arg, double out[SIM_CHILD_MAX])
{
  gpu_profile p = test_profile();
  graph *g = graph_new(2);
  for (int r = 0; r < 2; r++) graph_program_of(g, r);
  int members[] = {0, 1};
  int gid = graph_add_group(g, members, 2, "dp");
  graph_event a = gemm(), b = pass(),
              c = {.kind = EV_COLLECTIVE, .op = GRAPH_OP_COMM, .phase = PH_OPTIMIZER, .peer = gid, .bytes = 1e9,
                   .variant = COLL_ALL_REDUCE, .micro_batch = -1, .layer = -1};
  g_array_append_val(graph_program_of(g, 0)->events, a);
  g_array_append_val(graph_program_of(g, 0)->events, b);
  g_array_append_val(graph_program_of(g, 0)->events, c);
  g_array_append_val(graph_program_of(g, 0)->events, b); /* GPU 1 has nothing left to do: idle */
  g_array_append_val(graph_program_of(g, 1)->events, c);
  GError *err = NULL;
  sim_outcome o = {0};
  ck_assert_msg(sim_run_graph(g, &p, 80, NULL, &o, &err), "%s", err ? err->message : "");
  out[0] = o.met->step_time_s;
  out[1] = o.met->energy_gpu_j;
  out[2] = o.met->energy_node_j;
  for (int k = 0; k < EN_N; k++) out[3 + k] = o.met->energy_seconds[k];
  sim_outcome_clear(&o);
}

START_TEST(test_energy_of_a_synthetic_step_is_power_times_time)
{
  gpu_profile p = test_profile();
  graph_event a = gemm(), b = pass();
  ck_assert_int_eq(energy_class_of(&a, &p), EN_COMPUTE);
  ck_assert_int_eq(energy_class_of(&b, &p), EN_MEMORY);
  double ta = kcost_seconds(&p, &a), tb = kcost_seconds(&p, &b);
  double out[SIM_CHILD_MAX];
  sim_child_run(run_step, NULL, out);
  double T = out[0];
  ck_assert(T > ta + 2 * tb);
  /* GPU 0: the GEMM, the pass, the all-reduce, the pass again; GPU 1: in the all-reduce from the start
   * until GPU 0's second pass, then idle */
  double want_gpu = 400 * ta + 290 * 2 * tb + 130 * (T - ta - 2 * tb) + 130 * (T - tb) + 50 * tb;
  ck_assert_msg(fabs(out[1] - want_gpu) <= 1e-9 * want_gpu, "GPUs %.9g J, by hand %.9g J", out[1], want_gpu);
  ck_assert_double_eq_tol(out[2], 1000 * T, 1e-9 * T); /* one node */
  ck_assert_double_eq_tol(out[3 + EN_COMPUTE], ta, 1e-12);
  ck_assert_double_eq_tol(out[3 + EN_MEMORY], 2 * tb, 1e-12);
  ck_assert_double_eq_tol(out[3 + EN_IDLE], tb, 1e-12);
}
END_TEST

/* The ridge point: FLOPs at peak against bytes at HBM bandwidth; a tie is compute. */
START_TEST(test_ridge_point_splits_compute_from_memory)
{
  gpu_profile p = test_profile();
  double ridge = p.peak_flops / p.hbm_bytes_per_s; /* FLOPs per byte: 153 on the A100 */
  graph_event e = {.kind = EV_COMPUTE, .bytes = 1e6};
  e.flops = ridge * 1e6;
  ck_assert_int_eq(energy_class_of(&e, &p), EN_COMPUTE);
  e.flops = ridge * 1e6 * 0.999;
  ck_assert_int_eq(energy_class_of(&e, &p), EN_MEMORY);
  e.kind = EV_SEND;
  ck_assert_int_eq(energy_class_of(&e, &p), EN_COMM);
  double sec[EN_N] = {1, 2, 3, 4};
  ck_assert_double_eq(energy_joules(&p, sec), 400 + 2 * 290 + 3 * 130 + 4 * 50);
  ck_assert_double_eq(energy_node_joules(&p, 9, 2.0), 2 * 1000 * 2.0); /* 9 GPUs on 8-GPU nodes: 2 nodes */
}
END_TEST

int main(void)
{
  Suite *s = suite_create("energy");
  TCase *tc = tcase_create("energy");
  tcase_add_test(tc, test_energy_of_a_synthetic_step_is_power_times_time);
  tcase_add_test(tc, test_ridge_point_splits_compute_from_memory);
  suite_add_tcase(s, tc);
  return check_run(s);
}
