/* validate -- see validate.h. */
#include "validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "platforms/whatif.h"
#include "workloads/schedule.h"
#include "sweep_report.h"

double val_mape_pct(const double *pred, const double *meas, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += fabs(pred[i] - meas[i]) / meas[i];
  return n > 0 ? 100.0 * s / n : NAN;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double val_percentile(const double *x, int n, double q)
{
  if (n < 1) return NAN;
  g_autofree double *s = g_memdup2(x, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmp_double);
  double pos = q * (n - 1);
  int lo = (int)floor(pos);
  if (lo >= n - 1) return s[n - 1];
  return s[lo] + (pos - lo) * (s[lo + 1] - s[lo]);
}

typedef struct idx_val {
  double v;
  int i;
} idx_val;

static int cmp_idx_val(const void *a, const void *b)
{
  const idx_val *x = a, *y = b;
  if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
  return x->i - y->i;
}

void val_ranks(const double *x, int n, double *ranks)
{
  g_autofree idx_val *s = g_new(idx_val, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) s[i] = (idx_val){x[i], i};
  qsort(s, n, sizeof *s, cmp_idx_val);
  for (int a = 0; a < n;) {
    int b = a;
    while (b + 1 < n && s[b + 1].v == s[a].v) b++;
    double mean_rank = (a + b) / 2.0 + 1.0; /* positions a..b hold ranks a+1..b+1 */
    for (int k = a; k <= b; k++) ranks[s[k].i] = mean_rank;
    a = b + 1;
  }
}

double val_spearman(const double *x, const double *y, int n)
{
  if (n < 2) return NAN;
  g_autofree double *rx = g_new(double, n);
  g_autofree double *ry = g_new(double, n);
  val_ranks(x, n, rx);
  val_ranks(y, n, ry);
  double mx = 0, my = 0;
  for (int i = 0; i < n; i++) {
    mx += rx[i];
    my += ry[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return NAN;
  return sxy / sqrt(sxx * syy);
}

meas_status val_parse_status(const char *s)
{
  if (!strcmp(s, "ok")) return MEAS_OK;
  if (!strcmp(s, "oom")) return MEAS_OOM;
  return MEAS_OTHER;
}

/* A number cell, strictly: the whole cell is a plain finite decimal (no blanks, no leading '+',
 * no hex, inf or nan). */
static gboolean parse_number(const char *s, double *out)
{
  if (!*s || !strchr("0123456789.-", *s) || s[strspn(s, "0123456789.eE+-")]) return FALSE;
  char *end;
  double v = g_ascii_strtod(s, &end);
  if (*end || !isfinite(v)) return FALSE;
  *out = v;
  return TRUE;
}

static const char *const MEASURED_STATUSES[] = {"ok", "oom", "error", "unavailable", NULL};

gboolean val_measured_status(const csv_table *t, guint r, GError **err)
{
  const char *status = csv_cell(t, r, csv_column(t, "status"));
  if (g_strv_contains(MEASURED_STATUSES, status)) return TRUE;
  g_autofree char *allowed = g_strjoinv(", ", (char **)MEASURED_STATUSES);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "status: unknown '%s' (allowed: %s)", status, allowed);
  return FALSE;
}

gboolean val_measured_row(const csv_table *t, guint r, double *step_time_s, GError **err)
{
  *step_time_s = NAN;
  if (!val_measured_status(t, r, err)) return FALSE;
  if (strcmp(csv_cell(t, r, csv_column(t, "status")), "ok")) return TRUE;
  const char *cell = csv_cell(t, r, csv_column(t, "step_time_s"));
  double v;
  if (!parse_number(cell, &v) || !(v > 0)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "step_time_s: '%s' on a row measured ok (allowed: a finite number of seconds > 0)", cell);
    return FALSE;
  }
  *step_time_s = v;
  return TRUE;
}

gboolean val_read_row(const csv_table *t, guint r, const predict_cfg *cfg, gboolean times, double *step_time_s,
                      meas_status *st, sim_request *rq, GError **err)
{
  *step_time_s = NAN;
  gboolean ok = times ? val_measured_row(t, r, step_time_s, err) : val_measured_status(t, r, err);
  if (!ok) return FALSE;
  *st = val_parse_status(csv_cell(t, r, csv_column(t, "status")));
  return *st == MEAS_OTHER || predict_row_request(t, r, cfg, rq, err); /* error/unavailable rows are not simulated */
}

gboolean val_check_columns(const csv_table *t, const char *path, gboolean times, GError **err)
{
  if (!predict_check_columns(t, path, err)) return FALSE;
  const char *need[] = {"status", "step_time_s"};
  for (size_t i = 0; i < (times ? 2u : 1u); i++)
    if (csv_column(t, need[i]) < 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (measured runs need %s)", path, need[i],
                  times ? "status and step_time_s" : "status");
      return FALSE;
    }
  return TRUE;
}

