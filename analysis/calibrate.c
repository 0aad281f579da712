/* calibrate -- see calibrate.h.
 *
 * Objective: the mean over settings (model, seq_len, gpus) of the mean
 * squared log error log(T_pred / T_meas) over the setting's rows measured
 * ok and not marked `time_fit` no; a setting with few rows weighs as much
 * as a large sweep. Rows predicted OOM still count by their simulated time
 * (the memory model is not being fitted here). A row whose simulation fails adds a large
 * constant penalty. Plus a prior: prior_weight times the sum over the
 * constants of ((x - x0) / range)^2 (log scale where the range spans
 * decades), x0 the starting profile's value.
 *
 * Search: Levenberg-Marquardt with forward-difference Jacobians (no
 * analytic derivatives: the simulator is a black box) on unbounded
 * coordinates u; each constant is lo + (hi - lo) * sigmoid(u), or the same
 * in log space for constants whose range spans decades, so every step stays
 * inside the documented ranges. */
#include "calibrate.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "validate.h"

typedef struct cparam {
  const char *name;
  size_t off;
  double lo, hi;
  gboolean log_scale;
  gboolean off_at_zero; /* 0 in the prior means the stack has no such cost (host_dispatch_s of the study): kept 0 */
  gboolean fp8;         /* an FP8 constant: fitted by --fit fp8 alone, with every bf16 constant held */
} cparam;

#define P(k, lo, hi, lg) {#k, offsetof(gpu_profile, stack.k), lo, hi, lg, FALSE, FALSE}
#define P0(k, lo, hi, lg) {#k, offsetof(gpu_profile, stack.k), lo, hi, lg, TRUE, FALSE}
#define P8(k, lo, hi, lg) {#k, offsetof(gpu_profile, stack.k), lo, hi, lg, FALSE, TRUE}
/* The free constants and their plausible ranges (docs/profile.md says why). */
static const cparam PARAMS[] = {
    P(gemm_efficiency, 0.60, 0.95, FALSE),
    P(gemm_k_half, 16, 1024, TRUE),
    P(hbm_efficiency, 0.50, 0.95, FALSE),
    {"attention.flash1", offsetof(gpu_profile, stack.attention[GRAPH_ATTN_FLASH1].efficiency), 0.25, 0.50, FALSE,
     FALSE, FALSE},
    {"attention.flash2", offsetof(gpu_profile, stack.attention[GRAPH_ATTN_FLASH2].efficiency), 0.50, 0.80, FALSE,
     FALSE, FALSE},
    P(launch_overhead_s, 1e-6, 3e-5, TRUE),
    P(nccl_bw_efficiency_nvlink, 0.40, 1.00, FALSE),
    P(nccl_bw_efficiency_ib, 0.40, 1.00, FALSE),
    P(nccl_step_latency_s, 1e-6, 1e-4, TRUE),
    P0(host_dispatch_s, 5e-6, 2e-4, TRUE),
    P8(fp8_gemm_efficiency, 0.30, 0.95, FALSE),
};
#undef P
#undef P0
#undef P8
#define N_PARAMS ((int)G_N_ELEMENTS(PARAMS))

const char *const *calib_param_names(void)
{
  static const char *names[G_N_ELEMENTS(PARAMS) + 1];
  for (int i = 0; i < N_PARAMS; i++) names[i] = PARAMS[i].name;
  names[N_PARAMS] = NULL;
  return names;
}

static double *slot(gpu_profile *p, const cparam *c) { return (double *)((char *)p + c->off); }

/* The constants the fit moves from the prior `base`: every bf16 one but those the prior switches off, or
 * (fp8) the FP8 ones alone. */
static int free_params(const gpu_profile *base, gboolean fp8, int *idx)
{
  int n = 0;
  for (int i = 0; i < (int)G_N_ELEMENTS(PARAMS); i++)
    if (PARAMS[i].fp8 == fp8 && (!PARAMS[i].off_at_zero || *slot((gpu_profile *)base, &PARAMS[i]) > 0)) idx[n++] = i;
  return n;
}

static double to_value(const cparam *c, double u)
{
  double s = 1.0 / (1.0 + exp(-u));
  if (c->log_scale) return exp(log(c->lo) + (log(c->hi) - log(c->lo)) * s);
  return c->lo + (c->hi - c->lo) * s;
}

