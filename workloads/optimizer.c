/* optimizer -- the generator's end of the step: gradient reduction over dp where the backward did not
 * overlap it, grad-norm all-reduces, the optimizer's update of its shard and the parameter all-gather
 * (scaling's Optimizer.step(); docs/model.md).
 *
 * Owns: the events of the optimizer step.
 * May not touch: the passes (layer_pass.c, stage_driver.c).
 */
#include "emit.h"

/* Reduce gradients and step the optimizer (scaling's Optimizer.step()). */
void optimizer_step(emit *x, double stage_params)
{
  const layout *l = x->l;
  x->mb = -1;
  x->layer = -1;
  x->phase = PH_DP;
  x->wait_for = x->last_side; /* the step goes on once the communication stream's reductions ended */
  if (l->sp && emit_tp_on(x)) emit_collective(x, COLL_ALL_REDUCE, x->tp_group, 2.0 * x->m->hidden * BF16);
  /* over Megatron's dp-cp group (the cp ranks of a replica hold the same weights); reduced in the backward
   * instead under ZeRO-2/3 (every micro-batch's) and with --overlap-grad-reduce (the last one's) */
  if (layout_dp_cp(l) > 1 && l->zero < 2 && !l->overlap_grad_reduce) {
    double buckets = ceil(stage_params / GRAD_BUCKET_ELEMENTS);
    if (!x->ev) { /* counting: a model file's buckets may outnumber int (gen_stage_events) */
      x->counted += 3 * buckets;
      x->bucket_counted += 3 * buckets;
    }
    double per = stage_params / buckets;
    for (int b = 0; x->ev && b < (int)buckets; b++) {
      /* bf16 gradients are flattened (cast to fp32 in the study's code), all-reduced, and copied back */
      double held = mem_bucket_transient_bytes(x->code, MIN(stage_params, GRAD_BUCKET_ELEMENTS)), g = x->code->grad_reduce_bytes;
      emit_stream(x, BL_OPTIMIZER, per, per * (BF16 + g), 1)->mem_transient_bytes = held;
      emit_collective(x, COLL_ALL_REDUCE, x->dp_group, per * g);
      emit_last_event(x)->mem_transient_bytes = held;
      emit_stream(x, BL_OPTIMIZER, per, per * (BF16 + g), 1)->mem_transient_bytes = held;
    }
  }
  /* the routed experts' gradients over the expert data-parallel group edp (not dp: docs/moe.md), bucketed alike */
  double experts = mem_stage_expert_params(x->m, l, x->part, x->stage);
  if (experts > 0 && x->edp_group >= 0) {
    double buckets = ceil(experts / GRAD_BUCKET_ELEMENTS), per = experts / buckets, g = x->code->grad_reduce_bytes;
    if (!x->ev) {
      x->counted += buckets;
      x->bucket_counted += buckets;
    }
    for (int b = 0; x->ev && b < (int)buckets; b++) {
      emit_collective(x, l->zero >= 2 ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->edp_group, per * g);
      emit_last_event(x)->mem_transient_bytes = mem_bucket_transient_bytes(x->code, per);
    }
  }
  emit_collective(x, COLL_ALL_REDUCE, x->tp_group, FP32); /* grad norm over tp, then pp */
  emit_collective(x, COLL_ALL_REDUCE, x->pp_group, FP32);
  x->phase = PH_OPTIMIZER;
  double shard = l->zero >= 1 ? stage_params / layout_dp_cp(l) : stage_params; /* sharded over dp-cp */
  if (experts > 0) shard += l->zero >= 1 ? experts / axis_edp(l) : experts; /* the experts' over edp */
  /* copy grad slice to fp32, AdamW (master, m, v read+write, grad read), copy back to bf16 */
  emit_stream(x, BL_OPTIMIZER, shard, shard * OPS_ADAMW_BYTES_PER_PARAM, OPS_ADAMW_KERNELS)->mem_transient_bytes =
      mem_adam_transient_bytes(x->code, l, shard);
  if ((l->zero == 1 || l->zero == 2) && layout_dp_cp(l) > 1 && !l->overlap_param_gather) {
    x->phase = PH_DP;
    double shards = MAX(1, floor(shard * layout_dp_cp(l) / GRAD_BUCKET_ELEMENTS));
    if (!x->ev) {
      x->counted += shards;
      x->bucket_counted += shards;
    }
    /* bf16, the linear layers' weights in FP8 with --fp8-param-gather */
    double bytes = mem_param_gather_bytes(l, stage_params, mem_stage_dense_linear_params(x->m, l, x->part, x->stage));
    for (int i = 0; x->ev && i < (int)shards; i++) emit_collective(x, COLL_ALL_GATHER, x->dp_group, bytes / shards);
  }
  /* the routed experts' updated shards, over edp (their own buffers: Megatron's expert-parallel param buffers) */
  if ((l->zero == 1 || l->zero == 2) && experts > 0 && x->edp_group >= 0 && !l->overlap_param_gather) {
    x->phase = PH_DP;
    double shards = MAX(1, floor(experts / GRAD_BUCKET_ELEMENTS)), bytes = mem_param_gather_bytes(l, experts, experts);
    if (!x->ev) {
      x->counted += shards;
      x->bucket_counted += shards;
    }
    for (int i = 0; x->ev && i < (int)shards; i++) emit_collective(x, COLL_ALL_GATHER, x->edp_group, bytes / shards);
  }
}
