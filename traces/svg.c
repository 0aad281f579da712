/* svg -- see svg.h. Geometry in pixels: a time t of the drawn span [t0, t1] is at
 * x = plot_x + (t - t0) / (t1 - t0) * plot_w, plot_x and plot_w whole pixels, so that pixel column k of
 * the plot is [plot_x + k, plot_x + k + 1). The Gantt chart's plot_x comes from its widest row label
 * (text_w); the memory plot's is fixed. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_outfile.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define WIDTH 1200
#define MARGIN 10        /* left of every text, right of the widest */
#define RIGHT_W 30       /* right of the Gantt plot: room for half a tick label */
#define FONT_PX 11       /* text{font-size} */
#define TITLE_PX 15      /* .title{font-size}, bold */
#define LINE_PX 16       /* baseline to baseline in the header */
#define LABEL_PITCH 13   /* baseline to baseline of two row labels: FONT_PX and a gap */
#define LABEL_GAP 6      /* row label to the plot */
#define LABEL_MAX_W 360  /* a row label wider than this has its list of ranks cut */
#define MEM_PLOT_X 190
#define MEM_PLOT_W 980
#define DEFAULT_MAX_GPU_ROWS 64

typedef struct geom {
  int plot_x, plot_w;
  double t0_s, t1_s; /* the span drawn: the step, or the window */
} geom;

static double x_at(const geom *g, double t_s)
{
  double span = g->t1_s - g->t0_s;
  return g->plot_x + (span > 0 ? (t_s - g->t0_s) / span : 0) * g->plot_w;
}

static double t_at(const geom *g, double x) { return g->t0_s + (x - g->plot_x) / g->plot_w * (g->t1_s - g->t0_s); }

/* Width of s in pixels at font_px, never less than it renders: per character the advance of DejaVu Sans
 * (what sans-serif resolves to with fontconfig's defaults; Arial, Helvetica and Liberation Sans are
 * narrower) rounded up to a few classes, bold 10 % wider. */
static double text_w(const char *s, double font_px, gboolean bold)
{
  double em = 0;
  for (const char *p = s; *p; p = g_utf8_next_char(p)) {
    gunichar c = g_utf8_get_char(p);
    if (c == ' ' || c == '.' || c == ',' || c == ':' || c == ';' || c == '\'' || c == '|') em += 0.34;
    else if (c == '-' || c == '(' || c == ')' || c == '[' || c == ']' || c == '/') em += 0.42;
    else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%') em += 1.0;
    else if (c < 128 && (g_ascii_isdigit(c) || g_ascii_islower(c))) em += 0.64;
    else if (c < 128 && g_ascii_isupper(c)) em += 0.80;
    else em += 1.0;
  }
  return em * font_px * (bold ? 1.1 : 1.0);
}

static void xml_text(FILE *f, const char *s)
{
  g_autofree char *e = g_markup_escape_text(s ? s : "", -1);
  fputs(e, f);
}

static void text_line(FILE *f, const char *cls, double x, double y, const char *s)
{
  if (!f) return;
  if (cls) fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, x, y);
  else fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x, y);
  xml_text(f, s);
  fputs("</text>\n", f);
}

/* s as lines of text at x from baseline y, LINE_PX apart, each at most max_w wide, broken at spaces (a
 * word wider than max_w keeps a line of its own); f NULL: only measured. Returns the baseline of the
 * line after. */
static double text_lines(FILE *f, const char *cls, double x, double y, const char *s, double font_px,
                         gboolean bold, double max_w)
{
  g_auto(GStrv) words = g_strsplit(s ? s : "", " ", -1);
  GString *line = g_string_new(NULL);
  for (char **w = words; *w; w++) {
    g_autofree char *longer = line->len ? g_strdup_printf("%s %s", line->str, *w) : g_strdup(*w);
    if (line->len && text_w(longer, font_px, bold) > max_w) {
      text_line(f, cls, x, y, line->str);
      y += LINE_PX;
      g_string_assign(line, *w);
    } else g_string_assign(line, longer);
  }
  if (line->len) {
    text_line(f, cls, x, y, line->str);
    y += LINE_PX;
  }
  g_string_free(line, TRUE);
  return y;
}

