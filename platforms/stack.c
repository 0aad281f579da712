/* stack -- see stack.h. */
#include "stack.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "plat_file.h"

/* The numeric keys. Each says whether a file must give it (a fitted constant: K) or what it is where a file
 * leaves it out (D: a software or physical default, docs/stacks.md "Defaults of the keys"), and whether the memory
 * verdict depends on it (MEMORY) or not (NOT_MEMORY): the macros take both, so a new key cannot leave either
 * unsaid. The defaults of the code's graph are the study's code (workloads/generate.c gen_default_code; a test
 * checks they agree). */
#define K(k, lo, hi, tag) {#k, offsetof(stack_profile, k), lo, hi, FALSE, FALSE, 0, STACK_KEY_##tag}
#define KI(k, lo, hi, tag) {#k, offsetof(stack_profile, k), lo, hi, TRUE, FALSE, 0, STACK_KEY_##tag}
#define D(k, lo, hi, d, tag) {#k, offsetof(stack_profile, k), lo, hi, FALSE, TRUE, d, STACK_KEY_##tag}
#define DI(k, lo, hi, d, tag) {#k, offsetof(stack_profile, k), lo, hi, TRUE, TRUE, d, STACK_KEY_##tag}
static const plat_field FIELDS[] = {
    /* kernels: the library's tile (cuBLAS's large bf16 kernels) and the fitted efficiencies */
    DI(gemm_tile_m, 8, 1024, 256, NOT_MEMORY),
    DI(gemm_tile_n, 8, 1024, 128, NOT_MEMORY),
    K(gemm_efficiency, 0.05, 1, NOT_MEMORY),
    K(gemm_k_half, 0, 1e5, NOT_MEMORY),
    K(hbm_efficiency, 0.05, 1, NOT_MEMORY),
    K(attn_seq_half, 0, 1e6, NOT_MEMORY),
    K(attn_head_dim_half, 0, 1e4, NOT_MEMORY),
    K(launch_overhead_s, 0, 1e-2, NOT_MEMORY),
    D(host_dispatch_s, 0, 1e-2, 0, NOT_MEMORY), /* 0: the host always ahead of the GPU */
    DI(launch_blocking, 0, 1, 0, NOT_MEMORY),   /* 0: launches asynchronous (CUDA's default) */
    K(fp8_gemm_efficiency, 0.05, 1, NOT_MEMORY),
    D(attn_fit_flops_per_exp, 0, 1e4, 0, NOT_MEMORY), /* 0: attention on every GPU as on the fit GPU */
    /* collectives */
    K(nccl_bw_efficiency_nvlink, 0.05, 1, NOT_MEMORY),
    K(nccl_bw_efficiency_ib, 0.05, 1, NOT_MEMORY),
    K(nccl_step_latency_s, 0, 1e-2, NOT_MEMORY),
    D(p2p_bw_efficiency_ib, 0, 1, 0, NOT_MEMORY), /* 0: a pipeline send between nodes as fast as a collective */
    D(straggler_sigma, 0, 0.2, 0, NOT_MEMORY), /* 0: every GPU as fast as the profile says */
    D(flex_nvlink_efficiency, 0, 1, 0, NOT_MEMORY), /* 0: the flex dispatcher's NVLink as fast as NCCL's */
    D(flex_ib_efficiency, 0, 1, 0, NOT_MEMORY),     /* 0: the flex dispatcher's RDMA as fast as NCCL's */
    D(flex_sms, 0, 1024, 0, NOT_MEMORY),            /* 0: the flex dispatcher's kernels take no SMs from compute */
    /* memory beside the model (docs/memory.md); fragmentation is fitted (calibrate --fit memory) */
    D(cuda_context_gib, 0, 100, 0.75, MEMORY),
    D(nccl_buffers_gib, 0, 100, 0.5, MEMORY),
    K(fragmentation, 0, 1, MEMORY),
    /* the code's graph: the study's code where a file does not say */
    DI(mlp_in_gemms, 1, 2, 2, MEMORY),
    DI(fused_norm, 0, 1, 0, MEMORY),
    D(grad_reduce_bytes, 2, 4, 4, MEMORY),
    DI(fused_softmax_batches, 0, 64, 0, MEMORY),
    DI(fused_softmax_max_seq, 0, 1048576, 4096, MEMORY), /* 0: no bound; FusedScaleMaskSoftmax: 4096 */
    DI(vocab_pad_multiple, 0, 65536, 0, MEMORY),
    DI(sp_saves_shard, 0, 1, 0, MEMORY),
    DI(pipe_tensors_shared, 0, 1, 0, MEMORY),
    DI(grad_buffer, 0, 1, 0, MEMORY),
    D(vocab_parallel_loss_bytes, 0, 4, 0, MEMORY),
    DI(fused_swiglu, 0, 1, 0, MEMORY),
    DI(attn_out_shared, 0, 1, 0, MEMORY),
    DI(te_dummy_wgrad, 0, 1, 0, MEMORY),
    DI(tp_comm_overlap, 0, 1, 0, MEMORY),
    D(tp_overlap_sm_fraction, 0, 0.5, 0.15, NOT_MEMORY), /* NeMo's userbuffers configurations for H100 */
    D(grad_accum_bytes, 0, 64, 0, NOT_MEMORY), /* 0: no accumulation pass outside the GEMM (docs/trust.md) */
    DI(pipe_scatter_gather, 0, 1, 0, NOT_MEMORY), /* 0: every tp rank sends the whole pipeline tensor (the study) */
    DI(tp_async_grad_reduce, 0, 1, 0, MEMORY),
    /* what the code runs by default (they reach the memory through the layout: stack_layout_defaults) */
    DI(zero, 0, 3, 1, NOT_MEMORY),
    DI(overlap_grad_reduce, 0, 1, 0, NOT_MEMORY),
    DI(overlap_param_gather, 0, 1, 0, NOT_MEMORY),
};
#undef K
#undef KI
#undef D
#undef DI

