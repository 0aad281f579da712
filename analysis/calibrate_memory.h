/* calibrate_memory -- fits the one memory constant the physics does not pin
 * down, the allocator fragmentation (profile `fragmentation`), to measured
 * ok/oom labels.
 *
 * Every other memory term is counted from the task graph (docs/memory.md).
 * For each row labelled ok or oom, the simulation reports the largest
 * fragmentation at which the layout still fits (metrics.h); the verdict at a
 * fragmentation f is "oom" exactly when f exceeds that limit. So agreement
 * with the labels is a step function of f, known exactly from one pass. The
 * fit takes the interval of the allowed range with the highest agreement
 * (ties: the lowest interval, which predicts fewer runnable layouts as oom)
 * and returns its midpoint.
 *
 * Rows are simulated with min(m, pp + 1) micro-batches: the number of
 * micro-batches a stage holds is min(pp - r, m), so the peak is already
 * reached there and the long steady state adds nothing.
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

typedef struct calmem_row {
  gboolean ran;  /* measured ok (else oom) */
  double limit;  /* largest fragmentation at which it fits */
} calmem_row;

typedef struct calmem_fit {
  double fragmentation;      /* the midpoint of the chosen interval */
  double lo, hi;             /* the chosen interval */
  int rows, agree, ran, ran_pred_oom, oom_pred_ok;
} calmem_fit;

/* Pure part: choose the fragmentation for labelled limits (n >= 1). */
void calmem_choose(const calmem_row *rows, int n, double lo, double hi, calmem_fit *out);
/* Simulate the ok/oom rows of the tables under cfg and fit; log the result to log (may be NULL). */
gboolean calmem_run(const char *const *paths, int n_paths, const predict_cfg *cfg, FILE *log, calmem_fit *out,
                    GError **err);

#endif
