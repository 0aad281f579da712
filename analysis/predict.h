/* predict -- many layouts at once from a CSV table: one row per layout,
 * turned into a simulation request and evaluated by the worker pool
 * (analysis/pool.h). A bad row becomes status `invalid` with a reason; it
 * never stops the table.
 *
 * Columns: the layout (model, seq_len, global_batch, vocab, gpus,
 * checkpointing, attention_kernel, micro_batch, tp, pp, sp) and, optional,
 * per-row overrides: partition, model_file, profile, stack, ib_gbps, nvlink_gbps,
 * nics_per_node, gpu_memory (an empty cell: the command's value).
 *
 * Owns: row -> request translation, the pred_* columns.
 * May not touch: what a simulation does inside, the worker processes.
 */
#ifndef PREDICT_H
#define PREDICT_H

#include <glib.h>

#include "csv.h"
#include "platforms/whatif.h"
#include "pool.h"
#include "simulate.h"

typedef struct predict_cfg {
  gpu_profile prof;     /* the command's profile, its what-ifs applied */
  const char *profile_arg; /* how the command named it (--profile NAME|FILE), for the output's profile column */
  const char *stack_arg;   /* the same for --stack (the stack column) */
  gboolean partition_set;  /* --partition given: else a row's partition is its stack's (gen.partition: the command's) */
  plat_whatif whatif;   /* the command's what-ifs, also applied to a row's own profile */
  const GArray *stack_sets; /* the command's --stack-set (stack_setting), also applied to a row's own stack; NULL: none */
  double capacity_gib;  /* memory per GPU for the OOM verdict */
  gen_options gen;
  const model *model_file; /* --model-file: the model of every row (NULL: the rows name theirs) */
  GHashTable *trusts;     /* trust tables by stack (trust_lookup, borrowed): each row's band, headroom and flags;
                           * NULL: none (calibrate, which reads only the times) */
  const trust_table *trust_fallback; /* the table of a row whose stack has none (validate --trust-out: the flags
                                      * of the rows it writes a table from); NULL: such a row is not assessed */
  gboolean no_profile_column; /* refuse a `profile` or `stack` column (calibrate fits the command's stack on its profile) */
  pool_cfg pool;
} predict_cfg;

/* The input columns predict reads: the required ones, then the optional ones, then the layout's switches'
 * (layout.h LAYOUT_SHOW_COLUMN); a new array of n names (static strings), the caller g_free()s it. */
const char **predict_columns(guint *n);
/* Columns a table must have. */
gboolean predict_check_columns(const csv_table *t, const char *path, GError **err);
/* The request of one row; FALSE with err (the row's reason) when the row is invalid. */
gboolean predict_row_request(const csv_table *t, guint row, const predict_cfg *cfg, sim_request *out, GError **err);
/* Predict every row; returns [t->rows->len] predictions (caller frees). */
prediction *predict_table(const csv_table *t, const predict_cfg *cfg);
/* predict IN -> OUT (IN's columns plus pred_*); *invalid (may be NULL) the rows that could not be predicted,
 * their reason in pred_error. A table of which every row is invalid is refused (err names the first row's
 * reason) and nothing is written. */
gboolean predict_file(const char *in, const char *out, const predict_cfg *cfg, guint *invalid, GError **err);

#endif
