/* sweep -- see sweep.h. */
#include "sweep.h"

#include "platforms/stack.h"

#include <math.h>
#include "workloads/precision.h"

#include <string.h>

#include "energy.h"
#include "common/lsim_error.h"
#include "workloads/axes.h"
#include "workloads/model_params.h"
#include "workloads/partition.h"
#include "workloads/schedule.h"

/* The canonical table: the enumeration index, the layout as predict reads it, the platform, the result. The
 * categories' t_*_s columns (workloads/category.h's column) stand in two places: those of the first table after
 * kwh_per_mtok, the later ones (late_column) at the end. */
static const char *const HEAD_COLUMNS[] = {
    "index", "model", "model_file", "seq_len", "global_batch", "vocab", "gpus", "checkpointing", "attention_kernel",
    "micro_batch", "tp", "pp", "cp", "sp", "partition", "schedule", "virtual_stages", "zero", "overlap_grad_reduce", "overlap_param_gather", "precision", "profile", "stack", "ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory",
    "fabric", "leaf_nodes", "oversubscription",
    "status", "fidelity", "vocab_padded", "params", "params_per_gpu", "step_time_s", "mfu", "tokens_per_s", "bubble_fraction", "peak_mem_gib", "headroom_gib",
    "band_pct", "flags", "energy_j", "kwh_per_mtok"};
static const char *const MID_COLUMNS[] = {"error", "ep", "etp", "moe_imbalance"};
#define N_COLUMNS (G_N_ELEMENTS(HEAD_COLUMNS) + G_N_ELEMENTS(MID_COLUMNS) + TL_N)

/* The columns in order, made once from the lists above and the category table. */
static const char *const *columns(void)
{
  static gsize done;
  static const char *cols[N_COLUMNS];
  if (g_once_init_enter(&done)) {
    guint n = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(HEAD_COLUMNS); i++) cols[n++] = HEAD_COLUMNS[i];
    for (int c = 0; c < TL_N; c++)
      if (!tl_cat_info_of((tl_cat)c)->late_column) cols[n++] = tl_cat_info_of((tl_cat)c)->column;
    for (size_t i = 0; i < G_N_ELEMENTS(MID_COLUMNS); i++) cols[n++] = MID_COLUMNS[i];
    for (int c = 0; c < TL_N; c++)
      if (tl_cat_info_of((tl_cat)c)->late_column) cols[n++] = tl_cat_info_of((tl_cat)c)->column;
    g_once_init_leave(&done, 1);
  }
  return cols;
}

/* The option that lists each layout axis. */
static const char *const AXIS_OPTIONS[AX_N] = {[AX_TP] = "tp", [AX_PP] = "pp", [AX_SP] = "sp",
                                               [AX_CKPT] = "checkpointing", [AX_ATTN] = "attention-kernel",
                                               [AX_MB] = "micro-batch", [AX_SCHED] = "schedule",
                                               [AX_VS] = "virtual-stages", [AX_CP] = "cp", [AX_PREC] = "precision",
                                               [AX_ZERO] = "zero", [AX_OGR] = "overlap-grad-reduce",
                                               [AX_OPG] = "overlap-param-gather"};

const char *const *sweep_columns(guint *n)
{
  *n = N_COLUMNS;
  return columns();
}

/* Columns a sweep's CSV from before them lacks: its rows had their defaults (cp 1, zero 1, no overlap; a later
 * category's time 0). */
static gboolean optional_column(const char *col)
{
  static const char *const later[] = {"cp", "zero", "overlap_grad_reduce", "overlap_param_gather", "precision",
                                      "vocab_padded", "params", "params_per_gpu", "ep", "etp", "moe_imbalance"};
  for (size_t i = 0; i < G_N_ELEMENTS(later); i++)
    if (!strcmp(col, later[i])) return TRUE;
  for (int c = 0; c < TL_N; c++)
    if (tl_cat_info_of((tl_cat)c)->late_column && !strcmp(col, tl_cat_info_of((tl_cat)c)->column)) return TRUE;
  return FALSE;
}

gboolean sweep_check_table(const csv_table *t, const char *path, GError **err)
{
  const char *const *cols = columns();
  for (size_t i = 0; i < N_COLUMNS; i++)
    if (csv_column(t, cols[i]) < 0 && !optional_column(cols[i])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (allowed: the CSV of layoutsim sweep "
                  "--format csv, as --shard writes it)", path, cols[i]);
      return FALSE;
    }
  return TRUE;
}

gboolean sweep_check_shard_columns(const csv_table *t, const char *path, char **id, const char **id_path, GError **err)
{
  const char *const *cols = columns();
  for (size_t i = 0; i < N_COLUMNS; i++) /* a shard is of this version: no column is optional */
    if (csv_column(t, cols[i]) < 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (allowed: the CSV of layoutsim sweep "
                  "--format csv, as --shard writes it)", path, cols[i]);
      return FALSE;
    }
  if (csv_column(t, SWEEP_ID_COLUMN) < 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (allowed: the CSV of layoutsim sweep "
                "--format csv, as --shard writes it)", path, SWEEP_ID_COLUMN);
    return FALSE;
  }
  if (!*id && t->rows->len) {
    *id = g_strdup(csv_cell(t, 0, csv_column(t, SWEEP_ID_COLUMN)));
    *id_path = path;
  }
  return TRUE;
}

/* One platform point: a profile with its what-ifs, and a GPU count. */
typedef struct point {
  const char *profile_name, *stack_name;
  gpu_profile prof;
  double capacity_gib;
  int gpus;
} point;

static int ival(const GArray *a, guint i) { return g_array_index(a, int, i); }

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The data-parallel degree of tp x pp x cp on `gpus`: 0 where they do not divide it (in 64 bits: listed values
 * of 100,000 each multiply past an int). */
static int dp_of(int gpus, int tp, int pp, int cp)
{
  gint64 used = (gint64)tp * pp * cp;
  return used > 0 && gpus % used == 0 ? (int)(gpus / used) : 0;
}

