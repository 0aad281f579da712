/* test_zero -- ZeRO stages 0..3 and the overlaps (docs/memory.md, docs/schedules.md "Overlap") against
 * hand computations: the model states of llama-7b at dp 8 for every stage, ZeRO-3's per-unit all-gathers
 * (count and bytes per step) and ZeRO-2's reduce-scatters in the graph, and in replays: --overlap-grad-reduce
 * never slows a step and shrinks the data-parallel time exposed after the last backward, and without an
 * overlap option no data-parallel collective runs while the rank computes. */
#include <check.h>

#include "check_main.h"
#include "check_request.h"
#include "sim_child.h"
#include "test_layout.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/simulate.h"
#include "sim/collective.h"
#include "workloads/generate.h"
#include "workloads/memory.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

static model load7b(void)
{
  model m;
  ck_assert(model_load_named("llama-7b", &m, NULL));
  return m;
}

/* llama-7b (32 layers, h 4096, f 11008, V 128000, untied) on one stage: N = 32*(4h^2+3hf+2h) + h + 2Vh. */
static double n7b(void)
{
  double h = 4096, f = 11008, V = 128000;
  return 32.0 * (4.0 * h * h + 3.0 * h * f + 2.0 * h) + h + 2.0 * V * h;
}

/* dp 8 on 8 GPUs, pp 1, global batch 8 * mb 1 * m micro-batches, seq 1024. */
static layout small(const model *m, int gpus, int zero, int micro_batches)
{
  layout l = test_layout(gpus, 1, 1, 1, CKPT_NONE);
  l.seq_len = 1024;
  l.global_batch = gpus * micro_batches;
  l.zero = zero;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, m, &err), "%s", err ? err->message : "");
  return l;
}

START_TEST(test_llama7b_dp8_model_states_by_zero_stage_are_16N_over_its_shards)
{
  model m = load7b();
  partition p;
  ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
  double N = n7b(), dp = 8;
  /* bf16 weights, bf16 gradients, fp32 optimizer (master + 2 moments, + fp32 grads without ZeRO) */
  const double want[4][3] = {{2 * N, 2 * N, 16 * N},
                             {2 * N, 2 * N, 12 * N / dp},
                             {2 * N, 2 * N / dp, 12 * N / dp},
                             {2 * N / dp, 2 * N / dp, 12 * N / dp}};
  for (int z = 0; z <= 3; z++) {
    layout l = small(&m, 8, z, 1);
    mem_states s;
    mem_model_states(&m, &l, NULL, &p, 0, &s);
    ck_assert_msg(fabs(s.params_bytes - want[z][0]) < 1, "zero %d params %.0f, want %.0f", z, s.params_bytes, want[z][0]);
    ck_assert_msg(fabs(s.grads_bytes - want[z][1]) < 1, "zero %d grads %.0f, want %.0f", z, s.grads_bytes, want[z][1]);
    ck_assert_msg(fabs(s.optimizer_bytes - want[z][2]) < 1, "zero %d optimizer %.0f, want %.0f", z, s.optimizer_bytes,
                  want[z][2]);
  }
  partition_clear(&p);
}
END_TEST

/* The data-parallel collectives of rank 0's program: how many of kind c, the sum of their buffers S. */
static void dp_collectives(const graph *g, graph_coll c, int *count, double *bytes)
{
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  *count = 0;
  *bytes = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind != EV_COLLECTIVE || e->variant != c) continue;
    const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
    if (strcmp(gr->label, "dp")) continue;
    (*count)++;
    *bytes += e->bytes;
  }
}

