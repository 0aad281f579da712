/* stack -- see stack.h. */
#include "stack.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "plat_file.h"

#define F(k, lo, hi) {#k, offsetof(stack_profile, k), lo, hi, FALSE}
#define FI(k, lo, hi) {#k, offsetof(stack_profile, k), lo, hi, TRUE}
static const plat_field FIELDS[] = {
    /* kernels */
    FI(gemm_tile_m, 8, 1024),        FI(gemm_tile_n, 8, 1024),        F(gemm_efficiency, 0.05, 1),
    F(gemm_k_half, 0, 1e5),          F(hbm_efficiency, 0.05, 1),      F(flash1_efficiency, 0.05, 1),
    F(flash2_efficiency, 0.05, 1),   F(attn_seq_half, 0, 1e6),        F(attn_head_dim_half, 0, 1e4),
    F(launch_overhead_s, 0, 1e-2),   F(host_dispatch_s, 0, 1e-2),     F(fp8_gemm_efficiency, 0.05, 1),
    /* collectives */
    F(nccl_bw_efficiency_nvlink, 0.05, 1), F(nccl_bw_efficiency_ib, 0.05, 1), F(nccl_step_latency_s, 0, 1e-2),
    /* memory */
    F(cuda_context_gib, 0, 100),     F(nccl_buffers_gib, 0, 100),     F(fragmentation, 0, 1),
    /* the code's graph */
    FI(mlp_in_gemms, 1, 2),          FI(fused_norm, 0, 1),            F(grad_reduce_bytes, 2, 4),
    FI(fused_softmax_batches, 0, 64), FI(vocab_pad_multiple, 0, 65536), FI(sp_saves_shard, 0, 1),
    FI(pipe_tensors_shared, 0, 1),
    /* what the code runs by default */
    FI(zero, 0, 3),                  FI(overlap_grad_reduce, 0, 1),   FI(overlap_param_gather, 0, 1),
    FI(tp_comm_overlap, 0, 1),       F(tp_overlap_sm_fraction, 0, 0.5),
};
#undef F
#undef FI

static const char *const OTHER_KEYS[] = {"name", "comment", "partition"};
/* optional keys (absent: their defaults, docs/stacks.md) */
static const char *const OPTIONAL_KEYS[] = {"nccl_latency", "straggler_sigma"};

static gboolean check_keys(const cJSON *j, const char *path, GError **err)
{
  const char *keys[G_N_ELEMENTS(OTHER_KEYS) + G_N_ELEMENTS(FIELDS) + G_N_ELEMENTS(OPTIONAL_KEYS)];
  guint n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(OTHER_KEYS); i++) keys[n++] = OTHER_KEYS[i];
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) keys[n++] = FIELDS[i].key;
  for (size_t i = 0; i < G_N_ELEMENTS(OPTIONAL_KEYS); i++) keys[n++] = OPTIONAL_KEYS[i];
  return lsim_json_known_keys(j, keys, n, path, err);
}

/* The optional keys: "nccl_latency" (fitted | tuned; default fitted), "straggler_sigma" (0 to 0.2; default 0). */
static gboolean read_optional(const cJSON *j, stack_profile *out, const char *path, GError **err)
{
  const char *lat = NULL;
  if (cJSON_GetObjectItemCaseSensitive(j, "nccl_latency") && !lsim_json_string(j, "nccl_latency", &lat, path, err))
    return FALSE;
  if (lat && strcmp(lat, "fitted") && strcmp(lat, "tuned")) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: nccl_latency = '%s' (allowed: fitted, tuned)", path, lat);
    return FALSE;
  }
  out->nccl_latency_tuned = lat && !strcmp(lat, "tuned");
  if (!cJSON_GetObjectItemCaseSensitive(j, "straggler_sigma")) return TRUE;
  if (!lsim_json_number(j, "straggler_sigma", &out->straggler_sigma, path, err)) return FALSE;
  if (out->straggler_sigma < 0 || out->straggler_sigma > 0.2) {
    plat_file_out_of_range(err, path, "straggler_sigma", out->straggler_sigma, 0, 0.2, FALSE);
    return FALSE;
  }
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
  if (!read_optional(j, out, path, err)) goto out;
  if (!lsim_json_string(j, "partition", &part, path, err)) goto out;
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

gboolean stack_save(const stack_profile *s, const char *path, GError **err)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", s->name);
  if (s->comment[0]) cJSON_AddStringToObject(j, "comment", s->comment);
  cJSON_AddStringToObject(j, "partition", partition_method_name(s->partition));
  plat_file_add_fields(j, FIELDS, G_N_ELEMENTS(FIELDS), s);
  if (s->nccl_latency_tuned) cJSON_AddStringToObject(j, "nccl_latency", "tuned");
  if (s->straggler_sigma > 0) {
    g_autofree char *v = lsim_number(s->straggler_sigma);
    cJSON_AddRawToObject(j, "straggler_sigma", v);
  }
  gboolean ok = lsim_json_write_file(j, path, err);
  cJSON_Delete(j);
  return ok;
}

gen_code stack_gen_code(const stack_profile *s)
{
  gen_code c;
  memset(&c, 0, sizeof c); /* its padding too: a request carrying it is sent to the workers as bytes */
  c.mlp_in_gemms = (int)s->mlp_in_gemms;
  c.fused_norm = s->fused_norm != 0;
  c.grad_reduce_bytes = s->grad_reduce_bytes;
  c.fused_softmax_batches = (int)s->fused_softmax_batches;
  c.sp_saves_shard = s->sp_saves_shard != 0;
  c.pipe_tensors_shared = s->pipe_tensors_shared != 0;
  c.tp_comm_overlap = s->tp_comm_overlap != 0;
  return c;
}

void stack_layout_defaults(const stack_profile *s, layout *l, unsigned given)
{
  if (!(given & STACK_GIVEN_ZERO)) l->zero = (int)s->zero;
  if (!(given & STACK_GIVEN_OVERLAP_GRAD_REDUCE)) l->overlap_grad_reduce = s->overlap_grad_reduce != 0;
  if (!(given & STACK_GIVEN_OVERLAP_PARAM_GATHER))
    l->overlap_param_gather = s->overlap_param_gather != 0 && (l->zero == 1 || l->zero == 2);
}
