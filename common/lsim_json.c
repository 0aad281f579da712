/* lsim_json -- see lsim_json.h. */
#include "lsim_json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lsim_error.h"
#include "lsim_outfile.h"

#ifndef LSIM_DATADIR
#define LSIM_DATADIR "."
#endif

cJSON *lsim_json_read_file(const char *path, GError **err)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *io = NULL;
  if (!g_file_get_contents(path, &text, &len, &io)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot read (%s)", path, io->message);
    g_error_free(io);
    return NULL;
  }
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(text, &end, FALSE);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    long off = at ? (long)(at - text) : -1;
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not valid JSON (near byte %ld)", path, off);
    return NULL;
  }
  while (end < text + len && g_ascii_isspace(*end)) end++;
  if (end != text + len) { /* one value per file: trailing text (or a NUL byte) is an error, not ignored */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not valid JSON (unexpected text after the value at byte %ld)",
                path, (long)(end - text));
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

gboolean lsim_json_write_file(const cJSON *j, const char *path, GError **err)
{
  g_autofree char *text = cJSON_Print(j); /* indented: profiles are read by people */
  if (!text) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: out of memory while printing JSON", path);
    return FALSE;
  }
  lsim_outfile f;
  if (!lsim_outfile_open(&f, path, err)) return FALSE;
  fputs(text, f.f);
  return lsim_outfile_commit(&f, err);
}

static const cJSON *field(const cJSON *obj, const char *key, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing field '%s'", where, key);
  return v;
}

gboolean lsim_json_string(const cJSON *obj, const char *key, const char **out, const char *where, GError **err)
{
  const cJSON *v = field(obj, key, where, err);
  if (!v) return FALSE;
  if (!cJSON_IsString(v)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: field '%s' must be a string", where, key);
    return FALSE;
  }
  *out = v->valuestring;
  return TRUE;
}

gboolean lsim_json_number(const cJSON *obj, const char *key, double *out, const char *where, GError **err)
{
  const cJSON *v = field(obj, key, where, err);
  if (!v) return FALSE;
  if (!cJSON_IsNumber(v)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: field '%s' must be a number", where, key);
    return FALSE;
  }
  *out = v->valuedouble;
  return TRUE;
}

gboolean lsim_json_number_opt(const cJSON *obj, const char *key, double *out, const char *where, GError **err)
{
  if (!cJSON_GetObjectItemCaseSensitive(obj, key)) return TRUE;
  return lsim_json_number(obj, key, out, where, err);
}

gboolean lsim_json_positive_int(const cJSON *obj, const char *key, int *out, const char *where, GError **err)
{
  double d = 0;
  if (!lsim_json_number(obj, key, &d, where, err)) return FALSE;
  if (d < 1 || d > 1e9 || d != (double)(int)d) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: field '%s' must be a positive integer (got %g)", where,
                key, d);
    return FALSE;
  }
  *out = (int)d;
  return TRUE;
}

char *lsim_data_path(const char *dir, const char *file)
{
  const char *root = g_getenv("LAYOUTSIM_DATA");
  return g_build_filename(root && *root ? root : LSIM_DATADIR, dir, file, NULL);
}
