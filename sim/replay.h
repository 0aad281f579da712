/* replay -- executes a task graph on a SimGrid platform: one actor per GPU
 * rank running its program in order; compute events as executions on the
 * GPU host (duration from platforms/kernel_cost), send/recv as rendezvous
 * communications, collectives as NCCL-style rings of point-to-point
 * communications (collective.h), so that contention emerges from the
 * network model.
 *
 * SimGrid's engine is a process-wide singleton: without replay_prepare,
 * replay_run may be called once per process (callers that simulate many
 * layouts fork first). replay_prepare creates the engine and builds the
 * platform beforehand, so that every process forked from the one that
 * prepared it replays on it without building it again (the pool's zygotes:
 * analysis/zygote.h; the build was a fifth of a sweep's CPU time,
 * docs/sweep.md "Speed"); on a prepared engine replay_run may be called
 * again and again, each run starting SimGrid's clock from 0 as a fresh
 * engine does (the same results to the last bit), as long as
 * replay_reusable says so (the pool's servers).
 *
 * Owns: the SimGrid glue and the only mutable engine state.
 * May not touch: models, layouts, metrics.
 */
#ifndef REPLAY_H
#define REPLAY_H

#include <glib.h>

#include "platforms/cluster.h"
#include "platforms/profile.h"
#include "workloads/graph.h"

typedef struct replay_options {
  /* SimGrid's own Paje trace (--paje-simgrid; --paje is written from the timeline, traces/paje.h):
   * NULL for none. Slow and memory-hungry: SimGrid 3.32 holds its events until the end of the run. */
  const char *simgrid_paje_path;
  gboolean simgrid_paje_links; /* also SimGrid's link bandwidth_used and host speed_used variables */
  /* simgrid_paje_path is the name to write of an output the caller holds (lsim_outset_open_named), which
   * it commits with its other outputs or removes: replay_run does neither (FALSE: it opens the path
   * through lsim_outfile and commits it once the run succeeded) */
  gboolean simgrid_paje_held;
  const char *log_threshold; /* e.g. "critical" (default) */
  /* --platform-file: a SimGrid platform of the user's instead of the built one (platforms/cluster.h
   * plat_file_check has checked it and names its hosts); NULL: the cluster of the profile */
  const char *platform_file;
  int nccl_algo; /* --nccl-algo: a coll_algo (sim/collective.h), 0 (auto): NCCL's tuner chooses */
} replay_options;

typedef struct replay_rank {
  int n_events;   /* events of the program's source (its own, or its mirror_of's) */
  int first;      /* first event index this rank executed (active_from for a mirror) */
  double *start_s; /* [n_events], NAN where not executed */
  double *end_s;
  double finish_s;
} replay_rank;

typedef struct replay_result {
  int world_size;
  double step_time_s;
  replay_rank *ranks;
  /* what ran: "LABEL COLLECTIVE ALGORITHM x COUNT" per kind of call, comma-separated, each call of a
   * group counted once ("" when none) */
  char *coll_algos;
} replay_result;

/* Create SimGrid's engine and build the platform pp now, as replay_run would with options o (NULL: the
 * defaults), for a later replay_run in this process or a process forked from it. FALSE (nothing done)
 * when o asks for what is only set up in the run itself: SimGrid's trace or a platform file. Once per
 * process, before any replay_run; a replay_run after it on another platform or other options fails, and so
 * does one after a run that left the engine unclean (replay_reusable). */
gboolean replay_prepare(const plat_params *pp, const replay_options *o);

/* Whether this process's prepared engine may run another replay_run: TRUE after replay_prepare and after
 * each run that ended clean; FALSE without replay_prepare, and once a run deadlocked (its actors killed
 * mid-activity) or left a message nobody received. */
gboolean replay_reusable(void);

replay_result *replay_run(const graph *g, const gpu_profile *prof, const plat_params *pp, const replay_options *o,
                          GError **err);
void replay_result_free(replay_result *r);

#endif
