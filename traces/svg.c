/* svg -- see svg.h. Geometry in pixels; x = PLOT_X + t / step * PLOT_W. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/lsim_outfile.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define WIDTH 1200
#define PLOT_X 190
#define PLOT_W 980
#define TOP 98
#define DEFAULT_MAX_GPU_ROWS 64

static const char *const COLOURS[TL_N] = {"#4e79a7", "#59a14f", "#f28e2b", "#e15759",
                                          "#c9c9c9", "#b07aa1", "#edc948", "#f4f4f4"};
static const char *const LEGEND[TL_N] = {"forward", "backward", "recompute", "tp-comm",
                                         "pp-wait (bubble)", "dp-comm", "optimizer", "idle"};

static double x_of(double t_s, double step_s) { return PLOT_X + (step_s > 0 ? t_s / step_s : 0) * PLOT_W; }

static void xml_text(FILE *f, const char *s)
{
  g_autofree char *e = g_markup_escape_text(s ? s : "", -1);
  fputs(e, f);
}

static void style(FILE *f)
{
  fputs("<style>\ntext{font-family:sans-serif;font-size:11px;fill:#222}\n.title{font-size:15px;font-weight:bold}\n"
        ".grid{stroke:#ddd;stroke-width:1}\n.axis{stroke:#444;stroke-width:1}\n",
        f);
  for (int c = 0; c < TL_N; c++) fprintf(f, ".%s{fill:%s}\n", tl_cat_name((tl_cat)c), COLOURS[c]);
  fputs("</style>\n", f);
}

/* 1, 2 or 5 times a power of ten, about span/8; 1 for an empty span (a zero-length step), so the
 * axis loops that count ticks up to span always end. */
static double tick_step(double span)
{
  if (!(span > 0) || !isfinite(span)) return 1;
  double raw = span / 8, mag = pow(10, floor(log10(raw)));
  return raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
}

static int decimals_for(double step) { return step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9); }

static void time_axis(FILE *f, double step_s, double y0, double y1)
{
  double dt = tick_step(step_s);
  int dec = decimals_for(dt);
  for (int i = 0; i * dt <= step_s * (1 + 1e-9); i++) {
    double x = x_of(i * dt, step_s);
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y0, x, y1);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x, y1 + 14, dec, i * dt);
  }
  fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PLOT_X, y1, PLOT_X + PLOT_W, y1);
  fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">time in the step (s)</text>\n", PLOT_X + PLOT_W / 2,
          y1 + 30);
}

/* ---- Gantt rows ------------------------------------------------------- */

typedef struct row_w {
  FILE *f;
  double step_s, y, h;
  /* the run of adjacent intervals of one category being collected */
  gboolean run_open;
  tl_cat run_cat;
  double run_t0, run_t1;
  int run_mb0, run_mb1, run_n;
  /* sub-pixel runs pooled until they cover a pixel */
  gboolean frag_open;
  double frag_t0, frag_t1, frag_s[TL_N];
} row_w;

static void rect(row_w *w, const char *cls, double t0, double t1)
{
  double x0 = x_of(t0, w->step_s), x1 = x_of(t1, w->step_s);
  fprintf(w->f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">", cls, x0, w->y,
          MAX(x1 - x0, 0.0), w->h);
}

static void flush_frag(row_w *w)
{
  if (!w->frag_open) return;
  w->frag_open = FALSE;
  int best = 0;
  for (int c = 1; c < TL_N; c++)
    if (w->frag_s[c] > w->frag_s[best]) best = c;
  g_autofree char *cls = g_strdup_printf("%s mixed", tl_cat_name((tl_cat)best));
  rect(w, cls, w->frag_t0, w->frag_t1);
  fprintf(w->f, "<title>mixed %.6f-%.6f s, mostly %s</title></rect>\n", w->frag_t0, w->frag_t1,
          tl_cat_name((tl_cat)best));
}