/* The values of a layout axis at (point, tp, pp, cp): the user's list, or every valid one. */
static GArray *axis_values(const sweep_spec *s, sweep_layout_axis ax, const point *pt, int tp, int pp, int cp, int gb)
{
  GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
  /* the schedules: listed, or the layout's field table's (layout.c E_schedule: the study's 1F1B; the full space
   * every schedule). Below its fewest stages a schedule runs the default's step (zb-h1 at pp 1; layout_validate
   * refuses it there): the default in its place, once (docs/sweep.md) */
  if (ax == AX_SCHED) {
    guint n = s->layout[ax] ? s->layout[ax]->len
                            : (guint)layout_enum_sweep_count(layout_enum_field("schedule"), s->space == SWEEP_SPACE_FULL);
    for (guint i = 0; i < n; i++) {
      int h = s->layout[ax] ? ival(s->layout[ax], i) : (int)i;
      if (pp > 0 && pp < sched_min_stages(h)) h = 0;
      gboolean seen = FALSE;
      for (guint k = 0; k < v->len && !seen; k++) seen = ival(v, k) == h;
      if (!seen) g_array_append_val(v, h);
    }
    return v;
  }
  if (s->layout[ax] && ax != AX_VS) {
    g_array_unref(v);
    return g_array_ref(s->layout[ax]);
  }
  const model *m = &s->m;
  gboolean full = s->space == SWEEP_SPACE_FULL;
  int node = pt->prof.gpus_per_node, domain = profile_gpus_per_domain(&pt->prof);
  switch (ax) {
  case AX_TP: /* powers of two up to the NVLink domain (8 on an HGX board), each group inside one domain */
    for (int t = 1; t <= domain; t *= 2)
      if (sim_domain_gpus_used(domain, node, t) && m->heads % t == 0 && 
          model_padded_vocab(m->vocab, t, (int)pt->prof.stack.vocab_pad_multiple) % t == 0 &&
          pt->gpus % t == 0)
        g_array_append_val(v, t);
    break;
  case AX_PP:
    for (int p = 1; p <= m->layers && tp > 0 && p <= pt->gpus / tp; p++)
      if ((pt->gpus / tp) % p == 0 && pt->gpus % tp == 0) g_array_append_val(v, p);
    break;
  case AX_SP:
    for (int sp = 0; sp <= (tp > 1 && s->seq_len % tp == 0); sp++) g_array_append_val(v, sp);
    break;
  case AX_CKPT: /* as the layout's field table says (layout.c E_ckpt: none and every_layer; the full space selective
                 * and mlp too; selective with a flash kernel is skipped: the step of none) */
    for (int c = 0; c < layout_enum_sweep_count(layout_enum_field("checkpointing"), full); c++) g_array_append_val(v, c);
    break;
  case AX_ATTN: { /* the machine's default kernels (its profile's sweep_kernels: every kernel on the study's A100;
                   * else its stack's, the kernels of its most efficient fused class); the full space: every kernel */
    guint kernels = pt->prof.sweep_kernels ? pt->prof.sweep_kernels : stack_sweep_kernels(&pt->prof.stack);
    for (int a = 0; a < layout_enum_sweep_count(layout_enum_field("attention_kernel"), TRUE); a++)
      if (full || (kernels & (1u << a))) g_array_append_val(v, a);
    break;
  }
  case AX_VS: /* pp is the axis' pp; tp carries the schedule here (axis_values' caller) */
    if (!sched_get(tp)->chunked) {
      int one = 1;
      g_array_append_val(v, one);
      break;
    }
    if (s->layout[ax]) {
      g_array_unref(v);
      return g_array_ref(s->layout[ax]);
    }
    for (int c = 2; pp > 0 && c * pp <= m->layers; c++) /* a schedule of fixed chunks (dualpipev's V): those alone */
      if (m->layers % (c * pp) == 0 && (!sched_get(tp)->fixed_chunks || c == sched_get(tp)->fixed_chunks))
        g_array_append_val(v, c);
    if (!v->len && !s->layout[AX_SCHED]) return v; /* none at this pp: a schedule the space did not list is left
                                                    * out there (a listed one's rows say why it is invalid) */
    break;
  case AX_CP: /* the default space: cp 1 only (context parallelism where listed, --cp); the full space: every power
               * of two up to SWEEP_FULL_MAX_CP dividing gpus/(tp*pp) that splits the sequence into 2*cp chunks */
    for (int c = 1; c <= (s->space == SWEEP_SPACE_FULL ? SWEEP_FULL_MAX_CP : 1); c *= 2)
      if (c == 1 || (dp_of(pt->gpus, tp, pp, c) > 0 && s->seq_len % (2 * c) == 0)) g_array_append_val(v, c);
    break;
  case AX_PREC: /* the layout's field table's (layout.c E_precision): bf16 (FP8 where listed, --precision); the full
                 * space fp8 and fp8-cs too where the profile has FP8 tensor cores (mxfp8, Blackwell's, where listed) */
    for (int p = 0; p < layout_enum_sweep_count(layout_enum_field("precision"), full && pt->prof.peak_fp8_flops > 0); p++)
      g_array_append_val(v, p);
    break;
  case AX_ZERO: /* the one stage given (default 1); the full space: 0 to 3 */
    if (s->space != SWEEP_SPACE_FULL) g_array_append_val(v, s->zero);
    else for (int z = 0; z <= LAYOUT_MAX_ZERO; z++) g_array_append_val(v, z);
    break;
  case AX_OGR: case AX_OPG: { /* the one value given (default off); the full space: off and on */
    int given = ax == AX_OGR ? s->overlap_grad_reduce : s->overlap_param_gather;
    for (int o = s->space == SWEEP_SPACE_FULL ? 0 : given; o <= (s->space == SWEEP_SPACE_FULL ? 1 : given); o++)
      g_array_append_val(v, o);
    break;
  }
  case AX_MB: {
    int dp = dp_of(pt->gpus, tp, pp, cp);
    if (dp > 0 && gb % dp == 0)
      for (int mb = 1; mb <= gb / dp; mb++)
        if ((gb / dp) % mb == 0 && (gint64)mb * s->seq_len <= LAYOUT_MAX_MICRO_BATCH_TOKENS &&
            gb / dp / mb <= LAYOUT_MAX_MICRO_BATCHES)
          g_array_append_val(v, mb);
    break;
  }
  default: break;
  }
  if (v->len == 0) { /* a listed tp or pp the cluster does not take: its layouts are counted as invalid */
    int one = 1;
    g_array_append_val(v, one);
  }
  return v;
}

typedef struct enumeration {
  const sweep_spec *s;
  csv_table *t;
  GArray *layouts;  /* layout of the rows to evaluate, parallel to `rows` (their requests are rebuilt a window at
                     * a time: request_at) */
  GArray *rows;     /* guint: their row in t */
  guint index;      /* next enumeration index */
  GArray *points;   /* int: the platform point of each request, parallel to `requests` */
  int point;        /* the point being enumerated */
} enumeration;

static char *fmt_g(double v) { return g_strdup_printf("%.10g", v); }

static void set(csv_table *t, guint r, const char *col, const char *v) { csv_set(t, r, csv_column(t, col), v); }

static void set_int(csv_table *t, guint r, const char *col, long v)
{
  g_autofree char *s = g_strdup_printf("%ld", v);
  set(t, r, col, s);
}

static void set_num(csv_table *t, guint r, const char *col, double v)
{
  g_autofree char *s = fmt_g(v);
  set(t, r, col, s);
}

/* The request of layout l on point pt, prepared: as add_row made it (its validity already known). */
static sim_request request_at(const sweep_spec *s, const point *pt, const layout *l)
{
  gen_options gen = s->gen;
  if (!s->partition_set) gen.partition = pt->prof.stack.partition;
  sim_request rq = {.m = s->m, .l = *l, .gen = gen, .prof = pt->prof, .capacity_gib = pt->capacity_gib};
  gboolean ok = sim_request_prepare(&rq, NULL);
  g_assert(ok);
  return rq;
}

/* A row of t for layout l on point pt; in this shard only. */
static void add_row(enumeration *e, const point *pt, const layout *l)
{
  const sweep_spec *s = e->s;
  guint index = e->index++;
  if ((int)(index % (guint)s->shard_n) != s->shard_i - 1) return;
  csv_table *t = e->t;
  GPtrArray *cells = g_ptr_array_new();
  for (guint c = 0; c < t->header->len; c++) g_ptr_array_add(cells, g_strdup(""));
  guint r = csv_append_row(t, cells, 0);
  set_int(t, r, "index", index);
  set(t, r, "model", s->m.name);
  set(t, r, "model_file", s->model_file ? s->model_file : "");
  set_int(t, r, "seq_len", l->seq_len);
  set_int(t, r, "global_batch", l->global_batch);
  set_int(t, r, "vocab", s->m.vocab);
  set_int(t, r, "gpus", l->gpus);
  set(t, r, "checkpointing", layout_ckpt_name(l->ckpt));
  set(t, r, "attention_kernel", layout_attn_name(l->attn));
  set_int(t, r, "micro_batch", l->micro_batch);
  for (int a = 0; a < AXIS_N; a++) /* the axes' columns (axes.h) */
    if (axis_get(a)->column) set_int(t, r, axis_get(a)->column, axis_size(l, a));
  set_int(t, r, "sp", l->sp);
  char imb[32];
  g_snprintf(imb, sizeof imb, "%g", l->moe_imbalance);
  set(t, r, "moe_imbalance", imb);
  gen_options gen = s->gen;
  if (!s->partition_set) gen.partition = pt->prof.stack.partition;
  set(t, r, "partition", partition_method_name(gen.partition));
  set(t, r, "schedule", sched_name(l->schedule));
  set_int(t, r, "virtual_stages", l->virtual_stages);
  set_int(t, r, "zero", l->zero);
  set(t, r, "precision", precision_name(l->precision));
  set_int(t, r, "overlap_grad_reduce", l->overlap_grad_reduce);
  set_int(t, r, "overlap_param_gather", l->overlap_param_gather);
  set(t, r, "profile", pt->profile_name);
  set(t, r, "stack", pt->stack_name);
  for (int a = 0; a < WHATIF_N; a++) {
    g_autofree char *v = whatif_format(a, a == WHATIF_GPU_MEMORY ? pt->capacity_gib : whatif_profile_value(a, &pt->prof));
    set(t, r, whatif_column(a), v);
  }
  sim_request rq = {.m = s->m, .l = *l, .gen = gen, .prof = pt->prof, .capacity_gib = pt->capacity_gib};
  GError *err = NULL;
  if (l->sp && l->tp == 1)
    g_set_error(&err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "sp: on at tp 1 changes nothing (the layout of sp 0; allowed at tp 1: sp 0)");
  else sim_request_prepare(&rq, &err);
  if (err) {
    set(t, r, "status", "invalid");
    set(t, r, "error", err->message);
    g_error_free(err);
    return;
  }
  set_int(t, r, "vocab_padded", rq.m.vocab); /* as the stack's code embeds it at this tp (sim_request_prepare) */
  set_num(t, r, "params", model_params(&rq.m));
  set_num(t, r, "params_per_gpu", model_params_per_gpu(&rq.m, &rq.l, rq.gen.partition));
  g_array_append_val(e->layouts, *l);
  g_array_append_val(e->points, e->point);
  g_array_append_val(e->rows, r);
}

