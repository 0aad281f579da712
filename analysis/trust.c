/* trust -- see trust.h and docs/trust.md. */
#include "trust.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "platforms/fabric.h"
#include "platforms/profile.h"
#include "platforms/whatif.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct field {
  const char *key;
  size_t off;
  double lo, hi;
} field;

#define F(k, lo, hi) {#k, offsetof(trust_table, k), lo, hi}
#define C(c, name, k, lo, hi) {name "_" #k, offsetof(trust_table, cls[TRUST_CLASS_##c]) + offsetof(trust_class_stats, k), lo, hi}
static const field FIELDS[] = {
    F(ib_gbps, 0, 1e6),           F(nvlink_gbps, 0, 1e6),          F(nics_per_node, 1, 128),
    F(model_params_min, 0, 1e16), F(model_params_max, 0, 1e16),    F(seq_len_min, 1, 1e7),
    F(seq_len_max, 1, 1e7),       F(nodes_min, 1, 1e6),            F(nodes_max, 1, 1e6),
    C(BASE, "base", rows, 0, 1e9),        C(BASE, "base", p90_pct, 0, 1e4),        C(BASE, "base", bias_pct, -1e4, 1e4),
    C(PP2, "pp2", rows, 0, 1e9),         C(PP2, "pp2", p90_pct, 0, 1e4),         C(PP2, "pp2", bias_pct, -1e4, 1e4),
    C(TP8_CKPT, "tp8_checkpointing", rows, 0, 1e9),    C(TP8_CKPT, "tp8_checkpointing", p90_pct, 0, 1e4),    C(TP8_CKPT, "tp8_checkpointing", bias_pct, -1e4, 1e4),
    F(score_block_gib, 0, 1e6),   F(scores_rows, 0, 1e9),          F(scores_oom, 0, 1e9),
    F(fragmentation_margin, 0, 1), F(oos_p90_pct, 0, 1e4), F(band_pct_per_doubling, 1e-6, 100),
};
#undef F
#undef C

static const char *const OTHER_KEYS[] = {"name", "comment", "profile", "schedule", "cp_min", "cp_max"};

static double *slot(trust_table *t, const field *f) { return (double *)((char *)t + f->off); }

gboolean trust_load_file(const char *path, trust_table *out, GError **err)
{
  memset(out, 0, sizeof *out);
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, err);
  if (!j) return FALSE;
  gboolean ok = FALSE;
  const char *keys[G_N_ELEMENTS(OTHER_KEYS) + G_N_ELEMENTS(FIELDS)];
  guint n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(OTHER_KEYS); i++) keys[n++] = OTHER_KEYS[i];
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) keys[n++] = FIELDS[i].key;
  if (!cJSON_IsObject(j)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: a trust table is a JSON object (got %s)", path,
                lsim_json_type_name(j));
    goto out;
  }
  if (!lsim_json_known_keys(j, keys, n, path, err) || !lsim_json_name(j, "name", out->name, sizeof out->name, path, err) ||
      !lsim_json_name(j, "profile", out->profile, sizeof out->profile, path, err) ||
      !lsim_json_name(j, "schedule", out->schedule, sizeof out->schedule, path, err))
    goto out;
  const char *c = NULL;
  if (cJSON_GetObjectItemCaseSensitive(j, "comment") && !lsim_json_string(j, "comment", &c, path, err)) goto out;
  if (c) g_strlcpy(out->comment, c, sizeof out->comment);
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) {
    double *v = slot(out, &FIELDS[i]);
    if (!lsim_json_number(j, FIELDS[i].key, v, path, err)) goto out;
    if (!(*v >= FIELDS[i].lo && *v <= FIELDS[i].hi)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s: %g is out of range (allowed: %g to %g)", path,
                  FIELDS[i].key, *v, FIELDS[i].lo, FIELDS[i].hi);
      goto out;
    }
  }
  out->cp_min = out->cp_max = 1; /* optional: tables of runs without context parallelism omit them */
  for (int k = 0; k < 2; k++) {
    const char *key = k ? "cp_max" : "cp_min";
    double *v = k ? &out->cp_max : &out->cp_min;
    if (!cJSON_GetObjectItemCaseSensitive(j, key)) continue;
    if (!lsim_json_number(j, key, v, path, err)) goto out;
    if (!(*v >= 1 && *v <= 1024)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s: %g is out of range (allowed: 1 to 1024)", path, key, *v);
      goto out;
    }
  }
  if (out->model_params_min > out->model_params_max || out->seq_len_min > out->seq_len_max ||
      out->nodes_min > out->nodes_max || out->cp_min > out->cp_max) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: a *_min above its *_max (allowed: min <= max)", path);
    goto out;
  }
  ok = TRUE;
