/* pool -- the one worker pool of layoutsim: an array of simulation
 * requests, each evaluated in worker processes (SimGrid's engine is a
 * per-process singleton), at most `jobs` at a time. predict, validate,
 * calibrate and sweep all evaluate through it; CSV tables are adapters
 * that turn rows into requests.
 *
 * How a request is evaluated (its `how`, reported per row):
 *  - memory first: the task graph at the micro-batch count where the
 *    schedule says every stage's peak is reached (schedule.h,
 *    sched_memory_micro_batches: min(m, pp + 1) for 1F1B, whose stage s holds
 *    min(pp - s, m) micro-batches; m for GPipe) gives the peak memory of
 *    every stage without a replay; with `prune_oom`, a layout that does not
 *    fit is reported with its peak and not replayed (how = memory);
 *  - fast: two replays at the schedule's affine counts m1 < m2 (schedule.h,
 *    sched_affine_counts) give every time of the step (step time, each breakdown
 *    category) exactly by affine extrapolation. For 1F1B, from m = p (the
 *    pipeline depth) on every stage of the deterministic schedule has its
 *    whole shape (warm-up, at least one steady forward-backward pair,
 *    cool-down) and each further micro-batch adds one steady pair to every
 *    stage: m1 = p and m2 = p + 1 (at least 2 and 3; docs/calibration.md,
 *    "Fast mode"). A schedule that claims no counts is always replayed
 *    whole. Model FLOPs and tokens are linear in m, so MFU and tokens/s
 *    follow. The step bends where a stage is busier per micro-batch than the
 *    line of m1 and m2 (docs/sweep.md, "Where the line bends"), so the line
 *    is checked: no stage's least time may grow faster than it, and a third
 *    run at 2 m2 (where m > 2 m2) must lie on it, else the step is replayed
 *    in full;
 *  - full: one replay of the whole step.
 * Fidelity auto takes fast where its argument holds and its runs replay fewer
 * micro-batches than the step (m > m1 + 3 m2), full elsewhere; fast takes it
 * wherever m > m2; full never.
 *
 * Speed (docs/sweep.md, "Speed"): the workers are forked by a zygote
 * (zygote.h) started while the caller is small (a sweep starts it before it
 * enumerates), not by the caller and its tables; the jobs of one platform
 * are a zygote family whose own zygote created SimGrid's engine and built
 * the cluster once (sim/replay.h, replay_prepare), and whose workers are
 * servers that replay job after job on that engine, with the heap and pages
 * of the replays before (no fork per replay); the memory
 * verdicts, one graph after another in the caller, run with a malloc that
 * keeps what it frees (pool_run sets it: mallopt).
 *
 * Owns: the worker jobs (what the zygote runs), the fidelity choice, the extrapolation.
 * May not touch: what a simulation does inside, tables and formats.
 */
#ifndef POOL_H
#define POOL_H

#include <glib.h>

#include "simulate.h"
#include "trust.h"
#include "zygote.h"

typedef enum { POOL_AUTO, POOL_FULL, POOL_FAST } pool_fidelity;

/* What a memory verdict depends on, as text: two requests of one key get one verdict (pool_run computes it once).
 * `symmetry` is the request's as sim_request_prepare decides it. Caller frees. */
char *pool_memory_key(const sim_request *rq, gboolean symmetry);

typedef enum { PRED_OK, PRED_OOM, PRED_INVALID } pred_status;
/* How a prediction was made: not at all (invalid), full replay, fast extrapolation, memory alone. */
typedef enum { PRED_HOW_NONE, PRED_HOW_FULL, PRED_HOW_FAST, PRED_HOW_MEMORY } pred_how;

typedef struct prediction {
  pred_status status;
  pred_how how;
  int m, m1, m2;              /* micro-batches per step; the fast path's two counts (0 unless fast) */
  double step_time_s, tokens_per_s, mfu, bubble_fraction;
  double seconds[TL_N];       /* breakdown, mean over ranks (metrics.h) */
  double energy_j;            /* of the step, GPUs and nodes (energy.h) */
  double peak_gib, capacity_gib;
  int peak_stage;
  double fragmentation_limit; /* see metrics.h */
  trust_assessment trust;     /* set by the caller that has a trust table (trust.h); zero otherwise */
  char error[240];
} prediction;

