/* profile -- see profile.h. */
#include "profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

typedef struct field {
  const char *key;
  size_t off;
  double lo, hi; /* allowed range */
  gboolean integer; /* counts (SMs, tile sizes) */
} field;

#define F(k, lo, hi) {#k, offsetof(gpu_profile, k), lo, hi, FALSE}
#define FI(k, lo, hi) {#k, offsetof(gpu_profile, k), lo, hi, TRUE}
static const field FIELDS[] = {
    F(peak_flops, 1e9, 1e18),       F(hbm_bytes_per_s, 1e9, 1e15),   F(memory_gib, 0.1, 1e5),
    F(nvlink_bytes_per_s, 1e6, 1e14), F(nvlink_latency_s, 0, 1e-2),  F(ib_bytes_per_s, 1e6, 1e14),
    F(ib_latency_s, 0, 1e-2),       F(gemm_efficiency, 0.05, 1),     F(hbm_efficiency, 0.05, 1),
    F(launch_overhead_s, 0, 1e-2), F(nccl_bw_efficiency_nvlink, 0.05, 1),
    F(nccl_bw_efficiency_ib, 0.05, 1), F(nccl_step_latency_s, 0, 1e-2), F(cuda_context_gib, 0, 100),
    F(nccl_buffers_gib, 0, 100),    F(fragmentation, 0, 1),
    /* compute model (kernel_cost.h) */
    FI(sm_count, 1, 10000),         FI(gemm_tile_m, 8, 1024),       FI(gemm_tile_n, 8, 1024),
    F(gemm_k_half, 0, 1e5),         F(flash1_efficiency, 0.05, 1),  F(flash2_efficiency, 0.05, 1),
    F(attn_seq_half, 0, 1e6),       F(attn_head_dim_half, 0, 1e4),
};
#undef F
#undef FI

/* Every key a profile file may have: the FIELDS, and these (all required but `comment`). Any
 * other key is an error: a misspelt one would be ignored. */
static const char *const OTHER_KEYS[] = {"name", "comment", "gpus_per_node", "nics_per_node"};

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

static int by_name(const void *a, const void *b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

static double *slot(gpu_profile *p, const field *f) { return (double *)((char *)p + f->off); }

/* "PATH: KEY = V is outside its allowed range [LO, HI]"; V as given (lsim_number: 1.0000001 is not
 * shown as 1, inside the range). */
static void out_of_range(GError **err, const char *path, const char *key, double v, double lo, double hi,
                         gboolean integer)
{
  g_autofree char *shown = lsim_number(v);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s = %s is outside its allowed range [%g, %g]%s", path, key,
              shown, lo, hi, integer ? " or not an integer" : "");
}

gboolean profile_load_file(const char *path, gpu_profile *out, GError **err)
{
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, err);
  if (!j) return FALSE;
  memset(out, 0, sizeof *out);
  gboolean ok = FALSE;
  if (!check_keys(j, path, err) || !lsim_json_name(j, "name", out->name, sizeof out->name, path, err)) goto out;
  if (!read_comment(j, out, path, err)) goto out;
  /* The platform holds gpus_per_node^2 routes per node (platforms/cluster.cpp): 128 GPUs (an NVLink
   * domain larger than any shipped today) is 16k routes; a million would exhaust the host's memory. */
  const struct { const char *key; int *dst; } node[] = {{"gpus_per_node", &out->gpus_per_node},
                                                        {"nics_per_node", &out->nics_per_node}};
  for (size_t i = 0; i < G_N_ELEMENTS(node); i++) {
    if (!lsim_json_positive_int(j, node[i].key, node[i].dst, path, err)) goto out;
    if (*node[i].dst > 128) {
      out_of_range(err, path, node[i].key, *node[i].dst, 1, 128, FALSE);
      goto out;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) {
    double *v = slot(out, &FIELDS[i]);
    if (!lsim_json_number(j, FIELDS[i].key, v, path, err)) goto out;
    if (*v < FIELDS[i].lo || *v > FIELDS[i].hi || (FIELDS[i].integer && *v != floor(*v))) {
      out_of_range(err, path, FIELDS[i].key, *v, FIELDS[i].lo, FIELDS[i].hi, FIELDS[i].integer);
      goto out;
    }
  }
  if (out->gpus_per_node % out->nics_per_node != 0) {
    g_autoptr(GString) divisors = g_string_new(NULL);
    for (int d = 1; d <= out->gpus_per_node; d++)
      if (out->gpus_per_node % d == 0) g_string_append_printf(divisors, "%s%d", divisors->len ? ", " : "", d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: nics_per_node: %d does not divide gpus_per_node = %d (allowed: %s)",
                path, out->nics_per_node, out->gpus_per_node, divisors->str);
    goto out;
  }
  ok = TRUE;
out:
  cJSON_Delete(j);
  return ok;
}

/* "a, b": the shipped profiles, the *.json files of the directory of `path`, sorted. Caller frees. */
static char *shipped_names(const char *path)
{
  g_autofree char *dir_path = g_path_get_dirname(path);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  for (const char *f; dir && (f = g_dir_read_name(dir));)
    if (g_str_has_suffix(f, ".json")) g_ptr_array_add(names, g_strndup(f, strlen(f) - 5));
  if (dir) g_dir_close(dir);
  g_ptr_array_sort(names, by_name);
  g_ptr_array_add(names, NULL);
  return g_strjoinv(", ", (char **)names->pdata);
}

static gboolean names_a_file(const char *name) { return strchr(name, '/') || strstr(name, ".json"); }

char *profile_path(const char *name)
{
  if (names_a_file(name)) return g_strdup(name);
  g_autofree char *file = g_strconcat(name, ".json", NULL);
  return lsim_data_path("platforms/profiles", file);
}

gboolean profile_load_named(const char *name, gpu_profile *out, GError **err)
{
  g_autofree char *path = profile_path(name);
  if (names_a_file(name)) return profile_load_file(path, out, err);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_autofree char *shipped = shipped_names(path);
    g_autofree char *dir = g_path_get_dirname(path);
    if (*shipped)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "profile: unknown '%s' (allowed: %s, or a path to a profile JSON file)", name, shipped);
    else /* a binary run away from its data (or LAYOUTSIM_DATA pointing elsewhere) */
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "profile: unknown '%s': no shipped profiles in %s (allowed: a path to a profile JSON file, or "
                  "LAYOUTSIM_DATA set to the layoutsim source tree)", name, dir);
    return FALSE;
  }
  return profile_load_file(path, out, err);
}

gboolean profile_save(const gpu_profile *p, const char *path, GError **err)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", p->name);
  if (p->comment[0]) cJSON_AddStringToObject(j, "comment", p->comment);
  cJSON_AddNumberToObject(j, "gpus_per_node", p->gpus_per_node);
  cJSON_AddNumberToObject(j, "nics_per_node", p->nics_per_node);
  for (size_t i = 0; i < G_N_ELEMENTS(FIELDS); i++) { /* as read back exactly: cJSON's 15 digits may lose the last bit */
    g_autofree char *v = lsim_number(*slot((gpu_profile *)p, &FIELDS[i]));
    cJSON_AddRawToObject(j, FIELDS[i].key, v);
  }
  gboolean ok = lsim_json_write_file(j, path, err);
  cJSON_Delete(j);
  return ok;
}