out:
  cJSON_Delete(j);
  return ok;
}

gboolean trust_load_named(const char *name, trust_table *out, GError **err)
{
  if (strchr(name, '/') || strstr(name, ".json")) return trust_load_file(name, out, err);
  g_autofree char *file = g_strconcat(name, ".json", NULL);
  g_autofree char *path = lsim_data_path("analysis/trust", file);
  return trust_load_file(path, out, err);
}

GHashTable *trust_cache_new(void) { return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free); }

gboolean trust_lookup(GHashTable *cache, const char *stack, const trust_table **out, GError **err)
{
  gpointer v;
  if (g_hash_table_lookup_extended(cache, stack, NULL, &v)) {
    *out = v;
    return TRUE;
  }
  g_autofree char *file = g_strconcat(stack, ".json", NULL);
  g_autofree char *path = lsim_data_path("analysis/trust", file);
  trust_table *t = NULL;
  if (g_file_test(path, G_FILE_TEST_EXISTS)) {
    t = g_new(trust_table, 1);
    if (!trust_load_file(path, t, err)) {
      g_free(t);
      return FALSE;
    }
  }
  g_hash_table_insert(cache, g_strdup(stack), t);
  *out = t;
  return TRUE;
}

void trust_put(const trust_table *t, FILE *f)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", t->name);
  if (t->comment[0]) cJSON_AddStringToObject(j, "comment", t->comment);
  cJSON_AddStringToObject(j, "profile", t->profile);
  cJSON_AddStringToObject(j, "schedule", t->schedule);
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++)
    cJSON_AddNumberToObject(j, FIELDS[i].key, *slot((trust_table *)t, &FIELDS[i]));
  if (t->cp_min > 1 || t->cp_max > 1) {
    cJSON_AddNumberToObject(j, "cp_min", t->cp_min);
    cJSON_AddNumberToObject(j, "cp_max", t->cp_max);
  }
  char *text = cJSON_Print(j);
  fprintf(f, "%s\n", text);
  cJSON_free(text);
  cJSON_Delete(j);
}

static const char *const FLAG_NAMES[TRUST_N_FLAGS] = {
    "pp2-cost", "tp8-checkpointing", "large-scores", "near-oom",
    "outside:model-size", "outside:seq-len", "outside:nodes", "outside:platform", "outside:schedule",
    "outside:checkpointing",
    "outside:cp", "uncalibrated-profile", "outside:moe"};
static const char *const CLASS_NAMES[TRUST_N_CLASSES] = {"base", "pp2", "tp8-checkpointing"};

const char *trust_flag_name(trust_flag f) { return FLAG_NAMES[f]; }
const char *trust_class_name(trust_class c) { return CLASS_NAMES[c]; }

/* GiB of the fp32 scores of one rank and micro-batch: b * heads / tp * s^2 elements (docs/memory.md). */
static double score_block_gib(const sim_request *rq)
{
  const layout *l = &rq->l;
  return 4.0 * l->micro_batch * rq->m.heads / l->tp * (double)l->seq_len * l->seq_len / GIB;
}

guint trust_regime_flags(const trust_table *t, const sim_request *rq)
{
  const layout *l = &rq->l;
  guint f = 0;
  if (l->pp == 2 && l->tp <= 2) f |= 1u << TRUST_PP2;
  if (l->tp == 8 && l->ckpt == CKPT_EVERY_LAYER) f |= 1u << TRUST_TP8_CKPT;
  if (!layout_attn_is_flash(l->attn) && t->score_block_gib > 0 && score_block_gib(rq) >= t->score_block_gib)
    f |= 1u << TRUST_SCORES;
  return f;
}