const plat_field *stack_key_table(size_t *n)
{
  *n = G_N_ELEMENTS(FIELDS);
  return FIELDS;
}

const char *stack_key_values(const char *key)
{
  if (!strcmp(key, "grad_reduce_bytes")) return "2, 4";                /* fp16/bf16 or fp32 (stack_load_file) */
  if (!strcmp(key, "vocab_parallel_loss_bytes")) return "0, 2, 4";     /* the study's, a bf16 or an fp32 tensor */
  return NULL;
}

/* The other keys: "partition" (default auto), "nccl_latency" (fitted | tuned; default fitted), and "attention",
 * the table of attention kernels by efficiency class. */
static const char *const OTHER_KEYS[] = {"name", "comment", "partition", "nccl_latency", "attention"};
#define DEFAULT_PARTITION "auto"

static const char *const ATTN_MODEL_NAMES[STACK_ATTN_N_MODELS] = {"materialized", "fused"};

/* The attention classes a file may leave out of its "attention" table, and what they are then: the scores
 * written to HBM need no constant of their own (the GEMM's and HBM's efficiencies). Every other class of
 * graph.h needs an entry. */
static const struct {
  const char *cls;
  stack_attention a;
} ATTN_DEFAULTS[] = {{"scores", {STACK_ATTN_MATERIALIZED, 0}}};

static const stack_attention *attn_default(int c)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ATTN_DEFAULTS); i++)
    if (!strcmp(ATTN_DEFAULTS[i].cls, graph_attn_name(c))) return &ATTN_DEFAULTS[i].a;
  return NULL;
}

static char *attn_class_list(void)
{
  GString *s = g_string_new(NULL);
  for (int c = 0; c < GRAPH_ATTN_N; c++) g_string_append_printf(s, "%s%s", c ? ", " : "", graph_attn_name(c));
  return g_string_free(s, FALSE);
}