static void flush_run(row_w *w)
{
  if (!w->run_open) return;
  w->run_open = FALSE;
  if (x_of(w->run_t1, w->step_s) - x_of(w->run_t0, w->step_s) < 1.0) {
    if (!w->frag_open) {
      w->frag_open = TRUE;
      w->frag_t0 = w->run_t0;
      for (int c = 0; c < TL_N; c++) w->frag_s[c] = 0;
    }
    w->frag_t1 = w->run_t1;
    w->frag_s[w->run_cat] += w->run_t1 - w->run_t0;
    if (x_of(w->frag_t1, w->step_s) - x_of(w->frag_t0, w->step_s) >= 1.0) flush_frag(w);
    return;
  }
  flush_frag(w);
  rect(w, tl_cat_name(w->run_cat), w->run_t0, w->run_t1);
  fprintf(w->f, "<title>%s", tl_cat_name(w->run_cat));
  if (w->run_mb0 >= 0 && w->run_mb0 == w->run_mb1) fprintf(w->f, " mb %d", w->run_mb0);
  else if (w->run_mb0 >= 0) fprintf(w->f, " mb %d-%d", w->run_mb0, w->run_mb1);
  fprintf(w->f, ": %.6f-%.6f s (%.3f ms, %d events)</title></rect>\n", w->run_t0, w->run_t1,
          (w->run_t1 - w->run_t0) * 1e3, w->run_n);
}

static gboolean row_interval(const tl_interval *iv, gpointer data)
{
  row_w *w = data;
  int mb = iv->ev ? iv->ev->micro_batch : -1;
  if (w->run_open && iv->cat == w->run_cat && iv->start_s - w->run_t1 < 1e-12) {
    w->run_t1 = iv->end_s;
    if (mb >= 0) w->run_mb1 = mb;
    if (w->run_mb0 < 0) w->run_mb0 = mb;
    w->run_n += iv->ev != NULL;
    return TRUE;
  }
  flush_run(w);
  w->run_open = TRUE;
  w->run_cat = iv->cat;
  w->run_t0 = iv->start_s;
  w->run_t1 = iv->end_s;
  w->run_mb0 = w->run_mb1 = mb;
  w->run_n = iv->ev != NULL;
  return TRUE;
}

void trace_svg_rows(const timeline *tl, int max_gpu_rows, tl_ranks *rows, gboolean *per_stage)
{
  int world = tl->g->world_size, stages = tl_stages(tl);
  if (max_gpu_rows <= 0) max_gpu_rows = DEFAULT_MAX_GPU_ROWS;
  *per_stage = world > max_gpu_rows;
  rows->n = *per_stage ? stages : world;
  rows->rank = g_new(int, rows->n);
  if (!*per_stage) {
    for (int r = 0; r < world; r++) rows->rank[r] = r;
    return;
  }
  for (int s = 0; s < stages; s++) rows->rank[s] = -1;
  for (int r = 0; r < world; r++) {
    int s = tl_stage_of(tl, r);
    if (rows->rank[s] < 0) rows->rank[s] = r; /* the first rank of a stage: replica 0, tensor rank 0 */
  }
}

static void legend(FILE *f, double y)
{
  double x = PLOT_X;
  for (int c = 0; c < TL_N; c++) {
    fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" stroke=\"#999\" stroke-width=\"0.5\"/>",
            tl_cat_name((tl_cat)c), x, y - 10);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 16, y, LEGEND[c]);
    x += 22 + 6.5 * (double)strlen(LEGEND[c]) + 14;
  }
}

static void title(FILE *f, const timeline *tl, const trace_svg_info *info, gboolean per_stage, int rows)
{
  const char *model = g_hash_table_lookup(tl->g->meta, "model");
  const char *layout = g_hash_table_lookup(tl->g->meta, "layout");
  fprintf(f, "<text class=\"title\" x=\"10\" y=\"22\">");
  xml_text(f, model ? model : "task graph");
  fprintf(f, " on %d GPUs: step %.3f s", tl->g->world_size, tl->step_time_s);
  if (info->mfu >= 0) fprintf(f, ", MFU %.1f%%", info->mfu * 100);
  fputs("</text>\n<text x=\"10\" y=\"40\">", f);
  xml_text(f, layout);
  fputs("</text>\n<text x=\"10\" y=\"56\">", f);
  if (per_stage)
    fprintf(f, "one row per pipeline stage (%d rows): the GPU of data-parallel replica 0, tensor rank 0 of each stage",
            rows);
  else fputs("one row per GPU", f);
  fputs("</text>\n", f);
}

