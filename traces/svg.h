/* svg -- dependency-free SVG pictures of one simulated step:
 *  - a Gantt chart: one row per distinct timeline. GPUs of a stage whose
 *    intervals are the same (category, start, end and micro-batch, compared
 *    interval by interval: mirrored ranks of a symmetric run, and those a
 *    --no-symmetry run happens to give the same times) share one row,
 *    labelled with the ranks it stands for ("stage 1: ranks 8-15"). With
 *    more than `max_gpu_rows` distinct timelines, one row per pipeline
 *    stage, its first rank, labelled so. One colour per category; the
 *    legend names only those the rows show. Idle and pipeline waits (the
 *    bubble) visible, a time axis in seconds, step time and MFU in the
 *    title; optionally only a window of the step (trace_svg_info.window);
 *  - memory over time: one curve per pipeline stage, each stage's peak
 *    marked and the highest labelled, the GPU capacity as a dashed line.
 * Sizes stay bounded however many events a step has: adjacent slices of
 * one category are merged into one bar; consecutive bars narrower than a
 * pixel are drawn per pixel column as stacked shares of the column's time
 * (each category's height its share of the time, in the legend's order),
 * neighbouring columns with the same stack as one block; the memory curve
 * keeps the maximum per pixel column.
 * No two texts collide: widths are measured conservatively (DejaVu Sans,
 * rounded up), the plot starts right of the widest row label, row labels
 * are thinned (each stage's first row first) where rows are closer than a
 * line, a long list of ranks is cut, tick labels are thinned to 1, 2, 5,
 * 10, ... ticks apart where they would touch, and header lines wrap.
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
  int max_gpu_rows;  /* above this many distinct timelines draw one row per stage (0: 64) */
  const char *window; /* --svg-window START:END (seconds): draw only that part of the step; NULL: all */
  const char *platform; /* the platform values the step was simulated with, for the header; NULL: none */
} trace_svg_info;

/* Parse a --svg-window spec "START:END", seconds with 0 <= START < END; with step_s >= 0 also START <
 * step_s (END past the step is cut at its end when drawn). FALSE with err naming the option, the value
 * and what is allowed. */
gboolean trace_svg_window_parse(const char *spec, double step_s, double *start_s, double *end_s, GError **err);

/* The Gantt chart to f (its errors are f's: lsim_outfile checks them), or to `path` through lsim_outfile. */
void trace_svg_timeline_put(const timeline *tl, const trace_svg_info *info, FILE *f);
gboolean trace_svg_timeline(const timeline *tl, const trace_svg_info *info, const char *path, GError **err);

/* The memory plot to f, or to `path` through lsim_outfile. */
void trace_svg_memory_put(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, FILE *f);
gboolean trace_svg_memory(const timeline *tl, const tl_mem_model *mm, double capacity_bytes, const char *path,
                          GError **err);

#endif
