/* export -- a layout as the launch configuration of a training code: a Megatron-LM argument list, a NeMo 2 recipe
 * override (Python), a torchtitan TOML section. Every field the layout sets is written (tp, pp, virtual stages, cp,
 * sp, micro and global batch, sequence length, recompute granularity and method, distributed optimizer / ZeRO,
 * overlaps, schedule, attention kernel) with the model's dimensions, and what the target cannot express is a
 * comment naming it (docs/export.md has the mapping table).
 *
 * Owns: the mapping from a layout to each target's names. May not touch: simulation.
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <glib.h>

#include "simulate.h"

typedef enum { EXPORT_MEGATRON, EXPORT_NEMO, EXPORT_TORCHTITAN, EXPORT_N } export_target;

/* "megatron" | "nemo" | "torchtitan"; FALSE with err naming --export and the allowed values. */
gboolean export_parse_target(const char *s, export_target *out, GError **err);
/* The export of rq (a prepared request: sim_request_prepare has padded the vocabulary), appended to out. */
void export_layout(const sim_request *rq, export_target target, GString *out);

#endif