/* Whether schedule h at pp stages splits the backward (zb-h1's B and W): ZeRO 2/3 and the overlaps are not
 * modelled there (layout_validate). Above the model's layers no layout is valid whatever the schedule
 * (layout_validate refuses pp > layers first): FALSE there, without building pp stages' instructions for a
 * listed pp of 100,000. Remembered per (h, pp): the count asks it for every listed pp. */
static gboolean splits_backward(int h, int pp, int layers)
{
  static GHashTable *memo; /* (pp << 8 | h) + 1 -> 1 + split */
  if (pp > layers || pp < 1) return FALSE;
  if (!memo) memo = g_hash_table_new(g_direct_hash, g_direct_equal);
  gpointer key = GSIZE_TO_POINTER(((gsize)pp << 8 | (gsize)h) + 1);
  gpointer known = g_hash_table_lookup(memo, key);
  if (known) return GPOINTER_TO_INT(known) - 1;
  gboolean split = FALSE;
  for (int st = 0; st < pp && !split; st++) {
    g_autoptr(GArray) in = sched_instructions(h, st, pp, 1, 2 * pp + 2);
    for (guint i = 0; i < in->len; i++)
      if (g_array_index(in, sched_instr, i).kind == SCHED_BACKWARD_W) split = TRUE;
  }
  g_hash_table_insert(memo, key, GINT_TO_POINTER(split + 1));
  return split;
}

/* The expert-parallel combinations of a sweep: every value of each folded axis (axes.h: ep, then etp) crossed
 * with every --moe-imbalance, the imbalance fastest; each layout of the other axes is enumerated once per
 * combination (docs/moe.md, "In a sweep"). */
static guint expert_combos(const sweep_spec *s)
{
  guint n = s->moe_imbalance ? s->moe_imbalance->len : 1;
  for (int a = 0; a < AXIS_N; a++)
    if (s->folded[a]) n *= s->folded[a]->len;
  return n;
}

/* Combination i of expert_combos into l. */
static void expert_set(const sweep_spec *s, guint i, layout *l)
{
  guint ni = s->moe_imbalance ? s->moe_imbalance->len : 1;
  l->moe_imbalance = s->moe_imbalance ? g_array_index(s->moe_imbalance, double, i % ni) : 1.0;
  i /= ni;
  for (int a = AXIS_N - 1; a >= 0; a--)
    if (s->folded[a]) {
      axis_set_size(l, (axis_id)a, ival(s->folded[a], i % s->folded[a]->len));
      i /= s->folded[a]->len;
    }
}

/* The option values of one layout beyond tp, pp and cp, as indices into their lists. */
typedef struct combo {
  int ckpt, attn, sched, vs, zero, ogr, opg, cp;
  int pp, m; /* the stages and the micro-batches per step (0: not whole, or no data-parallel degree) */
  gboolean first_ogr, first_opg; /* the first value of its list */
  gboolean later_sharded;        /* a ZeRO stage >= 1 after another >= 1 in its list */
} combo;

/* The micro-batches per step of a layout at data-parallel degree dp and micro-batch mb: gb / (dp mb) where whole,
 * else 0 (no degree, or a micro-batch that does not divide the replica's batch: invalid for that). */
static int whole_m(int dp, int gb, int mb)
{
  return dp > 0 && mb > 0 && gb % dp == 0 && (gb / dp) % mb == 0 ? gb / dp / mb : 0;
}

/* Whether a combination is left out of the enumeration: a layout equivalent by construction to one enumerated
 * (at dp 1, which has no data-parallel traffic to overlap and nothing to shard: an overlap, the first value of
 * its list stands for all; a ZeRO stage from 1, the first such of its list stands for the others (ZeRO 0 keeps
 * its fp32 gradients: not the same); in the full space, selective checkpointing with a flash kernel, which keeps no scores: the step of
 * none), or, in the full space only, one layout_validate refuses by the rules of ZeRO and the overlaps (listed,
 * such a layout is counted invalid with its reason, as any listed value). */
static gboolean left_out(const sweep_spec *s, int dp, gboolean split, const combo *c)
{
  if (dp == 1 && ((c->ogr && !c->first_ogr) || (c->opg && !c->first_opg) || c->later_sharded)) return TRUE;
  if (s->space != SWEEP_SPACE_FULL) return FALSE;
  if (c->ckpt == CKPT_SELECTIVE && !s->layout[AX_CKPT] && layout_attn_is_flash((layout_attn)c->attn)) return TRUE;
  /* context parallelism runs TransformerEngine's ring of flash kernels (layout_validate): no other kernel at cp > 1
   * where neither the kernels nor cp are listed (a listed one's rows say why they are invalid) */
  if (c->cp > 1 && !s->layout[AX_ATTN] && !s->layout[AX_CP] && !layout_attn_is_flash((layout_attn)c->attn)) return TRUE;
  /* a schedule its own check refuses at these micro-batches (dualpipev below 2 pp), where neither the schedules
   * nor the virtual stages are listed (layout_validate's sched_check; a sweep's layouts place no pipeline layout) */
  if (c->m > 0 && !s->layout[AX_SCHED] && !s->layout[AX_VS] && !sched_check(c->sched, c->pp, c->vs, c->m, s->m.layers, NULL))
    return TRUE;
  gboolean listed_zero = s->layout[AX_ZERO] || s->layout[AX_OGR] || s->layout[AX_OPG] || s->layout[AX_SCHED] || s->layout[AX_VS];
  if (listed_zero) return FALSE;
  if (c->opg && c->zero != 1 && c->zero != 2) return TRUE;
  return (c->zero >= 2 && c->vs > 1) || ((c->zero >= 2 || c->ogr || c->opg) && split); /* as layout_validate */
}

/* The layouts of one point at (tp, pp, cp), in the enumeration's order; each passed to `emit` (NULL: only
 * counted). Returns how many. The precision, ZeRO and overlap loops are outermost of the inner axes, so that a
 * sweep with one value of each keeps the indices it always had; the schedule innermost, for the study's. */
