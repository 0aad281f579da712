/* graph -- see graph.h. The JSON form is written by streaming (graphs of
 * millions of events would not fit a cJSON tree comfortably) and read with
 * cJSON. Doubles are printed with 17 significant digits so that a saved and
 * reloaded graph replays to exactly the same times. */
#include "graph.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "common/lsim_outfile.h"

static const char *const COST_NAMES[COST_N] = {"none", "gemm", "attention", "memory"};
static const char *const PHASE_NAMES[PH_N] = {"forward", "backward", "recompute", "dp", "optimizer"};
static const char *const KIND_NAMES[EV_N_KINDS] = {"compute", "collective", "send", "recv"};
static const char *const COLL_NAMES[COLL_N] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"};
static const char *const DTYPE_NAMES[DT_N] = {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "mxfp8", "fp32"};
G_STATIC_ASSERT(DT_N <= 16); /* graph_event.dtype is 4 bits */

/* analysis/footprint.c counts 64 bytes an event */
G_STATIC_ASSERT(sizeof(graph_event) == 64);

const char *graph_cost_name(graph_cost c) { return COST_NAMES[c]; }

int graph_op_id(graph *g, const char *name)
{
  for (guint i = 0; i < g->op_names->len; i++)
    if (!strcmp(g_ptr_array_index(g->op_names, i), name)) return (int)i;
  if (g->op_names->len >= GRAPH_MAX_OPS) return -1;
  g_ptr_array_add(g->op_names, g_strdup(name));
  return (int)g->op_names->len - 1;
}

const char *graph_op_name(const graph *g, int op)
{
  return op >= 0 && (guint)op < g->op_names->len ? g_ptr_array_index(g->op_names, op) : "?";
}
const char *graph_phase_name(graph_phase ph) { return PHASE_NAMES[ph]; }
const char *graph_kind_name(graph_kind k) { return KIND_NAMES[k]; }
const char *graph_coll_name(graph_coll c) { return COLL_NAMES[c]; }
const char *graph_dtype_name(graph_dtype d) { return DTYPE_NAMES[d]; }
gboolean graph_dtype_is_fp8(graph_dtype d) { return d == DT_FP8_E4M3 || d == DT_FP8_E5M2 || d == DT_MXFP8; }

static void program_free(gpointer data)
{
  graph_program *p = data;
  if (!p) return; /* a rank a partly loaded graph never reached */
  if (p->events) g_array_free(p->events, TRUE);
  if (p->deps) g_array_free(p->deps, TRUE);
  if (p->group_map) g_hash_table_destroy(p->group_map);
  g_free(p);
}

static void group_free(gpointer data)
{
  graph_group *gr = data;
  g_array_free(gr->ranks, TRUE);
  g_free(gr);
}

graph *graph_new(int world_size)
{
  graph *g = g_new0(graph, 1);
  g->world_size = world_size;
  g->programs = g_ptr_array_new_with_free_func(program_free);
  g_ptr_array_set_size(g->programs, world_size);
  g->groups = g_ptr_array_new_with_free_func(group_free);
  g->op_names = g_ptr_array_new_with_free_func(g_free);
  graph_op_id(g, "comm"); /* GRAPH_OP_COMM */
  return g;
}

void graph_free(graph *g)
{
  if (!g) return;
  g_ptr_array_free(g->programs, TRUE);
  g_ptr_array_free(g->groups, TRUE);
  g_ptr_array_free(g->op_names, TRUE);
  g_free(g);
}

int graph_add_group_class(graph *g, const int *ranks, int n, const char *label, traffic_class c)
{
  graph_group *gr = g_new0(graph_group, 1);
  gr->ranks = g_array_sized_new(FALSE, FALSE, sizeof(int), n);
  g_array_append_vals(gr->ranks, ranks, n);
  g_strlcpy(gr->label, label ? label : "", sizeof gr->label);
  gr->tclass = (uint8_t)c;
  g_ptr_array_add(g->groups, gr);
  return (int)g->groups->len - 1;
}

int graph_add_group(graph *g, const int *ranks, int n, const char *label)
{
  int c = tc_from_name(label);
  return graph_add_group_class(g, ranks, n, label, c < 0 ? TC_OTHER : (traffic_class)c);
}

graph_program *graph_program_of(graph *g, int rank)
{
  graph_program *p = g_ptr_array_index(g->programs, rank);
  if (!p) {
    p = g_new0(graph_program, 1);
    p->rank = rank;
    p->mirror_of = -1;
    p->events = g_array_new(FALSE, FALSE, sizeof(graph_event));
    g->programs->pdata[rank] = p;
  }
  return p;
}

void graph_make_mirror(graph *g, int rank, int mirror_of, int active_from)
{
  graph_program *p = graph_program_of(g, rank);
  if (p->events) g_array_free(p->events, TRUE);
  p->events = NULL;
  p->mirror_of = mirror_of;
  p->active_from = active_from;
}

void graph_add_dep(graph *g, int rank, int event, int after)
{
  graph_program *p = graph_program_of(g, rank);
  if (!p->deps) p->deps = g_array_new(FALSE, FALSE, sizeof(graph_dep));
  graph_dep d = {event, after};
  g_array_append_val(p->deps, d);
}

