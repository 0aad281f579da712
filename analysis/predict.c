/* predict -- see predict.h. The rows become requests here; the worker pool (pool.c) evaluates them. */
#include "predict.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "energy.h"
#include "common/lsim_error.h"
#include "platforms/stack_set.h"
#include "workloads/axes.h"
#include "workloads/partition.h"

/* the required columns, then the optional ones; then the layout's enumerations' and switches' (layout.h
 * LAYOUT_SHOW_COLUMN), in the field table's order */
static const char *const COLUMNS[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                      "attention_kernel", "micro_batch", "tp", "pp", "sp", "partition", "model_file",
                                      "profile", "stack", "ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory",
                                      "norm_kernel", "fabric", "leaf_nodes", "oversubscription", "schedule",
                                      "virtual_stages", "cp", "zero", "overlap_grad_reduce", "overlap_param_gather",
                                      "precision", "ep", "etp", "moe_capacity_factor", "stack_set", "cuda_graph_scope"};
#define N_REQUIRED 11
G_STATIC_ASSERT(N_REQUIRED < G_N_ELEMENTS(COLUMNS));

const char **predict_columns(guint *n)
{
  gsize nf;
  const layout_field *fs = layout_fields(&nf);
  const char **cols = g_new(const char *, G_N_ELEMENTS(COLUMNS) + nf);
  memcpy(cols, COLUMNS, sizeof COLUMNS);
  *n = G_N_ELEMENTS(COLUMNS);
  for (gsize i = 0; i < nf; i++) /* the enumerations' (key) and the switches' (name), in the table's order */
    if (fs[i].en ? (fs[i].en->shows & LAYOUT_SHOW_COLUMN) : (fs[i].shows & LAYOUT_SHOW_COLUMN))
      cols[(*n)++] = fs[i].en ? fs[i].en->key : fs[i].name;
  return cols;
}

/* The switch whose column col is (layout.h LAYOUT_SHOW_COLUMN), NULL when none. */
static const layout_field *switch_column(const char *col)
{
  gsize nf;
  const layout_field *fs = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++)
    if ((fs[i].shows & LAYOUT_SHOW_COLUMN) && !strcmp(fs[i].name, col)) return &fs[i];
  return NULL;
}

gboolean predict_check_columns(const csv_table *t, const char *path, GError **err)
{
  for (size_t i = 0; i < N_REQUIRED; i++)
    if (csv_column(t, COLUMNS[i]) < 0) {
      g_autoptr(GString) needed = g_string_new(COLUMNS[0]);
      for (size_t j = 1; j < N_REQUIRED; j++) g_string_append_printf(needed, ", %s", COLUMNS[j]);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (needed: %s)", path, COLUMNS[i],
                  needed->str);
      return FALSE;
    }
  return TRUE;
}

/* Every column a row is read by is one of COLUMNS: calibrate builds its simulation table of those
 * (predict_columns), and a column missing there would be dropped from every row it fits, silently
 * (schedule, virtual_stages and cp once were). */
static gboolean is_predict_column(const char *col)
{
  for (size_t i = 0; i < G_N_ELEMENTS(COLUMNS); i++)
    if (!strcmp(COLUMNS[i], col)) return TRUE;
  const layout_field *e = layout_enum_field(col);
  return switch_column(col) != NULL || (e && (e->en->shows & LAYOUT_SHOW_COLUMN) && !strcmp(e->en->key, col));
}

static gboolean row_int(const csv_table *t, guint r, const char *col, int *out, GError **err)
{
  g_assert(is_predict_column(col));
  const char *s = csv_cell(t, r, csv_column(t, col));
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (g_ascii_isdigit(*s) && !*end && (errno == ERANGE || v > 1000000000)) { /* digits, too many */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is out of range (allowed: %s)", col, s,
                !strcmp(col, "sp") ? "0, 1" : "a whole number from 0 to 1000000000");
    return FALSE;
  }
  if (!g_ascii_isdigit(*s) || errno || *end) { /* strict: no blanks, no sign */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is not a whole number (allowed: %s)", col, s,
                !strcmp(col, "sp") ? "0, 1" : "plain digits such as 1 or 2048, no blanks or signs");
    return FALSE;
  }
  *out = (int)v;
  return TRUE;
}

/* An optional column's cell of row r: "" when the table has no such column. */
static const char *row_opt(const csv_table *t, guint r, const char *col)
{
  g_assert(is_predict_column(col));
  int c = csv_column(t, col);
  return c >= 0 ? csv_cell(t, r, c) : "";
}

