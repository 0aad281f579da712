/* partition -- which pipeline stage holds which layers, as the study's code
 * (Aleph-Alpha/scaling, pipeline_partitioning.py) splits them.
 *
 * The partitioned items are [input embedding, L transformer layers, final
 * norm, output head]: L+3 items. UNIFORM (the library default) splits by item
 * count, the first (L+3) % pp stages taking one more item. BALANCED is
 * DeepSpeed's partition_balanced over per-item parameter counts; its greedy
 * probe can leave the last stages empty (llama-65b at pp 16: 14 stages of
 * 6 layers take all 83 items), a layout the study's code cannot run. AUTO
 * (the default) is BALANCED, or UNIFORM where BALANCED leaves a stage empty;
 * partition.method says which one was used. LAYERS is DeepSpeed's
 * type:transformer (Megatron-DeepSpeed) and Megatron-LM's: the L layers split
 * evenly, embedding on the first stage, final norm and head on the last.
 *
 * With V chunks per stage (the interleaved schedule) the items are split
 * over pp*V virtual stages in the model's order (which virtual stage chunk c
 * of stage s is, is the schedule's: sched_vstage; c*pp + s as Megatron-LM's
 * interleaving): EVEN (what AUTO resolves to there) gives every
 * virtual stage L/(pp*V) layers, the embedding joining the first and the
 * final norm and head the last; UNIFORM and BALANCED split over the virtual
 * stages as they split over stages. The functions below that take a
 * `stage` take a virtual stage: with one chunk it is the stage.
 *
 * Owns: struct partition. May not touch: schedules, hardware.
 */
#ifndef PARTITION_H
#define PARTITION_H

#include <glib.h>

#include "model.h"

struct layout;

/* LAYOUT: placed by a pipeline layout string (pipeline_layout.h), never parsed from --partition */
typedef enum { PARTITION_UNIFORM, PARTITION_BALANCED, PARTITION_AUTO, PARTITION_LAYERS, PARTITION_LAYOUT } partition_method;

typedef struct partition {
  int pp;
  partition_method method; /* the method used: UNIFORM, BALANCED or EVEN (AUTO resolved) */
  int *first_item; /* pp*chunks+1 item boundaries: virtual stage v holds items [first_item[v], first_item[v+1]) */
  int chunks;      /* chunks per stage (1 unless interleaved) */
} partition;

gboolean partition_parse_method(const char *s, partition_method *out, GError **err);
const char *partition_method_name(partition_method m);
/* Fails (err) if a stage would hold no item. Caller frees with partition_clear. */
gboolean partition_make(partition *out, const model *m, int pp, int tp, partition_method method, GError **err);
/* The same with `chunks` chunks per stage (pp*chunks virtual stages). */
gboolean partition_make_chunked(partition *out, const model *m, int pp, int chunks, int tp, partition_method method,
                                GError **err);
/* The items placed by a Megatron pipeline layout string over pp*chunks virtual stages (pipeline_layout.h). */
gboolean partition_make_layout(partition *out, const model *m, int pp, int chunks, const char *spec, GError **err);
/* As the layout says: its pipeline layout string where it has one, else partition_make_chunked with `method`. */
gboolean partition_make_for(partition *out, const model *m, const struct layout *l, partition_method method,
                            GError **err);
void partition_clear(partition *p);

/* Item kinds: item 0 is the embedding, 1..L the layers, L+1 the final norm, L+2 the head. */
gboolean partition_has_embedding(const partition *p, int stage);
gboolean partition_has_final_norm(const partition *p, const model *m, int stage);
gboolean partition_has_head(const partition *p, const model *m, int stage);
/* Transformer layers of a stage: [*first, *first + *count), indices 0..L-1. */
void partition_layers(const partition *p, const model *m, int stage, int *first, int *count);

#endif
