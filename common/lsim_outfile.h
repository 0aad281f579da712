/* lsim_outfile -- output files, never left half-written where that can be
 * avoided. Every output of layoutsim (-o, --paje, --paje-simgrid,
 * --chrome-trace, --timeline-svg, ...) goes through here.
 *
 * - A regular file, or a name that does not exist yet: the content goes to
 *   a fresh temporary file beside the target (TARGET.XXXXXX, created
 *   exclusively, so no existing file is ever touched), renamed over the
 *   target only when everything was written, removed otherwise. No reader
 *   ever sees half a file.
 * - A symbolic link is followed (to the end of a chain, dangling or not):
 *   the temporary file goes beside the link's target and is renamed over
 *   the target, so the link stays a link.
 * - A name that exists and is not a regular file (a FIFO, a character
 *   device such as /dev/null or a terminal, /dev/stdout on a pipe) is
 *   opened and written directly: renaming over it would replace it. A
 *   block device is refused. A regular file that is this process's
 *   standard output or error (`-o /dev/stdout > log`) is written through
 *   that open file (a duplicate of its descriptor, so at its offset, in
 *   order with what the command prints there).
 *
 * - Killed by SIGINT, SIGTERM, SIGHUP or SIGPIPE, the process first removes
 *   the temporary files it has not committed (see the table in the .c file).
 * - The outputs of one run form a set (lsim_outset) committed together: all
 *   are closed and checked before any is renamed, so one that fails leaves
 *   every target as it was.
 *
 * Owns: the choice between the two, the temp-file protocol (and its cleanup
 * on those signals: the only process-wide state outside the engine), the one
 * "PATH: cannot write (REASON)" error. May not touch: what is written.
 */
#ifndef LSIM_OUTFILE_H
#define LSIM_OUTFILE_H

#include <glib.h>
#include <stdio.h>

typedef struct lsim_outfile {
  FILE *f;
  char *path;     /* the target as named (error messages) */
  char *dest;     /* what the temporary file replaces: path with symbolic links followed */
  char *tmp_path; /* the temporary file; NULL when the target is written directly */
  gboolean shared; /* the target is our own stdout or stderr, written through its descriptor */
  struct lsim_outfile_sink *sink; /* f's descriptor and the first error writing to it (private) */
} lsim_outfile;

/* Open `path` for writing as described above; FALSE (error names the path) if the temporary file
 * cannot be created, the direct target cannot be opened, or `path` is a directory. Opening a FIFO
 * waits for its reader. */
gboolean lsim_outfile_open(lsim_outfile *tf, const char *path, GError **err);
/* lsim_outfile_open for a writer that opens the file by name itself (SimGrid's Paje tracer): it
 * refuses our own stdout or stderr, which such a writer would truncate. */
gboolean lsim_outfile_open_named(lsim_outfile *tf, const char *path, GError **err);
/* The file `path` would end up in: symbolic links followed, canonical (newly allocated). Two outputs
 * with the same destination would overwrite each other. */
char *lsim_outfile_destination(const char *path);
/* Whether two names are one file: the same destination ("./t.svg" is "t.svg"; two links to one
 * target that does not exist yet), or one existing file (a hard link: same device and inode). */
gboolean lsim_outfile_same_target(const char *a, const char *b);
/* The name the content goes to: the temporary file, or the target when written directly. For a
 * writer that opens files by name itself (SimGrid's Paje tracer); tf->f stays open, unused. */
const char *lsim_outfile_write_path(const lsim_outfile *tf);
/* Close and rename to the target; on any write error, remove the temporary file and fail with the
 * first error's reason (a large output that fills /dev/full mid-way and a small one that fails at
 * the close both say "No space left on device"). lsim_outfile_close then lsim_outfile_publish. */
gboolean lsim_outfile_commit(lsim_outfile *tf, GError **err);
/* The first half of commit: close the stream and check that every byte reached the file; on an error
 * remove the temporary file (tf is then released) and fail with its reason. The temporary file stays
 * for lsim_outfile_publish (or lsim_outfile_abort). */
gboolean lsim_outfile_close(lsim_outfile *tf, GError **err);
/* The second half: rename the closed temporary file over the target (nothing to do for a target
 * written directly). */
gboolean lsim_outfile_publish(lsim_outfile *tf, GError **err);
/* Close (if still open) and remove the temporary file (after an error while producing the content, or
 * another output's). A target written directly keeps what was written to it. A no-op on a file
 * committed or aborted. */
void lsim_outfile_abort(lsim_outfile *tf);

/* The outputs of one run, committed together or not at all: open each, write them all, then
 * lsim_outset_commit closes every one, checking it, and only if all are whole renames them over
 * their targets; any failure removes every temporary file, so no target is replaced. (What went
 * straight into a FIFO or a device is gone: such a target cannot be taken back; and a rename that
 * fails after others succeeded, which needs the directory to change under the run, leaves those.) */
typedef struct lsim_outset {
  GPtrArray *files; /* lsim_outfile*, in the order opened */
} lsim_outset;
void lsim_outset_init(lsim_outset *set);
/* Open `path` in the set (lsim_outfile_open); its stream, or NULL with err. */
FILE *lsim_outset_open(lsim_outset *set, const char *path, GError **err);
/* lsim_outfile_open_named in the set: the name to give the writer that opens it itself, or NULL. */
const char *lsim_outset_open_named(lsim_outset *set, const char *path, GError **err);
/* Commit every file of the set, or none (above); the set is then empty and must be initialised again.
 * lsim_outset_close then lsim_outset_publish. */
gboolean lsim_outset_commit(lsim_outset *set, GError **err);
/* The first half: close and check every file, keeping the temporary files; on a failure remove them
 * all (the set is then empty). Between the halves a caller may write what cannot be taken back (a
 * summary on standard output) and abort the set if that fails. */
gboolean lsim_outset_close(lsim_outset *set, GError **err);
/* The second half: rename every closed file over its target. */
gboolean lsim_outset_publish(lsim_outset *set, GError **err);
/* Remove every temporary file of the set (open or closed); a no-op after a commit. */
void lsim_outset_abort(lsim_outset *set);
/* Install (again) the handlers that remove uncommitted temporary files on SIGINT, SIGTERM, SIGHUP
 * and SIGPIPE; opening a temporary file does it too. Call it after a library that installs its own
 * (simgrid_init replaces SIGINT's with one that calls exit). A signal ignored the first time this
 * runs stays ignored. */
void lsim_outfile_guard_signals(void);
/* Remove every temporary file this process has not committed, as a signal does (async-signal-safe): for
 * a run stopped by its limits (analysis/run_cost.h) before it _exits. */
void lsim_outfile_remove_pending(void);
/* Check, before any work, that `path` could be opened as above, without touching it: no FIFO is
 * opened (that would hand its reader an empty stream), no file created but a removed probe. */
gboolean lsim_outfile_check(const char *path, GError **err);

#endif
