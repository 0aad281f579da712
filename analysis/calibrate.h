/* calibrate -- fits the free constants of a profile (at most about a dozen,
 * each with a physical meaning and a plausible range, listed in
 * calibrate.c and docs/profile.md) to measured runs: a least-squares
 * search (Levenberg-Marquardt on finite differences, in the
 * box of allowed ranges mapped to an unbounded space) on the log step-time
 * errors of the rows measured ok (but those marked `time_fit` no).
 *
 * Fast mode (default): the worker pool's fast path (analysis/pool.h): a
 * row's step time from two simulations of the same layout with fewer
 * micro-batches, extrapolated affinely in the number of micro-batches.
 * calib_check_fast() measures how far that is from full simulations.
 *
 * Owns: the search, the parameter list, the objective.
 * May not touch: the simulation itself; the measured rows stay outside the repo.
 */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include <stdio.h>

#include "predict.h"

/* Default prior weight: moving one constant across its whole range must buy at least
 * 0.001 of objective (mean squared log error), e.g. 7.7% -> 7.0% rms. */
#define CALIB_PRIOR_WEIGHT 1e-3

/* The fewest evaluations with which the timing fit can move: the start, one per free constant
 * (the Jacobian) and one trial step. */
int calib_min_evals(void);

typedef struct calib_cfg {
  predict_cfg pred; /* start profile, capacity, generator options, jobs */
  int max_evals;
  gboolean fast;
  double prior_weight; /* weight of the prior term (0: none); calibrate.c */
  FILE *log;        /* progress lines; NULL for none */
  gboolean fp8;     /* fit the FP8 constants alone (--fit fp8), every other held */
} calib_cfg;

/* Read every table and check every row's measured columns (with times: val_measured_row; without:
 * the status only), its `time_fit` cell and its layout, before any fit runs: FALSE naming file, row
 * and field; with times, also FALSE when no row is left for the timing fit. */
gboolean calib_check_tables(const char *const *paths, int n_paths, const predict_cfg *cfg, gboolean times,
                            GError **err);
/* Fit; writes the fitted profile to *out (a copy of cfg->pred.prof with the free constants changed). */
gboolean calib_run(const char *const *paths, int n_paths, const calib_cfg *cfg, gpu_profile *out, GError **err);

/* Simulate the rows the timing fit uses (measured ok, not marked `time_fit` no) in full and in
 * fast mode with cfg's profile; print each extrapolated row and the mean and max relative
 * deviation to f. */
gboolean calib_check_fast(const char *const *paths, int n_paths, const calib_cfg *cfg, FILE *f, GError **err);

/* Names of the free constants (NULL-terminated, static). */
const char *const *calib_param_names(void);


#endif
