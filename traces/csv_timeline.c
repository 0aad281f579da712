/* csv_timeline -- see csv_timeline.h. Times with 9 decimals (ns). */
#include "csv_timeline.h"

#include <stdio.h>

#include "common/lsim_outfile.h"

typedef struct csv_w {
  FILE *f;
  const graph *g;
  int rank;
} csv_w;

static gboolean write_row(const tl_interval *iv, gpointer data)
{
  csv_w *w = data;
  const graph_event *e = iv->ev;
  fprintf(w->f, "%d,%s,%s,%s,%.9f,%.9f,%d,%d\n", w->rank, tl_stream_name(tl_stream_of(iv->cat)), tl_cat_name(iv->cat),
          tl_event_op_name(w->g, e), iv->start_s, iv->end_s, e ? e->micro_batch : -1, e ? e->layer : -1);
  return TRUE;
}

void trace_csv_put(const timeline *tl, const tl_ranks *sel, FILE *f)
{
  fputs(TRACE_CSV_HEADER "\n", f);
  csv_w w = {.f = f, .g = tl->g};
  for (int i = 0; i < sel->n; i++) {
    w.rank = sel->rank[i];
    tl_foreach_tiled(tl, w.rank, write_row, &w);
  }
}

gboolean trace_csv_write(const timeline *tl, const tl_ranks *sel, const char *path, GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_csv_put(tl, sel, tf.f);
  return lsim_outfile_commit(&tf, err);
}
