/* run_cost -- see run_cost.h.
 *
 * The time constants were measured on this project's 2-core machine (Debian 12, SimGrid 3.32) as the CPU
 * time (user + system, /usr/bin/time) of `layoutsim simulate`, each part varied alone (docs/hardening.md,
 * "A run's cost"): the wall time of one core to itself; a loaded machine takes longer. */
#include "run_cost.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_outfile.h"

/* The process before its replay: libraries, SimGrid's engine, the platform (a 1-GPU run: 0.3 s). */
#define START_SECONDS 0.3
/* One event of an explicit program replayed: its SimGrid activity, its timeline interval, its metrics
 * (llama-7b, 64 GPUs --no-symmetry, global batch 8192: 5.8e6 events in 4.8 s of CPU; tp 2 pp 4 on 8 GPUs,
 * 3.6e6 events in 2.3 s). */
#define EVENT_SECONDS 0.8e-6
/* One rank that runs an actor: its context and its share of SimGrid's flows, which grows with the ranks
 * that talk at once (1024 GPUs --no-symmetry, global batch 1024: 1024 actors, 6.1 s of CPU for 8e5 events;
 * 256 GPUs: 0.9 s). */
#define ACTOR_SECONDS 3e-3
/* One GPU of the platform, mirrored or not: its SimGrid host, links and routes, its program and engine state
 * (llama-7b tp 8, one micro-batch, every rank mirrored: 65,536 GPUs 1.3 s of CPU, 131,072 GPUs 3.0 s, 262,144
 * GPUs 6.4 s, under load; without it a million GPUs were estimated at 0.35 s and took 40 s). */
#define RANK_SECONDS 25e-6

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

static double max_seconds, max_memory_bytes;
static gboolean announce;
static gint64 started_us;
static double estimated_s = -1, estimated_bytes = -1; /* the last admitted estimate (-1: none) */

gboolean run_cost_parse_size(const char *s, double *bytes, GError **err)
{
  static const char *const units[] = {"K", "M", "G", "T"};
  char *end;
  guint64 n = g_ascii_isdigit(*s) ? g_ascii_strtoull(s, &end, 10) : 0;
  double scale = 0;
  if (g_ascii_isdigit(*s) && n > 0 && n <= 1u << 30)
    for (int u = 0; u < 4 && !scale; u++)
      if (!g_ascii_strcasecmp(end, units[u]) ||
          (g_ascii_strncasecmp(end, units[u], 1) == 0 &&
           (!g_ascii_strcasecmp(end + 1, "iB") || !g_ascii_strcasecmp(end + 1, "B"))))
        scale = pow(1024.0, u + 1);
  double v = n * scale;
  if (scale == 0 || v < MIB || v > 64 * 1024 * GIB) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--max-memory: invalid value '%s' (allowed: a whole number "
                "with a unit K, M, G or T, from 1M to 64T, e.g. 512M or 16G)", s);
    return FALSE;
  }
  *bytes = v;
  return TRUE;
}

double run_cost_budget_bytes(void) { return max_memory_bytes > 0 ? max_memory_bytes : FOOTPRINT_BUDGET_BYTES; }

double run_cost_seconds(const footprint *fp)
{
  return START_SECONDS + fp->events * EVENT_SECONDS + fp->actors * ACTOR_SECONDS + fp->ranks * RANK_SECONDS;
}

/* The resident set of this process, from /proc/self/statm (its second field, in pages); -1 if unread. */
static double resident_bytes(void)
{
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long size, resident;
  if (sscanf(buf, "%lu %lu", &size, &resident) != 2) return -1;
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* Stop the run: its line, its outputs' temporary files removed, exit 2 without flushing a half-written
 * standard output. */
static void stop(const char *line)
{
  if (write(STDERR_FILENO, line, strlen(line)) < 0) { /* nothing more to say */ }
  lsim_outfile_remove_pending();
  _exit(2);
}

/* What the run was estimated at, for the stop's message (the last admitted estimate). Caller frees. */
static char *estimate_said(void)
{
  return estimated_s >= 0 ? g_strdup_printf("; estimated before it started: about %.3g s and %.3g GiB", estimated_s,
                                            estimated_bytes / GIB)
                          : g_strdup("");
}

/* Every 20 ms: the elapsed time and the resident set against the limits (nothing allocated until one is
 * passed: the process forks its workers' zygote while this runs). */
static gpointer watch(gpointer data)
{
  (void)data;
  for (;;) {
    g_usleep(20000);
    double elapsed = (g_get_monotonic_time() - started_us) / 1e6;
    if (max_seconds > 0 && elapsed > max_seconds) {
      g_autofree char *guess = estimate_said();
      g_autofree char *line = g_strdup_printf("layoutsim: --max-seconds: %g: the run was stopped unfinished after %.1f s, "
                                              "nothing written (allowed: a larger --max-seconds, or a smaller run%s)\n",
                                              max_seconds, elapsed, guess);
      stop(line);
    }
    double rss = max_memory_bytes > 0 ? resident_bytes() : -1;
    if (max_memory_bytes > 0 && rss > max_memory_bytes) {
      g_autofree char *guess = estimate_said();
      g_autofree char *limit = footprint_format_bytes(max_memory_bytes, TRUE), *now = footprint_format_bytes(rss, FALSE);
      g_autofree char *line = g_strdup_printf("layoutsim: --max-memory: %s: the run was stopped unfinished at %s resident, "
                                              "nothing written (allowed: a larger --max-memory, or a smaller run%s)\n",
                                              limit, now, guess);
      stop(line);
    }
  }
  return NULL;
}

void run_cost_start(double seconds, double memory_bytes, gboolean tell)
{
  max_seconds = seconds;
  max_memory_bytes = memory_bytes;
  announce = tell;
  started_us = g_get_monotonic_time();
  if (seconds > 0 || memory_bytes > 0) g_thread_unref(g_thread_new("run-cost-watch", watch, NULL));
}

gboolean run_cost_admit(const footprint *fp, GError **err)
{
  if (!footprint_check(fp, run_cost_budget_bytes(), err)) return FALSE;
  if (!announce || fp->actors <= 0) return TRUE; /* a graph alone (layoutsim graph, a memory verdict) */
  static gboolean told; /* once: simulate estimates its request, then the graph it generated */
  estimated_s = run_cost_seconds(fp);
  estimated_bytes = fp->total_bytes;
  if (!told && (estimated_s > RUN_COST_TELL_SECONDS || estimated_bytes > RUN_COST_TELL_BYTES))
    fprintf(stderr, "layoutsim: this run will take about %.3g s and %.3g GiB (%.3g events on %.0f explicitly simulated "
            "ranks; --max-seconds and --max-memory stop it)\n", estimated_s, estimated_bytes / GIB, fp->events,
            fp->explicit_ranks);
  told = TRUE;
  return TRUE;
}
