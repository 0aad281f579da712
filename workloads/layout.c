/* layout -- see layout.h. LAYOUT_FIELDS below is the layout's field table: adding a field is one line in it
 * (docs/options.md, "Adding a layout field"; a switch: SWITCH or SWITCH_META, where it shows, its report phrase;
 * an enumeration: ENUM and its layout_enum, its key, names (or its registry's), aliases, where it shows and what a
 * sweep covers of it). Its option, predict's columns, the sweep's lists and its error message parse it from here. */
#include "layout.h"

#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "axes.h"
#include "precision.h"
#include "schedule.h"

static const char *const ATTN_NAMES[ATTN_N_KERNELS] = {"torch", "fused-softmax", "flash1", "flash1-legacy",
                                                       "flash2", "flash2+rmsnorm"};
/* each kernel's efficiency class (graph.h): the stack's attention table prices it */
static const int ATTN_CLASSES[ATTN_N_KERNELS] = {GRAPH_ATTN_SCORES, GRAPH_ATTN_SCORES, GRAPH_ATTN_FLASH1,
                                                 GRAPH_ATTN_FLASH1, GRAPH_ATTN_FLASH2, GRAPH_ATTN_FLASH2};

#define FIELD(f, t, k)                                                                                           \
  {.name = #f, .offset = offsetof(layout, f), .size = sizeof(((layout *)0)->f), .type = LAYOUT_FIELD_##t,         \
   .tag = LAYOUT_KEY_##k}
/* A switch (layout.h): a gboolean the memory depends on, where it shows (LAYOUT_SHOW_* bits), its report phrase;
 * SWITCH_META's also in the graph's meta, for the replay (graph.h GRAPH_META_SWITCHES declares its member). */
#define SWITCH(f, s, t)                                                                                          \
  {.name = #f, .offset = offsetof(layout, f), .size = sizeof(((layout *)0)->f), .type = LAYOUT_FIELD_INT,        \
   .tag = LAYOUT_KEY_MEMORY, .shows = (s), .text = (t)}
#define SWITCH_META(f, s, t)                                                                                     \
  {.name = #f, .offset = offsetof(layout, f), .size = sizeof(((layout *)0)->f), .type = LAYOUT_FIELD_INT,        \
   .tag = LAYOUT_KEY_MEMORY, .shows = (s) | LAYOUT_SHOW_META, .text = (t), .meta_offset = offsetof(graph_meta, f)}
/* An enumeration (layout.h layout_enum): a layout_enum E_f declared before the table, with its names. */
#define ENUM(f)                                                                                                  \
  {.name = #f, .offset = offsetof(layout, f), .size = sizeof(((layout *)0)->f), .type = LAYOUT_FIELD_INT,        \
   .tag = LAYOUT_KEY_MEMORY, .en = &E_##f}
static const char *const CP_COMM_NAMES[CP_COMM_N] = {"p2p", "a2a"};
static const char *const NORMK_NAMES[NORMK_N] = {"stack", "torch", "fused"};
static const char *const CKPT_NAMES[] = {"none", "every_layer", "selective", "mlp", "mla_up_proj"};
G_STATIC_ASSERT(G_N_ELEMENTS(CKPT_NAMES) == CKPT_MLA_UP_PROJ + 1);
/* full: Megatron's --recompute-granularity full (method uniform, 1 layer a group); the others silently */
static const layout_enum_alias CKPT_ALIASES[] = {{"full", CKPT_EVERY_LAYER, TRUE},
                                                 {"every-layer", CKPT_EVERY_LAYER, FALSE},
                                                 {"0", CKPT_NONE, FALSE},
                                                 {"false", CKPT_NONE, FALSE},
                                                 {NULL, 0, FALSE}};
static gboolean cp_said(const layout *l) { return l->cp > 1; }
/* The enumerations: their key, names, where they show (layout_enum). Adding one: its names, one E_ line, one ENUM
 * line in the table (docs/options.md, "Adding a layout field"). Where a registry owns the names (the schedules,
 * their modules sched_*.c; the precisions, precision.c) the entry reads it. A sweep without a list covers:
 * checkpointing none and every_layer (the full space selective and mlp too, not mla_up_proj: MLA models only); the
 * attention kernels the profile's (every one in the full space); the study's 1F1B (every schedule); bf16 (fp8 and
 * fp8-cs too where the profile has FP8, analysis/sweep.c; mxfp8, Blackwell's, where listed). */
static const layout_enum E_cp_comm = {.key = "cp_comm_type", .names = CP_COMM_NAMES, .n = CP_COMM_N,
                                      .shows = LAYOUT_SHOW_STRING | LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN,
                                      .said = cp_said};
/* norm_kernel and these four: their columns named in predict.c (calibrate's order), report keys in report.c,
 * layout-string entries by generate.c */
static const layout_enum E_norm_kernel = {.key = "norm_kernel", .names = NORMK_NAMES, .n = NORMK_N};
static const layout_enum E_ckpt = {.key = "checkpointing", .names = CKPT_NAMES, .n = G_N_ELEMENTS(CKPT_NAMES),
                                   .any_case = TRUE, .aliases = CKPT_ALIASES, .sweep_default = CKPT_EVERY_LAYER + 1,
                                   .sweep_full = CKPT_MLP + 1};
static const layout_enum E_attn = {.key = "attention_kernel", .names = ATTN_NAMES, .n = ATTN_N_KERNELS,
                                   .sweep_full = LAYOUT_SWEEP_ALL};
static const layout_enum E_schedule = {.key = "schedule", .count = sched_count, .name_of = sched_name,
                                       .any_case = TRUE, .sweep_default = 1, .sweep_full = LAYOUT_SWEEP_ALL};
static const layout_enum E_precision = {.key = "precision", .names = PRECISION_NAMES, .n = PREC_N,
                                        .sweep_default = 1, .sweep_full = PREC_FP8_CS + 1};
/* Every field of struct layout but the axes' degrees, with its type and its tag (the macro takes both).
 * Adding a switch (docs/options.md, "Adding a layout field"): one SWITCH line here, in the order it shows, and
 * its option (cli/option_table.c, .field = F(rq.l.NAME)); the generator, report and predict pick it up. */
static const layout_field LAYOUT_FIELDS[] = {
    FIELD(gpus, INT, MEMORY),
    FIELD(moe_imbalance, DOUBLE, MEMORY),
    FIELD(moe_capacity_factor, DOUBLE, MEMORY),
    FIELD(sp, INT, MEMORY),
    ENUM(cp_comm),
    FIELD(micro_batch, INT, MEMORY),
    FIELD(global_batch, INT, MEMORY),
    FIELD(seq_len, INT, MEMORY),
    ENUM(ckpt),
    ENUM(attn),
    ENUM(norm_kernel),
    FIELD(zero, INT, MEMORY),
    FIELD(overlap_grad_reduce, INT, MEMORY),
    FIELD(overlap_param_gather, INT, MEMORY),
    SWITCH(overlap_moe_ep_comm, LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN, "MoE all-to-alls overlapped in F&B pairs"),
    SWITCH_META(cuda_graph, LAYOUT_SHOW_STRING | LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN, "one CUDA graph"),
    /* a set, not an enumeration: its option, column, report key and layout-string entry name it (docs/moe.md) */
    FIELD(cuda_graph_scope, INT, MEMORY),
    /* the replay reads the routing, not the switch: generate.c sets graph meta flex_experts and flex_top_k */
    SWITCH(moe_flex_dispatcher, LAYOUT_SHOW_STRING | LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN, "flex token dispatcher"),
    SWITCH(fp8_param_gather, LAYOUT_SHOW_STRING | LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN, "FP8 primary weights"),
    FIELD(grad_accum, INT, DERIVED),
    ENUM(schedule),
    FIELD(virtual_stages, INT, MEMORY),
    ENUM(precision),
    FIELD(pipeline_layout, TEXT, MEMORY),
};
#undef FIELD
#undef SWITCH
#undef SWITCH_META
#undef ENUM

const layout_field *layout_fields(gsize *n)
{
  *n = G_N_ELEMENTS(LAYOUT_FIELDS);
  return LAYOUT_FIELDS;
}

gboolean layout_switch_on(const layout *l, const layout_field *f)
{
  g_assert(f->shows && f->type == LAYOUT_FIELD_INT && f->size == sizeof(gboolean));
  return *(const gboolean *)((const char *)l + f->offset) != 0;
}

const layout_field *layout_enum_field(const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS(LAYOUT_FIELDS); i++)
    if (LAYOUT_FIELDS[i].en && (!strcmp(LAYOUT_FIELDS[i].en->key, key) || !strcmp(LAYOUT_FIELDS[i].name, key)))
      return &LAYOUT_FIELDS[i];
  return NULL;
}

const layout_field *layout_field_at(gsize offset)
{
  for (gsize i = 0; i < G_N_ELEMENTS(LAYOUT_FIELDS); i++)
    if (LAYOUT_FIELDS[i].offset == offset) return &LAYOUT_FIELDS[i];
  return NULL;
}

int layout_enum_count(const layout_field *f) { return f->en->names ? f->en->n : f->en->count(); }

const char *layout_enum_name(const layout_field *f, int v)
{
  if (v < 0 || v >= layout_enum_count(f)) return "?";
  return f->en->names ? f->en->names[v] : f->en->name_of(v);
}

static gboolean same_name(const layout_enum *e, const char *a, const char *b)
{
  return e->any_case ? !g_ascii_strcasecmp(a, b) : !strcmp(a, b);
}

char *layout_enum_allowed(const layout_field *f)
{
  GString *allowed = g_string_new(NULL);
  for (int i = 0; i < layout_enum_count(f); i++) {
    g_string_append_printf(allowed, "%s%s", i ? ", " : "", layout_enum_name(f, i));
    for (const layout_enum_alias *a = f->en->aliases; a && a->name; a++)
      if (a->shown && a->value == i) g_string_append_printf(allowed, " (or %s)", a->name);
  }
  return g_string_free(allowed, FALSE);
}

gboolean layout_enum_parse(const layout_field *f, const char *s, int *out, GError **err)
{
  g_assert(f->en);
  for (int i = 0; i < layout_enum_count(f); i++)
    if (same_name(f->en, s, layout_enum_name(f, i))) {
      *out = i;
      return TRUE;
    }
  for (const layout_enum_alias *a = f->en->aliases; a && a->name; a++)
    if (same_name(f->en, s, a->name)) {
      *out = a->value;
      return TRUE;
    }
  g_autofree char *allowed = layout_enum_allowed(f);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: unknown '%s' (allowed: %s)", f->en->key, s, allowed);
  return FALSE;
}

int layout_enum_value(const layout *l, const layout_field *f)
{
  g_assert(f->en && f->size == sizeof(int));
  return *(const int *)((const char *)l + f->offset);
}

int layout_enum_sweep_count(const layout_field *f, gboolean full)
{
  int n = full ? f->en->sweep_full : f->en->sweep_default;
  return n == LAYOUT_SWEEP_ALL ? layout_enum_count(f) : MIN(n, layout_enum_count(f));
}

gboolean layout_enum_said(const layout *l, const layout_field *f) { return !f->en->said || f->en->said(l); }

void layout_enums_string(const layout *l, GString *out)
{
  for (gsize i = 0; i < G_N_ELEMENTS(LAYOUT_FIELDS); i++) {
    const layout_field *f = &LAYOUT_FIELDS[i];
    if (!f->en || !(f->en->shows & LAYOUT_SHOW_STRING) || !layout_enum_said(l, f)) continue;
    int v = layout_enum_value(l, f);
    if (v != 0) g_string_append_printf(out, " %s=%s", f->en->key, layout_enum_name(f, v)); /* 0: the silent default */
  }
}

void layout_memory_key(const layout *l, GString *out)
{
  for (int a = 0; a < AXIS_N; a++)
    if (!axis_get(a)->derived) g_string_append_printf(out, " %s=%d", axis_get(a)->name, axis_size(l, a));
  for (gsize i = 0; i < G_N_ELEMENTS(LAYOUT_FIELDS); i++) {
    const layout_field *f = &LAYOUT_FIELDS[i];
    const char *at = (const char *)l + f->offset;
    if (f->tag != LAYOUT_KEY_MEMORY) continue;
    if (f->type == LAYOUT_FIELD_INT) g_string_append_printf(out, " %s=%d", f->name, *(const int *)at);
    else if (f->type == LAYOUT_FIELD_DOUBLE) g_string_append_printf(out, " %s=%.17g", f->name, *(const double *)at);
    else g_string_append_printf(out, " %s='%.*s'", f->name, (int)f->size, at);
  }
}
layout layout_default(void)
{
  layout l = {.gpus = 64, .sp = FALSE, .micro_batch = 1, .global_batch = 2048,
              .seq_len = 2048, .ckpt = CKPT_NONE, .attn = ATTN_FLASH2_RMSNORM, .zero = 1,
              .schedule = 0, .virtual_stages = 1, .moe_imbalance = 1.0};
  for (int a = 0; a < AXIS_N; a++) /* every axis' degree 1; dp's set by layout_validate */
    if (!axis_get(a)->derived) axis_set_size(&l, a, 1);
  return l;
}

/* Megatron-Core's CudaGraphScope names (megatron/core/transformer/enums.py), bit i the i-th (layout.h) */
static const char *const CG_SCOPE_NAMES[CG_SCOPE_N + 1] = {
    "full", "attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba", "full_iteration", NULL};

gboolean layout_cg_scope_parse(const char *s, int *out, GError **err)
{
  int scope = 0;
  if (!*s) s = "+"; /* nothing named: refused as the empty member */
  if (strcmp(s, "none") != 0) {
    g_auto(GStrv) parts = g_strsplit_set(s, "+,", -1);
    for (char **p = parts; *p; p++) {
      int i = 0;
      while (i < CG_SCOPE_N && strcmp(*p, CG_SCOPE_NAMES[i]) != 0) i++;
      if (i == CG_SCOPE_N) { /* the allowed names from the table */
        g_autofree char *names = g_strjoinv(", ", (char **)CG_SCOPE_NAMES);
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "cuda_graph_scope: unknown '%s' (allowed: none, or one or more of %s joined by '+')", *p, names);
        return FALSE;
      }
      scope |= 1 << i;
    }
  }
  *out = scope;
  return TRUE;
}

