/* test_validate -- the statistics of `layoutsim validate` against small
 * examples computed by hand (the formulas are written out in each test). */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <string.h>

#include "analysis/calibrate.h"
#include "analysis/calibrate_memory.h"
#include "analysis/simulate.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "sim_child.h"

START_TEST(test_mape_is_mean_of_absolute_relative_errors)
{
  double pred[] = {11, 18, 30}, meas[] = {10, 20, 30};
  /* |11-10|/10 = 0.10, |18-20|/20 = 0.10, 0 -> mean 0.0667 -> 6.667 % */
  ck_assert_double_eq_tol(val_mape_pct(pred, meas, 3), 100.0 * (0.1 + 0.1 + 0.0) / 3, 1e-12);
}
END_TEST

START_TEST(test_p90_interpolates_between_order_statistics)
{
  /* numpy.percentile([5,1,4,2,3], 90) = 1 + ... : sorted 1..5, pos 0.9*4 = 3.6 -> 4 + 0.6*(5-4) = 4.6 */
  double x[] = {5, 1, 4, 2, 3};
  ck_assert_double_eq_tol(val_percentile(x, 5, 0.9), 4.6, 1e-12);
  /* ten values 1..10: pos 0.9*9 = 8.1 -> 9 + 0.1*(10-9) = 9.1 */
  double y[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  ck_assert_double_eq_tol(val_percentile(y, 10, 0.9), 9.1, 1e-12);
  double one[] = {3.5};
  ck_assert_double_eq(val_percentile(one, 1, 0.9), 3.5);
}
END_TEST

START_TEST(test_ranks_share_mean_rank_on_ties)
{
  double x[] = {10, 20, 20, 5, 20};
  double r[5];
  val_ranks(x, 5, r);
  /* sorted: 5 (rank 1), 10 (rank 2), 20,20,20 (ranks 3,4,5 -> mean 4) */
  ck_assert_double_eq(r[0], 2);
  ck_assert_double_eq(r[1], 4);
  ck_assert_double_eq(r[2], 4);
  ck_assert_double_eq(r[3], 1);
  ck_assert_double_eq(r[4], 4);
}
END_TEST

START_TEST(test_spearman_without_ties_matches_one_minus_6d2)
{
  /* x ranks 1 2 3 4 5, y ranks 2 1 4 3 5: sum d^2 = 1+1+1+1+0 = 4 -> 1 - 6*4/(5*24) = 0.8 */
  double x[] = {1, 2, 3, 4, 5}, y[] = {20, 10, 40, 30, 50};
  ck_assert_double_eq_tol(val_spearman(x, y, 5), 1.0 - 6.0 * 4 / (5.0 * (25 - 1)), 1e-12);
  double rev[] = {5, 4, 3, 2, 1};
  ck_assert_double_eq_tol(val_spearman(x, rev, 5), -1.0, 1e-12);
}
END_TEST

START_TEST(test_spearman_with_ties_is_pearson_of_mean_ranks)
{
  /* x = 1 2 3 4, y = 1 2 2 3: ranks y = 1, 2.5, 2.5, 4 (mean 2.5), ranks x mean 2.5.
   * dx = -1.5 -0.5 0.5 1.5, dy = -1.5 0 0 1.5: sxy = 2.25+0+0+2.25 = 4.5,
   * sxx = 5, syy = 4.5 -> r = 4.5 / sqrt(5 * 4.5) = 0.9487 */
  double x[] = {1, 2, 3, 4}, y[] = {1, 2, 2, 3};
  ck_assert_double_eq_tol(val_spearman(x, y, 4), 4.5 / sqrt(5.0 * 4.5), 1e-12);
  double c[] = {7, 7, 7, 7};
  ck_assert(isnan(val_spearman(x, c, 4)));
  ck_assert(isnan(val_spearman(x, y, 1)));
}
END_TEST

static val_row row(const char *setting, const char *label, meas_status m, double ms, pred_status p, double ps)
{
  val_row v = {.meas = m, .meas_step_s = ms, .pred = p, .pred_step_s = ps};
  g_strlcpy(v.setting, setting, sizeof v.setting);
  g_strlcpy(v.label, label, sizeof v.label);
  return v;
}

START_TEST(test_summary_counts_oom_accuracy_timed_rows_and_best_layout)
{
  val_row rows[] = {
      row("A", "a1", MEAS_OK, 10, PRED_OK, 11),   /* timed, +10% */
      row("A", "a2", MEAS_OK, 20, PRED_OK, 18),   /* timed, -10% */
      row("A", "a3", MEAS_OOM, NAN, PRED_OK, 9),  /* OOM label wrong; predicted best but measured OOM */
      row("A", "a4", MEAS_OTHER, NAN, PRED_OOM, 5), /* not labelled */
      row("B", "b1", MEAS_OK, 30, PRED_OK, 30),   /* timed, 0% */
      row("B", "b2", MEAS_OOM, NAN, PRED_OOM, 1), /* OOM label right */
      row("B", "b3", MEAS_OK, 40, PRED_OOM, 2),   /* label wrong, not timed */
  };
  g_autoptr(GArray) st = val_summarize(rows, 7);
  ck_assert_uint_eq(st->len, 3);
  val_stats *a = &g_array_index(st, val_stats, 0), *b = &g_array_index(st, val_stats, 1),
            *t = &g_array_index(st, val_stats, 2);
  ck_assert_str_eq(a->setting, "A");
  ck_assert_int_eq(a->rows, 4);
  ck_assert_int_eq(a->labelled, 3);
  ck_assert_int_eq(a->oom_correct, 2);
  ck_assert_int_eq(a->timed, 2);
  ck_assert_double_eq_tol(a->mape_pct, 10.0, 1e-9);
  ck_assert_double_eq_tol(a->mean_signed_pct, 0.0, 1e-9);
  ck_assert_double_eq_tol(a->spearman, 1.0, 1e-12);
  ck_assert_int_eq(a->best_row_meas, 0);
  ck_assert_int_eq(a->best_row_pred, 2);
  ck_assert(!a->best_match);
  ck_assert_int_eq(b->labelled, 3);
  ck_assert_int_eq(b->oom_correct, 2);
  ck_assert_int_eq(b->timed, 1);
  ck_assert(b->best_match); /* b1 is the only row measured ok... b3 too, but 40 > 30; b1 the only predicted ok */
  ck_assert_str_eq(t->setting, "total");
  ck_assert_int_eq(t->rows, 7);
  ck_assert_int_eq(t->timed, 3);
  ck_assert_double_eq_tol(t->mape_pct, 100.0 * (0.1 + 0.1 + 0) / 3, 1e-9);
  ck_assert_int_eq(t->settings, 2);
  ck_assert_int_eq(t->settings_best_match, 1);
  ck_assert_double_eq_tol(t->spearman_min, 1.0, 1e-12); /* B has one timed row: no Spearman */
}
END_TEST

START_TEST(test_fast_mode_extrapolation_is_affine)
{
  /* T(m) = 3 + 0.5 m: from m1 = 8 (7.0) and m2 = 12 (9.0), T(128) = 67 */
  ck_assert_double_eq_tol(calib_extrapolate(7.0, 8, 9.0, 12, 128), 3 + 0.5 * 128, 1e-12);
  int m1, m2;
  ck_assert(calib_fast_counts(4, 128, &m1, &m2));
  ck_assert_int_lt(m1, m2);
  ck_assert_int_lt(m2, 128);
  ck_assert_int_gt(m1, 4); /* past the warm-up: every stage in its steady period */
  ck_assert(!calib_fast_counts(8, 16, &m1, &m2)); /* m2 = 10: less than 2x to gain */ /* too few micro-batches to gain */
}
END_TEST

START_TEST(test_memory_fit_takes_midpoint_of_lowest_best_interval)
{
  /* ran at limits 0.20, 0.25; oom at 0.10, 0.15, 0.22. Agreement over [0.05, 0.30]:
   * (.05,.10) 2, (.10,.15) 3, (.15,.20) 4, (.20,.22) 3, (.22,.25) 4, (.25,.30) 3:
   * two best intervals; the lower one wins (it also misses no run that ran; the upper one misses
   * the run at 0.20, which counts twice) */
  const calmem_row rows[] = {{TRUE, 0.20}, {TRUE, 0.25}, {FALSE, 0.10}, {FALSE, 0.15}, {FALSE, 0.22}};
  calmem_fit f;
  calmem_choose(rows, 5, 0.05, 0.30, NAN, &f);
  ck_assert_double_eq_tol(f.lo, 0.15, 1e-12);
  ck_assert_double_eq_tol(f.hi, 0.20, 1e-12);
  ck_assert_double_eq_tol(f.fragmentation, 0.175, 1e-12);
  ck_assert_int_eq(f.agree, 4);
  ck_assert_int_eq(f.ran, 2);
  ck_assert_int_eq(f.ran_pred_oom, 0);
  ck_assert_int_eq(f.oom_pred_ok, 1);
  /* limits outside the range: one interval, its midpoint */
  const calmem_row far[] = {{TRUE, 5.0}, {FALSE, -1.0}};
  calmem_choose(far, 2, 0.05, 0.30, NAN, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.175, 1e-12);
  ck_assert_int_eq(f.agree, 2);
}
END_TEST

START_TEST(test_append_row_maps_columns_by_name)
{
  static const char *const src_cols[] = {"b", "a", "extra"}, *const dst_cols[] = {"a", "b", "c"};
  g_autoptr(csv_table) src = csv_new(src_cols, 3), dst = csv_new(dst_cols, 3);
  GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(row, g_strdup("B"));
  g_ptr_array_add(row, g_strdup("A"));
  g_ptr_array_add(row, g_strdup("X"));
  g_ptr_array_add(src->rows, row);
  ck_assert_uint_eq(csv_append_row_from(dst, src, 0), 0);
  ck_assert_uint_eq(csv_append_row_from(dst, src, 0), 1);
  ck_assert_str_eq(csv_cell(dst, 1, 0), "A");
  ck_assert_str_eq(csv_cell(dst, 1, 1), "B");
  ck_assert_str_eq(csv_cell(dst, 1, 2), ""); /* src has no column c */
}
END_TEST

/* A table row with the optional `partition` column: a value overrides the command's method, an
 * empty cell keeps it, a bad value is the row's error naming the field and the allowed values. */
START_TEST(test_partition_column_overrides_the_command_default)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "partition"};
  g_autoptr(csv_table) t = csv_new(cols, G_N_ELEMENTS(cols));
  const char *cells[][12] = {
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", "uniform"},
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", ""},
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", "greedy"},
  };
  for (guint r = 0; r < G_N_ELEMENTS(cells); r++) {
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    for (guint c = 0; c < G_N_ELEMENTS(cols); c++) g_ptr_array_add(row, g_strdup(cells[r][c]));
    g_ptr_array_add(t->rows, row);
  }
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  cfg.gen.partition = PARTITION_BALANCED;
  sim_request rq;
  GError *err = NULL;
  ck_assert(predict_row_request(t, 0, &cfg, &rq, &err));
  ck_assert_int_eq(rq.gen.partition, PARTITION_UNIFORM);
  ck_assert(predict_row_request(t, 1, &cfg, &rq, &err));
  ck_assert_int_eq(rq.gen.partition, PARTITION_BALANCED);
  ck_assert(!predict_row_request(t, 2, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "partition"));
  ck_assert_ptr_nonnull(strstr(err->message, "allowed: auto, balanced, uniform"));
  g_error_free(err);
}
END_TEST

