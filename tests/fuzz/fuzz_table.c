/* fuzz_table -- libFuzzer harness of the CSV reader (analysis/csv.c csv_read) and of the path from a
 * row to a simulation request that predict, validate and calibrate take (analysis/predict.c
 * predict_row_request: the layout's cells, the row's model_file, profile and what-if cells), up to
 * the checks made before a row is simulated (sim_request_prepare, the memory guard
 * sim_request_fits).
 *
 * Owns: the properties of a read table: every row as long as the header; csv_format writing what
 * reads back as the same table (predict -o writes it so); a request only for a valid layout. A
 * refused table or row has one error. Seeds: tests/fuzz/corpus/table/.
 */
#include <string.h>

#include "analysis/predict.h"
#include "fuzz_common.h"

/* Rows past this many are not turned into requests: a row costs the same whatever its place. */
#define FUZZ_MAX_ROWS 16

static void require_same_table(const csv_table *a, const csv_table *b)
{
  fuzz_require(a->header->len == b->header->len && a->rows->len == b->rows->len, "%u x %u, reread %u x %u",
               a->header->len, a->rows->len, b->header->len, b->rows->len);
  for (guint c = 0; c < a->header->len; c++)
    fuzz_require(!strcmp(a->header->pdata[c], b->header->pdata[c]), "column %u differs", c);
  for (guint r = 0; r < a->rows->len; r++)
    for (guint c = 0; c < a->header->len; c++)
      fuzz_require(!strcmp(csv_cell(a, r, (int)c), csv_cell(b, r, (int)c)), "row %u column %u differs", r, c);
}

static void rows_to_requests(const csv_table *t, const predict_cfg *cfg)
{
  for (guint r = 0; r < t->rows->len && r < FUZZ_MAX_ROWS; r++) {
    sim_request rq;
    GError *err = NULL;
    gboolean ok = predict_row_request(t, r, cfg, &rq, &err);
    fuzz_check_result(ok, err);
    g_clear_error(&err);
    if (!ok) continue;
    fuzz_require(rq.l.dp >= 1 && rq.l.dp * rq.l.tp * rq.l.pp == rq.l.gpus && rq.l.grad_accum >= 1,
                 "row %u: an invalid layout was accepted", r);
    ok = sim_request_prepare(&rq, &err);
    fuzz_check_result(ok, err);
    g_clear_error(&err);
    if (!ok) continue;
    ok = sim_request_fits(&rq, TRUE, &err);
    fuzz_check_result(ok, err);
    g_clear_error(&err);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static predict_cfg cfg;
  static gboolean cfg_made;
  if (!cfg_made) {
    fuzz_require(profile_load_named("a100-sxm4-80gb", &cfg.prof, NULL), "the shipped profile");
    cfg.capacity_gib = cfg.prof.memory_gib;
    cfg.gen = gen_default_options();
    cfg_made = TRUE;
  }
  const char *path = fuzz_file("table.csv", data, size);
  GError *err = NULL;
  csv_table *t = csv_read(path, &err);
  fuzz_check_result(t != NULL, err);
  g_clear_error(&err);
  if (!t) return 0;
  for (guint r = 0; r < t->rows->len; r++)
    fuzz_require(((GPtrArray *)t->rows->pdata[r])->len == t->header->len, "row %u: not as long as the header", r);
  g_autoptr(GString) text = g_string_new(NULL);
  csv_format(t, text);
  csv_table *back = csv_read(fuzz_file("written.csv", (const uint8_t *)text->str, text->len), &err);
  fuzz_check_result(back != NULL, err);
  fuzz_require(back, "what csv_format wrote does not read: %s", err->message);
  require_same_table(t, back);
  csv_free(back);
  gboolean columns = predict_check_columns(t, path, &err);
  fuzz_check_result(columns, err);
  g_clear_error(&err);
  if (columns) rows_to_requests(t, &cfg);
  csv_free(t);
  return 0;
}
