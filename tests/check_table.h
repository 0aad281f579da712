/* check_table -- a one-row table (analysis/csv.h) of the given columns and cells, as a file's second line: the
 * fixture of the tests that feed predict, calibrate or merge one row (test_stack_set, test_sweep,
 * test_layout_fields). */
#ifndef CHECK_TABLE_H
#define CHECK_TABLE_H

#include <glib.h>

#include "analysis/csv.h"

/* A table of the n columns cols and one row of the n cells (copied); caller frees with csv_free. */
static inline csv_table *check_one_row(const char *const *cols, guint n, const char *const *cells)
{
  csv_table *t = csv_new(cols, n);
  GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
  for (guint c = 0; c < n; c++) g_ptr_array_add(row, g_strdup(cells[c]));
  csv_append_row(t, row, 2);
  return t;
}

#endif