static void style(FILE *f)
{
  fprintf(f, "<style>\ntext{font-family:sans-serif;font-size:%dpx;fill:#222}\n.title{font-size:%dpx;font-weight:bold}\n"
             ".grid{stroke:#ddd;stroke-width:1}\n.axis{stroke:#444;stroke-width:1}\n"
             ".pass{fill:#000;fill-opacity:0;stroke:#fff;stroke-width:1}\n.mb{fill:#fff}\n",
          FONT_PX, TITLE_PX);
  for (int c = 0; c < TL_N; c++) fprintf(f, ".%s{fill:%s}\n", tl_cat_name((tl_cat)c), tl_cat_info_of((tl_cat)c)->svg_colour);
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

/* The time axis under [y0, y1]: a grid line at every tick, a label at every `every`-th (every tick's label
 * that fits 8 px from its neighbours, and inside the picture: 1, 2, 5, 10, ... ticks apart). */
static void time_axis(FILE *f, const geom *g, double y0, double y1, const char *caption)
{
  double span = g->t1_s - g->t0_s, dt = tick_step(span);
  int dec = decimals_for(dt);
  long i0 = (long)ceil(g->t0_s / dt - 1e-9), i1 = (long)floor(g->t1_s / dt + 1e-9);
  if (!(span > 0)) i0 = i1 = 0;
  double widest = 0;
  for (long i = i0; i <= i1; i++) {
    g_autofree char *s = g_strdup_printf("%.*f", dec, i * dt);
    widest = MAX(widest, text_w(s, FONT_PX, FALSE));
  }
  double pitch_px = span > 0 ? dt / span * g->plot_w : g->plot_w;
  long every = 1; /* then 2, 5, 10, 20, 50, ... */
  for (int k = 0; pitch_px * every < widest + 8 && k < 30; k++)
    every = (k % 3 == 0 ? 2 : k % 3 == 1 ? 5 : 10) * (long)pow(10, k / 3);
  for (long i = i0; i <= i1; i++) {
    double x = x_at(g, i * dt);
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y0, x, y1);
    g_autofree char *s = g_strdup_printf("%.*f", dec, i * dt);
    double half = text_w(s, FONT_PX, FALSE) / 2;
    if (i % every == 0 && x - half >= 0 && x + half <= WIDTH)
      fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, y1 + 14, s);
  }
  fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", g->plot_x, y1,
          g->plot_x + g->plot_w, y1);
  fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">", g->plot_x + g->plot_w / 2, y1 + 30);
  xml_text(f, caption);
  fputs("</text>\n", f);
}

/* ---- Gantt rows ------------------------------------------------------- */

/* Drawing one row. Adjacent intervals of one category make a run; a run at least a pixel wide is one
 * rectangle at its exact place, with a tooltip. Consecutive runs narrower than a pixel make a zone,
 * drawn per pixel column as stacked fractions: each category gets the share of the row's height that it
 * has of the zone's time in that column (largest remainders, in steps of h / levels), stacked top to
 * bottom in the legend's order. Neighbouring columns with the same stack make one block. */
typedef struct row_w {
  FILE *f;
  const geom *g;
  double y, h;
  int levels;
  double *cat_s;         /* [TL_N] seconds drawn per category, summed over the rows (the legend) */
  double (*col_s)[TL_N]; /* [plot_w] the zone's seconds per pixel column and category; zero elsewhere */
  /* the run of adjacent intervals of one category being collected */
  gboolean run_open;
  tl_cat run_cat;
  double run_t0, run_t1;
  int run_mb0, run_mb1, run_n;
  /* the zone of sub-pixel runs */
  gboolean zone_open;
  double zone_t0, zone_t1;
  /* the block of the zone's columns with one stack */
  gboolean block_open;
  double block_x0, block_x1, block_s[TL_N];
  int block_q[TL_N];
  /* the pass being collected: a forward, or a backward with its recompute, of one micro-batch and chunk, the
   * communication inside it included (docs/timelines.md, "Micro-batch labels") */
  const tl_chunks *chunks;
  int stage, stages;
  gboolean pass_open;
  int pass_kind, pass_mb, pass_chunk, pass_layer0, pass_layer1;
  double pass_t0, pass_t1;
  GString *passes; /* the row's pass boxes and labels, drawn over its bars */
} row_w;

/* q[c] of `levels` steps for the shares s[c] / sum(s), largest remainders: they add up to levels. */
static void stack_steps(const double s[TL_N], int levels, int q[TL_N])
{
  double total = 0, rem[TL_N];
  for (int c = 0; c < TL_N; c++) total += s[c];
  int left = levels;
  for (int c = 0; c < TL_N; c++) {
    double exact = total > 0 ? s[c] / total * levels : 0;
    q[c] = (int)floor(exact);
    rem[c] = exact - q[c];
    left -= q[c];
  }
  for (; left > 0; left--) {
    int best = 0;
    for (int c = 1; c < TL_N; c++)
      if (rem[c] > rem[best]) best = c;
    q[best]++;
    rem[best] = -1;
  }
}