/* The row's model: its model_file, --model-file, or the shipped model it names; a name beside a
 * file must be the file's. */
static gboolean row_model(const csv_table *t, guint r, const predict_cfg *cfg, model *m, GError **err)
{
  const char *name = csv_cell(t, r, csv_column(t, "model")), *file = row_opt(t, r, "model_file");
  if (*file && cfg->model_file) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "model_file: '%s' given in the table and --model-file on the command line (allowed: one of the two)", file);
    return FALSE;
  }
  if (*file && !model_load_file(file, m, err)) return FALSE;
  if (!*file && cfg->model_file) *m = *cfg->model_file;
  if (!*file && !cfg->model_file) return model_load_named(name, m, err);
  if (*name && strcmp(name, m->name)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: '%s' but the model file holds '%s' (allowed: %s or empty)",
                name, m->name, m->name);
    return FALSE;
  }
  return TRUE;
}

/* The row's platform: its own profile (with the command's what-ifs) or the command's, its own stack (with the
 * command's --stack-set) or the command's, its own stack_set keys, then its own what-ifs. */
static gboolean row_platform(const csv_table *t, guint r, const predict_cfg *cfg, sim_request *rq, GError **err)
{
  const char *prof = row_opt(t, r, "profile"), *stack = row_opt(t, r, "stack"), *set = row_opt(t, r, "stack_set");
  const char *own = *prof ? "profile" : *stack ? "stack" : *set ? "stack_set" : NULL;
  if (own && cfg->no_profile_column) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' in a table row; calibrate fits the stack of --stack on "
                "the profile of --profile (allowed: an empty %s column, or none)", own,
                *prof ? prof : *stack ? stack : set, own);
    return FALSE;
  }
  if (*prof) {
    if (!profile_load_named(prof, &rq->prof, err)) return FALSE;
    rq->capacity_gib = rq->prof.memory_gib;
    if (!whatif_apply(&cfg->whatif, &rq->prof, &rq->capacity_gib, err)) return FALSE;
  }
  if (*stack) {
    if (!stack_load_named(stack, &rq->prof.stack, err)) return FALSE;
    stack_settings_apply(cfg->stack_sets, &rq->prof.stack);
    if (!cfg->partition_set) rq->gen.partition = rq->prof.stack.partition;
  }
  if (*set) {
    g_autoptr(GArray) own_sets = g_array_new(FALSE, FALSE, sizeof(stack_setting));
    if (!stack_settings_parse_list(own_sets, set, "stack_set", err)) return FALSE;
    stack_settings_apply(own_sets, &rq->prof.stack);
  }
  plat_whatif w = {{0}};
  for (int a = 0; a < WHATIF_N; a++) {
    const char *v = row_opt(t, r, whatif_column(a));
    if (*v && !whatif_parse(a, whatif_column(a), v, &w.v[a], err)) return FALSE;
  }
  return whatif_apply(&w, &rq->prof, &rq->capacity_gib, err);
}

