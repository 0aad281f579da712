/* test_rank -- sweep_rank's decisive answers (analysis/sweep_report.c): statistical ties with the best, the
 * layout to prefer among them, and layouts equivalent by construction collapsed into one row. Tables made by
 * hand, so every expected value follows from the rule: a tie when the gap (t - t1)/t1 is at most
 * sqrt(band^2 + band1^2); prefer the fastest tied layout without the near-oom flag; none = selective with a
 * flash kernel and identical results; two attention kernels one block by construction (block_same_attention). */
#include <check.h>
#include <string.h>

#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "check_main.h"

typedef struct row_spec {
  const char *step, *band, *headroom, *flags, *ckpt, *attn, *tp;
} row_spec;

/* The rows as a sweep's table of llama-7b on the A100 with `stack`, at sequence length `seq`. */
static csv_table *table_on(const row_spec *rows, int n, const char *stack, const char *seq)
{
  guint nc;
  const char *const *cols = sweep_columns(&nc);
  csv_table *t = csv_new(cols, nc);
  for (int i = 0; i < n; i++) {
    GPtrArray *row = g_ptr_array_new();
    for (guint k = 0; k < nc; k++) g_ptr_array_add(row, g_strdup("0"));
    guint r = csv_append_row(t, row, 0);
    g_autofree char *ix = g_strdup_printf("%d", i);
    csv_set(t, r, csv_column(t, "index"), ix);
    csv_set(t, r, csv_column(t, "status"), "ok");
    /* a layout predict can read (an attention pair's equivalence is decided on its model, layout and stack):
     * column, value; the platform's what-if columns empty (the profile's) */
    const char *const fixed[][2] = {
        {"model", "llama-7b"}, {"seq_len", seq}, {"global_batch", "64"}, {"vocab", "32000"}, {"sp", "0"}, {"ep", "1"},
        {"etp", "1"}, {"moe_imbalance", "1"}, {"overlap_grad_reduce", "0"}, {"overlap_param_gather", "0"},
        {"profile", "a100-sxm4-80gb"}, {"stack", stack}, {"model_file", ""}, {"partition", ""}, {"ib_gbps", ""},
        {"nvlink_gbps", ""}, {"nics_per_node", ""}, {"gpu_memory", ""}, {"fabric", ""}, {"leaf_nodes", ""},
        {"oversubscription", ""}, {"pipeline_layout", ""}};
    for (size_t k = 0; k < G_N_ELEMENTS(fixed); k++)
      if (csv_column(t, fixed[k][0]) >= 0) csv_set(t, r, csv_column(t, fixed[k][0]), fixed[k][1]);
    csv_set(t, r, csv_column(t, "step_time_s"), rows[i].step);
    csv_set(t, r, csv_column(t, "peak_mem_gib"), "40");
    csv_set(t, r, csv_column(t, "band_pct"), rows[i].band);
    csv_set(t, r, csv_column(t, "headroom_gib"), rows[i].headroom);
    csv_set(t, r, csv_column(t, "flags"), rows[i].flags);
    csv_set(t, r, csv_column(t, "checkpointing"), rows[i].ckpt);
    csv_set(t, r, csv_column(t, "attention_kernel"), rows[i].attn);
    csv_set(t, r, csv_column(t, "tp"), rows[i].tp);
    csv_set(t, r, csv_column(t, "pp"), "1");
    csv_set(t, r, csv_column(t, "cp"), "1");
    csv_set(t, r, csv_column(t, "zero"), "1"); /* the defaults, which a label leaves out */
    csv_set(t, r, csv_column(t, "precision"), "bf16");
    csv_set(t, r, csv_column(t, "micro_batch"), "1");
    csv_set(t, r, csv_column(t, "schedule"), "1f1b");
    csv_set(t, r, csv_column(t, "virtual_stages"), "1");
    csv_set(t, r, csv_column(t, "gpus"), "8");
    csv_set(t, r, csv_column(t, "zero"), "1");
    csv_set(t, r, csv_column(t, "precision"), "bf16");
  }
  return t;
}

/* table_on with nemo (which fuses its norms) at 2048 tokens. */
static csv_table *table_of(const row_spec *rows, int n) { return table_on(rows, n, "nemo", "2048"); }