const char *layout_cg_scope_name(int scope, char *buf)
{
  buf[0] = 0;
  for (int i = 0; i < CG_SCOPE_N; i++) {
    if (!(scope & (1 << i))) continue;
    if (buf[0]) g_strlcat(buf, "+", LAYOUT_CG_SCOPE_NAME_MAX);
    g_strlcat(buf, CG_SCOPE_NAMES[i], LAYOUT_CG_SCOPE_NAME_MAX);
  }
  if (!buf[0]) g_strlcpy(buf, "none", LAYOUT_CG_SCOPE_NAME_MAX);
  return buf;
}

const char *layout_attn_name(layout_attn a) { return ATTN_NAMES[a]; }
gboolean layout_combined_1f1b(const layout *l)
{
  return l->overlap_moe_ep_comm && l->pp == 1 && strcmp(sched_name(l->schedule), "1f1b") == 0;
}

double layout_moe_load(const layout *l, const model *m)
{
  double cf = l->moe_capacity_factor > 0 ? l->moe_capacity_factor : m->moe.capacity_factor;
  return cf > 0 && cf < l->moe_imbalance ? cf : l->moe_imbalance;
}

double layout_tokens_per_rank(const layout *l) { return (double)l->micro_batch * l->seq_len / l->cp; }

int layout_dp_cp(const layout *l) { return (int)axis_product(l, axis_mask_sharding(AXIS_REPLICATES_WEIGHTS)); }
const char *layout_ckpt_name(layout_ckpt c) { return CKPT_NAMES[c]; }
gboolean layout_attn_is_flash(layout_attn a) { return a >= ATTN_FLASH1; }
int layout_attn_class(layout_attn a) { return ATTN_CLASSES[a]; }
const char *layout_norm_kernel_name(layout_norm_kernel k) { return NORMK_NAMES[k]; }

