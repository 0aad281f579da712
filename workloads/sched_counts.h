/* sched_counts -- what a schedule's table entry says about its micro-batch counts, as data: the two counts m1 < m2
 * from which every time of the step is affine in m (the pool's fast path replays those two and extrapolates), and
 * the count at which every stage's memory peak is already reached (the memory verdict's graph). A pipeline
 * schedule's warm-up and cool-down stop growing once m reaches a count linear in the pipeline depth (1F1B: pp;
 * interleaved: 2 pp; DualPipeV: 2 pp + 1), and from there one more micro-batch, or one more group of them, adds
 * the same steady round to every stage: so both counts are a*pp + b, and one schedule's answers are six small
 * integers, not code. A new schedule writes its `sched_counts` in its table entry (docs/schedules.md).
 *
 * Owns: sched_counts and its two answers. May not touch: the instruction lists (the schedules' own files).
 */
#ifndef SCHED_COUNTS_H
#define SCHED_COUNTS_H

#include <glib.h>

/* per_stage * pp + plus */
typedef struct sched_pp_linear {
  int per_stage, plus;
} sched_pp_linear;

typedef struct sched_counts {
  gboolean affine;       /* FALSE: T(m) is not known to be affine in m (the pool replays whole steps) */
  sched_pp_linear whole; /* m1: from this count on every stage has its whole shape */
  int whole_at_least;    /* m1 is at least this (1F1B: 2, one steady pair at pp 1); 0: no floor */
  sched_pp_linear round; /* m2 - m1: the micro-batches of one more steady round on every stage */
  gboolean peak_grows;   /* the memory peak grows with m (every micro-batch in flight): the verdict needs all m */
  sched_pp_linear peak;  /* else every stage's peak is reached by min(m, this) */
} sched_counts;

/* 1F1B's shape, which schedules of its form share (sched_1f1b.c, sched_zbh1.c): whole from m = pp (at least 2), one
 * more steady pair per micro-batch, stage s holding min(pp - s, m), reached at m = pp; pp + 1 (the pool's memory
 * graph since it was written). */
#define SCHED_COUNTS_1F1B                                                                                             \
  { .affine = TRUE, .whole = {1, 0}, .whole_at_least = 2, .round = {0, 1}, .peak = {1, 1} }

/* m1 and m2 for a pipeline of `stages`; FALSE (both 0) where the counts are not affine. */
gboolean sched_counts_affine(const sched_counts *c, int stages, int *m1, int *m2);
/* A count m' <= m at which every stage's memory peak at m is already reached. */
int sched_counts_memory(const sched_counts *c, int stages, int m);

#endif