static double enumerate_tpc(enumeration *e, const sweep_spec *s, const point *pt, int tp, int pp, int cp, int gb)
{
  double n = 0;
  int dp = dp_of(pt->gpus, tp, pp, cp);
  g_autoptr(GArray) sps = axis_values(s, AX_SP, pt, tp, pp, cp, gb);
  g_autoptr(GArray) cks = axis_values(s, AX_CKPT, pt, tp, pp, cp, gb);
  g_autoptr(GArray) ats = axis_values(s, AX_ATTN, pt, tp, pp, cp, gb);
  g_autoptr(GArray) mbs = axis_values(s, AX_MB, pt, tp, pp, cp, gb);
  g_autoptr(GArray) scs = axis_values(s, AX_SCHED, pt, tp, pp, cp, gb);
  g_autoptr(GArray) prs = axis_values(s, AX_PREC, pt, tp, pp, cp, gb);
  g_autoptr(GArray) zs = axis_values(s, AX_ZERO, pt, tp, pp, cp, gb);
  g_autoptr(GArray) ogs = axis_values(s, AX_OGR, pt, tp, pp, cp, gb);
  g_autoptr(GArray) ops = axis_values(s, AX_OPG, pt, tp, pp, cp, gb);
  GArray *vss[64] = {0}; /* the virtual stages of each schedule */
  g_assert(scs->len <= G_N_ELEMENTS(vss));
  gboolean split[64] = {0};     /* whether each schedule splits the backward (only the full space asks) */
  for (guint h = 0; h < scs->len; h++) {
    vss[h] = axis_values(s, AX_VS, pt, ival(scs, h), pp, cp, gb);
    split[h] = s->space == SWEEP_SPACE_FULL && splits_backward(ival(scs, h), pp, s->m.layers);
  }
  guint nx = expert_combos(s);
  for (guint x = 0; x < nx; x++) /* outermost: a sweep with one expert layout keeps its indices */
  for (guint z = 0; z < zs->len; z++)
    for (guint og = 0; og < ogs->len; og++)
      for (guint op = 0; op < ops->len; op++)
        for (guint pr = 0; pr < prs->len; pr++) /* outermost of these: a bf16 sweep keeps its indices */
          for (guint c = 0; c < sps->len; c++)
            for (guint d = 0; d < cks->len; d++)
              for (guint f = 0; f < ats->len; f++)
                for (guint g = 0; g < mbs->len; g++)
                  for (guint h = 0; h < scs->len; h++) /* innermost: the study's enumeration keeps its indices */
                    for (guint k = 0; k < vss[h]->len; k++) {
                      combo cb = {.ckpt = ival(cks, d), .attn = ival(ats, f), .sched = ival(scs, h),
                                  .vs = ival(vss[h], k), .zero = ival(zs, z), .ogr = ival(ogs, og) != 0,
                                  .opg = ival(ops, op) != 0, .first_ogr = og == 0, .first_opg = op == 0, .cp = cp,
                                  .pp = pp, .m = whole_m(dp, gb, ival(mbs, g))};
                      for (guint y = 0; y < z && cb.zero >= 1; y++) cb.later_sharded |= ival(zs, y) >= 1;
                      if (left_out(s, dp, split[h], &cb)) continue;
                      n++;
                      if (!e) continue;
                      layout l = layout_default();
                      l.gpus = pt->gpus;
                      l.tp = tp;
                      l.pp = pp;
                      l.cp = cp;
                      l.sp = ival(sps, c) != 0;
                      l.ckpt = (layout_ckpt)cb.ckpt;
                      l.attn = (layout_attn)cb.attn;
                      l.micro_batch = ival(mbs, g);
                      l.seq_len = s->seq_len;
                      l.global_batch = gb;
                      l.schedule = cb.sched;
                      l.virtual_stages = cb.vs;
                      l.zero = cb.zero;
                      l.overlap_grad_reduce = cb.ogr;
                      l.overlap_param_gather = cb.opg;
                      /* what the command gave or the full space enumerates stays; the rest is the stack's */
                      stack_layout_defaults(&pt->prof.stack, &l, s->space == SWEEP_SPACE_FULL ? ~0u : s->layout_given);
                      l.precision = ival(prs, pr);
                      expert_set(s, x, &l);
                      add_row(e, pt, &l);
                    }
  for (guint h = 0; h < scs->len; h++) g_array_unref(vss[h]);
  return n;
}

/* The layouts of point pt, enumerated into e (NULL: only counted). */
static double enumerate_point(enumeration *e, const sweep_spec *s, const point *pt)
{
  int gb = s->global_batch > 0 ? s->global_batch : MAX(1, 4194304 / s->seq_len);
  double n = 0;
  g_autoptr(GArray) tps = axis_values(s, AX_TP, pt, 0, 0, 1, gb);
  for (guint a = 0; a < tps->len; a++) {
    int tp = ival(tps, a);
    g_autoptr(GArray) pps = axis_values(s, AX_PP, pt, tp, 0, 1, gb);
    for (guint b = 0; b < pps->len; b++) {
      int pp = ival(pps, b);
      g_autoptr(GArray) cps = axis_values(s, AX_CP, pt, tp, pp, 1, gb);
      for (guint q = 0; q < cps->len; q++) n += enumerate_tpc(e, s, pt, tp, pp, ival(cps, q), gb);
    }
  }
  return n;
}

/* The values of a what-if axis: the user's list, or the profile's own (0). */
static double whatif_at(const sweep_spec *s, int a, guint i) { return s->whatif[a] ? g_array_index(s->whatif[a], double, i) : 0; }
static guint whatif_len(const sweep_spec *s, int a) { return s->whatif[a] ? s->whatif[a]->len : 1; }

/* Every platform point, in the enumeration's order (profile, stack, gpus, then the what-ifs); FALSE with
 * err on a profile or stack that does not load or what-ifs it cannot take. */
static GArray *platform_points(const sweep_spec *s, GError **err)
{
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(point));
  for (guint k = 0; k < s->profiles->len * s->stacks->len; k++) {
    gpu_profile base;
    const char *profile = s->profiles->pdata[k / s->stacks->len], *stack = s->stacks->pdata[k % s->stacks->len];
    if (!profile_load_with_stack(profile, stack, &base, err)) {
      g_array_free(pts, TRUE);
      return NULL;
    }
    /* gpus, then the what-ifs in their order (the last fastest): an odometer over their lengths */
    guint len[1 + WHATIF_N], at[1 + WHATIF_N] = {0};
    len[0] = s->gpus->len;
    for (int a = 0; a < WHATIF_N; a++) len[1 + a] = whatif_len(s, a);
    for (gboolean more = TRUE; more;) {
      plat_whatif w;
      for (int a = 0; a < WHATIF_N; a++) w.v[a] = whatif_at(s, a, at[1 + a]);
      point pt = {.profile_name = profile, .stack_name = stack ? stack : g_intern_string(base.stack.name), .prof = base, .capacity_gib = base.memory_gib,
                  .gpus = ival(s->gpus, at[0])};
      if (!whatif_apply(&w, &pt.prof, &pt.capacity_gib, err)) {
        g_array_free(pts, TRUE);
        return NULL;
      }
      g_array_append_val(pts, pt);
      int d = WHATIF_N;
      while (d >= 0 && ++at[d] == len[d]) at[d--] = 0;
      more = d >= 0;
    }
  }
  return pts;
}

static void set_result(csv_table *t, guint r, const prediction *p)
{
  set(t, r, "status", predict_status_name(p->status));
  set(t, r, "error", p->status == PRED_OK ? "" : p->error);
  if (p->status == PRED_INVALID) return;
  set(t, r, "fidelity", pred_how_name(p->how));
  set_num(t, r, "peak_mem_gib", p->peak_gib);
  set_num(t, r, "headroom_gib", p->capacity_gib - p->peak_gib);
  if (p->trust.nodes > 0) {
    g_autofree char *flags = trust_flags_string(p->trust.flags);
    set(t, r, "flags", flags);
  }
  if (p->how == PRED_HOW_MEMORY) return; /* not replayed: no times */
  if (p->trust.nodes > 0) set_num(t, r, "band_pct", p->trust.band_pct);
  set_num(t, r, "step_time_s", p->step_time_s);
  set_num(t, r, "mfu", p->mfu);
  set_num(t, r, "tokens_per_s", p->tokens_per_s);
  set_num(t, r, "bubble_fraction", p->bubble_fraction);
  set_num(t, r, "energy_j", p->energy_j);
  if (p->tokens_per_s > 0) set_num(t, r, "kwh_per_mtok", energy_kwh_per_mtok(p->energy_j, p->tokens_per_s * p->step_time_s));
  for (int c = 0; c < TL_N; c++) set_num(t, r, tl_cat_info_of((tl_cat)c)->column, p->seconds[c]);
}

/* What the sweep is, whatever the shard and the split: its model, batch, code options and every list, hashed (SHA-256,
 * the first 16 hex digits). Shards of one sweep carry the same; merge refuses two. */
static char *sweep_id(const sweep_spec *s)
{
  GString *d = g_string_new(NULL);
  g_string_append_printf(d, "model %s %s seq %d gb %d zero %d ov %d %d part %d %d sym %d\n", s->m.name,
                         s->model_file ? s->model_file : "-", s->seq_len, s->global_batch, s->zero, s->overlap_grad_reduce,
                         s->overlap_param_gather, s->partition_set, (int)s->gen.partition, s->gen.symmetry);
  g_string_append_printf(d, "m %d %d %d %d\n", s->m.layers, s->m.hidden, s->m.heads, s->m.vocab);
  layout one = layout_default();
  expert_set(s, 0, &one);
  if (expert_combos(s) > 1 || one.ep > 1 || one.etp > 1 || one.moe_imbalance > 1) /* without experts: the id as before */
    for (guint x = 0; x < expert_combos(s); x++) {
      layout l = layout_default();
      expert_set(s, x, &l);
      g_string_append_printf(d, "ep %d etp %d imbalance %.17g\n", l.ep, l.etp, l.moe_imbalance);
    }
  for (int ax = 0; ax < AX_N; ax++) {
    g_string_append_printf(d, "%s:", AXIS_OPTIONS[ax]);
    for (guint i = 0; s->layout[ax] && i < s->layout[ax]->len; i++) g_string_append_printf(d, " %d", ival(s->layout[ax], i));
    g_string_append_c(d, '\n');
  }
  for (guint i = 0; i < s->profiles->len; i++) g_string_append_printf(d, "profile %s\n", (char *)s->profiles->pdata[i]);
  for (guint i = 0; i < s->stacks->len; i++) g_string_append_printf(d, "stack %s\n", (char *)s->stacks->pdata[i]);
  for (guint i = 0; i < s->gpus->len; i++) g_string_append_printf(d, "gpus %d\n", ival(s->gpus, i));
  for (int a = 0; a < WHATIF_N; a++)
    for (guint i = 0; s->whatif[a] && i < s->whatif[a]->len; i++)
      g_string_append_printf(d, "%s %a\n", whatif_option(a), g_array_index(s->whatif[a], double, i));
  g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, d->str, (gssize)d->len);
  g_string_free(d, TRUE);
  return g_strndup(sum, 16);
}

