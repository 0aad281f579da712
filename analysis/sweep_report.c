/* sweep_report -- see sweep_report.h. */
#include "sweep_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "predict.h"
#include "sweep.h"
#include "workloads/block.h"
#include "workloads/emit.h"
#include "workloads/category.h"
#include "workloads/layout.h"

static const char *const PLATFORM[] = {"profile", "stack", "gpus", "ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory",
                                       "fabric", "leaf_nodes", "oversubscription"};
gboolean sweep_parse_format(const char *s, sweep_format *out, GError **err)
{
  static const char *const names[] = {"text", "csv", "json"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, names[i])) {
      *out = (sweep_format)i;
      return TRUE;
    }
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--format: invalid value '%s' (allowed: text, csv, json)", s);
  return FALSE;
}

static const char *cell(const csv_table *t, guint r, const char *col) { return csv_cell(t, r, csv_column(t, col)); }
static double num(const csv_table *t, guint r, const char *col) { return g_ascii_strtod(cell(t, r, col), NULL); }

/* "GPU" after a count of 1, else "GPUs". */
static const char *gpus_word(const char *count) { return strcmp(count, "1") ? "GPUs" : "GPU"; }

char *sweep_platform_label(const csv_table *t, guint r)
{
  return g_strdup_printf("profile %s, stack %s, %s %s, ib_gbps %s, nvlink_gbps %s, nics_per_node %s, gpu_memory %s, "
                         "fabric %s, leaf_nodes %s, oversubscription %s",
                         cell(t, r, "profile"), cell(t, r, "stack"), cell(t, r, "gpus"), gpus_word(cell(t, r, "gpus")), cell(t, r, "ib_gbps"),
                         cell(t, r, "nvlink_gbps"), cell(t, r, "nics_per_node"), cell(t, r, "gpu_memory"),
                         cell(t, r, "fabric"), cell(t, r, "leaf_nodes"), cell(t, r, "oversubscription"));
}

/* dp of row r, gpus / (tp * pp * cp), as text; "" where a column is missing or the product does not divide. */
static char *dp_of(const csv_table *t, guint r)
{
  long g = atol(cell(t, r, "gpus")), tp = atol(cell(t, r, "tp")), pp = atol(cell(t, r, "pp"));
  long cp = *cell(t, r, "cp") ? atol(cell(t, r, "cp")) : 1;
  if (g <= 0 || tp <= 0 || pp <= 0 || cp <= 0 || g % (tp * pp * cp)) return g_strdup("");
  return g_strdup_printf("%ld", g / (tp * pp * cp));
}

/* Appends fmt's " NAMEVALUE" where column col holds a value other than quiet (the one its absence stands for). */
static void opt_suffix(GString *s, const csv_table *t, guint r, const char *col, const char *quiet, const char *fmt)
{
  const char *v = cell(t, r, col);
  if (*v && strcmp(v, quiet)) g_string_append_printf(s, fmt, v);
}

char *sweep_layout_label_except(const csv_table *t, guint r, const char *swept)
{
  g_autofree char *sched = sweep_schedule_suffix(cell(t, r, "schedule"), cell(t, r, "virtual_stages"));
  g_autofree char *cp = sweep_cp_suffix(cell(t, r, "cp"));
  g_autofree char *dp = g_strcmp0(swept, "gpus") ? dp_of(t, r) : g_strdup("");
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "tp%s pp%s%s", cell(t, r, "tp"), cell(t, r, "pp"), cp);
  if (*dp) g_string_append_printf(s, " dp%s", dp);
  g_string_append_printf(s, " mb%s sp%s %s %s%s", cell(t, r, "micro_batch"), cell(t, r, "sp"),
                         cell(t, r, "checkpointing"), cell(t, r, "attention_kernel"), sched);
  /* the options whose default (the study's) the label leaves unsaid: each named where it differs, so that two
   * different layouts never print one label */
  opt_suffix(s, t, r, "norm_kernel", "", " norm-%s");
  opt_suffix(s, t, r, "zero", "1", " zero%s");
  opt_suffix(s, t, r, "overlap_grad_reduce", "0", "%.0s overlap-grad");
  opt_suffix(s, t, r, "overlap_param_gather", "0", "%.0s overlap-param");
  opt_suffix(s, t, r, "precision", "bf16", " %s");
  const char *const moe[][2] = {{"ep", " ep%s"}, {"etp", " etp%s"}, {"moe_imbalance", " imb%s"}};
  for (size_t i = 0; i < G_N_ELEMENTS(moe); i++) /* expert parallelism (docs/moe.md) where not 1 (0: a table's blank) */
    if (strcmp(cell(t, r, moe[i][0]), "0")) opt_suffix(s, t, r, moe[i][0], "1", moe[i][1]);
  return g_string_free(s, FALSE);
}

char *sweep_layout_label(const csv_table *t, guint r) { return sweep_layout_label_except(t, r, NULL); }

char *sweep_row_label(const csv_table *t, guint r)
{
  g_autofree char *lay = sweep_layout_label(t, r);
  GString *s = g_string_new(lay);
  opt_suffix(s, t, r, "partition", "", ", partition %s");
  for (size_t i = 0; i < G_N_ELEMENTS(PLATFORM); i++) /* a table's platform columns, where it has them */
    if (strcmp(PLATFORM[i], "gpus") && *cell(t, r, PLATFORM[i]))
      g_string_append_printf(s, ", %s %s", PLATFORM[i], cell(t, r, PLATFORM[i]));
  return g_string_free(s, FALSE);
}

