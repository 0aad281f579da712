/* calibrate_memory -- fits the one memory constant the physics does not pin
 * down, the allocator fragmentation (profile `fragmentation`), to measured
 * ok/oom labels.
 *
 * Every other memory term is counted from the task graph (docs/memory.md).
 * For each row labelled ok or oom, the simulation reports the largest
 * fragmentation at which the layout still fits (metrics.h); the verdict at a
 * fragmentation f is "oom" exactly when f exceeds that limit. So agreement
 * with the labels is a step function of f, known exactly from one pass. The
 * fit minimises, over the intervals of the allowed range, the fraction of
 * labels missed (a run that ran but is predicted oom counted
 * CALMEM_RAN_OOM_WEIGHT times) plus a prior term
 * CALMEM_PRIOR_WEIGHT ((f - f0) / range)^2, f0 the starting profile's value
 * clamped to the range, with f the interval's midpoint (f0 itself in the
 * interval holding f0). Ties go to the lowest interval. Without these two
 * terms a one-label edge out of 181 moved the fit across half its range
 * (docs/memory.md section 8).
 *
 * Rows are evaluated by the pool's memory walk alone (pool.h: the graph at
 * min(m, pp + 1) micro-batches, no replay): the number of micro-batches a
 * stage holds is min(pp - r, m), so the peak is already reached there and
 * the long steady state adds nothing.
 *
 * Owns: the label pass, the interval search, the report of the fit.
 * May not touch: the timing constants (calibrate.c), the simulation.
 */
#ifndef CALIBRATE_MEMORY_H
#define CALIBRATE_MEMORY_H

#include <stdio.h>

#include "predict.h"

#define CALMEM_FRAG_LO 0.05 /* allowed range of the fragmentation constant (docs/memory.md) */
#define CALMEM_FRAG_HI 0.30
/* Moving the fragmentation across its whole range must buy 5% of the labels (a quarter of the range 0.3%). */
#define CALMEM_PRIOR_WEIGHT 0.05
/* A layout that ran but is predicted oom counts this many misses: it hides a runnable layout from
 * the user, where an oom predicted ok only costs a failed launch. */
#define CALMEM_RAN_OOM_WEIGHT 2.0

typedef struct calmem_row {
  gboolean ran;  /* measured ok (else oom) */
  double limit;  /* largest fragmentation at which it fits */
} calmem_row;

typedef struct calmem_fit {
  double fragmentation;      /* the chosen point (see above) */
  double lo, hi;             /* the chosen interval */
  int rows, agree, ran, ran_pred_oom, oom_pred_ok;
} calmem_fit;

/* Pure part: choose the fragmentation for labelled limits (n >= 1); prior = NAN: no prior term. */
void calmem_choose(const calmem_row *rows, int n, double lo, double hi, double prior, calmem_fit *out);
/* Simulate the ok/oom rows of the tables under cfg and fit; log the result to log (may be NULL). */
gboolean calmem_run(const char *const *paths, int n_paths, const predict_cfg *cfg, FILE *log, calmem_fit *out,
                    GError **err);

#endif
