/* model_params -- how many parameters a model has, in all and on one GPU of a layout: what every output
 * prints so that a model's translation (a HuggingFace config, --vocab, the stack's vocabulary padding) can be
 * checked against its published count.
 *
 * Owns: the per-GPU count (the model-parallel shard of the largest pipeline stage). May not touch: hardware.
 */
#ifndef MODEL_PARAMS_H
#define MODEL_PARAMS_H

#include <glib.h>

#include "layout.h"
#include "model.h"
#include "partition.h"

/* Parameters of one GPU of the stage holding the most: its layers' matrices split over tp, norms replicated,
 * the embedding and head where the partition puts them (workloads/memory.h mem_stage_params). ZeRO-3 shards
 * these further over dp x cp; the count is the model-parallel shard, before it. -1 where the partition fails. */
double model_params_per_gpu(const model *m, const layout *l, partition_method method);

#endif