static void block_flush(row_w *w)
{
  if (!w->block_open) return;
  w->block_open = FALSE;
  double total = 0, x0 = w->block_x0, x1 = w->block_x1;
  for (int c = 0; c < TL_N; c++) total += w->block_s[c];
  fprintf(w->f, "<g class=\"mix\"><title>mixed %.6f-%.6f s:", t_at(w->g, x0), t_at(w->g, x1));
  const char *sep = " ";
  for (int c = 0; c < TL_N; c++)
    if (w->block_s[c] > 0) {
      fprintf(w->f, "%s%s %.1f%%", sep, tl_cat_name((tl_cat)c), 100 * w->block_s[c] / total);
      sep = ", ";
    }
  fputs("</title>", w->f);
  double y = w->y;
  for (int c = 0; c < TL_N; c++) {
    if (!w->block_q[c]) continue;
    double h = w->h * w->block_q[c] / w->levels;
    fprintf(w->f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>", tl_cat_name((tl_cat)c),
            x0, y, x1 - x0, h);
    y += h;
  }
  fputs("</g>\n", w->f);
}

static void zone_flush(row_w *w)
{
  if (!w->zone_open) return;
  w->zone_open = FALSE;
  const geom *g = w->g;
  double x0 = x_at(g, w->zone_t0) - g->plot_x, x1 = x_at(g, w->zone_t1) - g->plot_x;
  int k0 = CLAMP((int)floor(x0), 0, g->plot_w - 1), k1 = CLAMP((int)ceil(x1) - 1, k0, g->plot_w - 1);
  for (int k = k0; k <= k1; k++) {
    double *s = w->col_s[k], total = 0;
    for (int c = 0; c < TL_N; c++) total += s[c];
    double cx0 = g->plot_x + MAX(k, x0), cx1 = g->plot_x + MIN(k + 1, x1);
    if (total > 0 && cx1 > cx0) {
      int q[TL_N];
      stack_steps(s, w->levels, q);
      if (!w->block_open || memcmp(q, w->block_q, sizeof q) || fabs(cx0 - w->block_x1) > 1e-9) {
        block_flush(w);
        w->block_open = TRUE;
        w->block_x0 = cx0;
        memcpy(w->block_q, q, sizeof q);
        memset(w->block_s, 0, sizeof w->block_s);
      }
      w->block_x1 = cx1;
      for (int c = 0; c < TL_N; c++) w->block_s[c] += s[c];
    }
    memset(s, 0, sizeof(double) * TL_N);
  }
  block_flush(w);
}

/* A sub-pixel run into the zone: its seconds into the columns it covers. */
static void zone_add(row_w *w, tl_cat cat, double t0, double t1)
{
  const geom *g = w->g;
  if (!w->zone_open) {
    w->zone_open = TRUE;
    w->zone_t0 = t0;
  }
  w->zone_t1 = t1;
  double s_per_px = (g->t1_s - g->t0_s) / g->plot_w;
  int k0 = CLAMP((int)floor(x_at(g, t0) - g->plot_x), 0, g->plot_w - 1);
  int k1 = CLAMP((int)floor(x_at(g, t1) - g->plot_x), k0, g->plot_w - 1);
  for (int k = k0; k <= k1; k++) {
    double a = MAX(t0, g->t0_s + k * s_per_px), b = k == g->plot_w - 1 ? t1 : MIN(t1, g->t0_s + (k + 1) * s_per_px);
    if (b > a) w->col_s[k][cat] += b - a;
  }
}

static void run_flush(row_w *w)
{
  if (!w->run_open) return;
  w->run_open = FALSE;
  double x0 = x_at(w->g, w->run_t0), x1 = x_at(w->g, w->run_t1);
  if (x1 - x0 < 1.0) {
    zone_add(w, w->run_cat, w->run_t0, w->run_t1);
    return;
  }
  zone_flush(w);
  fprintf(w->f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%s",
          tl_cat_name(w->run_cat), x0, w->y, x1 - x0, w->h, tl_cat_name(w->run_cat));
  if (w->run_mb0 >= 0 && w->run_mb0 == w->run_mb1) fprintf(w->f, " mb %d", w->run_mb0);
  else if (w->run_mb0 >= 0) fprintf(w->f, " mb %d-%d", w->run_mb0, w->run_mb1);
  fprintf(w->f, ": %.6f-%.6f s (%.3f ms, %d events)</title></rect>\n", w->run_t0, w->run_t1,
          (w->run_t1 - w->run_t0) * 1e3, w->run_n);
}

/* A pass's box at least PASS_MIN_PX wide gets an outline (the white edges part it from the pass beside it) with a
 * tooltip; its label, the micro-batch and (a stage with more than one chunk) the chunk, "3 c1", or the micro-batch
 * alone, where it fits inside with a pixel either side and the row is a line of text high. */