static const char *at(const csv_table *t, guint r, const char *col) { return csv_cell(t, r, csv_column(t, col)); }

/* The case: #1 1.00% ahead with ±4.3% bands (combined 6.08%) and near OOM: #2 (+1.00%) and #3 (+6.0%)
 * tie, #4 (+6.2%) does not; #2 is preferred, the fastest tie without OOM risk. */
START_TEST(test_ties_inside_the_combined_band_and_the_preferred_has_no_oom_risk)
{
  const row_spec rows[] = {
      {"10.0", "4.3", "0.5", "near-oom", "none", "flash2", "1"},
      {"10.1", "4.3", "14", "", "none", "flash2", "2"},
      {"10.6", "4.3", "20", "", "none", "flash2", "4"},
      {"10.62", "4.3", "30", "", "none", "flash2", "8"},
  };
  g_autoptr(csv_table) t = table_of(rows, 4);
  g_autoptr(csv_table) rk = sweep_rank(t);
  ck_assert_str_eq(at(rk, 0, "tie"), "");
  ck_assert_str_eq(at(rk, 1, "tie"), "1");
  ck_assert_str_eq(at(rk, 2, "tie"), "1");
  ck_assert_str_eq(at(rk, 3, "tie"), "");
  ck_assert_str_eq(at(rk, 0, "preferred"), "");
  ck_assert_str_eq(at(rk, 1, "preferred"), "1");
  ck_assert_str_eq(at(rk, 2, "preferred"), "");
  GString *out = g_string_new(NULL);
  sweep_view v = {.format = SWEEP_TEXT};
  sweep_render(rk, &v, out);
  ck_assert_msg(strstr(out->str, "statistical tie: #1, #2, #3 ("), "%s", out->str);
  ck_assert_msg(strstr(out->str, "prefer #2: the same speed within the bands (+1.00%) without #1's OOM risk: 14.0 GiB "
                                 "headroom against 0.5 GiB"), "%s", out->str);
  g_string_free(out, TRUE);
}
END_TEST

/* table_of on a GPU of 80 GiB: each row's peak is 80 GiB less its headroom. */
static csv_table *table_on_80(const row_spec *rows, int n)
{
  csv_table *t = table_of(rows, n);
  for (int r = 0; r < n; r++) {
    g_autofree char *peak = g_strdup_printf("%g", 80 - g_ascii_strtod(rows[r].headroom, NULL));
    csv_set(t, (guint)r, csv_column(t, "peak_mem_gib"), peak);
  }
  return t;
}

/* The trial's case: #1 (6.5 GiB headroom of 80) ties with #2 (+0.6%, 29.4 GiB): four times the headroom and
 * 22.9 GiB more, above 10% of the 80 GiB: #2 is preferred and the line says why. #3 (+0.8%, 12 GiB: not twice
 * #1's) would not be; nor #2 at 14 GiB (7.5 GiB more: under 8 GiB). */
START_TEST(test_a_tie_with_far_more_headroom_is_preferred)
{
  row_spec rows[] = {
      {"10.00", "4.3", "6.5", "", "none", "flash2", "1"},
      {"10.06", "4.3", "29.4", "", "none", "flash2", "2"},
      {"10.08", "4.3", "12", "", "none", "flash2", "4"},
  };
  g_autoptr(csv_table) t = table_on_80(rows, 3);
  g_autoptr(csv_table) rk = sweep_rank(t);
  ck_assert_str_eq(at(rk, 0, "preferred"), "");
  ck_assert_str_eq(at(rk, 1, "preferred"), "1");
  ck_assert_str_eq(at(rk, 2, "preferred"), "");
  GString *out = g_string_new(NULL);
  sweep_view v = {.format = SWEEP_TEXT};
  sweep_render(rk, &v, out);
  ck_assert_msg(strstr(out->str, "prefer #2: the same speed within the bands (+0.60%) with 29.4 GiB headroom against "
                                 "#1's 6.5 GiB"), "%s", out->str);
  g_string_free(out, TRUE);
  rows[1].headroom = "14"; /* 7.5 GiB more: under 10% of 80 */
  g_autoptr(csv_table) t2 = table_on_80(rows, 3);
  g_autoptr(csv_table) rk2 = sweep_rank(t2);
  ck_assert_str_eq(at(rk2, 0, "preferred"), "1");
}
END_TEST