/* n - 1 rows that ran at any fragmentation and one oom row with limit 0.26; prior 0.15, range 0.25.
 * Interval (0.05, 0.26) holds the prior: objective 1/n. Interval (0.26, 0.30): all agree, midpoint
 * 0.28: 0.05 ((0.28 - 0.15) / 0.25)^2 = 0.01352. n = 100: 0.01 < 0.01352, the prior's interval wins
 * at f = 0.15; n = 50: 0.02 > 0.01352, the data win at 0.28. */
START_TEST(test_memory_fit_prior_decides_only_where_the_labels_are_nearly_silent)
{
  calmem_row rows[100];
  for (int i = 0; i < 100; i++) rows[i] = (calmem_row){TRUE, 5.0};
  rows[0] = (calmem_row){FALSE, 0.26};
  calmem_fit f;
  calmem_choose(rows, 100, 0.05, 0.30, 0.15, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.15, 1e-12);
  ck_assert_double_eq_tol(f.hi, 0.26, 1e-12);
  ck_assert_int_eq(f.agree, 99);
  calmem_choose(rows, 50, 0.05, 0.30, 0.15, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.28, 1e-12);
  ck_assert_int_eq(f.agree, 50);
  calmem_choose(rows, 100, 0.05, 0.30, NAN, &f); /* no prior: the data alone */
  ck_assert_double_eq_tol(f.fragmentation, 0.28, 1e-12);
}
END_TEST

