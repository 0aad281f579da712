/* svg -- dependency-free SVG pictures of one simulated step:
 *  - a Gantt chart: one row per GPU (or, above `max_gpu_rows` GPUs, one row
 *    per pipeline stage of data-parallel replica 0, tensor rank 0, labelled
 *    so), one colour per category with a legend, idle and pipeline waits
 *    (the bubble) visible, a time axis in seconds, step time and MFU in the
 *    title;
 *  - memory over time: one curve per pipeline stage, each stage's peak
 *    marked and the highest labelled, the GPU capacity as a dashed line.
 * Sizes stay bounded however many events a step has: adjacent slices of
 * one category are merged, and runs narrower than a pixel are pooled into
 * one rectangle coloured by the category that dominates it; the memory
 * curve keeps the maximum per pixel column.
 *
 * Owns: SVG geometry and colours. May not touch: SimGrid, metrics (the step
 * time and MFU come in as numbers).
 */
#ifndef SVG_H
#define SVG_H

#include <glib.h>
#include <stdio.h>

#include "timeline.h"

typedef struct trace_svg_info {
  double mfu;        /* model FLOPs utilisation in [0,1]; < 0: unknown, not shown */
  int max_gpu_rows;  /* above this many GPUs draw one row per stage (0: 64) */
} trace_svg_info;

/* The Gantt chart to f (its errors are f's: lsim_outfile checks them), or to `path` through lsim_outfile. */
void trace_svg_timeline_put(const timeline *tl, const trace_svg_info *info, FILE *f);
gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err);
/* Ranks the Gantt chart draws, one per row (freed with tl_ranks_clear); *per_stage says which layout. */
void trace_svg_rows(const timeline *tl, int max_gpu_rows, tl_ranks *rows, gboolean *per_stage);

/* The memory plot to f, or to `path` through lsim_outfile. */
void trace_svg_memory_put(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, FILE *f);
gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err);

#endif
