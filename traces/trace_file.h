/* trace_file -- atomic output files for the trace writers: write to a
 * temporary file beside the target, rename over it only when everything
 * was written, remove it otherwise. No reader ever sees half a trace.
 *
 * Owns: the temp-file protocol. May not touch: what is written.
 */
#ifndef TRACE_FILE_H
#define TRACE_FILE_H

#include <glib.h>
#include <stdio.h>

typedef struct trace_file {
  FILE *f;
  char *path, *tmp_path;
} trace_file;

/* Open a temporary file for `path`; FALSE (error names the path) if it cannot be created. */
gboolean trace_file_open(trace_file *tf, const char *path, GError **err);
/* Close and rename to the target; on any write error, remove the temporary file and fail. */
gboolean trace_file_commit(trace_file *tf, GError **err);
/* Close and remove the temporary file (after an error while producing the content). */
void trace_file_abort(trace_file *tf);

#endif
