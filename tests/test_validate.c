/* test_validate -- the statistics of `layoutsim validate` against small
 * examples computed by hand (the formulas are written out in each test). */
#include <check.h>

#include "check_main.h"
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "analysis/calibrate.h"
#include "analysis/calibrate_memory.h"
#include "analysis/simulate.h"
#include "analysis/predict.h"
#include "platforms/stack.h"
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
  ck_assert_int_eq(t->settings_compared, 2);
  ck_assert_int_eq(t->settings_best_match, 1);
  ck_assert_double_eq_tol(t->spearman_min, 1.0, 1e-12); /* B has one timed row: no Spearman */
}
END_TEST

/* A setting with no row measured ok (or none predicted ok) has no best layout to compare: it is
 * neither a match nor a miss, and the text shows "-" and "n/a", never nan. */
START_TEST(test_a_setting_without_a_comparison_is_not_a_miss)
{
  val_row rows[] = {
      row("A", "a1", MEAS_OK, 10, PRED_OK, 11),
      row("C", "c1", MEAS_OOM, NAN, PRED_OK, 5), /* the only row predicted ok */
      row("C", "c2", MEAS_OK, 7, PRED_OOM, 1),   /* the only row measured ok: compared, a miss */
      row("D", "d1", MEAS_OOM, NAN, PRED_OOM, 1), /* neither: nothing to compare */
  };
  g_autoptr(GArray) st = val_summarize(rows, 4);
  const val_stats *a = &g_array_index(st, val_stats, 0), *c = &g_array_index(st, val_stats, 1),
                  *d = &g_array_index(st, val_stats, 2), *t = &g_array_index(st, val_stats, 3);
  ck_assert(a->best_compared && a->best_match);
  ck_assert(c->best_compared && !c->best_match); /* measured best c2, predicted best c1 */
  ck_assert(!d->best_compared && !d->best_match);
  ck_assert_int_eq(t->settings, 3);
  ck_assert_int_eq(t->settings_compared, 2);
  ck_assert_int_eq(t->settings_best_match, 1);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  val_print_text(f, st, rows);
  fclose(f);
  ck_assert_ptr_null(strstr(text, "nan"));
  ck_assert_ptr_nonnull(strstr(text, "n/a - | -"));
  ck_assert_ptr_nonnull(strstr(text, "best matches in 1 of 2 settings (1 without a row measured ok and one predicted ok)"));
  free(text);
}
END_TEST

START_TEST(test_fast_mode_extrapolation_is_affine)
{
  /* T(m) = 3 + 0.5 m: from m1 = 8 (7.0) and m2 = 12 (9.0), T(128) = 67 */
  ck_assert_double_eq_tol(pool_extrapolate(7.0, 8, 9.0, 12, 128), 3 + 0.5 * 128, 1e-12);
  int m1, m2;
  ck_assert(pool_fast_counts(POOL_AUTO, 4, 128, &m1, &m2));
  ck_assert_int_lt(m1, m2);
  ck_assert_int_lt(m2, 128);
  ck_assert_int_ge(m1, 4); /* m1 = pp: every stage with its whole 1F1B shape */
  ck_assert(!pool_fast_counts(POOL_AUTO, 8, 16, &m1, &m2)); /* m2 = 9: less than 2x to gain */
  /* auto: where the runs at m1, m2 and 2 m2 replay fewer micro-batches than the step: pp 4, 4 + 5 + 10 = 19 */
  ck_assert(!pool_fast_counts(POOL_AUTO, 4, 4 + 5 + 2 * 5, &m1, &m2));
  ck_assert(pool_fast_counts(POOL_AUTO, 4, 4 + 5 + 2 * 5 + 1, &m1, &m2));
  ck_assert(pool_fast_counts(POOL_FAST, 8, 16, &m1, &m2));  /* fast: wherever m > m2 */
  ck_assert(!pool_fast_counts(POOL_FAST, 8, 9, &m1, &m2)); /* m = m2: nothing to extrapolate */
  ck_assert(!pool_fast_counts(POOL_FULL, 4, 128, &m1, &m2));
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
  csv_append_row(src, row, 7);
  ck_assert_uint_eq(csv_append_row_from(dst, src, 0), 0);
  ck_assert_uint_eq(csv_append_row_from(dst, src, 0), 1);
  ck_assert_str_eq(csv_cell(dst, 1, 0), "A");
  ck_assert_str_eq(csv_cell(dst, 1, 1), "B");
  ck_assert_str_eq(csv_cell(dst, 1, 2), ""); /* src has no column c */
  ck_assert_uint_eq(csv_row_line(dst, 1), 7); /* messages about the copy name the source line */
}
END_TEST

