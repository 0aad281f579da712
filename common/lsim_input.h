/* lsim_input -- reading an input file whole, within bounds.
 *
 * Owns: the size cap of each kind of input file (the one place they are set; --help and docs/
 * quote them) and the read: only a regular file is read (a FIFO, a device such as /dev/zero, a
 * directory is refused before any byte is read, so a wrong name fails at once instead of reading
 * forever), and no more than its kind's cap (a larger one is refused, not loaded into memory).
 * May not touch: what the bytes mean.
 */
#ifndef LSIM_INPUT_H
#define LSIM_INPUT_H

#include <glib.h>

typedef enum {
  LSIM_INPUT_MODEL,   /* a model JSON file: 1 MiB (a real one is about 100 bytes) */
  LSIM_INPUT_PROFILE, /* a hardware profile JSON file: 1 MiB (the shipped one: 5 KB) */
  LSIM_INPUT_GRAPH,   /* a task graph JSON file: 1 GiB (reading it takes about 10 times that in memory: replay
                       * refuses one whose text and JSON tree exceed the memory budget, footprint.h) */
  LSIM_INPUT_PLATFORM, /* a SimGrid platform XML file (--platform-file): 64 MiB */
  LSIM_INPUT_TABLE,   /* a CSV table of layouts or measured runs: 64 MiB (the study's: 10 KB per 140 rows) */
  LSIM_INPUT_N
} lsim_input_kind;

#define LSIM_INPUT_MAX_MODEL_BYTES (1u << 20)
#define LSIM_INPUT_MAX_PROFILE_BYTES (1u << 20)
#define LSIM_INPUT_MAX_GRAPH_BYTES (1u << 30)
#define LSIM_INPUT_MAX_TABLE_BYTES (64u << 20)
#define LSIM_INPUT_MAX_PLATFORM_BYTES (64u << 20)

/* The cap of a kind, in bytes. */
gsize lsim_input_max_bytes(lsim_input_kind kind);
/* Read the whole of `path`, a regular file of at most the kind's cap, into *text (NUL-terminated,
 * caller frees) and *len; FALSE with one line naming the path, what it is and what is allowed. */
gboolean lsim_input_read(const char *path, lsim_input_kind kind, char **text, gsize *len, GError **err);

#endif
