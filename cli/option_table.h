/* option_table -- every command-line option declared once: its names, its argument, the commands it
 * applies to, its value (type and range, or the parser of its names), where it is stored, whether a
 * sweep takes a list of it and where that list goes, and its help text. getopt's option array, the
 * commands an option applies to, the range checks, the sweep's lists and `layoutsim help` are all
 * generated from this one table (cli/options.c, cli/help.c).
 *
 * Adding an option: one entry in CLI_OPTIONS (cli/option_table.c), and a setter there only where the
 * value is none of the generic kinds. Owns: the table. May not touch: how a command uses the values.
 */
#ifndef OPTION_TABLE_H
#define OPTION_TABLE_H

#include <glib.h>
#include <stddef.h>

struct cli_opts;

typedef enum { CLI_ARG_NONE, CLI_ARG_REQUIRED, CLI_ARG_OPTIONAL } cli_arg;

/* The sections of the help text, in its order. */
typedef enum { CLI_SEC_LAYOUT, CLI_SEC_PLATFORM, CLI_SEC_OUTPUT, CLI_SEC_RUN, CLI_SEC_CALIBRATE, CLI_SEC_N } cli_section;

typedef enum {
  CLI_V_FLAG,   /* no value: stores flag_value (an int) at field */
  CLI_V_BOOL,   /* 0, 1, true, false, on, off (alone: on), a gboolean at field */
  CLI_V_INT,    /* an integer from lo to hi, an int at field */
  CLI_V_ENUM,   /* a name that parse turns into an int at field */
  CLI_V_STRING, /* the argument itself, a const char * at field */
  CLI_V_WHATIF, /* a what-if of axis `axis` (platforms/whatif.h, its ranges), in cli_opts.whatif */
  CLI_V_REAL,   /* a number that parse_real checks, a double at field */
  CLI_V_CUSTOM, /* set does it all */
} cli_value;

/* Where a sweep puts the list of an option (analysis/sweep.h sweep_spec). */
typedef enum {
  CLI_LIST_NONE, /* the option takes one value in sweep too */
  CLI_LIST_LAYOUT, /* sweep_spec.layout[axis] (a sweep_layout_axis) */
  CLI_LIST_WHATIF, /* sweep_spec.whatif[axis] (a whatif_axis) */
  CLI_LIST_FOLDED, /* sweep_spec.folded[axis] (a folded axis_id of workloads/axes.h: ep, etp) */
  CLI_LIST_IMBALANCE, /* sweep_spec.moe_imbalance (doubles) */
  CLI_LIST_GPUS, CLI_LIST_PROFILES, CLI_LIST_STACKS,
} cli_list;

typedef struct cli_option {
  const char *name;     /* the long name, without "--" */
  int short_name;       /* 'o' for -o; 0: none */
  const char *alias;    /* a synonym long name (the same option: given both, it is given twice); NULL: none */
  const char *same_as;  /* another option this one is a spelling of (--no-zero1: --zero 0): given both, twice */
  cli_arg arg;
  const char *metavar;  /* the value in the help ("N"; an optional one as written after the name: "[=0|1]") */
  unsigned commands;    /* CMD_* (options.h) it applies to; anywhere else it is refused */
  cli_value value;
  long lo, hi;          /* CLI_V_INT: the range */
  gboolean (*parse)(const char *s, int *out, GError **err); /* CLI_V_ENUM */
  gboolean (*parse_real)(const char *s, double *out, GError **err); /* CLI_V_REAL */
  int axis;             /* CLI_V_WHATIF and CLI_LIST_WHATIF: the whatif_axis; CLI_LIST_LAYOUT: the sweep_layout_axis;
                         * CLI_LIST_FOLDED: the axis_id */
  size_t field;         /* offsetof(cli_opts, ...) of the value */
  size_t given_field;   /* offsetof(cli_opts, ...) of a gboolean set when the option is given; 0: none */
  int flag_value;       /* CLI_V_FLAG: what it stores */
  gboolean (*set)(struct cli_opts *o, const char *arg, GError **err); /* CLI_V_CUSTOM */
  gboolean repeatable;  /* may be given more than once (each value to set; --stack-set); else refused the second time */
  cli_list list;        /* sweep: where its comma-separated list goes; CLI_LIST_NONE: one value */
  gboolean ranges;      /* sweep: LO-HI in its list stands for every integer from LO to HI */
  const char *left_out; /* sweep, a list option left out: what it covers */
  const char *example;  /* a valid value (the tests parse it); NULL for an option without one */
  cli_section section;
  const char *help;     /* its help, lines separated by '\n' (laid out by cli/help.c) */
} cli_option;

extern const cli_option CLI_OPTIONS[];
extern const size_t CLI_N_OPTIONS;
/* At most this many options (cli_opts.given holds one slot per option). */
#define CLI_MAX_OPTIONS 96

/* The option named `long_name` (its name or alias), or NULL. */
const cli_option *cli_option_find(const char *long_name);
/* The option of short name c, or NULL. */
const cli_option *cli_option_find_short(int c);
/* The help title of a section ("LAYOUT options:"). */
const char *cli_section_title(cli_section s);

#endif
