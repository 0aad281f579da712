/* lsim_outfile -- atomic output files: write to a fresh temporary file
 * beside the target (PATH.XXXXXX, created exclusively, so no existing
 * file is ever touched), rename it over the target only when everything
 * was written, remove it otherwise. No reader ever sees half a file.
 *
 * Owns: the temp-file protocol. May not touch: what is written.
 */
#ifndef LSIM_OUTFILE_H
#define LSIM_OUTFILE_H

#include <glib.h>
#include <stdio.h>

typedef struct lsim_outfile {
  FILE *f;
  char *path, *tmp_path;
} lsim_outfile;

/* Create a temporary file for `path`; FALSE (error names the path) if it cannot be created
 * or `path` is a directory. */
gboolean lsim_outfile_open(lsim_outfile *tf, const char *path, GError **err);
/* Close and rename to the target; on any write error, remove the temporary file and fail. */
gboolean lsim_outfile_commit(lsim_outfile *tf, GError **err);
/* Close and remove the temporary file (after an error while producing the content, or after a
 * probe that only checks that the target can be written). */
void lsim_outfile_abort(lsim_outfile *tf);

#endif