static gboolean check_keys(const cJSON *j, const char *path, GError **err)
{
  const char *keys[G_N_ELEMENTS(OTHER_KEYS) + G_N_ELEMENTS(FIELDS)];
  guint n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(OTHER_KEYS); i++) keys[n++] = OTHER_KEYS[i];
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) keys[n++] = FIELDS[i].key;
  /* a stack of before the attention table: say where its constants went */
  static const char *const MOVED[] = {"flash1_efficiency", "flash2_efficiency"};
  for (size_t i = 0; i < G_N_ELEMENTS(MOVED); i++)
    if (cJSON_GetObjectItemCaseSensitive(j, MOVED[i])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: key '%s' is now \"attention\": {\"%.6s\": {\"model\": "
                  "\"fused\", \"efficiency\": ...}} (allowed: the keys of docs/stacks.md)", path, MOVED[i], MOVED[i]);
      return FALSE;
    }
  return lsim_json_known_keys(j, keys, n, path, err);
}

/* One entry of the "attention" table: {"model": "fused", "efficiency": E} or {"model": "materialized"}. */
static gboolean read_attention_entry(const cJSON *o, const char *cls, stack_attention *a, const char *path,
                                     GError **err)
{
  g_autofree char *where = g_strdup_printf("%s: attention.%s", path, cls);
  static const char *const KEYS[] = {"model", "efficiency"};
  const char *model = NULL;
  if (!cJSON_IsObject(o)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s is %s (allowed: an object with \"model\" and, for a fused "
                "kernel, \"efficiency\")", where, lsim_json_type_name(o));
    return FALSE;
  }
  if (!lsim_json_known_keys(o, KEYS, G_N_ELEMENTS(KEYS), where, err) || !lsim_json_string(o, "model", &model, where, err))
    return FALSE;
  a->model = -1;
  for (int m = 0; m < STACK_ATTN_N_MODELS; m++)
    if (!strcmp(model, ATTN_MODEL_NAMES[m])) a->model = m;
  if (a->model < 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: model = '%s' (allowed: fused, materialized)", where, model);
    return FALSE;
  }
  gboolean has_eff = cJSON_GetObjectItemCaseSensitive(o, "efficiency") != NULL;
  if (a->model == STACK_ATTN_MATERIALIZED) {
    a->efficiency = 0;
    if (!has_eff) return TRUE;
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: a materialized kernel has no efficiency of its own (allowed: "
                "none; it runs at gemm_efficiency and hbm_efficiency)", where);
    return FALSE;
  }
  if (!lsim_json_number(o, "efficiency", &a->efficiency, where, err)) return FALSE;
  if (a->efficiency < 0.05 || a->efficiency > 1) {
    plat_file_out_of_range(err, where, "efficiency", a->efficiency, 0.05, 1, FALSE);
    return FALSE;
  }
  return TRUE;
}

/* The "attention" table: an entry per efficiency class of graph.h, but those with a default. */
static gboolean read_attention(const cJSON *j, stack_profile *out, const char *path, GError **err)
{
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "attention"), *it;
  if (t && !cJSON_IsObject(t)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: attention is %s (allowed: an object of kernels by class)",
                path, lsim_json_type_name(t));
    return FALSE;
  }
  gboolean seen[GRAPH_ATTN_N] = {FALSE};
  cJSON_ArrayForEach(it, t)
  {
    int c = graph_attn_from_name(it->string);
    if (c < 0) {
      g_autofree char *list = attn_class_list();
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: attention: unknown class '%s' (allowed: %s)", path,
                  it->string, list);
      return FALSE;
    }
    if (!read_attention_entry(it, it->string, &out->attention[c], path, err)) return FALSE;
    seen[c] = TRUE;
  }
  for (int c = 0; c < GRAPH_ATTN_N; c++) {
    if (seen[c]) continue;
    const stack_attention *d = attn_default(c);
    if (!d) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: attention: no entry for class '%s' (allowed: an entry "
                  "{\"model\": \"fused\", \"efficiency\": E} or {\"model\": \"materialized\"}; docs/stacks.md)", path,
                  graph_attn_name(c));
      return FALSE;
    }
    out->attention[c] = *d;
  }
  return TRUE;
}