#define PASS_MIN_PX 4.0
static void pass_close(row_w *w)
{
  if (!w->pass_open) return;
  w->pass_open = FALSE;
  double x0 = x_at(w->g, w->pass_t0), x1 = x_at(w->g, w->pass_t1);
  if (x1 - x0 < PASS_MIN_PX || w->pass_mb < 0) return;
  GString *s = w->passes;
  const char *what = w->pass_kind ? "backward" : "forward";
  g_string_append_printf(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"pass\" data-mb=\"%d\" "
                            "data-chunk=\"%d\"", x0, w->y, x1 - x0, w->h, w->pass_mb, w->pass_chunk);
  if (w->chunks->n > 1 && w->pass_chunk > 0) /* a later chunk a shade darker, as Megatron's figures draw them */
    g_string_append_printf(s, " style=\"fill-opacity:%.2f\"", MIN(0.15 * w->pass_chunk, 0.45));
  g_string_append_printf(s, "><title>%s micro-batch %d", what, w->pass_mb);
  if (w->chunks->n > 1 && w->pass_chunk >= 0)
    g_string_append_printf(s, ", chunk %d (virtual stage %d)", w->pass_chunk, w->pass_chunk * w->stages + w->stage);
  if (w->pass_layer0 >= 0) g_string_append_printf(s, ", layers %d-%d", w->pass_layer0, w->pass_layer1);
  g_string_append_printf(s, ": %.6f-%.6f s</title></rect>\n", w->pass_t0, w->pass_t1);
  if (w->h < FONT_PX + 1) return;
  char full[32], mb_only[16];
  snprintf(mb_only, sizeof mb_only, "%d", w->pass_mb);
  if (w->chunks->n > 1 && w->pass_chunk >= 0) snprintf(full, sizeof full, "%d c%d", w->pass_mb, w->pass_chunk);
  else g_strlcpy(full, mb_only, sizeof full);
  const char *text = text_w(full, FONT_PX, FALSE) + 2 <= x1 - x0 ? full : text_w(mb_only, FONT_PX, FALSE) + 2 <= x1 - x0 ? mb_only : NULL;
  if (text)
    g_string_append_printf(s, "<text class=\"mb\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (x0 + x1) / 2,
                           w->y + w->h / 2 + 0.35 * FONT_PX, text);
}

/* Follow the passes: a forward (or backward and recompute) interval of another micro-batch or chunk, or anything
 * but a communication interval inside the pass, ends the one being collected. */
static void pass_track(row_w *w, const tl_interval *iv, double t0, double t1)
{
  int kind = iv->cat == TL_FORWARD ? 0 : iv->cat == TL_BACKWARD || iv->cat == TL_RECOMPUTE ? 1 : -1;
  const graph_event *e = iv->ev;
  int mb = e ? e->micro_batch : -1, chunk = tl_chunk_of(w->chunks, e), layer = e && e->kind == EV_COMPUTE ? e->layer : -1;
  gboolean adjacent = w->pass_open && t0 - w->pass_t1 < 1e-12;
  if (kind >= 0 && e) {
    if (!(adjacent && kind == w->pass_kind && mb == w->pass_mb &&
          (chunk < 0 || w->pass_chunk < 0 || chunk == w->pass_chunk))) {
      pass_close(w);
      w->pass_open = TRUE;
      w->pass_kind = kind;
      w->pass_mb = mb;
      w->pass_chunk = -1;
      w->pass_layer0 = w->pass_layer1 = -1;
      w->pass_t0 = t0;
    }
    if (chunk >= 0) w->pass_chunk = chunk;
    if (layer >= 0) {
      if (w->pass_layer0 < 0 || layer < w->pass_layer0) w->pass_layer0 = layer;
      w->pass_layer1 = MAX(w->pass_layer1, layer);
    }
    w->pass_t1 = t1;
  } else if (adjacent && (iv->cat == TL_TP_COMM || iv->cat == TL_CP_COMM) && (mb < 0 || mb == w->pass_mb))
    w->pass_t1 = t1; /* the layer's communication: part of the pass */
  else pass_close(w);
}