static double to_coord(const cparam *c, double v)
{
  double lo = c->log_scale ? log(c->lo) : c->lo, hi = c->log_scale ? log(c->hi) : c->hi;
  double x = c->log_scale ? log(v) : v;
  double s = (x - lo) / (hi - lo);
  s = CLAMP(s, 0.02, 0.98);
  return log(s / (1 - s));
}

/* One row the timing fit uses: its measured time, its setting and its prediction. */
typedef struct target {
  const char *path; /* the table and line the row comes from (--check-fast names it) */
  guint line;
  double meas_s;
  int setting;
  prediction pred; /* of the last evaluation */
} target;

typedef struct problem {
  csv_table *sims;  /* one row per target, in the predict columns */
  GArray *targets;  /* of target */
  int n_settings;
  int *setting_rows;
  int n_time_fit_no; /* rows measured ok but marked time_fit no: left out */
  const calib_cfg *cfg;
  int evals;
  int n_free, free[G_N_ELEMENTS(PARAMS)]; /* the constants fitted (free_params), in PARAMS order */
} problem;

/* Row r of t (read from path), measured ok in meas seconds: its setting and its target. */
static void add_target(problem *pb, GPtrArray *settings, const char *path, const csv_table *t, guint r,
                       const sim_request *rq, double meas)
{
  g_autofree char *key = g_strdup_printf("%s %d %d", rq->m.name, rq->l.seq_len, rq->l.gpus);
  int s = -1;
  for (guint k = 0; k < settings->len; k++)
    if (!strcmp(settings->pdata[k], key)) s = (int)k;
  if (s < 0) {
    g_ptr_array_add(settings, g_steal_pointer(&key));
    s = (int)settings->len - 1;
  }
  target tg = {.path = path, .line = csv_row_line(t, r), .meas_s = meas, .setting = s};
  csv_append_row_from(pb->sims, t, r); /* the simulation table has the predict columns: map by name */
  g_array_append_val(pb->targets, tg);
}

/* The optional `time_fit` column of row r (docs/calibration.md): empty or `yes`, the timing fit uses
 * the row's step time; `no`, it leaves the time out (the memory fit and validate still use the row).
 * *use is TRUE without the column. FALSE with err for any other value. */
static gboolean row_time_fit(const csv_table *t, guint r, gboolean *use, GError **err)
{
  int c = csv_column(t, "time_fit");
  const char *v = c >= 0 ? csv_cell(t, r, c) : "";
  *use = strcmp(v, "no") != 0;
  if (!*v || !strcmp(v, "yes") || !*use) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "time_fit: unknown '%s' (allowed: yes, no, or empty = yes)", v);
  return FALSE;
}

/* Row r of table `path` as the fits read it: val_read_row and the time_fit cell; an error names the
 * file and row. */
static gboolean read_row(const csv_table *t, guint r, const char *path, const predict_cfg *cfg, gboolean times,
                         double *meas, meas_status *st, sim_request *rq, gboolean *use, GError **err)
{
  GError *e = NULL;
  if (val_read_row(t, r, cfg, times, meas, st, rq, &e) && row_time_fit(t, r, use, &e)) return TRUE;
  g_propagate_prefixed_error(err, e, "%s line %u: ", path, csv_row_line(t, r));
  return FALSE;
}

static const char NO_TARGETS[] =
    "calibrate: no row measured ok with a step_time_s to fit (rows marked time_fit no do not count)";

gboolean calib_check_tables(const char *const *paths, int n_paths, const predict_cfg *cfg, gboolean times,
                            GError **err)
{
  guint n_targets = 0;
  for (int f = 0; f < n_paths; f++) {
    g_autoptr(csv_table) t = csv_read(paths[f], err);
    if (!t || !val_check_columns(t, paths[f], times, err))
      return FALSE;
    for (guint r = 0; r < t->rows->len; r++) {
      double meas;
      meas_status st;
      sim_request rq;
      gboolean use;
      if (!read_row(t, r, paths[f], cfg, times, &meas, &st, &rq, &use, err)) return FALSE;
      if (st == MEAS_OK && use) n_targets++;
    }
  }
  if (times && n_targets == 0) {
    g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, NO_TARGETS);
    return FALSE;
  }
  return TRUE;
}