int graph_dep_of(const graph_program *p, int i)
{
  if (!p->deps) return -1;
  guint lo = 0, hi = p->deps->len; /* deps are by increasing event */
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    const graph_dep *d = &g_array_index(p->deps, graph_dep, mid);
    if (d->event == i) return d->after;
    if (d->event < i) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

gboolean graph_program_streamed(const graph_program *p)
{
  if (!p->events) return FALSE;
  if (p->deps && p->deps->len) return TRUE;
  for (guint i = 0; i < p->events->len; i++)
    if (g_array_index(p->events, graph_event, i).stream) return TRUE;
  return FALSE;
}

void graph_map_group(graph *g, int rank, int from_group, int to_group)
{
  graph_program *p = graph_program_of(g, rank);
  if (!p->group_map) p->group_map = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(p->group_map, GINT_TO_POINTER(from_group), GINT_TO_POINTER(to_group));
}

const graph_event *graph_program_events(const graph *g, const graph_program *p, int *n_out, int *first_out)
{
  const graph_program *src = p->mirror_of >= 0 ? g_ptr_array_index(g->programs, p->mirror_of) : p;
  *first_out = p->mirror_of >= 0 ? p->active_from : 0;
  *n_out = (int)src->events->len;
  return (const graph_event *)src->events->data;
}

int graph_group_for(const graph_program *p, int gid)
{
  gpointer v;
  if (p->group_map && g_hash_table_lookup_extended(p->group_map, GINT_TO_POINTER(gid), NULL, &v))
    return GPOINTER_TO_INT(v);
  return gid;
}

/* Place of `rank` in the ring order of `gr`, -1 when not a member. */
static int group_place(const graph_group *gr, int rank)
{
  for (guint j = 0; j < gr->ranks->len; j++)
    if (g_array_index(gr->ranks, int, j) == rank) return (int)j;
  return -1;
}

int graph_peer_for(const graph *g, const graph_program *p, int peer)
{
  if (p->mirror_of < 0) return peer;
  if (!p->group_map) return -1;
  int found = -1, found_gid = G_MAXINT, n_groups = (int)g->groups->len;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, p->group_map);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    int from = GPOINTER_TO_INT(k), to = GPOINTER_TO_INT(v);
    if (from >= found_gid || from < 0 || from >= n_groups || to < 0 || to >= n_groups) continue;
    const graph_group *a = g_ptr_array_index(g->groups, from), *b = g_ptr_array_index(g->groups, to);
    if (a->ranks->len != b->ranks->len) continue;
    int src_at = group_place(a, p->mirror_of), peer_at = group_place(a, peer);
    /* the map must put the mirror where its source was, or places do not correspond */
    if (src_at < 0 || peer_at < 0 || g_array_index(b->ranks, int, src_at) != p->rank) continue;
    found = g_array_index(b->ranks, int, peer_at);
    found_gid = from;
  }
  return found;
}

/* ---- saving ---- */

static void write_event(FILE *f, const graph *g, const graph_event *e, int after)
{
  /* labels were checked when added (graph_op_id's callers: the generator's fixed names, the loader's checked text) */
  fprintf(f, "{\"kind\":\"%s\",\"op\":\"%s\",\"phase\":\"%s\"", KIND_NAMES[e->kind], graph_op_name(g, e->op),
          PHASE_NAMES[e->phase]);
  if (e->kind == EV_COLLECTIVE) fprintf(f, ",\"collective\":\"%s\",\"group\":%d", COLL_NAMES[e->variant], e->peer);
  else if (e->kind != EV_COMPUTE) {
    fprintf(f, ",\"peer\":%d", e->peer);
    if (e->variant) fprintf(f, ",\"variant\":%d", e->variant);
  }
  else fprintf(f, ",\"cost\":\"%s\",\"variant\":%d", COST_NAMES[e->cost], e->variant);
  if (e->dtype != DT_BF16) fprintf(f, ",\"dtype\":\"%s\"", DTYPE_NAMES[e->dtype]);
  if (e->micro_batch >= 0) fprintf(f, ",\"micro_batch\":%d", e->micro_batch);
  if (e->layer >= 0) fprintf(f, ",\"layer\":%d", e->layer);
  if (e->kind == EV_COMPUTE) fprintf(f, ",\"m\":%d,\"n\":%d,\"k\":%d,\"launches\":%d,\"flops\":%.17g", e->m, e->n, e->k,
                                 e->launches, e->flops);
  fprintf(f, ",\"bytes\":%.17g", e->bytes);
  if (e->mem_delta_bytes != 0) fprintf(f, ",\"mem_delta_bytes\":%.17g", e->mem_delta_bytes);
  if (e->mem_transient_bytes != 0) fprintf(f, ",\"mem_transient_bytes\":%.17g", e->mem_transient_bytes);
  if (e->stream) fprintf(f, ",\"stream\":%d", e->stream);
  if (after >= 0) fprintf(f, ",\"after\":%d", after);
  fputc('}', f);
}

static void write_program(FILE *f, const graph *g, const graph_program *p)
{
  fprintf(f,
          "{\"rank\":%d,\"mem_static_bytes\":%.17g,\"mem_params_bytes\":%.17g,\"mem_grads_bytes\":%.17g,"
          "\"mem_optimizer_bytes\":%.17g,\"mem_buffers_bytes\":%.17g",
          p->rank, p->mem_static_bytes, p->mem_params_bytes, p->mem_grads_bytes, p->mem_optimizer_bytes,
          p->mem_buffers_bytes);
  if (p->mirror_of >= 0) {
    fprintf(f, ",\"mirror_of\":%d,\"active_from\":%d,\"group_map\":[", p->mirror_of, p->active_from);
    if (p->group_map) {
      GHashTableIter it;
      gpointer k, v;
      gboolean first = TRUE;
      g_hash_table_iter_init(&it, p->group_map);
      while (g_hash_table_iter_next(&it, &k, &v)) {
        fprintf(f, "%s[%d,%d]", first ? "" : ",", GPOINTER_TO_INT(k), GPOINTER_TO_INT(v));
        first = FALSE;
      }
    }
    fputs("]}", f);
    return;
  }
  fputs(",\"events\":[\n", f);
  for (guint i = 0; i < p->events->len; i++) {
    write_event(f, g, &g_array_index(p->events, graph_event, i), graph_dep_of(p, (int)i));
    fputs(i + 1 < p->events->len ? ",\n" : "\n", f);
  }
  fputs("]}", f);
}

/* s as a JSON string, quoted and escaped: a meta key or a group label may hold a quote or a backslash. */
static void write_string(FILE *f, const char *s)
{
  cJSON *j = cJSON_CreateString(s);
  char *q = cJSON_PrintUnformatted(j);
  fputs(q, f);
  cJSON_free(q);
  cJSON_Delete(j);
}

/* The meta's known entries, each once; absent where unknown (0 or ""). */
static void write_meta(FILE *f, const graph_meta *m)
{
  const char *sep = "";
  const struct { const char *key, *v; } strs[] = {
      {"model", m->model}, {"layout", m->layout}, {"partition", m->partition}, {"precision", m->precision}};
  for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
    if (strs[i].v[0]) {
      fprintf(f, "%s\"%s\":", sep, strs[i].key);
      write_string(f, strs[i].v);
      sep = ",";
    }
  const struct { const char *key; double v; } nums[] = {
      {"tokens_per_step", m->tokens_per_step}, {"model_flops_per_step", m->model_flops_per_step},
      {"pp", m->pp}, {"ranks_per_stage", m->ranks_per_stage}, {"gpus_per_node", m->gpus_per_node}};
  for (size_t i = 0; i < G_N_ELEMENTS(nums); i++)
    if (nums[i].v > 0) {
      fprintf(f, "%s\"%s\":%.17g", sep, nums[i].key, nums[i].v);
      sep = ",";
    }
}

