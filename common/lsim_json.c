/* lsim_json -- see lsim_json.h. */
#include "lsim_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lsim_error.h"
#include "lsim_outfile.h"

#ifndef LSIM_DATADIR
#define LSIM_DATADIR "."
#endif

/* The first member of obj (an object) whose key an earlier member has, or NULL. Pairwise for the
 * small objects graph files hold millions of, a hash table past 16 members. */
static const cJSON *repeated_member(const cJSON *obj)
{
  int n = 0;
  const cJSON *a = obj->child;
  for (; a && n < 16; a = a->next, n++)
    for (const cJSON *b = obj->child; b != a; b = b->next)
      if (a->string[0] == b->string[0] && !strcmp(a->string, b->string)) return a;
  if (!a) return NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (a = obj->child; a; a = a->next)
    if (!g_hash_table_add(seen, a->string)) return a;
  return NULL;
}

/* The first repeated key in the tree at node, depth first; on the way out each level prepends
 * the member's place (".key" or "[i]") to path. */
static const cJSON *find_repeated_key(const cJSON *node, GString *path)
{
  if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return NULL;
  const cJSON *rep = cJSON_IsObject(node) ? repeated_member(node) : NULL;
  if (rep) return rep;
  int i = 0;
  for (const cJSON *c = node->child; c; c = c->next, i++) {
    if (!c->child || !(rep = find_repeated_key(c, path))) continue; /* no members, no repeated key */
    g_autofree char *seg = cJSON_IsObject(node) ? g_strdup_printf(".%s", c->string) : g_strdup_printf("[%d]", i);
    g_string_prepend(path, seg);
    return rep;
  }
  return NULL;
}

/* cJSON keeps every member of a repeated key and its lookups return the first: refuse the file. */
static gboolean check_no_repeated_key(const cJSON *j, const char *path, GError **err)
{
  g_autoptr(GString) where = g_string_new(NULL);
  const cJSON *rep = find_repeated_key(j, where);
  if (!rep) return TRUE;
  if (where->len) g_string_append(where, ": ");
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: %skey '%s' appears more than once (each key may appear once)",
              path, where->str[0] == '.' ? where->str + 1 : where->str, rep->string);
  return FALSE;
}

/* A block malloc returns for n bytes: its 8-byte header, rounded to 16, at least 32 (glibc, 64-bit). */
static double malloc_block(double n) { return MAX(32.0, ceil((n + 8) / 16) * 16); }

double lsim_json_parse_bytes(const char *text, gsize len)
{
  /* a value is the root, the first in a container or one after a comma: counting the commas and the
   * openings outside strings counts them, and an empty container once too many */
  double values = 1, strings = 0;
  gboolean in_string = FALSE;
  gsize start = 0;
  for (gsize i = 0; i < len; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') {
        in_string = FALSE;
        strings += malloc_block((double)(i - start) + 1); /* each string, key or value, a copy of its own */
      }
    } else if (c == '"') {
      in_string = TRUE;
      start = i + 1;
    } else if (c == ',' || c == '[' || c == '{') {
      values++;
    }
  }
  return values * malloc_block(sizeof(cJSON)) + strings;
}

