/* layoutsim -- command-line entry: the version, the help, and the command of argv[1] run through the
 * command table (cli/commands.h) with its options parsed (cli/options.h). Every error from user input
 * ends as one line on stderr and exit status 2 (cli/fail.h); a report that cannot be written is one too.
 *
 * Owns: dispatch. May not touch: what a command does (cli/cmd_*.c), the help text (cli/help.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/help.h"

/* help COMMAND (or COMMAND --help): the command's help, or an error naming the commands. */
static int help_command(const char *name)
{
  const cli_command *c = cli_command_find(name);
  if (!c && strcmp(name, "help")) {
    g_autofree char *allowed = cli_command_names();
    g_autofree char *msg = g_strdup_printf("help: unknown command '%s' (allowed: %s)", name, allowed);
    return cli_fail_msg(msg);
  }
  g_autoptr(GString) text = g_string_new(NULL);
  cli_help_command(text, c);
  fwrite(text->str, 1, text->len, stdout);
  return 0;
}

/* A report that could not be written (a full disk, a closed pipe) is a failure, not a success. */
static int stdout_flushed(int rc)
{
  if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
  fprintf(stderr, "layoutsim: cannot write standard output (%s)\n", g_strerror(errno));
  return rc ? rc : 2;
}

int main(int argc, char **argv)
{
  if (argc > 3 && !strcmp(argv[1], "help")) { /* help takes one command: a second word is a mistake, not ignored */
    g_autofree char *msg = g_strdup_printf("help: unexpected argument '%s' (allowed: layoutsim help [COMMAND])", argv[3]);
    return cli_fail_msg(msg);
  }
  if (argc == 3 && !strcmp(argv[1], "help")) return stdout_flushed(help_command(argv[2]));
  if (argc < 2) { /* no command is bad input */
    g_autofree char *allowed = cli_command_names();
    fprintf(stderr, "layoutsim: no command (allowed: %s; layoutsim help explains them)\n", allowed);
    return 2;
  }
  if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    g_autoptr(GString) text = g_string_new(NULL);
    cli_help_all(text);
    fwrite(text->str, 1, text->len, stdout);
    return stdout_flushed(0);
  }
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--version")) {
      printf("layoutsim %s\n", LSIM_VERSION);
      return stdout_flushed(0);
    }
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return stdout_flushed(help_command(argv[1]));
  const cli_command *c = cli_command_find(argv[1]);
  if (!c) {
    g_autofree char *allowed = cli_command_names();
    g_autofree char *msg = g_strdup_printf("unknown command '%s' (allowed: %s)", argv[1], allowed);
    return cli_fail_msg(msg);
  }
  cli_opts o;
  cli_opts_init(&o);
  GError *err = NULL;
  int rc = cli_parse(&o, c->name, c->bit, argc - 1, argv + 1, &err) ? c->run(&o) : cli_fail(err);
  cli_opts_clear(&o);
  return stdout_flushed(rc);
}
