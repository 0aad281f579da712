/* grad_sync -- the generator's data-parallel traffic: the units ZeRO-3 gathers before a pass (FSDP's
 * wrapped modules), the gradient buckets a backward reduces as it completes them, and ZeRO-1/2's
 * parameter all-gather overlapped at the start of the step (--overlap-param-gather).
 *
 * Owns: the bucket and unit bookkeeping of the emitter (emit.h) and the dp collectives they emit.
 * May not touch: the layer passes (layer_pass.c), the optimizer step (optimizer.c).
 */
#include "emit.h"

/* ---- units: what ZeRO-3 gathers (FSDP's wrapped modules) and what a backward completes the gradients of ---- */

/* The parameters of the units of the virtual stage in forward order: the embedding, each layer, the final
 * norm with the head (their sum is mem_stage_params'). Returns how many; out holds count + 2. */
int grad_sync_stage_units(const emit *x, double *out)
{
  int first, count, v = x->vstage, n = 0;
  partition_layers(x->part, x->m, v, &first, &count);
  gboolean emb = partition_has_embedding(x->part, v), hn = partition_has_final_norm(x->part, x->m, v),
           hh = partition_has_head(x->part, x->m, v);
  if (emb) out[n++] = block_embedding_params(x->m, x->l->tp);
  for (int i = 0; i < count; i++) out[n++] = mem_layer_dense_params(x->m, x->l, first + i);
  /* tied embeddings on the embedding's stage: the head's weights are the embedding's, counted there */
  if (hn || hh)
    out[n++] = (hn ? block_final_norm_params(x->m) : 0) + (hh && !(x->m->tied_embeddings && emb) ? block_head_params(x->m, x->l->tp) : 0) +
               (hh ? block_mtp_dense_params(x->m, x->l, emb) : 0); /* MTP rides with the head (docs/moe.md) */
  return n;
}

/* An all-gather of the dp shards of `params` weights on the communication stream, after event `after` of
 * stream 0 (-1: none); it holds the other ranks' shards from its end. Returns its index. */
static int gather_unit(emit *x, double params, int after)
{
  graph_phase ph = x->phase;
  x->phase = PH_DP;
  x->on_side = TRUE;
  emit_collective(x, COLL_ALL_GATHER, x->dp_group, params * BF16);
  emit_last_event(x)->mem_delta_bytes += params * BF16 * (layout_dp_cp(x->l) - 1) / layout_dp_cp(x->l);
  emit_depend(x, after);
  x->on_side = FALSE;
  x->phase = ph;
  return emit_last_index(x);
}

/* Before unit u of n (params[u]) of a pass that walks them by `dir` (+1 forward, -1 backward): ZeRO-3 gathers
 * it (issued when the pass begins) and the next unit's weights, once this unit starts (FSDP's prefetch:
 * at most two units whole), and its first kernel waits for its own gather; the first forward of a step with
 * --overlap-param-gather waits for the bucket of the step's first gathers that completes the unit. */
void grad_sync_unit_begin(emit *x, const double *params, int n, int u, int dir)
{
  if (x->gather_units) {
    int mine = u == (dir > 0 ? 0 : n - 1) ? gather_unit(x, params[u], x->last_main) : x->unit_gather;
    int next = u + dir;
    x->unit_gather = next >= 0 && next < n ? gather_unit(x, params[next], x->last_main) : -1;
    x->unit_gathered_bytes = params[u] * BF16 * (layout_dp_cp(x->l) - 1) / layout_dp_cp(x->l);
    x->wait_for = mine;
  }
  if (x->param_wait && x->param_gathers && x->param_gathers->len) {
    int c = x->chunk, lo = x->gathers_from[c], buckets = x->gathers_from[c + 1] - lo;
    double per = x->pass_params / buckets, end = x->param_offset + params[u];
    int b = MIN(buckets - 1, MAX(0, (int)ceil(end / per * (1 - 1e-12)) - 1));
    x->wait_for = g_array_index(x->param_gathers, int, lo + b);
    x->param_offset = end;
  }
}

/* One bucket of gradients completed by the backward: flattened and cast (stream 0), reduced over dp (all-reduce;
 * reduce-scatter under ZeRO-2/3) and, all-reduced, copied back. --overlap-grad-reduce: the reduction and the copy
 * on the communication stream once the cast ended, the bucket held from the cast to the end of its reduction;
 * else all on stream 0, the bucket a transient of each. */
