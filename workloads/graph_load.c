/* graph_load -- the task graph's JSON form read (graph_load, graph_load_within; docs/graph-format.md) with
 * cJSON: every field checked and refused with a message naming it, and files of format versions 1 to 4
 * converted (bf16 events, groups classed by their label, meta strings read as numbers). The graph read is
 * then checked (graph_check.c).
 *
 * Owns: the reader and the old-format conversion.
 * May not touch: the writer (graph_save.c).
 */
#include "graph_private.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "common/lsim_outfile.h"

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
  int ki = kind ? name_index(kind, GRAPH_KIND_NAMES, EV_N_KINDS) : -1;
  g_autofree char *got = NULL, *allowed = NULL;
  if (ki < 0) {
    got = shown(o, "kind");
    allowed = names_list(GRAPH_KIND_NAMES, EV_N_KINDS);
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
  int pi = ph ? name_index(ph, GRAPH_PHASE_NAMES, PH_N) : -1;
  if (pi < 0) {
    got = shown(o, "phase");
    allowed = names_list(GRAPH_PHASE_NAMES, PH_N);
    return bad(err, where, rank, idx, "field 'phase' is %s (allowed: %s)", got, allowed);
  }
  static const char *const INTS[] = {"micro_batch", "layer", "group", "variant", "m", "n", "k", "launches", "peer",
                                     "stream", "after", "captured", NULL};
  const char *cost = opt_str(o, "cost");
  int co = ki != EV_COMPUTE ? COST_NONE : version == 1 ? v1_cost(op) : cost ? name_index(cost, GRAPH_COST_NAMES, COST_N) : -1;
  if (ki == EV_COMPUTE && co <= COST_NONE)
    return bad(err, where, rank, idx, "a compute event's field 'cost' must be one of gemm, attention, memory");
  const char *bad_int = non_integer_field(o, INTS);
  if (bad_int) {
    got = shown(o, bad_int);
    return bad(err, where, rank, idx, "field '%s' must be an integer from -2147483647 to 2147483647 (got %s)", bad_int,
               got);
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
  int di = dt ? (cJSON_IsString(dt) ? name_index(dt->valuestring, GRAPH_DTYPE_NAMES, DT_N) : -1) : DT_BF16;
  if (di < 0) {
    got = shown(o, "dtype");
    allowed = names_list(GRAPH_DTYPE_NAMES, DT_N);
    return bad(err, where, rank, idx, "field 'dtype' is %s (allowed: %s)", got, allowed);
  }
  e->dtype = (uint8_t)di;
  e->stream = (uint16_t)stream;
  e->kind = (uint8_t)ki;
  e->cost = (uint8_t)co;
  e->op = (uint16_t)oi;
  e->phase = (uint8_t)pi;
  e->micro_batch = opt_int(o, "micro_batch", -1);
  if (cJSON_GetObjectItemCaseSensitive(o, "micro_batch") && e->micro_batch < 0) { /* absent is none; -5 is no index */
    got = shown(o, "micro_batch");
    return bad(err, where, rank, idx, "field 'micro_batch' must be from 0 to 2147483647, or absent (got %s)", got);
  }
  int layer = opt_int(o, "layer", -1);
  if (layer < -1 || layer > INT16_MAX) {
    got = shown(o, "layer");
    return bad(err, where, rank, idx, "field 'layer' must be from -1 to 32767 (got %s)", got);
  }
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
    int ci = c ? name_index(c, GRAPH_COLL_NAMES, COLL_N) : -1;
    if (ci < 0) {
      got = shown(o, "collective");
      allowed = names_list(GRAPH_COLL_NAMES, COLL_N);
      return bad(err, where, rank, idx, "field 'collective' is %s (allowed: %s)", got, allowed);
    }
    e->variant = (uint8_t)ci;
    e->peer = opt_int(o, "group", -1);
  } else if (ki == EV_COMPUTE) {
    int variant = opt_int(o, "variant", 0);
    const cJSON *kern = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    if (kern && (version < 5 || co != COST_ATTENTION))
      return bad(err, where, rank, idx, "field 'kernel' needs an attention event of graph format version 5 (allowed "
                 "here: none)");
    if (version >= 5 && co == COST_ATTENTION && cJSON_GetObjectItemCaseSensitive(o, "variant")) {
      allowed = names_list(GRAPH_ATTN_NAMES, GRAPH_ATTN_N);
      return bad(err, where, rank, idx, "an attention event of version 5 names its class in 'kernel', not 'variant' "
                 "(allowed: 'kernel' one of %s)", allowed);
    }
    int top = co == COST_GEMM ? 6 : 5; /* a GEMM's: its backward part (1, 2) | GRAPH_GEMM_SM_SHARED */
    if (variant < 0 || variant > top)
      return bad(err, where, rank, idx, "field 'variant' is %d (allowed: 0 to %d)", variant, top);
    if (co == COST_ATTENTION && version >= 5) { /* the class by name */
      variant = kern && cJSON_IsString(kern) ? graph_attn_from_name(kern->valuestring) : -1;
      if (variant < 0) {
        got = shown(o, "kernel");
        allowed = names_list(GRAPH_ATTN_NAMES, GRAPH_ATTN_N);
        return bad(err, where, rank, idx, "field 'kernel' is %s (allowed: %s)", got, allowed);
      }
    } else if (co == COST_ATTENTION && version == 1) variant /= 2; /* v1 kernel id -> GRAPH_ATTN_* */
    else if (co == COST_ATTENTION && variant >= GRAPH_ATTN_N) /* versions 2-4: the class's id */
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
    int captured = opt_int(o, "captured", 0); /* a partial CUDA graph's: 1 in it, 2 in it and launching it */
    if (captured < 0 || captured > 2)
      return bad(err, where, rank, idx, "field 'captured' is %d (allowed: 0 eager, 1 in a CUDA graph, 2 launching "
                 "one)", captured);
    e->captured = captured > 0;
    e->graph_launch = captured == 2;
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
    gboolean as_text = version < 4 || (k && meta_is_text(k));
    if (as_text && !cJSON_IsString(it)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: meta.%s must be a string (got %s; allowed: %s)", where,
                  it->string, lsim_json_type_name(it), version < 4 ? "e.g. \"pp\": \"2\" in version 1 to 3" : "text");
      return FALSE;
    }
    if (!k && version < 4) continue; /* a free-form entry of the converted format: dropped */
    if (!k) {
      g_autoptr(GString) allowed = g_string_new(META_KEYS[0].key);
      for (size_t i = 1; i < G_N_ELEMENTS(META_KEYS); i++) g_string_append_printf(allowed, ", %s", META_KEYS[i].key);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: meta.%s is not a meta entry (allowed: %s)", where,
                  it->string, allowed->str);
      return FALSE;
    }
    g_autofree char *what = g_strdup_printf("meta.%s", it->string);
    if (meta_is_text(k)) { /* a heap text (the layout) of any length: max 0 */
      if (*it->valuestring && !lsim_json_check_text(it->valuestring, k->heap ? 0 : k->size - 1, where, what, err))
        return FALSE;
      meta_set_text(&g->meta, k, it->valuestring);
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
                "converts 1 to 4); regenerate it with `layoutsim graph` (docs/graph-format.md)", path, got,
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