static void row_label(FILE *f, const timeline *tl, int rank, gboolean per_stage, double y)
{
  int gpn = tl_gpus_per_node(tl), stage = tl_stage_of(tl, rank);
  fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PLOT_X - 6, y);
  if (per_stage) fprintf(f, "stage %d (rank %d)", stage, rank);
  else fprintf(f, "rank %d (n%d g%d) stage %d", rank, rank / gpn, rank % gpn, stage);
  fputs("</text>\n", f);
}

void trace_svg_timeline_put(const timeline *tl, const trace_svg_info *info, FILE *f)
{
  tl_ranks rows;
  gboolean per_stage;
  trace_svg_rows(tl, info->max_gpu_rows, &rows, &per_stage);
  double row_h = rows.n <= 40 ? 16 : MAX(3.0, 640.0 / rows.n);
  double bottom = TOP + rows.n * row_h;
  int height = (int)ceil(bottom + 44);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
             "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
          WIDTH, height, WIDTH, height);
  style(f);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
  title(f, tl, info, per_stage, rows.n);
  legend(f, 78);
  time_axis(f, tl->step_time_s, TOP - 4, bottom + 2);
  for (int i = 0; i < rows.n; i++) {
    int rank = rows.rank[i];
    double y = TOP + i * row_h;
    fprintf(f, "<g class=\"row\" data-rank=\"%d\" data-stage=\"%d\">\n", rank, tl_stage_of(tl, rank));
    if (row_h >= 8) row_label(f, tl, rank, per_stage, y + row_h * 0.75);
    row_w w = {.f = f, .step_s = tl->step_time_s, .y = y + 1, .h = row_h > 4 ? row_h - 2 : row_h};
    tl_foreach_tiled(tl, rank, row_interval, &w);
    flush_run(&w);
    flush_frag(&w);
    fputs("</g>\n", f);
  }
  fputs("</svg>\n", f);
  tl_ranks_clear(&rows);
}

gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_svg_timeline_put(tl, info, tf.f);
  return lsim_outfile_commit(&tf, err);
}

/* ---- memory over time ------------------------------------------------- */

typedef struct mem_w {
  const timeline *tl;
  const tl_mem_model *mm;
  int rank;
  double act, cur, peak, peak_t;
  double *col; /* [PLOT_W] max per pixel column, NAN where nothing changed */
} mem_w;

static int col_of(const mem_w *w, double t)
{
  int c = (int)((x_of(t, w->tl->step_time_s) - PLOT_X));
  return CLAMP(c, 0, PLOT_W - 1);
}

static gboolean mem_interval(const tl_interval *iv, gpointer data)
{
  mem_w *w = data;
  double during, after;
  if (!tl_mem_step(iv->ev, &w->act, &during, &after)) return TRUE;
  double top = tl_mem_bytes(w->tl, w->rank, w->mm, during);
  w->cur = tl_mem_bytes(w->tl, w->rank, w->mm, after);
  if (during > 0 && top > w->peak) {
    w->peak = top;
    w->peak_t = iv->start_s;
  }
  for (int c = col_of(w, iv->start_s); c <= col_of(w, iv->end_s); c++)
    w->col[c] = isnan(w->col[c]) ? top : MAX(w->col[c], top);
  int c = col_of(w, iv->end_s);
  w->col[c] = MAX(w->col[c], w->cur);
  return TRUE;
}

/* Walk one rank's memory: per-column maxima in w->col, the exact peak in w->peak / w->peak_t. */
static void mem_walk_rank(mem_w *w)
{
  for (int c = 0; c < PLOT_W; c++) w->col[c] = NAN;
  w->act = 0;
  w->cur = w->peak = tl_mem_bytes(w->tl, w->rank, w->mm, 0);
  w->peak_t = 0;
  tl_foreach(w->tl, w->rank, mem_interval, w);
  double last = tl_mem_bytes(w->tl, w->rank, w->mm, 0);
  for (int c = 0; c < PLOT_W; c++) {
    if (isnan(w->col[c])) w->col[c] = last;
    else last = w->col[c]; /* approximation: the column's max carries to the next column */
  }
}

