/* test_overlaps -- the data-parallel overlaps with the interleaved schedule (docs/schedules.md, "Overlap"):
 * Megatron-Core's distributed optimizer reduces a model chunk's gradients as soon as the chunk's last backward
 * micro-batch completes them, and gathers chunk c's parameters while chunk c - 1's first forward computes.
 *
 * On a uniform 16-layer model (4 layers a chunk: one 500M-element bucket each), pp 2, V 2, dp 2 on one node:
 * - with free communication (no latency, links and HBM infinitely fast) the step with both overlaps equals,
 *   to 1e-9, the step of one replica (dp 1), which has no data-parallel work at all;
 * - with the A100's links, the gradient reduction the compute stream waits for is exactly the last chunk's
 *   (chunk 0's, whose backward ends each stage's step): its all-reduce and copy-back, as replayed; chunk 1's
 *   runs entirely during chunk 0's cool-down backwards;
 * - with --overlap-param-gather the chunks' gathers run one after the other on the communication stream, the
 *   first forward of chunk 0 waits for chunk 0's alone, and chunk 1's gather overlaps chunk 0's forward.
 * The tensor-parallel overlap (the stack's tp_comm_overlap, docs/stacks.md) on llama-7b at tp 2 with sp: without
 * an SM cost the step shrinks by the sum over the (sp collective, GEMM) pairs of the shorter of the two, as the
 * blocking run replays them; with free links a GEMM beside a reduce-scatter takes 1/(1 - f) of its time.
 * And what each shipped stack runs by default: ZeRO stage, overlaps, tp overlap, as the code it models. */
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
#include "workloads/schedule.h"

static model uniform16(void)
{
  model m = {.layers = 16, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn = 4096, .vocab = 8};
  g_strlcpy(m.name, "uniform-16", sizeof m.name);
  return m;
}

typedef struct ocase {
  int dp;
  gboolean ogr, opg, free_comm;
} ocase;

static sim_request request(const ocase *c)
{
  sim_request rq = {.m = uniform16(), .l = layout_default(), .gen = gen_default_options()};
  check_request_platform(&rq, "a100-sxm4-80gb", "study");
  if (c->free_comm) {
    check_free_links(&rq.prof);
    rq.prof.hbm_bytes_per_s = 1e18;
  }
  layout *l = &rq.l;
  l->pp = 2;
  l->dp = c->dp;
  l->gpus = 2 * c->dp;
  l->seq_len = 2048;
  l->micro_batch = 1;
  l->global_batch = 4 * c->dp; /* 4 micro-batches a replica */
  int sched;
  ck_assert(sched_parse("interleaved", &sched, NULL));
  l->schedule = sched;
  l->virtual_stages = 2;
  l->zero = 1;
  l->overlap_grad_reduce = c->ogr;
  l->overlap_param_gather = c->opg;
  rq.gen.partition = PARTITION_LAYERS;
  check_request_validate(&rq);
  return rq;
}

/* out: [0] step time; [1] how long rank 0's compute stream waits for the communication stream after its last
 * gradient cast (the exposed reduction): the start of its next event minus the cast's end; [2] chunk 0's reduction
 * as replayed: the end of its copy-back minus the start of its all-reduce; [3] end of chunk 1's reduction; [4] end
 * of the last backward kernel; [5] dp all-reduces of rank 0; [6] end of chunk 0's gather; [7] start of chunk 1's
 * gather; [8] start of the first forward kernel; [9] end of chunk 0's first forward (layers 0-3, micro-batch 0);
 * [10] the last cast's end minus the start of chunk 0's all-reduce; [11], [12] bytes of the first and second
 * all-reduce */
