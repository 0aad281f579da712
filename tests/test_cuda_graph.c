/* test_cuda_graph -- a step captured as one CUDA graph (--cuda-graph, graph_meta.cuda_graph; docs/moe.md, "CUDA
 * graphs"): the kernels replay back to back from the graph, so a kernel costs its work alone, without the
 * stack's per-launch gap (launch_overhead_s), and the host issues nothing kernel by kernel (host_dispatch_s).
 *
 * Expected values from the closed forms: a graphed kernel's time is kcost_seconds on a copy of the profile whose
 * launch_overhead_s is 0 (computed independently of the graphed path), i.e. the eager time less launches times
 * the gap; a one-GPU step (no collective, one stream) graphed is the sum of its kernels' graphed times, however
 * slow the host, and eager with a slow host it is host-bound: at least the launches times host_dispatch_s.
 */
#include <check.h>

#include "check_main.h"
#include "sim_child.h"
#include <math.h>

#include "analysis/simulate.h"
#include "platforms/kernel_cost.h"
#include "workloads/generate.h"

static gpu_profile h100(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &p, NULL));
  ck_assert(p.stack.launch_overhead_s > 0);
  return p;
}

START_TEST(test_graphed_kernel_costs_its_work_without_the_launch_gaps)
{
  gpu_profile p = h100(), nogap = h100();
  nogap.stack.launch_overhead_s = 0;
  graph_event gemm = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .dtype = DT_BF16, .m = 4096,
                      .n = 4096, .k = 4096, .launches = 3};
  gemm.flops = 2.0 * gemm.m * gemm.n * gemm.k * gemm.launches;
  gemm.bytes = 2.0 * (gemm.m * (double)gemm.k + gemm.k * (double)gemm.n + gemm.m * (double)gemm.n) * 3;
  graph_event pass = {.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_BACKWARD, .launches = 5, .bytes = 1e8};
  const graph_event *evs[] = {&gemm, &pass};
  for (int i = 0; i < 2; i++) {
    double eager = kcost_seconds(&p, evs[i]), graphed = kcost_seconds_in(&p, evs[i], TRUE);
    ck_assert_double_eq_tol(graphed, kcost_seconds(&nogap, evs[i]), 1e-15);
    ck_assert_double_eq_tol(eager - graphed, evs[i]->launches * p.stack.launch_overhead_s, 1e-15);
    ck_assert_double_eq(kcost_seconds_in(&p, evs[i], FALSE), eager);
  }
}
END_TEST

typedef struct gcase {
  gboolean graphed;
} gcase;

/* out: [0] step time, [1] the sum of rank 0's compute events' graphed times, [2] their launches, [3] events that
 * are not compute on stream 0 */
static void run(void *arg, double out[SIM_CHILD_MAX])
{
  const gcase *c = arg;
  sim_request rq = {.l = layout_default(), .gen = gen_default_options(), .prof = h100()};
  model m = {.layers = 4, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn = 4096, .vocab = 1024};
  g_strlcpy(m.name, "dense-4", sizeof m.name);
  rq.m = m;
  rq.prof.stack.host_dispatch_s = 1e-3; /* a host far slower than any kernel: eager, the step is host-bound */
  rq.prof.stack.straggler_sigma = 0;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l.gpus = 1;
  rq.l.seq_len = 1024;
  rq.l.global_batch = 2;
  rq.l.cuda_graph = c->graphed;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&rq.l, &rq.m, &err), "%s", err ? err->message : "");
  sim_outcome o = {0};
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(o.g->meta.cuda_graph, c->graphed);
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const graph_event *ev = (const graph_event *)p->events->data;
  out[0] = o.res->step_time_s;
  for (guint i = 0; i < p->events->len; i++) {
    if (ev[i].kind != EV_COMPUTE || ev[i].stream != 0) {
      out[3]++;
      continue;
    }
    out[1] += kcost_seconds_in(&rq.prof, &ev[i], TRUE);
    out[2] += ev[i].launches;
  }
  out[4] = rq.prof.stack.host_dispatch_s;
  sim_outcome_clear(&o);
}

START_TEST(test_graphed_step_is_its_kernels_back_to_back_whatever_the_host)
{
  double eager[SIM_CHILD_MAX], graphed[SIM_CHILD_MAX];
  sim_child_run(run, &(gcase){FALSE}, eager);
  sim_child_run(run, &(gcase){TRUE}, graphed);
  ck_assert_int_eq((int)graphed[3], 0); /* one GPU: compute only, one stream */
  ck_assert_double_eq_tol(graphed[0], graphed[1], 1e-9 * graphed[1]);
  /* eager: the host issues each launch in host_dispatch_s, far slower than the kernels */
  ck_assert_msg(eager[0] >= eager[2] * eager[4] * (1 - 1e-9), "eager %.6f s below the host's %.6f s", eager[0],
                eager[2] * eager[4]);
  ck_assert(graphed[0] < 0.5 * eager[0]);
}
END_TEST

static Suite *cuda_graph_suite(void)
{
  Suite *s = suite_create("cuda_graph");
  TCase *tc = tcase_create("closed forms");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_graphed_kernel_costs_its_work_without_the_launch_gaps);
  tcase_add_test(tc, test_graphed_step_is_its_kernels_back_to_back_whatever_the_host);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(cuda_graph_suite()); }