void grad_sync_reduce_bucket(emit *x, double elements)
{
  gboolean overlap = x->l->overlap_grad_reduce, rs = x->l->zero >= 2;
  double g = x->code->grad_reduce_bytes, held = x->code->grad_buffer ? 0 : elements * (BF16 + g); /* in place */
  graph_phase ph = x->phase;
  x->phase = PH_DP;
  graph_event *e = emit_stream(x, BL_OPTIMIZER, elements, elements * (BF16 + g), 1);
  if (overlap) e->mem_delta_bytes += held;
  else e->mem_transient_bytes = held;
  int cast = emit_last_index(x);
  x->on_side = overlap;
  emit_collective(x, rs ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->dp_group, elements * g);
  /* with the overlap after its cast; else, on stream 0, after the gathers ZeRO-3 prefetches on the other stream
   * (one group's collectives run one at a time, as on one NCCL communicator) */
  emit_depend(x, overlap ? cast : x->gather_units ? x->last_side : -1);
  e = emit_last_event(x);
  if (!rs) {
    if (!overlap) e->mem_transient_bytes = held;
    e = emit_stream(x, BL_OPTIMIZER, elements, elements * (BF16 + g), 1);
  }
  if (overlap) e->mem_delta_bytes -= held;
  else e->mem_transient_bytes = held;
  x->on_side = FALSE;
  x->phase = ph;
  x->buckets_done++;
}

/* After unit u's backward: its gradients are complete. ZeRO-3 reduces each unit's; otherwise each bucket of
 * stage_params / buckets elements, in the backward's order, as soon as the units complete it. */
void grad_sync_unit_end_backward(emit *x, const double *params, int u)
{
  if (x->gather_units) emit_last_event(x)->mem_delta_bytes -= x->unit_gathered_bytes;
  if (!x->reducing) return;
  if (x->l->zero >= 3) {
    grad_sync_reduce_bucket(x, params[u]);
    return;
  }
  x->grad_ready += params[u];
  while (x->buckets_done < x->n_buckets - 1 && x->grad_ready >= (x->buckets_done + 1) * x->bucket_elements * (1 - 1e-12))
    grad_sync_reduce_bucket(x, x->bucket_elements);
}

void grad_sync_unit_end_forward(emit *x)
{
  if (x->gather_units) emit_last_event(x)->mem_delta_bytes -= x->unit_gathered_bytes;
}

/* The parameters of the virtual stage x points at (grad_sync_stage_units' sum); the stage's with one chunk. */
double grad_sync_chunk_params(const emit *x)
{
  if (x->l->virtual_stages == 1) return x->stage_params;
  int first, count;
  partition_layers(x->part, x->m, x->vstage, &first, &count);
  g_autofree double *units = g_new(double, count + 2);
  int n = grad_sync_stage_units(x, units);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += units[i];
  return sum;
}

/* ZeRO-1/2's parameter all-gather, with --overlap-param-gather at the start of the step (the previous step's
 * update, issued per bucket on the communication stream: the first forward's units wait for their own bucket
 * only). The buckets as the optimizer's gather, per model chunk in chunk order (Megatron-Core: each chunk its
 * own buffer): on the one communication stream, chunk c's gathers run while chunk c - 1's first forward
 * computes; a model with experts gathers each chunk's routed experts over edp after its dense buckets. */
void grad_sync_param_gather_prologue(emit *x)
{
  const layout *l = x->l;
  if (!l->overlap_param_gather || layout_dp_cp(l) < 2) return;
  x->phase = PH_DP;
  x->mb = -1;
  x->layer = -1;
  x->on_side = TRUE;
  for (int c = 0; c < l->virtual_stages; c++) {
    stage_at_chunk(x, c);
    double params = grad_sync_chunk_params(x), shards = MAX(1, floor(params / GRAD_BUCKET_ELEMENTS));
    double bytes = mem_param_gather_bytes(l, params, mem_chunk_dense_linear_params(x->m, l, x->part, x->vstage));
    if (x->gathers_from) x->gathers_from[c] = x->param_gathers ? (int)x->param_gathers->len : 0;
    for (int i = 0; i < (int)shards; i++) {
      emit_collective(x, COLL_ALL_GATHER, x->dp_group, bytes / shards);
      x->bucket_counted += !x->ev;
      if (x->param_gathers) {
        int at = emit_last_index(x);
        g_array_append_val(x->param_gathers, at);
      }
    }
    /* the chunk's routed experts over edp, after its dense buckets (the first forward does not wait for them: a
     * simplification) */
    double experts = mem_chunk_expert_params(x->m, l, x->part, x->vstage);
    double eshards = MAX(1, floor(experts / GRAD_BUCKET_ELEMENTS));
    for (int i = 0; experts > 0 && x->edp_group >= 0 && i < (int)eshards; i++) {
      emit_collective(x, COLL_ALL_GATHER, x->edp_group, mem_param_gather_bytes(l, experts, experts) / eshards);
      x->bucket_counted += !x->ev;
    }
  }
  if (x->gathers_from) x->gathers_from[l->virtual_stages] = x->param_gathers ? (int)x->param_gathers->len : 0;
  x->on_side = FALSE;
}