static void run(void *arg, double out[SIM_CHILD_MAX])
{
  const ocase *c = arg;
  sim_request rq = request(c);
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const replay_rank *rr = &o.res->ranks[0];
  const graph_event *ev = (const graph_event *)p->events->data;
  int n = (int)p->events->len, ar = 0, gathers = 0, cast = -1, after_cast = -1;
  double ar_start[2] = {0}, side_end[2] = {0};
  out[0] = o.res->step_time_s;
  out[8] = INFINITY;
  for (int i = 0; i < n; i++) {
    const graph_event *e = &ev[i];
    if (e->kind == EV_COMPUTE && e->phase == PH_BACKWARD) out[4] = MAX(out[4], rr->end_s[i]);
    if (e->kind == EV_COMPUTE && e->phase == PH_FORWARD) {
      out[8] = MIN(out[8], rr->start_s[i]);
      if (e->micro_batch == 0 && e->layer >= 0 && e->layer < 4) out[9] = MAX(out[9], rr->end_s[i]);
    }
    if (e->stream == 0 && e->kind == EV_COMPUTE && e->phase == PH_DP) cast = i, after_cast = -1;
    else if (e->stream == 0 && cast >= 0 && after_cast < 0) after_cast = i;
    if (e->kind == EV_COLLECTIVE && e->phase == PH_DP && e->variant == COLL_ALL_REDUCE && e->stream == 1) {
      ar_start[MIN(ar, 1)] = rr->start_s[i];
      out[11 + MIN(ar, 1)] = e->bytes;
      ar++;
    }
    if (e->kind == EV_COLLECTIVE && e->phase == PH_DP && e->variant == COLL_ALL_GATHER && e->stream == 1) {
      if (gathers == 0) out[6] = rr->end_s[i];
      if (gathers == 1) out[7] = rr->start_s[i];
      gathers++;
    }
    if (e->stream == 1 && e->phase == PH_DP && ar > 0) side_end[MIN(ar, 2) - 1] = rr->end_s[i];
  }
  /* the backward runs chunk 1 (layers 8-11 on stage 0) before chunk 0: the first reduction is chunk 1's */
  if (cast >= 0 && after_cast >= 0) {
    out[1] = rr->start_s[after_cast] - rr->end_s[cast];
    out[10] = rr->end_s[cast] - ar_start[1];
  }
  out[3] = side_end[0];
  out[2] = side_end[1] - ar_start[1];
  out[5] = ar;
  sim_outcome_clear(&o);
}

#define CLOSE(got, want, rel)                                                                                          \
  ck_assert_msg(fabs((got) - (want)) <= (rel) * fabs(want), "%.9g, want %.9g", (double)(got), (double)(want))

START_TEST(test_free_communication_makes_the_overlapped_interleaved_step_the_one_replica_step)
{
  ocase one = {1, FALSE, FALSE, TRUE}, both = {2, TRUE, TRUE, TRUE};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run, &one, a);
  sim_child_run(run, &both, b);
  CLOSE(b[0], a[0], 1e-7); /* 1e18 B/s and 0 s latency: not quite nothing */
}
END_TEST

START_TEST(test_only_the_last_chunks_gradient_reduction_is_exposed)
{
  ocase c = {2, TRUE, FALSE, FALSE};
  double r[SIM_CHILD_MAX];
  sim_child_run(run, &c, r);
  if (getenv("TEST_OVERLAPS_DEBUG"))
    for (int i = 0; i < 11; i++) fprintf(stderr, "out[%d] = %.9g\n", i, r[i]);
  ck_assert_int_eq((int)r[5], 2); /* one bucket per chunk, both reduced in the backward */
  /* in fp32 (the study's code): chunk 1 of stage 0 holds layers 8-11, each 4h^2 + 3hf + 2h weights; chunk 0
   * layers 0-3 and the embedding, V h */
  double h = 1024, f = 4096, layer = 4 * h * h + 3 * h * f + 2 * h;
  CLOSE(r[11], 4.0 * 4 * layer, 1e-12);
  CLOSE(r[12], 4.0 * (4 * layer + 8 * h), 1e-12);
  ck_assert_msg(r[3] < r[4], "chunk 1's reduction ends at %.6f s, after the last backward kernel (%.6f s)", r[3], r[4]);
  ck_assert(r[2] > 0);
  ck_assert_msg(fabs(r[10]) < 1e-9, "chunk 0's all-reduce starts %.3g s after its cast ends", -r[10]);
  CLOSE(r[1], r[2], 1e-6);
}
END_TEST

START_TEST(test_chunk_1s_parameter_gather_overlaps_chunk_0s_first_forward)
{
  ocase c = {2, FALSE, TRUE, FALSE};
  double r[SIM_CHILD_MAX];
  sim_child_run(run, &c, r);
  if (getenv("TEST_OVERLAPS_DEBUG"))
    for (int i = 0; i < 13; i++) fprintf(stderr, "out[%d] = %.9g\n", i, r[i]);
  ck_assert_msg(r[8] >= r[6], "the first forward starts at %.9f s, before chunk 0's gather ends (%.9f s)", r[8], r[6]);
  ck_assert_msg(r[7] >= r[6], "chunk 1's gather starts at %.9f s, before chunk 0's ends (%.9f s)", r[7], r[6]);
  ck_assert_msg(r[7] < r[9], "chunk 1's gather starts at %.9f s, after chunk 0's first forward (%.9f s)", r[7], r[9]);
  CLOSE(r[8], r[6], 1e-9); /* the first forward waits for chunk 0's gather only */
}
END_TEST

/* ---- tensor-parallel overlap (the stack's tp_comm_overlap, docs/stacks.md) ---- */

typedef struct tcase_tp {
  gboolean overlap, free_comm;
  double sm_fraction;
} tcase_tp;