/* An interval of the row, cut to the span drawn; the walk stops after the span. */
static gboolean row_interval(const tl_interval *iv, gpointer data)
{
  row_w *w = data;
  if (iv->start_s > w->g->t1_s) return FALSE;
  if (iv->end_s < w->g->t0_s) return TRUE;
  double t0 = MAX(iv->start_s, w->g->t0_s), t1 = MIN(iv->end_s, w->g->t1_s);
  pass_track(w, iv, t0, t1);
  int mb = iv->ev ? iv->ev->micro_batch : -1;
  w->cat_s[iv->cat] += t1 - t0;
  if (w->run_open && iv->cat == w->run_cat && t0 - w->run_t1 < 1e-12) {
    w->run_t1 = t1;
    if (mb >= 0) w->run_mb1 = mb;
    if (w->run_mb0 < 0) w->run_mb0 = mb;
    w->run_n += iv->ev != NULL;
    return TRUE;
  }
  run_flush(w);
  w->run_open = TRUE;
  w->run_cat = iv->cat;
  w->run_t0 = t0;
  w->run_t1 = t1;
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

/* ---- the chart: header, labels, rows ---------------------------------- */

/* A category is in the legend when the rows show at least this much of it; shorter is rounding (the
 * Paje writer drops states under a nanosecond too). */
#define LEGEND_MIN_S 1e-9

/* The legend items of the categories in `show` from x0 along baseline y, wrapped at the right margin
 * (f NULL: only measured). Returns the lines it takes. */
static int legend(FILE *f, double x0, double y, const gboolean show[TL_N])
{
  double x = x0;
  int lines = 1;
  if (f) fputs("<g class=\"legend\">\n", f);
  for (int c = 0; c < TL_N; c++) {
    if (!show[c]) continue;
    double text_px = text_w(tl_cat_info_of((tl_cat)c)->legend, FONT_PX, FALSE);
    if (x > x0 && x + 16 + text_px > WIDTH - MARGIN) {
      x = x0;
      y += LINE_PX;
      lines++;
    }
    if (f)
      fprintf(f, "<g class=\"legend-item\" data-cat=\"%s\"><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" "
                 "height=\"12\" stroke=\"#999\" stroke-width=\"0.5\"/><text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n",
              tl_cat_name((tl_cat)c), tl_cat_name((tl_cat)c), x, y - 10, x + 16, y, tl_cat_info_of((tl_cat)c)->legend);
    x += 16 + text_px + 14;
  }
  if (f) fputs("</g>\n", f);
  return lines;
}

/* The header's lines: title, layout, what the rows are, the window. */
static void header_texts(const timeline *tl, const trace_svg_info *info, const svg_rows *rows, const geom *g,
                         char *out[4])
{
  const char *model = tl->g->meta.model[0] ? tl->g->meta.model : NULL;
  const char *layout = tl->g->meta.layout[0] ? tl->g->meta.layout : NULL;
  g_autofree char *mfu = info->mfu >= 0 ? g_strdup_printf(", MFU %.1f%%", info->mfu * 100) : g_strdup("");
  out[0] = g_strdup_printf("%s on %d GPUs: step %.3f s%s", model ? model : "task graph", tl->g->world_size,
                           tl->step_time_s, mfu);
  out[1] = info->platform ? g_strdup_printf("%s; platform %s", layout ? layout : "", info->platform)
                          : g_strdup(layout ? layout : "");
  if (rows->per_stage)
    out[2] = g_strdup_printf("more than %d distinct timelines: one row per pipeline stage (%d rows), the stage's first "
                             "rank (data-parallel replica 0, tensor rank 0)", rows->max_rows, rows->n);
  else if (rows->n < tl->g->world_size)
    out[2] = g_strdup_printf("%d rows for %d GPUs: the GPUs of a stage with the same intervals share a row", rows->n,
                             tl->g->world_size);
  else out[2] = g_strdup("one row per GPU (no two GPUs have the same intervals)");
  /* what the numbers in the boxes are (pass_close) */
  tl_chunks chunks;
  tl_chunks_init(&chunks, tl, rows->row[0].rank);
  char *rows_line = out[2];
  out[2] = g_strdup_printf("%s; in a box: its micro-batch%s", rows_line,
                           chunks.n > 1 ? " and model chunk (3 c1: micro-batch 3 in chunk 1, virtual stage 1 * pp + stage; a "
                                         "later chunk a shade darker)" : "");
  g_free(rows_line);
  tl_chunks_clear(&chunks);
  out[3] = info->window ? g_strdup_printf("window: %.6f to %.6f s of the %.3f s step", g->t0_s, g->t1_s,
                                          tl->step_time_s)
                        : g_strdup("");
}

/* A row's label: "stage 1: ranks 8-15", "stage 0: rank 3 (n0 g3)", per stage "stage 1: rank 8 of ranks
 * 8-15". Where it would be wider than LABEL_MAX_W its list of ranks is cut ("ranks 8,10,12,… (31
 * ranks)") and *full is the whole label (for a tooltip), else NULL. */
static char *row_label_text(const timeline *tl, const svg_rows *rows, const svg_row *row, char **full)
{
  g_autofree char *list = ranks_text(row->ranks);
  int gpn = tl_gpus_per_node(tl);
  *full = NULL;
  if (!rows->per_stage && row->ranks->len == 1)
    return g_strdup_printf("stage %d: rank %d (n%d g%d)", row->stage, row->rank, row->rank / gpn, row->rank % gpn);
  g_autofree char *head = rows->per_stage ? g_strdup_printf("stage %d: rank %d of ranks ", row->stage, row->rank)
                                          : g_strdup_printf("stage %d: ranks ", row->stage);
  char *label = g_strconcat(head, list, NULL);
  if (text_w(label, FONT_PX, FALSE) <= LABEL_MAX_W) return label;
  *full = label;
  g_auto(GStrv) items = g_strsplit(list, ",", -1);
  for (guint keep = g_strv_length(items) - 1;; keep--) {
    char *last = items[keep];
    items[keep] = NULL; /* join the first `keep` items */
    g_autofree char *some = g_strjoinv(",", items);
    items[keep] = last;
    char *cut = g_strdup_printf("%s%s%s… (%u ranks)", head, some, keep ? "," : "", row->ranks->len);
    if (keep == 0 || text_w(cut, FONT_PX, FALSE) <= LABEL_MAX_W) return cut;
    g_free(cut);
  }
}

/* Which rows get a label: first the first row of each stage, then the others, each only LABEL_PITCH or
 * more from every label placed before (rows row_h apart). */
static void labels_shown(const svg_rows *rows, double row_h, gboolean *show)
{
  for (int i = 0; i < rows->n; i++) show[i] = FALSE;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < rows->n; i++) {
      gboolean starts_stage = i == 0 || rows->row[i].stage != rows->row[i - 1].stage;
      if (starts_stage != (pass == 0)) continue;
      gboolean room = TRUE;
      for (int k = 0; k < rows->n && room; k++)
        if (show[k] && abs(k - i) * row_h < LABEL_PITCH) room = FALSE;
      show[i] = room;
    }
}

