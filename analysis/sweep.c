/* sweep -- see sweep.h. */
#include "sweep.h"

#include "workloads/precision.h"

#include <string.h>

#include "energy.h"
#include "common/lsim_error.h"
#include "workloads/partition.h"
#include "workloads/schedule.h"

/* The canonical table: the enumeration index, the layout as predict reads it, the platform, the result. */
static const char *const COLUMNS[] = {
    "index", "model", "model_file", "seq_len", "global_batch", "vocab", "gpus", "checkpointing", "attention_kernel",
    "micro_batch", "tp", "pp", "cp", "sp", "partition", "schedule", "virtual_stages", "zero", "overlap_grad_reduce", "overlap_param_gather", "precision", "profile", "stack", "ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory",
    "fabric", "leaf_nodes", "oversubscription",
    "status", "fidelity", "step_time_s", "mfu", "tokens_per_s", "bubble_fraction", "peak_mem_gib", "headroom_gib",
    "band_pct", "flags", "energy_j", "kwh_per_mtok", "t_forward_s", "t_backward_s", "t_recompute_s", "t_tp_comm_s", "t_pp_wait_s", "t_dp_comm_s", "t_optimizer_s",
    "t_idle_s", "error"};
G_STATIC_ASSERT(TL_N == 8);

const char *const *sweep_columns(guint *n)
{
  *n = G_N_ELEMENTS(COLUMNS);
  return COLUMNS;
}

/* Columns a sweep's CSV from before them lacks: its rows had their defaults (cp 1, zero 1, no overlap). */
static gboolean optional_column(const char *col)
{
  static const char *const later[] = {"cp", "zero", "overlap_grad_reduce", "overlap_param_gather", "precision"};
  for (size_t i = 0; i < G_N_ELEMENTS(later); i++)
    if (!strcmp(col, later[i])) return TRUE;
  return FALSE;
}

