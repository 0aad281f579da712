/* test_profile -- what a profile file may hold: the documented fields and
 * the optional free-text `comment`, each key once; the shipped profiles and
 * a profile calibrate saves load back unchanged. */
#include <check.h>

#include "check_main.h"
#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_json.h"
#include "platforms/profile.h"

/* The shipped a100-sxm4-80gb profile as a tree to edit (caller deletes). */
static cJSON *shipped_tree(void)
{
  g_autofree char *path = lsim_data_path("platforms/profiles", "a100-sxm4-80gb.json");
  GError *err = NULL;
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, &err);
  ck_assert_msg(j != NULL, "%s", err ? err->message : "");
  return j;
}

/* Write j to a temporary file and load it as a profile; returns the error message with the
 * file's path replaced by "P" (caller frees), NULL if it loaded. */
static char *load_error(const cJSON *j, gpu_profile *out)
{
  GError *err = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("lsim-profile-XXXXXX.json", &path, &err);
  ck_assert_msg(fd >= 0, "tmp file: %s", err ? err->message : "?");
  close(fd);
  ck_assert(lsim_json_write_file(j, path, &err));
  gboolean ok = profile_load_file(path, out, &err);
  g_unlink(path);
  if (ok) return NULL;
  ck_assert(g_str_has_prefix(err->message, path));
  char *msg = g_strconcat("P", err->message + strlen(path), NULL);
  g_error_free(err);
  return msg;
}

START_TEST(test_every_shipped_profile_loads)
{
  g_autofree char *any = lsim_data_path("platforms/profiles", "a100-sxm4-80gb.json");
  g_autofree char *dir_path = g_path_get_dirname(any);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  for (const char *f; (f = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(f, ".json")) continue;
    g_autofree char *path = g_build_filename(dir_path, f, NULL);
    gpu_profile p;
    GError *err = NULL;
    ck_assert_msg(profile_load_file(path, &p, &err), "%s", err ? err->message : "");
    ck_assert_msg(p.comment[0], "%s: its comment was not read", f);
    n++;
  }
  g_dir_close(dir);
  ck_assert_int_ge(n, 2);
}
END_TEST

/* What calibrate writes (profile_save) is a profile file: it loads back to the same values, to the last
 * bit: a fitted constant such as 0.1 + 0.2 (0.30000000000000004) was written as cJSON's 15 digits, 0.3
 * (found by tests/fuzz/fuzz_profile.c). */
