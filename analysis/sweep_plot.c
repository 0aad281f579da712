/* sweep_plot -- see sweep_plot.h. */
#include "sweep_plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_outfile.h"
#include "sweep_report.h"

#define N_LINES 5
static const char *const AXES[] = {"ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory", "leaf_nodes",
                                   "oversubscription", "gpus"};
static const char *const AXIS_LABEL[] = {"InfiniBand bandwidth per NIC (Gbit/s)", "NVLink bandwidth per GPU (Gbit/s)",
                                         "InfiniBand NICs per node", "memory per GPU (GiB)", "nodes per leaf group",
                                         "oversubscription above the leaves", "GPUs"};
static const char *const COLOURS[N_LINES] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1"};

static const char *cell(const csv_table *t, guint r, const char *col) { return csv_cell(t, r, csv_column(t, col)); }
static double num(const csv_table *t, guint r, const char *col) { return g_ascii_strtod(cell(t, r, col), NULL); }

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct panel {
  double x0, y0, w, h;   /* pixels */
  double lo, hi;         /* value range */
  gboolean log_x;
  double xlo, xhi;
} panel;

static double px(const panel *p, double x)
{
  double f = p->log_x ? log(x / p->xlo) / log(p->xhi / p->xlo) : (x - p->xlo) / (p->xhi - p->xlo);
  return p->x0 + (p->xhi > p->xlo ? f : 0.5) * p->w;
}

static double py(const panel *p, double v) { return p->y0 + p->h - (p->hi > p->lo ? (v - p->lo) / (p->hi - p->lo) : 0.5) * p->h; }

/* A round step for about n ticks over span: 1, 2 or 5 times a power of ten (so the labels read 40, 42, 44,
 * not 41.37, 42.81). */
static double nice_step(double span, int n)
{
  if (!(span > 0)) return 1;
  double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* Widens [lo, hi] to whole multiples of its nice step. */
static void nice_range(double *lo, double *hi)
{
  double st = nice_step(*hi - *lo, 5);
  *lo = floor(*lo / st + 1e-9) * st;
  *hi = ceil(*hi / st - 1e-9) * st;
}

static void draw_axes(FILE *f, const panel *p, const double *xs, int nx, const char *xlabel, const char *ylabel)
{
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", p->x0, p->y0,
          p->w, p->h);
  double last = -1e9; /* the x of the last tick label: a label closer than 30 px to it is left out */
  for (int i = 0; i < nx; i++) {
    double x = px(p, xs[i]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, p->y0, x, p->y0 + p->h);
    if (x - last < 30) continue;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, p->y0 + p->h + 14, xs[i]);
    last = x;
  }
  double st = nice_step(p->hi - p->lo, 5);
  for (double v = ceil(p->lo / st - 1e-9) * st; v <= p->hi + 1e-9 * st; v += st) {
    double y = py(p, v);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", p->x0, y, p->x0 + p->w, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", p->x0 - 4, y + 4, fabs(v) < 1e-9 * st ? 0 : v);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", p->x0 + p->w / 2, p->y0 + p->h + 32, xlabel);
  fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", p->x0 - 42,
          p->y0 + p->h / 2, ylabel);
}

static void xml(FILE *f, const char *s)
{
  g_autofree char *e = g_markup_escape_text(s, -1);
  fputs(e, f);
}

