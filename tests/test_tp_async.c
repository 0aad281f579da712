/* test_tp_async -- Megatron-LM's asynchronous tensor-parallel communication in the backward of a column-parallel
 * GEMM (the stack's tp_async_grad_reduce; LinearWithGradAccumulationAndAsyncCommunication, docs/stacks.md,
 * "Megatron's asynchronous input-gradient reduction"): the input gradient's GEMM (dgrad) first, then its all-reduce
 * (sp: reduce-scatter) launched beside the weight gradient's GEMM (wgrad); with sp the saved input shard's
 * all-gather beside dgrad, which wgrad waits for.
 *
 * GPT blocks of 2 layers at tp 8 on one A100 node, one micro-batch of 2048 tokens, the megatron-deepspeed stack,
 * the host never behind. Two sizes: hidden 12288 (GPT-3's: each all-reduce shorter than its wgrad GEMM) and 1024
 * (each longer). Closed forms, from the durations as the runs replay them:
 * - no sp, no SM cost: the step shrinks by the sum over the layers' (all-reduce, wgrad) pairs of the shorter of
 *   the two (the pair takes max(AR, W) where the blocking code takes AR + W, and the all-reduce cannot start
 *   before dgrad ends: the small model, where AR > W, fails if it could);
 * - sp: the step changes by sum max(0, AG - D) - sum min(RS, W): the all-gather the blocking graph does not
 *   charge at all now runs beside dgrad, and the reduce-scatter beside wgrad;
 * - free links: nothing to hide, and each GEMM beside a collective runs on 1 - f of the SMs (f the stack's
 *   tp_overlap_sm_fraction, the NCCL kernels' SMs): the step grows by f times their replayed time;
 * - the peak memory does not move (the overlap changes when kernels run, not what they keep). */
#include <check.h>

#include "check_main.h"
#include "check_request.h"
#include "sim_child.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/simulate.h"
#include "platforms/stack.h"
#include "sim/collective.h"
#include "workloads/generate.h"

typedef struct acase {
  gboolean async, sp, free_links, small;
  double sm_fraction;
} acase;

static sim_request request(const acase *c)
{
  sim_request rq = {.l = layout_default(), .gen = gen_default_options()};
  ck_assert(model_load_named("gpt3-175b", &rq.m, NULL));
  rq.m.layers = 2;
  rq.m.vocab = 51200; /* Korthikanti et al. 2022, a multiple of tp */
  if (c->small) {
    rq.m.hidden = 1024;
    rq.m.heads = rq.m.kv_heads = 16;
    rq.m.ffn = 4096;
  }
  check_request_platform(&rq, "a100-sxm4-80gb", "megatron-deepspeed");
  rq.prof.stack.tp_async_grad_reduce = c->async;
  rq.prof.stack.tp_overlap_sm_fraction = c->sm_fraction;
  rq.prof.stack.host_dispatch_s = 0; /* the host always ahead: kernels start when the GPU is free */
  if (c->free_links) check_free_links(&rq.prof);
  check_request_stack_generator(&rq);
  layout *l = &rq.l;
  l->gpus = 8;
  l->tp = 8;
  l->sp = c->sp;
  l->seq_len = 2048;
  l->micro_batch = 1;
  l->global_batch = 1;
  l->attn = ATTN_FUSED_SOFTMAX;
  stack_layout_defaults(&rq.prof.stack, l, 0);
  check_request_validate(&rq);
  return rq;
}

static gboolean is_tp(const graph *g, const graph_event *e, int coll)
{
  if (e->kind != EV_COLLECTIVE || e->variant != coll) return FALSE;
  const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
  return strcmp(gr->label, "tp") == 0 && e->phase == PH_BACKWARD && e->layer >= 0;
}

static double dur(const replay_rank *rr, int i) { return rr->end_s[i] - rr->start_s[i]; }