char *sweep_cp_suffix(const char *cp)
{
  if (!*cp || !strcmp(cp, "1")) return g_strdup(""); /* no context parallelism: the label it always had */
  return g_strdup_printf(" cp%s", cp);
}

char *sweep_schedule_suffix(const char *schedule, const char *virtual_stages)
{
  if (!*schedule || !strcmp(schedule, "1f1b")) return g_strdup(""); /* the study's: the label it always had */
  if (*virtual_stages && strcmp(virtual_stages, "1")) return g_strdup_printf(" %s v%s", schedule, virtual_stages);
  return g_strdup_printf(" %s", schedule);
}

/* The platform point of row r, as one string. */
static char *point_key(const csv_table *t, guint r)
{
  GString *k = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(PLATFORM); i++) g_string_append_printf(k, "%s\x1f", cell(t, r, PLATFORM[i]));
  return g_string_free(k, FALSE);
}

typedef struct rank_ctx {
  const csv_table *t;
  int *group; /* platform point of each row, numbered in order of first appearance by index */
} rank_ctx;

/* ok by step time, then pruned (fits, not replayed: slower than the K best, docs/sweep.md), oom, invalid */
static int status_order(const char *s)
{
  return !strcmp(s, "ok") ? 0 : !strcmp(s, "pruned") ? 1 : !strcmp(s, "oom") ? 2 : 3;
}

static int cmp_rows(gconstpointer a, gconstpointer b, gpointer data)
{
  const rank_ctx *c = data;
  guint x = *(const guint *)a, y = *(const guint *)b;
  if (c->group[x] != c->group[y]) return c->group[x] - c->group[y];
  int sx = status_order(cell(c->t, x, "status")), sy = status_order(cell(c->t, y, "status"));
  if (sx != sy) return sx - sy;
  double vx = sx == 0 ? num(c->t, x, "step_time_s") : sx == 2 ? num(c->t, x, "peak_mem_gib") : 0;
  double vy = sy == 0 ? num(c->t, y, "step_time_s") : sy == 2 ? num(c->t, y, "peak_mem_gib") : 0;
  if (vx != vy) return vx < vy ? -1 : 1;
  long ix = atol(cell(c->t, x, "index")), iy = atol(cell(c->t, y, "index"));
  return (ix > iy) - (ix < iy);
}

/* The gap of row r to the best row b of its point: "+3.1% (bubble +2.4 s)". */
static void gap_of(const csv_table *t, guint r, guint b, char **pct, char **cause)
{
  double tr = num(t, r, "step_time_s"), tb = num(t, b, "step_time_s");
  *pct = g_strdup_printf("%.2f", 100.0 * (tr - tb) / tb);
  int worst = -1;
  double grew = 0;
  for (int c = 0; c < TL_N; c++) {
    const char *col = tl_cat_info_of((tl_cat)c)->column;
    double d = num(t, r, col) - num(t, b, col);
    if (d > grew) {
      grew = d;
      worst = c;
    }
  }
  *cause = worst < 0 || r == b ? g_strdup("") : g_strdup_printf("%s +%.3g s", tl_cat_info_of((tl_cat)worst)->gap, grew);
}

/* Rows sorted by index, for grouping: the group numbers follow the enumeration. */
static int cmp_index(gconstpointer a, gconstpointer b, gpointer data)
{
  const csv_table *t = data;
  long x = atol(cell(t, *(const guint *)a, "index")), y = atol(cell(t, *(const guint *)b, "index"));
  return (x > y) - (x < y);
}

/* Columns of the layout a row describes, but the kernel options (equivalence is checked on the rest). */
static const char *const LAYOUT_COLS[] = {"tp", "pp", "cp", "sp", "micro_batch", "schedule", "virtual_stages", "zero",
                                          "overlap_grad_reduce", "overlap_param_gather", "partition", "precision",
                                          "ep", "etp", "moe_imbalance", "pipeline_layout"};

/* The kernel options two rows may differ in and still run the same step: the stack may map two of them onto one
 * kernel (the nemo stack fuses its norms, so flash2+rmsnorm runs flash2's graph; flash1-legacy costs as flash1). */
static const char *const KERNEL_COLS[] = {"checkpointing", "attention_kernel"};

/* The kernel option rows x and y differ in (NULL: none, or more than one). */
static const char *differing_kernel_col(const csv_table *t, guint x, guint y)
{
  const char *which = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(KERNEL_COLS); i++)
    if (csv_column(t, KERNEL_COLS[i]) >= 0 && strcmp(cell(t, x, KERNEL_COLS[i]), cell(t, y, KERNEL_COLS[i]))) {
      if (which) return NULL;
      which = KERNEL_COLS[i];
    }
  return which;
}

/* Row r's request as predict reads it (model, layout, profile and stack), made once; NULL where the row makes none. */
static const sim_request *row_request(GHashTable *cache, const csv_table *t, guint r)
{
  gpointer v;
  if (g_hash_table_lookup_extended(cache, GUINT_TO_POINTER(r), NULL, &v)) return v;
  predict_cfg cfg = {.gen = gen_default_options()};
  sim_request *rq = g_new0(sim_request, 1);
  if (!predict_row_request(t, r, &cfg, rq, NULL)) g_clear_pointer(&rq, g_free);
  g_hash_table_insert(cache, GUINT_TO_POINTER(r), rq);
  return rq;
}

