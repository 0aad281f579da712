/* svg -- dependency-free SVG pictures of one simulated step:
 *  - a Gantt chart: one row per distinct timeline. GPUs of a stage whose
 *    intervals are the same (category, start, end and micro-batch, compared
 *    interval by interval: mirrored ranks of a symmetric run, and those a
 *    --no-symmetry run happens to give the same times) share one row,
 *    labelled with the ranks it stands for ("stage 1: ranks 8-15"). With
 *    more than `max_gpu_rows` distinct timelines, one row per pipeline
 *    stage, its first rank, labelled so. One colour per category with a
 *    legend, idle and pipeline waits (the bubble) visible, a time axis in
 *    seconds, step time and MFU in the title;
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

#include "timeline.h"

typedef struct trace_svg_info {
  double mfu;        /* model FLOPs utilisation in [0,1]; < 0: unknown, not shown */
  int max_gpu_rows;  /* above this many distinct timelines draw one row per stage (0: 64) */
} trace_svg_info;

gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err);

gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err);

#endif
