/* predict -- many layouts at once: one row of a CSV table per layout, each
 * simulated in its own worker process (SimGrid's engine is a per-process
 * singleton), at most `jobs` at a time. A bad row becomes status `invalid`
 * with a reason; it never stops the table.
 *
 * Owns: row -> request translation, the worker pool, the pred_* columns.
 * May not touch: what a simulation does inside.
 */
#ifndef PREDICT_H
#define PREDICT_H

#include <glib.h>

#include "csv.h"
#include "simulate.h"

typedef struct predict_cfg {
  gpu_profile prof;
  double capacity_gib; /* memory per GPU for the OOM verdict */
  gen_options gen;
  int jobs;
} predict_cfg;

typedef enum { PRED_OK, PRED_OOM, PRED_INVALID } pred_status;

typedef struct prediction {
  pred_status status;
  double step_time_s, mfu, peak_gib, bubble_fraction;
  double fragmentation_limit; /* see metrics.h */
  char error[240];
} prediction;

const char *predict_status_name(pred_status s);
/* The input columns predict reads: the required ones, then the optional `partition`. */
const char *const *predict_columns(guint *n);
/* Columns a table must have. */
gboolean predict_check_columns(const csv_table *t, const char *path, GError **err);
/* The request of one row; FALSE with err (the row's reason) when the row is invalid. */
gboolean predict_row_request(const csv_table *t, guint row, const predict_cfg *cfg, sim_request *out, GError **err);
/* Predict every row; returns [t->rows->len] predictions (caller frees). */
prediction *predict_table(const csv_table *t, const predict_cfg *cfg);
/* predict IN -> OUT (IN's columns plus pred_*). */
gboolean predict_file(const char *in, const char *out, const predict_cfg *cfg, GError **err);

#endif