/* Whether rows x and y of one point are the same step by construction: they differ in one kernel option only,
 * and that option maps onto one graph: checkpointing none against selective with a flash kernel, which keeps no
 * attention scores, so selective recomputation has nothing to recompute (workloads/generate.c; their results,
 * step time and peak memory to the last printed digit, must then be equal too, which is checked); or two
 * attention kernels the row's stack runs alike, one block by workloads/block.c's block_same_attention (one
 * efficiency class of the stack's attention table, the same norm fusion and softmax). */
static gboolean equivalent(const csv_table *t, guint x, guint y, GHashTable *requests)
{
  for (size_t i = 0; i < G_N_ELEMENTS(LAYOUT_COLS); i++)
    if (csv_column(t, LAYOUT_COLS[i]) >= 0 && strcmp(cell(t, x, LAYOUT_COLS[i]), cell(t, y, LAYOUT_COLS[i])))
      return FALSE;
  const char *col = differing_kernel_col(t, x, y);
  if (!col) return FALSE;
  if (!strcmp(col, "attention_kernel")) {
    const sim_request *a = row_request(requests, t, x), *b = row_request(requests, t, y);
    if (!a || !b) return FALSE;
    gen_code ga = stack_gen_code(&a->prof.stack), gb = stack_gen_code(&b->prof.stack);
    block_code ca = emit_code_of(&a->l, &ga), cb = emit_code_of(&b->l, &gb);
    return block_same_attention(&a->m, &a->l, &ca, &b->l, &cb);
  }
  const char *cx = cell(t, x, col), *cy = cell(t, y, col);
  gboolean pair = (!strcmp(cx, "none") && !strcmp(cy, "selective")) || (!strcmp(cx, "selective") && !strcmp(cy, "none"));
  int a;
  if (!pair || !layout_enum_parse(layout_enum_field("attention_kernel"), cell(t, x, "attention_kernel"), &a, NULL) ||
      !layout_attn_is_flash((layout_attn)a))
    return FALSE;
  return !strcmp(cell(t, x, "step_time_s"), cell(t, y, "step_time_s")) &&
         !strcmp(cell(t, x, "peak_mem_gib"), cell(t, y, "peak_mem_gib"));
}

/* Whether row r's step time is a statistical tie with the best row b's: the gap is inside their combined band,
 * (t_r - t_b) / t_b <= sqrt(band_r^2 + band_b^2), the band of a difference of two independent errors each within
 * its own (band_pct, the P90 error of the calibration, docs/trust.md). Without a band: no tie. */
static gboolean tied(const csv_table *t, guint r, guint b)
{
  if (!*cell(t, r, "band_pct") || !*cell(t, b, "band_pct")) return FALSE;
  double tr = num(t, r, "step_time_s"), tb = num(t, b, "step_time_s");
  double br = num(t, r, "band_pct"), bb = num(t, b, "band_pct");
  return 100 * (tr - tb) / tb <= sqrt(br * br + bb * bb);
}

static gboolean near_oom(const csv_table *t, guint r) { return strstr(cell(t, r, "flags"), "near-oom") != NULL; }

/* Whether tied row r is to be preferred over row p, both without OOM risk, for its memory headroom: r has at
 * least twice p's headroom, and more by at least PREFER_HEADROOM_SHARE of the GPU's memory (peak + headroom),
 * beyond the memory model's error on the published configurations (docs/memory.md) -- room for it, and for a
 * longer sequence or a larger micro-batch later, at a speed the simulator cannot tell apart. */
#define PREFER_HEADROOM_SHARE 0.10
static gboolean prefer_roomier(const csv_table *t, guint r, guint p)
{
  double capacity = num(t, p, "peak_mem_gib") + num(t, p, "headroom_gib");
  double hr = num(t, r, "headroom_gib"), hp = num(t, p, "headroom_gib");
  return hr >= 2 * hp && hr - hp >= PREFER_HEADROOM_SHARE * capacity;
}