/* A shard's rows say which slice they are, how many layouts the whole sweep enumerated and which sweep
 * it is: merge then knows every index it must find, even when the shard that is missing holds the last
 * ones, and refuses shards of two sweeps. */
static void mark_shard(csv_table *t, const sweep_spec *s, guint enumerated)
{
  int cs = csv_add_column(t, SWEEP_SHARD_COLUMN), ce = csv_add_column(t, SWEEP_ENUMERATED_COLUMN),
      ci = csv_add_column(t, SWEEP_ID_COLUMN);
  g_autofree char *shard = g_strdup_printf("%d/%d", s->shard_i, s->shard_n);
  g_autofree char *n = g_strdup_printf("%u", enumerated);
  g_autofree char *id = sweep_id(s);
  for (guint r = 0; r < t->rows->len; r++) {
    csv_set(t, r, cs, shard);
    csv_set(t, r, ce, n);
    csv_set(t, r, ci, id);
  }
}

/* The columns of the result that hold a time or a figure: empty, or a finite number at least 0 (and every
 * category's t_*_s). */
static const char *const NUMBERS[] = {"step_time_s", "mfu", "tokens_per_s", "bubble_fraction", "peak_mem_gib",
                                      "energy_j", "kwh_per_mtok"};

/* The i-th column that holds a number, i < G_N_ELEMENTS(NUMBERS) + TL_N. */
static const char *number_column(size_t i)
{
  return i < G_N_ELEMENTS(NUMBERS) ? NUMBERS[i] : tl_cat_info_of((tl_cat)(i - G_N_ELEMENTS(NUMBERS)))->column;
}

