/* lsim_error -- see lsim_error.h. */
#include "lsim_error.h"

#include <stdarg.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(layoutsim-error-quark, lsim_error)

char *lsim_quote(const char *s, gsize max_bytes)
{
  GString *out = g_string_new("\"");
  const char *p = s;
  while (*p) {
    if (max_bytes && (gsize)(p - s) >= max_bytes) {
      g_string_append(out, "...");
      break;
    }
    gunichar c = g_utf8_get_char_validated(p, -1);
    if (c == (gunichar)-1 || c == (gunichar)-2) { /* not UTF-8: the byte */
      g_string_append_printf(out, "\\x%02X", (guchar)*p++);
      continue;
    }
    if (c == '\n') g_string_append(out, "\\n");
    else if (c == '\t') g_string_append(out, "\\t");
    else if (c == '\r') g_string_append(out, "\\r");
    else if (c == '\\' || c == '"') g_string_append_printf(out, "\\%c", (char)c);
    else if (c < 0x20 || c == 0x7f) g_string_append_printf(out, "\\x%02X", (unsigned)c);
    else if (g_unichar_iscntrl(c) || g_unichar_type(c) == G_UNICODE_FORMAT) g_string_append_printf(out, "\\u%04X", c);
    else g_string_append_len(out, p, g_utf8_next_char(p) - p);
    p = g_utf8_next_char(p);
  }
  g_string_append_c(out, '"');
  return g_string_free(out, FALSE);
}

char *lsim_number(double d)
{
  char buf[32];
  if (d == floor(d) && fabs(d) < 1e17) return g_strdup_printf("%.0f", d); /* a count in full: 1000000, not 1e+06 */
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, d);
    if (strtod(buf, NULL) == d) break; /* 17 digits always read back (NaN never does: shown as nan) */
  }
  return g_strdup(buf);
}

char *lsim_one_line(const char *msg)
{
  GString *out = g_string_sized_new(strlen(msg));
  for (const char *p = msg; *p; p++) {
    if ((guchar)*p < 0x20 || *p == 0x7f) g_string_append_printf(out, "\\x%02X", (guchar)*p);
    else g_string_append_c(out, *p);
  }
  return g_string_free(out, FALSE);
}

gboolean lsim_invalid_at(GError **err, const char *where, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s", where, msg);
  return FALSE;
}
