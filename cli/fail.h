/* fail -- how a command refuses: one line on standard error, "layoutsim: MSG", and exit status 2
 * (the README's contract for bad input), whatever the quoted values hold.
 *
 * Owns: the refusal line. May not touch: what is refused.
 */
#ifndef FAIL_H
#define FAIL_H

#include <glib.h>

#include "cli/options.h"

/* One line on stderr, "layoutsim: MSG". */
void cli_say(const char *msg);
/* Say err's message, free it; 2. */
int cli_fail(GError *err);
/* Say msg; 2. */
int cli_fail_msg(const char *msg);
/* 0 when the command was given no positional argument, else 2 having said so. */
int cli_no_positional(const cli_opts *o, const char *cmd);

#endif
