/* fuzz_merge -- libFuzzer harness of merge (analysis/sweep_report.c sweep_merge, with the checks of
 * analysis/sweep.c under it: the table, each shard's columns and the sweep's hash, each row's status,
 * times and model).
 *
 * Owns: what a merged table holds whatever the shards held: every row's status ok, oom or invalid, every
 * step time empty or finite and not negative (above 0 where status is ok), one model; and the error
 * contract. The input is split at its first form feed into two shards. Seeds: tests/fuzz/corpus/merge/.
 */
#include <math.h>
#include <string.h>

#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *ff = memchr(data, '\f', size);
  size_t first = ff ? (size_t)(ff - data) : size;
  const char *paths[2];
  paths[0] = fuzz_file("s1.csv", data, first);
  paths[1] = ff ? fuzz_file("s2.csv", ff + 1, size - first - 1) : NULL;
  GError *err = NULL;
  csv_table *t = sweep_merge(paths, ff ? 2 : 1, &err);
  fuzz_check_result(t != NULL, err);
  g_clear_error(&err);
  if (!t) return 0;
  int cs = csv_column(t, "status"), ct = csv_column(t, "step_time_s"), cm = csv_column(t, "model");
  for (guint r = 0; r < t->rows->len; r++) {
    const char *st = csv_cell(t, r, cs), *v = csv_cell(t, r, ct);
    fuzz_require(!strcmp(st, "ok") || !strcmp(st, "oom") || !strcmp(st, "invalid"), "status '%s'", st);
    double x = *v ? g_ascii_strtod(v, NULL) : 0;
    fuzz_require(!*v || (isfinite(x) && x >= 0), "step_time_s '%s'", v);
    fuzz_require(strcmp(st, "ok") || x > 0, "status ok with step_time_s '%s'", v);
    fuzz_require(!strcmp(csv_cell(t, r, cm), csv_cell(t, 0, cm)), "two models");
  }
  csv_free(t);
  return 0;
}
