/* run_cost -- what a run will cost, said before it starts, and the limits that stop it.
 *
 * Before a replay starts, its memory (footprint.h) and its time are estimated from what it holds:
 * the time from the events the replay walks, the ranks that run them and the GPUs of the platform (run_cost_seconds, constants
 * measured as CPU time, docs/hardening.md "A run's cost"; within a factor of two on the shapes measured). simulate and replay print the
 * estimate on standard error when it is large (above RUN_COST_TELL_SECONDS or RUN_COST_TELL_BYTES).
 *
 * The limits (--max-seconds, --max-memory; simulate, replay, sweep) are the process's:
 *  - the memory budget of one simulation is FOOTPRINT_BUDGET_BYTES or --max-memory: a request
 *    estimated above it is refused before anything is allocated (exit 2, one line, footprint_check's
 *    message), in sweep's workers too (they inherit it from the process that forks them), where such
 *    a layout is invalid with that reason;
 *  - a watchdog thread stops the run where its elapsed time passes --max-seconds or its resident set
 *    passes --max-memory (the estimate is within a factor of two): one line on standard error, the
 *    temporary files of its outputs removed (lsim_outfile), exit status 2, no output replaced; a
 *    sweep's workers die with it (zygote.h).
 *
 * Owns: the time estimate, the budget in force, the watchdog. May not touch: what a run computes.
 */
#ifndef RUN_COST_H
#define RUN_COST_H

#include <glib.h>

#include "footprint.h"

/* An estimate above either is printed on standard error before the run (where announcing is on). */
#define RUN_COST_TELL_SECONDS 30.0
#define RUN_COST_TELL_BYTES (2.0 * 1024 * 1024 * 1024)

/* --max-memory SIZE: a whole number of bytes with a unit K, M, G or T (powers of 1024; KiB, MiB, GiB,
 * TiB and KB, MB, GB, TB read the same), from 1M to 64T. */
gboolean run_cost_parse_size(const char *s, double *bytes, GError **err);

/* The limits in force from now on (0: none, the default budget) and whether simulate's or replay's
 * estimate is printed when large; starts the watchdog where a limit is given. */
void run_cost_start(double max_seconds, double max_memory_bytes, gboolean announce);
/* The memory budget of one simulation: --max-memory, else FOOTPRINT_BUDGET_BYTES. */
double run_cost_budget_bytes(void);
/* The estimated wall time of the replay fp describes (a replay estimate: footprint_of_request with
 * replay, or footprint_of_graph), on one core of the machine the constants were measured on. */
double run_cost_seconds(const footprint *fp);
/* fp against the budget (footprint_check); where it fits and announcing is on, its estimate printed
 * when large and kept for the watchdog's message. */
gboolean run_cost_admit(const footprint *fp, GError **err);

#endif
