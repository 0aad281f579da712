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
  double *cat_s; /* [TL_N] seconds drawn per category, summed over the rows (the legend) */
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
  w->cat_s[iv->cat] += iv->end_s - iv->start_s;
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

/* ---- which rows: ranks with the same intervals share one ------------- */

/* A row of the Gantt chart: the intervals of `rank`, which stand for those of every rank in `ranks`. */
typedef struct svg_row {
  int rank, stage;
  GArray *ranks; /* int, ascending; with per-stage rows, every rank of the stage */
  guint64 hash;  /* of rank's intervals (walk_compare) */
} svg_row;

typedef struct svg_rows {
  int n;
  svg_row *row;
  gboolean per_stage; /* more distinct timelines than rows allowed: one row per stage, its first rank */
  int max_rows;
} svg_rows;

static guint64 fnv_bytes(guint64 h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* What the chart draws of an interval, and so what two identical rows share: category, start, end and
 * micro-batch (not the peer: the same row stands for ranks with different neighbours). */
static gboolean same_drawn(const tl_interval *a, const tl_interval *b)
{
  int mb_a = a->ev ? a->ev->micro_batch : -1, mb_b = b->ev ? b->ev->micro_batch : -1;
  return a->cat == b->cat && a->start_s == b->start_s && a->end_s == b->end_s && mb_a == mb_b;
}

static guint64 hash_interval(guint64 h, const tl_interval *iv)
{
  int32_t mb = iv->ev ? iv->ev->micro_batch : -1, cat = iv->cat;
  h = fnv_bytes(h, &cat, sizeof cat);
  h = fnv_bytes(h, &iv->start_s, sizeof iv->start_s);
  h = fnv_bytes(h, &iv->end_s, sizeof iv->end_s);
  return fnv_bytes(h, &mb, sizeof mb);
}

/* Walk rank r's tiled intervals, hashing them (same_drawn's fields, times bit for bit) into *hash, and, if
 * `other` >= 0, beside other's: whether the two are the same sequence, compared interval by interval. */
static gboolean walk_compare(const timeline *tl, int r, int other, guint64 *hash)
{
  tl_cursor c, o;
  tl_cursor_init(&c, tl, r, TRUE);
  if (other >= 0) tl_cursor_init(&o, tl, other, TRUE);
  gboolean same = other >= 0;
  guint64 h = 1469598103934665603ull;
  tl_interval iv, io;
  for (;;) {
    gboolean more = tl_cursor_next(&c, &iv);
    if (same) same = tl_cursor_next(&o, &io) == more && (!more || same_drawn(&iv, &io));
    if (!more) break;
    h = hash_interval(h, &iv);
  }
  tl_cursor_clear(&c);
  if (other >= 0) tl_cursor_clear(&o);
  *hash = h;
  return same;
}

static void rows_clear(svg_rows *rows)
{
  for (int i = 0; i < rows->n; i++) g_array_unref(rows->row[i].ranks);
  g_free(rows->row);
  *rows = (svg_rows){0};
}

static svg_row *row_add(GArray *rows, int rank, int stage, guint64 hash)
{
  svg_row r = {.rank = rank, .stage = stage, .ranks = g_array_new(FALSE, FALSE, sizeof(int)), .hash = hash};
  g_array_append_val(r.ranks, rank);
  g_array_append_val(rows, r);
  return &g_array_index(rows, svg_row, rows->len - 1);
}

/* One row per pipeline stage: its first rank (replica 0, tensor rank 0), standing for the whole stage. */
static void rows_per_stage(const timeline *tl, svg_rows *out)
{
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(svg_row));
  for (int r = 0; r < tl->g->world_size; r++) {
    int s = tl_stage_of(tl, r);
    if (s >= (int)rows->len) row_add(rows, r, s, 0);
    else g_array_append_val(g_array_index(rows, svg_row, s).ranks, r);
  }
  out->n = (int)rows->len;
  out->row = (svg_row *)g_array_free(rows, FALSE);
}

/* The chart's rows: ranks of one stage whose intervals are the same (walk_compare: checked, not taken
 * from the symmetry of the layout) share a row, in order of their first rank. More than max_rows
 * distinct timelines: one row per stage. */
