/* options -- the command-line options shared by simulate, graph, replay, predict,
 * validate and calibrate: parsing them (GNU long options) into a sim_request, strictly
 * (a bad value is an error naming the option and the allowed values).
 *
 * Owns: option tables and number parsing. May not touch: simulation.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <glib.h>

#include "analysis/simulate.h"

typedef struct cli_opts {
  sim_request rq;
  const char *model_name, *model_file, *profile_name;
  int vocab;             /* 0: model's own */
  double gpu_memory_gib; /* 0: profile's */
  double ib_gbps, nvlink_gbps; /* 0: profile's */
  int nics_per_node;     /* 0: profile's */
  gboolean global_batch_set;
  const char *format;    /* text | json */
  const char *output;    /* -o */
  const char *chrome_trace, *timeline_svg, *timeline_csv, *memory_svg;
  const char *trace_ranks; /* --trace-ranks / --chrome-ranks; NULL: default selection */
  int jobs;              /* predict, validate, calibrate -j */
  int max_evals;         /* calibrate: 0 = default */
  gboolean calib_full;   /* calibrate: full simulations, no fast mode */
  gboolean calib_check_fast; /* calibrate: compare fast and full, fit nothing */
  const char *calib_fit; /* calibrate --fit: all | timing | memory; NULL = all */
  double prior_weight;   /* calibrate --prior-weight */
  gboolean prior_weight_set;
  GPtrArray *positional;
} cli_opts;

void cli_opts_init(cli_opts *o);
void cli_opts_clear(cli_opts *o);
/* Parse argv (after the subcommand). Fills o; loads model and profile unless a graph is replayed. */
gboolean cli_parse(cli_opts *o, int argc, char **argv, GError **err);
/* Resolve model/profile/overrides into o->rq (needs_model FALSE for replay). */
gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err);
/* Apply platform what-ifs (--ib-gbps, --nvlink-gbps, --nics-per-node) to a profile. */
void cli_apply_platform_overrides(const cli_opts *o, gpu_profile *p);

gboolean cli_parse_positive_int(const char *opt, const char *s, int *out, GError **err);

#endif