/* "nccl_latency": fitted | tuned (default fitted). */
static gboolean read_latency(const cJSON *j, stack_profile *out, const char *path, GError **err)
{
  const char *lat = NULL;
  if (cJSON_GetObjectItemCaseSensitive(j, "nccl_latency") && !lsim_json_string(j, "nccl_latency", &lat, path, err))
    return FALSE;
  if (lat && strcmp(lat, "fitted") && strcmp(lat, "tuned")) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: nccl_latency = '%s' (allowed: fitted, tuned)", path, lat);
    return FALSE;
  }
  out->nccl_latency_tuned = lat && !strcmp(lat, "tuned");
  return TRUE;
}

gboolean stack_load_file(const char *path, stack_profile *out, GError **err)
{
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, err);
  if (!j) return FALSE;
  memset(out, 0, sizeof *out);
  gboolean ok = FALSE;
  const char *c = NULL, *part = NULL;
  GError *perr = NULL;
  if (!check_keys(j, path, err) || !lsim_json_name(j, "name", out->name, sizeof out->name, path, err)) goto out;
  if (cJSON_GetObjectItemCaseSensitive(j, "comment") && !lsim_json_string(j, "comment", &c, path, err)) goto out;
  if (c) g_strlcpy(out->comment, c, sizeof out->comment);
  if (!plat_file_read_fields(j, FIELDS, G_N_ELEMENTS(FIELDS), out, path, err)) goto out;
  if (out->grad_reduce_bytes != 2 && out->grad_reduce_bytes != 4) {
    /* inside the range, but only 2 (fp16/bf16) and 4 (fp32) are precisions */
    char *shown = lsim_number(out->grad_reduce_bytes);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: grad_reduce_bytes = %s is not a precision (allowed: 2, 4)",
                path, shown);
    g_free(shown);
    goto out;
  }
  if (out->vocab_parallel_loss_bytes != 0 && out->vocab_parallel_loss_bytes != 2 && out->vocab_parallel_loss_bytes != 4) {
    /* inside the range, but what the loss keeps is the study's (0), a bf16 (2) or an fp32 (4) tensor */
    char *shown = lsim_number(out->vocab_parallel_loss_bytes);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "%s: vocab_parallel_loss_bytes = %s is not 0 or a precision (allowed: 0, 2, 4)", path, shown);
    g_free(shown);
    goto out;
  }
  if (!read_latency(j, out, path, err) || !read_attention(j, out, path, err)) goto out;
  if (!cJSON_GetObjectItemCaseSensitive(j, "partition")) part = DEFAULT_PARTITION;
  else if (!lsim_json_string(j, "partition", &part, path, err)) goto out;
  if (!partition_parse_method(part, &out->partition, &perr)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s", path, perr->message);
    g_error_free(perr);
    goto out;
  }
  ok = TRUE;
out:
  cJSON_Delete(j);
  return ok;
}

char *stack_path(const char *name) { return plat_file_path("platforms/stacks", name); }

gboolean stack_load_named(const char *name, stack_profile *out, GError **err)
{
  g_autofree char *path = stack_path(name);
  if (!plat_file_names_a_file(name) && !plat_file_check_shipped("stack", name, path, err)) return FALSE;
  return stack_load_file(path, out, err);
}

static void add_attention(cJSON *j, const stack_profile *s, gboolean all)
{
  cJSON *t = cJSON_CreateObject();
  for (int c = 0; c < GRAPH_ATTN_N; c++) {
    const stack_attention *a = &s->attention[c], *d = attn_default(c);
    if (!all && d && d->model == a->model && d->efficiency == a->efficiency) continue;
    cJSON *e = cJSON_AddObjectToObject(t, graph_attn_name(c));
    cJSON_AddStringToObject(e, "model", ATTN_MODEL_NAMES[a->model]);
    if (a->model == STACK_ATTN_FUSED) {
      g_autofree char *v = lsim_number(a->efficiency);
      cJSON_AddRawToObject(e, "efficiency", v);
    }
  }
  cJSON_AddItemToObject(j, "attention", t);
}

/* The stack as JSON: every key (all), or as the shipped files hold it (those with a default only where they
 * differ from it). */