/* A table of n_rows rows of n_cols cells each (cells row by row). */
static csv_table *table_of(const char *const *cols, guint n_cols, const char *const *cells, guint n_rows)
{
  csv_table *t = csv_new(cols, n_cols);
  for (guint r = 0; r < n_rows; r++) {
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    for (guint c = 0; c < n_cols; c++) g_ptr_array_add(row, g_strdup(cells[r * n_cols + c]));
    csv_append_row(t, row, r + 2);
  }
  return t;
}

/* A table row with the optional `partition` column: a value overrides the command's method, an
 * empty cell keeps it, a bad value is the row's error naming the field and the allowed values. */
START_TEST(test_partition_column_overrides_the_command_default)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "partition"};
  const char *cells[][12] = {
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", "uniform"},
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", ""},
      {"llama-13b", "2048", "64", "128000", "16", "none", "flash2", "1", "1", "2", "0", "greedy"},
  };
  g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells[0], G_N_ELEMENTS(cells));
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

/* A table's zero, overlap_grad_reduce and overlap_param_gather columns are the row's (empty: the stack's, the
 * study's ZeRO-1, nothing overlapped), never ignored; bad values are refused naming the column and what is allowed. */
START_TEST(test_zero_and_overlap_columns_are_the_rows_own)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "zero",
                                     "overlap_grad_reduce", "overlap_param_gather"};
  const char *cells[][14] = {
      {"llama-7b", "1024", "32", "128000", "16", "none", "flash2", "1", "1", "1", "0", "3", "1", ""},
      {"llama-7b", "1024", "32", "128000", "16", "none", "flash2", "1", "1", "1", "0", "", "", "1"},
      {"llama-7b", "1024", "32", "128000", "16", "none", "flash2", "1", "1", "1", "0", "4", "", ""},
      {"llama-7b", "1024", "32", "128000", "16", "none", "flash2", "1", "1", "1", "0", "", "2", ""},
  };
  g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells[0], G_N_ELEMENTS(cells));
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  ck_assert(stack_load_named("study", &cfg.prof.stack, NULL));
  sim_request rq;
  GError *err = NULL;
  ck_assert(predict_row_request(t, 0, &cfg, &rq, &err));
  ck_assert_int_eq(rq.l.zero, 3);
  ck_assert(rq.l.overlap_grad_reduce && !rq.l.overlap_param_gather);
  ck_assert(predict_row_request(t, 1, &cfg, &rq, &err));
  ck_assert_int_eq(rq.l.zero, 1);
  ck_assert(!rq.l.overlap_grad_reduce && rq.l.overlap_param_gather);
  ck_assert(!predict_row_request(t, 2, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "zero: '4'"));
  ck_assert_ptr_nonnull(strstr(err->message, "allowed: 0, 1, 2, 3"));
  g_clear_error(&err);
  ck_assert(!predict_row_request(t, 3, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "overlap_grad_reduce: '2'"));
  ck_assert_ptr_nonnull(strstr(err->message, "allowed: 0, 1"));
  g_error_free(err);
}
END_TEST

/* A table's moe_capacity_factor column is the row's capacity factor (docs/moe.md; empty: the model's, dropless for
 * the shipped ones); a bad value is refused naming the column and what is allowed. */
START_TEST(test_moe_capacity_factor_column_is_the_rows_own)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "ep",
                                     "moe_capacity_factor"};
  const char *cells[][13] = {
      {"qwen3-30b-a3b", "4096", "64", "151936", "8", "none", "flash2", "1", "1", "1", "0", "8", "1.25"},
      {"qwen3-30b-a3b", "4096", "64", "151936", "8", "none", "flash2", "1", "1", "1", "0", "8", ""},
      {"qwen3-30b-a3b", "4096", "64", "151936", "8", "none", "flash2", "1", "1", "1", "0", "8", "0"},
  };
  g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells[0], G_N_ELEMENTS(cells));
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  ck_assert(stack_load_named("nemo", &cfg.prof.stack, NULL));
  sim_request rq;
  GError *err = NULL;
  ck_assert(predict_row_request(t, 0, &cfg, &rq, &err));
  ck_assert_double_eq(rq.l.moe_capacity_factor, 1.25);
  ck_assert(predict_row_request(t, 1, &cfg, &rq, &err));
  ck_assert_double_eq(rq.l.moe_capacity_factor, 0);
  ck_assert(!predict_row_request(t, 2, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "moe_capacity_factor: '0'"));
  ck_assert_ptr_nonnull(strstr(err->message, "allowed: a number above 0 up to 64"));
  g_error_free(err);
}
END_TEST

/* A temporary file holding the first len bytes of text (len < 0: up to its NUL); caller unlinks, frees. */
static char *tmp_file(const char *text, gssize len)
{
  GError *err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("lsim-test-XXXXXX.csv", &path, &err);
  ck_assert_msg(fd >= 0, "tmp file: %s", err ? err->message : "?");
  close(fd);
  ck_assert(g_file_set_contents(path, text, len, &err));
  return path;
}

