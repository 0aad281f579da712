/* calibrate_memory -- see calibrate_memory.h. */
#include "calibrate_memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "validate.h"

static void score(const calmem_row *rows, int n, double f, calmem_fit *s)
{
  s->rows = n;
  s->ran = s->ran_pred_oom = s->oom_pred_ok = 0;
  for (int i = 0; i < n; i++) {
    gboolean fits = f <= rows[i].limit;
    s->ran += rows[i].ran;
    if (rows[i].ran && !fits) s->ran_pred_oom++;
    if (!rows[i].ran && fits) s->oom_pred_ok++;
  }
  s->agree = n - s->ran_pred_oom - s->oom_pred_ok;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Weighted miss fraction plus the prior term (none when the prior is not finite). */
static double objective(const calmem_fit *c, double f, double lo, double hi, double prior)
{
  double d = isfinite(prior) ? (f - prior) / (hi - lo) : 0.0;
  double missed = c->oom_pred_ok + CALMEM_RAN_OOM_WEIGHT * c->ran_pred_oom;
  return missed / c->rows + CALMEM_PRIOR_WEIGHT * d * d;
}

void calmem_choose(const calmem_row *rows, int n, double lo, double hi, double prior, calmem_fit *out)
{
  memset(out, 0, sizeof *out);
  out->fragmentation = 0.5 * (lo + hi);
  out->lo = lo;
  out->hi = hi;
  g_return_if_fail(lo < hi);
  /* breakpoints: the limits inside (lo, hi); between two of them the agreement is constant */
  g_autofree double *cut = g_new(double, n + 2);
  int k = 0;
  cut[k++] = lo;
  for (int i = 0; i < n; i++)
    if (rows[i].limit > lo && rows[i].limit < hi) cut[k++] = rows[i].limit;
  cut[k++] = hi;
  qsort(cut, k, sizeof(double), cmp_double);
  if (isfinite(prior)) prior = CLAMP(prior, lo, hi);
  double best = INFINITY;
  for (int i = 0; i + 1 < k; i++) {
    if (!(cut[i + 1] > cut[i])) continue;
    /* the interval's point: the prior where it lies in (cut[i], cut[i+1]] (a row fits at f <= its
     * limit, so the verdicts there are the interval's; the first interval also takes lo), else the midpoint */
    gboolean holds = isfinite(prior) && prior <= cut[i + 1] && (prior > cut[i] || (i == 0 && prior >= cut[i]));
    double f = holds ? prior : 0.5 * (cut[i] + cut[i + 1]);
    calmem_fit c;
    score(rows, n, f, &c);
    double obj = objective(&c, f, lo, hi, prior);
    if (obj < best) { /* strict: on a tie the lower interval stays */
      best = obj;
      *out = c;
      out->fragmentation = f;
      out->lo = cut[i];
      out->hi = cut[i + 1];
    }
  }
}

/* The rows of t labelled ok or oom (the pool evaluates their memory alone, pool.h). A bad
 * status stops the fit (a bad time on an ok row stops --fit all in the timing fit, calibrate.c;
 * --fit memory needs no times). */
static csv_table *label_rows(const csv_table *t, const predict_cfg *cfg, GArray *ran, GError **err)
{
  csv_table *out = csv_new((const char *const *)t->header->pdata, t->header->len);
  GError *e = NULL;
  guint r;
  for (r = 0; r < t->rows->len; r++) {
    double step_time_s; /* not read: the memory fit needs only the label */
    meas_status st;
    sim_request rq;
    if (!val_read_row(t, r, cfg, FALSE, &step_time_s, &st, &rq, &e)) break;
    if (st == MEAS_OTHER) continue;
    csv_append_row_from(out, t, r);
    gboolean r_ok = st == MEAS_OK;
    g_array_append_val(ran, r_ok);
  }
  if (e) {
    g_propagate_prefixed_error(err, e, "line %u: ", csv_row_line(t, r));
    csv_free(out);
    return NULL;
  }
  return out;
}

gboolean calmem_run(const char *const *paths, int n_paths, const predict_cfg *cfg, FILE *log, calmem_fit *out,
                    GError **err)
{
  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(calmem_row));
  for (int f = 0; f < n_paths; f++) {
    g_autoptr(csv_table) t = csv_read(paths[f], err);
    if (!t || !val_check_columns(t, paths[f], FALSE, err)) return FALSE;
    g_autoptr(GArray) ran = g_array_new(FALSE, TRUE, sizeof(gboolean));
    g_autoptr(csv_table) sims = label_rows(t, cfg, ran, err);
    if (!sims) {
      g_prefix_error(err, "%s ", paths[f]);
      return FALSE;
    }
    predict_cfg mcfg = *cfg;
    mcfg.pool.memory_only = TRUE; /* no replay: the verdict needs the memory walk alone */
    g_autofree prediction *p = predict_table(sims, &mcfg);
    for (guint r = 0; r < sims->rows->len; r++) {
      if (p[r].status == PRED_INVALID) {
        if (log)
          fprintf(log, "calibrate: %s line %u: a labelled row could not be simulated, left out (%s)\n", paths[f],
                  csv_row_line(sims, r), p[r].error);
        continue;
      }
      calmem_row row = {.ran = g_array_index(ran, gboolean, r), .limit = p[r].fragmentation_limit};
      g_array_append_val(rows, row);
    }
  }
  if (rows->len == 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "calibrate: no row labelled ok or oom to fit the memory model");
    return FALSE;
  }
  double prior = cfg->prof.stack.fragmentation;
  calmem_choose((calmem_row *)rows->data, (int)rows->len, CALMEM_FRAG_LO, CALMEM_FRAG_HI, prior, out);
  if (log) {
    fprintf(log, "calibrate: fragmentation %.4f (chosen interval %.4f .. %.4f of %.2f .. %.2f; prior %.4f)\n",
            out->fragmentation, out->lo, out->hi, CALMEM_FRAG_LO, CALMEM_FRAG_HI, prior);
    fprintf(log, "calibrate:   ok/oom agreement %d of %d (%.1f%%); ran but predicted oom %d of %d (%.1f%%); oom predicted ok %d\n",
            out->agree, out->rows, 100.0 * out->agree / out->rows, out->ran_pred_oom, out->ran,
            out->ran ? 100.0 * out->ran_pred_oom / out->ran : 0.0, out->oom_pred_ok);
  }
  return TRUE;
}