gboolean layout_norm_fused(const layout *l, gboolean stack_fused)
{
  if (l->norm_kernel != NORMK_STACK) return l->norm_kernel == NORMK_FUSED;
  return stack_fused || l->attn == ATTN_FLASH2_RMSNORM;
}

gboolean layout_cp_a2a(const layout *l) { return l->cp > 1 && l->cp_comm == CP_COMM_A2A; }

static gboolean fail(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(GError **err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, msg);
  return FALSE;
}

/* The tensor-parallel degrees up to 64 a model allows: those dividing its heads, key/value heads and vocabulary. */
static char *allowed_tp(const model *m)
{
  GString *s = g_string_new(NULL);
  for (int t = 1; t <= 64; t++)
    if (m->heads % t == 0 && m->kv_heads % t == 0 && m->vocab % t == 0) g_string_append_printf(s, "%s%d", s->len ? ", " : "", t);
  return g_string_free(s, FALSE);
}

/* Whether the schedule splits a backward into B and W on some stage (at 2 pp + 2 micro-batches). */
static gboolean split_backward(int schedule, int pp)
{
  for (int s = 0; s < pp; s++) {
    g_autoptr(GArray) in = sched_instructions(schedule, s, pp, 1, 2 * pp + 2);
    for (guint i = 0; i < in->len; i++)
      if (g_array_index(in, sched_instr, i).kind == SCHED_BACKWARD_W) return TRUE;
  }
  return FALSE;
}

