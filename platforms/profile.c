/* profile -- see profile.h. */
#include "profile.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "fabric.h"
#include "plat_file.h"
#include "workloads/layout.h"
#include "workloads/precision.h"

#define F(k, lo, hi) {#k, offsetof(gpu_profile, k), lo, hi, FALSE, FALSE, 0, 0}
#define FI(k, lo, hi) {#k, offsetof(gpu_profile, k), lo, hi, TRUE, FALSE, 0, 0}
static const plat_field FIELDS[] = {
    F(peak_flops, 1e9, 1e18),       F(hbm_bytes_per_s, 1e9, 1e15),   F(memory_gib, 0.1, 1e5),
    F(nvlink_bytes_per_s, 1e6, 1e14), F(nvlink_latency_s, 0, 1e-2),  F(ib_bytes_per_s, 1e6, 1e14),
    F(ib_latency_s, 0, 1e-2),       FI(sm_count, 1, 10000),         FI(leaf_nodes, 0, 1e6),
    F(oversubscription, 1, 1e3),
    F(power_idle_w, 0, 1e5),        F(power_compute_w, 0, 1e5),      F(power_memory_w, 0, 1e5),
    F(power_comm_w, 0, 1e5),        F(node_power_w, 0, 1e6),         F(peak_fp8_flops, 0, 1e19),
};
#undef F
#undef FI

/* Every key a profile file may have: the FIELDS, and these (all required but `comment`). Any
 * other key is an error: a misspelt one would be ignored, and so would a stack's constant left in
 * a profile file of before the split (docs/stacks.md). */
static const char *const OTHER_KEYS[] = {"name", "comment", "calibrated", "gpus_per_node", "nics_per_node", "fabric",
                                         "gpus_per_domain", "nvls", "default_stack", "mxfp8", "gemm_efficiency_scale",
                                         "fp8_gemm_efficiency_scale", "sweep_kernels", "exp_per_s"};

static gboolean check_keys(const cJSON *j, const char *path, GError **err)
{
  const char *keys[G_N_ELEMENTS(OTHER_KEYS) + G_N_ELEMENTS(FIELDS)];
  guint n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(OTHER_KEYS); i++) keys[n++] = OTHER_KEYS[i];
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) keys[n++] = FIELDS[i].key;
  return lsim_json_known_keys(j, keys, n, path, err);
}

/* The optional free-text `comment`: a string when present. */
static gboolean read_comment(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  const char *c = NULL;
  if (cJSON_GetObjectItemCaseSensitive(j, "comment") && !lsim_json_string(j, "comment", &c, path, err)) return FALSE;
  if (c) g_strlcpy(out->comment, c, sizeof out->comment);
  return TRUE;
}

/* The required `fabric`: one of fabric.h's names. */
static gboolean read_fabric(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  const char *f = NULL;
  if (!lsim_json_string(j, "fabric", &f, path, err)) return FALSE;
  if (fabric_parse(f, &out->fabric)) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: fabric: invalid value '%s' (allowed: %s)", path, f, FABRIC_ALLOWED);
  return FALSE;
}

/* The optional `gpus_per_domain`: whole hosts (a multiple of gpus_per_node), at most 576 (NVLink 5's
 * largest switch domain; the platform holds gpus_per_domain^2 routes per domain, cluster.cpp). */
static gboolean read_domain(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  out->gpus_per_domain = out->gpus_per_node;
  if (!cJSON_GetObjectItemCaseSensitive(j, "gpus_per_domain")) return TRUE;
  if (!lsim_json_positive_int(j, "gpus_per_domain", &out->gpus_per_domain, path, err)) return FALSE;
  int d = out->gpus_per_domain, h = out->gpus_per_node;
  if (d > 576 || d < h) {
    plat_file_out_of_range(err, path, "gpus_per_domain", d, h, 576, TRUE);
    return FALSE;
  }
  if (d % h == 0) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: gpus_per_domain: %d is not a whole number of hosts of "
              "gpus_per_node = %d (allowed: multiples of %d up to 576)", path, d, h, h);
  return FALSE;
}

