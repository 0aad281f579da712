/* csv -- see csv.h. */
#include "csv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_input.h"
#include "common/lsim_outfile.h"

/* Split one record starting at *p; advances *p past the line end. *unclosed: the file ended inside
 * a quoted cell. */
static GPtrArray *parse_record(const char **p, gboolean *unclosed)
{
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  GString *cur = g_string_new(NULL);
  const char *s = *p;
  gboolean quoted = FALSE;
  for (;;) {
    char c = *s;
    if (quoted) {
      if (c == '\0') break;
      if (c == '"' && s[1] == '"') {
        g_string_append_c(cur, '"');
        s += 2;
        continue;
      }
      if (c == '"') quoted = FALSE;
      else g_string_append_c(cur, c);
      s++;
      continue;
    }
    if (c == '"') {
      quoted = TRUE;
      s++;
    } else if (c == ',') {
      g_ptr_array_add(fields, g_string_free(cur, FALSE));
      cur = g_string_new(NULL);
      s++;
    } else if (c == '\n' || c == '\r' || c == '\0') {
      if (c == '\r' && s[1] == '\n') s++;
      if (c != '\0') s++;
      break;
    } else {
      g_string_append_c(cur, c);
      s++;
    }
  }
  g_ptr_array_add(fields, g_string_free(cur, FALSE));
  *p = s;
  *unclosed = quoted;
  return fields;
}

csv_table *csv_new(const char *const *columns, guint n)
{
  csv_table *t = g_new0(csv_table, 1);
  t->header = g_ptr_array_new_with_free_func(g_free);
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  t->lines = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint c = 0; c < n; c++) g_ptr_array_add(t->header, g_strdup(columns[c]));
  return t;
}

/* Line ends in [from, to) as the parser reads them: \n, \r\n (one) or a lone \r. */
static guint line_ends(const char *from, const char *to)
{
  guint n = 0;
  for (const char *s = from; s < to; s++) n += *s == '\n' || (*s == '\r' && s[1] != '\n');
  return n;
}

/* The parser stops at a NUL byte: refuse one rather than silently drop the rest of the file. */
static gboolean check_no_nul(const char *text, gsize len, const char *path, GError **err)
{
  const char *nul = memchr(text, '\0', len);
  if (!nul) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s line %u: contains a NUL byte", path, 1 + line_ends(text, nul));
  return FALSE;
}

/* A column name given twice would be read from its first place only: refused. Unnamed columns
 * (trailing commas) are never read, only passed through, and may repeat. */
static gboolean check_unique_columns(const GPtrArray *header, const char *path, GError **err)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < header->len; i++) {
    const char *name = header->pdata[i];
    if (*name && !g_hash_table_add(seen, (gpointer)name)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE,
                  "%s: column '%s' appears more than once in the header (each column may appear once)", path, name);
      return FALSE;
    }
  }
  return TRUE;
}

/* parse_record, or NULL (error naming the record's line) when the file ends inside a quoted cell. */
static GPtrArray *parse_closed_record(const char **p, const char *path, guint line, GError **err)
{
  gboolean unclosed;
  GPtrArray *rec = parse_record(p, &unclosed);
  if (!unclosed) return rec;
  g_ptr_array_unref(rec);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE,
              "%s line %u: a quoted cell is not closed (allowed: a '\"' that opens a cell, and one that ends it)", path,
              line);
  return NULL;
}

/* The records after the header (p: the first one's start in text), blank lines skipped, each row
 * with the line it starts on. */
static gboolean read_rows(csv_table *t, const char *text, const char *p, const char *path, GError **err)
{
  guint line = 1 + line_ends(text, p);
  while (*p) {
    const char *start = p;
    guint row_line = line;
    GPtrArray *row = parse_closed_record(&p, path, row_line, err);
    if (!row) return FALSE;
    line += line_ends(start, p);
    if (row->len == 1 && !*(char *)row->pdata[0]) { /* blank line */
      g_ptr_array_unref(row);
      continue;
    }
    if (row->len != t->header->len) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s line %u: %u fields, the header has %u", path, row_line,
                  row->len, t->header->len);
      g_ptr_array_unref(row);
      return FALSE;
    }
    csv_append_row(t, row, row_line);
  }
  return TRUE;
}

#define UTF8_BOM "\xEF\xBB\xBF"