/* The root of row x's class (union-find, path halving). */
static guint class_root(guint *parent, guint x)
{
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* The classes of rows that are one step by a chain of equivalences (none flash2 = selective flash2 = selective
 * flash2+rmsnorm on a stack fusing its norms: each link one kernel option, `equivalent`): rows of one point with
 * the same layout columns but the kernel options, pairwise. parent[r] leads to r's class root. */
static void equivalence_classes(const csv_table *t, guint *parent, GHashTable *requests)
{
  guint n = t->rows->len;
  for (guint r = 0; r < n; r++) parent[r] = r;
  g_autoptr(GHashTable) buckets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  for (guint r = 0; r < n; r++) {
    if (strcmp(cell(t, r, "status"), "ok")) continue;
    GString *k = g_string_new(NULL);
    g_autofree char *pk = point_key(t, r);
    g_string_append(k, pk);
    for (size_t i = 0; i < G_N_ELEMENTS(LAYOUT_COLS); i++)
      if (csv_column(t, LAYOUT_COLS[i]) >= 0) g_string_append_printf(k, "\x1f%s", cell(t, r, LAYOUT_COLS[i]));
    GArray *b = g_hash_table_lookup(buckets, k->str);
    if (!b) {
      b = g_array_new(FALSE, FALSE, sizeof(guint));
      g_hash_table_insert(buckets, g_strdup(k->str), b);
    }
    g_string_free(k, TRUE);
    for (guint i = 0; i < b->len; i++) {
      guint q = g_array_index(b, guint, i);
      if (class_root(parent, q) != class_root(parent, r) && equivalent(t, r, q, requests))
        parent[class_root(parent, r)] = class_root(parent, q);
    }
    g_array_append_val(b, r);
  }
}

csv_table *sweep_rank(const csv_table *t)
{
  guint n = t->rows->len;
  g_autofree guint *order = g_new(guint, n ? n : 1);
  for (guint i = 0; i < n; i++) order[i] = i;
  g_qsort_with_data(order, (gint)n, sizeof(guint), cmp_index, (gpointer)t);
  rank_ctx c = {.t = t, .group = g_new0(int, n ? n : 1)};
  g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++) {
    char *k = point_key(t, order[i]);
    gpointer v;
    if (!g_hash_table_lookup_extended(groups, k, NULL, &v)) {
      v = GINT_TO_POINTER(g_hash_table_size(groups));
      g_hash_table_insert(groups, k, v);
    } else g_free(k);
    c.group[order[i]] = GPOINTER_TO_INT(v);
  }
  g_qsort_with_data(order, (gint)n, sizeof(guint), cmp_rows, &c);
  g_autoptr(GPtrArray) cols = g_ptr_array_new();
  g_ptr_array_add(cols, "rank");
  g_ptr_array_add(cols, "gap_pct");
  g_ptr_array_add(cols, "gap_cause");
  g_ptr_array_add(cols, "same_as");   /* the rank of the row this one is equivalent to by construction */
  g_ptr_array_add(cols, "tie");       /* 1: a statistical tie with the best (bands overlap) */
  g_ptr_array_add(cols, "preferred"); /* 1: the one to prefer among the best and its ties */
  g_ptr_array_add(cols, "dp");        /* gpus / (tp * pp * cp) */
  g_ptr_array_add(cols, "layout");    /* the label: every option that differs (sweep_layout_label) */
  for (guint i = 0; i < t->header->len; i++) g_ptr_array_add(cols, t->header->pdata[i]);
  csv_table *out = csv_new((const char *const *)cols->pdata, cols->len);
  int rank = 0, group = -1;
  guint best = 0;
  g_autofree guint *parent = g_new(guint, n ? n : 1);
  guint pick = G_MAXUINT, pick_out = 0;
  g_autoptr(GHashTable) requests = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  equivalence_classes(t, parent, requests);
  /* class root -> output row of its ranked row (the class's first row in the ranking) */
  g_autoptr(GHashTable) ranked_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i <= n; i++) {
    guint r = i < n ? order[i] : 0;
    if (i == n || c.group[r] != group) {
      if (pick != G_MAXUINT) csv_set(out, pick_out, 5, "1");
      if (i == n) break;
      group = c.group[r];
      rank = 0;
      best = r;
      pick = G_MAXUINT;
    }
    guint o = csv_append_row_from(out, t, r);
    g_autofree char *dp = dp_of(t, r), *label = sweep_layout_label(t, r);
    csv_set(out, o, 6, dp);
    csv_set(out, o, 7, label);
    if (strcmp(cell(t, r, "status"), "ok")) continue;
    g_autofree char *pct = NULL, *cause = NULL;
    gap_of(t, r, best, &pct, &cause);
    csv_set(out, o, 1, pct);
    csv_set(out, o, 2, cause);
    gpointer root = GUINT_TO_POINTER(class_root(parent, r)), first;
    if (g_hash_table_lookup_extended(ranked_of, root, NULL, &first)) { /* the same step as a ranked row */
      csv_set(out, o, 3, csv_cell(out, GPOINTER_TO_UINT(first), 0));
      continue;
    }
    g_hash_table_insert(ranked_of, root, GUINT_TO_POINTER(o));
    g_autofree char *rk = g_strdup_printf("%d", ++rank);
    csv_set(out, o, 0, rk);
    if (r == best || tied(t, r, best)) {
      if (r != best) csv_set(out, o, 4, "1");
      /* the one to prefer: the fastest of the best and its ties that runs no OOM risk (near-oom, docs/trust.md),
       * the best where all do; then, among the tied without risk, one with clearly more headroom (prefer_roomier) */
      if (pick == G_MAXUINT || (near_oom(t, pick) && !near_oom(t, r))) {
        pick = r;
        pick_out = o;
      } else if (!near_oom(t, pick) && !near_oom(t, r) && prefer_roomier(t, r, pick)) {
        pick = r;
        pick_out = o;
      }
    }
  }
  g_free(c.group);
  return out;
}

/* Counts over the whole table for the summary. */
typedef struct counts {
  int rows, ok, oom_pruned, oom_replayed, invalid, fast, full, bound_pruned;
  GHashTable *reasons; /* field -> count */
  GHashTable *examples; /* field -> the first row's message (borrowed from the table) */
  GPtrArray *reason_order;
} counts;

static void count(const csv_table *t, counts *c)
{
  memset(c, 0, sizeof *c);
  c->reasons = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  c->examples = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  c->reason_order = g_ptr_array_new();
  c->rows = (int)t->rows->len;
  for (guint r = 0; r < t->rows->len; r++) {
    const char *st = cell(t, r, "status"), *fid = cell(t, r, "fidelity");
    if (!strcmp(st, "invalid")) {
      c->invalid++;
      const char *e = cell(t, r, "error"), *colon = strchr(e, ':');
      g_autofree char *k = colon ? g_strndup(e, (gsize)(colon - e)) : g_strdup(e);
      gpointer v = g_hash_table_lookup(c->reasons, k);
      if (!v) {
        g_ptr_array_add(c->reason_order, g_strdup(k));
        g_hash_table_insert(c->examples, g_strdup(k), (gpointer)e);
      }
      g_hash_table_insert(c->reasons, g_strdup(k), GINT_TO_POINTER(GPOINTER_TO_INT(v) + 1));
      continue;
    }
    if (!strcmp(st, "ok")) c->ok++;
    else if (!strcmp(st, "pruned")) c->bound_pruned++;
    else if (!strcmp(fid, "memory")) c->oom_pruned++;
    else c->oom_replayed++;
    c->fast += !strcmp(fid, "fast");
    c->full += !strcmp(fid, "full");
  }
}

