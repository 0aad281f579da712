/* csv_timeline -- the timeline as one CSV row per interval, for pandas:
 * rank,stream,kind,name,start_s,end_s,micro_batch,layer. `kind` is the
 * category (forward, backward, recompute, tp-comm, pp-wait, dp-comm,
 * optimizer, idle), `stream` the GPU stream (compute, tp-comm, pp-comm,
 * dp-comm), `name` the operator (qkv, attention, send, all-reduce, ...).
 * Idle gaps are rows too (stream compute, name idle), so per rank the rows
 * tile [0, step time]. Streamed row by row.
 *
 * Owns: the CSV timeline columns. May not touch: SimGrid, metrics.
 */
#ifndef CSV_TIMELINE_H
#define CSV_TIMELINE_H

#include <glib.h>
#include <stdio.h>

#include "timeline.h"

#define TRACE_CSV_HEADER "rank,stream,kind,name,start_s,end_s,micro_batch,layer"

/* The intervals of the ranks `sel` to f (its errors are f's: lsim_outfile checks them). */
void trace_csv_put(const timeline *tl, const tl_ranks *sel, FILE *f);
/* The same to `path` through lsim_outfile (atomically for a regular file). */
gboolean trace_csv_write(const timeline *tl, const tl_ranks *sel, const char *path, GError **err);

#endif
