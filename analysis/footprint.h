/* footprint -- how much memory a simulation will take, estimated before
 * anything is allocated, and the guard that refuses a request over budget.
 *
 * The estimate adds up every part that grows with the request: the events
 * of the explicit programs (one per stage with symmetry, every rank
 * without) and the replay's start and end time of each, the gradient
 * buckets among them (a large model's optimizer step alone can hold
 * millions of events), per rank its program, engine state and SimGrid
 * host and links (mirrored ranks included), per rank that runs an actor
 * its context, the platform's routes (inside each node, and one per pair
 * of nodes), SimGrid's Paje trace (--paje-simgrid), which SimGrid holds in
 * memory until the end, and the process itself. The event counts are
 * exact (gen_stage_events); the byte costs are measured (docs/model.md,
 * "How much memory a simulation takes"), and tests/test_footprint.c holds
 * the estimate to the measured peak RSS within a factor of two.
 *
 * Owns: the estimate, its budget, the refusal message. May not touch: what
 * is simulated.
 */
#ifndef FOOTPRINT_H
#define FOOTPRINT_H

#include <glib.h>

#include "simulate.h"

/* The most memory one simulation may take: a request estimated above it is refused before anything
 * is allocated, with the option to change. */
#define FOOTPRINT_BUDGET_GIB 8
#define FOOTPRINT_BUDGET_BYTES (FOOTPRINT_BUDGET_GIB * 1024.0 * 1024 * 1024)

/* The parts of the estimate, each with the option that shrinks it (footprint_check's message). */
typedef enum {
  FP_PROCESS,   /* libraries, SimGrid's engine, the model and profile: fixed */
  FP_EVENTS,    /* events of the explicit programs for the micro-batches, and their replayed times */
  FP_BUCKETS,   /* events of the optimizer step: gradient buckets and parameter all-gathers */
  FP_RANKS,     /* per rank: program, engine state, SimGrid host, links and routes inside its node */
  FP_ACTORS,    /* per rank that runs an actor (explicit ones; every rank when SimGrid traces) */
  FP_ROUTES,    /* the routes between every pair of nodes */
  FP_TRACE,     /* SimGrid's own Paje trace, held in memory until the end of the run */
  FP_N
} footprint_part;

typedef struct footprint {
  double bytes[FP_N];
  double total_bytes;
  /* what the parts count, for the message */
  gboolean of_request; /* l and model are the request's (FALSE: a graph file's) */
  layout l;
  char model[64];
  gboolean symmetric;  /* mirrors stand for most ranks (FALSE: every rank is explicit) */
  double ranks, explicit_ranks, actors, nodes, micro_batches;
  double events;        /* of the explicit programs, all of them */
  double bucket_events; /* of which the optimizer step's buckets and all-gathers */
  double trace_states;  /* state changes SimGrid's trace records */
} footprint;

const char *footprint_part_name(footprint_part p);

/* The estimate for a prepared request (sim_request_prepare): its graph and, with `replay`, its
 * replay (graph alone: what `layoutsim graph` holds). FALSE (err) when the stages cannot be
 * partitioned. */
gboolean footprint_of_request(const sim_request *rq, gboolean replay, footprint *out, GError **err);
/* The estimate of replaying a graph that is already in memory (a graph file): counted from it. */
void footprint_of_graph(const graph *g, const gpu_profile *prof, const replay_options *ro, footprint *out);
/* The most actors one replay may run on this system (vm.max_map_count: two mappings per actor). */
double footprint_max_actors(void);
/* FALSE (err naming the actors, over footprint_max_actors, or the largest part, its size and the option that shrinks it) when fp exceeds
 * budget_bytes. */
gboolean footprint_check(const footprint *fp, double budget_bytes, GError **err);

/* "27.8 GiB", "512.0 MiB" (exact: "8 GiB", "64 MiB" where whole): sizes in messages. Caller frees. */
char *footprint_format_bytes(double bytes, gboolean exact);

#endif