/* A run that ran but is predicted oom counts twice. Ran at 0.20; oom at 0.22 and 0.24; no prior.
 * Weighted misses: (0.05, 0.20) the two oom rows fit: 2; (0.20, 0.22) 2 + 2 = 4; (0.22, 0.24)
 * 2 + 1 = 3; (0.24, 0.30) the run does not fit: 2. Tie at 2: the lower interval, midpoint 0.125
 * (counted once, the upper interval would win with 1 miss against 2). */
START_TEST(test_memory_fit_counts_a_hidden_runnable_layout_twice)
{
  const calmem_row rows[] = {{TRUE, 0.20}, {FALSE, 0.22}, {FALSE, 0.24}};
  calmem_fit f;
  calmem_choose(rows, 3, 0.05, 0.30, NAN, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.125, 1e-12);
  ck_assert_int_eq(f.agree, 1);
  ck_assert_int_eq(f.oom_pred_ok, 2);
  ck_assert_int_eq(f.ran_pred_oom, 0);
}
END_TEST

/* The prior sitting on a limit or outside the range: a row fits at f <= its limit, so a prior equal
 * to the limit 0.15 belongs to (0.05, 0.15]; a prior of 0.5 is taken as the range's end 0.30. */
START_TEST(test_memory_fit_prior_on_a_limit_or_outside_the_range)
{
  const calmem_row rows[] = {{TRUE, 0.15}, {TRUE, 5.0}};
  calmem_fit f;
  calmem_choose(rows, 2, 0.05, 0.30, 0.15, &f); /* (0.05, 0.15]: no miss, at the prior */
  ck_assert_double_eq_tol(f.fragmentation, 0.15, 1e-12);
  ck_assert_int_eq(f.agree, 2);
  const calmem_row all_ran[] = {{TRUE, 5.0}};
  calmem_choose(all_ran, 1, 0.05, 0.30, 0.5, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.30, 1e-12);
  calmem_choose(all_ran, 1, 0.05, 0.30, 0.05, &f);
  ck_assert_double_eq_tol(f.fragmentation, 0.05, 1e-12);
}
END_TEST

