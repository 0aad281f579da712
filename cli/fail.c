/* fail -- see fail.h. */
#include "fail.h"

#include <stdio.h>

#include "common/lsim_error.h"

/* One line on stderr, "layoutsim: MSG", whatever the values quoted in msg hold. */
void cli_say(const char *msg)
{
  g_autofree char *line = lsim_one_line(msg);
  fprintf(stderr, "layoutsim: %s\n", line);
}

int cli_fail(GError *err)
{
  cli_say(err->message);
  g_error_free(err);
  return 2;
}

int cli_fail_msg(const char *msg)
{
  cli_say(msg);
  return 2;
}

int cli_no_positional(const cli_opts *o, const char *cmd)
{
  if (o->positional->len == 0) return 0;
  g_autofree char *arg = lsim_one_line(o->positional->pdata[0]);
  fprintf(stderr, "layoutsim %s: unexpected argument '%s' (see layoutsim help)\n", cmd, arg);
  return 2;
}
