/* check_main -- run one Check suite and turn its result into an exit status. */
#ifndef CHECK_MAIN_H
#define CHECK_MAIN_H

#include <check.h>

static inline int check_run(Suite *s)
{
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

#endif