cJSON *lsim_json_read_file_within(const char *path, lsim_input_kind kind, double max_bytes, GError **err)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!lsim_input_read(path, kind, &text, &len, err)) return NULL;
  double need = max_bytes > 0 ? len + lsim_json_parse_bytes(text, len) : 0;
  if (need > max_bytes) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: reading its %" G_GSIZE_FORMAT " bytes would take about %.1f "
                "GiB of memory (its text and a JSON node per value), more than the budget of %.0f GiB (allowed: a "
                "file of fewer values)", path, len, need / (1 << 30), max_bytes / (1 << 30));
    return NULL;
  }
  /* "\u0000" in a string: cJSON's C string would end there, silently cutting the rest (a model name) */
  gboolean in_str = FALSE;
  for (gsize i = 0; i < len; i++) {
    if (!in_str) {
      in_str = text[i] == '"';
      continue;
    }
    if (text[i] == '"') in_str = FALSE;
    else if (text[i] == '\\' && i + 1 < len) {
      if (text[i + 1] == 'u' && i + 5 < len && !strncmp(text + i + 2, "0000", 4)) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: a NUL character (\\u0000) in a string at byte %" G_GSIZE_FORMAT
                    " (allowed: strings without NUL)", path, i);
        return NULL;
      }
      i++;
    }
  }
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(text, &end, FALSE);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    long off = at ? (long)(at - text) : -1;
    /* cJSON refuses values nested deeper than CJSON_NESTING_LIMIT as it refuses bad syntax: say which */
    int depth = 0, deepest = 0;
    gboolean in_string = FALSE;
    for (const char *p = text; at && p < at && p < text + len; p++) {
      if (in_string) {
        if (*p == '\\' && p + 1 < at) p++;
        else if (*p == '"') in_string = FALSE;
      } else if (*p == '"') in_string = TRUE;
      else if (*p == '[' || *p == '{') deepest = MAX(deepest, ++depth);
      else if (*p == ']' || *p == '}') depth--;
    }
    if (deepest >= CJSON_NESTING_LIMIT)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: JSON nested too deep: more than %d arrays or objects inside "
                  "one another near byte %ld (allowed: at most %d)", path, CJSON_NESTING_LIMIT, off, CJSON_NESTING_LIMIT);
    else g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not valid JSON (near byte %ld)", path, off);
    return NULL;
  }
  while (end < text + len && g_ascii_isspace(*end)) end++;
  if (end != text + len) { /* one value per file: trailing text (or a NUL byte) is an error, not ignored */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not valid JSON (unexpected text after the value at byte %ld)",
                path, (long)(end - text));
    cJSON_Delete(j);
    return NULL;
  }
  if (!check_no_repeated_key(j, path, err)) {
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

cJSON *lsim_json_read_file(const char *path, lsim_input_kind kind, GError **err)
{
  return lsim_json_read_file_within(path, kind, 0, err);
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

gboolean lsim_json_known_keys(const cJSON *obj, const char *const *allowed, guint n, const char *where, GError **err)
{
  g_autoptr(GString) list = g_string_new(NULL);
  for (guint i = 0; i < n; i++) g_string_append_printf(list, "%s%s", i ? ", " : "", allowed[i]);
  if (!cJSON_IsObject(obj)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: not a JSON object (allowed: an object with the keys %s)", where,
                list->str);
    return FALSE;
  }
  for (const cJSON *m = obj->child; m; m = m->next) {
    guint i = 0;
    while (i < n && strcmp(m->string, allowed[i])) i++;
    if (i == n) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: unknown key '%s' (allowed: %s)", where, m->string, list->str);
      return FALSE;
    }
  }
  return TRUE;
}

const char *lsim_json_type_name(const cJSON *v)
{
  if (cJSON_IsObject(v)) return "an object";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  return "null";
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
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: field '%s' must be a string (got %s)", where, key,
                lsim_json_type_name(v));
    return FALSE;
  }
  *out = v->valuestring;
  return TRUE;
}

gboolean lsim_json_check_text(const char *s, gsize max_bytes, const char *where, const char *what, GError **err)
{
  const char *why = NULL;
  gsize len = strlen(s);
  if (!g_utf8_validate(s, -1, NULL)) why = "is not valid UTF-8";
  else if (!*s) why = "is empty";
  else
    for (const char *p = s; *p && !why; p = g_utf8_next_char(p))
      if (!g_unichar_isprint(g_utf8_get_char(p))) why = "holds a control or format character";
  g_autofree char *too_long = !why && max_bytes && len > max_bytes ? g_strdup_printf("is %zu bytes long", len) : NULL;
  if (too_long) why = too_long;
  if (!why) return TRUE;
  g_autofree char *shown = lsim_quote(s, 80);
  g_autofree char *limit = max_bytes ? g_strdup_printf("1 to %zu bytes", max_bytes) : g_strdup("not empty");
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s: %s %s (allowed: printable UTF-8 text, %s)", where, what,
              shown, why, limit);
  return FALSE;
}

gboolean lsim_json_name(const cJSON *obj, const char *key, char *out, gsize out_size, const char *where, GError **err)
{
  const char *s = NULL;
  if (!lsim_json_string(obj, key, &s, where, err) || !lsim_json_check_text(s, out_size - 1, where, key, err))
    return FALSE;
  g_strlcpy(out, s, out_size);
  return TRUE;
}

gboolean lsim_json_number(const cJSON *obj, const char *key, double *out, const char *where, GError **err)
{
  const cJSON *v = field(obj, key, where, err);
  if (!v) return FALSE;
  if (!cJSON_IsNumber(v)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: field '%s' must be a number (got %s)", where, key,
                lsim_json_type_name(v));
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
  if (!(d >= 1 && d <= 1e9 && d == floor(d))) { /* the range first: a cast of 1e30 to int is undefined */
    g_autofree char *got = lsim_number(d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: field '%s' must be a whole number from 1 to 1000000000 (got "
                "%s)", where, key, got);
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
