/* pipeline_layout -- Megatron-Core's pipeline layout string (--pipeline-model-parallel-layout): which virtual
 * pipeline stage holds the embedding, which transformer layers and the loss (final norm and output head).
 *
 * Syntax (megatron/core/transformer/pipeline_parallel_layer_layout.py): virtual stages separated by '|';
 * in each, 'E' the embedding, 't' a transformer (decoder) layer, 'L' the loss; 'X*N' repeats a letter and
 * '(...)*N' a group (which may hold '|'); commas and spaces are cosmetic. Virtual stage v = c*pp + s holds
 * chunk c of stage s, as with the interleaved schedule. Example: Llama 3 405B's 126 layers on pp 16 with 4
 * chunks, embedding and loss each in place of a layer: "Et|(tt|)*62,tL".
 *
 * 'm' is a multi-token prediction module (Megatron's LayerType.mtp): a model with mtp_layers names exactly that many,
 * and here (docs/moe.md, "MTP") they stand right before L, in its stage (Megatron also lets them end the last chunk
 * of another stage: refused by name). They ride with the head item; they are not items of their own.
 *
 * Owns: parsing the string into item bounds. May not touch: schedules, hardware.
 */
#ifndef PIPELINE_LAYOUT_H
#define PIPELINE_LAYOUT_H

#include <glib.h>

/* Longest layout string accepted (the layout struct holds it). */
#define PIPELINE_LAYOUT_MAX 256

/* Turns `spec` into item bounds for `vstages` virtual stages of a model of `layers` layers: the items are
 * [embedding, layers..., final norm, head] (partition.h), virtual stage v holding [first_item[v],
 * first_item[v+1]) (vstages+1 entries). Fails (err: one line naming the string's fault and what is allowed)
 * unless the string names exactly `vstages` stages, E first in the first, L last in the last, exactly
 * `layers` t's, and every stage something. */
gboolean pipeline_layout_bounds(const char *spec, int layers, int mtp, int vstages, int *first_item, GError **err);

#endif