/* ZeRO 2 and 3 are modelled for one chunk per stage, and they and the overlaps for a whole backward
 * (docs/memory.md); the overlaps at ZeRO 0/1 also with chunks (Megatron-Core's interleaved schedule: each chunk
 * reduces its gradients as its last backward completes them, docs/schedules.md). */
static gboolean check_zero(const layout *l, GError **err)
{
  if (l->zero < 0 || l->zero > LAYOUT_MAX_ZERO) return fail(err, "zero: %d (allowed: 0, 1, 2, 3)", l->zero);
  if (l->overlap_param_gather && l->zero != 1 && l->zero != 2)
    return fail(err, "overlap_param_gather: needs zero 1 or 2, whose parameter all-gather follows the optimizer "
                "(got zero %d; zero 3 gathers each layer before its forward and backward already) (allowed: --zero 1 "
                "or 2 with --overlap-param-gather)", l->zero);
  const char *what = l->zero >= 2 ? "zero" : l->overlap_grad_reduce ? "overlap_grad_reduce"
                   : l->overlap_param_gather ? "overlap_param_gather" : NULL;
  if (!what) return TRUE;
  g_autofree char *shown = l->zero >= 2 ? g_strdup_printf("zero %d", l->zero) : g_strdup(what);
  if (l->virtual_stages > 1 && l->zero >= 2)
    return fail(err, "%s: not modelled with virtual_stages %d (allowed: virtual_stages 1; or zero 0 or 1, with or "
                "without the overlaps)", shown, l->virtual_stages);
  if (split_backward(l->schedule, l->pp))
    return fail(err, "%s: not modelled with schedule %s, which splits the backward (allowed: schedule 1f1b or gpipe; "
                "or zero 0 or 1 without the overlaps)", shown, sched_name(l->schedule));
  return TRUE;
}