csv_table *csv_read(const char *path, GError **err)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!lsim_input_read(path, LSIM_INPUT_TABLE, &text, &len, err)) return NULL;
  if (!check_no_nul(text, len, path, err)) return NULL;
  const char *p = g_str_has_prefix(text, UTF8_BOM) ? text + strlen(UTF8_BOM) : text; /* spreadsheets write one */
  if (!*p) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: empty file (needs a header line)", path);
    return NULL;
  }
  GPtrArray *header = parse_closed_record(&p, path, 1, err);
  if (!header) return NULL;
  g_autofree char *first = g_strstrip(g_strdup(header->pdata[0])); /* a copy: the name stays as written */
  if (header->len == 1 && !*first) { /* else: "line 2: N fields, the header has 1" */
    g_ptr_array_unref(header);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE,
                "%s line 1: the header line is blank (allowed: the column names, comma-separated, on the first line)",
                path);
    return NULL;
  }
  csv_table *t = csv_new(NULL, 0);
  g_ptr_array_unref(t->header);
  t->header = header;
  if (!check_unique_columns(t->header, path, err) || !read_rows(t, text, p, path, err)) {
    csv_free(t);
    return NULL;
  }
  return t;
}

/* A cell as the reader takes it back: quoted when it holds a separator, a quote or a line end, or when
 * it is the file's first and begins with a byte-order mark, which the reader would skip. */
static void write_field(GString *out, const char *s, gboolean first)
{
  if (!strpbrk(s, ",\"\n\r") && !(first && g_str_has_prefix(s, UTF8_BOM))) {
    g_string_append(out, s);
    return;
  }
  g_string_append_c(out, '"');
  for (; *s; s++) {
    if (*s == '"') g_string_append_c(out, '"');
    g_string_append_c(out, *s);
  }
  g_string_append_c(out, '"');
}

static void write_record(GString *out, GPtrArray *fields, gboolean header)
{
  for (guint i = 0; i < fields->len; i++) {
    if (i) g_string_append_c(out, ',');
    write_field(out, fields->pdata[i], header && i == 0);
  }
  g_string_append_c(out, '\n');
}

void csv_format(const csv_table *t, GString *out)
{
  write_record(out, t->header, TRUE);
  for (guint r = 0; r < t->rows->len; r++) write_record(out, t->rows->pdata[r], FALSE);
}

gboolean csv_write(const csv_table *t, const char *path, GError **err)
{
  g_autoptr(GString) out = g_string_new(NULL);
  csv_format(t, out);
  lsim_outfile f;
  if (!lsim_outfile_open(&f, path, err)) return FALSE;
  fwrite(out->str, 1, out->len, f.f);
  return lsim_outfile_commit(&f, err);
}

void csv_free(csv_table *t)
{
  if (!t) return;
  g_ptr_array_unref(t->header);
  g_ptr_array_unref(t->rows);
  g_array_unref(t->lines);
  g_free(t);
}

int csv_column(const csv_table *t, const char *name)
{
  for (guint i = 0; i < t->header->len; i++)
    if (!strcmp(t->header->pdata[i], name)) return (int)i;
  return -1;
}

const char *csv_cell(const csv_table *t, guint r, int c)
{
  if (c < 0) return "";
  return ((GPtrArray *)t->rows->pdata[r])->pdata[c];
}

int csv_add_column(csv_table *t, const char *name)
{
  int c = csv_column(t, name);
  if (c >= 0) return c;
  g_ptr_array_add(t->header, g_strdup(name));
  for (guint r = 0; r < t->rows->len; r++) g_ptr_array_add(t->rows->pdata[r], g_strdup(""));
  return (int)t->header->len - 1;
}

void csv_set(csv_table *t, guint r, int c, const char *value)
{
  GPtrArray *row = t->rows->pdata[r];
  g_free(row->pdata[c]);
  row->pdata[c] = g_strdup(value);
}

guint csv_append_row(csv_table *t, GPtrArray *row, guint line)
{
  g_assert(row->len == t->header->len);
  g_ptr_array_add(t->rows, row);
  g_array_append_val(t->lines, line);
  return t->rows->len - 1;
}

guint csv_row_line(const csv_table *t, guint r) { return g_array_index(t->lines, guint, r); }

guint csv_append_row_from(csv_table *dst, const csv_table *src, guint r)
{
  GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
  for (guint c = 0; c < dst->header->len; c++)
    g_ptr_array_add(row, g_strdup(csv_cell(src, r, csv_column(src, dst->header->pdata[c]))));
  return csv_append_row(dst, row, csv_row_line(src, r));
}