static cJSON *to_json(const stack_profile *s, gboolean all)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", s->name);
  if (s->comment[0]) cJSON_AddStringToObject(j, "comment", s->comment);
  const char *part = partition_method_name(s->partition);
  if (all || strcmp(part, DEFAULT_PARTITION)) cJSON_AddStringToObject(j, "partition", part);
  if (all) {
    for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) {
      g_autofree char *v = lsim_number(*(const double *)((const char *)s + FIELDS[i].off));
      cJSON_AddRawToObject(j, FIELDS[i].key, v);
    }
  } else {
    plat_file_add_fields(j, FIELDS, G_N_ELEMENTS(FIELDS), s);
  }
  if (all || s->nccl_latency_tuned) cJSON_AddStringToObject(j, "nccl_latency", s->nccl_latency_tuned ? "tuned" : "fitted");
  add_attention(j, s, all);
  return j;
}

gboolean stack_save(const stack_profile *s, const char *path, GError **err)
{
  cJSON *j = to_json(s, FALSE);
  gboolean ok = lsim_json_write_file(j, path, err);
  cJSON_Delete(j);
  return ok;
}

char *stack_show(const stack_profile *s)
{
  cJSON *j = to_json(s, TRUE);
  char *text = cJSON_Print(j);
  cJSON_Delete(j);
  return text;
}

void stack_memory_key(const stack_profile *s, GString *out)
{
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++)
    if (FIELDS[i].tags & STACK_KEY_MEMORY)
      g_string_append_printf(out, " %s=%.17g", FIELDS[i].key, *(const double *)((const char *)s + FIELDS[i].off));
}

gen_code stack_gen_code(const stack_profile *s)
{
  gen_code c;
  memset(&c, 0, sizeof c); /* its padding too: a request carrying it is sent to the workers as bytes */
  c.mlp_in_gemms = (int)s->mlp_in_gemms;
  c.fused_norm = s->fused_norm != 0;
  c.grad_reduce_bytes = s->grad_reduce_bytes;
  c.fused_softmax_batches = (int)s->fused_softmax_batches;
  c.fused_softmax_max_seq = (int)s->fused_softmax_max_seq;
  c.sp_saves_shard = s->sp_saves_shard != 0;
  c.pipe_tensors_shared = s->pipe_tensors_shared != 0;
  c.grad_buffer = s->grad_buffer != 0;
  c.vocab_parallel_loss_bytes = s->vocab_parallel_loss_bytes;
  c.fused_swiglu = s->fused_swiglu != 0;
  c.attn_out_shared = s->attn_out_shared != 0;
  c.te_dummy_wgrad = s->te_dummy_wgrad != 0;
  c.tp_comm_overlap = s->tp_comm_overlap != 0;
  c.grad_accum_bytes = s->grad_accum_bytes;
  c.pipe_scatter_gather = s->pipe_scatter_gather != 0;
  c.tp_async_grad_reduce = s->tp_async_grad_reduce != 0;
  return c;
}

guint stack_sweep_kernels(const stack_profile *s)
{
  int best = -1;
  for (int c = 0; c < GRAPH_ATTN_N; c++)
    if (s->attention[c].model == STACK_ATTN_FUSED && (best < 0 || s->attention[c].efficiency > s->attention[best].efficiency))
      best = c;
  guint mask = 0;
  for (int a = 0; a < ATTN_N_KERNELS; a++)
    if (best < 0 || layout_attn_class((layout_attn)a) == best) mask |= 1u << a;
  return mask;
}

void stack_layout_defaults(const stack_profile *s, layout *l, unsigned given)
{
  if (!(given & STACK_GIVEN_ZERO)) l->zero = (int)s->zero;
  if (!(given & STACK_GIVEN_OVERLAP_GRAD_REDUCE)) l->overlap_grad_reduce = s->overlap_grad_reduce != 0;
  if (!(given & STACK_GIVEN_OVERLAP_PARAM_GATHER))
    l->overlap_param_gather = s->overlap_param_gather != 0 && (l->zero == 1 || l->zero == 2);
}