/* csv_read of `text` (len bytes, -1: a string) fails with exactly "TMPFILE" + `after_path`. */
static void assert_csv_refused(const char *text, gssize len, const char *after_path)
{
  g_autofree char *path = tmp_file(text, len);
  GError *err = NULL;
  ck_assert_ptr_null(csv_read(path, &err));
  g_autofree char *want = g_strconcat(path, after_path, NULL);
  ck_assert_str_eq(err->message, want);
  g_error_free(err);
  g_unlink(path);
}

/* The rest of a file after a NUL byte would vanish unseen (the parser stops at the NUL): refused, naming
 * the line. */
START_TEST(test_csv_read_refuses_a_nul_byte_naming_its_line)
{
  static const char text[] = "a,b\n1,2\n3,4\0\n5,6\n"; /* without the check: rows 1,2 and 3,4 only */
  assert_csv_refused(text, sizeof text - 1, " line 3: contains a NUL byte");
}
END_TEST

/* A quote that is never closed would swallow the rest of the file into one cell: refused, naming the
 * line the cell starts on (header or row). */
START_TEST(test_csv_read_refuses_an_unclosed_quote_naming_its_line)
{
  assert_csv_refused("a,b\n1,2\n\"3,4\n5,6\n", -1,
                     " line 3: a quoted cell is not closed (allowed: a '\"' that opens a cell, and one that ends it)");
  assert_csv_refused("\"a,b\n1,2\n", -1,
                     " line 1: a quoted cell is not closed (allowed: a '\"' that opens a cell, and one that ends it)");
}
END_TEST

/* Each row keeps the file line it starts on: blank lines (skipped) and line breaks inside quoted
 * cells count, as do \r\n (one line end) and a lone \r; a bad row's error names its line. */