/* llama-7b, 8 GPUs, tp 1 pp 2, mb 1: out[0] fragmentation limit, out[1] oom, out[2] peak GiB. */
static void limit_child(void *arg, double out[SIM_CHILD_MAX])
{
  const double *frag = arg;
  sim_request rq = {0};
  GError *err = NULL;
  if (!model_load_named("llama-7b", &rq.m, &err) || !profile_load_named("a100-sxm4-80gb", &rq.prof, &err)) _exit(3);
  rq.prof.fragmentation = *frag;
  rq.l = layout_default();
  rq.l.gpus = 8;
  rq.l.pp = 2;
  rq.l.tp = 1;
  rq.l.micro_batch = 1;
  rq.l.global_batch = 4 * 4;
  rq.gen = gen_default_options();
  rq.gen.gpus_per_node = rq.prof.gpus_per_node;
  rq.capacity_gib = 40; /* the 40 GB A100: llama-7b at dp 4 is near it */
  sim_outcome o = {0};
  if (!sim_run_layout(&rq, &o, &err)) _exit(4);
  out[0] = o.met->mem_fragmentation_limit;
  out[1] = o.met->oom;
  out[2] = o.met->mem_peak_bytes / (1024.0 * 1024.0 * 1024.0);
  sim_outcome_clear(&o);
}

START_TEST(test_fragmentation_limit_is_where_the_verdict_flips)
{
  double f0 = 0.15, r0[SIM_CHILD_MAX], below[SIM_CHILD_MAX], above[SIM_CHILD_MAX];
  sim_child_run(limit_child, &f0, r0);
  double limit = r0[0];
  ck_assert_msg(limit > -1 && limit < 10, "limit %g", limit);
  double lo = limit - 1e-6, hi = limit + 1e-6;
  sim_child_run(limit_child, &lo, below);
  sim_child_run(limit_child, &hi, above);
  ck_assert_double_eq_tol(below[0], limit, 1e-9); /* the limit does not depend on the profile's value */
  ck_assert(below[1] == 0);
  ck_assert(above[1] == 1);
  ck_assert_double_eq_tol(below[2], 40.0, 1e-3); /* at the limit the peak is the capacity */
}
END_TEST

Suite *validate_suite(void)
{
  Suite *s = suite_create("validate");
  TCase *tc = tcase_create("statistics");
  tcase_add_test(tc, test_mape_is_mean_of_absolute_relative_errors);
  tcase_add_test(tc, test_p90_interpolates_between_order_statistics);
  tcase_add_test(tc, test_ranks_share_mean_rank_on_ties);
  tcase_add_test(tc, test_spearman_without_ties_matches_one_minus_6d2);
  tcase_add_test(tc, test_spearman_with_ties_is_pearson_of_mean_ranks);
  tcase_add_test(tc, test_summary_counts_oom_accuracy_timed_rows_and_best_layout);
  tcase_add_test(tc, test_fast_mode_extrapolation_is_affine);
  tcase_add_test(tc, test_memory_fit_takes_midpoint_of_lowest_best_interval);
  tcase_add_test(tc, test_memory_fit_prior_decides_only_where_the_labels_are_nearly_silent);
  tcase_add_test(tc, test_memory_fit_counts_a_hidden_runnable_layout_twice);
  tcase_add_test(tc, test_memory_fit_prior_on_a_limit_or_outside_the_range);
  tcase_add_test(tc, test_fragmentation_limit_is_where_the_verdict_flips);
  tcase_add_test(tc, test_partition_column_overrides_the_command_default);
  tcase_add_test(tc, test_append_row_maps_columns_by_name);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(validate_suite()); }