/* FALSE with err when the measured columns are bad (val_measured_row): the row is then left out. */
static gboolean fill_row(const csv_table *t, guint r, val_row *v, GError **err)
{
#define CELL(c) csv_cell(t, r, csv_column(t, c))
  g_snprintf(v->setting, sizeof v->setting, "%s seq %s, %s %s", CELL("model"), CELL("seq_len"), CELL("gpus"),
             strcmp(CELL("gpus"), "1") ? "GPUs" : "GPU");
  g_autofree char *label = sweep_row_label(t, r); /* every option the row sets (sweep_report.h) */
  g_strlcpy(v->label, label, sizeof v->label);
  gboolean measured = val_measured_row(t, r, &v->meas_step_s, err);
  v->meas = measured ? val_parse_status(CELL("status")) : MEAS_OTHER;
#undef CELL
  return measured;
}

/* FALSE with err when two of the tables are one: the same file (twice, or through a link) or the same
 * bytes (a copy), which would count every row twice. */
static gboolean distinct_tables(const char *const *paths, int n, GError **err)
{
  g_autofree char **sums = g_new0(char *, n > 0 ? n : 1);
  gboolean ok = TRUE;
  for (int f = 0; f < n && ok; f++) {
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(paths[f], &text, &len, NULL)) continue; /* csv_read names the file */
    sums[f] = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
    for (int g = 0; g < f && ok; g++)
      if (sums[g] && !strcmp(sums[g], sums[f])) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "validate: %s is the same table as %s (allowed: each table "
                    "once; its rows would count twice)", paths[f], paths[g]);
        ok = FALSE;
      }
  }
  for (int f = 0; f < n; f++) g_free(sums[f]);
  return ok;
}

/* A warning on standard error for each row that repeats an earlier one of the same table cell for cell. */
static void warn_repeated_rows(const csv_table *t, const char *path)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint r = 0; r < t->rows->len; r++) {
    GString *key = g_string_new(NULL);
    for (guint c = 0; c < t->header->len; c++) {
      g_string_append(key, csv_cell(t, r, (int)c));
      g_string_append_c(key, '\x1f');
    }
    gpointer first = g_hash_table_lookup(seen, key->str);
    if (first)
      g_printerr("layoutsim: warning: %s line %u repeats line %u cell for cell (both are counted)\n", path,
                 csv_row_line(t, r), GPOINTER_TO_UINT(first));
    else g_hash_table_insert(seen, g_strdup(key->str), GUINT_TO_POINTER(csv_row_line(t, r)));
    g_string_free(key, TRUE);
  }
}