START_TEST(test_saved_profile_loads_back_unchanged)
{
  gpu_profile p, q;
  ck_assert(profile_load_named("a100-sxm4-80gb", &p, NULL));
  p.gemm_efficiency = 0.1 + 0.2;
  p.launch_overhead_s = 1.5389222735688401e-05;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("lsim-profile-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  GError *err = NULL;
  ck_assert(profile_save(&p, path, &err));
  ck_assert_msg(profile_load_file(path, &q, &err), "%s", err ? err->message : "");
  g_unlink(path);
  ck_assert_mem_eq(&p, &q, sizeof p);
}
END_TEST

/* A key given twice would be read from its first place, a misspelt key ignored (the field it
 * meant then missing, or a what-if silently not applied): both are errors naming the key, the
 * unknown one with the allowed keys. `comment` is optional, and a string. */
START_TEST(test_profile_file_takes_each_known_key_once)
{
  gpu_profile p;
  cJSON *dup = shipped_tree();
  cJSON_AddNumberToObject(dup, "gemm_efficiency", 0.1); /* cJSON appends a second member */
  g_autofree char *m_dup = load_error(dup, &p);
  ck_assert_str_eq(m_dup, "P: key 'gemm_efficiency' appears more than once (each key may appear once)");
  cJSON_Delete(dup);

  cJSON *typo = shipped_tree();
  cJSON_AddNumberToObject(typo, "gemm_eff", 0.5);
  g_autofree char *m_typo = load_error(typo, &p);
  ck_assert_msg(g_str_has_prefix(m_typo, "P: unknown key 'gemm_eff' (allowed: name, comment, gpus_per_node, "
                                         "nics_per_node, peak_flops, "),
                "%s", m_typo);
  ck_assert_ptr_nonnull(strstr(m_typo, ", attn_head_dim_half)"));
  cJSON_Delete(typo);

  cJSON *no_comment = shipped_tree();
  cJSON_DeleteItemFromObjectCaseSensitive(no_comment, "comment");
  g_autofree char *m_none = load_error(no_comment, &p);
  ck_assert_msg(m_none == NULL, "%s", m_none);
  ck_assert_str_eq(p.comment, "");
  cJSON_AddNumberToObject(no_comment, "comment", 5);
  g_autofree char *m_num = load_error(no_comment, &p);
  ck_assert_str_eq(m_num, "P: field 'comment' must be a string (got a number)");
  cJSON_Delete(no_comment);
}
END_TEST

/* NICs are shared by equal groups of GPUs: a count that does not divide the node is refused with the
 * counts that would. */
START_TEST(test_nics_must_divide_the_node)
{
  gpu_profile p;
  cJSON *t = shipped_tree();
  cJSON_ReplaceItemInObjectCaseSensitive(t, "nics_per_node", cJSON_CreateNumber(3));
  g_autofree char *m = load_error(t, &p);
  ck_assert_str_eq(m, "P: nics_per_node: 3 does not divide gpus_per_node = 8 (allowed: 1, 2, 4, 8)");
  cJSON_Delete(t);
}
END_TEST

/* A profile's name reaches the reports and traces as it is: printable UTF-8 of 1 to 63 bytes (struct
 * gpu_profile holds 64), refused naming the field otherwise, never cut. */
START_TEST(test_profile_name_is_printable_utf8_of_at_most_63_bytes)
{
  gpu_profile p;
  char a63[64], a64[65];
  memset(a63, 'b', 63);
  a63[63] = '\0';
  memset(a64, 'b', 64);
  a64[64] = '\0';
  g_autofree char *want64 = g_strdup_printf("P: name: \"%s\" is 64 bytes long", a64);
  struct { const char *name, *want; } cases[] = {
      {"a100\tx", "P: name: \"a100\\tx\" holds a control or format character"},
      {"a100\x80", "P: name: \"a100\\x80\" is not valid UTF-8"},
      {a64, want64},
      {a63, NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cJSON *t = shipped_tree();
    cJSON_ReplaceItemInObjectCaseSensitive(t, "name", cJSON_CreateString(cases[i].name));
    g_autofree char *m = load_error(t, &p);
    cJSON_Delete(t);
    if (!cases[i].want) {
      ck_assert_msg(m == NULL, "case %zu: %s", i, m);
      ck_assert_str_eq(p.name, cases[i].name);
      continue;
    }
    g_autofree char *want = g_strconcat(cases[i].want, " (allowed: printable UTF-8 text, 1 to 63 bytes)", NULL);
    ck_assert_msg(m != NULL, "case %zu loaded", i);
    ck_assert_str_eq(m, want);
  }
}
END_TEST

/* A value outside its range is shown as given: %.6g printed 108.0000001 (not an integer) as 108 and
 * 1.0000001 (above 1) as 1, values the message then called outside the range. */
START_TEST(test_profile_messages_show_the_number_as_given)
{
  gpu_profile p;
  static const struct { const char *key; double v; const char *want; } cases[] = {
      {"sm_count", 108.0000001, "P: sm_count = 108.0000001 is outside its allowed range [1, 10000] or not an integer"},
      {"gemm_efficiency", 1.0000001, "P: gemm_efficiency = 1.0000001 is outside its allowed range [0.05, 1]"},
      {"memory_gib", 0.0999999999, "P: memory_gib = 0.0999999999 is outside its allowed range [0.1, 100000]"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cJSON *t = shipped_tree();
    cJSON_ReplaceItemInObjectCaseSensitive(t, cases[i].key, cJSON_CreateNumber(cases[i].v));
    g_autofree char *m = load_error(t, &p);
    cJSON_Delete(t);
    ck_assert_msg(m != NULL, "case %zu loaded", i);
    ck_assert_str_eq(m, cases[i].want);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("profile");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, test_every_shipped_profile_loads);
  tcase_add_test(tc, test_saved_profile_loads_back_unchanged);
  tcase_add_test(tc, test_profile_file_takes_each_known_key_once);
  tcase_add_test(tc, test_nics_must_divide_the_node);
  tcase_add_test(tc, test_profile_name_is_printable_utf8_of_at_most_63_bytes);
  tcase_add_test(tc, test_profile_messages_show_the_number_as_given);
  suite_add_tcase(s, tc);
  return check_run(s);
}