START_TEST(test_zero3_gathers_every_unit_before_each_forward_and_backward_2_m_units_times_2N_bytes)
{
  model m = load7b();
  int mbs = 3;
  layout l = small(&m, 8, 3, mbs);
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
  ck_assert_ptr_nonnull(g);
  int n;
  double bytes;
  dp_collectives(g, COLL_ALL_GATHER, &n, &bytes);
  /* units: the embedding, 32 layers, the final norm with the head = 34, gathered per forward and per
   * backward of each micro-batch; each pass gathers all N weights in bf16; nothing after the optimizer */
  int units = 1 + 32 + 1;
  ck_assert_int_eq(n, 2 * mbs * units);
  ck_assert_double_eq_tol(bytes, 2.0 * mbs * 2.0 * n7b(), 1e-6 * bytes);
  /* one layer's gather: its 4h^2 + 3hf + 2h weights in bf16 */
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  double layer = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2.0 * 4096;
  int layer_gathers = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_GATHER && e->bytes == 2.0 * layer) {
      layer_gathers++;
      ck_assert_int_eq(e->stream, 1); /* on the communication stream: prefetched */
    }
  }
  ck_assert_int_eq(layer_gathers, 2 * mbs * 32);
  /* each unit's gradients reduce-scattered once per backward: 34 per micro-batch, all N in fp32 */
  dp_collectives(g, COLL_REDUCE_SCATTER, &n, &bytes);
  ck_assert_int_eq(n, mbs * units);
  ck_assert_double_eq_tol(bytes, mbs * 4.0 * n7b(), 1e-6 * bytes);
  dp_collectives(g, COLL_ALL_REDUCE, &n, &bytes);
  ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(test_zero2_reduce_scatters_each_micro_batch_in_buckets_half_the_all_reduce_wire_bytes)
{
  model m = load7b();
  int mbs = 2, dp = 8;
  gen_options o = gen_default_options();
  layout l2 = small(&m, dp, 2, mbs), l1 = small(&m, dp, 1, mbs);
  g_autoptr(graph) g2 = gen_graph(&m, &l2, &o, NULL);
  g_autoptr(graph) g1 = gen_graph(&m, &l1, &o, NULL);
  double N = n7b(), buckets = ceil(N / 500e6); /* 500M-element buckets of fp32 gradients */
  int n;
  double rs_bytes, ar_bytes;
  dp_collectives(g2, COLL_REDUCE_SCATTER, &n, &rs_bytes);
  ck_assert_int_eq(n, mbs * (int)buckets);
  ck_assert_double_eq_tol(rs_bytes, mbs * 4.0 * N, 1e-6 * rs_bytes);
  dp_collectives(g2, COLL_ALL_REDUCE, &n, &ar_bytes);
  ck_assert_int_eq(n, 0);
  /* ZeRO-1: one all-reduce of the same buckets per step */
  dp_collectives(g1, COLL_ALL_REDUCE, &n, &ar_bytes);
  ck_assert_int_eq(n, (int)buckets);
  ck_assert_double_eq_tol(ar_bytes, 4.0 * N, 1e-6 * ar_bytes);
  /* per rank on the ring, S/dp per step: reduce-scatter dp-1 steps, all-reduce 2(dp-1) */
  double rs_wire = rs_bytes / dp * coll_steps(COLL_REDUCE_SCATTER, dp), ar_wire = ar_bytes / dp * coll_steps(COLL_ALL_REDUCE, dp);
  ck_assert_double_eq_tol(rs_wire, mbs * (dp - 1.0) / dp * 4.0 * N, 1e-6 * rs_wire);
  ck_assert_double_eq_tol(rs_wire / mbs, ar_wire / 2, 1e-6 * ar_wire);
  /* both gather the updated bf16 weights once after the optimizer */
  dp_collectives(g2, COLL_ALL_GATHER, &n, &ar_bytes);
  ck_assert_double_eq_tol(ar_bytes, 2.0 * N, 1e-6 * ar_bytes);
}
END_TEST