GArray *val_predict_files(const char *const *paths, int n_paths, const predict_cfg *cfg, GError **err)
{
  if (!distinct_tables(paths, n_paths, err)) return NULL;
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(val_row));
  for (int f = 0; f < n_paths; f++) {
    g_autoptr(csv_table) t = csv_read(paths[f], err);
    if (!t || !val_check_columns(t, paths[f], TRUE, err)) {
      g_array_free(rows, TRUE);
      return NULL;
    }
    warn_repeated_rows(t, paths[f]);
    g_autofree prediction *p = predict_table(t, cfg);
    for (guint r = 0; r < t->rows->len; r++) {
      val_row v = {0};
      g_autoptr(GError) bad = NULL;
      gboolean measured = fill_row(t, r, &v, &bad);
      v.pred = p[r].status;
      v.pred_step_s = p[r].status == PRED_INVALID ? NAN : p[r].step_time_s;
      v.trust = p[r].trust;
      /* physically impossible: faster than the model's FLOPs at the GPUs' peak (an MFU above 100%) */
      double ideal_s = p[r].status != PRED_INVALID && p[r].mfu > 0 && p[r].step_time_s > 0 ? p[r].mfu * p[r].step_time_s : 0;
      if (measured && v.meas == MEAS_OK && v.meas_step_s < ideal_s) {
        g_set_error(&bad, LSIM_ERROR, LSIM_ERROR_INVALID, "step_time_s: %g s is below the ideal compute time at the GPUs' "
                    "peak, %.4g s (an MFU above 100%%) (allowed: at least %.4g s)", v.meas_step_s, ideal_s, ideal_s);
        measured = FALSE;
        v.meas = MEAS_OTHER;
        v.meas_step_s = NAN;
      }
      const char *why = !measured ? bad->message : p[r].status == PRED_INVALID ? p[r].error : NULL;
      if (why) g_snprintf(v.invalid, sizeof v.invalid, "%s line %u: %s", paths[f], csv_row_line(t, r), why);
      g_array_append_val(rows, v);
    }
  }
  return rows;
}

static gboolean is_timed(const val_row *v) { return v->meas == MEAS_OK && v->pred == PRED_OK; }

/* Statistics over the rows whose index is in idx. */
static val_stats stats_of(const val_row *rows, const int *idx, int n, const char *name)
{
  val_stats s = {.rows = n, .best_row_meas = -1, .best_row_pred = -1, .spearman_min = NAN};
  g_strlcpy(s.setting, name, sizeof s.setting);
  g_autofree double *pr = g_new(double, n > 0 ? n : 1);
  g_autofree double *me = g_new(double, n > 0 ? n : 1);
  g_autofree double *ape = g_new(double, n > 0 ? n : 1);
  double signed_sum = 0;
  for (int k = 0; k < n; k++) {
    const val_row *v = &rows[idx[k]];
    if (v->invalid[0]) continue; /* left out of every statistic (bad measurement or no prediction) */
    if (v->meas != MEAS_OTHER && v->pred != PRED_INVALID) {
      s.labelled++;
      s.oom_correct += (v->meas == MEAS_OOM) == (v->pred == PRED_OOM);
    }
    if (v->meas == MEAS_OK && (s.best_row_meas < 0 || v->meas_step_s < rows[s.best_row_meas].meas_step_s))
      s.best_row_meas = idx[k];
    if (v->pred == PRED_OK && (s.best_row_pred < 0 || v->pred_step_s < rows[s.best_row_pred].pred_step_s))
      s.best_row_pred = idx[k];
    if (!is_timed(v)) continue;
    pr[s.timed] = v->pred_step_s;
    me[s.timed] = v->meas_step_s;
    ape[s.timed] = 100.0 * fabs(v->pred_step_s - v->meas_step_s) / v->meas_step_s;
    signed_sum += (v->pred_step_s - v->meas_step_s) / v->meas_step_s;
    s.timed++;
  }
  s.mape_pct = s.timed ? val_mape_pct(pr, me, s.timed) : NAN;
  s.p90_pct = val_percentile(ape, s.timed, 0.9);
  s.spearman = val_spearman(pr, me, s.timed);
  s.mean_signed_pct = s.timed ? 100.0 * signed_sum / s.timed : NAN;
  s.best_compared = s.best_row_meas >= 0 && s.best_row_pred >= 0;
  s.best_match = s.best_compared && s.best_row_meas == s.best_row_pred;
  return s;
}

