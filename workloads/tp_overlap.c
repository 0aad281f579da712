/* tp_overlap -- TransformerEngine's tensor-parallel communication overlap (userbuffers; NeMo's tp_comm_overlap,
 * the stack's tp_comm_overlap; docs/stacks.md, "Tensor-parallel overlap"): each sequence-parallel all-gather and
 * reduce-scatter on stream 2, beside the GEMM that consumes it (an all-gather before a column-parallel GEMM, or
 * the output-gradient all-gather before a row-parallel GEMM's backward) or produces it (the reduce-scatter after
 * a row-parallel GEMM's forward or a column-parallel GEMM's backward). TE splits both into chunks and pipelines
 * them, so the pair takes the longer of the two; the GEMM beside a reduce-scatter runs on the SMs the
 * collective's kernels leave it (GRAPH_GEMM_SM_SHARED; platforms/kernel_cost.c, the stack's
 * tp_overlap_sm_fraction), the all-gathers' ring exchange copies with the copy engines.
 *
 * Megatron-LM's own overlap (the stack's tp_async_grad_reduce; LinearWithGradAccumulationAndAsyncCommunication,
 * megatron/mpu/layers.py of 2022, megatron/core/tensor_parallel/layers.py since): in the backward of a
 * column-parallel GEMM the input gradient's GEMM runs first, then the input gradient's all-reduce (sp: its
 * reduce-scatter) is launched asynchronously and the weight gradient's GEMM runs beside it; with sp the saved
 * input shard's all-gather runs beside the input gradient's GEMM, which the weight gradient's GEMM waits for.
 *
 * Owns: which tp collectives run beside which GEMM, and when the compute stream waits for them.
 * May not touch: the collectives' sizes (emit.c), their cost (sim/).
 */
#include "emit.h"

/* An all-gather (`before`: ahead of its GEMM, started once stream 0's previous event ended, the GEMM beside it)
 * or a reduce-scatter (after its GEMM, started with the GEMM) of the tensor-parallel group, `bytes` its buffer;
 * the event after the GEMM waits for it. Blocking on stream 0 without the stack's overlap, in a split backward,
 * or where no GEMM is adjacent (a reduce-scatter after the embedding's lookup). */
void tp_overlap_collective(emit *x, graph_coll c, double bytes, gboolean before)
{
  gboolean after_gemm = x->last_gemm >= 0 && x->last_gemm == x->last_main;
  if (!x->code->tp_comm_overlap || x->bpart != BWD_WHOLE || x->tp_group < 0 || (!before && !after_gemm)) {
    emit_collective(x, c, x->tp_group, bytes);
    return;
  }
  if (x->tp_pending >= 0) { /* one collective beside a GEMM at a time: the previous one's output is needed */
    x->wait_for = MAX(x->wait_for, x->tp_pending);
    x->tp_pending = -1;
  }
  int start = before ? x->last_main : x->before_gemm;
  if (!before && x->ev) g_array_index(x->ev, graph_event, x->last_gemm).variant |= GRAPH_GEMM_SM_SHARED;
  x->on_tp = TRUE;
  emit_collective(x, c, x->tp_group, bytes);
  emit_depend(x, start);
  x->on_tp = FALSE;
  x->tp_pending = emit_last_index(x);
  x->tp_beside = before;
}

/* After a stream-0 event of cost `cost` was pushed: it waits for the pending collective unless it is the GEMM
 * that runs beside an all-gather. */
void tp_overlap_on_push(emit *x, graph_cost cost)
{
  if (x->tp_pending >= 0 && !(x->tp_beside && cost == COST_GEMM)) {
    emit_depend(x, x->tp_pending);
    x->tp_pending = -1;
  }
  x->tp_beside = FALSE;
}

/* Megatron's asynchronous column-parallel backward applies: the stack's tp_async_grad_reduce, tp > 1, a whole
 * backward, and not where TransformerEngine's overlap (tp_comm_overlap with sp) already places the collectives. */
gboolean tp_async_applies(const emit *x)
{
  return x->code->tp_async_grad_reduce && x->l->tp > 1 && x->tp_group >= 0 && x->bpart == BWD_WHOLE &&
         x->phase == PH_BACKWARD && !(x->code->tp_comm_overlap && x->l->sp);
}

/* The backward of column-parallel GEMM `g` and of its region's entry `enter` (block.h) as Megatron runs them
 * (tp_async_applies): [sp: the saved shard's all-gather, stream 2] the input gradient's GEMM (dgrad), then on
 * stream 2 the input gradient's all-reduce (enter->bwd_reduces of them; sp: one reduce-scatter) started when
 * dgrad ends, beside the weight gradient's GEMM (wgrad, which waits for the all-gather); the next stream-0 event
 * waits for the collective. A GEMM beside a collective runs on the SMs its NCCL kernels leave it
 * (GRAPH_GEMM_SM_SHARED, the stack's tp_overlap_sm_fraction). Returns the wgrad event, which carries what the
 * GEMM saved and its backward's transients (layer_saves). */
graph_event *tp_async_column_backward(emit *x, const block_op *g, const block_op *enter)
{
  double w = enter->width > 0 ? enter->width : x->m->hidden, bytes = x->T * w * BF16;
  int gather = -1;
  if (x->l->sp && x->code->sp_saves_shard) { /* the input the wgrad GEMM needs, gathered again */
    int prev = x->last_main;
    x->on_tp = TRUE;
    emit_collective(x, COLL_ALL_GATHER, x->tp_group, bytes);
    emit_depend(x, prev);
    x->on_tp = FALSE;
    gather = emit_last_index(x);
  }
  x->bpart = BWD_INPUT;
  graph_event *d = emit_block_gemm(x, g);
  if (gather >= 0) d->variant |= GRAPH_GEMM_SM_SHARED;
  int dgrad = emit_last_index(x);
  x->on_tp = TRUE;
  int n = x->l->sp ? 1 : MAX(enter->bwd_reduces, 1);
  for (int i = 0; i < n; i++) {
    emit_collective(x, x->l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->tp_group, bytes);
    emit_depend(x, dgrad);
  }
  x->on_tp = FALSE;
  int reduce = emit_last_index(x);
  x->wait_for = gather;
  x->bpart = BWD_WEIGHT;
  graph_event *wg = emit_block_gemm(x, g);
  x->bpart = BWD_WHOLE;
  wg->variant |= GRAPH_GEMM_SM_SHARED;
  layer_saves(x, wg, g);
  x->wait_for = reduce;
  return wg;
}
