/* chrome -- the timeline as Chrome trace-event JSON, the format Perfetto
 * (ui.perfetto.dev) and chrome://tracing open and the PyTorch profiler
 * writes: one process per node, one thread (track) per GPU stream (compute,
 * tp-comm, pp-comm, dp-comm), a slice per event named by operator, layer
 * and micro-batch, a parent slice per (phase, micro-batch) block on the
 * compute track, flow arrows from every pipeline send to its receive, and a
 * counter track of each GPU's memory. Times are microseconds with ns
 * resolution. Written by streaming: memory stays flat however many events.
 *
 * Owns: the Chrome JSON layout. May not touch: SimGrid, metrics.
 */
#ifndef CHROME_H
#define CHROME_H

#include <glib.h>
#include <stdio.h>

#include "timeline.h"

/* Write the ranks `sel` of `tl` to f (its errors are f's: lsim_outfile checks them). */
void trace_chrome_put(const timeline *tl, const tl_ranks *sel, const tl_mem_model *mm, FILE *f);
/* The same to `path` through lsim_outfile (atomically for a regular file). */
gboolean trace_chrome_write(const timeline *tl, const tl_ranks *sel, const tl_mem_model *mm, const char *path,
                            GError **err);

#endif
