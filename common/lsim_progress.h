/* lsim_progress -- a progress bar with a rate and an ETA on standard error,
 * drawn only when standard error is a terminal (a sweep piped to a file or
 * run by a scheduler prints no progress noise). Redrawn at most 10 times a
 * second; the line is cleared when the work ends.
 *
 * Owns: the bar's format and its terminal test. May not touch: the work.
 */
#ifndef LSIM_PROGRESS_H
#define LSIM_PROGRESS_H

#include <stdio.h>

typedef struct lsim_progress {
  FILE *f;          /* NULL: nothing is drawn */
  const char *label;
  long total, done;
  double start_s, last_draw_s;
} lsim_progress;

/* Start a bar for `total` units labelled `label` on stderr if it is a terminal (label NULL: never). */
void lsim_progress_start(lsim_progress *p, const char *label, long total);
/* Same on f, drawn whatever f is (tests). */
void lsim_progress_start_on(lsim_progress *p, FILE *f, const char *label, long total);
/* `done` units are finished. */
void lsim_progress_update(lsim_progress *p, long done);
/* Clear the line. */
void lsim_progress_finish(lsim_progress *p);
/* The bar's text for `done` of `total` after `elapsed_s` seconds, `width` characters of bar (static format
 * for tests): "label [#####.....]  50/100  50%  12.3/s  ETA 0:04". Caller frees. */
char *lsim_progress_line(const char *label, long done, long total, double elapsed_s, int width);

#endif
