/* check_tmpdir -- a fresh directory for each test (a Check checked fixture:
 * tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown)), removed with
 * whatever the test left in it. tmp_path names a file inside it. */
#ifndef CHECK_TMPDIR_H
#define CHECK_TMPDIR_H

#include <check.h>
#include <glib.h>
#include <stdlib.h>

static char *tmpdir;

static void tmpdir_setup(void)
{
  tmpdir = g_dir_make_tmp("layoutsim-test-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmpdir);
}

static void tmpdir_teardown(void)
{
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  g_clear_pointer(&tmpdir, g_free);
}

/* A newly allocated path inside the test's directory. */
static char *tmp_path(const char *name) { return g_build_filename(tmpdir, name, NULL); }

#endif
