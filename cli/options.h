/* options -- the command-line options of every command: parsing them (GNU long options, as the
 * option table, cli/option_table.h, declares them) into a sim_request, strictly (a bad value is an
 * error naming the option and the allowed values; an option given twice is refused, as a repeated
 * key of a JSON file or column of a table is), and the sweep's lists into a sweep_spec.
 *
 * Owns: parsing, value checks, the sweep's lists. May not touch: simulation.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <glib.h>

#include "analysis/pool.h"
#include "analysis/simulate.h"
#include "analysis/sweep.h"
#include "analysis/trust.h"
#include "platforms/whatif.h"
#include "cli/option_table.h"

typedef struct cli_opts {
  unsigned command_bit;  /* CMD_*: the command being run (set by cli_parse) */
  sim_request rq;
  const char *model_name, *model_file, *profile_name, *stack_name;
  gboolean partition_set; /* --partition given (else each stack's own)  */
  GHashTable *trusts;    /* trust tables by stack name (trust_lookup) */
  const trust_table *trust; /* the stack's, how far to trust a prediction (analysis/trust.h); NULL: none */
  gboolean model_set;    /* --model given (a conflict with --model-file) */
  gboolean stack_set;    /* --stack given; else simulate, graph, replay and sweep run the profile's default_stack */
  int vocab;             /* 0: model's own */
  plat_whatif whatif;    /* --ib-gbps, --nvlink-gbps, --nics-per-node, --gpu-memory; 0: the profile's */
  GArray *stack_sets;    /* --stack-set KEY=VALUE, in order (stack_setting: platforms/stack_set.h) */
  pool_fidelity fidelity; /* predict, validate, sweep --fidelity */
  const char *given[CLI_MAX_OPTIONS]; /* each option's argument as given, by its CLI_OPTIONS index ("" for
                                       * one without a value); NULL: not given. sweep: the raw lists */
  int top;               /* sweep, merge --top; 0: the format's default */
  gboolean show_invalid; /* sweep, merge --show-invalid */
  int space;             /* sweep --space: sweep_space (analysis/sweep.h) */
  gboolean exhaustive;   /* sweep --exhaustive: replay every layout that fits (no pruning by bound) */
  const char *plot;      /* sweep, merge --plot FILE.svg */
  int shard_i, shard_n;  /* sweep --shard I/N; 1/1 without */
  gboolean global_batch_set;
  const char *format;    /* text | json (sweep, merge: also csv) */
  const char *output;    /* -o */
  const char *export_target; /* simulate --export megatron|nemo|torchtitan: the layout as that code's configuration */
  const char *trust_out; /* validate --trust-out FILE: the trust table of the rows (analysis/trust.h) */
  const char *chrome_trace, *timeline_svg, *timeline_csv, *memory_svg;
  const char *paje;      /* --paje: written from the timeline (--paje-simgrid is rq.replay's) */
  gboolean paje_links;   /* --paje-links: link variables in both Paje traces */
  const char *trace_ranks; /* --trace-ranks / --chrome-ranks; NULL: default selection */
  const char *svg_window;  /* --svg-window START:END for --timeline-svg; NULL: the whole step */
  double max_seconds, max_memory_bytes; /* simulate, replay, sweep: --max-seconds, --max-memory (0: none; run_cost.h) */
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
  CMD_CALIBRATE = 1 << 5, CMD_SWEEP = 1 << 6, CMD_MERGE = 1 << 7, CMD_ALL = (1 << 8) - 1
};

void cli_opts_init(cli_opts *o);
void cli_opts_clear(cli_opts *o);
/* Parse argv (after the subcommand `command`, one CMD_ bit, named command_name in messages) into o.
 * An option the command does not use is an error, and so is a combination that means nothing. */
gboolean cli_parse(cli_opts *o, const char *command_name, unsigned command, int argc, char **argv, GError **err);
/* Resolve model/profile/overrides into o->rq (needs_model FALSE for replay). */
gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err);
/* The sweep's axes and fixed values from the options (the model resolved as cli_resolve does);
 * FALSE with err naming the option and the bad element of its list. */
gboolean cli_sweep_spec(cli_opts *o, sweep_spec *s, GError **err);
void cli_sweep_spec_clear(sweep_spec *s);

/* The largest integer an option without a range of its own takes. */
#define CLI_INT_MAX 1000000000
gboolean cli_parse_positive_int(const char *opt, const char *s, int *out, GError **err);
/* An integer in [lo, hi], strict as the CSV reader: no blank or sign. */
gboolean cli_parse_int_in(const char *opt, const char *s, long lo, long hi, int *out, GError **err);
gboolean cli_parse_bool(const char *opt, const char *s, gboolean *out, GError **err);
/* FALSE with "--opt: invalid value 's' (allowed: allowed)". */
gboolean cli_bad_value(GError **err, const char *opt, const char *s, const char *allowed);

#endif
