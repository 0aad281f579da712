/* sweep_plot -- the what-if picture of a sweep: MFU and step time against
 * the one swept platform axis (InfiniBand or NVLink bandwidth, NICs per
 * node, memory per GPU, or GPUs), a line per layout among the five best
 * (the five with the best rank at any point) and the best layout's MFU at
 * each point; the title records the model and the platform values.
 *
 * Owns: the SVG of a ranked sweep table. May not touch: ranking, simulation.
 */
#ifndef SWEEP_PLOT_H
#define SWEEP_PLOT_H

#include <glib.h>
#include <stdio.h>

#include "csv.h"

/* Write the picture of a ranked table (sweep_report.h) to path; FALSE with err when no platform
 * axis or more than one was swept, or the file cannot be written. */
gboolean sweep_plot(const csv_table *ranked, const char *path, GError **err);
/* The same to f (its write errors are f's: lsim_outfile checks them); FALSE, having written nothing,
 * for a table it cannot plot. */
gboolean sweep_plot_put(const csv_table *ranked, FILE *f, GError **err);

#endif
