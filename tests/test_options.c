/* test_options -- cli_parse as a function called more than once in a process (the tests and the fuzz
 * harness call it so; layoutsim once): each call reads its own argv only, whatever the one before
 * left behind. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "cli/options.h"

/* cli_parse of `line` (blank-separated, the command first) for simulate; its error message or NULL. */
static char *parse(const char *line, cli_opts *o)
{
  g_auto(GStrv) argv = g_strsplit(line, " ", -1);
  GError *err = NULL;
  cli_opts_init(o);
  gboolean ok = cli_parse(o, "simulate", CMD_SIMULATE, (int)g_strv_length(argv), argv, &err);
  char *msg = ok ? NULL : g_strdup(err->message);
  g_clear_error(&err);
  return msg;
}

/* An unknown short option in a cluster stops the parse with getopt inside the cluster: the next parse
 * resumed there, in the earlier (freed) argv, and took its 'j' for -j. */
START_TEST(test_a_parse_after_an_error_inside_an_option_cluster_reads_only_its_own_arguments)
{
  cli_opts o;
  g_autofree char *first = parse("simulate -qjx", &o);
  ck_assert_str_eq(first, "-q: unknown option (allowed: the options of layoutsim help simulate)");
  cli_opts_clear(&o);
  g_autofree char *second = parse("simulate --tp 2", &o);
  ck_assert_msg(second == NULL, "%s", second);
  ck_assert_int_eq(o.rq.l.tp, 2);
  cli_opts_clear(&o);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_a_parse_after_an_error_inside_an_option_cluster_reads_only_its_own_arguments);
  suite_add_tcase(s, tc);
  return check_run(s);
}