gboolean graph_save(const graph *g, const char *path, GError **err)
{
  lsim_outfile out;
  if (!lsim_outfile_open(&out, path, err)) return FALSE;
  FILE *f = out.f;
  fprintf(f, "{\"format\":\"layoutsim-graph\",\"version\":%d,\"world_size\":%d,\n\"meta\":{", GRAPH_FORMAT_VERSION,
          g->world_size);
  write_meta(f, &g->meta);
  fputs("},\n\"groups\":[\n", f);
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(g->groups, i);
    fputs("{\"label\":", f);
    write_string(f, gr->label);
    fprintf(f, ",\"class\":\"%s\"", tc_name(gr->tclass));
    fputs(",\"ranks\":[", f);
    for (guint j = 0; j < gr->ranks->len; j++) fprintf(f, "%s%d", j ? "," : "", g_array_index(gr->ranks, int, j));
    fputs(i + 1 < g->groups->len ? "]},\n" : "]}\n", f);
  }
  fputs("],\n\"programs\":[\n", f);
  for (int r = 0; r < g->world_size; r++) {
    write_program(f, g, g_ptr_array_index(g->programs, r));
    fputs(r + 1 < g->world_size ? ",\n" : "\n", f);
  }
  fputs("]}\n", f);
  return lsim_outfile_commit(&out, err);
}

/* ---- loading ---- */

static int name_index(const char *s, const char *const *names, int n)
{
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static gboolean bad(GError **err, const char *where, int rank, int idx, const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static gboolean bad(GError **err, const char *where, int rank, int idx, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: rank %d event %d: %s", where, rank, idx, what);
  return FALSE;
}

/* What the field `key` of o holds, for a message: "missing", a string quoted, a number as given, or
 * its kind (an array...). Newly allocated. */
static char *shown(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return g_strdup("missing");
  if (cJSON_IsString(v)) return lsim_quote(v->valuestring, 40);
  if (cJSON_IsNumber(v)) return lsim_number(v->valuedouble);
  return g_strdup(lsim_json_type_name(v));
}

/* "a, b, c": the names of an enumeration, for messages. Newly allocated. */
static char *names_list(const char *const *names, int n)
{
  GString *out = g_string_new(names[0]);
  for (int i = 1; i < n; i++) g_string_append_printf(out, ", %s", names[i]);
  return g_string_free(out, FALSE);
}

static int opt_int(const cJSON *o, const char *key, int dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valueint : dflt;
}

/* An integer in int range (cJSON's valueint would truncate 1.5, and saturate 1e30). */
static gboolean is_int(const cJSON *v)
{
  return cJSON_IsNumber(v) && fabs(v->valuedouble) <= INT_MAX && v->valuedouble == (double)v->valueint;
}

/* The first of `keys` present in o that is not an integer in int range, or NULL: integer fields are
 * never truncated (a "rank" of 1.5 is an error, not rank 1). */
static const char *non_integer_field(const cJSON *o, const char *const *keys)
{
  for (; *keys; keys++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *keys);
    if (v && !is_int(v)) return *keys;
  }
  return NULL;
}

/* The first of `keys` present in o that is not a number, or NULL: a size given as a string (or an
 * array...) is an error, not 0. */
static const char *non_number_field(const cJSON *o, const char *const *keys)
{
  for (; *keys; keys++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *keys);
    if (v && !cJSON_IsNumber(v)) return *keys;
  }
  return NULL;
}

