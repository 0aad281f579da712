/* outputs -- the output files of a command checked before any work (each writable, named once, none
 * of the command's inputs) and opened as one set (common/lsim_outfile.h: all replaced or none).
 *
 * Owns: those checks. May not touch: what is written into the files.
 */
#ifndef OUTPUTS_H
#define OUTPUTS_H

#include <stdio.h>

#include "cli/options.h"
#include "common/lsim_outfile.h"

/* simulate, graph, replay, predict, validate, calibrate: -o, the traces, --trust-out. */
gboolean cli_outputs_writable(const cli_opts *o, GError **err);
/* sweep, merge: -o and --plot. */
gboolean cli_ranked_outputs_writable(const cli_opts *o, GError **err);
/* A FILE of `set` for `path`, or NULL when the option was not given; FALSE when it cannot be opened. */
gboolean cli_open_output(lsim_outset *set, const char *path, FILE **f, GError **err);

#endif