/* The targets of one table: its rows measured ok, but for those marked `time_fit` no. A bad
 * measured cell or a row measured ok that cannot be simulated stops the fit naming the file and row. */
static gboolean load_file(problem *pb, GPtrArray *settings, const char *path, GError **err)
{
  g_autoptr(csv_table) t = csv_read(path, err);
  if (!t || !val_check_columns(t, path, TRUE, err)) return FALSE;
  for (guint r = 0; r < t->rows->len; r++) {
    double meas; /* NAN unless measured ok */
    meas_status st;
    sim_request rq;
    gboolean use;
    if (!read_row(t, r, path, &pb->cfg->pred, TRUE, &meas, &st, &rq, &use, err)) return FALSE;
    if (st == MEAS_OK && use) add_target(pb, settings, path, t, r, &rq, meas);
    if (st == MEAS_OK && !use) pb->n_time_fit_no++;
  }
  return TRUE;
}

static gboolean problem_load(problem *pb, const char *const *paths, int n_paths, const calib_cfg *cfg, GError **err)
{
  guint n_cols;
  g_autofree const char **cols = predict_columns(&n_cols);
  pb->cfg = cfg;
  pb->sims = csv_new(cols, n_cols);
  pb->targets = g_array_new(FALSE, TRUE, sizeof(target));
  g_autoptr(GPtrArray) settings = g_ptr_array_new_with_free_func(g_free);
  for (int f = 0; f < n_paths; f++)
    if (!load_file(pb, settings, paths[f], err)) return FALSE;
  pb->n_settings = (int)settings->len;
  pb->setting_rows = g_new0(int, pb->n_settings > 0 ? pb->n_settings : 1);
  for (guint i = 0; i < pb->targets->len; i++) pb->setting_rows[g_array_index(pb->targets, target, i).setting]++;
  if (pb->targets->len == 0) {
    g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, NO_TARGETS);
    return FALSE;
  }
  return TRUE;
}

static void problem_clear(problem *pb)
{
  csv_free(pb->sims);
  if (pb->targets) g_array_free(pb->targets, TRUE);
  g_free(pb->setting_rows);
}

/* Simulate every target under profile p (the pool's fast path where cfg->fast). */
static void problem_simulate(problem *pb, const gpu_profile *p)
{
  predict_cfg cfg = pb->cfg->pred;
  cfg.prof = *p;
  cfg.pool.fidelity = pb->cfg->fast ? POOL_AUTO : POOL_FULL;
  g_autofree prediction *pr = predict_table(pb->sims, &cfg);
  for (guint i = 0; i < pb->targets->len; i++) g_array_index(pb->targets, target, i).pred = pr[i];
}

static gboolean target_failed(const target *tg) { return tg->pred.status == PRED_INVALID || !(tg->pred.step_time_s > 0); }

/* Weighted residuals r_i = log(T_pred / T_meas) / sqrt(rows of its setting * settings): sum r_i^2 = objective. */
static double residuals(problem *pb, const gpu_profile *p, double *r, double *mape_out)
{
  problem_simulate(pb, p);
  pb->evals++;
  double f = 0, ape = 0;
  for (guint i = 0; i < pb->targets->len; i++) {
    const target *tg = &g_array_index(pb->targets, target, i);
    double e = target_failed(tg) ? 1.0 : log(tg->pred.step_time_s / tg->meas_s);
    r[i] = e / sqrt((double)pb->setting_rows[tg->setting] * pb->n_settings);
    f += r[i] * r[i];
    ape += target_failed(tg) ? 1.0 : fabs(tg->pred.step_time_s - tg->meas_s) / tg->meas_s;
  }
  if (mape_out) *mape_out = 100.0 * ape / pb->targets->len;
  return f;
}

static void apply(const problem *pb, const double *u, gpu_profile *p)
{
  for (int a = 0; a < pb->n_free; a++) *slot(p, &PARAMS[pb->free[a]]) = to_value(&PARAMS[pb->free[a]], u[a]);
}

typedef struct vertex { /* a point of the search in unbounded coordinates */
  double u[G_N_ELEMENTS(PARAMS)];
  double f;
} vertex;

/* The prior: r = sqrt(w) (x - x0) / (hi - lo) per constant, x in the constant's own (log) scale and x0
 * its value in the starting profile; it keeps a constant the data do not exercise where it started. */
