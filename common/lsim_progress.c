/* lsim_progress -- see lsim_progress.h. */
#include "lsim_progress.h"

#include <glib.h>
#include <unistd.h>

static double now_s(void) { return (double)g_get_monotonic_time() / 1e6; }

char *lsim_progress_line(const char *label, long done, long total, double elapsed_s, int width)
{
  GString *s = g_string_new(label);
  double frac = total > 0 ? (double)done / (double)total : 1.0;
  int full = (int)(frac * width + 1e-9);
  g_string_append(s, " [");
  for (int i = 0; i < width; i++) g_string_append_c(s, i < full ? '#' : '.');
  g_string_append_printf(s, "] %ld/%ld %3d%%", done, total, (int)(100.0 * frac + 1e-9));
  if (done > 0 && elapsed_s > 0) {
    double rate = done / elapsed_s;
    long eta = (long)((total - done) / rate + 0.5);
    g_string_append_printf(s, "  %.1f/s  ETA %ld:%02ld", rate, eta / 60, eta % 60);
  }
  return g_string_free(s, FALSE);
}

void lsim_progress_start_on(lsim_progress *p, FILE *f, const char *label, long total)
{
  p->f = f;
  p->label = label ? label : "";
  p->total = total;
  p->done = 0;
  p->start_s = now_s();
  p->last_draw_s = 0;
  lsim_progress_update(p, 0);
}

void lsim_progress_start(lsim_progress *p, const char *label, long total)
{
  lsim_progress_start_on(p, label && isatty(STDERR_FILENO) ? stderr : NULL, label, total);
}

void lsim_progress_update(lsim_progress *p, long done)
{
  p->done = done;
  if (!p->f) return;
  double t = now_s();
  if (done < p->total && p->last_draw_s > 0 && t - p->last_draw_s < 0.1) return;
  p->last_draw_s = t;
  g_autofree char *line = lsim_progress_line(p->label, done, p->total, t - p->start_s, 30);
  fprintf(p->f, "\r%s\033[K", line);
  fflush(p->f);
}

void lsim_progress_finish(lsim_progress *p)
{
  if (!p->f) return;
  fprintf(p->f, "\r\033[K");
  fflush(p->f);
  p->f = NULL;
}