static double opt_num(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static const char *opt_str(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Version 1 graphs named transformer operators and the layout's attention kernel; read into cost classes:
 * the GEMMs, attention (kernel ids 0-1 materialize the scores, 2-3 are FlashAttention 1, 4-5 FlashAttention 2)
 * and every other operator a memory-bound pass. */
static const char *const V1_OPS[] = {"embed",  "norm",   "qkv",      "rotary", "attention", "attn_out",  "residual",
                                     "mlp_up", "swiglu", "mlp_down", "logits", "loss",      "optimizer", "comm"};

static int v1_cost(const char *op)
{
  static const char *const GEMMS[] = {"qkv", "attn_out", "mlp_up", "mlp_down", "logits"};
  if (!strcmp(op, "attention")) return COST_ATTENTION;
  return name_index(op, GEMMS, G_N_ELEMENTS(GEMMS)) >= 0 ? COST_GEMM : COST_MEMORY;
}

/* An op label: 1 to GRAPH_MAX_OP_NAME letters, digits and _ . + - (it is written back into JSON and traces). */
static gboolean op_label_ok(const char *s)
{
  size_t n = strlen(s);
  if (n < 1 || n > GRAPH_MAX_OP_NAME) return FALSE;
  for (size_t i = 0; i < n; i++)
    if (!g_ascii_isalnum(s[i]) && !strchr("_.+-", s[i])) return FALSE;
  return TRUE;
}

static gboolean parse_event(graph *g, int version, const cJSON *o, graph_event *e, const char *where, int rank, int idx,
                            GError **err)
{
  memset(e, 0, sizeof *e);
  const char *kind = opt_str(o, "kind"), *op = opt_str(o, "op"), *ph = opt_str(o, "phase");
  int ki = kind ? name_index(kind, KIND_NAMES, EV_N_KINDS) : -1;
  g_autofree char *got = NULL, *allowed = NULL;
  if (ki < 0) {
    got = shown(o, "kind");
    allowed = names_list(KIND_NAMES, EV_N_KINDS);
    return bad(err, where, rank, idx, "field 'kind' is %s (allowed: %s)", got, allowed);
  }
  if (version == 1 && op && name_index(op, V1_OPS, G_N_ELEMENTS(V1_OPS)) < 0) {
    got = shown(o, "op");
    allowed = names_list(V1_OPS, G_N_ELEMENTS(V1_OPS));
    return bad(err, where, rank, idx, "field 'op' is %s (allowed in version 1: an operator class, %s; "
               "docs/graph-format.md)", got, allowed);
  }
  if (op && !op_label_ok(op)) {
    got = shown(o, "op");
    return bad(err, where, rank, idx, "field 'op' is %s (allowed: a label of 1 to 31 letters, digits, '_', '.', '+' "
               "or '-')", got);
  }
  int oi = op ? graph_op_id(g, op) : ki == EV_COMPUTE ? -2 : GRAPH_OP_COMM;
  if (oi == -2) return bad(err, where, rank, idx, "a compute event needs field 'op' (a label, see docs/graph-format.md)");
  if (oi < 0) return bad(err, where, rank, idx, "more than 4096 different 'op' labels in one graph (allowed: 4096)");
  int pi = ph ? name_index(ph, PHASE_NAMES, PH_N) : -1;
  if (pi < 0) {
    got = shown(o, "phase");
    allowed = names_list(PHASE_NAMES, PH_N);
    return bad(err, where, rank, idx, "field 'phase' is %s (allowed: %s)", got, allowed);
  }
  static const char *const INTS[] = {"micro_batch", "layer", "group", "variant", "m", "n", "k", "launches", "peer",
                                     "stream", "after", NULL};
  const char *cost = opt_str(o, "cost");
  int co = ki != EV_COMPUTE ? COST_NONE : version == 1 ? v1_cost(op) : cost ? name_index(cost, COST_NAMES, COST_N) : -1;
  if (ki == EV_COMPUTE && co <= COST_NONE)
    return bad(err, where, rank, idx, "a compute event's field 'cost' must be one of gemm, attention, memory");
  const char *bad_int = non_integer_field(o, INTS);
  if (bad_int) {
    got = shown(o, bad_int);
    return bad(err, where, rank, idx, "field '%s' must be an integer (got %s)", bad_int, got);
  }
  static const char *const NUMS[] = {"bytes", "flops", "mem_delta_bytes", "mem_transient_bytes", NULL};
  const char *bad_num = non_number_field(o, NUMS);
  if (bad_num)
    return bad(err, where, rank, idx, "field '%s' must be a number (got %s)", bad_num,
               lsim_json_type_name(cJSON_GetObjectItemCaseSensitive(o, bad_num)));
  if (!op && cJSON_GetObjectItemCaseSensitive(o, "op")) /* not the default 'comm' of a communication */
    return bad(err, where, rank, idx, "field 'op' must be a string naming an operator class (see docs/graph-format.md; "
               "got %s)", lsim_json_type_name(cJSON_GetObjectItemCaseSensitive(o, "op")));
  if (version < 3 && (cJSON_GetObjectItemCaseSensitive(o, "stream") || cJSON_GetObjectItemCaseSensitive(o, "after")))
    return bad(err, where, rank, idx, "fields 'stream' and 'after' need graph format version 3 (allowed in version %d: "
               "neither)", version);
  int stream = opt_int(o, "stream", 0);
  if (stream < 0 || stream >= GRAPH_STREAMS)
    return bad(err, where, rank, idx, "field 'stream' is %d (allowed: 0 compute, 1 communication)", stream);
  int after = opt_int(o, "after", -1);
  if (cJSON_GetObjectItemCaseSensitive(o, "after") && (after < 0 || after >= idx))
    return bad(err, where, rank, idx, "field 'after' is %d (allowed: an earlier event of the program, 0 to %d)", after,
               idx - 1);
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
  if (dt && version < 4)
    return bad(err, where, rank, idx, "field 'dtype' needs graph format version 4 (allowed in version %d: none, "
               "every event bf16)", version);
  int di = dt ? (cJSON_IsString(dt) ? name_index(dt->valuestring, DTYPE_NAMES, DT_N) : -1) : DT_BF16;
  if (di < 0) {
    got = shown(o, "dtype");
    allowed = names_list(DTYPE_NAMES, DT_N);
    return bad(err, where, rank, idx, "field 'dtype' is %s (allowed: %s)", got, allowed);
  }
  e->dtype = (uint8_t)di;
  e->stream = (uint16_t)stream;
  e->kind = (uint8_t)ki;
  e->cost = (uint8_t)co;
  e->op = (uint16_t)oi;
  e->phase = (uint8_t)pi;
  e->micro_batch = opt_int(o, "micro_batch", -1);
  int layer = opt_int(o, "layer", -1);
  if (layer < -1 || layer > INT16_MAX) return bad(err, where, rank, idx, "field 'layer' must be from -1 to 32767");
  e->layer = (int16_t)layer;
  e->bytes = opt_num(o, "bytes");
  e->mem_delta_bytes = opt_num(o, "mem_delta_bytes");
  e->mem_transient_bytes = opt_num(o, "mem_transient_bytes");
  const char *out_of_range = !(e->bytes >= 0 && e->bytes <= GRAPH_MAX_BYTES) ? "bytes"
                           : !(e->mem_transient_bytes >= 0 && e->mem_transient_bytes <= GRAPH_MAX_BYTES)
                               ? "mem_transient_bytes"
                           : !(fabs(e->mem_delta_bytes) <= GRAPH_MAX_BYTES) ? "mem_delta_bytes" : NULL;
  if (out_of_range) {
    got = shown(o, out_of_range);
    return bad(err, where, rank, idx, "field '%s' must be from %s to 1e18 (got %s)", out_of_range,
               strcmp(out_of_range, "mem_delta_bytes") ? "0" : "-1e18", got);
  }
  if (ki == EV_COLLECTIVE) {
    const char *c = opt_str(o, "collective");
    int ci = c ? name_index(c, COLL_NAMES, COLL_N) : -1;
    if (ci < 0) {
      got = shown(o, "collective");
      allowed = names_list(COLL_NAMES, COLL_N);
      return bad(err, where, rank, idx, "field 'collective' is %s (allowed: %s)", got, allowed);
    }
    e->variant = (uint8_t)ci;
    e->peer = opt_int(o, "group", -1);
  } else if (ki == EV_COMPUTE) {
    int variant = opt_int(o, "variant", 0);
    if (variant < 0 || variant > 5)
      return bad(err, where, rank, idx, "field 'variant' is %d (allowed: 0 to 5)", variant);
    if (co == COST_ATTENTION && version == 1) variant /= 2; /* v1 kernel id -> GRAPH_ATTN_* */
    else if (co == COST_ATTENTION && variant >= GRAPH_ATTN_N)
      return bad(err, where, rank, idx, "an attention event's 'variant' is %d (allowed: 0 scores, 1 flash1, 2 flash2)",
                 variant);
    else if (co == COST_MEMORY || (version == 1 && co != COST_ATTENTION)) variant = 0; /* v1: norm's 'fused' flag */
    e->variant = (uint8_t)variant;
    e->m = opt_int(o, "m", 0);
    e->n = opt_int(o, "n", 0);
    e->k = opt_int(o, "k", 0);
    e->launches = opt_int(o, "launches", 1);
    e->flops = opt_num(o, "flops");
    e->peer = -1;
    if (!(e->flops >= 0 && e->flops <= GRAPH_MAX_FLOPS)) {
      got = shown(o, "flops");
      return bad(err, where, rank, idx, "field 'flops' must be from 0 to 1e24 (got %s)", got);
    }
    if (e->m < 0 || e->n < 0 || e->k < 0)
      return bad(err, where, rank, idx, "fields 'm', 'n', 'k' must be >= 0 (got %d, %d, %d)", e->m, e->n, e->k);
    if (e->launches < 0) return bad(err, where, rank, idx, "field 'launches' must be >= 0 (got %d)", e->launches);
    if (co == COST_ATTENTION && e->flops > 0 && (e->n < 1 || e->k < 1)) /* the kernel model reads them */
      return bad(err, where, rank, idx, "an attention event with flops needs 'n' (sequence length) and 'k' (head size) "
                 ">= 1 (got n %d, k %d)", e->n, e->k);
  } else {
    e->peer = opt_int(o, "peer", -1);
    int variant = opt_int(o, "variant", 0), most = ki == EV_SEND ? GRAPH_P2P_EAGER | GRAPH_P2P_GRAD_CHANNEL | GRAPH_P2P_LAYER
                                                                  : GRAPH_P2P_GRAD_CHANNEL | GRAPH_P2P_LAYER;
    if (variant < 0 || variant > most || (variant & ~most))
      return bad(err, where, rank, idx, ki == EV_SEND ? "field 'variant' of a send must be 0..7 (1: eager, 2: gradient "
                 "channel, 4: a layer's)" : "field 'variant' of a recv must be 0, 2, 4 or 6 (2: gradient channel, 4: a layer's)");
    e->variant = (uint8_t)variant;
  }
  return TRUE;
}

static gboolean parse_program(graph *g, int version, const cJSON *o, const char *where, GError **err)
{
  static const char *const INTS[] = {"rank", "mirror_of", "active_from", NULL};
  const char *bad_int = non_integer_field(o, INTS);
  if (bad_int) {
    g_autofree char *got = shown(o, bad_int);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: program field '%s' must be an integer (got %s)", where, bad_int,
                got);
    return FALSE;
  }
  int rank = opt_int(o, "rank", -1);
  if (rank < 0 || rank >= g->world_size || g_ptr_array_index(g->programs, rank)) {
    g_autofree char *got = shown(o, "rank");
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE,
                "%s: program with %s 'rank' %s (allowed: each rank from 0 to %d once)", where, !cJSON_IsObject(o) || !cJSON_GetObjectItemCaseSensitive(o, "rank") ? "no"
                       : rank >= 0 && rank < g->world_size ? "a repeated" : "an out-of-range", got, g->world_size - 1);
    return FALSE;
  }
  static const char *const NUMS[] = {"mem_params_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_buffers_bytes",
                                     "mem_static_bytes", NULL};
  const char *bad_num = non_number_field(o, NUMS);
  if (bad_num) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: rank %d: field '%s' must be a number (got %s)", where, rank,
                bad_num, lsim_json_type_name(cJSON_GetObjectItemCaseSensitive(o, bad_num)));
    return FALSE;
  }
  graph_program *p = graph_program_of(g, rank);
  p->mem_params_bytes = opt_num(o, "mem_params_bytes");
  p->mem_grads_bytes = opt_num(o, "mem_grads_bytes");
  p->mem_optimizer_bytes = opt_num(o, "mem_optimizer_bytes");
  p->mem_buffers_bytes = opt_num(o, "mem_buffers_bytes");
  p->mem_static_bytes = opt_num(o, "mem_static_bytes");
  if (p->mem_static_bytes == 0) /* graphs that give only the parts */
    p->mem_static_bytes = p->mem_params_bytes + p->mem_grads_bytes + p->mem_optimizer_bytes + p->mem_buffers_bytes;
  const double mem[] = {p->mem_params_bytes, p->mem_grads_bytes, p->mem_optimizer_bytes, p->mem_buffers_bytes,
                        p->mem_static_bytes}; /* NUMS' order */
  for (size_t i = 0; i < G_N_ELEMENTS(mem); i++)
    if (!(mem[i] >= 0 && mem[i] <= GRAPH_MAX_BYTES)) {
      g_autofree char *got = lsim_number(mem[i]);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: rank %d: %s must be from 0 to 1e18 (got %s%s)", where, rank,
                  NUMS[i], got, i == 4 ? ", the sum of the other four" : "");
      return FALSE;
    }
  int mirror = opt_int(o, "mirror_of", -1);
  if (mirror >= 0) {
    graph_make_mirror(g, rank, mirror, opt_int(o, "active_from", 0));
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(o, "group_map"), *pair;
    if (map && !cJSON_IsArray(map)) { /* an object's members would be taken for pairs */
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: rank %d: 'group_map' must be an array of [from, to] pairs (got %s)",
                  where, rank, lsim_json_type_name(map));
      return FALSE;
    }
    cJSON_ArrayForEach(pair, map)
    {
      const cJSON *from = cJSON_GetArrayItem(pair, 0), *to = cJSON_GetArrayItem(pair, 1);
      int n_groups = (int)g->groups->len;
      if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !is_int(from) || !is_int(to) ||
          from->valueint < 0 || from->valueint >= n_groups || to->valueint < 0 || to->valueint >= n_groups) {
        g_autofree char *text = cJSON_PrintUnformatted(pair);
        g_autofree char *got = lsim_quote(text ? text : "?", 40);
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE,
                    "%s: rank %d: group_map entry %s (allowed: [from, to], group ids from 0 to %d)", where, rank, got,
                    n_groups - 1);
        return FALSE;
      }
      graph_map_group(g, rank, from->valueint, to->valueint);
    }
    return TRUE;
  }
  const cJSON *evs = cJSON_GetObjectItemCaseSensitive(o, "events");
  if (!cJSON_IsArray(evs)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: rank %d: needs 'events' (array) or 'mirror_of'", where, rank);
    return FALSE;
  }
  const cJSON *eo;
  int idx = 0;
  cJSON_ArrayForEach(eo, evs)
  {
    graph_event e;
    if (!parse_event(g, version, eo, &e, where, rank, idx, err)) return FALSE;
    g_array_append_val(p->events, e);
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(eo, "after");
    if (after) graph_add_dep(g, rank, idx, after->valueint);
    idx++;
  }
  return TRUE;
}