START_TEST(test_csv_read_keeps_each_rows_file_line)
{
  g_autofree char *path = tmp_file("a,b\n\n\n1,2\n\"x\ny\",3\r\n\r\n4,5\r6,7\n\n", -1);
  GError *err = NULL;
  g_autoptr(csv_table) t = csv_read(path, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(t->rows->len, 4);
  const guint want[] = {4, 5, 8, 9};
  for (guint r = 0; r < 4; r++) ck_assert_uint_eq(csv_row_line(t, r), want[r]);
  ck_assert_str_eq(csv_cell(t, 1, 0), "x\ny");
  ck_assert_str_eq(csv_cell(t, 3, 1), "7");
  g_unlink(path);
  assert_csv_refused("a,b\n\n\"x\n\n\",1\n\n2\n", -1, " line 7: 1 fields, the header has 2");
}
END_TEST

/* A column named twice would be read from its first place only: refused, naming file and column.
 * Unnamed columns (trailing commas) are only passed through and may repeat. */
START_TEST(test_csv_read_refuses_a_column_named_twice)
{
  assert_csv_refused("model,tp,pp,tp\nllama-7b,1,2,4\n", -1,
                     ": column 'tp' appears more than once in the header (each column may appear once)");
  GError *err = NULL;
  g_autofree char *unnamed = tmp_file("model,tp,,\nllama-7b,1,,\n", -1);
  g_autoptr(csv_table) t = csv_read(unnamed, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(t->header->len, 4);
  g_unlink(unnamed);
}
END_TEST

/* The header is the first line: a blank one is named as such (it was read as a header of one empty
 * column: "line 2: 11 fields, the header has 1"). */
START_TEST(test_csv_read_refuses_a_blank_header_line)
{
  static const char *const WANT =
      " line 1: the header line is blank (allowed: the column names, comma-separated, on the first line)";
  assert_csv_refused("\nmodel,tp\nllama-7b,1\n", -1, WANT);
  assert_csv_refused(" \r\nmodel,tp\nllama-7b,1\n", -1, WANT);
  assert_csv_refused("\xEF\xBB\xBF\nmodel,tp\n", -1, WANT);
}
END_TEST

START_TEST(test_csv_read_skips_a_utf8_bom)
{
  g_autofree char *path = tmp_file("\xEF\xBB\xBFmodel,seq_len\nllama-7b,1024\n", -1);
  GError *err = NULL;
  g_autoptr(csv_table) t = csv_read(path, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_int_eq(csv_column(t, "model"), 0);
  ck_assert_uint_eq(t->rows->len, 1);
  ck_assert_str_eq(csv_cell(t, 0, 0), "llama-7b");
  g_unlink(path);
}
END_TEST

/* What csv_format writes reads back as the same table (predict -o writes its input's cells so): a
 * one-column header keeps its blanks (the blank-header check stripped the name in place), and a first
 * name that begins with a byte-order mark keeps it (quoted: the reader skips the file's own mark).
 * Both were found by tests/fuzz/fuzz_table.c. */
START_TEST(test_csv_format_reads_back_as_the_same_table)
{
  static const char *const texts[] = {"\x0c\xEF\xBB\xBF\n", " model \nx\n", "\xEF\xBB\xBF\xEF\xBB\xBF\x61,b\n1,2\n",
                                      "a,\"b,\"\"c\"\"\"\n\"x\ny\",\r\n"};
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
    g_autofree char *path = tmp_file(texts[i], -1);
    GError *err = NULL;
    g_autoptr(csv_table) t = csv_read(path, &err);
    ck_assert_msg(t != NULL, "text %zu: %s", i, err ? err->message : "");
    g_autoptr(GString) out = g_string_new(NULL);
    csv_format(t, out);
    g_autofree char *again = tmp_file(out->str, (gssize)out->len);
    g_autoptr(csv_table) back = csv_read(again, &err);
    ck_assert_msg(back != NULL, "text %zu: %s", i, err ? err->message : "");
    ck_assert_uint_eq(back->header->len, t->header->len);
    ck_assert_uint_eq(back->rows->len, t->rows->len);
    for (guint c = 0; c < t->header->len; c++) {
      ck_assert_str_eq(back->header->pdata[c], t->header->pdata[c]);
      for (guint r = 0; r < t->rows->len; r++) ck_assert_str_eq(csv_cell(back, r, (int)c), csv_cell(t, r, (int)c));
    }
    g_unlink(path);
    g_unlink(again);
  }
}
END_TEST

/* status is one of ok, oom, error, unavailable; an ok row needs a finite step time > 0 written plainly. */
START_TEST(test_measured_row_needs_a_known_status_and_a_finite_positive_time_when_ok)
{
  static const char *const cols[] = {"status", "step_time_s"};
  static const char *const good[] = {"ok", "31.0", "ok", "2.5e-1", "oom", "", "error", "x", "unavailable", ""};
  g_autoptr(csv_table) g = table_of(cols, 2, good, 5);
  const double want[] = {31.0, 0.25, NAN, NAN, NAN};
  for (guint r = 0; r < 5; r++) {
    double v = 0;
    GError *err = NULL;
    ck_assert_msg(val_measured_row(g, r, &v, &err), "row %u: %s", r, err ? err->message : "");
    ck_assert(isnan(want[r]) ? isnan(v) : v == want[r]);
  }
  static const char *const times[] = {"inf", "nan", "1e999", "-inf", "0", "-3", "", "abc", " 16", "+4", "16 ", "0x10"};
  for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
    const char *cells[] = {"ok", times[i]};
    g_autoptr(csv_table) t = table_of(cols, 2, cells, 1);
    double v;
    GError *err = NULL;
    ck_assert_msg(!val_measured_row(t, 0, &v, &err), "'%s' accepted", times[i]);
    g_autofree char *msg = g_strdup_printf("step_time_s: '%s' on a row measured ok (allowed: a finite number of seconds > 0)",
                                           times[i]);
    ck_assert_str_eq(err->message, msg);
    g_error_free(err);
  }
  static const char *const bad_status[] = {"OK", "banana", ""};
  for (guint i = 0; i < G_N_ELEMENTS(bad_status); i++) {
    const char *cells[] = {bad_status[i], "31.0"};
    g_autoptr(csv_table) t = table_of(cols, 2, cells, 1);
    double v;
    GError *err = NULL;
    ck_assert(!val_measured_row(t, 0, &v, &err));
    g_autofree char *msg = g_strdup_printf("status: unknown '%s' (allowed: ok, oom, error, unavailable)", bad_status[i]);
    ck_assert_str_eq(err->message, msg);
    g_error_free(err);
  }
}
END_TEST

#define MEASURED_HEADER "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp,status,step_time_s\n"
#define SMALL_LAYOUT "llama-7b,1024,16,32000,8,none,flash2,1,1,4,0"

static predict_cfg small_cfg(void)
{
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80, .pool = {.jobs = 2, .prune_oom = TRUE}};
  GError *err = NULL;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &cfg.prof, &err));
  cfg.gen.gpus_per_node = cfg.prof.gpus_per_node;
  return cfg;
}

/* validate: a row with an infinite time or an unknown status is reported and left out; the
 * statistics are those of the good row alone (finite, where inf made them NaN). */
