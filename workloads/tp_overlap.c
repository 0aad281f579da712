/* tp_overlap -- TransformerEngine's tensor-parallel communication overlap (userbuffers; NeMo's tp_comm_overlap,
 * the stack's tp_comm_overlap; docs/stacks.md, "Tensor-parallel overlap"): each sequence-parallel all-gather and
 * reduce-scatter on stream 2, beside the GEMM that consumes it (an all-gather before a column-parallel GEMM, or
 * the output-gradient all-gather before a row-parallel GEMM's backward) or produces it (the reduce-scatter after
 * a row-parallel GEMM's forward or a column-parallel GEMM's backward). TE splits both into chunks and pipelines
 * them, so the pair takes the longer of the two; the GEMM beside a reduce-scatter runs on the SMs the
 * collective's kernels leave it (GRAPH_GEMM_SM_SHARED; platforms/kernel_cost.c, the stack's
 * tp_overlap_sm_fraction), the all-gathers' ring exchange copies with the copy engines.
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