gboolean sweep_check_row(const csv_table *t, guint r, const char *path, const csv_table *first, GError **err)
{
  guint line = csv_row_line(t, r);
  const char *st = csv_cell(t, r, csv_column(t, "status"));
  if (strcmp(st, "ok") && strcmp(st, "oom") && strcmp(st, "invalid") && strcmp(st, "pruned")) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: status '%.40s' (allowed: ok, pruned, oom, invalid)", path, line, st);
    return FALSE;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(NUMBERS) + TL_N; i++) {
    const char *col = number_column(i);
    int c = csv_column(t, col);
    const char *v = c < 0 ? "" : csv_cell(t, r, c);
    char *end;
    double x = *v ? g_ascii_strtod(v, &end) : 0;
    gboolean need = !strcmp(st, "ok") && !strcmp(col, "step_time_s");
    if ((*v && (*end || !isfinite(x) || x < 0)) || (need && (!*v || x <= 0))) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: %s '%.40s' (allowed: %s)", path, line, col, v,
                  need ? "a finite number above 0 in a row of status ok" : "empty, or a finite number from 0");
      return FALSE;
    }
  }
  /* a row of another sweep: its model, sequence and batch are the first row's */
  static const char *const SAME[] = {"model", "model_file", "seq_len", "global_batch", "vocab"};
  for (size_t i = 0; first && first->rows->len && i < G_N_ELEMENTS(SAME); i++) {
    const char *a = csv_cell(t, r, csv_column(t, SAME[i])), *b = csv_cell(first, 0, csv_column(first, SAME[i]));
    if (strcmp(a, b)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s line %u: %s '%.60s', but the first row merged has '%.60s' (allowed: the "
                  "rows of one sweep)", path, line, SAME[i], a, b);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- the sweep's size, counted before anything is allocated ---- */

/* The longest list the user gave: its option (without "--") and length; NULL when none has two values. */
static const char *longest_list(const sweep_spec *s, guint *len)
{
  const char *best = NULL;
  *len = 1;
#define CONSIDER(name, n)                                                                                           \
  do {                                                                                                              \
    if ((n) > *len) *len = (n), best = (name);                                                                      \
  } while (0)
  for (int ax = 0; ax < AX_N; ax++)
    if (s->layout[ax]) CONSIDER(AXIS_OPTIONS[ax], s->layout[ax]->len);
  CONSIDER("gpus", s->gpus->len);
  CONSIDER("profile", s->profiles->len);
  CONSIDER("stack", s->stacks->len);
  for (int a = 0; a < WHATIF_N; a++)
    if (s->whatif[a]) CONSIDER(whatif_option(a), s->whatif[a]->len);
#undef CONSIDER
  return best;
}

/* "fewer values of --micro-batch (10000 listed)", or "fewer values in the lists" when none is long. */
static char *shrink_hint(const sweep_spec *s)
{
  guint len;
  const char *opt = longest_list(s, &len);
  return opt ? g_strdup_printf("fewer values of --%s (%u listed)", opt, len) : g_strdup("fewer values in the lists");
}

/* ---- counted arithmetically: per axis a product, coupled axes counted by value class ----
 *
 * The layouts of a point are, for each (tp, pp, cp), the product of the precisions, the (checkpointing,
 * kernel) pairs left_out keeps, the sp values at tp, the micro-batches at the data-parallel degree and
 * the (ZeRO, overlaps, schedule, virtual stages) combinations left_out keeps at pp, which depend on the
 * layout only through pp and whether dp is 1 (and on a virtual-stage count only through whether it is
 * above 1). A (tp, pp, cp) that does not divide the GPUs has no data-parallel degree: its count is that of
 * a listed value the cluster does not take, the same for all of them, so a listed tp, pp or cp is walked
 * only where it divides the GPUs (a divisor of theirs, looked up in the list) and the rest is counted by
 * subtraction. Nothing is enumerated: a list of 100,000 values costs one pass over it, not one per
 * combination (the enumeration counted 10^9 layouts in minutes). sweep_run checks the count against its
 * enumeration's; test_sweep against enumerate_point's on spaces that exercise every coupling. */
typedef struct sizer {
  const sweep_spec *s;
  const point *any;        /* a point of the profile and stack counted: the axes below depend on no more of it */
  GHashTable *listed[AX_N]; /* a listed tp, pp, cp as a set of its values; NULL where not listed */
  double ckpt_attn;        /* (checkpointing, kernel) pairs left_out keeps at cp 1 */
  double ckpt_attn_cp;     /* the same at a cp > 1 the space enumerates (not listed) */
  double sum_sp_tp;        /* over a listed tp: its sp values */
  double sum_inner_pp;     /* over a listed pp: count_inner(pp, dp not 1, no whole micro-batch count) */
  GHashTable *inner;       /* (pp * 2 + (dp == 1)) | m << 32 -> count_inner */
} sizer;

static double count_sp(const sweep_spec *s, int tp)
{
  return s->layout[AX_SP] ? s->layout[AX_SP]->len : (tp > 1 && s->seq_len % tp == 0) ? 2 : 1;
}

/* The (ZeRO, overlap, overlap, schedule, virtual stages) combinations enumerate_tpc keeps at pp stages. */
static double count_inner(sizer *z, int pp, gboolean dp_one, int m)
{
  const sweep_spec *s = z->s;
  gpointer key = GSIZE_TO_POINTER(((gsize)pp * 2 + (gsize)dp_one) | (gsize)(guint)m << 32);
  double *known = g_hash_table_lookup(z->inner, key);
  if (known) return *known;
  const point *pt = z->any;
  g_autoptr(GArray) scs = axis_values(s, AX_SCHED, pt, 0, pp, 1, 0);
  g_autoptr(GArray) zs = axis_values(s, AX_ZERO, pt, 0, pp, 1, 0);
  g_autoptr(GArray) ogs = axis_values(s, AX_OGR, pt, 0, pp, 1, 0);
  g_autoptr(GArray) ops = axis_values(s, AX_OPG, pt, 0, pp, 1, 0);
  double n = 0;
  for (guint h = 0; h < scs->len; h++) {
    g_autoptr(GArray) vss = axis_values(s, AX_VS, pt, ival(scs, h), pp, 1, 0);
    gboolean split = s->space == SWEEP_SPACE_FULL && splits_backward(ival(scs, h), pp, s->m.layers);
    for (guint zi = 0; zi < zs->len; zi++)
      for (guint og = 0; og < ogs->len; og++)
        for (guint op = 0; op < ops->len; op++)
          for (guint k = 0; k < vss->len; k++) {
            combo cb = {.ckpt = CKPT_NONE, .sched = ival(scs, h), .zero = ival(zs, zi), .ogr = ival(ogs, og) != 0,
                        .opg = ival(ops, op) != 0, .first_ogr = og == 0, .first_opg = op == 0, .vs = ival(vss, k),
                        .pp = pp, .m = m};
            for (guint y = 0; y < zi && cb.zero >= 1; y++) cb.later_sharded |= ival(zs, y) >= 1;
            n += !left_out(s, dp_one ? 1 : 0, split, &cb);
          }
  }
  double *v = g_new(double, 1);
  *v = n;
  g_hash_table_insert(z->inner, key, v);
  return n;
}

/* The micro-batches enumerate_tpc takes at (tp, pp, cp): the divisors of the per-replica batch that keep a
 * micro-batch's tokens and the micro-batch count within the layout's limits, found in O(sqrt) (1 where none). */
static double count_mb(const sweep_spec *s, const point *pt, int tp, int pp, int cp, int gb)
{
  if (s->layout[AX_MB]) return s->layout[AX_MB]->len;
  int dp = dp_of(pt->gpus, tp, pp, cp);
  double n = 0;
  if (dp > 0 && gb % dp == 0) {
    int q = gb / dp;
    for (int a = 1; (gint64)a * a <= q; a++) {
      if (q % a) continue;
      int pair[2] = {a, q / a};
      for (int i = 0; i < (a == q / a ? 1 : 2); i++)
        n += (gint64)pair[i] * s->seq_len <= LAYOUT_MAX_MICRO_BATCH_TOKENS && q / pair[i] <= LAYOUT_MAX_MICRO_BATCHES;
    }
  }
  return n > 0 ? n : 1;
}

/* count_mb x count_inner, where the schedules' own checks (left_out) may keep fewer combinations at some micro-batch
 * counts: each micro-batch with those its step's micro-batches keep. */
static double count_mb_inner(sizer *z, const point *pt, int tp, int pp, int cp, int gb, gboolean dp_one)
{
  const sweep_spec *s = z->s;
  if (s->space != SWEEP_SPACE_FULL || s->layout[AX_SCHED] || s->layout[AX_VS])
    return count_mb(s, pt, tp, pp, cp, gb) * count_inner(z, pp, dp_one, 0);
  int dp = dp_of(pt->gpus, tp, pp, cp);
  g_autoptr(GArray) mbs = axis_values(s, AX_MB, pt, tp, pp, cp, gb);
  double n = 0;
  for (guint g = 0; g < mbs->len; g++) n += count_inner(z, pp, dp_one, whole_m(dp, gb, ival(mbs, g)));
  return n;
}

static gboolean listed_has(const sizer *z, sweep_layout_axis ax, int v)
{
  return g_hash_table_contains(z->listed[ax], GINT_TO_POINTER(v));
}

/* The layouts at (tp, pp) over cp, per (precision, checkpointing, kernel, sp): divs are the GPUs' divisors. */
static double count_tpp(sizer *z, const point *pt, const GArray *divs, int tp, int pp, int gb)
{
  const sweep_spec *s = z->s;
  double mb0 = s->layout[AX_MB] ? s->layout[AX_MB]->len : 1; /* the micro-batches of no data-parallel degree */
  if (!s->layout[AX_CP]) {
    g_autoptr(GArray) cps = axis_values(s, AX_CP, pt, tp, pp, 1, gb);
    double n = 0;
    for (guint q = 0; q < cps->len; q++)
      n += count_mb_inner(z, pt, tp, pp, ival(cps, q), gb, dp_of(pt->gpus, tp, pp, ival(cps, q)) == 1) *
           (ival(cps, q) > 1 ? z->ckpt_attn_cp : z->ckpt_attn);
    return n;
  }
  double none = mb0 * count_inner(z, pp, FALSE, 0) * z->ckpt_attn, n = s->layout[AX_CP]->len * none;
  int rest = dp_of(pt->gpus, tp, pp, 1);
  for (guint i = 0; rest > 0 && i < divs->len; i++) { /* a listed cp dividing the rest: counted apart */
    int cp = ival(divs, i);
    if (rest % cp || !listed_has(z, AX_CP, cp)) continue;
    n += count_mb_inner(z, pt, tp, pp, cp, gb, rest / cp == 1) * z->ckpt_attn - none;
  }
  return n;
}

/* The layouts at tp over pp and cp, per (precision, checkpointing, kernel, sp). */
static double count_tp(sizer *z, const point *pt, const GArray *divs, int tp, int gb)
{
  const sweep_spec *s = z->s;
  if (!s->layout[AX_PP]) {
    g_autoptr(GArray) pps = axis_values(s, AX_PP, pt, tp, 0, 1, gb);
    double n = 0;
    for (guint b = 0; b < pps->len; b++) n += count_tpp(z, pt, divs, tp, ival(pps, b), gb);
    return n;
  }
  double mb0 = s->layout[AX_MB] ? s->layout[AX_MB]->len : 1, kcp = s->layout[AX_CP] ? s->layout[AX_CP]->len : 1;
  double n = kcp * mb0 * z->sum_inner_pp * z->ckpt_attn; /* every listed pp as if it did not divide gpus / tp */
  int rest = dp_of(pt->gpus, tp, 1, 1);
  for (guint i = 0; rest > 0 && i < divs->len; i++) {
    int pp = ival(divs, i);
    if (rest % pp || !listed_has(z, AX_PP, pp)) continue;
    n += count_tpp(z, pt, divs, tp, pp, gb) - kcp * mb0 * count_inner(z, pp, FALSE, 0) * z->ckpt_attn;
  }
  return n;
}

/* The divisors of n, ascending (n >= 1). */
static GArray *divisors_of(int n)
{
  GArray *lo = g_array_new(FALSE, FALSE, sizeof(int)), *hi = g_array_new(FALSE, FALSE, sizeof(int));
  for (int a = 1; (gint64)a * a <= n; a++)
    if (n % a == 0) {
      g_array_append_val(lo, a);
      int b = n / a;
      if (b != a) g_array_prepend_val(hi, b);
    }
  g_array_append_vals(lo, hi->data, hi->len);
  g_array_free(hi, TRUE);
  return lo;
}

/* The layouts enumerate_point makes for pt, counted without enumerating them. */
static double count_point(sizer *z, const point *pt)
{
  const sweep_spec *s = z->s;
  int gb = s->global_batch > 0 ? s->global_batch : MAX(1, 4194304 / s->seq_len);
  g_autoptr(GArray) prs = axis_values(s, AX_PREC, pt, 1, 1, 1, gb);
  g_autoptr(GArray) divs = divisors_of(MAX(pt->gpus, 1));
  double n = 0;
  if (!s->layout[AX_TP]) {
    g_autoptr(GArray) tps = axis_values(s, AX_TP, pt, 0, 0, 1, gb);
    for (guint a = 0; a < tps->len; a++) n += count_sp(s, ival(tps, a)) * count_tp(z, pt, divs, ival(tps, a), gb);
  } else { /* a tp that does not divide the GPUs: pp 1 or each listed pp, cp 1 or each listed cp, no dp */
    double mb0 = s->layout[AX_MB] ? s->layout[AX_MB]->len : 1, kcp = s->layout[AX_CP] ? s->layout[AX_CP]->len : 1;
    double none = kcp * mb0 * (s->layout[AX_PP] ? z->sum_inner_pp : count_inner(z, 1, FALSE, 0)) * z->ckpt_attn,
           dividing_sp = 0;
    for (guint i = 0; i < divs->len; i++) {
      int tp = ival(divs, i);
      if (!listed_has(z, AX_TP, tp)) continue;
      dividing_sp += count_sp(s, tp);
      n += count_sp(s, tp) * count_tp(z, pt, divs, tp, gb);
    }
    n += (z->sum_sp_tp - dividing_sp) * none;
  }
  return n * prs->len * expert_combos(s); /* each layout once per expert combination (the kernels: at the leaves) */
}

static void sizer_init(sizer *z, const sweep_spec *s, const point *any)
{
  *z = (sizer){.s = s, .any = any, .inner = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free)};
  const sweep_layout_axis sets[] = {AX_TP, AX_PP, AX_CP};
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
    const GArray *l = s->layout[sets[i]];
    if (!l) continue;
    z->listed[sets[i]] = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint j = 0; j < l->len; j++) g_hash_table_add(z->listed[sets[i]], GINT_TO_POINTER(ival(l, j)));
  }
  g_autoptr(GArray) cks = axis_values(s, AX_CKPT, any, 1, 1, 1, 0);
  g_autoptr(GArray) ats = axis_values(s, AX_ATTN, any, 1, 1, 1, 0);
  for (guint d = 0; d < cks->len; d++)
    for (guint f = 0; f < ats->len; f++) {
      combo cb = {.ckpt = ival(cks, d), .attn = ival(ats, f), .vs = 1, .first_ogr = TRUE, .first_opg = TRUE, .cp = 1};
      z->ckpt_attn += !left_out(s, 0, FALSE, &cb);
      cb.cp = 2;
      z->ckpt_attn_cp += !left_out(s, 0, FALSE, &cb);
    }
  for (guint i = 0; s->layout[AX_TP] && i < s->layout[AX_TP]->len; i++) z->sum_sp_tp += count_sp(s, ival(s->layout[AX_TP], i));
  for (guint i = 0; s->layout[AX_PP] && i < s->layout[AX_PP]->len; i++)
    z->sum_inner_pp += count_inner(z, ival(s->layout[AX_PP], i), FALSE, 0);
}