GArray *val_summarize(const val_row *rows, int n)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(val_stats));
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (int i = 0; i < n; i++) {
    gboolean seen = FALSE;
    for (guint k = 0; k < names->len && !seen; k++) seen = !strcmp(names->pdata[k], rows[i].setting);
    if (!seen) g_ptr_array_add(names, (gpointer)rows[i].setting);
  }
  g_autofree int *idx = g_new(int, n > 0 ? n : 1);
  val_stats total_extra = {.spearman_min = NAN};
  for (guint k = 0; k < names->len; k++) {
    int m = 0;
    for (int i = 0; i < n; i++)
      if (!strcmp(rows[i].setting, names->pdata[k])) idx[m++] = i;
    val_stats s = stats_of(rows, idx, m, names->pdata[k]);
    g_array_append_val(out, s);
    total_extra.settings++;
    total_extra.settings_compared += s.best_compared;
    total_extra.settings_best_match += s.best_match;
    if (!isnan(s.spearman) && (isnan(total_extra.spearman_min) || s.spearman < total_extra.spearman_min))
      total_extra.spearman_min = s.spearman;
  }
  for (int i = 0; i < n; i++) idx[i] = i;
  val_stats t = stats_of(rows, idx, n, "total");
  t.spearman = NAN; /* ranks across settings mean nothing: see spearman_min */
  t.best_row_meas = t.best_row_pred = -1;
  t.best_match = FALSE;
  t.best_compared = FALSE;
  t.settings = total_extra.settings;
  t.settings_compared = total_extra.settings_compared;
  t.settings_best_match = total_extra.settings_best_match;
  t.spearman_min = total_extra.spearman_min;
  g_array_append_val(out, t);
  return out;
}

static const char *label_of(const val_row *rows, int i) { return i >= 0 ? rows[i].label : "-"; }

/* One number of the table, or "-" where it is undefined (no row to compute it from). */
static void put_num(FILE *f, const char *fmt, int width, double v)
{
  if (isnan(v)) fprintf(f, " %*s", width, "-");
  else {
    fputc(' ', f);
    fprintf(f, fmt, width, v);
  }
}

void val_print_text(FILE *f, const GArray *stats, const val_row *rows)
{
  fprintf(f, "%-30s %5s %9s %6s %7s %7s %7s %8s  %s\n", "setting", "rows", "oom_acc%", "timed", "mape%", "p90%",
          "bias%", "spearman", "best layout (measured | predicted)");
  for (guint k = 0; k < stats->len; k++) {
    const val_stats *s = &g_array_index(stats, val_stats, k);
    gboolean total = k + 1 == stats->len;
    fprintf(f, "%-30s %5d", s->setting, s->rows);
    put_num(f, "%*.1f", 9, s->labelled ? 100.0 * s->oom_correct / s->labelled : NAN);
    fprintf(f, " %6d", s->timed);
    put_num(f, "%*.2f", 7, s->mape_pct);
    put_num(f, "%*.2f", 7, s->p90_pct);
    put_num(f, "%+*.2f", 7, s->mean_signed_pct);
    put_num(f, "%*.3f", 8, total ? s->spearman_min : s->spearman);
    if (!total) {
      fprintf(f, "  %s %s | %s\n", !s->best_compared ? "n/a" : s->best_match ? "MATCH" : "DIFFER",
              label_of(rows, s->best_row_meas), label_of(rows, s->best_row_pred));
    } else {
      fprintf(f, "  best matches in %d of %d settings", s->settings_best_match, s->settings_compared);
      if (s->settings_compared < s->settings)
        fprintf(f, " (%d without a row measured ok and one predicted ok)", s->settings - s->settings_compared);
      fprintf(f, " (spearman: min)\n");
    }
  }
}

static void add_num(cJSON *o, const char *k, double v)
{
  if (isnan(v)) cJSON_AddNullToObject(o, k);
  else cJSON_AddNumberToObject(o, k, v);
}

