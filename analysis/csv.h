/* csv -- reading and writing the comma-separated tables of predict,
 * validate and calibrate (RFC 4180: quoted fields, doubled quotes; a
 * leading UTF-8 byte-order mark is skipped, a NUL byte is an error, a
 * blank line is skipped but a blank first line is an error (the header is
 * the first line), a column name given twice is an error). Each row
 * keeps the file line it starts on, for the messages that name it.
 *
 * Owns: csv_table. May not touch: what the columns mean.
 */
#ifndef CSV_H
#define CSV_H

#include <glib.h>

typedef struct csv_table {
  GPtrArray *header; /* char* */
  GPtrArray *rows;   /* GPtrArray* of char*, each as long as header; add with csv_append_row */
  GArray *lines;     /* guint per row: the file line the row starts on (1 = the header), 0 if not read */
} csv_table;

csv_table *csv_read(const char *path, GError **err);
/* An empty table with these n column names (copied). */
csv_table *csv_new(const char *const *columns, guint n);
/* Write through lsim_outfile (a regular file atomically: temp file + rename). */
gboolean csv_write(const csv_table *t, const char *path, GError **err);
/* Append the table as CSV text to out. */
void csv_format(const csv_table *t, GString *out);
void csv_free(csv_table *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(csv_table, csv_free)

/* Append row (a GPtrArray of header->len char*, taken) that starts on file line `line` (0: none);
 * returns its index. */
guint csv_append_row(csv_table *t, GPtrArray *row, guint line);
/* The file line row r starts on (blank lines and quoted line breaks counted), 0 if not read from a file. */
guint csv_row_line(const csv_table *t, guint r);
/* Column index of `name`, or -1. */
int csv_column(const csv_table *t, const char *name);
/* Cell of row r, column c ("" when c < 0). */
const char *csv_cell(const csv_table *t, guint r, int c);
/* Append a column filled with "" and return its index. */
int csv_add_column(csv_table *t, const char *name);
void csv_set(csv_table *t, guint r, int c, const char *value);
/* Append a copy of src's row r to dst, column by column name ("" where src lacks one), with its
 * file line; returns its index. */
guint csv_append_row_from(csv_table *dst, const csv_table *src, guint r);

#endif