static gboolean bad_window(GError **err, const char *spec, double step_s)
{
  if (step_s >= 0)
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "--svg-window: invalid value '%s' (allowed: START:END in seconds with 0 <= START < END and START "
                "before the end of the step, %.6f s)", spec, step_s);
  else
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "--svg-window: invalid value '%s' (allowed: START:END in seconds with 0 <= START < END, e.g. 0.5:1.25)",
                spec);
  return FALSE;
}

/* A number of seconds as the whole of s: digits first (no sign, blank, "inf" or "nan"), finite. */
static gboolean parse_seconds(const char *s, double *out)
{
  char *end;
  if (!g_ascii_isdigit(*s) && !(*s == '.' && g_ascii_isdigit(s[1]))) return FALSE;
  *out = g_ascii_strtod(s, &end);
  return end != s && !*end && isfinite(*out);
}

gboolean trace_svg_window_parse(const char *spec, double step_s, double *start_s, double *end_s, GError **err)
{
  g_auto(GStrv) parts = g_strsplit(spec, ":", -1);
  double a, b;
  if (g_strv_length(parts) != 2 || !parse_seconds(parts[0], &a) || !parse_seconds(parts[1], &b) || !(b > a))
    return bad_window(err, spec, -1);
  if (step_s >= 0 && !(a < step_s)) return bad_window(err, spec, step_s);
  *start_s = a;
  *end_s = b;
  return TRUE;
}