trust_class trust_class_of(guint flags)
{
  if (flags & (1u << TRUST_PP2)) return TRUST_CLASS_PP2;
  if (flags & (1u << TRUST_TP8_CKPT)) return TRUST_CLASS_TP8_CKPT;
  return TRUST_CLASS_BASE;
}

/* Outside [lo, hi], with a relative slack for values written with fewer digits than computed. */
static gboolean outside(double v, double lo, double hi) { return v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9); }

/* Leaves under oversubscribed uplinks: leaf groups of a fat-tree, or the leaves of a rail fabric. */
static gboolean blocking_fabric(const gpu_profile *p)
{
  return p->oversubscription > 1 && (p->leaf_nodes > 0 || fabric_is_rail(p->fabric));
}

static gboolean platform_differs(const trust_table *t, const gpu_profile *p)
{
  return strcmp(p->name, t->profile) || fabs(whatif_profile_value(WHATIF_IB_GBPS, p) - t->ib_gbps) > 1e-6 * t->ib_gbps ||
         fabs(whatif_profile_value(WHATIF_NVLINK_GBPS, p) - t->nvlink_gbps) > 1e-6 * t->nvlink_gbps ||
         whatif_profile_value(WHATIF_NICS_PER_NODE, p) != t->nics_per_node || blocking_fabric(p);
}

/* How far v lies outside [lo, hi], in doublings (0 inside). */
static double doublings_outside(double v, double lo, double hi)
{
  if (v <= 0 || lo <= 0) return 0;
  return v < lo ? log2(lo / v) : v > hi ? log2(v / hi) : 0;
}

/* The calibration profile's peak (the trust table's `profile`), loaded once per name. */
static double calibrated_peak_flops(const char *name)
{
  static GHashTable *peaks; /* name -> double* */
  G_LOCK_DEFINE_STATIC(peaks);
  G_LOCK(peaks);
  if (!peaks) peaks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  double *v = g_hash_table_lookup(peaks, name);
  if (!v) {
    gpu_profile p = {0};
    v = g_new(double, 1);
    *v = profile_load_named(name, &p, NULL) ? p.peak_flops : 0;
    g_hash_table_insert(peaks, g_strdup(name), v);
  }
  double peak = *v;
  G_UNLOCK(peaks);
  return peak;
}

/* The machine's distance: the doublings of its dense peak from the calibration GPU's (the trust table's
 * `profile`), at least one for another profile (a categorical change); a profile not calibrated in the layout's
 * precision (datasheet figures) one doubling more, so that it is never as close as a calibrated one
 * (docs/trust.md, "Uncalibrated profiles"). */
static double machine_doublings(const trust_table *t, const sim_request *rq)
{
  double cal = calibrated_peak_flops(t->profile);
  double d = cal > 0 && rq->prof.peak_flops > 0 ? fabs(log2(rq->prof.peak_flops / cal)) : 0;
  if (strcmp(rq->prof.name, t->profile)) d = MAX(1.0, d);
  if (!profile_calibrated_for(&rq->prof, rq->l.precision)) d += 1;
  return d;
}

/* The links' distance (outside:platform): the largest doublings among IB, NVLink and NICs per node against the
 * table's; a platform file or a blocking fabric at least one. */
static double links_doublings(const trust_table *t, const sim_request *rq)
{
  const gpu_profile *p = &rq->prof;
  const double now[] = {whatif_profile_value(WHATIF_IB_GBPS, p), whatif_profile_value(WHATIF_NVLINK_GBPS, p),
                        whatif_profile_value(WHATIF_NICS_PER_NODE, p)};
  const double then[] = {t->ib_gbps, t->nvlink_gbps, t->nics_per_node};
  double far = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(now); i++)
    if (now[i] > 0 && then[i] > 0) far = MAX(far, fabs(log2(now[i] / then[i])));
  if (rq->replay.platform_file || blocking_fabric(p)) far = MAX(far, 1.0);
  return far;
}

/* The distance outside the calibration data: root-sum-square over the dimensions of their doublings (model
 * size, sequence length, node count, cp, links, machine) or one (schedule, partial checkpointing, experts):
 * independent dimensions add in quadrature (docs/trust.md, "Outside the calibration data"). */