/* The axes other than tp and pp (checked first, with their own messages) divide what tp and pp leave of the GPUs,
 * one after another in the table's order: gpus = the product of every axis' degree (the derived dp's too). */
static gboolean check_axes_divide(const layout *l, GError **err)
{
  g_autoptr(GString) before = g_string_new("tp*pp"), all = g_string_new(NULL);
  for (int a = 0; a < AXIS_N; a++) /* an axis added later (its column optional) named where it is used */
    if (!axis_get(a)->folded && (!axis_get(a)->column_optional || axis_size(l, a) != 1))
      g_string_append_printf(all, "%s%s", all->len ? "*" : "", axis_get(a)->name);
  gint64 used = (gint64)l->tp * l->pp;
  for (int a = 0; a < AXIS_N; a++) {
    int v = axis_size(l, a);
    if (axis_get(a)->derived || axis_get(a)->folded || a == AXIS_TP || a == AXIS_PP || v == 1) continue;
    gint64 rest = l->gpus / used;
    if (rest % v != 0)
      return fail(err, "%s: %d does not divide gpus/(%s) = %" G_GINT64_FORMAT " (allowed: divisors of %" G_GINT64_FORMAT
                  ", gpus = %s)", axis_get(a)->name, v, before->str, rest, rest, all->str);
    g_string_append_printf(before, "*%s", axis_get(a)->name);
    used *= v;
  }
  return TRUE;
}

/* Expert parallelism (Megatron's parallel folding, docs/moe.md): the expert layers' etp*ep ranks are a part of a
 * stage's tp*cp*dp ranks, ep splits the routed experts, etp each expert's inner width. Called with dp derived. */
static gboolean check_experts(const layout *l, const model *m, GError **err)
{
  if (!(l->moe_imbalance >= 1.0 && l->moe_imbalance <= 1024.0))
    return fail(err, "moe_imbalance: %g is not a max-over-mean ratio (allowed: 1..1024, 1 balanced)", l->moe_imbalance);
  if (!(l->moe_capacity_factor == 0 || (l->moe_capacity_factor > 0 && l->moe_capacity_factor <= 64)))
    return fail(err, "moe_capacity_factor: %g is not a capacity factor (allowed: above 0 up to 64; 0 the model's)",
                l->moe_capacity_factor);
  if (l->moe_imbalance != 1.0 && !model_has_experts(m)) /* a what-if with nothing to act on: refused, not ignored */
    return fail(err, "moe_imbalance: %g on %s, a model without experts (allowed: 1)", l->moe_imbalance, m->name);
  if (l->moe_capacity_factor > 0 && !model_has_experts(m))
    return fail(err, "moe_capacity_factor: %g on %s, a model without experts (allowed: 0)", l->moe_capacity_factor,
                m->name);
  if (model_has_experts(m) && l->tp > 1 && !l->sp) /* Megatron-Core's check (arguments.py) */
    return fail(err, "sp: 0 with tp %d on %s, a model with experts; Megatron needs sequence parallelism with MoE and "
                "tensor parallelism (allowed: --sp 1, or tp 1)", l->tp, m->name);
  if (l->ep == 1 && l->etp == 1) return TRUE;
  const char *which = l->ep > 1 ? "ep" : "etp";
  int v = l->ep > 1 ? l->ep : l->etp;
  if (!model_has_experts(m))
    return fail(err, "%s: %d on %s, a model without experts (allowed: 1)", which, v, m->name);
  if (m->moe.experts % l->ep != 0)
    return fail(err, "ep: %d does not divide the %d experts of %s (allowed: divisors of %d)", l->ep, m->moe.experts,
                m->name, m->moe.experts);
  gint64 dense = (gint64)l->tp * l->cp * l->dp, expert = (gint64)l->etp * l->ep;
  if (dense % expert != 0)
    return fail(err, "ep: etp*ep = %d*%d does not divide tp*cp*dp = %" G_GINT64_FORMAT " (allowed: etp*ep a divisor of "
                "%" G_GINT64_FORMAT ": the expert layers are folded onto the same ranks)", l->etp, l->ep, dense, dense);
  if (m->moe.expert_ffn % l->etp != 0)
    return fail(err, "etp: %d does not divide the experts' inner width %d (allowed: divisors of %d)", l->etp,
                m->moe.expert_ffn, m->moe.expert_ffn);
  return TRUE;
}

/* Megatron-Core's rules for a CUDA graph scope (megatron/core/transformer/transformer_config.py __post_init__ at
 * NVIDIA/Megatron-LM@2b343d7, "Refactor cuda_graph_scope"), those that speak of what a layout here has, each refused
 * with its reason; full_iteration alone becomes the switch cuda_graph (the whole step as one graph: its own
 * implementation, "local", where the others are Transformer Engine's). Called with the experts checked. */
