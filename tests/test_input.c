/* test_input -- what common/lsim_input reads: a regular file whole, up to the cap of its kind; never
 * a FIFO, a device or a directory (refused before any read, so /dev/zero or a FIFO without a writer
 * fails at once instead of reading or waiting forever); never more than the cap. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "check_tmpdir.h"
#include "common/lsim_input.h"

/* The error of reading `path` as `kind`; NULL if it was read (caller frees). */
static char *read_error(const char *path, lsim_input_kind kind)
{
  g_autofree char *text = NULL;
  gsize len;
  GError *err = NULL;
  if (lsim_input_read(path, kind, &text, &len, &err)) return NULL;
  char *msg = g_strdup(err->message);
  g_error_free(err);
  return msg;
}

START_TEST(test_a_regular_file_is_read_whole)
{
  g_autofree char *path = tmp_path("m.json");
  ck_assert(g_file_set_contents(path, "{\"a\":1}\n", -1, NULL));
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(lsim_input_read(path, LSIM_INPUT_MODEL, &text, &len, NULL));
  ck_assert_uint_eq(len, 8);
  ck_assert_str_eq(text, "{\"a\":1}\n");
}
END_TEST

/* A file of the cap is read; one byte more is refused naming its size, the kind and the cap. */
START_TEST(test_a_file_over_its_kinds_cap_is_refused)
{
  const struct { lsim_input_kind kind; gsize max; const char *allowed; } kinds[] = {
      {LSIM_INPUT_MODEL, 1u << 20, "(allowed: a model JSON file, a regular file of at most 1 MiB)"},
      {LSIM_INPUT_PROFILE, 1u << 20, "(allowed: a profile JSON file, a regular file of at most 1 MiB)"},
      {LSIM_INPUT_TABLE, 64u << 20, "(allowed: a CSV table, a regular file of at most 64 MiB)"},
      {LSIM_INPUT_GRAPH, 1u << 30, "(allowed: a task graph JSON file, a regular file of at most 1 GiB)"},
  };
  g_autofree char *path = tmp_path("big");
  ck_assert(g_file_set_contents(path, "", 0, NULL));
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
    ck_assert_uint_eq(lsim_input_max_bytes(kinds[i].kind), kinds[i].max);
    ck_assert_int_eq(truncate(path, (off_t)kinds[i].max + 1), 0); /* sparse: no disk used */
    g_autofree char *msg = read_error(path, kinds[i].kind);
    g_autofree char *want = g_strdup_printf("%s: is %zu bytes long %s", path, kinds[i].max + 1, kinds[i].allowed);
    ck_assert_msg(msg != NULL, "kind %zu: read", i);
    ck_assert_str_eq(msg, want);
  }
  ck_assert_int_eq(truncate(path, 1u << 20), 0);
  g_autofree char *at_cap = read_error(path, LSIM_INPUT_MODEL);
  ck_assert_msg(at_cap == NULL, "%s", at_cap);
}
END_TEST

START_TEST(test_a_device_fifo_or_directory_is_refused_before_any_read)
{
  g_autofree char *fifo = tmp_path("fifo");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0); /* no writer: opening it to read would wait forever */
  const struct { const char *path, *is; } cases[] = {
      {"/dev/zero", "is a character device"}, {fifo, "is a FIFO"}, {tmpdir, "is a directory"}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *msg = read_error(cases[i].path, LSIM_INPUT_MODEL);
    g_autofree char *want = g_strdup_printf("%s: %s, not a regular file (allowed: a model JSON file, a regular file of "
                                            "at most 1 MiB)", cases[i].path, cases[i].is);
    ck_assert_msg(msg != NULL, "%s: read", cases[i].path);
    ck_assert_str_eq(msg, want);
  }
}
END_TEST

/* A regular file whose size says 0 (a /proc file) is read to its end, as far as the cap. */
START_TEST(test_a_file_is_read_to_its_end_not_to_its_stated_size)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(lsim_input_read("/proc/self/status", LSIM_INPUT_TABLE, &text, &len, NULL));
  ck_assert_uint_gt(len, 0);
  ck_assert_ptr_nonnull(strstr(text, "Name:"));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("input");
  TCase *tc = tcase_create("files");
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  tcase_add_test(tc, test_a_regular_file_is_read_whole);
  tcase_add_test(tc, test_a_file_over_its_kinds_cap_is_refused);
  tcase_add_test(tc, test_a_device_fifo_or_directory_is_refused_before_any_read);
  tcase_add_test(tc, test_a_file_is_read_to_its_end_not_to_its_stated_size);
  suite_add_tcase(s, tc);
  return check_run(s);
}
