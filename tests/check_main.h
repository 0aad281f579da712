/* check_main -- run one Check suite and turn its result into an exit status. */
#ifndef CHECK_MAIN_H
#define CHECK_MAIN_H

#include <check.h>

static inline int check_run_mode(Suite *s, enum fork_status mode)
{
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, mode);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

/* Each test in a process of its own unless CK_FORK=no says otherwise (Check's default). */
static inline int check_run(Suite *s) { return check_run_mode(s, CK_FORK_GETENV); }

/* Each test in a process of its own whatever CK_FORK says: for suites whose tests change
 * process-wide state (signal dispositions, standard descriptors). */
static inline int check_run_forked(Suite *s) { return check_run_mode(s, CK_FORK); }

#endif