/* "groups": an array of {"label", "ranks": [integers]} (absent: no groups). */
static gboolean parse_groups(graph *g, int version, const cJSON *groups, const char *where, GError **err)
{
  if (groups && !cJSON_IsArray(groups)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: 'groups' must be an array of {label, ranks} (got %s)", where,
                lsim_json_type_name(groups));
    return FALSE;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, groups)
  {
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(it, "ranks"), *label = cJSON_GetObjectItemCaseSensitive(it, "label");
    if (label && !cJSON_IsString(label)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: group %u: 'label' must be a string (got %s)", where,
                  g->groups->len, lsim_json_type_name(label));
      return FALSE;
    }
    g_autofree char *what = g_strdup_printf("group %u: label", g->groups->len);
    if (label && *label->valuestring &&
        !lsim_json_check_text(label->valuestring, sizeof ((graph_group *)NULL)->label - 1, where, what, err))
      return FALSE; /* never cut: "pp" decides how a collective is traced */
    int n = cJSON_GetArraySize(rs);
    gboolean ok = cJSON_IsObject(it) && cJSON_IsArray(rs);
    g_autofree int *ranks = g_new(int, n > 0 ? n : 1);
    for (int i = 0; ok && i < n; i++) {
      ok = is_int(cJSON_GetArrayItem(rs, i));
      ranks[i] = ok ? cJSON_GetArrayItem(rs, i)->valueint : 0;
    }
    if (!ok) {
      const cJSON *what = !cJSON_IsObject(it) ? it : rs;
      g_autofree char *got = !what ? g_strdup("no 'ranks'") : cJSON_IsArray(what) ? g_strdup("an array holding a "
                             "non-integer") : g_strdup(lsim_json_type_name(what));
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: group %u: needs 'ranks', an array of integers (got %s)",
                  where, g->groups->len, got);
      return FALSE;
    }
    if (n < 1) { /* a group no rank is in runs no collective */
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: group %u: 'ranks' is empty (allowed: the ranks of the "
                  "group, at least one)", where, g->groups->len);
      return FALSE;
    }
    /* the class: version 4's 'class', else (and by default) the class the label names, else other */
    const cJSON *cl = cJSON_GetObjectItemCaseSensitive(it, "class");
    if (cl && version < 4) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: group %u: 'class' needs graph format version 4 (allowed in "
                  "version %d: none, the label names it)", where, g->groups->len, version);
      return FALSE;
    }
    int c = cl ? (cJSON_IsString(cl) ? tc_from_name(cl->valuestring) : -1) : tc_from_name(opt_str(it, "label"));
    if (cl && c < 0) {
      g_autofree char *got = shown(it, "class");
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: group %u: 'class' is %s (allowed: %s)", where,
                  g->groups->len, got, tc_names_list());
      return FALSE;
    }
    graph_add_group_class(g, ranks, n, opt_str(it, "label"), c < 0 ? TC_OTHER : (traffic_class)c);
  }
  return TRUE;
}