START_TEST(test_validate_leaves_out_rows_with_a_bad_measurement)
{
  g_autofree char *path =
      tmp_file(MEASURED_HEADER SMALL_LAYOUT ",ok,1.0\n" SMALL_LAYOUT ",ok,inf\n" SMALL_LAYOUT ",banana,1.0\n", -1);
  predict_cfg cfg = small_cfg();
  GError *err = NULL;
  const char *paths[] = {path};
  g_autoptr(GArray) rows = val_predict_files(paths, 1, &cfg, &err);
  ck_assert_msg(rows != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(rows->len, 3);
  const val_row *v = (const val_row *)rows->data;
  ck_assert_str_eq(v[0].invalid, "");
  ck_assert_int_eq(v[0].pred, PRED_OK);
  g_autofree char *inf = g_strdup_printf(
      "%s line 3: step_time_s: 'inf' on a row measured ok (allowed: a finite number of seconds > 0)", path);
  g_autofree char *banana =
      g_strdup_printf("%s line 4: status: unknown 'banana' (allowed: ok, oom, error, unavailable)", path);
  ck_assert_str_eq(v[1].invalid, inf);
  ck_assert_str_eq(v[2].invalid, banana);
  g_autoptr(GArray) st = val_summarize(v, 3);
  const val_stats *total = &g_array_index(st, val_stats, st->len - 1);
  ck_assert_int_eq(total->timed, 1);
  ck_assert_int_eq(total->labelled, 1);
  /* one timed row: MAPE is its own |pred - 1.0| / 1.0 */
  ck_assert_double_eq_tol(total->mape_pct, 100.0 * fabs(v[0].pred_step_s - 1.0), 1e-9);
  /* the per-row table says why a row is out */
  g_autofree char *out = g_strconcat(path, ".rows.csv", NULL);
  ck_assert(val_write_rows(out, v, 3, &err));
  g_autoptr(csv_table) t = csv_read(out, &err);
  ck_assert_ptr_nonnull(t);
  int c = csv_column(t, "left_out");
  ck_assert_int_ge(c, 0);
  ck_assert_str_eq(csv_cell(t, 0, c), "");
  ck_assert_str_eq(csv_cell(t, 1, c), inf);
  ck_assert_str_eq(csv_cell(t, 2, c), banana);
  g_unlink(out);
  g_unlink(path);
}
END_TEST

/* calibrate stops at a bad measured row, naming file, row and field (no profile is fitted): the timing
 * fit at a non-finite time, the memory fit (which reads only the labels) at an unknown status. */
START_TEST(test_calibrate_stops_at_a_bad_measured_row)
{
  g_autofree char *path = tmp_file(MEASURED_HEADER SMALL_LAYOUT ",ok,1.0\n" SMALL_LAYOUT ",ok,1e999\n", -1);
  g_autofree char *path2 = tmp_file(MEASURED_HEADER SMALL_LAYOUT ",ok,1.0\n" SMALL_LAYOUT ",banana,\n", -1);
  calib_cfg cc = {.pred = small_cfg(), .max_evals = 2, .fast = TRUE};
  const char *paths[] = {path}, *paths2[] = {path2};
  g_autofree char *want = g_strdup_printf(
      "%s line 3: step_time_s: '1e999' on a row measured ok (allowed: a finite number of seconds > 0)", path);
  g_autofree char *want2 =
      g_strdup_printf("%s line 3: status: unknown 'banana' (allowed: ok, oom, error, unavailable)", path2);
  gpu_profile fitted;
  GError *err = NULL;
  ck_assert(!calib_run(paths, 1, &cc, &fitted, &err));
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  calmem_fit mf;
  ck_assert(!calmem_run(paths2, 1, &cc.pred, NULL, &mf, &err));
  ck_assert_str_eq(err->message, want2);
  g_clear_error(&err);
  g_unlink(path);
  g_unlink(path2);
}
END_TEST

/* After blank lines, validate, the fits' pre-check and the memory fit name a bad row by its file
 * line (here line 6, the third data row counting blank lines; not "row 3"). */
START_TEST(test_row_messages_name_the_file_line_after_blank_lines)
{
  g_autofree char *path = tmp_file(MEASURED_HEADER "\n\n" SMALL_LAYOUT ",ok,1.0\n\n" SMALL_LAYOUT ",banana,-1\n", -1);
  g_autofree char *want =
      g_strdup_printf("%s line 6: status: unknown 'banana' (allowed: ok, oom, error, unavailable)", path);
  predict_cfg cfg = small_cfg();
  const char *paths[] = {path};
  GError *err = NULL;
  g_autoptr(GArray) rows = val_predict_files(paths, 1, &cfg, &err);
  ck_assert_msg(rows != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(rows->len, 2);
  ck_assert_str_eq(g_array_index(rows, val_row, 1).invalid, want);
  ck_assert(!calib_check_tables(paths, 1, &cfg, FALSE, &err));
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  calmem_fit mf;
  ck_assert(!calmem_run(paths, 1, &cfg, NULL, &mf, &err));
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  g_unlink(path);
}
END_TEST

/* time_fit no: the timing fit leaves the row's time out, so a table with an extra such row (a time
 * 100x off) fits the same profile as the table without it, and counted it fits another; an unknown
 * value or no usable row stops the fit; the memory fit still counts the row's label. */
#define TIME_FIT_HEADER "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp,status,step_time_s,time_fit\n"
START_TEST(test_calibrate_time_fit_no_leaves_the_time_out)
{
  g_autofree char *one = tmp_file(MEASURED_HEADER SMALL_LAYOUT ",ok,1.0\n", -1);
  g_autofree char *two = tmp_file(TIME_FIT_HEADER SMALL_LAYOUT ",ok,1.0,yes\n" SMALL_LAYOUT ",ok,100.0,no\n", -1);
  g_autofree char *yes = tmp_file(TIME_FIT_HEADER SMALL_LAYOUT ",ok,1.0,yes\n" SMALL_LAYOUT ",ok,100.0,\n", -1);
  g_autofree char *bad = tmp_file(TIME_FIT_HEADER SMALL_LAYOUT ",ok,1.0,maybe\n", -1);
  g_autofree char *none = tmp_file(TIME_FIT_HEADER SMALL_LAYOUT ",ok,1.0,no\n", -1);
  calib_cfg cc = {.pred = small_cfg(), .max_evals = 12, .fast = TRUE};
  const char *p_one[] = {one}, *p_two[] = {two}, *p_yes[] = {yes}, *p_bad[] = {bad}, *p_none[] = {none};
  gpu_profile f_one, f_two, f_yes, f_bad;
  GError *err = NULL;
  ck_assert(calib_run(p_one, 1, &cc, &f_one, &err));
  ck_assert(calib_run(p_two, 1, &cc, &f_two, &err));
  ck_assert_double_eq(f_one.stack.gemm_efficiency, f_two.stack.gemm_efficiency);
  ck_assert_double_eq(f_one.stack.launch_overhead_s, f_two.stack.launch_overhead_s);
  ck_assert_double_eq(f_one.stack.nccl_bw_efficiency_ib, f_two.stack.nccl_bw_efficiency_ib);
  /* the control: the same table with the row counted fits something else */
  ck_assert(calib_run(p_yes, 1, &cc, &f_yes, &err));
  ck_assert_double_ne(f_one.stack.gemm_efficiency, f_yes.stack.gemm_efficiency);
  ck_assert(!calib_run(p_bad, 1, &cc, &f_bad, &err));
  g_autofree char *want = g_strdup_printf("%s line 2: time_fit: unknown 'maybe' (allowed: yes, no, or empty = yes)", bad);
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  ck_assert(!calib_run(p_none, 1, &cc, &f_bad, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "no row measured ok"));
  g_clear_error(&err);
  /* the memory fit reads the labels of every row, time_fit no or not: same rows, same fit */
  calmem_fit m_one, m_none;
  ck_assert(calmem_run(p_one, 1, &cc.pred, NULL, &m_one, &err));
  ck_assert(calmem_run(p_none, 1, &cc.pred, NULL, &m_none, &err));
  ck_assert_int_eq(m_none.rows, 1);
  ck_assert_int_eq(m_none.rows, m_one.rows);
  ck_assert_double_eq(m_none.fragmentation, m_one.fragmentation);
  /* the pre-check stops an all-`no` table before any fit, and a bad value even for --fit memory */
  ck_assert(!calib_check_tables(p_none, 1, &cc.pred, TRUE, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "no row measured ok"));
  g_clear_error(&err);
  ck_assert(calib_check_tables(p_none, 1, &cc.pred, FALSE, &err));
  ck_assert(!calib_check_tables(p_bad, 1, &cc.pred, FALSE, &err));
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  g_unlink(one);
  g_unlink(two);
  g_unlink(yes);
  g_unlink(bad);
  g_unlink(none);
}
END_TEST

/* host_dispatch_s is fitted only where the prior has a host cost: the study's 0 stays exactly 0 (its fit is the
 * 9 other constants), a prior of 40 us is moved inside the fit's range (5 to 200 us) and written out. */
START_TEST(test_calibrate_keeps_a_zero_host_dispatch_and_fits_a_positive_one)
{
  /* a table of one row, measured well above the prediction: the host cost is a free way to slow it */
  g_autofree char *one = tmp_file(MEASURED_HEADER SMALL_LAYOUT ",ok,40.0\n", -1);
  const char *paths[] = {one};
  calib_cfg cc = {.pred = small_cfg(), .max_evals = 13, .fast = TRUE};
  gpu_profile f;
  GError *err = NULL;
  ck_assert_double_eq(cc.pred.prof.stack.host_dispatch_s, 0);
  ck_assert_msg(calib_run(paths, 1, &cc, &f, &err), "%s", err ? err->message : "");
  ck_assert_double_eq(f.stack.host_dispatch_s, 0);
  ck_assert_double_ne(f.stack.gemm_efficiency, cc.pred.prof.stack.gemm_efficiency);
  cc.pred.prof.stack.host_dispatch_s = 40e-6;
  ck_assert_msg(calib_run(paths, 1, &cc, &f, &err), "%s", err ? err->message : "");
  ck_assert_double_ne(f.stack.host_dispatch_s, 40e-6);
  ck_assert(f.stack.host_dispatch_s >= 5e-6 && f.stack.host_dispatch_s <= 2e-4);
  g_unlink(one);
}
END_TEST

/* predict on its own output with a row made invalid (tp 3): that row's old pred_* values are gone. */
START_TEST(test_predict_rewrites_every_pred_column)
{
  g_autofree char *in = tmp_file(
      "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp,pred_status,"
      "pred_step_time_s,pred_mfu,pred_peak_mem_gib,pred_bubble_fraction,pred_fragmentation_limit,pred_error\n"
      "llama-7b,1024,16,32000,8,none,flash2,1,3,2,0,ok,0.97,0.28,31.3,0.17,6.99,\n"
      "llama-7b,1024,16,32000,8,none,flash2,1,2,2,0,,,,,,,\n",
      -1);
  g_autofree char *out = tmp_file("", -1);
  predict_cfg cfg = small_cfg();
  GError *err = NULL;
  guint invalid = 0;
  ck_assert_msg(predict_file(in, out, &cfg, &invalid, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(invalid, 1);
  g_autoptr(csv_table) t = csv_read(out, &err);
  /* no column added twice; pred_fidelity, pred_band_pct, pred_headroom_gib, pred_flags, pred_energy_j,
   * pred_kwh_per_mtok and the platform's nine are new */
  ck_assert_uint_eq(t->header->len, 33);
  ck_assert_str_eq(csv_cell(t, 0, csv_column(t, "pred_status")), "invalid");
  const char *emptied[] = {"pred_step_time_s", "pred_mfu", "pred_peak_mem_gib", "pred_bubble_fraction",
                           "pred_fragmentation_limit"};
  for (guint i = 0; i < G_N_ELEMENTS(emptied); i++)
    ck_assert_msg(!*csv_cell(t, 0, csv_column(t, emptied[i])), "%s kept '%s'", emptied[i],
                  csv_cell(t, 0, csv_column(t, emptied[i])));
  ck_assert_ptr_nonnull(strstr(csv_cell(t, 0, csv_column(t, "pred_error")), "tp"));
  g_unlink(in);
  g_unlink(out);
  /* a table of which every row is invalid is refused, and nothing is written (issue 27: it exited 0, silent) */
  g_autofree char *bad = tmp_file("model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,"
                                  "pp,sp\nllama-7b,1024,16,32000,8,none,flash2,1,3,2,0\n", -1);
  g_autofree char *none = g_strconcat(bad, ".out", NULL);
  ck_assert(!predict_file(bad, none, &cfg, &invalid, &err));
  ck_assert_uint_eq(invalid, 1);
  ck_assert_msg(strstr(err->message, "every row is invalid, nothing written") && strstr(err->message, "row 1: tp: 3"),
                "%s", err->message);
  g_clear_error(&err);
  ck_assert(!g_file_test(none, G_FILE_TEST_EXISTS));
  g_unlink(bad);
}
END_TEST

/* An integer cell of digits beyond the range says the range (issue 30: global_batch 2147483648 was "not a whole
 * number"). */
START_TEST(test_integer_cell_out_of_range_says_the_range)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp"};
  static const char *const gbs[] = {"2147483648", "1000000001", "99999999999999999999999"};
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  for (guint i = 0; i < G_N_ELEMENTS(gbs); i++) {
    const char *cells[] = {"llama-7b", "1024", gbs[i], "32000", "8", "none", "flash2", "1", "1", "4", "0"};
    g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells, 1);
    sim_request rq;
    GError *err = NULL;
    ck_assert(!predict_row_request(t, 0, &cfg, &rq, &err));
    g_autofree char *want = g_strdup_printf("global_batch: '%s' is out of range (allowed: a whole number from 0 to "
                                            "1000000000)", gbs[i]);
    ck_assert_str_eq(err->message, want);
    g_error_free(err);
  }
}
END_TEST

/* Integer cells are read strictly: a blank on either side or a sign is an error, like trailing junk. */
START_TEST(test_integer_cells_are_strict)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp"};
  static const char *const pps[] = {" 4", "+4", "4 ", "-0", "4"};
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  for (guint i = 0; i < G_N_ELEMENTS(pps); i++) {
    const char *cells[] = {"llama-7b", "1024", "16", "32000", "8", "none", "flash2", "1", "1", pps[i], "0"};
    g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells, 1);
    sim_request rq;
    GError *err = NULL;
    gboolean ok = predict_row_request(t, 0, &cfg, &rq, &err);
    if (!strcmp(pps[i], "4")) {
      ck_assert_msg(ok, "%s", err ? err->message : "");
      continue;
    }
    ck_assert_msg(!ok, "pp '%s' accepted", pps[i]);
    g_autofree char *want = g_strdup_printf("pp: '%s' is not a whole number (allowed: plain digits such as 1 or 2048, no blanks or signs)", pps[i]);
    ck_assert_str_eq(err->message, want);
    g_error_free(err);
  }
}
END_TEST

