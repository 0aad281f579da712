/* paje -- the timeline as a Paje trace, the format pj_dump / pajeng and
 * Vite read and SimGrid's own tracing writes, streamed from the recorded
 * timeline after the run (SimGrid's tracing holds every event in memory
 * until the end of the run: tens of GB on large layouts).
 *
 * The containers are SimGrid's for the same platform (platforms/cluster.h):
 * under the root, a zone per node (type L1, node<n>) holding its GPU hosts
 * (HOST n<n>_g<g>, variables speed and core_count), its links (LINK
 * nvl_<n>_<g> and nic_<n>_<k>, and their directions ..._UP and ..._DOWN,
 * variables bandwidth and latency) and its switch (ROUTER sw<n>); with more
 * than one node the core link (LINK core) under the root. Every GPU rank,
 * mirrored ranks included, has a state of type gpu for each interval of the
 * timeline: forward, backward, recompute, tp-comm, pp-wait, dp-comm,
 * optimizer, idle. Per rank the states tile the step; an interval shorter
 * than the file's nanosecond resolution gets no state of its own (the one
 * before it lasts that much longer), so no state has zero length. Events
 * are in time order.
 *
 * With `links`, every link direction and the core carry a variable
 * bandwidth_used (bytes/s), derived from the timeline's communication
 * intervals, not measured by SimGrid: see paje.c for exactly how.
 *
 * Memory: one cursor per rank (tl_cursor) and, with links, the transfers
 * in flight; never the trace's events.
 *
 * Owns: the Paje layout of the timeline. May not touch: SimGrid, metrics.
 */
#ifndef PAJE_H
#define PAJE_H

#include <glib.h>
#include <stdio.h>

#include "platforms/cluster.h"
#include "timeline.h"

/* Write `tl`, replayed on the platform `pp`, to f (its errors are f's: lsim_outfile checks them);
 * `links` adds the links' bandwidth_used. */
void trace_paje_put(const timeline *tl, const plat_params *pp, gboolean links, FILE *f);
/* The same to `path` through lsim_outfile (atomically for a regular file). */
gboolean trace_paje_write(const timeline *tl, const plat_params *pp, gboolean links, const char *path, GError **err);

#endif