/* An integer meta entry of a version 1-3 file, as its readers once took it (atoi): plain digits. "1e1"
 * would pass as 10 and be read as 1, and "3e10" was once cast to int before its range was checked. */
static gboolean meta_integer_text(const char *v, double *out)
{
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  *out = (double)n;
  return g_ascii_isdigit(*v) && !*end && !errno && n <= INT_MAX;
}

/* The known meta entries: a string of at most `size` - 1 bytes at `off`, or a number (an integer from 1 to
 * max, max 0: world_size; or a positive number below 1e30). */
typedef struct meta_key {
  const char *key;
  size_t off, size; /* size 0: a number */
  gboolean integer;
  int max;
} meta_key;
#define MS(k) {#k, offsetof(graph_meta, k), sizeof ((graph_meta *)NULL)->k, FALSE, 0}
#define MN(k, integer, max) {#k, offsetof(graph_meta, k), 0, integer, max}
static const meta_key META_KEYS[] = {
    MS(model), MS(layout), MS(partition), MS(precision), MN(tokens_per_step, FALSE, 0),
    MN(model_flops_per_step, FALSE, 0), MN(pp, TRUE, 0), MN(ranks_per_stage, TRUE, 0), MN(gpus_per_node, TRUE, 4096)};
#undef MS
#undef MN

static gboolean meta_number_ok(const meta_key *k, double d, int world)
{
  int max = k->max ? k->max : world;
  return k->integer ? d >= 1 && d <= max && d == floor(d) : d > 0 && d < 1e30;
}

/* "meta": an object (absent: none) of the known entries, typed (docs/graph-format.md). Version 4: strings
 * and numbers as JSON has them, no other key; versions 1-3 (converted): every value a string, numbers
 * written as text, unknown keys dropped. An array's items have no key (it once crashed the loader). */
static gboolean parse_meta(graph *g, int version, const cJSON *meta, const char *where, GError **err)
{
  if (meta && !cJSON_IsObject(meta)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: 'meta' must be an object (got %s)", where,
                lsim_json_type_name(meta));
    return FALSE;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, meta)
  {
    const meta_key *k = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++)
      if (!strcmp(it->string, META_KEYS[i].key)) k = &META_KEYS[i];
    gboolean as_text = version < 4 || (k && k->size);
    if (as_text && !cJSON_IsString(it)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: meta.%s must be a string (got %s; allowed: %s)", where,
                  it->string, lsim_json_type_name(it), version < 4 ? "e.g. \"pp\": \"2\" in version 1 to 3" : "text");
      return FALSE;
    }
    if (!k && version < 4) continue; /* a free-form entry of the converted format: dropped */
    if (!k) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: meta.%s is not a meta entry (allowed: model, layout, "
                  "partition, precision, tokens_per_step, model_flops_per_step, pp, ranks_per_stage, gpus_per_node)",
                  where, it->string);
      return FALSE;
    }
    g_autofree char *what = g_strdup_printf("meta.%s", it->string);
    if (k->size) {
      if (*it->valuestring && !lsim_json_check_text(it->valuestring, k->size - 1, where, what, err)) return FALSE;
      g_strlcpy((char *)&g->meta + k->off, it->valuestring, k->size);
      continue;
    }
    double d = 0;
    gboolean ok;
    if (version < 4) {
      char *end;
      ok = k->integer ? meta_integer_text(it->valuestring, &d) : (d = g_ascii_strtod(it->valuestring, &end), end != it->valuestring && !*end);
    } else if (!cJSON_IsNumber(it)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: meta.%s must be a number (got %s)", where, it->string,
                  lsim_json_type_name(it));
      return FALSE;
    } else {
      d = it->valuedouble;
      ok = TRUE;
    }
    if (!ok || !meta_number_ok(k, d, g->world_size)) {
      g_autofree char *got = version < 4 ? g_strdup_printf("'%s'", it->valuestring) : lsim_number(d);
      if (k->integer)
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: meta.%s: %s (allowed: an integer from 1 to %d)", where,
                    it->string, got, k->max ? k->max : g->world_size);
      else
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: meta.%s: %s (allowed: a positive number below 1e30)",
                    where, it->string, got);
      return FALSE;
    }
    if (k->integer) *(int *)((char *)&g->meta + k->off) = (int)d;
    else *(double *)((char *)&g->meta + k->off) = d;
  }
  return TRUE;
}