static void sizer_clear(sizer *z)
{
  for (int a = 0; a < AX_N; a++)
    if (z->listed[a]) g_hash_table_unref(z->listed[a]);
  g_hash_table_unref(z->inner);
}

/* The platform points: profiles x stacks x gpus x each what-if's values. */
static double count_points(const sweep_spec *s)
{
  double n = (double)s->profiles->len * s->stacks->len * s->gpus->len;
  for (int a = 0; a < WHATIF_N; a++) n *= whatif_len(s, a);
  return n;
}

static gboolean refuse_size(const sweep_spec *s, double layouts, const char *what, GError **err)
{
  g_autofree char *hint = shrink_hint(s);
  double run = ceil(layouts / s->shard_n);
  if (layouts > SWEEP_MAX_LAYOUTS || !strcmp(what, "platform points"))
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "sweep: %.0f %s to enumerate (allowed: at most %.0f in a sweep, sharded or not: %s)", layouts, what,
                strcmp(what, "platform points") ? SWEEP_MAX_LAYOUTS : SWEEP_MAX_POINTS, hint);
  else
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "sweep: %.0f layouts to enumerate, %.0f in one run (allowed: at most %d in one run: %s, or --shard I/N "
                "with N >= %.0f)", layouts, run, SWEEP_MAX_RUN_LAYOUTS, hint, ceil(layouts / SWEEP_MAX_RUN_LAYOUTS));
  return FALSE;
}

/* Each list's values are distinct by value (100 and 100.0 and 1e2 are one value), and virtual stages
 * are listed only with a schedule that takes them (simulate's rule). */
static gboolean check_lists(const sweep_spec *s, GError **err)
{
  for (int ax = 0; ax <= AX_N; ax++) { /* AX_N: --gpus; up to 100001 values: sorted, then neighbours compared */
    const GArray *l = ax < AX_N ? s->layout[ax] : s->gpus;
    if (!l || l->len < 2) continue;
    g_autoptr(GArray) v = g_array_copy((GArray *)l);
    g_array_sort(v, (GCompareFunc)cmp_int);
    for (guint i = 1; i < v->len; i++)
      if (ival(v, i) == ival(v, i - 1)) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: the value %d is listed twice (allowed: each value once)",
                    ax < AX_N ? AXIS_OPTIONS[ax] : "gpus", ival(v, i));
        return FALSE;
      }
  }
  for (int a = 0; a < WHATIF_N; a++) { /* up to 100001 values: sorted, then neighbours compared */
    if (!s->whatif[a] || s->whatif[a]->len < 2) continue;
    g_autoptr(GArray) v = g_array_copy(s->whatif[a]);
    g_array_sort(v, (GCompareFunc)cmp_double);
    for (guint i = 1; i < v->len; i++)
      if (g_array_index(v, double, i) == g_array_index(v, double, i - 1)) {
        g_autofree char *shown = whatif_format(a, g_array_index(v, double, i));
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "--%s: the value %s is listed twice, in two spellings or one (allowed: each value once)",
                    whatif_option(a), shown);
        return FALSE;
      }
  }
  const GArray *vs = s->layout[AX_VS], *sc = s->layout[AX_SCHED];
  gboolean chunked = FALSE;
  for (guint i = 0; sc && i < sc->len; i++) chunked |= sched_get(ival(sc, i))->chunked;
  for (guint i = 0; vs && !chunked && i < vs->len; i++)
    if (ival(vs, i) != 1) {
      const char *one = sched_name(sc && sc->len ? ival(sc, 0) : 0);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "virtual_stages: %d needs the interleaved schedule; schedule %s holds one chunk per stage (allowed with "
                  "%s: 1, or --schedule interleaved)", ival(vs, i), sc && sc->len > 1 ? "list" : one, one);
      return FALSE;
    }
  return TRUE;
}

/* ---- exact top-K: replay in order of the bound, stop where the bound passes the K-th best ---- */

typedef struct top_k {
  guint k;
  const int *point;   /* the point of each request, in the order replayed */
  const double *bound; /* its bound, in that order */
  gboolean *pruned;   /* in that order */
  GArray **best;      /* per point: the smallest distinct step times replayed, ascending, at most k */
  sim_request **rq;   /* in that order */
  prediction *verdict; /* in that order: the memory verdict, taken when its bound admits it (how none: not taken) */
  const pool_cfg *cfg;
  GHashTable *verdicts; /* pool_verdict's cache */
  GHashTable *bounds;   /* pool_bound's cache */
} top_k;

/* Request i (in bound order) is replayed unless k distinct step times of its point already replayed are all
 * below its bound: its own step time, at least its bound, is then above theirs, and the top K of its point
 * is theirs whatever it is. Strictly below: a layout as fast as the K-th (a tie, ranked by enumeration index)
 * is replayed. Distinct times: rows that are the same step (docs/sweep.md, "Ties") show as one, so K distinct
 * times are K rows shown. Exact while other replays still run: those can only lower the K-th best. Admitted by
 * its bound, it is replayed if it fits: its memory verdict is taken here (docs/sweep.md, "Memory last"). */
static gboolean top_k_admit(void *ctx, guint i)
{
  top_k *t = ctx;
  const GArray *b = t->best[t->point[i]];
  gboolean full = b->len >= t->k;
  /* its class's bound (bound_step_work), then its own (bound_step: with the data-parallel traffic and optimizer) */
  if (full && (t->bound[i] > g_array_index(b, double, t->k - 1) ||
               pool_bound(t->rq[i], t->bounds) > g_array_index(b, double, t->k - 1))) {
    t->pruned[i] = TRUE;
    return FALSE;
  }
  t->verdict[i] = pool_verdict(t->rq[i], t->cfg, t->verdicts);
  return t->verdict[i].status == PRED_OK;
}

static void top_k_finished(void *ctx, guint i, const prediction *p)
{
  top_k *t = ctx;
  if (p->status != PRED_OK) return;
  GArray *b = t->best[t->point[i]];
  guint at = 0;
  while (at < b->len && g_array_index(b, double, at) < p->step_time_s) at++;
  if (at < b->len && g_array_index(b, double, at) == p->step_time_s) return; /* a time already counted */
  if (at >= t->k) return;
  g_array_insert_val(b, at, p->step_time_s);
  if (b->len > t->k) g_array_set_size(b, t->k);
}

typedef struct by_bound {
  const double *bound;
} by_bound;

static int cmp_bound(gconstpointer a, gconstpointer b, gpointer data)
{
  const double *bd = ((const by_bound *)data)->bound;
  guint x = *(const guint *)a, y = *(const guint *)b;
  if (bd[x] != bd[y]) return bd[x] < bd[y] ? -1 : 1;
  return (x > y) - (x < y);
}

/* Every request's bound here (and the OOM verdict of those whose static memory alone does not fit); the others
 * taken in order of their bound, each point's stopped as top_k_admit says, each admitted one's memory verdict
 * taken then and the layout replayed if it fits; out, bound and pruned by request (a pruned one's out has how
 * PRED_HOW_NONE: its memory not checked). */
