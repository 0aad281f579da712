/* commands -- the table of layoutsim's commands: each one's name, the options it takes (a CMD_ bit,
 * cli/options.h), its synopsis and help entry, and the function that runs it. main dispatches through
 * it and `layoutsim help` lists it (cli/help.c); a new command is one entry here and its cmd_ file.
 *
 * Owns: the table and the commands' entry points. May not touch: what a command computes.
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <glib.h>

#include "cli/options.h"

typedef struct cli_command {
  const char *name;
  unsigned bit;         /* CMD_*: which options apply (cli/option_table.c) */
  const char *synopsis; /* "simulate [LAYOUT] [OUTPUT]" */
  const char *help;     /* its entry, lines separated by '\n' */
  int (*run)(cli_opts *); /* the exit status */
} cli_command;

extern const cli_command CLI_COMMANDS[];
extern const size_t CLI_N_COMMANDS;

/* The command named `name`, or NULL. */
const cli_command *cli_command_find(const char *name);
/* "simulate, graph, ..., help": the allowed values of COMMAND, for error messages. Caller frees. */
char *cli_command_names(void);

/* The commands (cli/cmd_layout.c, cmd_table.c, cmd_sweep.c). */
int cli_cmd_simulate(cli_opts *o);
int cli_cmd_graph(cli_opts *o);
int cli_cmd_replay(cli_opts *o);
int cli_cmd_predict(cli_opts *o);
int cli_cmd_validate(cli_opts *o);
int cli_cmd_calibrate(cli_opts *o);
int cli_cmd_sweep(cli_opts *o);
int cli_cmd_merge(cli_opts *o);

#endif