/* out: [0] step time; [1] peak memory (bytes); [2] layers' backward GEMMs followed by a tp reduction on stream 0
 * (the blocking code's pairs); [3] their reductions' summed time; and, per pair in the order emitted (up to 4:
 * 2 layers x QKV and MLP input), [4 + i] the reduction's replayed time (blocking) or, asynchronous,
 * [4 + i] the wgrad GEMM's, [8 + i] the dgrad GEMM's, [12] the first all-gather's (sp; all are T x h),
 * [15] the all-gathers on the tp stream (-1e9 if one is not T x h bf16); [3] then the summed time of the GEMMs
 * marked as sharing their SMs, [14] their count */
static void run(void *arg, double out[SIM_CHILD_MAX])
{
  const acase *c = arg;
  sim_request rq = request(c);
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const replay_rank *rr = &o.res->ranks[0];
  const graph_event *ev = (const graph_event *)p->events->data;
  int n = (int)p->events->len, red = c->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, pairs = 0, w = 0, d = 0, ag = 0;
  out[0] = o.res->step_time_s;
  out[1] = o.met->mem_peak_bytes;
  for (int i = 0; i < n; i++) {
    const graph_event *e = &ev[i];
    if (!c->async) {
      if (i > 0 && is_tp(o.g, e, red) && e->stream == 0 && ev[i - 1].cost == COST_GEMM && ev[i - 1].layer >= 0) {
        if (pairs < 4) out[4 + pairs] = dur(rr, i);
        out[3] += dur(rr, i);
        pairs++;
      }
      continue;
    }
    if (e->kind == EV_COMPUTE && e->cost == COST_GEMM && e->phase == PH_BACKWARD && e->layer >= 0) {
      int part = e->variant & ~GRAPH_GEMM_SM_SHARED;
      if (part == 2 && w < 4) out[4 + w++] = dur(rr, i);
      if (part == 1 && d < 4) out[8 + d++] = dur(rr, i);
    }
    if (e->kind == EV_COMPUTE && e->cost == COST_GEMM && (e->variant & GRAPH_GEMM_SM_SHARED)) {
      out[3] += dur(rr, i);
      out[14]++;
    }
    if (is_tp(o.g, e, COLL_ALL_GATHER) && e->stream == 2) {
      if (ag == 0) out[12] = dur(rr, i);
      ag++;
      if (e->bytes != 2048.0 * rq.m.hidden * 2) out[15] = -1e9; /* the gathered input: T x h bf16 */
    }
    if (is_tp(o.g, e, red) && e->stream == 2) pairs++;
  }
  out[2] = pairs;
  out[15] += ag;
  sim_outcome_clear(&o);
}

#define CLOSE(got, want, rel)                                                                                          \
  ck_assert_msg(fabs((got) - (want)) <= (rel) * fabs(want), "%.9g, want %.9g", (double)(got), (double)(want))