/* Without OOM risk the best is the one to prefer; without bands (a stack with no trust table) nothing ties. */
START_TEST(test_the_best_is_preferred_without_risk_and_nothing_ties_without_bands)
{
  const row_spec rows[] = {{"10.0", "4.3", "30", "", "none", "flash2", "1"}, {"10.1", "4.3", "14", "", "none", "flash2", "2"}};
  g_autoptr(csv_table) rk = sweep_rank(table_of(rows, 2));
  ck_assert_str_eq(at(rk, 0, "preferred"), "1");
  ck_assert_str_eq(at(rk, 1, "tie"), "1");
  const row_spec bare[] = {{"10.0", "", "30", "", "none", "flash2", "1"}, {"10.1", "", "14", "", "none", "flash2", "2"}};
  g_autoptr(csv_table) rb = sweep_rank(table_of(bare, 2));
  ck_assert_str_eq(at(rb, 1, "tie"), "");
}
END_TEST

/* selective = none with a flash kernel (identical graphs): one ranked row, the other pointing at it and named in
 * its label; with the unfused kernel (scores to recompute) or differing results they stay apart. Two attention
 * kernels the stack runs alike (flash2+rmsnorm on a stack that fuses its norms: the same step time and peak to
 * the last digit) collapse the same way; two with different results (torch, fused-softmax) do not. */
START_TEST(test_equivalent_layouts_collapse_into_one_row)
{
  const row_spec rows[] = {
      {"10.0", "4.3", "30", "", "none", "flash2", "1"},
      {"10.0", "4.3", "30", "", "selective", "flash2", "1"},
      {"12.0", "4.3", "30", "", "none", "torch", "1"},
      {"12.0", "4.3", "30", "", "selective", "torch", "1"},
      {"13.0", "4.3", "30", "", "selective", "flash1", "2"},
      {"13.5", "4.3", "30", "", "none", "flash1", "2"},
      {"10.0", "4.3", "30", "", "none", "flash2+rmsnorm", "1"},
      {"12.5", "4.3", "30", "", "none", "fused-softmax", "1"},
  };
  g_autoptr(csv_table) rk = sweep_rank(table_of(rows, 8));
  /* sorted: 10.0 none flash2, 10.0 selective flash2, 10.0 none flash2+rmsnorm, 12.0 x2 torch, 12.5, 13.0, 13.5 */
  ck_assert_str_eq(at(rk, 0, "rank"), "1");
  ck_assert_str_eq(at(rk, 0, "attention_kernel"), "flash2");
  for (guint r = 1; r <= 2; r++) {
    ck_assert_str_eq(at(rk, r, "rank"), "");
    ck_assert_str_eq(at(rk, r, "same_as"), "1");
  }
  ck_assert_str_eq(at(rk, 3, "rank"), "2"); /* torch: selective recomputes the scores, a different graph */
  ck_assert_str_eq(at(rk, 4, "rank"), "3");
  ck_assert_str_eq(at(rk, 4, "same_as"), "");
  ck_assert_str_eq(at(rk, 5, "attention_kernel"), "fused-softmax");
  ck_assert_str_eq(at(rk, 5, "rank"), "4"); /* another step time: not torch's graph */
  ck_assert_str_eq(at(rk, 7, "same_as"), ""); /* flash1, but a different step time: not the same graph */
  GString *out = g_string_new(NULL);
  sweep_view v = {.format = SWEEP_TEXT};
  sweep_render(rk, &v, out);
  ck_assert_msg(strstr(out->str, "tp1 pp1 dp8 mb1 sp0 none flash2 (= selective, flash2+rmsnorm) "), "%s", out->str);
  ck_assert_msg(strstr(out->str, "8 fit, 0 do not (2 the same step as a row above"), "%s", out->str);
  ck_assert_msg(!strstr(out->str, "more that fit"), "%s", out->str); /* 5 rows shown, all there are */
  g_string_free(out, TRUE);
}
END_TEST

/* Equivalence is a chain: selective flash2+rmsnorm differs from none flash2 in two kernel options, but is
 * selective flash2 (one option: the norm fusion nemo does anyway) which is none flash2 (selective has nothing to
 * recompute under a flash kernel). One ranked row, not two rows of one step tied with each other. */