typedef struct pool_cfg {
  int jobs;
  pool_fidelity fidelity;
  gboolean prune_oom;   /* memory verdict first: a layout that does not fit is not replayed */
  gboolean memory_only; /* never replay: every prediction is the memory verdict (how = memory) */
  const char *progress; /* label of the progress bar on a terminal's stderr; NULL: none */
  zygote *zygote;       /* forks the workers (borrowed: pool_zygote_start, started while the caller is
                         * small); NULL: pool_run starts one of its own and stops it */
  /* Before request i's first replay: FALSE leaves out[i] "not simulated" (the caller knows why); NULL: every
   * request is replayed. Asked in the order of the requests, while earlier ones may still run. */
  gboolean (*admit)(void *ctx, guint i);
  void (*finished)(void *ctx, guint i, const prediction *p); /* request i's prediction is final; NULL: none */
  void *ctx;
} pool_cfg;

const char *predict_status_name(pred_status s);
const char *pred_how_name(pred_how h);
gboolean pool_parse_fidelity(const char *s, pool_fidelity *out, GError **err);
const char *pool_fidelity_name(pool_fidelity f);

/* The micro-batch counts of the fast path for layout l (its schedule's affine counts) at m micro-batches:
 * FALSE when `f` does not take it for m or the schedule claims none. */
gboolean pool_fast_counts_of(pool_fidelity f, const layout *l, int m, int *m1, int *m2);
/* The same for the default schedule (1F1B) with pp stages: m1 = pp, m2 = pp + 1, at least 2 and 3. */
gboolean pool_fast_counts(pool_fidelity f, int pp, int m, int *m1, int *m2);
/* Affine extrapolation T(m) from T(m1), T(m2). */
double pool_extrapolate(double t1, int m1, double t2, int m2, int m);
/* the fast path's check: the step time t3 of a third run at m3 lies on the line through (m1, t1) and (m2, t2)
 * within POOL_AFFINE_TOL of t3 (docs/sweep.md, "Where the line bends") */
#define POOL_AFFINE_TOL 1e-3
gboolean pool_affine_holds(double t1, int m1, double t2, int m2, double t3, int m3);
/* The fast path's stage check (docs/sweep.md, "Where the line bends"): FALSE when a stage's least time in a step
 * (w1 at m1, w2 at m2 micro-batches: its ranks' time until they finished less their pipeline waits, plus the
 * least time their pipeline messages take, pool.c stage_least_times) grows faster per micro-batch than the step
 * (t1, t2), beyond POOL_STAGE_TOL of the step's slope: the step's line must then bend (a stage's least time never
 * exceeds the step). */
#define POOL_STAGE_TOL 1e-3
gboolean pool_stages_within_slope(const double *w1, const double *w2, int stages, double t1, int m1, double t2,
                                  int m2);
/* The fast prediction at m micro-batches from the predictions at m1 and m2. */
prediction pool_combine(const prediction *p1, const prediction *p2, int m);

/* The zygote that forks the pool's workers (zygote.h): start it before the memory grows (a sweep: before
 * it enumerates), give it to pool_run in pool_cfg.zygote, zygote_stop it after. NULL with err if refused. */
zygote *pool_zygote_start(GError **err);

/* The memory verdict of every non-NULL rqs[i] into out[i] (how = memory; the one pool_run with prune_oom gives,
 * but for a layout whose static memory alone does not fit: OOM without a graph, its peak a lower bound),
 * here, without a worker, and where it fits the lower bound on its step time into bound_s[i] (bound.h; 0 where
 * it does not fit or is invalid). Requests alike are walked once. */
void pool_verdicts(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out, double *bound_s);
/* Exact top-K's first pass (docs/sweep.md, "Work first", "Memory last"): into bound_s[i] a lower bound on the
 * step time of every non-NULL rqs[i], its class's (bound.h bound_step_work: one graph at one micro-batch for the
 * layouts that differ only in ZeRO and the overlaps), and into out[i] the OOM verdict of a layout whose static
 * memory alone does not fit (bound 0), invalid where it is, else PRED_OK with how PRED_HOW_NONE: its memory
 * verdict not yet known (pool_verdict). */
void pool_bounds(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out, double *bound_s);
/* The layout's own bound (bound.h bound_step, from its graph at one micro-batch; 0 where it is invalid), at
 * least pool_bounds' of its class; cached in `cache` as pool_verdict's. */
double pool_bound(const sim_request *rq, GHashTable *cache);
/* The memory verdict of rq, pool_verdicts' for one request (at its first replay's count), here; cached by what
 * it depends on in `cache` (NULL: none; else a table made by g_hash_table_new_full(g_str_hash, g_str_equal,
 * g_free, g_free)). */
prediction pool_verdict(const sim_request *rq, const pool_cfg *cfg, GHashTable *cache);

/* Evaluate every non-NULL rqs[i] into out[i]; out[i] of a NULL request is left as it is. A request
 * that fails becomes PRED_INVALID with its reason; nothing stops the batch. */
void pool_run(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out);

#endif