static gboolean check_cg_scope(layout *l, const model *m, GError **err)
{
  int s = l->cuda_graph_scope;
  if (s == 0) return TRUE;
  if (s & ~((1 << CG_SCOPE_N) - 1)) return fail(err, "cuda_graph_scope: bits %#x (allowed: below %#x)", s, 1 << CG_SCOPE_N);
  char name[LAYOUT_CG_SCOPE_NAME_MAX];
  layout_cg_scope_name(s, name);
  if (s & CG_SCOPE_FULL_ITERATION) {
    if (s != CG_SCOPE_FULL_ITERATION)
      return fail(err, "cuda_graph_scope: '%s': full_iteration captures the whole step, alone (allowed: full_iteration "
                  "alone, or the others without it)", name);
    l->cuda_graph = TRUE; /* the same graph as --cuda-graph */
    l->cuda_graph_scope = 0;
    return TRUE;
  }
  if (l->cuda_graph)
    return fail(err, "cuda_graph_scope: '%s' with cuda_graph, the whole step already one graph (allowed: none with "
                "--cuda-graph)", name);
  if ((s & CG_SCOPE_FULL) && s != CG_SCOPE_FULL)
    return fail(err, "cuda_graph_scope: '%s': full is the whole layer, alone (allowed: full alone, or parts without it)",
                name);
  if (s & CG_SCOPE_MAMBA)
    return fail(err, "cuda_graph_scope: '%s': mamba captures Mamba layers, which %s has not (allowed: full, attn, mlp, "
                "moe, moe_router, moe_preprocess)", name, m->name);
  gboolean experts = model_has_experts(m), dense = !experts;
  for (int i = 0; experts && i < m->layers; i++) dense |= !model_layer_is_moe(m, i);
  if ((s & (CG_SCOPE_MOE | CG_SCOPE_MOE_ROUTER | CG_SCOPE_MOE_PREPROCESS)) && !experts)
    return fail(err, "cuda_graph_scope: '%s': moe, moe_router and moe_preprocess capture MoE layers, which %s has not "
                "(allowed: full, attn, mlp)", name, m->name);
  if ((s & CG_SCOPE_MLP) && !dense)
    return fail(err, "cuda_graph_scope: '%s': mlp captures a dense layer's MLP, and every layer of %s is MoE (allowed: "
                "moe, moe_router, moe_preprocess, attn)", name, m->name);
  if ((s & CG_SCOPE_MOE) && (s & CG_SCOPE_MOE_ROUTER))
    return fail(err, "cuda_graph_scope: '%s': moe already holds moe_router (allowed: one of them)", name);
  if ((s & CG_SCOPE_MOE_PREPROCESS) && !(s & CG_SCOPE_MOE_ROUTER))
    return fail(err, "cuda_graph_scope: '%s': moe_preprocess follows the router in one graph (allowed: with "
                "moe_router)", name);
  /* a graph needs static shapes: dropless routing's token counts per expert are read back by the host */
  gboolean dropped = experts && (l->moe_capacity_factor > 0 || m->moe.capacity_factor > 0);
  if ((s & (CG_SCOPE_MOE | CG_SCOPE_FULL)) && experts && !dropped)
    return fail(err, "cuda_graph_scope: '%s' captures the MoE block, which needs drop-and-pad routing, and %s routes "
                "dropless (allowed: with --moe-capacity-factor, or attn, moe_router, moe_preprocess)", name, m->name);
  if ((s & CG_SCOPE_MOE_PREPROCESS) && dropped && !l->moe_flex_dispatcher)
    return fail(err, "cuda_graph_scope: '%s': the alltoall dispatcher's preprocess with a capacity factor copies the "
                "counts to the host (allowed: moe_router without moe_preprocess, or dropless, or "
                "--moe-flex-dispatcher)", name);
  if (l->ckpt == CKPT_EVERY_LAYER)
    return fail(err, "cuda_graph_scope: '%s' with checkpointing every_layer; Megatron graphs a fully recomputed layer "
                "only in a whole-step graph (allowed: full_iteration, or checkpointing none, selective or mlp)", name);
  if (l->ckpt == CKPT_MLP && experts && (s & CG_SCOPE_MOE_ROUTER))
    return fail(err, "cuda_graph_scope: '%s' with checkpointing mlp, which recomputes the MoE block around the graphed "
                "router (allowed: attn, or checkpointing none or selective)", name);
  return TRUE;
}

