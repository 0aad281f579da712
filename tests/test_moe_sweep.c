/* test_moe_sweep -- expert parallelism in the sweep and the breakdown (docs/moe.md, "In a sweep and in trust"):
 * ep, etp and --moe-imbalance as sweep lists (every combination enumerated once, the rows' columns and labels its
 * values, a listed value the model does not take counted invalid with its reason), and the breakdown's ep column
 * (the timeline's ep-comm category) against the all-to-all events' own times.
 *
 * Expected values: the count of a crossed enumeration is the product of the list lengths; the ep column of a rank
 * is the sum over its program's all-to-all events (COLL_ALL_TO_ALL, found by kind, not by the category code under
 * test) of end - start in the replay, since without the EP overlap they run on the compute stream, exposed whole.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/simulate.h"
#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "check_main.h"
#include "sim_child.h"
#include "test_layout.h"
#include "workloads/axes.h"

/* 4 MoE layers, 8 experts, top 2, each expert 128 wide (SwiGLU): test_moe_ep's model. */
static model moe(void)
{
  model m = {.name = "moe", .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .vocab = 1024};
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn = 128;
  return m;
}

/* out[0]: rank 0's all-to-all seconds summed from its events; out[1], out[2], out[3]: its ep-comm, tp-comm and
 * dp-comm seconds of the breakdown; out[4]: how many all-to-alls; out[5]: the same sum over every non-mirror
 * rank minus their ep-comm seconds (0 when each agrees). */
static void run_ep(void *arg, double out[SIM_CHILD_MAX])
{
  const int *ep = arg;
  sim_request rq = {.m = moe(), .gen = gen_default_options()};
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "megatron-deepspeed", &rq.prof, NULL));
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l = test_layout(8, 1, 2, 1, CKPT_NONE);
  rq.l.ep = *ep;
  rq.l.seq_len = 256;
  rq.l.global_batch = 16;
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  for (int r = 0; r < o.g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(o.g->programs, r);
    if (p->mirror_of >= 0) continue;
    int n, first;
    const graph_event *ev = graph_program_events(o.g, p, &n, &first);
    const replay_rank *rr = &o.res->ranks[r];
    double a2a = 0;
    for (int i = first; i < n; i++)
      if (ev[i].kind == EV_COLLECTIVE && ev[i].variant == COLL_ALL_TO_ALL && !isnan(rr->start_s[i])) {
        a2a += rr->end_s[i] - rr->start_s[i];
        if (r == 0) out[4]++;
      }
    const double *sec = &o.met->rank_seconds[(gsize)r * TL_N];
    if (r == 0) {
      out[0] = a2a;
      out[1] = sec[TL_EP_COMM];
      out[2] = sec[TL_TP_COMM];
      out[3] = sec[TL_DP_COMM];
    }
    out[5] += fabs(a2a - sec[TL_EP_COMM]);
  }
  sim_outcome_clear(&o);
}

/* The breakdown's ep column is the all-to-all time (it was counted as tp-comm): at tp 1 nothing else is tp-comm. */
START_TEST(test_ep_column_is_the_all_to_all_events_time)
{
  int ep = 4;
  double out[SIM_CHILD_MAX];
  sim_child_run(run_ep, &ep, out);
  /* rank 0 holds 2 of the 4 MoE layers (pp 2); each runs a dispatch and a combine forward and again backward, for
   * each of 16 / (dp 4 x micro-batch 1) = 4 micro-batches: 2 x 4 x 4 = 32 */
  ck_assert_double_eq(out[4], 32);
  ck_assert_double_gt(out[0], 0);
  ck_assert_double_eq_tol(out[1], out[0], 1e-9);
  ck_assert_double_eq_tol(out[2], 0, 1e-12);
  ck_assert_double_eq_tol(out[5], 0, 1e-9);
  /* without expert parallelism there is no all-to-all and no ep-comm */
  ep = 1;
  sim_child_run(run_ep, &ep, out);
  ck_assert_double_eq(out[4], 0);
  ck_assert_double_eq(out[1], 0);
}
END_TEST

static GArray *ints(int n, const int *v)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(a, v, (guint)n);
  return a;
}

/* ep {1, 2, 4, 3} x etp {1, 2} x imbalance {1, 1.5} on one layout of the other axes: 16 rows, each combination once
 * in the enumeration's order (ep slowest, the imbalance fastest), its columns and label its values; ep 3 (not a
 * divisor of the 8 experts) counted invalid with its reason, not dropped. */
