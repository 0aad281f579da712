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
 *   first forward of chunk 0 waits for chunk 0's alone, and chunk 1's gather overlaps chunk 0's forward. */
#include <check.h>

#include "check_main.h"
#include "sim_child.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/simulate.h"
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
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, NULL));
  if (c->free_comm) {
    rq.prof.nvlink_latency_s = rq.prof.ib_latency_s = rq.prof.stack.nccl_step_latency_s = 0;
    rq.prof.stack.launch_overhead_s = 0;
    rq.prof.nvlink_bytes_per_s = rq.prof.ib_bytes_per_s = 1e18;
    rq.prof.hbm_bytes_per_s = 1e18;
  }
  rq.capacity_gib = rq.prof.memory_gib;
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
  GError *err = NULL;
  ck_assert_msg(layout_validate(l, &rq.m, &err), "%s", err ? err->message : "");
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
  suite_add_tcase(s, tc);
  return check_run(s);
}