/* The optional GEMM efficiency scales (profile.h): 1 when absent, else in (0, 1.5]. */
static gboolean read_scales(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  const struct { const char *key; double *dst; } sc[] = {{"gemm_efficiency_scale", &out->gemm_efficiency_scale},
                                                         {"fp8_gemm_efficiency_scale", &out->fp8_gemm_efficiency_scale}};
  out->exp_per_s = 0; /* the optional SFU exponential rate (profile.h) */
  if (cJSON_GetObjectItemCaseSensitive(j, "exp_per_s")) {
    if (!lsim_json_number(j, "exp_per_s", &out->exp_per_s, path, err)) return FALSE;
    if (!(out->exp_per_s >= 1e9 && out->exp_per_s <= 1e15)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: exp_per_s: %g is out of range (allowed: 1e9 to 1e15 "
                  "exponentials per second, or the key absent)", path, out->exp_per_s);
      return FALSE;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(sc); i++) {
    *sc[i].dst = 1;
    if (!cJSON_GetObjectItemCaseSensitive(j, sc[i].key)) continue;
    if (!lsim_json_number(j, sc[i].key, sc[i].dst, path, err)) return FALSE;
    if (!(*sc[i].dst > 0 && *sc[i].dst <= 1.5)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s: %g is out of range (allowed: above 0, at most 1.5; "
                  "1: as on the H100 the stacks were fitted on)", path, sc[i].key, *sc[i].dst);
      return FALSE;
    }
  }
  return TRUE;
}

/* "calibrated": true (every precision), false (none) or a list of precision names, each once: the
 * precisions a fit on measured runs on this GPU covered (docs/profile.md). */
static gboolean read_calibrated(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  const cJSON *cal = cJSON_GetObjectItemCaseSensitive(j, "calibrated");
  const layout_field *pf = layout_enum_field("precision"); /* the precisions' names: the layout's field table */
  g_autofree char *names = layout_enum_allowed(pf);
  if (cJSON_IsBool(cal)) {
    out->calibrated_precisions = cJSON_IsTrue(cal) ? (1u << PREC_N) - 1 : 0;
    return TRUE;
  }
  if (!cJSON_IsArray(cal)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: calibrated: %s (allowed: true, when a stack has been fitted "
                "to measured runs on this GPU in every precision, false, or a list of the precisions fitted: %s)",
                path, cal ? lsim_json_type_name(cal) : "missing", names);
    return FALSE;
  }
  out->calibrated_precisions = 0;
  int i = 0;
  for (const cJSON *e = cal->child; e; e = e->next, i++) {
    g_autofree char *field = g_strdup_printf("%s: calibrated[%d]", path, i);
    int p = PREC_BF16;
    if (!cJSON_IsString(e)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s (allowed: a precision name: %s)", field,
                  lsim_json_type_name(e), names);
      return FALSE;
    }
    if (!layout_enum_parse(pf, e->valuestring, &p, NULL)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is not a precision (allowed: %s)", field,
                  e->valuestring, names);
      return FALSE;
    }
    if (out->calibrated_precisions & (1u << p)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is listed twice (allowed: each precision once)", field,
                  e->valuestring);
      return FALSE;
    }
    out->calibrated_precisions |= 1u << p;
  }
  return TRUE;
}

/* "sweep_kernels" (optional): a non-empty list of attention kernel names, each once: a sweep's default space
 * on this machine (docs/profile.md); when absent 0, the stack's (stack_sweep_kernels). */
static gboolean read_sweep_kernels(const cJSON *j, gpu_profile *out, const char *path, GError **err)
{
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "sweep_kernels");
  out->sweep_kernels = 0;
  if (!k) return TRUE;
  const layout_field *kf = layout_enum_field("attention_kernel"); /* the kernels' names: the layout's field table */
  g_autofree char *kernels = layout_enum_allowed(kf);
  if (!cJSON_IsArray(k) || !k->child) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: sweep_kernels: %s (allowed: a non-empty list of attention "
                "kernels: %s)", path, cJSON_IsArray(k) ? "an empty list" : lsim_json_type_name(k), kernels);
    return FALSE;
  }
  out->sweep_kernels = 0;
  int i = 0;
  for (const cJSON *e = k->child; e; e = e->next, i++) {
    int a = ATTN_FLASH2;
    if (!cJSON_IsString(e) || !layout_enum_parse(kf, e->valuestring, &a, NULL)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: sweep_kernels[%d]: %s%s%s (allowed: %s)", path, i,
                  cJSON_IsString(e) ? "'" : "", cJSON_IsString(e) ? e->valuestring : lsim_json_type_name(e),
                  cJSON_IsString(e) ? "' is not an attention kernel" : "", kernels);
      return FALSE;
    }
    if (out->sweep_kernels & (1u << a)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: sweep_kernels[%d]: '%s' is listed twice (allowed: each "
                  "kernel once)", path, i, e->valuestring);
      return FALSE;
    }
    out->sweep_kernels |= 1u << a;
  }
  return TRUE;
}