void trace_svg_timeline_put(const timeline *tl, const trace_svg_info *info, FILE *f)
{
  geom g = {.t0_s = 0, .t1_s = tl->step_time_s};
  if (info->window && trace_svg_window_parse(info->window, tl->step_time_s, &g.t0_s, &g.t1_s, NULL))
    g.t1_s = MIN(g.t1_s, tl->step_time_s); /* the caller checked it (trace_svg_window_parse) */
  svg_rows rows;
  rows_make(tl, info->max_gpu_rows, &rows);

  /* the plot starts right of the widest row label shown */
  double row_h = rows.n <= 16 ? 24 : rows.n <= 40 ? 16 : MAX(3.0, 640.0 / rows.n);
  char **labels = g_new0(char *, rows.n), **full = g_new0(char *, rows.n);
  gboolean *show = g_new(gboolean, rows.n);
  labels_shown(&rows, row_h, show);
  double label_w = 0;
  for (int i = 0; i < rows.n; i++) {
    labels[i] = row_label_text(tl, &rows, &rows.row[i], &full[i]);
    if (show[i]) label_w = MAX(label_w, text_w(labels[i], FONT_PX, FALSE));
  }
  g.plot_x = MAX(60, (int)ceil(MARGIN + label_w + LABEL_GAP));
  g.plot_w = WIDTH - RIGHT_W - g.plot_x;

  /* the header, measured, then the legend under it: room for every category, drawn for those shown */
  char *head[4];
  header_texts(tl, info, &rows, &g, head);
  double text_max = WIDTH - 2 * MARGIN, y = 22;
  y = text_lines(NULL, "title", MARGIN, y, head[0], TITLE_PX, TRUE, text_max) + 2;
  for (int i = 1; i < 4; i++) y = text_lines(NULL, NULL, MARGIN, y, head[i], FONT_PX, FALSE, text_max);
  double legend_y = y + 6;
  gboolean all[TL_N];
  for (int c = 0; c < TL_N; c++) all[c] = TRUE;
  double top = legend_y + (legend(NULL, g.plot_x, legend_y, all) - 1) * LINE_PX + 20;
  double bottom = top + rows.n * row_h;
  int height = (int)ceil(bottom + 44);

  {
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" data-plot-x=\"%d\" data-plot-w=\"%d\" data-t0-s=\"%.9f\" "
               "data-t1-s=\"%.9f\">\n",
            WIDTH, height, WIDTH, height, g.plot_x, g.plot_w, g.t0_s, g.t1_s);
    style(f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
    y = text_lines(f, "title", MARGIN, 22, head[0], TITLE_PX, TRUE, text_max) + 2;
    for (int i = 1; i < 4; i++) y = text_lines(f, NULL, MARGIN, y, head[i], FONT_PX, FALSE, text_max);
    time_axis(f, &g, top - 4, bottom + 2, "time in the step (s)");
    double cat_s[TL_N] = {0};
    double (*col_s)[TL_N] = g_malloc0(sizeof(double[TL_N]) * (size_t)g.plot_w);
    for (int i = 0; i < rows.n; i++) {
      const svg_row *row = &rows.row[i];
      double ry = top + i * row_h;
      g_autofree char *list = ranks_text(row->ranks);
      fprintf(f, "<g class=\"row\" data-rank=\"%d\" data-stage=\"%d\" data-ranks=\"%s\">\n", row->rank, row->stage,
              list);
      if (show[i]) {
        fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", g.plot_x - LABEL_GAP,
                ry + row_h / 2 + 0.35 * FONT_PX);
        xml_text(f, labels[i]);
        if (full[i]) {
          fputs("<title>", f);
          xml_text(f, full[i]);
          fputs("</title>", f);
        }
        fputs("</text>\n", f);
      }
      double h = row_h > 4 ? row_h - 2 : row_h;
      tl_chunks chunks;
      tl_chunks_init(&chunks, tl, row->rank);
      row_w w = {.f = f, .g = &g, .y = ry + 1, .h = h, .levels = MAX(1, (int)floor(h)), .cat_s = cat_s,
                 .col_s = col_s, .chunks = &chunks, .stage = row->stage, .stages = tl_stages(tl),
                 .passes = g_string_new(NULL)};
      tl_foreach_tiled(tl, row->rank, row_interval, &w);
      run_flush(&w);
      zone_flush(&w);
      pass_close(&w);
      fputs(w.passes->str, f);
      g_string_free(w.passes, TRUE);
      tl_chunks_clear(&chunks);
      fputs("</g>\n", f);
    }
    gboolean present[TL_N];
    for (int c = 0; c < TL_N; c++) present[c] = cat_s[c] >= LEGEND_MIN_S;
    legend(f, g.plot_x, legend_y, present);
    fputs("</svg>\n", f);
    g_free(col_s);
  }
  for (int i = 0; i < 4; i++) g_free(head[i]);
  for (int i = 0; i < rows.n; i++) {
    g_free(labels[i]);
    g_free(full[i]);
  }
  g_free(labels);
  g_free(full);
  g_free(show);
  rows_clear(&rows);
}

gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err)
{
  double t0, t1;
  if (info->window && !trace_svg_window_parse(info->window, tl->step_time_s, &t0, &t1, err)) return FALSE;
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_svg_timeline_put(tl, info, tf.f);
  return lsim_outfile_commit(&tf, err);
}

/* ---- memory over time ------------------------------------------------- */

static double x_mem(double t_s, double step_s) { return MEM_PLOT_X + (step_s > 0 ? t_s / step_s : 0) * MEM_PLOT_W; }

typedef struct mem_w {
  const timeline *tl;
  const tl_mem_model *mm;
  int rank;
  double act, cur, peak, peak_t;
  double *col; /* [MEM_PLOT_W] max per pixel column, NAN where nothing changed */
} mem_w;

static int col_of(const mem_w *w, double t)
{
  int c = (int)((x_mem(t, w->tl->step_time_s) - MEM_PLOT_X));
  return CLAMP(c, 0, MEM_PLOT_W - 1);
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
  for (int c = 0; c < MEM_PLOT_W; c++) w->col[c] = NAN;
  w->act = 0;
  w->cur = w->peak = tl_mem_bytes(w->tl, w->rank, w->mm, 0);
  w->peak_t = 0;
  tl_foreach(w->tl, w->rank, mem_interval, w);
  double last = tl_mem_bytes(w->tl, w->rank, w->mm, 0);
  for (int c = 0; c < MEM_PLOT_W; c++) {
    if (isnan(w->col[c])) w->col[c] = last;
    else last = w->col[c]; /* approximation: the column's max carries to the next column */
  }
}

