/* plat_file -- what the profile and stack loaders share: a field table of numbers with
 * their allowed ranges, naming a shipped file or a path, and the messages of both.
 *
 * Owns: plat_field and its reading/writing. May not touch: what a field means.
 */
#ifndef PLAT_FILE_H
#define PLAT_FILE_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stddef.h>

typedef struct plat_field {
  const char *key;
  size_t off;       /* of a double in the struct */
  double lo, hi;    /* allowed range */
  gboolean integer; /* counts (SMs, tile sizes, GEMMs) */
  gboolean optional; /* the key may be left out of a file: it then reads `dflt` (and is not written where equal) */
  double dflt;
  unsigned tags;     /* the owner's bits (stack.h: STACK_KEY_*); plat_file never reads them */
} plat_field;

/* Read every field of the table from j into the struct at base (an optional one absent: its default): FALSE with
 * err naming the field. */
gboolean plat_file_read_fields(const cJSON *j, const plat_field *f, size_t n, void *base, const char *path,
                               GError **err);
/* Write the fields to j, all but the optional ones at their default. */
void plat_file_add_fields(cJSON *j, const plat_field *f, size_t n, const void *base);
/* "PATH: KEY = V is outside its allowed range [LO, HI]". */
void plat_file_out_of_range(GError **err, const char *path, const char *key, double v, double lo, double hi,
                            gboolean integer);
/* Whether a --profile / --stack value names a file (a '/' or ".json") rather than a shipped one. */
gboolean plat_file_names_a_file(const char *name);
/* The shipped file of `name` in the data directory `dir` (platforms/profiles, platforms/stacks), or
 * `name` itself when it names a file. Caller frees. */
char *plat_file_path(const char *dir, const char *name);
/* FALSE with err "WHAT: unknown 'NAME' (allowed: the shipped ones ...)" when `path`, the shipped file
 * of `name`, does not exist. */
gboolean plat_file_check_shipped(const char *what, const char *name, const char *path, GError **err);

#endif