START_TEST(test_a_chain_of_equivalent_layouts_collapses_into_one_row)
{
  const row_spec rows[] = {
      {"10.0", "4.3", "30", "", "none", "flash2", "1"},
      {"10.0", "4.3", "30", "", "selective", "flash2+rmsnorm", "1"},
      {"10.0", "4.3", "30", "", "selective", "flash2", "1"},
      {"10.0", "4.3", "30", "", "none", "flash2+rmsnorm", "1"},
  };
  g_autoptr(csv_table) rk = sweep_rank(table_of(rows, 4));
  ck_assert_str_eq(at(rk, 0, "rank"), "1");
  for (guint r = 1; r < 4; r++) {
    ck_assert_str_eq(at(rk, r, "rank"), "");
    ck_assert_str_eq(at(rk, r, "same_as"), "1");
  }
  GString *out = g_string_new(NULL);
  sweep_view v = {.format = SWEEP_TEXT};
  sweep_render(rk, &v, out);
  ck_assert_msg(strstr(out->str, "none flash2 (= selective flash2+rmsnorm, selective, flash2+rmsnorm) "), "%s", out->str);
  ck_assert_msg(strstr(out->str, "4 fit, 0 do not (3 the same step as a row above"), "%s", out->str);
  g_string_free(out, TRUE);
}
END_TEST

/* Two attention kernels are one step by construction, not by equal numbers: rows with equal results stay apart
 * where their graphs differ, and rows of one graph collapse. On the study stack (norms unfused) flash2 runs the
 * torch norm and flash2+rmsnorm the fused one; flash1 and flash2 are two efficiency classes; at seq 2048
 * fused-softmax runs its fused kernel (32 heads x mb 1 a multiple of the stack's 4): none of these pairs is one
 * step. At seq 4096 on nemo fused-softmax is outside its kernel's range (seq <= 2048) and runs torch's softmax:
 * one step with torch. flash1 and flash1-legacy are one class: one step. */
START_TEST(test_attention_kernels_are_one_step_by_construction)
{
  const row_spec study[] = {
      {"10.0", "4.3", "30", "", "none", "flash2", "1"},
      {"10.0", "4.3", "30", "", "none", "flash2+rmsnorm", "1"},
      {"10.0", "4.3", "30", "", "none", "flash1", "1"},
      {"10.0", "4.3", "30", "", "none", "flash1-legacy", "1"},
  };
  g_autoptr(csv_table) rs = sweep_rank(table_on(study, 4, "study", "2048"));
  ck_assert_str_eq(at(rs, 0, "same_as"), "");
  ck_assert_str_eq(at(rs, 1, "same_as"), "");  /* flash2+rmsnorm: fused norms, flash2 not on study */
  ck_assert_str_eq(at(rs, 1, "rank"), "2");
  ck_assert_str_eq(at(rs, 2, "rank"), "3");     /* flash1: another class than flash2's */
  ck_assert_str_eq(at(rs, 3, "same_as"), "3");  /* flash1-legacy: flash1's class */
  const row_spec softmax[] = {{"12.0", "4.3", "30", "", "none", "torch", "1"},
                              {"12.0", "4.3", "30", "", "none", "fused-softmax", "1"}};
  g_autoptr(csv_table) rf = sweep_rank(table_on(softmax, 2, "nemo", "2048"));
  ck_assert_str_eq(at(rf, 1, "rank"), "2");
  g_autoptr(csv_table) rb = sweep_rank(table_on(softmax, 2, "nemo", "4096"));
  ck_assert_str_eq(at(rb, 1, "same_as"), "1");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rank");
  TCase *tc = tcase_create("rank");
  tcase_add_test(tc, test_ties_inside_the_combined_band_and_the_preferred_has_no_oom_risk);
  tcase_add_test(tc, test_the_best_is_preferred_without_risk_and_nothing_ties_without_bands);
  tcase_add_test(tc, test_a_tie_with_far_more_headroom_is_preferred);
  tcase_add_test(tc, test_equivalent_layouts_collapse_into_one_row);
  tcase_add_test(tc, test_a_chain_of_equivalent_layouts_collapses_into_one_row);
  tcase_add_test(tc, test_attention_kernels_are_one_step_by_construction);
  suite_add_tcase(s, tc);
  return check_run(s);
}
