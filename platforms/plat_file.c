/* plat_file -- see plat_file.h. */
#include "plat_file.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

static double *slot(void *base, const plat_field *f) { return (double *)((char *)base + f->off); }

void plat_file_out_of_range(GError **err, const char *path, const char *key, double v, double lo, double hi,
                            gboolean integer)
{
  /* V as given (lsim_number: 1.0000001 is not shown as 1, inside the range) */
  g_autofree char *shown = lsim_number(v);
  /* an integer key's bounds in full (fused_softmax_max_seq's 1048576, not %g's 1.04858e+06), a real one's as %g */
  g_autofree char *lo_s = integer ? lsim_number(lo) : g_strdup_printf("%g", lo);
  g_autofree char *hi_s = integer ? lsim_number(hi) : g_strdup_printf("%g", hi);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s = %s is outside its allowed range [%s, %s]%s", path, key,
              shown, lo_s, hi_s, integer ? " or not an integer" : "");
}

gboolean plat_file_read_fields(const cJSON *j, const plat_field *f, size_t n, void *base, const char *path,
                               GError **err)
{
  for (size_t i = 0; i < n; i++) {
    double *v = slot(base, &f[i]);
    if (f[i].optional && !cJSON_GetObjectItemCaseSensitive(j, f[i].key)) {
      *v = f[i].dflt;
      continue;
    }
    if (!lsim_json_number(j, f[i].key, v, path, err)) return FALSE;
    if (*v < f[i].lo || *v > f[i].hi || (f[i].integer && *v != floor(*v))) {
      plat_file_out_of_range(err, path, f[i].key, *v, f[i].lo, f[i].hi, f[i].integer);
      return FALSE;
    }
  }
  return TRUE;
}

void plat_file_add_fields(cJSON *j, const plat_field *f, size_t n, const void *base)
{
  for (size_t i = 0; i < n; i++) { /* as read back exactly: cJSON's 15 digits may lose the last bit */
    if (f[i].optional && *slot((void *)base, &f[i]) == f[i].dflt) continue;
    g_autofree char *v = lsim_number(*slot((void *)base, &f[i]));
    cJSON_AddRawToObject(j, f[i].key, v);
  }
}

static int by_name(const void *a, const void *b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

/* "a, b": the *.json files of the directory of `path`, sorted. Caller frees. */
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

gboolean plat_file_names_a_file(const char *name) { return strchr(name, '/') || strstr(name, ".json"); }

char *plat_file_path(const char *dir, const char *name)
{
  if (plat_file_names_a_file(name)) return g_strdup(name);
  g_autofree char *file = g_strconcat(name, ".json", NULL);
  return lsim_data_path(dir, file);
}

gboolean plat_file_check_shipped(const char *what, const char *name, const char *path, GError **err)
{
  if (g_file_test(path, G_FILE_TEST_EXISTS)) return TRUE;
  g_autofree char *shipped = shipped_names(path);
  g_autofree char *dir = g_path_get_dirname(path);
  if (*shipped)
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: unknown '%s' (allowed: %s, or a path to a %s JSON file)",
                what, name, shipped, what);
  else /* a binary run away from its data (or LAYOUTSIM_DATA pointing elsewhere) */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "%s: unknown '%s': no shipped %ss in %s (allowed: a path to a %s JSON file, or "
                "LAYOUTSIM_DATA set to the layoutsim source tree)", what, name, what, dir, what);
  return FALSE;
}
