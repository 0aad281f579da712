/* sweep_report -- what a sweep's canonical table (sweep.h) means for
 * people and programs: rows ranked within each platform point (layouts that
 * fit by step time, then those that do not by peak memory, then the invalid
 * ones; ties by enumeration index), the gap of each to the best with the
 * breakdown category that grew most, and the three formats. Merging shards
 * is reading their tables back: every output is a function of the rows.
 *
 * Owns: ranking, gap causes, text/CSV/JSON renderings, merge.
 * May not touch: simulation, enumeration.
 */
#ifndef SWEEP_REPORT_H
#define SWEEP_REPORT_H

#include <glib.h>

#include "csv.h"

typedef enum { SWEEP_TEXT, SWEEP_CSV, SWEEP_JSON } sweep_format;

typedef struct sweep_view {
  sweep_format format;
  int top;               /* layouts per platform point (0: text 10, CSV and JSON all) */
  gboolean show_invalid; /* text: list every invalid layout with its reason */
} sweep_view;

gboolean sweep_parse_format(const char *s, sweep_format *out, GError **err);
/* The ranked table: columns rank, gap_pct, gap_cause, then the canonical ones (caller frees). */
csv_table *sweep_rank(const csv_table *canonical);
/* The rendering of a ranked table in v's format, appended to out. */
void sweep_render(const csv_table *ranked, const sweep_view *v, GString *out);
/* Shard tables (canonical or ranked) joined into the canonical table of the whole run: every index
 * from 0 once, up to the count the shards' rows say the sweep enumerated (sweep.h; a table without
 * those columns, as the unsharded run writes: its rows). NULL with err naming the file on a bad or
 * overlapping shard, shards of different splits or sweep sizes, or a missing one. */
csv_table *sweep_merge(const char *const *paths, int n, GError **err);
/* The layout label of row r: "tp2 pp4 dp8 mb1 sp0 none flash2+rmsnorm", then each option the row sets
 * to other than the study's default, so that two different layouts never share a label: " cpN", the
 * schedule, " norm-K", " zeroN" (not 1), " overlap-grad", " overlap-param", the precision (not bf16)
 * (caller frees). */
char *sweep_layout_label(const csv_table *t, guint r);
/* The same without dp where swept is "gpus" (a plot's line is one layout over the GPU counts). */
char *sweep_layout_label_except(const csv_table *t, guint r, const char *swept);
/* The layout label, then the partition and the platform columns the table has (profile, stack, ib_gbps,
 * ..., fabric, ...): a measured row's whole setting but its model and GPUs (validate). Caller frees. */
char *sweep_row_label(const csv_table *t, guint r);
/* What a layout label adds for its schedule: "" for the study's 1F1B (or no schedule column), else
 * " NAME" and " vV" with V chunks per stage. Caller frees. */
char *sweep_schedule_suffix(const char *schedule, const char *virtual_stages);
/* What a layout label adds for context parallelism: "" for cp 1 (or no cp column), else " cpN". Caller frees. */
char *sweep_cp_suffix(const char *cp);
/* The platform label of row r: "profile a100-sxm4-80gb, 256 GPUs, ib_gbps 200, ..." (caller frees). */
char *sweep_platform_label(const csv_table *t, guint r);

#endif