/* llama-7b at tp 2 with sp on one node, one stage, one replica, one micro-batch of 2048 tokens, on the nemo stack. */
static sim_request tp_request(const tcase_tp *c)
{
  sim_request rq = {.l = layout_default(), .gen = gen_default_options()};
  ck_assert(model_load_named("llama-7b", &rq.m, NULL));
  check_request_platform(&rq, "h100-sxm5-80gb", "nemo");
  rq.prof.stack.tp_comm_overlap = c->overlap;
  rq.prof.stack.tp_overlap_sm_fraction = c->sm_fraction;
  if (c->free_comm) {
    check_free_links(&rq.prof);
    rq.prof.stack.host_dispatch_s = 0; /* kernel times are their math alone */
  }
  check_request_stack_generator(&rq);
  layout *l = &rq.l;
  l->gpus = 2;
  l->tp = 2;
  l->sp = TRUE;
  l->seq_len = 2048;
  l->micro_batch = 1;
  l->global_batch = 1;
  stack_layout_defaults(&rq.prof.stack, l, 0);
  check_request_validate(&rq);
  return rq;
}

static gboolean is_tp_sp(const graph *g, const graph_event *e)
{
  if (e->kind != EV_COLLECTIVE || (e->variant != COLL_ALL_GATHER && e->variant != COLL_REDUCE_SCATTER)) return FALSE;
  const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
  return strcmp(gr->label, "tp") == 0 && e->phase != PH_DP;
}

/* out: [0] step time; [1] over the pairs of the run's program where a tp all-gather is followed by a GEMM or a
 * GEMM by a tp reduce-scatter (before the optimizer), the sum of min(collective, GEMM) as replayed; [2] the sum
 * of the replayed GEMMs followed by a tp reduce-scatter; [3] pairs; [4] GEMMs marked as sharing their SMs */
static void run_tp(void *arg, double out[SIM_CHILD_MAX])
{
  const tcase_tp *c = arg;
  sim_request rq = tp_request(c);
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const replay_rank *rr = &o.res->ranks[0];
  const graph_event *ev = (const graph_event *)p->events->data;
  int n = (int)p->events->len;
  out[0] = o.res->step_time_s;
  for (int i = 0; i < n; i++) {
    if (ev[i].cost == COST_GEMM && (ev[i].variant & GRAPH_GEMM_SM_SHARED)) out[4]++;
    if (!is_tp_sp(o.g, &ev[i])) continue;
    int j = ev[i].variant == COLL_ALL_GATHER ? i + 1 : i - 1;
    if (j < 0 || j >= n || ev[j].cost != COST_GEMM || ev[j].kind != EV_COMPUTE) continue;
    double dc = rr->end_s[i] - rr->start_s[i], dg = rr->end_s[j] - rr->start_s[j];
    out[1] += MIN(dc, dg);
    if (ev[i].variant == COLL_REDUCE_SCATTER) out[2] += dg;
    out[3]++;
  }
  sim_outcome_clear(&o);
}

START_TEST(test_tp_overlap_hides_the_shorter_of_each_collective_and_its_gemm)
{
  /* no SM cost: each pair of an sp collective and the GEMM beside it takes max(t_coll, t_gemm) instead of their
   * sum, so the step shrinks by the sum over the pairs of min(t_coll, t_gemm), as the blocking run replays them */
  tcase_tp plain = {FALSE, FALSE, 0}, over = {TRUE, FALSE, 0};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_tp, &plain, a);
  sim_child_run(run_tp, &over, b);
  if (getenv("TEST_OVERLAPS_DEBUG"))
    fprintf(stderr, "tp: plain %.6f s, overlapped %.6f s, hidden %.6f s over %.0f pairs\n", a[0], b[0], a[1], a[3]);
  /* per layer forward 2 all-gathers + 2 reduce-scatters, backward the same, 32 layers; the head's gather and
   * reduce-scatter: 4 * 2 * 32 + 2 */
  ck_assert_int_eq((int)a[3], 4 * 2 * 32 + 2);
  ck_assert_int_eq((int)a[4], 0);
  ck_assert(a[1] > 0.02 * a[0]);
  CLOSE(b[0], a[0] - a[1], 2e-3);
}
END_TEST

START_TEST(test_tp_overlap_with_free_links_costs_the_reduce_scatter_gemms_their_sm_share)
{
  /* free links: nothing to hide; a GEMM beside a reduce-scatter runs on 1 - f of the SMs, 1/(1 - f) as long */
  double f = 0.2;
  tcase_tp plain = {FALSE, TRUE, f}, over = {TRUE, TRUE, f};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_tp, &plain, a);
  sim_child_run(run_tp, &over, b);
  ck_assert_int_eq((int)b[4], 2 * 2 * 32 + 1); /* forward proj and fc2, backward qkv and fc1; the head's backward */
  CLOSE(b[0] - a[0], a[2] * (1 / (1 - f) - 1), 1e-6);
}
END_TEST