static void counts_clear(counts *c)
{
  g_hash_table_destroy(c->reasons);
  g_hash_table_destroy(c->examples);
  g_ptr_array_free(c->reason_order, TRUE);
}

static char *reasons_text(const counts *c)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < c->reason_order->len; i++) {
    const char *k = c->reason_order->pdata[i];
    g_string_append_printf(s, "%s%s %d", i ? ", " : "", k, GPOINTER_TO_INT(g_hash_table_lookup(c->reasons, k)));
  }
  return g_string_free(s, FALSE);
}

/* " (7.52 B parameters)": the model's count, from the first row that has one (a static buffer). */
static const char *params_note(const csv_table *t)
{
  static char note[64];
  note[0] = 0;
  if (csv_column(t, "params") < 0) return note;
  for (guint r = 0; r < t->rows->len; r++)
    if (*cell(t, r, "params")) {
      g_snprintf(note, sizeof note, " (%.3f B parameters)", num(t, r, "params") / 1e9);
      break;
    }
  return note;
}

/* " (= selective, flash2+rmsnorm, selective flash2+rmsnorm)": the kernel options of each row of row r's point
 * equivalent to it by construction, where they differ from row r's. */
static char *equivalents_note(const csv_table *t, guint r)
{
  if (csv_column(t, "same_as") < 0 || !*cell(t, r, "rank")) return g_strdup("");
  g_autofree char *key = point_key(t, r);
  GString *s = g_string_new(NULL);
  for (guint q = 0; q < t->rows->len; q++) {
    if (strcmp(cell(t, q, "same_as"), cell(t, r, "rank"))) continue;
    g_autofree char *k = point_key(t, q);
    if (strcmp(k, key)) continue;
    GString *d = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(KERNEL_COLS); i++)
      if (csv_column(t, KERNEL_COLS[i]) >= 0 && strcmp(cell(t, q, KERNEL_COLS[i]), cell(t, r, KERNEL_COLS[i])))
        g_string_append_printf(d, "%s%s", d->len ? " " : "", cell(t, q, KERNEL_COLS[i]));
    if (d->len) g_string_append_printf(s, "%s%s", s->len ? ", " : " (= ", d->str);
    g_string_free(d, TRUE);
  }
  if (s->len) g_string_append(s, ")");
  return g_string_free(s, FALSE);
}

/* The line after a point's table where its best is tied: which ranks, and which to prefer and why. */
static void tie_line(const csv_table *t, const GArray *shown, GString *out)
{
  if (csv_column(t, "tie") < 0 || shown->len == 0) return;
  GString *ranks = g_string_new(NULL);
  guint best = g_array_index(shown, guint, 0), pick = best;
  for (guint i = 0; i < shown->len; i++) {
    guint r = g_array_index(shown, guint, i);
    if (i == 0 || !strcmp(cell(t, r, "tie"), "1")) g_string_append_printf(ranks, "%s#%s", ranks->len ? ", " : "", cell(t, r, "rank"));
    if (!strcmp(cell(t, r, "preferred"), "1")) pick = r;
  }
  if (!strchr(ranks->str, ',')) {
    g_string_free(ranks, TRUE);
    return;
  }
  g_string_append_printf(out, "statistical tie: %s (each within the combined band of its and #1's step time: the "
                         "simulator cannot tell them apart; docs/sweep.md)\n", ranks->str);
  if (pick == best)
    g_string_append_printf(out, "prefer #1: the fastest, %s\n", near_oom(t, best) ? "though near OOM like every tied "
                           "layout" : "without OOM risk");
  else if (near_oom(t, best))
    g_string_append_printf(out, "prefer #%s: the same speed within the bands (+%s%%) without #1's OOM risk: %.1f GiB "
                           "headroom against %.1f GiB\n", cell(t, pick, "rank"), cell(t, pick, "gap_pct"),
                           num(t, pick, "headroom_gib"), num(t, best, "headroom_gib"));
  else
    g_string_append_printf(out, "prefer #%s: the same speed within the bands (+%s%%) with %.1f GiB headroom against "
                           "#1's %.1f GiB (room for the memory model's error, a longer sequence or a larger "
                           "micro-batch; docs/sweep.md)\n", cell(t, pick, "rank"), cell(t, pick, "gap_pct"),
                           num(t, pick, "headroom_gib"), num(t, best, "headroom_gib"));
  g_string_free(ranks, TRUE);
}

/* ", 2 shown as an equivalent's row": what the fit count holds beyond the rows shown (a static buffer). */
static const char *equal_note(int same)
{
  static char note[96];
  note[0] = 0;
  if (same) g_snprintf(note, sizeof note, " (%d the same step as a row above, listed in its '(= ...)')", same);
  return note;
}