static double prior_residuals(const problem *pb, const gpu_profile *base, const gpu_profile *p, double *r)
{
  double f = 0, w = sqrt(pb->cfg->prior_weight);
  for (int i = 0; i < pb->n_free; i++) {
    const cparam *c = &PARAMS[pb->free[i]];
    double x = *slot((gpu_profile *)p, c), x0 = *slot((gpu_profile *)base, c);
    r[i] = c->log_scale ? w * log(x / x0) / log(c->hi / c->lo) : w * (x - x0) / (c->hi - c->lo);
    f += r[i] * r[i];
  }
  return f;
}

static double eval_residuals(problem *pb, const gpu_profile *base, const double *u, double *r)
{
  gpu_profile p = *base;
  apply(pb, u, &p);
  double mape, data = residuals(pb, &p, r, &mape);
  double prior = prior_residuals(pb, base, &p, r + pb->targets->len);
  if (pb->cfg->log) {
    fprintf(pb->cfg->log, "calibrate: eval %3d  objective %.6f (prior %.6f)  rms log err %.2f%%  mape %.2f%%\n",
            pb->evals, data + prior, prior, 100.0 * sqrt(data), mape);
    fflush(pb->cfg->log);
  }
  return data + prior;
}

/* Solve the n x n system A x = b in place (Gaussian elimination, partial pivoting); FALSE if singular. */
static gboolean solve(double *A, double *b, int n)
{
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
    if (fabs(A[piv * n + c]) < 1e-300) return FALSE;
    for (int k = 0; k < n; k++) {
      double t = A[c * n + k];
      A[c * n + k] = A[piv * n + k];
      A[piv * n + k] = t;
    }
    double t = b[c];
    b[c] = b[piv];
    b[piv] = t;
    for (int r = c + 1; r < n; r++) {
      double f = A[r * n + c] / A[c * n + c];
      for (int k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; c--) {
    for (int k = c + 1; k < n; k++) b[c] -= A[c * n + k] * b[k];
    b[c] /= A[c * n + c];
  }
  return TRUE;
}

/* Levenberg-Marquardt on the residuals with a forward-difference Jacobian (the simulator is
 * deterministic, so differences are exact up to its piecewise smoothness): each iteration
 * costs one evaluation per constant plus one per trial step. */
static void levenberg_marquardt(problem *pb, const gpu_profile *base, vertex *best, int max_evals)
{
  int n = pb->n_free, N = (int)pb->targets->len + n; /* data residuals, then the prior's */
  const double h = 0.05;
  g_autofree double *r = g_new(double, N), *rt = g_new(double, N), *J = g_new(double, (gsize)N * n);
  double A[G_N_ELEMENTS(PARAMS) * G_N_ELEMENTS(PARAMS)], g[G_N_ELEMENTS(PARAMS)];
  best->f = eval_residuals(pb, base, best->u, r);
  double lambda = 0.3;
  while (pb->evals + n + 1 <= max_evals) {
    for (int j = 0; j < n; j++) {
      vertex v = *best;
      v.u[j] += h;
      eval_residuals(pb, base, v.u, rt);
      for (int i = 0; i < N; i++) J[(gsize)i * n + j] = (rt[i] - r[i]) / h;
    }
    gboolean improved = FALSE;
    while (!improved && pb->evals < max_evals) {
      for (int a = 0; a < n; a++) {
        g[a] = 0;
        for (int i = 0; i < N; i++) g[a] -= J[(gsize)i * n + a] * r[i];
        for (int b = 0; b < n; b++) {
          double s = 0;
          for (int i = 0; i < N; i++) s += J[(gsize)i * n + a] * J[(gsize)i * n + b];
          A[a * n + b] = s;
        }
      }
      /* Marquardt damping plus a floor: a constant pinned at the edge of its range has a
       * vanishing column (the sigmoid is flat there), whose huge Gauss-Newton component
       * would otherwise shrink the whole trust-region step to nothing */
      double maxdiag = 0;
      for (int a = 0; a < n; a++) maxdiag = MAX(maxdiag, A[a * n + a]);
      for (int a = 0; a < n; a++) A[a * n + a] += lambda * A[a * n + a] + 0.01 * maxdiag + 1e-12;
      if (!solve(A, g, n)) break;
      /* trust region: scale the whole step (keeping its direction) to at most 1 per coordinate */
      double big = 0;
      for (int a = 0; a < n; a++) big = MAX(big, fabs(g[a]));
      double scale = big > 1.0 ? 1.0 / big : 1.0;
      vertex v = *best;
      for (int a = 0; a < n; a++) v.u[a] += scale * g[a];
      v.f = eval_residuals(pb, base, v.u, rt);
      if (v.f < best->f) {
        *best = v;
        memcpy(r, rt, sizeof(double) * N);
        lambda = MAX(lambda / 3, 1e-6);
        improved = TRUE;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
}

int calib_min_evals(void) { return N_PARAMS; } /* the bf16 constants but host_dispatch_s, plus 2 */

gboolean calib_run(const char *const *paths, int n_paths, const calib_cfg *cfg, gpu_profile *out, GError **err)
{
  problem pb = {0};
  if (!problem_load(&pb, paths, n_paths, cfg, err)) {
    problem_clear(&pb);
    return FALSE;
  }
  const gpu_profile *base = &cfg->pred.prof;
  pb.n_free = free_params(base, cfg->fp8, pb.free);
  if (cfg->log) {
    g_autofree char *left_out =
        pb.n_time_fit_no ? g_strdup_printf(" (%d more marked time_fit no)", pb.n_time_fit_no) : g_strdup("");
    fprintf(cfg->log, "calibrate: %u rows measured ok in %d settings%s, simulated in %s mode, %d constants\n",
            pb.targets->len, pb.n_settings, left_out, cfg->fast ? "fast" : "full", pb.n_free);
  }
  vertex best = {0};
  for (int a = 0; a < pb.n_free; a++)
    best.u[a] = to_coord(&PARAMS[pb.free[a]], *slot((gpu_profile *)base, &PARAMS[pb.free[a]]));
  levenberg_marquardt(&pb, base, &best, cfg->max_evals);
  *out = *base;
  apply(&pb, best.u, out);
  if (cfg->log) {
    fprintf(cfg->log, "calibrate: best objective %.6f (data and prior) after %d evaluations\n", best.f, pb.evals);
    for (int a = 0; a < pb.n_free; a++) {
      const cparam *c = &PARAMS[pb.free[a]];
      fprintf(cfg->log, "calibrate:   %-26s %.6g  (range %g .. %g)\n", c->name, *slot(out, c), c->lo, c->hi);
    }
  }
  problem_clear(&pb);
  return TRUE;
}

gboolean calib_check_fast(const char *const *paths, int n_paths, const calib_cfg *cfg, FILE *f, GError **err)
{
  calib_cfg full = *cfg, fast = *cfg;
  full.fast = FALSE;
  fast.fast = TRUE;
  problem a = {0}, b = {0};
  gboolean ok = problem_load(&a, paths, n_paths, &full, err) && problem_load(&b, paths, n_paths, &fast, err);
  if (ok) {
    problem_simulate(&a, &cfg->pred.prof);
    problem_simulate(&b, &cfg->pred.prof);
    double worst = 0, sum = 0;
    int n = 0;
    for (guint i = 0; i < a.targets->len; i++) {
      const target *ta = &g_array_index(a.targets, target, i), *tb = &g_array_index(b.targets, target, i);
      if (tb->pred.how != PRED_HOW_FAST || target_failed(ta) || target_failed(tb)) continue;
      double full_s = ta->pred.step_time_s, fast_s = tb->pred.step_time_s, dev = fabs(fast_s - full_s) / full_s;
      fprintf(f, "%s line %u: m %4d  m1 %3d  m2 %3d  full %10.4f s  fast %10.4f s  deviation %.4f%%\n", ta->path,
              ta->line, tb->pred.m, tb->pred.m1, tb->pred.m2, full_s, fast_s, 100 * dev);
      worst = MAX(worst, dev);
      sum += dev;
      n++;
    }
    fprintf(f, "fast mode: %d extrapolated rows, mean deviation %.4f%%, max deviation %.4f%%\n", n,
            n ? 100 * sum / n : 0.0, 100 * worst);
  }
  problem_clear(&a);
  problem_clear(&b);
  return ok;
}