gboolean profile_calibrated_for(const gpu_profile *p, int prec)
{
  return prec >= 0 && prec < PREC_N && (p->calibrated_precisions & (1u << prec));
}

gboolean profile_load_file(const char *path, gpu_profile *out, GError **err)
{
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, err);
  if (!j) return FALSE;
  stack_profile stack = out->stack;
  memset(out, 0, sizeof *out);
  out->stack = stack;
  gboolean ok = FALSE;
  if (!check_keys(j, path, err) || !lsim_json_name(j, "name", out->name, sizeof out->name, path, err)) goto out;
  if (!read_comment(j, out, path, err) || !read_fabric(j, out, path, err)) goto out;
  g_strlcpy(out->default_stack, STACK_DEFAULT, sizeof out->default_stack);
  if (cJSON_GetObjectItemCaseSensitive(j, "default_stack") &&
      !lsim_json_name(j, "default_stack", out->default_stack, sizeof out->default_stack, path, err))
    goto out;
  if (!read_calibrated(j, out, path, err) || !read_sweep_kernels(j, out, path, err)) goto out;
  const cJSON *nvls = cJSON_GetObjectItemCaseSensitive(j, "nvls");
  if (nvls && !cJSON_IsBool(nvls)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: nvls: %s (allowed: true, when the NVSwitch reduces "
                "(NVLink SHARP), or false)", path, lsim_json_type_name(nvls));
    goto out;
  }
  out->nvls = cJSON_IsTrue(nvls);
  const cJSON *mx = cJSON_GetObjectItemCaseSensitive(j, "mxfp8");
  if (mx && !cJSON_IsBool(mx)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: mxfp8: %s (allowed: true, when the tensor cores take MX "
                "block-scaled FP8 (Blackwell), or false)", path, lsim_json_type_name(mx));
    goto out;
  }
  out->mxfp8 = cJSON_IsTrue(mx);
  /* The platform holds gpus_per_node^2 routes per node (platforms/cluster.cpp): 128 GPUs (an NVLink
   * domain larger than any shipped today) is 16k routes; a million would exhaust the host's memory. */
  const struct { const char *key; int *dst; } node[] = {{"gpus_per_node", &out->gpus_per_node},
                                                        {"nics_per_node", &out->nics_per_node}};
  for (size_t i = 0; i < G_N_ELEMENTS(node); i++) {
    if (!lsim_json_positive_int(j, node[i].key, node[i].dst, path, err)) goto out;
    if (*node[i].dst > 128) {
      plat_file_out_of_range(err, path, node[i].key, *node[i].dst, 1, 128, FALSE);
      goto out;
    }
  }
  if (!plat_file_read_fields(j, FIELDS, G_N_ELEMENTS(FIELDS), out, path, err)) goto out;
  if (out->gpus_per_node % out->nics_per_node != 0) {
    g_autoptr(GString) divisors = g_string_new(NULL);
    for (int d = 1; d <= out->gpus_per_node; d++)
      if (out->gpus_per_node % d == 0) g_string_append_printf(divisors, "%s%d", divisors->len ? ", " : "", d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: nics_per_node: %d does not divide gpus_per_node = %d (allowed: %s)",
                path, out->nics_per_node, out->gpus_per_node, divisors->str);
    goto out;
  }
  if (!read_domain(j, out, path, err) || !read_scales(j, out, path, err)) goto out;
  ok = TRUE;
out:
  cJSON_Delete(j);
  return ok;
}

int profile_gpus_per_domain(const gpu_profile *p)
{
  int d = p->gpus_per_domain, h = p->gpus_per_node;
  return d >= h && h > 0 && d % h == 0 ? d : h;
}

char *profile_path(const char *name) { return plat_file_path("platforms/profiles", name); }

gboolean profile_load_named(const char *name, gpu_profile *out, GError **err)
{
  g_autofree char *path = profile_path(name);
  if (!plat_file_names_a_file(name) && !plat_file_check_shipped("profile", name, path, err)) return FALSE;
  return profile_load_file(path, out, err);
}

gboolean profile_load_with_stack(const char *profile, const char *stack, gpu_profile *out, GError **err)
{
  if (!profile_load_named(profile, out, err)) return FALSE;
  g_autofree char *dflt = g_strdup(out->default_stack); /* stack_load_named writes out->stack, not this */
  return stack_load_named(stack ? stack : dflt, &out->stack, err);
}