static void render_text(const csv_table *t, const sweep_view *v, GString *out)
{
  counts c;
  count(t, &c);
  if (t->rows->len)
    g_string_append_printf(out, "layoutsim sweep: %s%s%s, seq %s, global batch %s, vocab %s, partition %s\n",
                           cell(t, 0, "model"), params_note(t), "", cell(t, 0, "seq_len"), cell(t, 0, "global_batch"),
                           cell(t, 0, "vocab"), cell(t, 0, "partition"));
  g_autofree char *why = reasons_text(&c);
  g_autofree char *by_bound = c.bound_pruned ? g_strdup_printf(", %d pruned by bound (slower than the best shown: "
                                                               "not replayed)", c.bound_pruned) : g_strdup("");
  g_string_append_printf(out, "layouts: %d enumerated, %d invalid%s%s%s, %d do not fit (%d not replayed)%s, %d replayed "
                         "(%d fast, %d full)\n", c.rows, c.invalid, c.invalid ? " (" : "", why, c.invalid ? ")" : "",
                         c.oom_pruned + c.oom_replayed, c.oom_pruned, by_bound, c.fast + c.full, c.fast, c.full);
  if (!v->show_invalid) /* what each count of invalid layouts means: its first row's reason */
    for (guint i = 0; i < c.reason_order->len; i++) {
      const char *k = c.reason_order->pdata[i];
      g_string_append_printf(out, "  invalid %s (%d), e.g. %s\n", k, GPOINTER_TO_INT(g_hash_table_lookup(c.reasons, k)),
                             (const char *)g_hash_table_lookup(c.examples, k));
    }
  int top = v->top > 0 ? v->top : 10;
  int shown = 0, fit = 0, nonfit = 0, same = 0, bounded = 0;
  g_autoptr(GArray) shown_rows = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autofree char *key = NULL;
  for (guint r = 0; r <= t->rows->len; r++) {
    g_autofree char *k = r < t->rows->len ? point_key(t, r) : NULL;
    if (!k || !key || strcmp(k, key)) { /* a point ends or begins */
      if (key) tie_line(t, shown_rows, out);
      if (key && fit - same > shown)
        g_string_append_printf(out, "(%d more that fit; --top K shows more)\n", fit - same - shown);
      if (key && bounded) /* fit, not replayed: each slower than every layout shown (docs/sweep.md, "Exact top-K") */
        g_string_append_printf(out, "(%d more that fit, slower than those shown by their bound: not replayed)\n", bounded);
      if (key) g_string_append_printf(out, "%d fit, %d do not%s\n", fit + bounded, nonfit, equal_note(same));
      g_array_set_size(shown_rows, 0);
      same = 0;
      if (!k) break;
      g_free(key);
      key = g_strdup(k);
      shown = fit = nonfit = bounded = 0;
      g_autofree char *pl = sweep_platform_label(t, r);
      g_string_append_printf(out, "\n%s\n%4s  %-40s %9s %5s %6s %9s %7s %8s %8s %7s  %s\n", pl, "rank", "layout",
                             "step_s", "+-%", "MFU%", "tokens/s", "bubble%", "peak_GiB", "headroom", "B/GPU",
                             "gap to best [flags]");
    }
    const char *st = cell(t, r, "status");
    if (!strcmp(st, "oom")) nonfit++;
    if (!strcmp(st, "pruned")) bounded++;
    if (strcmp(st, "ok")) continue;
    fit++;
    if (csv_column(t, "same_as") >= 0 && *cell(t, r, "same_as")) { /* shown as its equivalent's row */
      same++;
      continue;
    }
    if (shown >= top) continue;
    shown++;
    g_array_append_val(shown_rows, r);
    g_autofree char *lay0 = sweep_layout_label(t, r), *eq = equivalents_note(t, r);
    g_autofree char *lay = g_strconcat(lay0, eq, NULL);
    const char *cause = cell(t, r, "gap_cause");
    const char *tie = csv_column(t, "tie") >= 0 && !strcmp(cell(t, r, "tie"), "1") ? " TIE" : "";
    g_autofree char *gap = shown == 1 ? g_strdup("best")
                                      : *cause ? g_strdup_printf("+%s%% (%s)%s", cell(t, r, "gap_pct"), cause, tie)
                                               : g_strdup_printf("+%s%%%s", cell(t, r, "gap_pct"), tie);
    const char *flags = cell(t, r, "flags");
    g_autofree char *band = *cell(t, r, "band_pct") ? g_strdup_printf("%5.1f", num(t, r, "band_pct")) : g_strdup("    -");
    g_autofree char *per_gpu = csv_column(t, "params_per_gpu") >= 0 && *cell(t, r, "params_per_gpu")
                                   ? g_strdup_printf("%7.2f", num(t, r, "params_per_gpu") / 1e9)
                                   : g_strdup("      -");
    g_string_append_printf(out, "%4s  %-40s %9.3f %s %6.2f %9.0f %7.2f %8.1f %8.1f %s  %s%s%s%s\n", cell(t, r, "rank"),
                           lay, num(t, r, "step_time_s"), band, 100 * num(t, r, "mfu"), num(t, r, "tokens_per_s"),
                           100 * num(t, r, "bubble_fraction"), num(t, r, "peak_mem_gib"), num(t, r, "headroom_gib"),
                           per_gpu, gap, *flags ? " [" : "", flags, *flags ? "]" : "");
  }
  if (v->show_invalid && c.invalid) {
    g_string_append(out, "\ninvalid layouts:\n");
    for (guint r = 0; r < t->rows->len; r++) {
      if (strcmp(cell(t, r, "status"), "invalid")) continue;
      g_autofree char *lay = sweep_layout_label(t, r);
      g_string_append_printf(out, "  %s, %s %s: %s\n", lay, cell(t, r, "gpus"), gpus_word(cell(t, r, "gpus")),
                             cell(t, r, "error"));
    }
  }
  counts_clear(&c);
}