graph *graph_load(const char *path, GError **err) { return graph_load_within(path, 0, err); }

graph *graph_load_within(const char *path, double max_bytes, GError **err)
{
  cJSON *j = lsim_json_read_file_within(path, LSIM_INPUT_GRAPH, max_bytes, err);
  if (!j) return NULL;
  graph *g = NULL;
  const char *fmt = opt_str(j, "format");
  double world_d = opt_num(j, "world_size");
  int world = world_d >= 1 && world_d <= GRAPH_MAX_RANKS && world_d == floor(world_d) ? (int)world_d : 0; /* cast in range */
  if (!fmt || strcmp(fmt, "layoutsim-graph") != 0 || world < 1) {
    gboolean format_ok = fmt && !strcmp(fmt, "layoutsim-graph");
    g_autofree char *got = !cJSON_IsObject(j) ? g_strdup(lsim_json_type_name(j)) : shown(j, format_ok ? "world_size" : "format");
    if (format_ok)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: world_size %s (allowed: an integer from 1 to %d)", path, got,
                  GRAPH_MAX_RANKS);
    else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not a layoutsim graph: format %s (allowed: an object with "
                  "\"format\":\"layoutsim-graph\" and world_size 1..%d)", path, got, GRAPH_MAX_RANKS);
    goto out;
  }
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
  int version = ver ? (cJSON_IsNumber(ver) ? (int)ver->valuedouble : -1) : 1; /* absent: the first format */
  if (version < 1 || version > GRAPH_FORMAT_VERSION || (ver && ver->valuedouble != version)) {
    g_autofree char *got = shown(j, "version");
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: graph format version %s: this layoutsim reads version %d (and "
                "converts 1 to 3); regenerate it with `layoutsim graph` (docs/graph-format.md)", path, got,
                GRAPH_FORMAT_VERSION);
    goto out;
  }
  g = graph_new(world);
  const cJSON *programs = cJSON_GetObjectItemCaseSensitive(j, "programs"), *it;
  if (!parse_meta(g, version, cJSON_GetObjectItemCaseSensitive(j, "meta"), path, err) ||
      !parse_groups(g, version, cJSON_GetObjectItemCaseSensitive(j, "groups"), path, err))
    goto fail;
  if (programs && !cJSON_IsArray(programs)) { /* an object's members would be taken for programs, a number for none */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: 'programs' must be an array of programs (got %s)", path,
                lsim_json_type_name(programs));
    goto fail;
  }
  cJSON_ArrayForEach(it, programs)
    if (!parse_program(g, version, it, path, err)) goto fail;
  for (int r = 0; r < world; r++)
    if (!g_ptr_array_index(g->programs, r)) graph_program_of(g, r); /* absent rank: empty program */
  if (graph_check(g, err)) goto out;
  g_prefix_error(err, "%s: ", path);
fail:
  graph_free(g);
  g = NULL;
out:
  cJSON_Delete(j);
  return g;
}

/* ---- checks ---- */

/* Streams of an explicit program: sends and receives on stream 0 only (their FIFOs are a rank's), and a
 * group's collectives never two at a time on one rank (they share the group's mailboxes and barrier): a
 * collective of a group whose previous collective on the rank ran on the other stream must come after it,
 * through a dependency (of its own or of an earlier event of its stream). */
static gboolean check_streams(const graph *g, const graph_program *p, GError **err)
{
  if (!graph_program_streamed(p)) return TRUE;
  g_autofree int *last_at = g_new(int, MAX(g->groups->len, 1));    /* per group: its last collective's index */
  for (guint k = 0; k < g->groups->len; k++) last_at[k] = -1;
  int known[GRAPH_STREAMS][GRAPH_STREAMS]; /* known[s][t]: latest event of stream t known ended on stream s */
  for (int s = 0; s < GRAPH_STREAMS; s++)
    for (int t = 0; t < GRAPH_STREAMS; t++) known[s][t] = -1;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    int s = e->stream, d = graph_dep_of(p, (int)i);
    if (d >= 0) {
      int t = g_array_index(p->events, graph_event, d).stream;
      known[s][t] = MAX(known[s][t], d);
      for (int u = 0; u < GRAPH_STREAMS; u++) known[s][u] = MAX(known[s][u], known[t][u]);
    }
    known[s][s] = (int)i;
    if (s != 0 && (e->kind == EV_SEND || e->kind == EV_RECV)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %u: a %s on stream %d (allowed: sends and "
                  "receives on stream 0)", p->rank, i, graph_kind_name((graph_kind)e->kind), s);
      return FALSE;
    }
    if (e->kind != EV_COLLECTIVE || e->peer < 0 || e->peer >= (int)g->groups->len) continue;
    int j = last_at[e->peer];
    if (j >= 0) {
      int t = g_array_index(p->events, graph_event, j).stream;
      if (t != s && known[s][t] < j) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %u: a collective of group %d on stream %d "
                    "while event %d, one of the group's on stream %d, may still run (allowed: an 'after' that orders "
                    "them)", p->rank, i, e->peer, s, j, t);
        return FALSE;
      }
    }
    last_at[e->peer] = (int)i;
  }
  return TRUE;
}