static void run_top_k(sim_request **todo, guint n, const int *point, guint n_points, int k, const pool_cfg *cfg,
                      prediction *out, double *bound, gboolean *pruned)
{
  pool_bounds(todo, n, cfg, out, bound);
  g_autoptr(GArray) open = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    if (out[i].status == PRED_OK) g_array_append_val(open, i);
  by_bound bb = {.bound = bound};
  g_array_sort_with_data(open, cmp_bound, &bb);
  guint f = open->len;
  g_autofree sim_request **sorted = g_new(sim_request *, f ? f : 1);
  g_autofree prediction *res = g_new0(prediction, f ? f : 1), *verdict = g_new0(prediction, f ? f : 1);
  g_autofree int *pt = g_new(int, f ? f : 1);
  g_autofree double *bd = g_new(double, f ? f : 1);
  g_autofree gboolean *pr = g_new0(gboolean, f ? f : 1);
  for (guint j = 0; j < f; j++) {
    guint i = g_array_index(open, guint, j);
    sorted[j] = todo[i];
    pt[j] = point[i];
    bd[j] = bound[i];
  }
  g_autoptr(GHashTable) verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) bounds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  top_k t = {.k = (guint)k, .point = pt, .bound = bd, .pruned = pr, .best = g_new(GArray *, n_points ? n_points : 1),
             .rq = sorted, .verdict = verdict, .cfg = cfg, .verdicts = verdicts, .bounds = bounds};
  for (guint p = 0; p < n_points; p++) t.best[p] = g_array_new(FALSE, FALSE, sizeof(double));
  pool_cfg c = *cfg;
  c.prune_oom = FALSE; /* top_k_admit takes each verdict: every one replayed fits */
  c.admit = top_k_admit;
  c.finished = top_k_finished;
  c.ctx = &t;
  pool_run(sorted, f, &c, res);
  for (guint j = 0; j < f; j++) {
    guint i = g_array_index(open, guint, j);
    if (pr[j]) pruned[i] = TRUE; /* out[i] keeps its placeholder: memory not checked */
    else if (verdict[j].status != PRED_OK) out[i] = verdict[j]; /* does not fit (or failed): not replayed */
    else out[i] = res[j];
  }
  for (guint p = 0; p < n_points; p++) g_array_free(t.best[p], TRUE);
  g_free(t.best);
}

/* The layouts of every point: counted (by_enumeration: walked, for test_sweep). */
static double count_layouts(const sweep_spec *s, const GArray *pts, gboolean by_enumeration)
{
  /* a point's count depends on its profile, stack and GPU count, not on the what-ifs that follow them in the
   * points' order (bandwidths, memory): counted once per run of such points, so that a list of 100 what-if
   * values does not enumerate 100 times before a refusal */
  double layouts = 0, last = 0;
  sizer z;
  sizer_init(&z, s, &g_array_index(pts, point, 0));
  for (guint i = 0; i < pts->len; i++) {
    const point *pt = &g_array_index(pts, point, i), *prev = i ? &g_array_index(pts, point, i - 1) : NULL;
    gboolean same = prev && prev->profile_name == pt->profile_name && prev->stack_name == pt->stack_name &&
                    prev->gpus == pt->gpus && prev->prof.gpus_per_node == pt->prof.gpus_per_node &&
                    profile_gpus_per_domain(&prev->prof) == profile_gpus_per_domain(&pt->prof);
    if (!same && (z.any->profile_name != pt->profile_name || z.any->stack_name != pt->stack_name)) {
      sizer_clear(&z); /* the kernels swept (and so the sizer's counts) are the profile's and its stack's */
      sizer_init(&z, s, pt);
    }
    if (!same) last = by_enumeration ? enumerate_point(NULL, s, pt) : count_point(&z, pt);
    layouts += last;
  }
  sizer_clear(&z);
  return layouts;
}

double sweep_count_layouts(const sweep_spec *s, gboolean by_enumeration, GError **err)
{
  if (!check_lists(s, err)) return -1;
  g_autoptr(GArray) pts = platform_points(s, err);
  return pts ? count_layouts(s, pts, by_enumeration) : -1;
}

csv_table *sweep_run(const sweep_spec *s, GError **err)
{
  if (!model_check_simulable(&s->m, err)) return NULL; /* once, not as every layout's reason */
  if (!check_lists(s, err)) return NULL;
  double n_points = count_points(s);
  if (n_points > SWEEP_MAX_POINTS) return refuse_size(s, n_points, "platform points", err), NULL;
  g_autoptr(GArray) pts = platform_points(s, err);
  if (!pts) return NULL;
  double layouts = count_layouts(s, pts, FALSE);
  if (layouts > SWEEP_MAX_LAYOUTS || ceil(layouts / s->shard_n) > SWEEP_MAX_RUN_LAYOUTS)
    return refuse_size(s, layouts, "layouts", err), NULL;
  guint n;
  const char *const *cols = sweep_columns(&n);
  /* the workers' zygote now, while this process is small: the table and the requests are not yet built */
  pool_cfg pool = s->pool;
  zygote *own = pool.zygote || s->pool.memory_only ? NULL : pool_zygote_start(NULL);
  if (own) pool.zygote = own;
  enumeration e = {.s = s, .t = csv_new(cols, n), .layouts = g_array_new(FALSE, FALSE, sizeof(layout)),
                   .rows = g_array_new(FALSE, FALSE, sizeof(guint)), .points = g_array_new(FALSE, FALSE, sizeof(int))};
  for (guint i = 0; i < pts->len; i++) {
    e.point = (int)i;
    enumerate_point(&e, s, &g_array_index(pts, point, i));
  }
  g_assert(e.index == layouts); /* the count is the enumeration's (test_sweep holds them together) */
  /* The requests, a window of SWEEP_WINDOW at a time (2.4 KiB each, with its prediction 2.9 KiB: a run's
   * rows keep only their layout, 0.35 KiB); exact top-K orders the whole run by its bound: one window. */
  guint k = e.layouts->len;
  gboolean top = s->top > 0 && !pool.memory_only && pool.prune_oom;
  guint window = MAX(top ? k : MIN(k, s->window ? s->window : SWEEP_WINDOW), 1);
  g_autofree sim_request *rqs = g_new(sim_request, window);
  g_autofree sim_request **todo = g_new(sim_request *, window);
  g_autofree prediction *out = g_new(prediction, window);
  g_autofree double *bound = g_new(double, window);
  g_autofree gboolean *pruned = g_new(gboolean, window);
  for (guint at = 0; at < k; at += window) {
    guint w = MIN(window, k - at);
    for (guint j = 0; j < w; j++) {
      int p = g_array_index(e.points, int, at + j);
      rqs[j] = request_at(s, &g_array_index(pts, point, p), &g_array_index(e.layouts, layout, at + j));
      todo[j] = &rqs[j];
    }
    memset(out, 0, w * sizeof *out);
    memset(bound, 0, w * sizeof *bound);
    memset(pruned, 0, w * sizeof *pruned);
    if (top) /* exact top-K: in order of the bound */
      run_top_k(todo, w, (const int *)(void *)e.points->data + at, pts->len, s->top, &pool, out, bound, pruned);
    else pool_run(todo, w, &pool, out);
    for (guint i = 0; s->trusts && i < w; i++)
      if (out[i].status != PRED_INVALID && out[i].how != PRED_HOW_NONE) /* a pruned one's memory is not known */
        trust_assess_by_stack(s->trusts, NULL, todo[i], out[i].peak_gib, out[i].capacity_gib, out[i].fragmentation_limit,
                              &out[i].trust);
    for (guint i = 0; i < w; i++) {
      guint r = g_array_index(e.rows, guint, at + i);
      if (!pruned[i]) {
        set_result(e.t, r, &out[i]);
        continue;
      }
      /* not replayed: its bound is above the K-th best step time replayed at its point; its memory not checked
       * (docs/sweep.md, "Memory last"): no memory columns */
      set(e.t, r, "status", "pruned");
      set(e.t, r, "fidelity", "bound");
      g_autofree char *why = g_strdup_printf("step time at least %.6g s (its lower bound, docs/sweep.md), above the %d "
                                             "best replayed; memory not checked", bound[i], s->top);
      set(e.t, r, "error", why);
    }
  }
  zygote_stop(own);
  if (s->shard_n > 1) mark_shard(e.t, s, e.index);
  g_array_free(e.layouts, TRUE);
  g_array_free(e.rows, TRUE);
  g_array_free(e.points, TRUE);
  return e.t;
}