static double outside_distance(const trust_table *t, const sim_request *rq, const trust_assessment *a)
{
  guint f = a->flags;
  double x[10];
  size_t n = 0;
  if (f & (1u << TRUST_OUT_MODEL)) x[n++] = doublings_outside(a->model_params, t->model_params_min, t->model_params_max);
  if (f & (1u << TRUST_OUT_SEQ)) x[n++] = doublings_outside(a->seq_len, t->seq_len_min, t->seq_len_max);
  if (f & (1u << TRUST_OUT_NODES)) x[n++] = doublings_outside(a->nodes, t->nodes_min, t->nodes_max);
  if (f & (1u << TRUST_OUT_CP)) x[n++] = MAX(1.0, doublings_outside(a->cp, MAX(t->cp_min, 1), MAX(t->cp_max, 1)));
  if (f & (1u << TRUST_OUT_PLATFORM)) x[n++] = links_doublings(t, rq);
  x[n++] = machine_doublings(t, rq);
  const trust_flag one[] = {TRUST_OUT_SCHEDULE, TRUST_OUT_CKPT, TRUST_OUT_MOE};
  for (size_t i = 0; i < G_N_ELEMENTS(one); i++)
    if (f & (1u << one[i])) x[n++] = 1;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += x[i] * x[i];
  return sqrt(sum);
}

void trust_assess(const trust_table *t, const sim_request *rq, double peak_gib, double capacity_gib,
                  double fragmentation_limit, trust_assessment *out)
{
  memset(out, 0, sizeof *out);
  const layout *l = &rq->l;
  out->model_params = model_params(&rq->m);
  out->score_block_gib = score_block_gib(rq);
  out->seq_len = l->seq_len;
  out->schedule = l->schedule;
  out->pp = l->pp;
  out->nodes = (l->gpus + rq->prof.gpus_per_node - 1) / rq->prof.gpus_per_node;
  out->headroom_gib = capacity_gib - peak_gib;
  guint f = trust_regime_flags(t, rq);
  if (fabs(fragmentation_limit - rq->prof.stack.fragmentation) <= t->fragmentation_margin) f |= 1u << TRUST_NEAR_OOM;
  if (outside(out->model_params, t->model_params_min, t->model_params_max)) f |= 1u << TRUST_OUT_MODEL;
  if (outside(l->seq_len, t->seq_len_min, t->seq_len_max)) f |= 1u << TRUST_OUT_SEQ;
  if (outside(out->nodes, t->nodes_min, t->nodes_max)) f |= 1u << TRUST_OUT_NODES;
  if (platform_differs(t, &rq->prof) || rq->replay.platform_file) f |= 1u << TRUST_OUT_PLATFORM;
  if (l->pp > 1 && strcmp(sched_name(l->schedule), t->schedule)) f |= 1u << TRUST_OUT_SCHEDULE; /* pp 1: no pipeline */
  if (l->ckpt == CKPT_SELECTIVE || l->ckpt == CKPT_MLP || l->ckpt == CKPT_MLA_UP_PROJ) f |= 1u << TRUST_OUT_CKPT;
  if (outside(l->cp, MAX(t->cp_min, 1), MAX(t->cp_max, 1))) f |= 1u << TRUST_OUT_CP; /* the runs' cp range (1-1 when unset) */
  out->cp = l->cp;
  if (model_has_experts(&rq->m)) f |= 1u << TRUST_OUT_MOE; /* no calibration run had experts */
  out->flags = f;
  out->cls = trust_class_of(f);
  const trust_class_stats *c = t->cls[out->cls].rows > 0 ? &t->cls[out->cls] : &t->cls[TRUST_CLASS_BASE];
  if (!profile_calibrated_for(&rq->prof, rq->l.precision)) /* never a calibrated profile's band: docs/trust.md */
    out->flags |= 1u << TRUST_UNCALIBRATED;
  /* the base: the class's P90 times the table's out-of-sample / in-sample ratio of the base class (never below 1) */
  double in = t->cls[TRUST_CLASS_BASE].p90_pct;
  out->base_pct = c->p90_pct * (in > 0 && t->oos_p90_pct > in ? t->oos_p90_pct / in : 1);
  out->distance = outside_distance(t, rq, out);
  double grow = t->band_pct_per_doubling * out->distance;
  out->band_pct = sqrt(out->base_pct * out->base_pct + grow * grow);
  out->widening = out->base_pct > 0 ? out->band_pct / out->base_pct : 1;
}