gboolean sweep_plot_put(const csv_table *t, FILE *f, GError **err)
{
  int axis = -1;
  for (int a = 0; a < (int)G_N_ELEMENTS(AXES); a++) {
    gboolean varies = FALSE;
    for (guint r = 1; r < t->rows->len && !varies; r++) varies = strcmp(cell(t, r, AXES[a]), cell(t, 0, AXES[a])) != 0;
    if (!varies) continue;
    if (axis >= 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--plot: both %s and %s vary in this sweep (allowed: one swept "
                  "platform axis: a list for one of --ib-gbps, --nvlink-gbps, --nics-per-node, --gpu-memory, --gpus)",
                  AXES[axis], AXES[a]);
      return FALSE;
    }
    axis = a;
  }
  gboolean profiles_vary = FALSE, fabric_varies = FALSE;
  for (guint r = 1; r < t->rows->len; r++) {
    profiles_vary |= strcmp(cell(t, r, "profile"), cell(t, 0, "profile")) || strcmp(cell(t, r, "stack"), cell(t, 0, "stack"));
    fabric_varies |= strcmp(cell(t, r, "fabric"), cell(t, 0, "fabric")) != 0; /* a name: no x axis */
  }
  if (axis < 0 || profiles_vary || fabric_varies) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--plot: %s (allowed: a list for one of --ib-gbps, "
                "--nvlink-gbps, --nics-per-node, --gpu-memory, --gpus, and one profile, stack and fabric)",
                profiles_vary ? "the profile or the stack varies" : fabric_varies ? "the fabric varies" : "no platform axis is swept");
    return FALSE;
  }
  const char *col = AXES[axis];
  /* the points, and the five layouts with the best rank at any point */
  g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GHashTable) best_rank = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < t->rows->len; r++) {
    double x = num(t, r, col);
    gboolean have = FALSE;
    for (guint i = 0; i < xs->len; i++) have |= g_array_index(xs, double, i) == x;
    if (!have) g_array_append_val(xs, x);
    if (strcmp(cell(t, r, "status"), "ok")) continue;
    char *lab = sweep_layout_label_except(t, r, col);
    int rk = atoi(cell(t, r, "rank"));
    gpointer old;
    if (!g_hash_table_lookup_extended(best_rank, lab, NULL, &old)) {
      g_ptr_array_add(labels, g_strdup(lab));
      g_hash_table_insert(best_rank, lab, GINT_TO_POINTER(rk));
    } else {
      if (rk < GPOINTER_TO_INT(old)) g_hash_table_insert(best_rank, g_strdup(lab), GINT_TO_POINTER(rk));
      g_free(lab);
    }
  }
  qsort(xs->data, xs->len, sizeof(double), cmp_double);
  /* the labels by best rank, then first appearance (stable) */
  int n_lines = 0;
  const char *line[N_LINES];
  for (int want = 1; n_lines < N_LINES && want <= (int)labels->len; want++)
    for (guint i = 0; i < labels->len && n_lines < N_LINES; i++)
      if (GPOINTER_TO_INT(g_hash_table_lookup(best_rank, labels->pdata[i])) == want) {
        gboolean dup = FALSE;
        for (int k = 0; k < n_lines; k++) dup |= !strcmp(line[k], labels->pdata[i]);
        if (!dup) line[n_lines++] = labels->pdata[i];
      }
  int nx = (int)xs->len;
  g_autofree double *mfu = g_new0(double, (gsize)(N_LINES + 1) * nx), *step = g_new0(double, (gsize)N_LINES * nx);
  g_autofree double *band = g_new0(double, (gsize)N_LINES * nx); /* the P90 band of each point, a fraction */
  g_autofree gboolean *tight = g_new0(gboolean, (gsize)N_LINES * nx); /* near OOM (flags near-oom) */
  double mfu_hi = 0, step_hi = 0, mfu_lo = G_MAXDOUBLE, step_lo = G_MAXDOUBLE;
  for (guint r = 0; r < t->rows->len; r++) {
    if (strcmp(cell(t, r, "status"), "ok")) continue;
    int xi = 0;
    while (g_array_index(xs, double, xi) != num(t, r, col)) xi++;
    double m = 100 * num(t, r, "mfu"), s = num(t, r, "step_time_s");
    if (!strcmp(cell(t, r, "rank"), "1")) {
      mfu[N_LINES * nx + xi] = m;
      mfu_hi = MAX(mfu_hi, m);
      mfu_lo = MIN(mfu_lo, m);
    }
    g_autofree char *lab = sweep_layout_label_except(t, r, col);
    for (int k = 0; k < n_lines; k++)
      if (!strcmp(lab, line[k])) {
        double b = MIN(0.9, num(t, r, "band_pct") / 100);
        mfu[k * nx + xi] = m;
        step[k * nx + xi] = s;
        band[k * nx + xi] = b;
        tight[k * nx + xi] = strstr(cell(t, r, "flags"), "near-oom") != NULL;
        /* the axes hold the bands: step time s(1 +- b), MFU m / (1 -+ b) (MFU is inverse to the step time) */
        mfu_hi = MAX(mfu_hi, m / (1 - b));
        step_hi = MAX(step_hi, s * (1 + b));
        mfu_lo = MIN(mfu_lo, m / (1 + b));
        step_lo = MIN(step_lo, s * (1 - b));
      }
  }
  double xlo = g_array_index(xs, double, 0), xhi = g_array_index(xs, double, nx - 1);
  gboolean log_x = xlo > 0 && xhi / xlo >= 8;
  /* the value axes span the data (with a margin), so that differences of a few percent show */
  double mpad = mfu_hi > mfu_lo ? 0.05 * (mfu_hi - mfu_lo) : 0.5, spad = step_hi > step_lo ? 0.05 * (step_hi - step_lo) : 0.5;
  panel pm = {70, 70, 400, 300, mfu_hi > 0 ? MAX(0, mfu_lo - mpad) : 0, mfu_hi > 0 ? mfu_hi + mpad : 1, log_x, xlo, xhi};
  panel ps = {570, 70, 400, 300, step_hi > 0 ? MAX(0, step_lo - spad) : 0, step_hi > 0 ? step_hi + spad : 1, log_x, xlo,
              xhi};
  nice_range(&pm.lo, &pm.hi);
  nice_range(&ps.lo, &ps.hi);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" "
        "height=\"600\" viewBox=\"0 0 1000 600\">\n<style>text{font-family:sans-serif;font-size:11px;fill:#222}"
        ".title{font-size:14px;font-weight:bold}</style>\n<rect width=\"1000\" height=\"600\" fill=\"white\"/>\n", f);
  /* the platform values but the swept one */
  g_autoptr(GString) pl = g_string_new(NULL);
  static const char *const FIXED[] = {"profile", "stack", "gpus", "ib_gbps", "nvlink_gbps", "nics_per_node", "gpu_memory",
                                      "fabric", "leaf_nodes", "oversubscription"};
  for (size_t i = 0; i < G_N_ELEMENTS(FIXED); i++)
    if (strcmp(FIXED[i], col))
      g_string_append_printf(pl, "%s%s %s", pl->len ? ", " : "", FIXED[i], cell(t, 0, FIXED[i]));
  fputs("<text class=\"title\" x=\"20\" y=\"24\">", f);
  g_autofree char *title = g_strdup_printf("%s, seq %s, global batch %s: MFU and step time against %s", cell(t, 0, "model"),
                                           cell(t, 0, "seq_len"), cell(t, 0, "global_batch"), col);
  xml(f, title);
  fputs("</text>\n<text x=\"20\" y=\"44\">", f);
  g_autofree char *sub = g_strdup_printf("platform: %s; %s swept", pl->str, col);
  xml(f, sub);
  fputs("</text>\n", f);
  draw_axes(f, &pm, (double *)xs->data, nx, AXIS_LABEL[axis], "MFU (%)");
  draw_axes(f, &ps, (double *)xs->data, nx, AXIS_LABEL[axis], "step time (s)");
  /* each line's band first, under every line: the P90 error of the calibration around it (docs/trust.md) */
  for (int k = 0; k < n_lines; k++)
    for (int pass = 0; pass < 2; pass++) {
      const panel *p = pass ? &ps : &pm;
      const double *v = pass ? &step[k * nx] : &mfu[k * nx];
      g_autoptr(GString) up = g_string_new(NULL), down = g_string_new(NULL);
      for (int i = 0; i < nx; i++) {
        if (!(v[i] > 0) || !(band[k * nx + i] > 0)) continue;
        double b = band[k * nx + i], x = px(p, g_array_index(xs, double, i));
        double hi = pass ? v[i] * (1 + b) : v[i] / (1 - b), lo = pass ? v[i] * (1 - b) : v[i] / (1 + b);
        g_string_append_printf(up, "%.1f,%.1f ", x, py(p, hi));
        g_autofree char *pt = g_strdup_printf("%.1f,%.1f ", x, py(p, lo));
        g_string_prepend(down, pt);
        /* and an error bar at the point, which a lone point's band (a polygon of no width) would not show */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-opacity=\"0.5\"/>\n",
                x, py(p, hi), x, py(p, lo), COLOURS[k]);
      }
      if (up->len)
        fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\" points=\"%s%s\"/>\n", COLOURS[k],
                up->str, down->str);
    }
  gboolean any_tight = FALSE;
  for (int k = 0; k <= n_lines; k++) {
    gboolean best = k == n_lines;
    const char *colour = best ? "#222" : COLOURS[k];
    for (int pass = 0; pass < (best ? 1 : 2); pass++) {
      const panel *p = pass ? &ps : &pm;
      const double *v = pass ? &step[k * nx] : &mfu[(best ? N_LINES : k) * nx];
      fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", colour, best ? "1.5" : "2",
              best ? " stroke-dasharray=\"5,4\"" : "");
      for (int i = 0; i < nx; i++)
        if (v[i] > 0) fprintf(f, "%.1f,%.1f ", px(p, g_array_index(xs, double, i)), py(p, v[i]));
      fputs("\"/>\n", f);
      for (int i = 0; i < nx && !best; i++) {
        if (!(v[i] > 0)) continue;
        double x = px(p, g_array_index(xs, double, i)), y = py(p, v[i]);
        if (tight[k * nx + i]) { /* near OOM: a hollow diamond, drawn large, red-edged */
          any_tight = TRUE;
          fprintf(f, "<path d=\"M%.1f,%.1f l6,6 l-6,6 l-6,-6 z\" fill=\"white\" stroke=\"#000\" stroke-width=\"2\"/>\n",
                  x, y - 6);
          fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n", x, y, colour);
        } else fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y, colour);
      }
    }
    fprintf(f, "<line x1=\"80\" y1=\"%d\" x2=\"110\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", 430 + 18 * k,
            430 + 18 * k, colour, best ? " stroke-dasharray=\"5,4\"" : "");
    fprintf(f, "<text x=\"118\" y=\"%d\">", 434 + 18 * k);
    xml(f, best ? "the best layout at each point (MFU)" : line[k]);
    fputs("</text>\n", f);
  }
  int y = 430 + 18 * (n_lines + 1);
  fprintf(f, "<rect x=\"80\" y=\"%d\" width=\"30\" height=\"10\" fill=\"#888\" fill-opacity=\"0.25\"/>\n", y - 4);
  fprintf(f, "<text x=\"118\" y=\"%d\">band: the step time's P90 error (+-band_pct, docs/trust.md); MFU's the same, "
          "inverted</text>\n", y + 4);
  if (any_tight) {
    fprintf(f, "<path d=\"M95,%d l6,6 l-6,6 l-6,-6 z\" fill=\"white\" stroke=\"#000\" stroke-width=\"2\"/>\n", y + 12);
    fprintf(f, "<text x=\"118\" y=\"%d\">near OOM: the memory verdict would flip within the fragmentation margin (flag near-oom)</text>\n",
            y + 22);
  }
  fputs("</svg>\n", f);
  return TRUE;
}

gboolean sweep_plot(const csv_table *ranked, const char *path, GError **err)
{
  lsim_outfile out;
  if (!lsim_outfile_open(&out, path, err)) return FALSE;
  if (sweep_plot_put(ranked, out.f, err)) return lsim_outfile_commit(&out, err);
  lsim_outfile_abort(&out);
  return FALSE;
}
