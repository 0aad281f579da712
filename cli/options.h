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
  unsigned command_bit;  /* CMD_*: the command being run (set by cli_parse) */
  sim_request rq;
  const char *model_name, *model_file, *profile_name;
  gboolean model_set;    /* --model given (a conflict with --model-file) */
  int vocab;             /* 0: model's own */
  double gpu_memory_gib; /* 0: profile's */
  double ib_gbps, nvlink_gbps; /* 0: profile's */
  int nics_per_node;     /* 0: profile's */
  gboolean global_batch_set;
  const char *format;    /* text | json */
  const char *output;    /* -o */
  const char *chrome_trace, *timeline_svg, *timeline_csv, *memory_svg;
  const char *paje;      /* --paje: written from the timeline (--paje-simgrid is rq.replay's) */
  gboolean paje_links;   /* --paje-links: link variables in both Paje traces */
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

/* The commands, as bits: which options apply to which command. */
enum {
  CMD_SIMULATE = 1 << 0, CMD_GRAPH = 1 << 1, CMD_REPLAY = 1 << 2, CMD_PREDICT = 1 << 3, CMD_VALIDATE = 1 << 4,
  CMD_CALIBRATE = 1 << 5, CMD_ALL = (1 << 6) - 1
};

void cli_opts_init(cli_opts *o);
void cli_opts_clear(cli_opts *o);
/* Parse argv (after the subcommand `command`, one CMD_ bit, named command_name in messages) into o.
 * An option the command does not use is an error, and so is a combination that means nothing. */
gboolean cli_parse(cli_opts *o, const char *command_name, unsigned command, int argc, char **argv, GError **err);
/* Whether the long option `long_name` applies to `command` (TRUE for names that are not options). */
gboolean cli_option_applies(const char *long_name, unsigned command);
/* Resolve model/profile/overrides into o->rq (needs_model FALSE for replay). */
gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err);
/* Apply platform what-ifs (--ib-gbps, --nvlink-gbps, --nics-per-node) to a profile. */
void cli_apply_platform_overrides(const cli_opts *o, gpu_profile *p);

gboolean cli_parse_positive_int(const char *opt, const char *s, int *out, GError **err);

#endif