/* Range checks come before any product is formed, and products are 64-bit, so no input overflows. */
gboolean layout_validate(layout *l, const model *m, GError **err)
{
  if (l->gpus < 1) return fail(err, "gpus: must be a positive integer (got %d)", l->gpus);
  for (int a = 0; a < AXIS_N; a++) /* the axes' degrees (axes.h) */
    if (!axis_get(a)->derived && axis_size(l, a) < 1)
      return fail(err, "%s: must be a positive integer (got %d)", axis_get(a)->name, axis_size(l, a));
  struct { const char *name; int v; } pos[] = {{"micro_batch", l->micro_batch},
                                               {"global_batch", l->global_batch}, {"seq_len", l->seq_len}};
  for (size_t i = 0; i < G_N_ELEMENTS(pos); i++)
    if (pos[i].v < 1) return fail(err, "%s: must be a positive integer (got %d)", pos[i].name, pos[i].v);
  if (l->gpus > LAYOUT_MAX_GPUS)
    return fail(err, "gpus: %d is more than the simulator can run (allowed: 1..%d; what a run may take is its memory estimate's)",
                l->gpus, LAYOUT_MAX_GPUS);
  if (m->heads % l->tp != 0) { /* how tp sits on the nodes is the profile's question (sim_request_prepare) */
    g_autofree char *tps = allowed_tp(m);
    return fail(err, "tp: %d does not divide the %d attention heads of %s (allowed: %s)", l->tp, m->heads, m->name,
                tps);
  }
  if (m->kv_heads % l->tp != 0) /* Megatron splits the key/value heads over tp, as the query heads */
    return fail(err, "tp: %d does not divide the %d key/value heads of %s (allowed: divisors of kv_heads)", l->tp,
                m->kv_heads, m->name);
  if (l->attn == ATTN_FLASH2_RMSNORM && l->norm_kernel == NORMK_TORCH)
    return fail(err, "norm_kernel: torch contradicts attention_kernel flash2+rmsnorm, which fuses the norm (allowed: "
                "attention_kernel flash2 with norm_kernel torch, or norm_kernel fused or stack)");
  if (m->vocab % l->tp != 0) /* the study's code asserts it: its vocabulary-parallel embedding and head split evenly */
    return fail(err, "vocab: %d is not a multiple of tp=%d; the embedding and the output head split the vocabulary "
                "evenly over tp, and this stack's code does not pad it (allowed: multiples of %d, e.g. --vocab %d, or "
                "a stack that pads, --stack nemo or megatron-deepspeed: docs/model.md)", m->vocab, l->tp, l->tp,
                (m->vocab / l->tp + 1) * l->tp);
  if (l->pp > m->layers)
    return fail(err, "pp: %d exceeds the %d layers of %s (allowed: 1..%d)", l->pp, m->layers, m->name, m->layers);
  if (l->pp > l->gpus / l->tp)
    return fail(err, "pp: %d is more than gpus/tp = %d (allowed: 1..%d)", l->pp, l->gpus / l->tp, l->gpus / l->tp);
  if (l->gpus % (l->tp * l->pp) != 0)
    return fail(err, "gpus: %d is not a multiple of tp*pp = %d (allowed: gpus = dp*tp*pp)", l->gpus, l->tp * l->pp);
  if (!check_axes_divide(l, err)) return FALSE;
  if (l->cp > 1) { /* the ring's 2*cp chunks of a sequence; TransformerEngine's flash kernels */
    if (l->seq_len % (2 * l->cp) != 0)
      return fail(err, "seq_len: %d is not a multiple of 2*cp = %d; the ring splits each sequence into 2*cp chunks "
                  "(allowed: multiples of %d)", l->seq_len, 2 * l->cp, 2 * l->cp);
    if (!layout_attn_is_flash(l->attn))
      return fail(err, "attention_kernel: %s with cp %d; context parallelism runs TransformerEngine's ring of "
                  "FlashAttention kernels (allowed: flash1, flash1-legacy, flash2, flash2+rmsnorm; or cp 1)",
                  layout_attn_name(l->attn), l->cp);
    /* a2a: each rank's heads/tp query heads and kv_heads/tp key/value heads split over the cp group
     * (TransformerEngine: "cp_comm_type='a2a' requires num_heads % cp_size == 0 for Q, K, V") */
    int kv = model_has_mla(m) ? m->heads : m->kv_heads;
    if (l->cp_comm == CP_COMM_A2A && (m->heads % (l->tp * l->cp) != 0 || kv % (l->tp * l->cp) != 0))
      return fail(err, "cp_comm_type: a2a with tp*cp = %d does not divide %s's %d heads and %d key/value heads (allowed: "
                  "p2p, or tp*cp dividing both)", l->tp * l->cp, m->name, m->heads, kv);
  }
  if (l->sp && l->seq_len % l->tp != 0)
    return fail(err, "seq_len: %d must be a multiple of tp=%d with sequence parallelism (allowed: multiples of %d)",
                l->seq_len, l->tp, l->tp);
  if (l->sp && l->cp > 1 && l->seq_len % ((gint64)l->tp * 2 * l->cp) != 0) /* each rank's s/cp tokens split over tp */
    return fail(err, "seq_len: %d must be a multiple of tp*2*cp=%d with sequence and context parallelism (allowed: "
                "multiples of %d)", l->seq_len, l->tp * 2 * l->cp, l->tp * 2 * l->cp);
  if ((gint64)l->micro_batch * l->seq_len > LAYOUT_MAX_MICRO_BATCH_TOKENS)
    return fail(err, "micro_batch: %d sequences of %d tokens is more than %d tokens per micro-batch (allowed: "
                "micro_batch * seq_len <= %d)", l->micro_batch, l->seq_len, LAYOUT_MAX_MICRO_BATCH_TOKENS,
                LAYOUT_MAX_MICRO_BATCH_TOKENS);
  for (int a = 0; a < AXIS_N; a++) /* dp: gpus / the other degrees' product */
    if (axis_get(a)->derived) axis_set_size(l, a, (int)(l->gpus / axis_product(l, AXIS_ALL & ~AXIS_BIT(a))));
  if (!check_experts(l, m, err)) return FALSE;
  if (!check_cg_scope(l, m, err)) return FALSE;
  if (l->ckpt == CKPT_MLA_UP_PROJ && !model_has_mla(m))
    return fail(err, "checkpointing: mla_up_proj recomputes latent attention's up-projections, which %s has not "
                "(allowed: mla_up_proj with a model with kv_lora_rank, e.g. deepseek-v3)", m->name);
  gint64 per_step = (gint64)l->dp * l->micro_batch; /* sequences per micro-batch step over all replicas */
  if (l->global_batch % per_step != 0)
    return fail(err, "global_batch: %d is not a multiple of dp*micro_batch = %d*%d (allowed: multiples of %" G_GINT64_FORMAT ")",
                l->global_batch, l->dp, l->micro_batch, per_step);
  l->grad_accum = (int)(l->global_batch / per_step);
  if (l->grad_accum > LAYOUT_MAX_MICRO_BATCHES)
    return fail(err,
                "global_batch: %d gives %d micro-batches per step (global_batch / (dp*micro_batch)); allowed: at most "
                "%d (raise micro_batch or gpus, or lower global_batch)",
                l->global_batch, l->grad_accum, LAYOUT_MAX_MICRO_BATCHES);
  if (l->schedule < 0 || l->schedule >= sched_count()) return fail(err, "schedule: unknown id %d", l->schedule);
  /* a pipeline layout string places the layers itself: the schedule need not split them evenly */
  gboolean placed = l->pipeline_layout[0] != 0;
  if (!sched_check(l->schedule, l->pp, l->virtual_stages, l->grad_accum,
                   placed ? l->pp * l->virtual_stages : m->layers, err))
    return FALSE;
  if (placed) {
    int vstages = l->pp * l->virtual_stages;
    g_autofree int *bounds = g_new(int, vstages + 1);
    if (!pipeline_layout_bounds(l->pipeline_layout, m->layers, m->mtp_layers, vstages, bounds, err)) return FALSE;
  }
  if (l->overlap_moe_ep_comm) { /* the F&B pairs' all-to-alls beside the other pass (docs/schedules.md) */
    if (!model_has_experts(m))
      return fail(err, "overlap_moe_ep_comm: %s has no experts, so no all-to-all to overlap (allowed: a model "
                  "with experts, or without --overlap-moe-ep-comm)", m->name);
    if (l->ep < 2)
      return fail(err, "overlap_moe_ep_comm: ep %d moves no tokens between ranks (allowed: ep 2 or more)", l->ep);
    if (strcmp(sched_name(l->schedule), "dualpipev") != 0 && !layout_combined_1f1b(l))
      return fail(err, "overlap_moe_ep_comm: schedule %s at pp %d runs no forward-backward pairs (allowed: schedule "
                  "dualpipev, whose F&B pairs it overlaps, or 1f1b at pp 1, Megatron's combined 1F1B)",
                  sched_name(l->schedule), l->pp);
  }
  if (l->moe_flex_dispatcher && !model_has_experts(m))
    return fail(err, "moe_flex_dispatcher: %s has no experts, so no tokens to dispatch (allowed: a model with "
                "experts, or without --moe-flex-dispatcher)", m->name);
  if (l->fp8_param_gather && l->precision == PREC_BF16)
    return fail(err, "fp8_param_gather: FP8 primary weights need FP8 linear layers, got precision bf16 (allowed: "
                "--precision fp8, fp8-cs or mxfp8, or without --fp8-param-gather)");
  if (l->fp8_param_gather && l->zero >= 3)
    return fail(err, "fp8_param_gather: not modelled with zero %d, which shards the weights themselves (allowed: "
                "--zero 0, 1 or 2 with --fp8-param-gather)", l->zero);
  return check_zero(l, err);
}