cJSON *val_json(const GArray *stats, const val_row *rows)
{
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(j, "settings");
  for (guint k = 0; k < stats->len; k++) {
    const val_stats *s = &g_array_index(stats, val_stats, k);
    gboolean total = k + 1 == stats->len;
    cJSON *o = total ? cJSON_AddObjectToObject(j, "total") : cJSON_CreateObject();
    if (!total) cJSON_AddStringToObject(o, "setting", s->setting);
    cJSON_AddNumberToObject(o, "rows", s->rows);
    cJSON_AddNumberToObject(o, "oom_labelled", s->labelled);
    add_num(o, "oom_accuracy", s->labelled ? (double)s->oom_correct / s->labelled : NAN);
    cJSON_AddNumberToObject(o, "timed_rows", s->timed);
    add_num(o, "mape_pct", s->mape_pct);
    add_num(o, "p90_ape_pct", s->p90_pct);
    add_num(o, "mean_signed_error_pct", s->mean_signed_pct);
    if (total) {
      add_num(o, "spearman_min", s->spearman_min);
      cJSON_AddNumberToObject(o, "settings", s->settings);
      cJSON_AddNumberToObject(o, "settings_compared", s->settings_compared);
      cJSON_AddNumberToObject(o, "settings_best_match", s->settings_best_match);
    } else {
      add_num(o, "spearman", s->spearman);
      if (s->best_compared) cJSON_AddBoolToObject(o, "best_match", s->best_match);
      else cJSON_AddNullToObject(o, "best_match"); /* nothing to compare */
      cJSON_AddStringToObject(o, "best_measured", label_of(rows, s->best_row_meas));
      cJSON_AddStringToObject(o, "best_predicted", label_of(rows, s->best_row_pred));
      add_num(o, "best_measured_step_time_s", s->best_row_meas >= 0 ? rows[s->best_row_meas].meas_step_s : NAN);
      add_num(o, "best_predicted_step_time_s", s->best_row_pred >= 0 ? rows[s->best_row_pred].pred_step_s : NAN);
      cJSON_AddItemToArray(arr, o);
    }
  }
  return j;
}

static csv_table *rows_table(const val_row *rows, int n)
{
  const char *cols[] = {"setting",          "layout",    "status",   "step_time_s", "pred_status",
                        "pred_step_time_s", "error_pct", "left_out", "band_pct",
                        "band_base_pct",    "band_distance"};
  g_autoptr(csv_table) t = csv_new(cols, G_N_ELEMENTS(cols));
  static const char *const MEAS[] = {"ok", "oom", "other"};
  for (int i = 0; i < n; i++) {
    const val_row *v = &rows[i];
    GPtrArray *r = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r, g_strdup(v->setting));
    g_ptr_array_add(r, g_strdup(v->label));
    g_ptr_array_add(r, g_strdup(MEAS[v->meas]));
    g_ptr_array_add(r, isnan(v->meas_step_s) ? g_strdup("") : g_strdup_printf("%.6g", v->meas_step_s));
    g_ptr_array_add(r, g_strdup(predict_status_name(v->pred)));
    g_ptr_array_add(r, isnan(v->pred_step_s) ? g_strdup("") : g_strdup_printf("%.6g", v->pred_step_s));
    g_ptr_array_add(r, is_timed(v) ? g_strdup_printf("%+.2f", 100.0 * (v->pred_step_s - v->meas_step_s) / v->meas_step_s)
                                   : g_strdup(""));
    g_ptr_array_add(r, g_strdup(v->invalid)); /* why the row is out of every statistic ("" when it is in) */
    /* the prediction's band (trust.h), where it has one */
    g_ptr_array_add(r, v->trust.nodes > 0 && !isnan(v->pred_step_s) ? g_strdup_printf("%.2f", v->trust.band_pct) : g_strdup(""));
    /* what the band is made of (docs/trust.md), also where the row was not replayed: bench/bands.sh re-derives
     * the band from them */
    g_ptr_array_add(r, v->trust.nodes > 0 ? g_strdup_printf("%.4f", v->trust.base_pct) : g_strdup(""));
    g_ptr_array_add(r, v->trust.nodes > 0 ? g_strdup_printf("%.4f", v->trust.distance) : g_strdup(""));
    csv_append_row(t, r, 0);
  }
  return g_steal_pointer(&t);
}