/* A table's vocab is the row's vocabulary, in the range --vocab and a model file obey: 0 was taken
 * for "the model's own" (while --vocab 0 is refused), and values above a model file's limit ran. The
 * study's tables give it on every row (128000), never 0 or empty; an empty cell stays an error. */
START_TEST(test_vocab_cell_is_a_vocabulary_size_as_vocab_option)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp"};
  static const struct { const char *vocab, *want; } cases[] = {
      {"0", "vocab: '0' is not a vocabulary size (allowed: 1 to 16777216)"},
      {"16777217", "vocab: '16777217' is not a vocabulary size (allowed: 1 to 16777216)"},
      {"", "vocab: '' is not a whole number (allowed: plain digits such as 1 or 2048, no blanks or signs)"},
      {"16777216", NULL},
      {"32000", NULL},
  };
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *cells[] = {"llama-7b", "1024", "16", cases[i].vocab, "8", "none", "flash2", "1", "1", "4", "0"};
    g_autoptr(csv_table) t = table_of(cols, G_N_ELEMENTS(cols), cells, 1);
    sim_request rq;
    GError *err = NULL;
    gboolean ok = predict_row_request(t, 0, &cfg, &rq, &err);
    if (!cases[i].want) {
      ck_assert_msg(ok, "vocab '%s': %s", cases[i].vocab, err ? err->message : "");
      ck_assert_int_eq(rq.m.vocab, atoi(cases[i].vocab));
      continue;
    }
    ck_assert_msg(!ok, "vocab '%s' accepted", cases[i].vocab);
    ck_assert_str_eq(err->message, cases[i].want);
    g_error_free(err);
  }
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
  if (!model_load_named("llama-7b", &rq.m, &err) || !profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err)) _exit(3);
  rq.prof.stack.fragmentation = *frag;
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
  tcase_add_test(tc, test_a_setting_without_a_comparison_is_not_a_miss);
  tcase_add_test(tc, test_summary_counts_oom_accuracy_timed_rows_and_best_layout);
  tcase_add_test(tc, test_fast_mode_extrapolation_is_affine);
  tcase_add_test(tc, test_memory_fit_takes_midpoint_of_lowest_best_interval);
  tcase_add_test(tc, test_memory_fit_prior_decides_only_where_the_labels_are_nearly_silent);
  tcase_add_test(tc, test_memory_fit_counts_a_hidden_runnable_layout_twice);
  tcase_add_test(tc, test_memory_fit_prior_on_a_limit_or_outside_the_range);
  tcase_add_test(tc, test_fragmentation_limit_is_where_the_verdict_flips);
  tcase_add_test(tc, test_partition_column_overrides_the_command_default);
  tcase_add_test(tc, test_zero_and_overlap_columns_are_the_rows_own);
  tcase_add_test(tc, test_moe_capacity_factor_column_is_the_rows_own);
  tcase_add_test(tc, test_append_row_maps_columns_by_name);
  tcase_add_test(tc, test_csv_read_refuses_a_nul_byte_naming_its_line);
  tcase_add_test(tc, test_csv_read_keeps_each_rows_file_line);
  tcase_add_test(tc, test_csv_read_refuses_an_unclosed_quote_naming_its_line);
  tcase_add_test(tc, test_csv_read_refuses_a_column_named_twice);
  tcase_add_test(tc, test_csv_read_skips_a_utf8_bom);
  tcase_add_test(tc, test_csv_read_refuses_a_blank_header_line);
  tcase_add_test(tc, test_csv_format_reads_back_as_the_same_table);
  tcase_add_test(tc, test_measured_row_needs_a_known_status_and_a_finite_positive_time_when_ok);
  tcase_add_test(tc, test_validate_leaves_out_rows_with_a_bad_measurement);
  tcase_add_test(tc, test_calibrate_stops_at_a_bad_measured_row);
  tcase_add_test(tc, test_row_messages_name_the_file_line_after_blank_lines);
  tcase_add_test(tc, test_calibrate_time_fit_no_leaves_the_time_out);
  tcase_add_test(tc, test_calibrate_keeps_a_zero_host_dispatch_and_fits_a_positive_one);
  tcase_add_test(tc, test_predict_rewrites_every_pred_column);
  tcase_add_test(tc, test_integer_cells_are_strict);
  tcase_add_test(tc, test_integer_cell_out_of_range_says_the_range);
  tcase_add_test(tc, test_vocab_cell_is_a_vocabulary_size_as_vocab_option);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(validate_suite()); }