gboolean predict_row_request(const csv_table *t, guint r, const predict_cfg *cfg, sim_request *rq, GError **err)
{
  memset(rq, 0, sizeof *rq);
  rq->prof = cfg->prof;
  rq->capacity_gib = cfg->capacity_gib;
  rq->gen = cfg->gen;
  rq->l = layout_default();
  if (!row_model(t, r, cfg, &rq->m, err)) return FALSE;
  int vocab, sp;
  layout *l = &rq->l;
  if (!row_int(t, r, "vocab", &vocab, err) || !row_int(t, r, "seq_len", &l->seq_len, err) ||
      !row_int(t, r, "global_batch", &l->global_batch, err) || !row_int(t, r, "gpus", &l->gpus, err) ||
      !row_int(t, r, "micro_batch", &l->micro_batch, err) || !row_int(t, r, "sp", &sp, err))
    return FALSE;
  for (int a = 0; a < AXIS_N; a++) { /* the axes' columns (axes.h); an optional one's empty cell is 1 */
    const axis_info *ax = axis_get(a);
    if (!ax->column || (ax->column_optional && !*row_opt(t, r, ax->column))) continue;
    int v;
    if (!row_int(t, r, ax->column, &v, err)) return FALSE;
    axis_set_size(l, a, v);
  }
  if (vocab < 1 || vocab > MODEL_MAX_VOCAB) { /* as --vocab: 0 is refused, not "the model's" */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "vocab: '%d' is not a vocabulary size (allowed: 1 to %d)", vocab,
                MODEL_MAX_VOCAB);
    return FALSE;
  }
  rq->m.vocab = vocab;
  if (sp > 1) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "sp: '%d' is neither off nor on (allowed: 0, 1)", sp);
    return FALSE;
  }
  l->sp = sp == 1;
  /* the enumerations of the layout's field table with columns of their own here (layout.h layout_enum) */
  if (!layout_enum_parse(layout_enum_field("checkpointing"), csv_cell(t, r, csv_column(t, "checkpointing")),
                         (int *)&l->ckpt, err) ||
      !layout_enum_parse(layout_enum_field("attention_kernel"), csv_cell(t, r, csv_column(t, "attention_kernel")),
                         (int *)&l->attn, err))
    return FALSE;
  const char *normk = row_opt(t, r, "norm_kernel"); /* optional; empty: as the stack does */
  if (*normk && !layout_enum_parse(layout_enum_field("norm_kernel"), normk, (int *)&l->norm_kernel, err)) return FALSE;
  gsize nf;
  const layout_field *fs = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++) { /* the enumerations' columns (layout.h layout_enum, LAYOUT_SHOW_COLUMN); empty: 0 */
    if (!fs[i].en || !(fs[i].en->shows & LAYOUT_SHOW_COLUMN)) continue;
    const char *cell = row_opt(t, r, fs[i].en->key);
    int v = 0;
    if (*cell && !layout_enum_parse(&fs[i], cell, &v, err)) return FALSE;
    *(int *)((char *)l + fs[i].offset) = v;
  }
  /* optional: the ZeRO stage and the overlaps (empty: the row's stack's, stack_layout_defaults) */
  unsigned given = 0;
  if (*row_opt(t, r, "zero") && !row_int(t, r, "zero", &l->zero, err)) return FALSE;
  if (*row_opt(t, r, "zero")) given |= STACK_GIVEN_ZERO;
  if (l->zero > 3) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "zero: '%d' is not a ZeRO stage (allowed: 0, 1, 2, 3)", l->zero);
    return FALSE;
  }
  static const char *const overlaps[] = {"overlap_grad_reduce", "overlap_param_gather"};
  gboolean *flags[] = {&l->overlap_grad_reduce, &l->overlap_param_gather};
  for (size_t i = 0; i < G_N_ELEMENTS(overlaps); i++) {
    int v = 0;
    if (*row_opt(t, r, overlaps[i]) && !row_int(t, r, overlaps[i], &v, err)) return FALSE;
    if (v > 1) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%d' is neither off nor on (allowed: 0, 1)", overlaps[i], v);
      return FALSE;
    }
    *flags[i] = v == 1;
    if (*row_opt(t, r, overlaps[i])) given |= i == 0 ? STACK_GIVEN_OVERLAP_GRAD_REDUCE : STACK_GIVEN_OVERLAP_PARAM_GATHER;
  }
  /* optional: the layout's switches (layout.h LAYOUT_SHOW_COLUMN: the MoE all-to-all overlap, the full-iteration
   * CUDA graph, ...); empty = off */
  for (gsize i = 0; i < nf; i++) {
    if (!(fs[i].shows & LAYOUT_SHOW_COLUMN)) continue;
    int v = 0;
    if (*row_opt(t, r, fs[i].name) && !row_int(t, r, fs[i].name, &v, err)) return FALSE;
    if (v < 0 || v > 1) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%d' is neither off nor on (allowed: 0, 1)", fs[i].name, v);
      return FALSE;
    }
    *(gboolean *)((char *)l + fs[i].offset) = v == 1;
  }
  /* optional: the parts of each layer captured as CUDA graphs, '+'-joined (layout.h layout_cg_scope); empty = none */
  const char *scope = row_opt(t, r, "cuda_graph_scope");
  if (*scope && !layout_cg_scope_parse(scope, &l->cuda_graph_scope, err)) return FALSE;
  /* optional: the training precision; empty = bf16 */
  const char *prec = row_opt(t, r, "precision");
  if (*prec && !layout_enum_parse(layout_enum_field("precision"), prec, &l->precision, err)) return FALSE;
  /* optional: the experts' capacity factor (docs/moe.md); empty = the model's (dropless unless it has one) */
  const char *cf = row_opt(t, r, "moe_capacity_factor");
  if (*cf) {
    char *end;
    errno = 0;
    l->moe_capacity_factor = strtod(cf, &end);
    if (errno || end == cf || *end || !(l->moe_capacity_factor > 0 && l->moe_capacity_factor <= 64)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "moe_capacity_factor: '%s' is not a capacity factor (allowed: a number above 0 up to 64; empty: "
                  "dropless or the model's)", cf);
      return FALSE;
    }
  }
  if (!row_platform(t, r, cfg, rq, err)) return FALSE;
  stack_layout_defaults(&rq->prof.stack, l, given);
  /* optional: how the run split its layers over the stages; empty = --partition, or the row's stack's */
  const char *part = row_opt(t, r, "partition");
  if (*part && !partition_parse_method(part, &rq->gen.partition, err)) return FALSE;
  /* optional: the pipeline schedule and its chunks per stage; empty = the study's 1F1B, one chunk */
  const char *sched = row_opt(t, r, "schedule");
  if (*sched && !layout_enum_parse(layout_enum_field("schedule"), sched, &l->schedule, err)) return FALSE;
  if (*row_opt(t, r, "virtual_stages") && !row_int(t, r, "virtual_stages", &l->virtual_stages, err)) return FALSE;
  return layout_validate(l, &rq->m, err);
}