static gboolean check_program(const graph *g, const graph_program *p, GError **err)
{
  if (p->mirror_of >= 0) {
    const graph_program *src = p->mirror_of < g->world_size ? g_ptr_array_index(g->programs, p->mirror_of) : NULL;
    if (!src || src->mirror_of >= 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d: mirror_of %d is %s (allowed: the rank of an explicit "
                  "program, 0 to %d)", p->rank, p->mirror_of, src ? "itself a mirror" : "not a rank", g->world_size - 1);
      return FALSE;
    }
    if (p->active_from < 0 || p->active_from > (int)src->events->len) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d: active_from %d (allowed: an event index of rank %d, "
                  "0 to %u)", p->rank, p->active_from, p->mirror_of, src->events->len);
      return FALSE;
    }
  }
  int n, first;
  const graph_event *ev = graph_program_events(g, p, &n, &first);
  double level_bytes = 0; /* memory allocated by events: frees must follow allocations */
  for (int i = 0; i < n; i++) {
    level_bytes += ev[i].mem_delta_bytes;
    if (level_bytes < -1.0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "rank %d event %d: mem_delta_bytes frees more than was allocated (level %.0f bytes; allowed: frees of "
                  "what the rank's earlier events allocated)", p->rank, i, level_bytes);
      return FALSE;
    }
  }
  if (p->mirror_of < 0 && !check_streams(g, p, err)) return FALSE;
  for (int i = first; i < n; i++) {
    const graph_event *e = &ev[i];
    if (e->kind == EV_COLLECTIVE) {
      int gid = graph_group_for(p, e->peer);
      if (gid < 0 || gid >= (int)g->groups->len) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: group %d does not exist (allowed: %s)",
                    p->rank, i, gid, g->groups->len ? "a group id from the graph's 'groups'" : "none: the graph has no groups");
        return FALSE;
      }
      if (group_place(g_ptr_array_index(g->groups, gid), p->rank) < 0) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: rank is not a member of group %d (allowed: "
                    "a group that lists rank %d)", p->rank, i, gid, p->rank);
        return FALSE;
      }
    } else if (e->kind != EV_COMPUTE) {
      if (p->mirror_of >= 0) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "rank %d: a mirror may not execute send/recv (event %d); give it its own program", p->rank, i);
        return FALSE;
      }
      if (e->peer < 0 || e->peer >= g->world_size || e->peer == p->rank) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d event %d: peer %d out of range (allowed: another rank, "
                    "0 to %d)", p->rank, i, e->peer, g->world_size - 1);
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* Every send from a to b must be matched, in order and size, by a recv on b from a. */
static gboolean check_p2p(const graph *g, GError **err)
{
  g_autoptr(GHashTable) sends = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) continue;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind != EV_SEND) continue;
      gint64 key = ((gint64)r * g->world_size + e->peer) * 2 + ((e->variant & GRAPH_P2P_GRAD_CHANNEL) != 0);
      GArray *q = g_hash_table_lookup(sends, &key);
      if (!q) {
        gint64 *k = g_memdup2(&key, sizeof key);
        q = g_array_new(FALSE, FALSE, sizeof(double));
        g_hash_table_insert(sends, k, q);
      }
      g_array_append_val(q, e->bytes);
    }
  }
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) continue;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind != EV_RECV) continue;
      gint64 key = ((gint64)e->peer * g->world_size + r) * 2 + ((e->variant & GRAPH_P2P_GRAD_CHANNEL) != 0);
      GArray *q = g_hash_table_lookup(sends, &key);
      gint64 *cnt = g_hash_table_lookup(seen, &key);
      if (!cnt) {
        cnt = g_new0(gint64, 2);
        cnt[0] = key;
        g_hash_table_insert(seen, cnt, cnt + 1);
        cnt = cnt + 1;
      }
      if (!q || *cnt >= q->len || g_array_index(q, double, *cnt) != e->bytes) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                    "rank %d event %u: recv from %d has no matching send of %.0f bytes (allowed: receives matching, in "
                    "order and size, the sends of rank %d to rank %d)", r, i, e->peer, e->bytes, e->peer, r);
        return FALSE;
      }
      (*cnt)++;
    }
  }
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, sends);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    gint64 *cnt = g_hash_table_lookup(seen, k);
    guint got = cnt ? (guint)*cnt : 0;
    if (got != ((GArray *)v)->len) {
      gint64 key = *(gint64 *)k / 2;
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "rank %d sends %u messages to rank %d, which receives %u",
                  (int)(key / g->world_size), ((GArray *)v)->len, (int)(key % g->world_size), got);
      return FALSE;
    }
  }
  return TRUE;
}

/* The meta's numbers in range (a generated graph's too), and the stages: stage-wise readers (timelines,
 * memory plots) index ranks as stage * ranks_per_stage + i, so pp and ranks_per_stage (defaults 1 and
 * world_size) must tile the ranks exactly. */
static gboolean check_meta(const graph *g, GError **err)
{
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++) {
    const meta_key *k = &META_KEYS[i];
    if (k->size) continue;
    double d = k->integer ? *(const int *)((const char *)&g->meta + k->off) : *(const double *)((const char *)&g->meta + k->off);
    if (d == 0 || meta_number_ok(k, d, g->world_size)) continue;
    g_autofree char *got = lsim_number(d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "meta.%s: %s (allowed: %s)", k->key, got,
                k->integer ? "an integer from 1 to the world size or node limit" : "a positive number below 1e30");
    return FALSE;
  }
  long stages = g->meta.pp ? g->meta.pp : 1, ranks = g->meta.ranks_per_stage ? g->meta.ranks_per_stage : g->world_size;
  if (stages * ranks == g->world_size) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
              "meta.pp (%ld) * meta.ranks_per_stage (%ld) must equal world_size (%d)", stages, ranks, g->world_size);
  return FALSE;
}

gboolean graph_check(const graph *g, GError **err)
{
  if (!check_meta(g, err)) return FALSE;
  g_autofree gboolean *seen = g_new0(gboolean, g->world_size);
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(g->groups, i);
    for (guint j = 0; j < gr->ranks->len; j++) {
      int r = g_array_index(gr->ranks, int, j);
      if (r < 0 || r >= g->world_size || seen[r]) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "group %u: rank %d %s (allowed: ranks from 0 to %d, each once)",
                    i, r, r < 0 || r >= g->world_size ? "out of range" : "listed twice", g->world_size - 1);
        return FALSE;
      }
      seen[r] = TRUE;
    }
    for (guint j = 0; j < gr->ranks->len; j++) seen[g_array_index(gr->ranks, int, j)] = FALSE;
  }
  for (int r = 0; r < g->world_size; r++)
    if (!check_program(g, g_ptr_array_index(g->programs, r), err)) return FALSE;
  return check_p2p(g, err);
}
