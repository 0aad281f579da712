/* validate -- how far predictions are from measured runs: reads tables of
 * measured layouts (the predict columns plus `status` and `step_time_s`),
 * predicts every row, and summarizes per setting (model, seq_len, gpus)
 * and in total: OOM-label accuracy, step-time MAPE and 90th percentile of
 * the absolute percentage error, Spearman rank correlation of step times,
 * and whether the predicted best layout is the measured best.
 *
 * Definitions (docs/calibration.md):
 *   - OOM accuracy over rows measured ok|oom and predicted ok|oom;
 *   - timed rows: measured ok and predicted ok; MAPE, P90 and Spearman over them;
 *     P90 interpolates linearly between order statistics (numpy's default);
 *     Spearman is Pearson's r of the ranks, ties sharing their mean rank;
 *   - predicted best: lowest predicted step time among rows predicted ok;
 *     measured best: lowest measured step time among rows measured ok;
 *     they match when they are the same row.
 *
 * Owns: the statistics, the per-setting summary and its text/JSON forms.
 * May not touch: how a row is simulated (analysis/predict does that).
 */
#ifndef VALIDATE_H
#define VALIDATE_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "predict.h"

typedef enum { MEAS_OK, MEAS_OOM, MEAS_OTHER } meas_status;

/* One measured row and its prediction. */
typedef struct val_row {
  char setting[64]; /* "llama-13b seq 2048, 64 GPUs" */
  char label[320];  /* the layout and the options the row sets, for people (sweep_row_label) */
  meas_status meas;
  double meas_step_s; /* NAN unless meas == MEAS_OK */
  pred_status pred;
  double pred_step_s;
  char invalid[200]; /* a bad measurement or PRED_INVALID: "FILE row N: reason" (row left out); else "" */
  trust_assessment trust; /* of the prediction, when the predict_cfg had a trust table (trust.nodes > 0) */
} val_row;

typedef struct val_stats {
  char setting[64];   /* "total" for the pooled line */
  int rows;
  int labelled, oom_correct; /* OOM accuracy = oom_correct / labelled */
  int timed;                 /* rows measured ok and predicted ok */
  double mape_pct, p90_pct, spearman; /* NAN when undefined */
  double mean_signed_pct;     /* mean of (pred - meas) / meas, to see a bias */
  int best_row_meas, best_row_pred; /* indices into the row array, -1 when none */
  gboolean best_compared; /* a row measured ok and a row predicted ok exist: best_match means something */
  gboolean best_match;
  int settings, settings_compared, settings_best_match; /* total only */
  double spearman_min;                /* total only: the worst setting */
} val_stats;

/* Statistics (exposed for tests). n >= 1 unless stated. */
double val_mape_pct(const double *pred, const double *meas, int n);
double val_percentile(const double *x, int n, double q); /* q in [0, 1]; x need not be sorted */
void val_ranks(const double *x, int n, double *ranks);   /* 1-based, ties get their mean rank */
double val_spearman(const double *x, const double *y, int n); /* NAN when n < 2 or a side is constant */

meas_status val_parse_status(const char *s);
/* The measured columns of row r (docs/calibration.md): `status` is one of ok, oom, error,
 * unavailable; on a row measured ok, `step_time_s` is a finite number > 0 (written without blanks
 * or a leading '+'), stored in *step_time_s (NAN on every other row). FALSE with err naming the
 * column and its allowed values. */
gboolean val_measured_row(const csv_table *t, guint r, double *step_time_s, GError **err);
/* The columns of a measured table: predict's, status, and step_time_s when `times`. */
gboolean val_check_columns(const csv_table *t, const char *path, gboolean times, GError **err);
/* The status alone (what the memory fit reads): one of ok, oom, error, unavailable. */
gboolean val_measured_status(const csv_table *t, guint r, GError **err);
/* Row r of a measured table as the fits read it: its measured columns (the time too when `times`;
 * *step_time_s is NAN unless measured ok), its label (*st), and, for a row labelled ok or oom, the
 * simulation request of its layout (*rq). FALSE with err naming the field. */
gboolean val_read_row(const csv_table *t, guint r, const predict_cfg *cfg, gboolean times, double *step_time_s,
                      meas_status *st, sim_request *rq, GError **err);

/* Rows of measured tables: checks columns, predicts every row with cfg. Returns GArray of val_row. */
GArray *val_predict_files(const char *const *paths, int n_paths, const predict_cfg *cfg, GError **err);
/* The per-setting statistics (settings in order of first appearance) followed by the total. */
GArray *val_summarize(const val_row *rows, int n);

void val_print_text(FILE *f, const GArray *stats, const val_row *rows);
cJSON *val_json(const GArray *stats, const val_row *rows);
/* The trust table of the rows (trust.h), which must have been predicted with a trust table: what
 * they cover (model sizes, sequence lengths, nodes; the platform is prof, the command's), each band
 * class's timed rows, P90 of the absolute error and mean signed error, and the rows of the large-
 * scores regime predicted to fit with how many ran out of memory. The name, the regime threshold,
 * the fragmentation margin and the extrapolation factor are prior's. FALSE when no row is timed. */
gboolean val_trust_table(const val_row *rows, int n, const trust_table *prior, const gpu_profile *prof,
                         const char *comment, trust_table *out, GError **err);

/* Per-row detail (setting, layout, measured and predicted status and time, error) as CSV. */
gboolean val_write_rows(const char *path, const val_row *rows, int n, GError **err);
/* The same to f (its write errors are f's: lsim_outfile checks them). */
void val_put_rows(FILE *f, const val_row *rows, int n);

#endif