/* A cell as JSON: a number where it parses as one, else a string, nothing when empty. */
static void json_cell(cJSON *o, const char *name, const char *v)
{
  if (!*v) return;
  char *end;
  double d = g_ascii_strtod(v, &end);
  if (!*end && isfinite(d) && strcmp(name, "profile") && strcmp(name, "stack") && strcmp(name, "model")) cJSON_AddNumberToObject(o, name, d);
  else cJSON_AddStringToObject(o, name, v);
}

static void render_json(const csv_table *t, const sweep_view *v, GString *out)
{
  counts c;
  count(t, &c);
  cJSON *j = cJSON_CreateObject();
  if (t->rows->len) {
    static const char *const fixed[] = {"model", "model_file", "seq_len", "global_batch", "vocab", "params", "partition"};
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++) json_cell(j, fixed[i], cell(t, 0, fixed[i]));
  }
  cJSON *cn = cJSON_AddObjectToObject(j, "layouts");
  cJSON_AddNumberToObject(cn, "enumerated", c.rows);
  cJSON_AddNumberToObject(cn, "invalid", c.invalid);
  cJSON *why = cJSON_AddObjectToObject(cn, "invalid_by_reason");
  for (guint i = 0; i < c.reason_order->len; i++)
    cJSON_AddNumberToObject(why, c.reason_order->pdata[i],
                            GPOINTER_TO_INT(g_hash_table_lookup(c.reasons, c.reason_order->pdata[i])));
  cJSON_AddNumberToObject(cn, "do_not_fit", c.oom_pruned + c.oom_replayed);
  cJSON_AddNumberToObject(cn, "not_replayed", c.oom_pruned);
  if (c.bound_pruned) cJSON_AddNumberToObject(cn, "pruned_by_bound", c.bound_pruned);
  cJSON_AddNumberToObject(cn, "replayed_fast", c.fast);
  cJSON_AddNumberToObject(cn, "replayed_full", c.full);
  cJSON *points = cJSON_AddArrayToObject(j, "platforms"), *pt = NULL, *rows = NULL;
  cJSON *invalid = cJSON_AddArrayToObject(j, "invalid");
  g_autofree char *key = NULL;
  int shown = 0;
  for (guint r = 0; r < t->rows->len; r++) {
    const char *st = cell(t, r, "status");
    if (!strcmp(st, "invalid")) {
      cJSON *o = cJSON_CreateObject();
      static const char *const cols[] = {"index", "layout", "gpus", "tp", "pp", "cp", "dp", "micro_batch", "sp",
                                         "checkpointing", "attention_kernel", "schedule", "virtual_stages", "zero",
                                         "overlap_grad_reduce", "overlap_param_gather", "precision", "ep", "etp",
                                         "moe_imbalance", "error"};
      for (size_t i = 0; i < G_N_ELEMENTS(cols); i++) json_cell(o, cols[i], cell(t, r, cols[i]));
      cJSON_AddItemToArray(invalid, o);
      continue;
    }
    g_autofree char *k = point_key(t, r);
    if (!key || strcmp(k, key)) {
      g_free(key);
      key = g_strdup(k);
      shown = 0;
      pt = cJSON_CreateObject();
      for (size_t i = 0; i < G_N_ELEMENTS(PLATFORM); i++) json_cell(pt, PLATFORM[i], cell(t, r, PLATFORM[i]));
      rows = cJSON_AddArrayToObject(pt, "layouts");
      cJSON_AddItemToArray(points, pt);
    }
    if (!strcmp(st, "ok") && v->top > 0 && shown >= v->top) continue;
    shown += !strcmp(st, "ok");
    cJSON *o = cJSON_CreateObject();
    static const char *const cols[] = {"rank", "index", "layout", "tp", "pp", "cp", "dp", "micro_batch", "sp",
                                       "checkpointing", "attention_kernel", "schedule", "virtual_stages", "zero",
                                       "overlap_grad_reduce", "overlap_param_gather", "precision", "ep", "etp", "moe_imbalance", "status", "fidelity", "step_time_s", "mfu", "tokens_per_s",
                                       "bubble_fraction", "peak_mem_gib", "headroom_gib", "band_pct", "flags",
                                       "energy_j", "kwh_per_mtok", "gap_pct", "gap_cause", "same_as", "tie",
                                       "preferred", "vocab_padded", "params_per_gpu", "error"};
    for (size_t i = 0; i < G_N_ELEMENTS(cols); i++) json_cell(o, cols[i], cell(t, r, cols[i]));
    if (!strcmp(st, "ok")) {
      cJSON *b = cJSON_AddObjectToObject(o, "breakdown_s");
      for (int c = 0; c < TL_N; c++) json_cell(b, tl_cat_info_of((tl_cat)c)->gap, cell(t, r, tl_cat_info_of((tl_cat)c)->column));
    }
    cJSON_AddItemToArray(rows, o);
  }
  char *s = cJSON_Print(j);
  g_string_append_printf(out, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(j);
  counts_clear(&c);
}

/* CSV: every row, or the best `top` of each point that fit and all the others. */
static void render_csv(const csv_table *t, const sweep_view *v, GString *out)
{
  if (v->top <= 0) {
    csv_format(t, out);
    return;
  }
  g_autoptr(csv_table) kept = csv_new((const char *const *)t->header->pdata, t->header->len);
  for (guint r = 0; r < t->rows->len; r++)
    if (strcmp(cell(t, r, "status"), "ok") || atoi(cell(t, r, "rank")) <= v->top) csv_append_row_from(kept, t, r);
  csv_format(kept, out);
}