START_TEST(test_counted_events_equal_the_written_program_for_every_stage_and_overlap)
{
  model m = load7b();
  gen_options o = gen_default_options();
  const int zs[][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {2, 0, 0}, {2, 1, 1}, {3, 0, 0}, {3, 1, 0}, {0, 1, 0}};
  for (size_t c = 0; c < G_N_ELEMENTS(zs); c++) {
    layout l = small(&m, 16, zs[c][0], 3);
    l.pp = 2;
    l.overlap_grad_reduce = zs[c][1];
    l.overlap_param_gather = zs[c][2];
    ck_assert(layout_validate(&l, &m, NULL));
    g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
    partition part;
    ck_assert(partition_make_chunked(&part, &m, l.pp, 1, l.tp, o.partition, NULL));
    for (int s = 0; s < l.pp; s++) {
      gen_stage_size sz;
      gen_stage_events(&m, &l, &o.code, &part, s, &sz);
      const graph_program *p = g_ptr_array_index(g->programs, gen_rank(&l, s, 0, 0));
      ck_assert_msg(sz.events == p->events->len, "zero %d ogr %d opg %d stage %d: counted %.0f, written %u", zs[c][0],
                    zs[c][1], zs[c][2], s, sz.events, p->events->len);
    }
    partition_clear(&part);
  }
}
END_TEST

/* The distributed optimizer's parameter all-gather with FP8 primary weights (--fp8-param-gather): Megatron keeps the
 * FP8 weights in uint8 buffers of their own and gathers them at 1 byte a parameter (megatron/core/distributed/
 * param_and_grad_buffer.py group_params_for_buffers), the embedding, head and norms in bf16. llama-7b at dp 8: the
 * gathers of a step move 2N bytes, 2(N - L) + L with the switch, L = 32 (4h^2 + 3hf) the linear layers'; the same
 * with --overlap-param-gather (its per-chunk gathers before the first forward), and over pp 2 with two interleaved
 * chunks a stage the two stages' gathers together (each chunk's own linear layers). */
START_TEST(test_fp8_param_gather_gathers_the_linear_weights_at_one_byte)
{
  model m = load7b();
  gen_options o = gen_default_options();
  double h = 4096, f = 11008, N = n7b(), L = 32.0 * (4.0 * h * h + 3.0 * h * f);
  for (int c = 0; c < 3; c++) {
    layout l = small(&m, c == 2 ? 16 : 8, 1, 2);
    l.precision = PREC_FP8;
    l.overlap_param_gather = c >= 1;
    if (c == 2) {
      l.pp = 2;
      ck_assert(sched_parse("interleaved", &l.schedule, NULL));
      l.virtual_stages = 2;
    }
    for (int f8 = 0; f8 < 2; f8++) {
      l.fp8_param_gather = f8;
      GError *err = NULL;
      ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
      g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
      ck_assert_ptr_nonnull(g);
      double sum = 0;
      for (int s = 0; s < l.pp; s++) {
        const graph_program *p = g_ptr_array_index(g->programs, gen_rank(&l, s, 0, 0));
        for (guint i = 0; i < p->events->len; i++) {
          const graph_event *e = &g_array_index(p->events, graph_event, i);
          const graph_group *gr = e->kind == EV_COLLECTIVE ? g_ptr_array_index(g->groups, e->peer) : NULL;
          if (gr && e->variant == COLL_ALL_GATHER && !strcmp(gr->label, "dp")) sum += e->bytes;
        }
      }
      double want = f8 ? 2 * (N - L) + 1 * L : 2 * N;
      ck_assert_msg(fabs(sum - want) < 1e-9 * want, "case %d fp8_param_gather %d: %.0f, want %.0f", c, f8, sum, want);
    }
  }
}
END_TEST

typedef struct run_case {
  int zero;
  gboolean ogr;
} run_case;

/* llama-7b at dp 16 over two nodes (the gradient rings cross InfiniBand), 2 micro-batches.
 * out: [0] step time, [1] rank 0's step end minus the end of its last backward kernel, [2] seconds rank 0
 * runs a data-parallel collective while it computes, [3] data-parallel collectives of rank 0, [4] rank 0's
 * dp-comm seconds of the breakdown (exposed: blocking, or waited for) */