gboolean trust_assess_by_stack(GHashTable *cache, const trust_table *fallback, const sim_request *rq, double peak_gib,
                               double capacity_gib, double fragmentation_limit, trust_assessment *out)
{
  const trust_table *t = NULL;
  g_autoptr(GError) bad = NULL;
  if (!trust_lookup(cache, rq->prof.stack.name, &t, &bad)) return FALSE;
  if (!t) t = fallback;
  if (!t) return FALSE;
  trust_assess(t, rq, peak_gib, capacity_gib, fragmentation_limit, out);
  return TRUE;
}

char *trust_flags_string(guint flags)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < TRUST_N_FLAGS; i++)
    if (flags & (1u << i)) g_string_append_printf(s, "%s%s", s->len ? ";" : "", FLAG_NAMES[i]);
  return g_string_free(s, FALSE);
}

static double billions(double n) { return n / 1e9; }

char **trust_warnings(const trust_table *t, const sim_request *rq, const trust_assessment *a,
                      double fragmentation_limit)
{
  GPtrArray *w = g_ptr_array_new();
  /* the time regimes: what the calibration runs of the class say, in the direction they were off */
  static const struct { trust_flag flag; trust_class cls; const char *what; } TIME[] = {
      {TRUST_PP2, TRUST_CLASS_PP2, "pp 2 at tp <= 2"}, {TRUST_TP8_CKPT, TRUST_CLASS_TP8_CKPT, "tp 8 with checkpointing"}};
  for (size_t i = 0; i < G_N_ELEMENTS(TIME); i++) {
    const trust_class_stats *c = &t->cls[TIME[i].cls];
    if (!(a->flags & (1u << TIME[i].flag)) || c->rows <= 0) continue;
    g_ptr_array_add(w, g_strdup_printf("%s: the %g calibration runs of this regime were off by %+.1f%% on average "
                                       "(P90 %.1f%%; docs/trust.md)%s",
                                       TIME[i].what, c->rows, c->bias_pct, c->p90_pct,
                                       c->bias_pct < -1 ? ": read the step time as a lower bound" : ""));
  }
  if (a->flags & (1u << TRUST_SCORES))
    g_ptr_array_add(w, g_strdup_printf("unfused attention with a %.1f GiB fp32 score block per rank: of %g such "
                                       "calibration runs predicted to fit, %g ran out of memory (docs/trust.md): "
                                       "the memory verdict is optimistic",
                                       a->score_block_gib, t->scores_rows, t->scores_oom));
  if (a->flags & (1u << TRUST_NEAR_OOM))
    g_ptr_array_add(w, g_strdup_printf("OOM risk: the verdict flips at fragmentation %.3f, within %.2f of the profile's "
                                       "%.3f (headroom %.1f GiB; docs/trust.md)",
                                       fragmentation_limit, t->fragmentation_margin, rq->prof.stack.fragmentation,
                                       a->headroom_gib));
  GString *out = g_string_new(NULL);
  if (a->flags & (1u << TRUST_OUT_MODEL))
    g_string_append_printf(out, "%smodel size %.1fB (calibrated %.1fB-%.1fB)", out->len ? ", " : "",
                           billions(a->model_params), billions(t->model_params_min), billions(t->model_params_max));
  if (a->flags & (1u << TRUST_OUT_SEQ))
    g_string_append_printf(out, "%ssequence length %d (calibrated %g-%g)", out->len ? ", " : "", a->seq_len,
                           t->seq_len_min, t->seq_len_max);
  if (a->flags & (1u << TRUST_OUT_NODES))
    g_string_append_printf(out, "%s%d %s (calibrated %g-%g)", out->len ? ", " : "", a->nodes,
                           a->nodes == 1 ? "node" : "nodes", t->nodes_min, t->nodes_max);
  if (a->flags & (1u << TRUST_OUT_PLATFORM)) {
    const gpu_profile *p = &rq->prof;
    if (strcmp(p->name, t->profile))
      g_string_append_printf(out, "%sprofile %s (calibrated %s%s)", out->len ? ", " : "", p->name, t->profile,
                             profile_calibrated_for(p, rq->l.precision) ? "" : "; the profile itself is not calibrated in this precision");
    const double now[] = {whatif_profile_value(WHATIF_IB_GBPS, p), whatif_profile_value(WHATIF_NVLINK_GBPS, p),
                          whatif_profile_value(WHATIF_NICS_PER_NODE, p)};
    const double then[] = {t->ib_gbps, t->nvlink_gbps, t->nics_per_node};
    const whatif_axis axes[] = {WHATIF_IB_GBPS, WHATIF_NVLINK_GBPS, WHATIF_NICS_PER_NODE};
    for (size_t i = 0; i < G_N_ELEMENTS(axes); i++)
      if (fabs(now[i] - then[i]) > 1e-6 * then[i])
        g_string_append_printf(out, "%s%s %g (calibrated %g)", out->len ? ", " : "", whatif_column(axes[i]), now[i],
                               then[i]);
    if (rq->replay.platform_file)
      g_string_append_printf(out, "%sthe platform file %s (calibrated on the built cluster)", out->len ? ", " : "",
                             rq->replay.platform_file);
    if (blocking_fabric(p) && fabric_is_rail(p->fabric))
      g_string_append_printf(out, "%soversubscription %g above the leaves of fabric %s (calibrated on a non-blocking "
                             "fabric)", out->len ? ", " : "", p->oversubscription, fabric_name(p->fabric));
    else if (blocking_fabric(p))
      g_string_append_printf(out, "%soversubscription %g above leaves of %g nodes (calibrated on a non-blocking fabric)",
                             out->len ? ", " : "", p->oversubscription, p->leaf_nodes);
  }
  if (a->flags & (1u << TRUST_OUT_SCHEDULE))
    g_string_append_printf(out, "%sschedule %s (calibrated %s)", out->len ? ", " : "", sched_name(a->schedule),
                           t->schedule);
  if (a->flags & (1u << TRUST_OUT_CKPT))
    g_string_append_printf(out, "%scheckpointing %s (calibrated none and every_layer)", out->len ? ", " : "",
                           layout_ckpt_name(rq->l.ckpt));
  if (a->flags & (1u << TRUST_OUT_CP)) /* the ring's exchanges run after the attention kernels, not under them */
    g_string_append_printf(out, "%scp %d (calibrated %g-%g%s)", out->len ? ", " : "", a->cp, MAX(t->cp_min, 1),
                           MAX(t->cp_max, 1), a->cp > 1 ? "; the KV ring's exchanges are not overlapped with the "
                                                          "attention: docs/model.md" : "");
  if (a->flags & (1u << TRUST_OUT_MOE))
    g_string_append_printf(out, "%sexperts (ep %d, imbalance %g; calibrated on dense models only: docs/moe.md)",
                           out->len ? ", " : "", rq->l.ep, rq->l.moe_imbalance);
  if (a->flags & (1u << TRUST_UNCALIBRATED))
    g_ptr_array_add(w, g_strdup_printf("profile %s is not calibrated in %s (no fit on measured %s runs on it): the band is widened "
                                       "%.3gx, %.2f doublings outside the calibration data, the machine itself included, at "
                                       "%.2f points per doubling in quadrature with the base (docs/trust.md)",
                                       rq->prof.name, precision_name(rq->l.precision), precision_name(rq->l.precision),
                                       a->widening, a->distance, t->band_pct_per_doubling));
  else if (out->len)
    g_ptr_array_add(w, g_strdup_printf("outside the calibration data: %s; the band is widened %.3gx, %.2f doublings out at "
                                       "%.2f points per doubling in quadrature with the base (docs/trust.md)",
                                       out->str, a->widening, a->distance, t->band_pct_per_doubling));
  if (out->len && (a->flags & (1u << TRUST_UNCALIBRATED)))
    g_ptr_array_add(w, g_strdup_printf("outside the calibration data: %s (docs/trust.md)", out->str));
  g_string_free(out, TRUE);
  g_ptr_array_add(w, NULL);
  return (char **)g_ptr_array_free(w, FALSE);
}