static const char *const STAGE_COLOURS[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
                                            "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

void trace_svg_memory_put(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, FILE *f)
{
  tl_ranks rows;
  gboolean per_stage;
  trace_svg_rows(tl, 1, &rows, &per_stage); /* always one curve per stage */
  int n = rows.n;
  mem_w w = {.tl = tl, .mm = mm};
  w.col = g_new(double, PLOT_W);
  double **cols = g_new(double *, n), *peak = g_new(double, n), *peak_t = g_new(double, n), ymax = capacity_bytes;
  for (int i = 0; i < n; i++) {
    w.rank = rows.rank[i];
    mem_walk_rank(&w);
    cols[i] = g_memdup2(w.col, sizeof(double) * PLOT_W);
    peak[i] = w.peak;
    peak_t[i] = w.peak_t;
    ymax = MAX(ymax, w.peak);
  }
  int top = 46 + 14 * ((n + 4) / 5), plot_h = 360, height = top + plot_h + 50;
  double y_gib = MAX(10, ceil(ymax * 1.05 / GIB / 10) * 10); /* at least one 10 GiB tick */
  { /* the picture, Y_OF mapping bytes to the plot's y */
#define Y_OF(b) (top + plot_h - (b) / GIB / y_gib * plot_h)
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            WIDTH, height, WIDTH, height);
    style(f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
    int best = 0;
    for (int i = 1; i < n; i++)
      if (peak[i] > peak[best]) best = i;
    const char *model = g_hash_table_lookup(tl->g->meta, "model");
    fputs("<text class=\"title\" x=\"10\" y=\"22\">", f);
    xml_text(f, model ? model : "task graph");
    fprintf(f, ": GPU memory over the step, one curve per pipeline stage (replica 0, tensor rank 0); "
               "peak %.2f GiB on stage %d</text>\n",
            peak[best] / GIB, tl_stage_of(tl, rows.rank[best]));
    time_axis(f, tl->step_time_s, top, top + plot_h);
    double dy = tick_step(y_gib);
    for (int i = 0; i * dy <= y_gib + 1e-9; i++) {
      double y = Y_OF(i * dy * GIB);
      fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PLOT_X, y, PLOT_X + PLOT_W, y);
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g GiB</text>\n", PLOT_X - 6, y + 4, i * dy);
    }
    if (capacity_bytes > 0)
      fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c00\" stroke-dasharray=\"6,4\"/>"
                 "<text x=\"%d\" y=\"%.1f\" fill=\"#c00\">capacity %.0f GiB</text>\n",
              PLOT_X, Y_OF(capacity_bytes), PLOT_X + PLOT_W, Y_OF(capacity_bytes), PLOT_X + 4,
              Y_OF(capacity_bytes) - 4, capacity_bytes / GIB);
    for (int i = 0; i < n; i++) {
      const char *colour = STAGE_COLOURS[i % G_N_ELEMENTS(STAGE_COLOURS)];
      fprintf(f, "<g class=\"stage\" data-stage=\"%d\" data-peak-gib=\"%.6f\" data-peak-s=\"%.9f\">\n<polyline "
                 "fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
              tl_stage_of(tl, rows.rank[i]), peak[i] / GIB, peak_t[i], colour);
      for (int c = 0; c < PLOT_W; c++) fprintf(f, "%d,%.1f ", PLOT_X + c, Y_OF(cols[i][c]));
      fprintf(f, "\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>stage %d peak %.2f GiB at %.6f "
                 "s</title></circle>\n",
              x_of(peak_t[i], tl->step_time_s), Y_OF(peak[i]), colour, tl_stage_of(tl, rows.rank[i]), peak[i] / GIB,
              peak_t[i]);
      int lx = PLOT_X + 170 * (i % 5), ly = 38 + 14 * (i / 5); /* legend under the title, 5 per line */
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">stage %d "
                 "(peak %.1f GiB)</text>\n</g>\n",
              lx, ly - 4, colour, lx + 16, ly, tl_stage_of(tl, rows.rank[i]), peak[i] / GIB);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">peak %.2f GiB</text>\n",
            x_of(peak_t[best], tl->step_time_s) + 6, Y_OF(peak[best]) - 6, peak[best] / GIB);
    fputs("</svg>\n", f);
#undef Y_OF
  }
  for (int i = 0; i < n; i++) g_free(cols[i]);
  g_free(cols);
  g_free(peak);
  g_free(peak_t);
  g_free(w.col);
  tl_ranks_clear(&rows);
}

gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_svg_memory_put(tl, mm, capacity_bytes, tf.f);
  return lsim_outfile_commit(&tf, err);
}