static const char *const STAGE_COLOURS[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
                                            "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

void trace_svg_memory_put(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, FILE *f)
{
  svg_rows rows;
  rows_per_stage(tl, &rows); /* always one curve per stage */
  int n = rows.n;
  mem_w w = {.tl = tl, .mm = mm};
  w.col = g_new(double, MEM_PLOT_W);
  double **cols = g_new(double *, n), *peak = g_new(double, n), *peak_t = g_new(double, n), ymax = capacity_bytes;
  for (int i = 0; i < n; i++) {
    w.rank = rows.row[i].rank;
    mem_walk_rank(&w);
    cols[i] = g_memdup2(w.col, sizeof(double) * MEM_PLOT_W);
    peak[i] = w.peak;
    peak_t[i] = w.peak_t;
    ymax = MAX(ymax, w.peak);
  }
  int top = 46 + 14 * ((n + 4) / 5), plot_h = 360, height = top + plot_h + 50;
  double y_gib = MAX(10, ceil(ymax * 1.05 / GIB / 10) * 10); /* at least one 10 GiB tick */
  {
#define Y_OF(b) (top + plot_h - (b) / GIB / y_gib * plot_h)
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            WIDTH, height, WIDTH, height);
    style(f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, height);
    int best = 0;
    for (int i = 1; i < n; i++)
      if (peak[i] > peak[best]) best = i;
    const char *model = tl->g->meta.model[0] ? tl->g->meta.model : NULL;
    fputs("<text class=\"title\" x=\"10\" y=\"22\">", f);
    xml_text(f, model ? model : "task graph");
    fprintf(f, ": GPU memory over the step, one curve per pipeline stage (replica 0, tensor rank 0); "
               "peak %.2f GiB on stage %d</text>\n",
            peak[best] / GIB, rows.row[best].stage);
    geom axis = {.plot_x = MEM_PLOT_X, .plot_w = MEM_PLOT_W, .t0_s = 0, .t1_s = tl->step_time_s};
    time_axis(f, &axis, top, top + plot_h, "time in the step (s)");
    double dy = tick_step(y_gib);
    for (int i = 0; i * dy <= y_gib + 1e-9; i++) {
      double y = Y_OF(i * dy * GIB);
      fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", MEM_PLOT_X, y,
              MEM_PLOT_X + MEM_PLOT_W, y);
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g GiB</text>\n", MEM_PLOT_X - 6, y + 4, i * dy);
    }
    if (capacity_bytes > 0)
      fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c00\" stroke-dasharray=\"6,4\"/>"
                 "<text x=\"%d\" y=\"%.1f\" fill=\"#c00\">capacity %.0f GiB</text>\n",
              MEM_PLOT_X, Y_OF(capacity_bytes), MEM_PLOT_X + MEM_PLOT_W, Y_OF(capacity_bytes), MEM_PLOT_X + 4,
              Y_OF(capacity_bytes) - 4, capacity_bytes / GIB);
    for (int i = 0; i < n; i++) {
      const char *colour = STAGE_COLOURS[i % G_N_ELEMENTS(STAGE_COLOURS)];
      fprintf(f, "<g class=\"stage\" data-stage=\"%d\" data-peak-gib=\"%.6f\" data-peak-s=\"%.9f\">\n<polyline "
                 "fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
              rows.row[i].stage, peak[i] / GIB, peak_t[i], colour);
      for (int c = 0; c < MEM_PLOT_W; c++) fprintf(f, "%d,%.1f ", MEM_PLOT_X + c, Y_OF(cols[i][c]));
      fprintf(f, "\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>stage %d peak %.2f GiB at %.6f "
                 "s</title></circle>\n",
              x_mem(peak_t[i], tl->step_time_s), Y_OF(peak[i]), colour, rows.row[i].stage, peak[i] / GIB,
              peak_t[i]);
      int lx = MEM_PLOT_X + 170 * (i % 5), ly = 38 + 14 * (i / 5); /* legend under the title, 5 per line */
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">stage %d "
                 "(peak %.1f GiB)</text>\n</g>\n",
              lx, ly - 4, colour, lx + 16, ly, rows.row[i].stage, peak[i] / GIB);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">peak %.2f GiB</text>\n",
            x_mem(peak_t[best], tl->step_time_s) + 6, Y_OF(peak[best]) - 6, peak[best] / GIB);
    fputs("</svg>\n", f);
#undef Y_OF
  }
  for (int i = 0; i < n; i++) g_free(cols[i]);
  g_free(cols);
  g_free(peak);
  g_free(peak_t);
  g_free(w.col);
  rows_clear(&rows);
}

gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_svg_memory_put(tl, mm, capacity_bytes, tf.f);
  return lsim_outfile_commit(&tf, err);
}