/* The step with the asynchronous reduction against the blocking one, no SM cost: the closed form above. */
static void check_hides(gboolean sp, gboolean small)
{
  acase block = {FALSE, sp, FALSE, small, 0}, async = {TRUE, sp, FALSE, small, 0};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run, &block, a);
  sim_child_run(run, &async, b);
  ck_assert_int_eq((int)a[2], 4); /* 2 layers x (QKV, MLP input): the blocking code's pairs */
  ck_assert_int_eq((int)b[2], 4); /* each now on the tp stream */
  ck_assert_int_eq((int)b[15], sp ? 4 : 0); /* sp: each column-parallel GEMM's saved shard gathered, T x h bytes */
  double want = a[0], longer = 0;
  for (int i = 0; i < 4; i++) {
    want -= MIN(a[4 + i], b[4 + i]);             /* the reduction beside wgrad */
    /* the shard's all-gather beside dgrad (each pair's the first's size, T x h: the same time) */
    double g = b[12];
    if (sp) want += MAX(0, g - b[8 + i]);
    if (sp ? g > b[8 + i] : a[4 + i] > b[4 + i]) longer++; /* sp: the all-gather longer than dgrad */
  }
  if (getenv("TEST_TP_ASYNC_DEBUG"))
    fprintf(stderr, "sp %d small %d: blocking %.6f s, async %.6f s, want %.6f s; reductions %.1f us, wgrad %.1f us, "
            "dgrad %.1f us, all-gather %.1f us\n", sp, small, a[0], b[0], want, a[4] * 1e6, b[4] * 1e6, b[8] * 1e6,
            b[12] * 1e6);
  /* the small model's collectives outlast the GEMM beside them (no sp: the all-reduce its wgrad; sp: the all-gather
   * its dgrad), GPT-3's do not: both sides of each max are exercised */
  ck_assert_msg(small ? longer == 4 : longer == 0, "%.0f of 4 collectives longer than their GEMM", longer);
  ck_assert(a[0] - b[0] > 0.2 * a[3] || sp); /* no sp: a real share of the reductions is hidden */
  CLOSE(b[0], want, 1e-6);
  CLOSE(b[1], a[1], 1e-12);
}

START_TEST(test_async_allreduce_hides_the_shorter_of_each_reduction_and_its_wgrad_gemm)
{
  check_hides(FALSE, FALSE);
}
END_TEST

START_TEST(test_async_allreduce_longer_than_wgrad_starts_after_dgrad)
{
  check_hides(FALSE, TRUE);
}
END_TEST

START_TEST(test_async_sp_gathers_the_saved_shard_beside_dgrad_and_scatters_beside_wgrad)
{
  check_hides(TRUE, FALSE);
  check_hides(TRUE, TRUE);
}
END_TEST

START_TEST(test_async_gemms_beside_nccl_run_on_the_sms_it_leaves)
{
  /* free links: each GEMM beside a collective (no sp: the wgrad GEMMs; sp: wgrad and dgrad) takes 1/(1 - f) of
   * its time, so the step grows by f times their replayed time */
  double f = 0.2;
  for (int sp = 0; sp <= 1; sp++) {
    acase block = {FALSE, sp, TRUE, FALSE, f}, async = {TRUE, sp, TRUE, FALSE, f};
    double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
    sim_child_run(run, &block, a);
    sim_child_run(run, &async, b);
    ck_assert_int_eq((int)b[14], sp ? 8 : 4); /* 2 layers x (QKV, MLP input) x (wgrad; sp: and dgrad) */
    ck_assert_int_eq((int)a[14], 0);
    CLOSE(b[0] - a[0], f * b[3], 1e-6);
  }
}
END_TEST

START_TEST(test_stacks_run_megatrons_async_reduction_as_their_code_does)
{
  /* on by default in Megatron-LM since February 2022 (megatron/arguments.py, --no-async-tensor-model-parallel-
   * allreduce) and in Megatron-DeepSpeed since March 2022: the megatron-deepspeed stack; not the study's code */
  const struct { const char *stack; int on; } want[] = {{"study", 0}, {"megatron-deepspeed", 1}};
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    stack_profile st;
    ck_assert(stack_load_named(want[i].stack, &st, NULL));
    ck_assert_int_eq(stack_gen_code(&st).tp_async_grad_reduce, want[i].on);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("tp_async");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_async_allreduce_hides_the_shorter_of_each_reduction_and_its_wgrad_gemm);
  tcase_add_test(tc, test_async_allreduce_longer_than_wgrad_starts_after_dgrad);
  tcase_add_test(tc, test_async_sp_gathers_the_saved_shard_beside_dgrad_and_scatters_beside_wgrad);
  tcase_add_test(tc, test_async_gemms_beside_nccl_run_on_the_sms_it_leaves);
  tcase_add_test(tc, test_stacks_run_megatrons_async_reduction_as_their_code_does);
  suite_add_tcase(s, tc);
  return check_run(s);
}
