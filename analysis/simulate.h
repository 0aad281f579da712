/* simulate -- the whole path for one layout: model + layout -> task graph
 * -> SimGrid replay -> timeline -> metrics. One call per process (SimGrid's
 * engine is a singleton; predict forks a worker per row).
 *
 * Owns: sim_request / sim_outcome and the order of the stages.
 * May not touch: option parsing, output formats.
 */
#ifndef SIMULATE_H
#define SIMULATE_H

#include <glib.h>

#include "metrics.h"
#include "platforms/profile.h"
#include "sim/replay.h"
#include "traces/timeline.h"
#include "workloads/generate.h"
#include "workloads/layout.h"
#include "workloads/model.h"

typedef struct sim_request {
  model m;
  layout l;
  gen_options gen;
  gpu_profile prof;
  double capacity_gib; /* memory per GPU for the OOM verdict */
  replay_options replay;
} sim_request;

typedef struct sim_outcome {
  graph *g;
  replay_result *res;
  timeline tl;
  metrics *met;
  plat_params plat; /* the platform it was replayed on */
} sim_outcome;

/* Validate the layout against the model and the profile (tp inside a node) and fix the generator's
 * node size; where GPUs share NICs, turn the symmetry reduction off (docs/model.md). */
gboolean sim_request_prepare(sim_request *rq, GError **err);
/* The GPUs of an NVLink domain of `domain` GPUs (hosts of `host`) that tensor-parallel groups of tp use
 * with no group crossing the domain: the domain, or its largest part of whole hosts holding whole
 * groups; the domain when groups fill whole domains (tp a multiple of it); 0 where neither holds.
 * sim_request_prepare sets the request's profile's gpus_per_domain to it. */
int sim_domain_gpus_used(int domain, int host, int tp);
/* FALSE (err naming the option to change) when the simulation of a prepared request, or with `replay`
 * FALSE the generation of its graph alone, is estimated to take more memory than FOOTPRINT_BUDGET_BYTES
 * (footprint.h). */
gboolean sim_request_fits(const sim_request *rq, gboolean replay, GError **err);
/* Prepare, check that it fits (sim_request_fits), generate the graph and replay it. */
gboolean sim_run_layout(sim_request *rq, sim_outcome *out, GError **err);
/* Replay a given graph (takes ownership of g), unless its replay is estimated over the budget. */
/* Whether prof's tensor cores run FP8 GEMMs (fp8: peak_fp8_flops > 0) and MXFP8 ones (mx: its mxfp8 key);
 * field and value name the refused option or input and its value in the error (docs/precision.md). */
gboolean sim_precision_check(const gpu_profile *prof, gboolean fp8, gboolean mx, const char *field, const char *value,
                             GError **err);
gboolean sim_run_graph(graph *g, const gpu_profile *prof, double capacity_gib, const replay_options *ro,
                       sim_outcome *out, GError **err);
void sim_outcome_clear(sim_outcome *o);

#endif