static void run_dp16(void *arg, double out[SIM_CHILD_MAX])
{
  const run_case *c = arg;
  sim_request rq = {.m = load7b(), .gen = gen_default_options()};
  check_request_platform(&rq, "a100-sxm4-80gb", "study");
  rq.l = small(&rq.m, 16, c->zero, 2);
  rq.l.overlap_grad_reduce = c->ogr;
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const replay_rank *rr = &o.res->ranks[0];
  const graph_event *ev = (const graph_event *)p->events->data;
  int n = (int)p->events->len;
  double last_bwd = 0;
  for (int i = 0; i < n; i++)
    if (ev[i].kind == EV_COMPUTE && ev[i].phase == PH_BACKWARD) last_bwd = MAX(last_bwd, rr->end_s[i]);
  out[0] = o.res->step_time_s;
  out[1] = rr->finish_s - last_bwd;
  out[4] = o.met->rank_seconds[0 * TL_N + TL_DP_COMM]; /* what the compute stream spends in or waits for */
  for (int i = 0; i < n; i++) {
    if (ev[i].kind != EV_COLLECTIVE || ev[i].phase != PH_DP) continue;
    out[3]++;
    for (int j = 0; j < n; j++) {
      if (ev[j].kind != EV_COMPUTE) continue;
      double lo = MAX(rr->start_s[i], rr->start_s[j]), hi = MIN(rr->end_s[i], rr->end_s[j]);
      if (hi > lo) out[2] += hi - lo;
    }
  }
  sim_outcome_clear(&o);
}

START_TEST(test_overlap_grad_reduce_never_slows_the_step_and_shrinks_the_dp_time_after_the_last_backward)
{
  for (int zero = 1; zero <= 2; zero++) {
    run_case plain = {zero, FALSE}, over = {zero, TRUE};
    double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
    sim_child_run(run_dp16, &plain, a);
    sim_child_run(run_dp16, &over, b);
    ck_assert_msg(b[0] <= a[0] * (1 + 1e-9), "zero %d: step %.6f s with the overlap, %.6f s without", zero, b[0], a[0]);
    /* without it the buckets wait for the backward's end (ZeRO-1) or block it (ZeRO-2); with it all but the
     * last bucket's reductions run during the backward: at least a tenth less is exposed */
    ck_assert_msg(b[4] < 0.9 * a[4], "zero %d: %.6f s of exposed dp-comm with the overlap, %.6f s without", zero, b[4],
                  a[4]);
    if (zero == 1) /* ZeRO-1's reduction comes after the last backward: less of it is left there */
      ck_assert_msg(b[1] < 0.9 * a[1], "zero 1: %.6f s after the last backward with the overlap, %.6f s without", b[1],
                    a[1]);
    ck_assert_msg(b[2] > 0, "zero %d: nothing overlapped", zero);
    if (getenv("TEST_ZERO_DEBUG"))
      fprintf(stderr, "zero %d: step %.6f/%.6f after-bwd %.6f/%.6f exposed %.6f/%.6f overlapped %.6f\n", zero, a[0], b[0],
              a[1], b[1], a[4], b[4], b[2]);
  }
}
END_TEST

START_TEST(test_without_an_overlap_option_no_dp_collective_runs_while_the_rank_computes)
{
  for (int zero = 0; zero <= 2; zero++) {
    run_case c = {zero, FALSE};
    double r[SIM_CHILD_MAX];
    sim_child_run(run_dp16, &c, r);
    ck_assert_msg(r[3] > 0, "zero %d: no data-parallel collective", zero);
    ck_assert_msg(r[2] == 0, "zero %d: %.9f s of dp collectives ran during compute", zero, r[2]);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("zero");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_llama7b_dp8_model_states_by_zero_stage_are_16N_over_its_shards);
  tcase_add_test(tc, test_zero3_gathers_every_unit_before_each_forward_and_backward_2_m_units_times_2N_bytes);
  tcase_add_test(tc, test_zero2_reduce_scatters_each_micro_batch_in_buckets_half_the_all_reduce_wire_bytes);
  tcase_add_test(tc, test_counted_events_equal_the_written_program_for_every_stage_and_overlap);
  tcase_add_test(tc, test_fp8_param_gather_gathers_the_linear_weights_at_one_byte);
  tcase_add_test(tc, test_overlap_grad_reduce_never_slows_the_step_and_shrinks_the_dp_time_after_the_last_backward);
  tcase_add_test(tc, test_without_an_overlap_option_no_dp_collective_runs_while_the_rank_computes);
  suite_add_tcase(s, tc);
  return check_run(s);
}
