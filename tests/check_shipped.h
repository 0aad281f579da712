/* check_shipped -- the names of the shipped platform files, read from their directory (platforms/profiles,
 * platforms/stacks), so that no test keeps its own list of them: a file added or removed there is seen by
 * every test that reads the list from here. */
#ifndef CHECK_SHIPPED_H
#define CHECK_SHIPPED_H

#include <check.h>
#include <glib.h>
#include <string.h>

#include "common/lsim_json.h"

static inline int check_shipped_cmp(const void *a, const void *b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

/* The names (without .json) of the *.json files of data directory dir_name (located by lsim_data_path through
 * one file any_file it holds), sorted; caller frees. */
static inline GPtrArray *check_shipped_names(const char *dir_name, const char *any_file)
{
  g_autofree char *any = lsim_data_path(dir_name, any_file);
  g_autofree char *dir_path = g_path_get_dirname(any);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_msg(dir != NULL, "%s: not a directory", dir_path);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (const char *f; (f = g_dir_read_name(dir));)
    if (g_str_has_suffix(f, ".json")) g_ptr_array_add(names, g_strndup(f, strlen(f) - 5));
  g_dir_close(dir);
  g_ptr_array_sort(names, check_shipped_cmp);
  return names;
}

/* The shipped GPU profiles (platforms/profiles). */
static inline GPtrArray *check_shipped_profiles(void) { return check_shipped_names("platforms/profiles", "a100-sxm4-80gb.json"); }

#endif
