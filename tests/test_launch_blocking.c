/* test_launch_blocking -- CUDA_LAUNCH_BLOCKING=1 (stack key launch_blocking; sim/replay.c host_issue): every launch
 * returns to the host only when its kernel has ended, so the host cannot run ahead of the GPU and each launch's
 * dispatch (host_dispatch_s) lies in series with the kernels (docs/trust.md, "BLOOM's step").
 *
 * Expected values from the closed forms, on one GPU (no collective, one stream): with launch_blocking the step is
 * the sum over its kernels of their time plus their launches times host_dispatch_s, sum(d_k + n_k h); without it,
 * a host faster than the kernels runs ahead and the step is the kernels' sum, sum(d_k), plus at most the first
 * event's dispatch, n_1 h.
 */
#include <check.h>

#include "check_main.h"
#include "sim_child.h"
#include <math.h>

#include "analysis/simulate.h"
#include "platforms/kernel_cost.h"
#include "workloads/generate.h"

#define HOST_S 1e-5 /* per launch: well below the kernels of this model, so that the host runs ahead when it may */

/* out: [0] step time, [1] the sum of rank 0's compute events' times, [2] their launches, [3] events that are not
 * compute on stream 0, [4] the first event's launches */
static void run(void *arg, double out[SIM_CHILD_MAX])
{
  const int *blocking = arg;
  sim_request rq = {.l = layout_default(), .gen = gen_default_options()};
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "megatron-deepspeed", &rq.prof, NULL));
  model m = {.layers = 4, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn = 4096, .vocab = 1024};
  g_strlcpy(m.name, "dense-4", sizeof m.name);
  rq.m = m;
  rq.prof.stack.host_dispatch_s = HOST_S;
  rq.prof.stack.launch_blocking = *blocking;
  rq.prof.stack.straggler_sigma = 0;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l.gpus = 1;
  rq.l.seq_len = 1024;
  rq.l.global_batch = 2;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&rq.l, &rq.m, &err), "%s", err ? err->message : "");
  sim_outcome o = {0};
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const graph_event *ev = (const graph_event *)p->events->data;
  out[0] = o.res->step_time_s;
  for (guint i = 0; i < p->events->len; i++) {
    if (ev[i].kind != EV_COMPUTE || ev[i].stream != 0) {
      out[3]++;
      continue;
    }
    if (out[2] == 0) out[4] = ev[i].launches;
    out[1] += kcost_seconds_in(&rq.prof, &ev[i], FALSE);
    out[2] += ev[i].launches;
  }
  sim_outcome_clear(&o);
}

START_TEST(test_blocking_launches_put_each_dispatch_in_series_with_the_kernels)
{
  double ahead[SIM_CHILD_MAX], blocking[SIM_CHILD_MAX];
  sim_child_run(run, &(int){0}, ahead);
  sim_child_run(run, &(int){1}, blocking);
  ck_assert_int_eq((int)blocking[3], 0); /* one GPU: compute only, one stream */
  ck_assert_double_eq_tol(blocking[1], ahead[1], 1e-12 * ahead[1]); /* the same kernels */
  ck_assert(blocking[2] * HOST_S > 0.01 * blocking[1]);          /* the dispatches weigh in the closed form */
  /* blocking: sum(d_k + n_k h) */
  ck_assert_double_eq_tol(blocking[0], blocking[1] + blocking[2] * HOST_S, 1e-9 * blocking[0]);
  /* the host ahead: sum(d_k), plus at most the first event's dispatch */
  ck_assert_msg(ahead[0] >= ahead[1] * (1 - 1e-9) && ahead[0] <= ahead[1] + ahead[4] * HOST_S + 1e-9 * ahead[1],
                "host ahead: step %.9f s, kernels %.9f s", ahead[0], ahead[1]);
}
END_TEST

static Suite *launch_blocking_suite(void)
{
  Suite *s = suite_create("launch_blocking");
  TCase *tc = tcase_create("closed forms");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_blocking_launches_put_each_dispatch_in_series_with_the_kernels);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(launch_blocking_suite()); }