gboolean sweep_check_table(const csv_table *t, const char *path, GError **err)
{
  for (size_t i = 0; i < G_N_ELEMENTS(COLUMNS); i++)
    if (csv_column(t, COLUMNS[i]) < 0 && !optional_column(COLUMNS[i])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (allowed: the CSV of layoutsim sweep "
                  "--format csv, as --shard writes it)", path, COLUMNS[i]);
      return FALSE;
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

/* The values of a layout axis at (point, tp, pp, cp): the user's list, or every valid one. */
static GArray *axis_values(const sweep_spec *s, sweep_layout_axis ax, const point *pt, int tp, int pp, int cp, int gb)
{
  if (s->layout[ax] && ax != AX_VS) return g_array_ref(s->layout[ax]);
  GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
  const model *m = &s->m;
  int node = pt->prof.gpus_per_node;
  switch (ax) {
  case AX_TP:
    for (int t = 1; t <= node && t <= 8; t *= 2)
      if (node % t == 0 && m->heads % t == 0 && m->vocab % t == 0 && pt->gpus % t == 0) g_array_append_val(v, t);
    break;
  case AX_PP:
    for (int p = 1; p <= m->layers && tp > 0 && p <= pt->gpus / tp; p++)
      if ((pt->gpus / tp) % p == 0 && pt->gpus % tp == 0) g_array_append_val(v, p);
    break;
  case AX_SP:
    for (int sp = 0; sp <= (tp > 1 && s->seq_len % tp == 0); sp++) g_array_append_val(v, sp);
    break;
  case AX_CKPT:
    for (int c = CKPT_NONE; c <= CKPT_EVERY_LAYER; c++) g_array_append_val(v, c);
    break;
  case AX_ATTN:
    for (int a = 0; a < ATTN_N_KERNELS; a++) g_array_append_val(v, a);
    break;
  case AX_SCHED: {
    int study = 0;
    g_array_append_val(v, study); /* left out: the study's 1F1B */
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
    for (int c = 2; pp > 0 && c * pp <= m->layers; c++)
      if (m->layers % (c * pp) == 0) g_array_append_val(v, c);
    break;
  case AX_CP: { /* not searched: context parallelism only where listed (--cp) */
    int one = 1;
    g_array_append_val(v, one);
    break;
  }
  case AX_PREC: { /* not searched: FP8 only where listed (--precision) */
    int bf16 = PREC_BF16;
    g_array_append_val(v, bf16);
    break;
  }
  case AX_MB: {
    int dp = tp * pp * cp > 0 && pt->gpus % (tp * pp * cp) == 0 ? pt->gpus / (tp * pp * cp) : 0;
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
  GArray *requests; /* sim_request of the rows to evaluate, parallel to `rows` */
  GArray *rows;     /* guint: their row in t */
  guint index;      /* next enumeration index */
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
  set_int(t, r, "tp", l->tp);
  set_int(t, r, "pp", l->pp);
  set_int(t, r, "cp", l->cp);
  set_int(t, r, "sp", l->sp);
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
  g_array_append_val(e->requests, rq);
  g_array_append_val(e->rows, r);
}

static void enumerate_point(enumeration *e, const point *pt)
{
  const sweep_spec *s = e->s;
  int gb = s->global_batch > 0 ? s->global_batch : MAX(1, 4194304 / s->seq_len);
  g_autoptr(GArray) tps = axis_values(s, AX_TP, pt, 0, 0, 1, gb);
  for (guint a = 0; a < tps->len; a++) {
    int tp = ival(tps, a);
    g_autoptr(GArray) pps = axis_values(s, AX_PP, pt, tp, 0, 1, gb);
    for (guint b = 0; b < pps->len; b++) {
      int pp = ival(pps, b);
      g_autoptr(GArray) cps = axis_values(s, AX_CP, pt, tp, pp, 1, gb);
      for (guint q = 0; q < cps->len; q++) {
        int cp = ival(cps, q);
        g_autoptr(GArray) sps = axis_values(s, AX_SP, pt, tp, pp, cp, gb);
        g_autoptr(GArray) cks = axis_values(s, AX_CKPT, pt, tp, pp, cp, gb);
        g_autoptr(GArray) ats = axis_values(s, AX_ATTN, pt, tp, pp, cp, gb);
        g_autoptr(GArray) mbs = axis_values(s, AX_MB, pt, tp, pp, cp, gb);
        g_autoptr(GArray) scs = axis_values(s, AX_SCHED, pt, tp, pp, cp, gb);
        g_autoptr(GArray) prs = axis_values(s, AX_PREC, pt, tp, pp, cp, gb);
        for (guint pr = 0; pr < prs->len; pr++) /* outermost of these: a bf16 sweep keeps its indices */
        for (guint c = 0; c < sps->len; c++)
          for (guint d = 0; d < cks->len; d++)
            for (guint f = 0; f < ats->len; f++)
              for (guint g = 0; g < mbs->len; g++)
                for (guint h = 0; h < scs->len; h++) { /* innermost: the study's enumeration keeps its indices */
                  g_autoptr(GArray) vss = axis_values(s, AX_VS, pt, ival(scs, h), pp, cp, gb);
                  for (guint k = 0; k < vss->len; k++) {
                    layout l = layout_default();
                    l.gpus = pt->gpus;
                    l.tp = tp;
                    l.pp = pp;
                    l.cp = cp;
                    l.sp = ival(sps, c) != 0;
                    l.ckpt = (layout_ckpt)ival(cks, d);
                    l.attn = (layout_attn)ival(ats, f);
                    l.micro_batch = ival(mbs, g);
                    l.seq_len = s->seq_len;
                    l.global_batch = gb;
                    l.schedule = ival(scs, h);
                    l.virtual_stages = ival(vss, k);
                    l.zero = s->zero;
                    l.overlap_grad_reduce = s->overlap_grad_reduce;
                    l.overlap_param_gather = s->overlap_param_gather;
                    l.precision = ival(prs, pr);
                    add_row(e, pt, &l);
                  }
                }
      }
    }
  }
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
      point pt = {.profile_name = profile, .stack_name = stack, .prof = base, .capacity_gib = base.memory_gib,
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
  for (int c = 0; c < TL_N; c++) {
    g_autofree char *name = g_strdup_printf("t_%s_s", tl_cat_name(c));
    g_strdelimit(name, "-", '_');
    set_num(t, r, name, p->seconds[c]);
  }
}

/* A shard's rows say which slice they are and how many layouts the whole sweep enumerated: merge
 * then knows every index it must find, even when the shard that is missing holds the last ones. */
static void mark_shard(csv_table *t, const sweep_spec *s, guint enumerated)
{
  int cs = csv_add_column(t, SWEEP_SHARD_COLUMN), ce = csv_add_column(t, SWEEP_ENUMERATED_COLUMN);
  g_autofree char *shard = g_strdup_printf("%d/%d", s->shard_i, s->shard_n);
  g_autofree char *n = g_strdup_printf("%u", enumerated);
  for (guint r = 0; r < t->rows->len; r++) {
    csv_set(t, r, cs, shard);
    csv_set(t, r, ce, n);
  }
}

csv_table *sweep_run(const sweep_spec *s, GError **err)
{
  g_autoptr(GArray) pts = platform_points(s, err);
  if (!pts) return NULL;
  guint n;
  const char *const *cols = sweep_columns(&n);
  /* the workers' zygote now, while this process is small: the table and the requests are not yet built */
  pool_cfg pool = s->pool;
  zygote *own = pool.zygote || s->pool.memory_only ? NULL : pool_zygote_start(NULL);
  if (own) pool.zygote = own;
  enumeration e = {.s = s, .t = csv_new(cols, n), .requests = g_array_new(FALSE, FALSE, sizeof(sim_request)),
                   .rows = g_array_new(FALSE, FALSE, sizeof(guint))};
  for (guint i = 0; i < pts->len; i++) enumerate_point(&e, &g_array_index(pts, point, i));
  guint k = e.requests->len;
  g_autofree sim_request **todo = g_new(sim_request *, k ? k : 1);
  g_autofree prediction *out = g_new0(prediction, k ? k : 1);
  for (guint i = 0; i < k; i++) todo[i] = &g_array_index(e.requests, sim_request, i);
  pool_run(todo, k, &pool, out);
  zygote_stop(own);
  for (guint i = 0; s->trusts && i < k; i++)
    if (out[i].status != PRED_INVALID)
      trust_assess_by_stack(s->trusts, NULL, todo[i], out[i].peak_gib, out[i].capacity_gib, out[i].fragmentation_limit,
                            &out[i].trust);
  for (guint i = 0; i < k; i++) set_result(e.t, g_array_index(e.rows, guint, i), &out[i]);
  if (s->shard_n > 1) mark_shard(e.t, s, e.index);
  g_array_free(e.requests, TRUE);
  g_array_free(e.rows, TRUE);
  return e.t;
}
