/* fuzz_common -- what the libFuzzer harnesses of tests/fuzz/ share (docs/hardening.md).
 *
 * Owns: the input as a file (the loaders read paths, as layoutsim does: the bytes go to a file in a
 * directory of this process's own, rewritten for each input, so that lsim_input_read's checks run
 * too), and the contract every fallible call keeps: FALSE (or NULL) with one error set, TRUE with
 * none, a message that is not empty. A broken contract, like a property a harness checks, is
 * reported by fuzz_require, which aborts: libFuzzer keeps the input as a crash.
 * May not touch: what a harness fuzzes.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A property that must hold whatever the input: else a message and abort(). */
#define fuzz_require(cond, ...)                                                                                      \
  do {                                                                                                               \
    if (!(cond)) {                                                                                                   \
      fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                                  \
      fputc('\n', stderr);                                                                                           \
      abort();                                                                                                       \
    }                                                                                                                \
  } while (0)

static char *fuzz_dir;
static GHashTable *fuzz_paths; /* name -> path, kept for the process */

static inline void fuzz_remove_dir(void)
{
  GHashTableIter it;
  gpointer path;
  g_hash_table_iter_init(&it, fuzz_paths);
  while (g_hash_table_iter_next(&it, NULL, &path)) g_unlink(path);
  g_rmdir(fuzz_dir);
}

/* The path of a file named `name` in this process's directory (made on first use, removed at a normal exit). */
static inline const char *fuzz_path(const char *name)
{
  if (!fuzz_dir) {
    fuzz_dir = g_dir_make_tmp("layoutsim-fuzz-XXXXXX", NULL);
    fuzz_require(fuzz_dir != NULL, "cannot make a temporary directory");
    fuzz_paths = g_hash_table_new(g_str_hash, g_str_equal);
    atexit(fuzz_remove_dir);
  }
  char *path = g_hash_table_lookup(fuzz_paths, name);
  if (!path) {
    path = g_build_filename(fuzz_dir, name, NULL);
    g_hash_table_insert(fuzz_paths, g_strdup(name), path);
  }
  return path;
}

/* The input written whole to the file `name` of fuzz_path; its path. */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
  const char *path = fuzz_path(name);
  FILE *f = fopen(path, "wb");
  fuzz_require(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
  return path;
}

/* The contract of a fallible call: ok with no error, or not ok with one that says something. */
static inline void fuzz_check_result(gboolean ok, const GError *err)
{
  fuzz_require(ok == (err == NULL), "returned %s with %s error", ok ? "TRUE" : "FALSE", err ? "an" : "no");
  fuzz_require(ok || (err->message && *err->message), "an empty error message");
}

#endif