gboolean val_write_rows(const char *path, const val_row *rows, int n, GError **err)
{
  g_autoptr(csv_table) t = rows_table(rows, n);
  return csv_write(t, path, err);
}

void val_put_rows(FILE *f, const val_row *rows, int n)
{
  g_autoptr(csv_table) t = rows_table(rows, n);
  g_autoptr(GString) text = g_string_new(NULL);
  csv_format(t, text);
  fwrite(text->str, 1, text->len, f);
}

gboolean val_trust_table(const val_row *rows, int n, const trust_table *prior, const gpu_profile *prof,
                         const char *comment, trust_table *out, GError **err)
{
  *out = *prior;
  g_strlcpy(out->comment, comment, sizeof out->comment);
  g_strlcpy(out->profile, prof->name, sizeof out->profile);
  out->ib_gbps = whatif_profile_value(WHATIF_IB_GBPS, prof);
  out->nvlink_gbps = whatif_profile_value(WHATIF_NVLINK_GBPS, prof);
  out->nics_per_node = whatif_profile_value(WHATIF_NICS_PER_NODE, prof);
  g_autofree double *err_pct = g_new(double, n ? n : 1);
  int covered = 0, timed = 0, piped = 0;
  out->scores_rows = out->scores_oom = 0;
  for (int i = 0; i < n; i++) {
    const val_row *v = &rows[i];
    if (v->invalid[0] || v->meas == MEAS_OTHER || v->pred == PRED_INVALID || v->trust.nodes <= 0) continue;
    const trust_assessment *a = &v->trust;
    if (covered++ == 0) {
      g_strlcpy(out->schedule, sched_name(0), sizeof out->schedule); /* the default, where no row pipelines */
      out->model_params_min = out->model_params_max = a->model_params;
      out->seq_len_min = out->seq_len_max = a->seq_len;
      out->nodes_min = out->nodes_max = a->nodes;
    }
    /* the schedule of the rows that pipeline (at pp 1 every schedule runs the same program) */
    if (a->pp > 1 && !piped++) g_strlcpy(out->schedule, sched_name(a->schedule), sizeof out->schedule);
    if (a->pp > 1 && strcmp(out->schedule, sched_name(a->schedule))) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--trust-out: rows of schedules %s and %s (allowed: rows of one "
                  "schedule: a trust table's bands are its)", out->schedule, sched_name(a->schedule));
      return FALSE;
    }
    out->model_params_min = MIN(out->model_params_min, a->model_params);
    out->model_params_max = MAX(out->model_params_max, a->model_params);
    out->seq_len_min = MIN(out->seq_len_min, a->seq_len);
    out->seq_len_max = MAX(out->seq_len_max, a->seq_len);
    out->nodes_min = MIN(out->nodes_min, a->nodes);
    out->nodes_max = MAX(out->nodes_max, a->nodes);
    if ((a->flags & (1u << TRUST_SCORES)) && v->pred == PRED_OK) {
      out->scores_rows++;
      out->scores_oom += v->meas == MEAS_OOM;
    }
    timed += is_timed(v);
  }
  if (timed == 0) {
    g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                        "--trust-out: no row measured ok and predicted ok (allowed: tables with timed rows)");
    return FALSE;
  }
  for (int c = 0; c < TRUST_N_CLASSES; c++) {
    int k = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
      const val_row *v = &rows[i];
      if (v->invalid[0] || !is_timed(v) || v->trust.nodes <= 0 || trust_class_of(v->trust.flags) != (trust_class)c) continue;
      double e = 100 * (v->pred_step_s - v->meas_step_s) / v->meas_step_s;
      sum += e;
      err_pct[k++] = fabs(e);
    }
    out->cls[c].rows = k;
    out->cls[c].p90_pct = k ? val_percentile(err_pct, k, 0.9) : 0;
    out->cls[c].bias_pct = k ? sum / k : 0;
  }
  return TRUE;
}