/* Every row's request (rq[r], NULL in todo[r] for an invalid row, whose reason goes to out[r]), then
 * the pool. */
static prediction *predict_rows(const csv_table *t, const predict_cfg *cfg, sim_request *rq, sim_request **todo)
{
  guint rows = t->rows->len;
  prediction *out = g_new0(prediction, rows ? rows : 1);
  for (guint r = 0; r < rows; r++) {
    GError *err = NULL;
    if (predict_row_request(t, r, cfg, &rq[r], &err)) {
      todo[r] = &rq[r];
      continue;
    }
    out[r].status = PRED_INVALID;
    g_strlcpy(out[r].error, err->message, sizeof out[r].error);
    g_error_free(err);
  }
  pool_run(todo, rows, &cfg->pool, out);
  for (guint r = 0; cfg->trusts && r < rows; r++)
    if (todo[r] && out[r].status != PRED_INVALID)
      trust_assess_by_stack(cfg->trusts, cfg->trust_fallback, todo[r], out[r].peak_gib, out[r].capacity_gib,
                            out[r].fragmentation_limit, &out[r].trust);
  return out;
}

prediction *predict_table(const csv_table *t, const predict_cfg *cfg)
{
  guint rows = t->rows->len ? t->rows->len : 1;
  g_autofree sim_request *rq = g_new0(sim_request, rows);
  g_autofree sim_request **todo = g_new0(sim_request *, rows);
  return predict_rows(t, cfg, rq, todo);
}

static char *fmt(double v) { return g_strdup_printf("%.6g", v); }

/* The columns predict writes, in this order; they replace any of the same name in the input. */
static const char *const PRED_COLUMNS[] = {"pred_status", "pred_step_time_s", "pred_mfu", "pred_peak_mem_gib",
                                           "pred_bubble_fraction", "pred_fragmentation_limit", "pred_fidelity",
                                           "pred_band_pct", "pred_headroom_gib", "pred_flags", "pred_energy_j",
                                           "pred_kwh_per_mtok", "pred_error"};

/* Every pred_* cell of row r (cols: their indices, in PRED_COLUMNS' order), empty where p has no
 * value, so nothing of an earlier run survives when a predicted table is predicted again. */