void sweep_render(const csv_table *ranked, const sweep_view *v, GString *out)
{
  if (v->format == SWEEP_TEXT) render_text(ranked, v, out);
  else if (v->format == SWEEP_JSON) render_json(ranked, v, out);
  else render_csv(ranked, v, out);
}

/* What the rows of shard files say about their sweep (sweep.h): N and the layouts enumerated, as
 * the first row that said it (path, line). */
typedef struct shard_claim {
  guint64 n, enumerated;
  const char *path;
  guint line;
} shard_claim;

static gboolean parse_count(const char *s, guint64 min, guint64 max, guint64 *out)
{
  return g_ascii_string_to_unsigned(s, 10, min, max, out, NULL);
}

/* Row r of a shard file: its "I/N" and enumerated agree with its index and with the first claim. */
static gboolean check_shard_row(const csv_table *t, guint r, const char *path, int cs, int ce, shard_claim *c,
                                GError **err)
{
  const char *shard = csv_cell(t, r, cs), *total = csv_cell(t, r, ce), *ix = cell(t, r, "index");
  guint line = csv_row_line(t, r);
  g_auto(GStrv) in = g_strsplit(shard, "/", 3);
  guint64 i, n, m, x;
  if (g_strv_length(in) != 2 || !parse_count(in[1], 1, G_MAXUINT32, &n) || !parse_count(in[0], 1, n, &i) ||
      !parse_count(total, 0, G_MAXUINT32, &m)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s line %u: shard '%s' of '%s' layouts (allowed: the I/N and "
                "the count that layoutsim sweep --shard I/N writes)", path, line, shard, total);
    return FALSE;
  }
  if (!parse_count(ix, 0, G_MAXUINT32, &x) || x >= m || x % n != i - 1) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: index '%s' is not in shard %s of %s layouts "
                "(allowed: the indices below %s that are %" G_GUINT64_FORMAT " mod %" G_GUINT64_FORMAT ")", path,
                line, ix, shard, total, total, i - 1, n);
    return FALSE;
  }
  if (!c->path) *c = (shard_claim){.n = n, .enumerated = m, .path = path, .line = line};
  else if (c->n != n || c->enumerated != m) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: shard %s of a sweep of %s layouts, but %s line "
                "%u is of %" G_GUINT64_FORMAT " shards of %" G_GUINT64_FORMAT " (allowed: the shards of one sweep)",
                path, line, shard, total, c->path, c->line, c->n, c->enumerated);
    return FALSE;
  }
  return TRUE;
}

csv_table *sweep_merge(const char *const *paths, int n, GError **err)
{
  guint nc;
  const char *const *cols = sweep_columns(&nc);
  g_autoptr(csv_table) all = csv_new(cols, nc);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  shard_claim claim = {0};
  g_autofree char *id = NULL; /* the sweep's hash (SWEEP_ID_COLUMN), as the first shard says */
  const char *id_path = NULL;
  for (int f = 0; f < n; f++) {
    g_autoptr(csv_table) t = csv_read(paths[f], err);
    if (!t || !sweep_check_table(t, paths[f], err)) return NULL;
    int cs = csv_column(t, SWEEP_SHARD_COLUMN), ce = csv_column(t, SWEEP_ENUMERATED_COLUMN);
    if ((cs < 0) != (ce < 0)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (allowed: the CSV of layoutsim sweep "
                  "--format csv, as --shard writes it)", paths[f], cs < 0 ? SWEEP_SHARD_COLUMN : SWEEP_ENUMERATED_COLUMN);
      return NULL;
    }
    if (cs >= 0 && !sweep_check_shard_columns(t, paths[f], &id, &id_path, err)) return NULL;
    for (guint r = 0; r < t->rows->len; r++) {
      if (!sweep_check_row(t, r, paths[f], all, err)) return NULL;
      const char *ix = cell(t, r, "index");
      const char *other = g_hash_table_lookup(seen, ix);
      if (other) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: index %s is also in %s (allowed: shards of one "
                    "sweep, each once)", paths[f], csv_row_line(t, r), ix, other);
        return NULL;
      }
      if (cs >= 0 && !check_shard_row(t, r, paths[f], cs, ce, &claim, err)) return NULL;
      if (cs >= 0 && strcmp(cell(t, r, SWEEP_ID_COLUMN), id)) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: sweep '%.40s', but %s is of sweep '%s' (allowed: the "
                    "shards of one sweep)", paths[f], csv_row_line(t, r), cell(t, r, SWEEP_ID_COLUMN), id_path, id);
        return NULL;
      }
      g_hash_table_insert(seen, g_strdup(ix), g_strdup(paths[f]));
      csv_append_row_from(all, t, r);
    }
  }
  /* Every index below the sweep's count once: the count the shards say, else the rows found. */
  guint64 want = claim.path ? claim.enumerated : all->rows->len;
  for (guint64 i = 0; i < want; i++) {
    g_autofree char *ix = g_strdup_printf("%" G_GUINT64_FORMAT, i);
    if (g_hash_table_contains(seen, ix)) continue;
    if (claim.path)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "merge: layout index %s, of shard %" G_GUINT64_FORMAT "/%"
                  G_GUINT64_FORMAT ", is in no file (allowed: every shard of the sweep, 1/%" G_GUINT64_FORMAT " to %"
                  G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", each whole)", ix, i % claim.n + 1, claim.n, claim.n,
                  claim.n, claim.n);
    else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "merge: layout index %s is in no file (allowed: every shard "
                  "of the sweep, 1/N to N/N)", ix);
    return NULL;
  }
  return g_steal_pointer(&all);
}