START_TEST(test_sweep_crosses_ep_etp_and_imbalance_lists)
{
  const int eps[] = {1, 2, 4, 3}, etps[] = {1, 2}, one[] = {1}, zero[] = {0}, none[] = {CKPT_NONE}, flash[] = {ATTN_FLASH2};
  const double imbs[] = {1, 1.5};
  sweep_spec s = {.seq_len = 256, .global_batch = 16, .zero = 1, .gen = gen_default_options(), .shard_i = 1,
                  .shard_n = 1, .pool = {.jobs = 1, .memory_only = TRUE}};
  s.m = moe();
  s.profiles = g_ptr_array_new();
  g_ptr_array_add(s.profiles, "h100-sxm5-80gb");
  s.stacks = g_ptr_array_new();
  g_ptr_array_add(s.stacks, "megatron-deepspeed");
  const int eight[] = {8};
  s.gpus = ints(1, eight);
  s.layout[AX_TP] = ints(1, one);
  s.layout[AX_PP] = ints(1, one);
  s.layout[AX_MB] = ints(1, one);
  s.layout[AX_SP] = ints(1, zero);
  s.layout[AX_CKPT] = ints(1, none);
  s.layout[AX_ATTN] = ints(1, flash);
  s.folded[AXIS_EP] = ints(4, eps);
  s.folded[AXIS_ETP] = ints(2, etps);
  s.moe_imbalance = g_array_new(FALSE, FALSE, sizeof(double));
  g_array_append_vals(s.moe_imbalance, imbs, 2);
  GError *err = NULL;
  g_autoptr(csv_table) t = sweep_run(&s, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(t->rows->len, 4 * 2 * 2);
  int cep = csv_column(t, "ep"), cetp = csv_column(t, "etp"), cimb = csv_column(t, "moe_imbalance"),
      cst = csv_column(t, "status"), cerr = csv_column(t, "error");
  for (guint r = 0; r < t->rows->len; r++) {
    int want_ep = eps[r / 4], want_etp = etps[(r / 2) % 2];
    double want_imb = imbs[r % 2];
    ck_assert_int_eq(atoi(csv_cell(t, r, cep)), want_ep);
    ck_assert_int_eq(atoi(csv_cell(t, r, cetp)), want_etp);
    ck_assert_double_eq(g_ascii_strtod(csv_cell(t, r, cimb), NULL), want_imb);
    g_autofree char *label = sweep_layout_label(t, r);
    g_autofree char *sep = want_ep > 1 ? g_strdup_printf(" ep%d", want_ep) : g_strdup("");
    g_autofree char *setp = want_etp > 1 ? g_strdup_printf(" etp%d", want_etp) : g_strdup("");
    g_autofree char *want = g_strdup_printf("tp1 pp1 dp8 mb1 sp0 none flash2%s%s%s", sep, setp,
                                            want_imb > 1 ? " imb1.5" : "");
    ck_assert_str_eq(label, want);
    if (want_ep == 3) {
      ck_assert_str_eq(csv_cell(t, r, cst), "invalid");
      ck_assert_ptr_nonnull(strstr(csv_cell(t, r, cerr), "ep: 3 does not divide the 8 experts"));
    } else {
      ck_assert_msg(strcmp(csv_cell(t, r, cst), "invalid"), "row %u: %s", r, csv_cell(t, r, cerr));
    }
  }
  /* memory grows with the imbalance (F times the experts' activations on the slowest rank) */
  int cmem = csv_column(t, "peak_mem_gib");
  for (guint r = 4; r + 1 < 12; r += 2) /* ep 2 and 4 */
    ck_assert_double_gt(g_ascii_strtod(csv_cell(t, r + 1, cmem), NULL), g_ascii_strtod(csv_cell(t, r, cmem), NULL));
  for (int a = 0; a < AX_N; a++)
    if (s.layout[a]) g_array_unref(s.layout[a]);
  g_array_unref(s.folded[AXIS_EP]);
  g_array_unref(s.folded[AXIS_ETP]);
  g_array_unref(s.moe_imbalance);
  g_array_unref(s.gpus);
  g_ptr_array_unref(s.profiles);
  g_ptr_array_unref(s.stacks);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("moe_sweep");
  TCase *tc = tcase_create("moe_sweep");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_ep_column_is_the_all_to_all_events_time);
  tcase_add_test(tc, test_sweep_crosses_ep_etp_and_imbalance_lists);
  suite_add_tcase(s, tc);
  return check_run(s);
}