static void set_pred_cells(csv_table *t, guint r, const int *cols, const prediction *p)
{
  const double nums[] = {p->step_time_s, p->mfu, p->peak_gib, p->bubble_fraction, p->fragmentation_limit};
  G_STATIC_ASSERT(G_N_ELEMENTS(nums) + 8 == G_N_ELEMENTS(PRED_COLUMNS));
  /* a layout that did not fit was not replayed (pool.h): it has a memory, not a time */
  const gboolean timed[] = {TRUE, TRUE, FALSE, TRUE, FALSE};
  csv_set(t, r, cols[0], predict_status_name(p->status));
  for (size_t i = 0; i < G_N_ELEMENTS(nums); i++) {
    gboolean empty = p->status == PRED_INVALID || (timed[i] && p->how == PRED_HOW_MEMORY);
    g_autofree char *v = empty ? g_strdup("") : fmt(nums[i]);
    csv_set(t, r, cols[1 + i], v);
  }
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 1], pred_how_name(p->how));
  /* how far to trust it (trust.h): the band of a time, the headroom and the flags of any verdict */
  gboolean assessed = p->status != PRED_INVALID && p->trust.nodes > 0;
  g_autofree char *band = assessed && p->how != PRED_HOW_MEMORY ? fmt(p->trust.band_pct) : g_strdup("");
  g_autofree char *room = assessed ? fmt(p->trust.headroom_gib) : g_strdup("");
  g_autofree char *flags = assessed ? trust_flags_string(p->trust.flags) : g_strdup("");
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 2], band);
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 3], room);
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 4], flags);
  /* energy: of a replayed step only (energy.h) */
  gboolean timed_row = p->status != PRED_INVALID && p->how != PRED_HOW_MEMORY;
  double tokens = p->tokens_per_s * p->step_time_s;
  g_autofree char *joules = timed_row ? fmt(p->energy_j) : g_strdup("");
  g_autofree char *kwh = timed_row && tokens > 0 ? fmt(energy_kwh_per_mtok(p->energy_j, tokens)) : g_strdup("");
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 5], joules);
  csv_set(t, r, cols[G_N_ELEMENTS(nums) + 6], kwh);
  csv_set(t, r, cols[G_N_ELEMENTS(PRED_COLUMNS) - 1], p->error);
}

/* Row r's platform cells, as its request has them (the command's values where the row had none), so
 * that a predicted table records what it was computed with. A row that is invalid keeps its cells. */
static void set_platform_cells(csv_table *t, guint r, const predict_cfg *cfg, const sim_request *rq,
                               const prediction *p)
{
  if (!rq || p->status == PRED_INVALID) return;
  int c = csv_column(t, "profile");
  if (!*csv_cell(t, r, c)) csv_set(t, r, c, cfg->profile_arg ? cfg->profile_arg : rq->prof.name);
  c = csv_column(t, "stack");
  if (!*csv_cell(t, r, c)) csv_set(t, r, c, cfg->stack_arg ? cfg->stack_arg : rq->prof.stack.name);
  if (rq->prof.stack.set[0]) csv_set(t, r, csv_column(t, "stack_set"), rq->prof.stack.set); /* the command's and its own */
  for (int a = 0; a < WHATIF_N; a++) {
    double v = a == WHATIF_GPU_MEMORY ? rq->capacity_gib : whatif_profile_value(a, &rq->prof);
    g_autofree char *s = whatif_format(a, v);
    csv_set(t, r, csv_column(t, whatif_column(a)), s);
  }
}

gboolean predict_file(const char *in, const char *outp, const predict_cfg *cfg, guint *invalid, GError **err)
{
  g_autoptr(csv_table) t = csv_read(in, err);
  if (!t || !predict_check_columns(t, in, err)) return FALSE;
  guint rows = t->rows->len ? t->rows->len : 1;
  g_autofree sim_request *rq = g_new0(sim_request, rows);
  g_autofree sim_request **todo = g_new0(sim_request *, rows);
  g_autofree prediction *p = predict_rows(t, cfg, rq, todo);
  guint bad = 0;
  for (guint r = 0; r < t->rows->len; r++) bad += p[r].status == PRED_INVALID;
  if (invalid) *invalid = bad;
  if (t->rows->len > 0 && bad == t->rows->len) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: every row is invalid, nothing written (allowed: a table with "
                "at least one valid layout; row 1: %s)", in, p[0].error);
    return FALSE;
  }
  if (csv_column(t, "profile") < 0) csv_add_column(t, "profile");
  if (csv_column(t, "stack") < 0) csv_add_column(t, "stack");
  for (int a = 0; a < WHATIF_N; a++)
    if (csv_column(t, whatif_column(a)) < 0) csv_add_column(t, whatif_column(a));
  for (guint r = 0; r < t->rows->len && csv_column(t, "stack_set") < 0; r++) /* only where a key was set */
    if (todo[r] && p[r].status != PRED_INVALID && todo[r]->prof.stack.set[0]) csv_add_column(t, "stack_set");
  for (guint r = 0; r < t->rows->len; r++) set_platform_cells(t, r, cfg, todo[r], &p[r]);
  int cols[G_N_ELEMENTS(PRED_COLUMNS)];
  for (size_t i = 0; i < G_N_ELEMENTS(PRED_COLUMNS); i++) cols[i] = csv_add_column(t, PRED_COLUMNS[i]);
  for (guint r = 0; r < t->rows->len; r++) set_pred_cells(t, r, cols, &p[r]);
  return csv_write(t, outp, err);
}
