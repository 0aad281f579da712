/* help -- `layoutsim help` generated from the command table (cli/commands.h) and the option table
 * (cli/option_table.h): the usage, the commands, each section's options with their help, and in
 * sweep's help the options that take a list; `help COMMAND` keeps the command's entry and only the
 * options that apply to it.
 *
 * Owns: the layout of the help text and its fixed paragraphs. May not touch: what an option means.
 */
#ifndef HELP_H
#define HELP_H

#include <glib.h>

#include "cli/commands.h"

/* The whole help (layoutsim --help). */
void cli_help_all(GString *out);
/* help COMMAND: the usage line, the command's entry, the options of `command` (a CMD_ bit; CMD_ALL: every
 * option), the closing paragraphs. `c` NULL: help help. */
void cli_help_command(GString *out, const cli_command *c);
/* The option sections of `command` alone (CMD_ALL: every option), each "\nTITLE\n" and its options, the
 * sections of no option left out; for sweep and CMD_ALL each section ends with the note of its list options. */
void cli_help_options(GString *out, unsigned command);

#endif