static void rows_make(const timeline *tl, int max_rows, svg_rows *out)
{
  *out = (svg_rows){.max_rows = max_rows > 0 ? max_rows : DEFAULT_MAX_GPU_ROWS};
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(svg_row));
  for (int r = 0; r < tl->g->world_size && (int)rows->len <= out->max_rows; r++) {
    int stage = tl_stage_of(tl, r);
    /* the common case, one walk beside the stage's first row; others only where the hash agrees */
    int first = -1;
    for (guint i = 0; i < rows->len && first < 0; i++)
      if (g_array_index(rows, svg_row, i).stage == stage) first = (int)i;
    guint64 h;
    svg_row *home = NULL;
    if (walk_compare(tl, r, first >= 0 ? g_array_index(rows, svg_row, first).rank : -1, &h))
      home = &g_array_index(rows, svg_row, first);
    for (guint i = first + 1; first >= 0 && i < rows->len && !home; i++) {
      svg_row *c = &g_array_index(rows, svg_row, i);
      guint64 ignored;
      if (c->stage == stage && c->hash == h && walk_compare(tl, r, c->rank, &ignored)) home = c;
    }
    if (home) g_array_append_val(home->ranks, r);
    else row_add(rows, r, stage, h);
  }
  out->n = (int)rows->len;
  out->row = (svg_row *)g_array_free(rows, FALSE);
  if (out->n > out->max_rows) {
    rows_clear(out);
    out->max_rows = max_rows > 0 ? max_rows : DEFAULT_MAX_GPU_ROWS;
    out->per_stage = TRUE;
    rows_per_stage(tl, out);
  }
}

/* "8-15" or "0,2,4-7": ascending ranks as ranges. */
static char *ranks_text(const GArray *ranks)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < ranks->len;) {
    int lo = g_array_index(ranks, int, i);
    guint j = i;
    while (j + 1 < ranks->len && g_array_index(ranks, int, j + 1) == g_array_index(ranks, int, j) + 1) j++;
    int hi = g_array_index(ranks, int, j);
    g_string_append_printf(s, "%s%d", i ? "," : "", lo);
    if (hi > lo) g_string_append_printf(s, "-%d", hi);
    i = j + 1;
  }
  return g_string_free(s, FALSE);
}

/* A category is in the legend when the rows show at least this much of it; shorter is rounding (the
 * Paje writer drops states under a nanosecond too). */
#define LEGEND_MIN_S 1e-9

/* The categories the rows show, and only those. */
static void legend(FILE *f, double y, const double cat_s[TL_N])
{
  double x = PLOT_X;
  fputs("<g class=\"legend\">\n", f);
  for (int c = 0; c < TL_N; c++) {
    if (cat_s[c] < LEGEND_MIN_S) continue;
    fprintf(f, "<g class=\"legend-item\" data-cat=\"%s\"><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" "
               "height=\"12\" stroke=\"#999\" stroke-width=\"0.5\"/>",
            tl_cat_name((tl_cat)c), tl_cat_name((tl_cat)c), x, y - 10);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", x + 16, y, LEGEND[c]);
    x += 22 + 6.5 * (double)strlen(LEGEND[c]) + 14;
  }
  fputs("</g>\n", f);
}

static void title(FILE *f, const timeline *tl, const trace_svg_info *info, const svg_rows *rows)
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
  if (rows->per_stage)
    fprintf(f, "more than %d distinct timelines: one row per pipeline stage (%d rows), the stage's first rank "
               "(data-parallel replica 0, tensor rank 0)", rows->max_rows, rows->n);
  else if (rows->n < tl->g->world_size)
    fprintf(f, "%d rows for %d GPUs: the GPUs of a stage with the same intervals share a row", rows->n,
            tl->g->world_size);
  else fputs("one row per GPU (no two GPUs have the same intervals)", f);
  fputs("</text>\n", f);
}

/* "stage 1: ranks 8-15", "stage 0: rank 3 (n0 g3)", per stage "stage 1: rank 8 of ranks 8-15". */
static char *row_label_text(const timeline *tl, const svg_rows *rows, const svg_row *row)
{
  g_autofree char *list = ranks_text(row->ranks);
  int gpn = tl_gpus_per_node(tl);
  if (rows->per_stage) return g_strdup_printf("stage %d: rank %d of ranks %s", row->stage, row->rank, list);
  if (row->ranks->len == 1)
    return g_strdup_printf("stage %d: rank %d (n%d g%d)", row->stage, row->rank, row->rank / gpn, row->rank % gpn);
  return g_strdup_printf("stage %d: ranks %s", row->stage, list);
}

