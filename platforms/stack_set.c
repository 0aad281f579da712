/* stack_set -- see stack_set.h. */
#include "stack_set.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "plat_file.h"

/* "an integer from 0 to 1", "a number from 0 to 0.5", or the key's own values ("2, 4"). Caller frees. */
static char *allowed_values(const plat_field *f)
{
  const char *values = stack_key_values(f->key);
  if (values) return g_strdup(values);
  g_autofree char *lo = lsim_number(f->lo);
  g_autofree char *hi = lsim_number(f->hi);
  return g_strdup_printf("%s from %s to %s", f->integer ? "an integer" : "a number", lo, hi);
}

static gboolean value_allowed(const plat_field *f, double v)
{
  if (!(v >= f->lo && v <= f->hi) || (f->integer && v != floor(v))) return FALSE;
  const char *values = stack_key_values(f->key);
  if (!values) return TRUE;
  g_auto(GStrv) each = g_strsplit(values, ", ", -1);
  for (char **w = each; *w; w++)
    if (g_ascii_strtod(*w, NULL) == v) return TRUE;
  return FALSE;
}

gboolean stack_setting_parse(GArray *settings, const char *text, const char *field, GError **err)
{
  size_t n;
  const plat_field *keys = stack_key_table(&n);
  const char *eq = strchr(text, '=');
  g_autofree char *key = eq ? g_strndup(text, (gsize)(eq - text)) : g_strdup(text);
  size_t k = 0;
  while (k < n && strcmp(keys[k].key, key)) k++;
  if (!eq || k == n) {
    g_autoptr(GString) names = g_string_new(NULL);
    for (size_t i = 0; i < n; i++) g_string_append_printf(names, "%s%s", i ? ", " : "", keys[i].key);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s '%s' (allowed: KEY=VALUE, KEY one of %s)", field,
                eq ? "unknown key" : "not KEY=VALUE:", eq ? key : text, names->str);
    return FALSE;
  }
  const plat_field *f = &keys[k];
  const char *shown = eq + 1;
  char *end;
  errno = 0;
  double v = strtod(shown, &end);
  if (errno || end == shown || *end || g_ascii_isspace(*shown) || !value_allowed(f, v)) {
    g_autofree char *allowed = allowed_values(f);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s = '%s' (allowed: %s)", field, f->key, shown, allowed);
    return FALSE;
  }
  for (guint i = 0; i < settings->len; i++)
    if (g_array_index(settings, stack_setting, i).key == k) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s set more than once (allowed: each key once)", field,
                  f->key);
      return FALSE;
    }
  stack_setting s = {k, v + 0.0}; /* -0 is 0 */
  g_array_append_val(settings, s);
  return TRUE;
}

gboolean stack_settings_parse_list(GArray *settings, const char *text, const char *field, GError **err)
{
  if (!*text) return TRUE;
  g_auto(GStrv) each = g_strsplit(text, ";", -1);
  for (char **w = each; *w; w++)
    if (!stack_setting_parse(settings, *w, field, err)) return FALSE;
  return TRUE;
}

void stack_settings_apply(const GArray *settings, stack_profile *s)
{
  size_t n;
  const plat_field *keys = stack_key_table(&n);
  for (guint i = 0; settings && i < settings->len; i++) {
    const stack_setting *set = &g_array_index(settings, stack_setting, i);
    *(double *)((char *)s + keys[set->key].off) = set->value;
    g_autofree char *v = lsim_number(set->value);
    g_autofree char *one = g_strdup_printf("%s%s=%s", s->set[0] ? ";" : "", keys[set->key].key, v);
    g_strlcat(s->set, one, sizeof s->set);
  }
}

char *stack_settings_describe(const GArray *settings)
{
  size_t n;
  const plat_field *keys = stack_key_table(&n);
  GString *out = g_string_new(NULL);
  for (guint i = 0; settings && i < settings->len; i++) {
    const stack_setting *set = &g_array_index(settings, stack_setting, i);
    g_autofree char *v = lsim_number(set->value);
    g_string_append_printf(out, "%s%s=%s", i ? ";" : "", keys[set->key].key, v);
  }
  return g_string_free(out, FALSE);
}