/* ---- what each shipped stack runs by default (docs/stacks.md, "Defaults") ---- */

START_TEST(test_each_stack_runs_its_codes_default_optimizer_and_overlaps)
{
  /* megatron-deepspeed runs ZeRO 1 as BLOOM's ds_config did (the runs it is fitted and judged on); NeMo's recipes
   * turn on the distributed optimizer (ZeRO 1) and, in their DistributedDataParallelConfig and performance recipes,
   * the data-parallel overlaps and TransformerEngine's tp_comm_overlap: the nemo stack is fitted with all three on
   * and runs them (docs/stacks.md, "Defaults"); the study's code shards its optimizer (ZeRO 1) */
  const struct { const char *stack; int zero, ogr, opg, tpo; } want[] = {
      {"study", 1, 0, 0, 0}, {"nemo", 1, 1, 1, 1}, {"megatron-deepspeed", 1, 0, 0, 0}};
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    stack_profile st;
    ck_assert(stack_load_named(want[i].stack, &st, NULL));
    layout l = layout_default();
    l.zero = 3;
    l.overlap_grad_reduce = l.overlap_param_gather = 7; /* neither 0 nor 1: overwritten */
    stack_layout_defaults(&st, &l, 0);
    ck_assert_msg(l.zero == want[i].zero && l.overlap_grad_reduce == want[i].ogr && l.overlap_param_gather == want[i].opg,
                  "%s: zero %d ogr %d opg %d", want[i].stack, l.zero, l.overlap_grad_reduce, l.overlap_param_gather);
    ck_assert_int_eq(stack_gen_code(&st).tp_comm_overlap, want[i].tpo);
    /* what a table or the command line gives stays; ZeRO 0 has no parameter gather to overlap */
    layout g = layout_default();
    g.zero = 0;
    stack_layout_defaults(&st, &g, STACK_GIVEN_ZERO);
    ck_assert_int_eq(g.zero, 0);
    ck_assert_int_eq(g.overlap_param_gather, 0);
    ck_assert_int_eq(g.overlap_grad_reduce, want[i].ogr);
    g.overlap_grad_reduce = !want[i].ogr;
    stack_layout_defaults(&st, &g, STACK_GIVEN_ZERO | STACK_GIVEN_OVERLAP_GRAD_REDUCE);
    ck_assert_int_eq(g.overlap_grad_reduce, !want[i].ogr);
  }
}
END_TEST

/* The fast path sizes a stage's program without writing it (gen_stage_events): with chunks and the overlaps too. */
START_TEST(test_counted_events_equal_the_written_interleaved_program_with_the_overlaps)
{
  const gboolean flags[][2] = {{FALSE, FALSE}, {TRUE, FALSE}, {FALSE, TRUE}, {TRUE, TRUE}};
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++) {
    ocase c = {2, flags[k][0], flags[k][1], FALSE};
    sim_request rq = request(&c);
    g_autoptr(graph) g = gen_graph(&rq.m, &rq.l, &rq.gen, NULL);
    ck_assert_ptr_nonnull(g);
    partition part;
    ck_assert(partition_make_chunked(&part, &rq.m, rq.l.pp, rq.l.virtual_stages, rq.l.tp, rq.gen.partition, NULL));
    for (int s = 0; s < rq.l.pp; s++) {
      gen_stage_size sz;
      gen_stage_events(&rq.m, &rq.l, &rq.gen.code, &part, s, &sz);
      const graph_program *p = g_ptr_array_index(g->programs, gen_rank(&rq.l, s, 0, 0));
      ck_assert_msg(sz.events == p->events->len, "ogr %d opg %d stage %d: counted %.0f, written %u", c.ogr, c.opg, s,
                    sz.events, p->events->len);
    }
    partition_clear(&part);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("overlaps");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_free_communication_makes_the_overlapped_interleaved_step_the_one_replica_step);
  tcase_add_test(tc, test_only_the_last_chunks_gradient_reduction_is_exposed);
  tcase_add_test(tc, test_chunk_1s_parameter_gather_overlaps_chunk_0s_first_forward);
  tcase_add_test(tc, test_counted_events_equal_the_written_interleaved_program_with_the_overlaps);
  tcase_add_test(tc, test_each_stack_runs_its_codes_default_optimizer_and_overlaps);
  tcase_add_test(tc, test_tp_overlap_hides_the_shorter_of_each_collective_and_its_gemm);
  tcase_add_test(tc, test_tp_overlap_with_free_links_costs_the_reduce_scatter_gemms_their_sm_share);
  suite_add_tcase(s, tc);
  return check_run(s);
}