static void row_label(FILE *f, const timeline *tl, const svg_rows *rows, const svg_row *row, double y)
{
  g_autofree char *text = row_label_text(tl, rows, row);
  fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PLOT_X - 6, y);
  xml_text(f, text);
  fputs("</text>\n", f);
}

gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err)
{
  svg_rows rows;
  rows_make(tl, info->max_gpu_rows, &rows);
  double row_h = rows.n <= 40 ? 16 : MAX(3.0, 640.0 / rows.n);
  double bottom = TOP + rows.n * row_h;
  int height = (int)ceil(bottom + 44);
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) {
    rows_clear(&rows);
    return FALSE;
  }
  FILE *f = tf.f;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
             "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
          WIDTH, height, WIDTH, height);
  style(f);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
  title(f, tl, info, &rows);
  double cat_s[TL_N] = {0};
  time_axis(f, tl->step_time_s, TOP - 4, bottom + 2);
  for (int i = 0; i < rows.n; i++) {
    const svg_row *row = &rows.row[i];
    double y = TOP + i * row_h;
    g_autofree char *list = ranks_text(row->ranks);
    fprintf(f, "<g class=\"row\" data-rank=\"%d\" data-stage=\"%d\" data-ranks=\"%s\">\n", row->rank, row->stage,
            list);
    if (row_h >= 8) row_label(f, tl, &rows, row, y + row_h * 0.75);
    row_w w = {.f = f, .step_s = tl->step_time_s, .y = y + 1, .h = row_h > 4 ? row_h - 2 : row_h, .cat_s = cat_s};
    tl_foreach_tiled(tl, row->rank, row_interval, &w);
    flush_run(&w);
    flush_frag(&w);
    fputs("</g>\n", f);
  }
  legend(f, 78, cat_s);
  fputs("</svg>\n", f);
  rows_clear(&rows);
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

gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err)
{
  svg_rows rows;
  rows_per_stage(tl, &rows); /* always one curve per stage */
  int n = rows.n;
  mem_w w = {.tl = tl, .mm = mm};
  w.col = g_new(double, PLOT_W);
  double **cols = g_new(double *, n), *peak = g_new(double, n), *peak_t = g_new(double, n), ymax = capacity_bytes;
  for (int i = 0; i < n; i++) {
    w.rank = rows.row[i].rank;
    mem_walk_rank(&w);
    cols[i] = g_memdup2(w.col, sizeof(double) * PLOT_W);
    peak[i] = w.peak;
    peak_t[i] = w.peak_t;
    ymax = MAX(ymax, w.peak);
  }
  int top = 46 + 14 * ((n + 4) / 5), plot_h = 360, height = top + plot_h + 50;
  double y_gib = MAX(10, ceil(ymax * 1.05 / GIB / 10) * 10); /* at least one 10 GiB tick */
  lsim_outfile tf;
  gboolean ok = lsim_outfile_open(&tf, path, err);
  if (ok) {
    FILE *f = tf.f;
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
            peak[best] / GIB, rows.row[best].stage);
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
              rows.row[i].stage, peak[i] / GIB, peak_t[i], colour);
      for (int c = 0; c < PLOT_W; c++) fprintf(f, "%d,%.1f ", PLOT_X + c, Y_OF(cols[i][c]));
      fprintf(f, "\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>stage %d peak %.2f GiB at %.6f "
                 "s</title></circle>\n",
              x_of(peak_t[i], tl->step_time_s), Y_OF(peak[i]), colour, rows.row[i].stage, peak[i] / GIB,
              peak_t[i]);
      int lx = PLOT_X + 170 * (i % 5), ly = 38 + 14 * (i / 5); /* legend under the title, 5 per line */
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">stage %d "
                 "(peak %.1f GiB)</text>\n</g>\n",
              lx, ly - 4, colour, lx + 16, ly, rows.row[i].stage, peak[i] / GIB);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">peak %.2f GiB</text>\n",
            x_of(peak_t[best], tl->step_time_s) + 6, Y_OF(peak[best]) - 6, peak[best] / GIB);
    fputs("</svg>\n", f);
#undef Y_OF
    ok = lsim_outfile_commit(&tf, err);
  }
  for (int i = 0; i < n; i++) g_free(cols[i]);
  g_free(cols);
  g_free(peak);
  g_free(peak_t);
  g_free(w.col);
  rows_clear(&rows);
  return ok;
}
