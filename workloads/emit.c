/* emit -- the generator's event primitives (emit.h): push an event onto the program being written (or count
 * it), its dependencies, and the GEMM, memory-bound, collective and tensor/sequence-parallel events the
 * passes are made of.
 *
 * Sizes use b = micro-batch, s = sequence, T = b*s tokens, h, f, V, tp = t.
 * With sequence parallelism the norm/residual region holds T/t tokens.
 * FLOPs are model FLOPs (no causal halving); a backward GEMM is dgrad + wgrad
 * (2x the forward). Bytes are what a kernel reads plus writes in HBM.
 *
 * Owns: the event a primitive writes (kind, cost, sizes, dtype, stream, dependencies).
 * May not touch: the order of the passes (layer_pass.c, stage_driver.c), groups (gen_groups.c).
 */
#include "emit.h"

/* The block as the stack's code runs it. */
block_code emit_code_of(const layout *l, const gen_code *code)
{
  return (block_code){.fused_norm = layout_norm_fused(l, code->fused_norm), .mlp_in_gemms = code->mlp_in_gemms,
                      .fused_softmax_batches = code->fused_softmax_batches,
                      .fused_softmax_max_seq = code->fused_softmax_max_seq, .sp_saves_shard = code->sp_saves_shard,
                      .pipe_tensors_shared = code->pipe_tensors_shared,
                      .vocab_parallel_loss_bytes = code->vocab_parallel_loss_bytes,
                      .fused_swiglu = code->fused_swiglu, .attn_out_shared = code->attn_out_shared,
                      .wgrad_in_main_grad = code->te_dummy_wgrad};
}

void emit_tables(emit *x)
{
  block_code bc = emit_code_of(x->l, x->code);
  block_layer(x->m, x->l, &bc, &x->layer_ops);
  if (model_has_experts(x->m)) block_moe_layer(x->m, x->l, &bc, &x->moe_ops);
  else x->moe_ops.n = 0;
  if (x->m->mtp_layers) block_mtp_entry(x->m, x->l, &bc, &x->mtp_ops);
  else x->mtp_ops.n = 0;
  block_embedding(x->m, x->l, &bc, &x->embed);
  block_head(x->m, x->l, &bc, &x->head);
}

/* Index of the event pushed last. */
int emit_last_index(const emit *x) { return x->ev ? (int)x->ev->len - 1 : (int)x->counted - 1; }

/* The event pushed last waits for event `after` (its stream's order aside). */
void emit_depend(emit *x, int after)
{
  if (!x->ev || after < 0) return;
  int i = emit_last_index(x);
  GArray *d = x->prog->deps;
  if (d && d->len && g_array_index(d, graph_dep, d->len - 1).event == i) { /* one per event: the later of two */
    graph_dep *prev = &g_array_index(d, graph_dep, d->len - 1);
    prev->after = MAX(prev->after, after);
    return;
  }
  if (!x->prog->deps) x->prog->deps = g_array_new(FALSE, FALSE, sizeof(graph_dep));
  graph_dep nd = {i, after};
  g_array_append_val(x->prog->deps, nd);
}

graph_event *emit_push(emit *x, graph_kind kind, graph_cost cost, block_label label)
{
  graph_event e = {.kind = (uint8_t)kind, .cost = (uint8_t)cost, .op = (uint16_t)label, .phase = (uint8_t)x->phase,
                   .micro_batch = x->mb, .layer = (int16_t)x->layer, .peer = -1, .launches = 1,
                   .stream = x->on_tp ? 2 : x->on_side ? 1 : 0};
  graph_event *out;
  if (!x->ev) {
    x->counted++;
    x->scratch = e;
    out = &x->scratch;
  } else {
    g_array_append_val(x->ev, e);
    out = &g_array_index(x->ev, graph_event, x->ev->len - 1);
  }
  if (x->on_tp) return out;
  if (x->on_side) {
    x->last_side = emit_last_index(x);
  } else {
    x->last_main = emit_last_index(x);
    if (x->wait_for >= 0) emit_depend(x, x->wait_for);
    x->wait_for = -1;
    tp_overlap_on_push(x, cost);
  }
  return out;
}

gboolean emit_in_backward(const emit *x) { return x->phase == PH_BACKWARD; }

/* A GEMM (m x k).(k x n), `count` of them; backward does dgrad + wgrad. */
static graph_event *gemm(emit *x, block_label op, double m, double n, double k, int count)
{
  x->before_gemm = x->last_main;
  graph_event *e = emit_push(x, EV_COMPUTE, COST_GEMM, op);
  x->last_gemm = emit_last_index(x);
  int mult = emit_in_backward(x) && x->bpart == BWD_WHOLE ? 2 : 1;
  if (emit_in_backward(x)) e->variant = (uint8_t)x->bpart; /* 1: dgrad only, 2: wgrad only */
  e->m = (int32_t)m;
  e->n = (int32_t)n;
  e->k = (int32_t)k;
  e->launches = count * mult;
  e->flops = 2.0 * m * n * k * count * mult;
  e->bytes = BF16 * (m * k + k * n + m * n) * count * mult;
  return e;
}

/* A GEMM of the block's table: in its dtype (a linear layer's under FP8, block.h), whose operands are then
 * read in FP8 (the output is written in bf16). */
graph_event *emit_block_gemm(emit *x, const block_op *o)
{
  graph_event *e = gemm(x, o->label, o->rows > 0 ? o->rows : x->T, o->n, o->k, o->count);
  graph_dtype dt = (graph_dtype)o->dtype[emit_in_backward(x)];
  if (dt != DT_BF16) {
    double opnd = precision_operand_bytes((precision)x->l->precision), m = e->m, n = e->n, k = e->k;
    e->dtype = (uint8_t)dt;
    e->bytes = (opnd * (m * k + k * n) + BF16 * m * n) * e->launches;
  }
  if (o->scale > 0) { /* the slowest EP rank's load (docs/moe.md): its shape, scale times the work (FP8 or not) */
    e->flops *= o->scale;
    e->bytes *= o->scale;
  }
  return e;
}

/* A memory-bound operator moving `bytes` with `launches` kernels. */
graph_event *emit_stream(emit *x, block_label op, double elements, double bytes, int launches)
{
  graph_event *e = emit_push(x, EV_COMPUTE, COST_MEMORY, op);
  e->m = (int32_t)MIN(elements, 2e9);
  e->bytes = bytes;
  e->launches = launches;
  return e;
}

void emit_collective(emit *x, graph_coll c, int group, double bytes)
{
  if (group < 0) return;
  graph_event *e = emit_push(x, EV_COLLECTIVE, COST_NONE, BL_COMM);
  e->variant = (uint8_t)c;
  e->peer = group;
  e->bytes = bytes;
}

gboolean emit_tp_on(const emit *x) { return x->l->tp > 1; }

/* Tensor-parallel exit of a row-parallel GEMM (forward) or entry of a column-parallel one (backward). */
void emit_tp_reduce(emit *x)
{
  if (!emit_tp_on(x)) return;
  double full = x->T * x->m->hidden * BF16;
  if (x->l->sp) tp_overlap_collective(x, COLL_REDUCE_SCATTER, full, FALSE);
  else emit_collective(x, COLL_ALL_REDUCE, x->tp_group, full);
}

/* Sequence-parallel gather before a column-parallel GEMM (forward), its backward reduce-scatter. */
void emit_sp_gather(emit *x)
{
  if (!emit_tp_on(x) || !x->l->sp) return;
  double full = x->T * x->m->hidden * BF16;
  tp_overlap_collective(x, emit_in_backward(x) ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER, full, !emit_in_backward(x));
}

/* Backward of a row-parallel GEMM with sp: all-gather the output gradient. */
void emit_sp_scatter_backward(emit *x)
{
  if (!emit_tp_on(x) || !x->l->sp) return;
  tp_overlap_collective(x, COLL_ALL_GATHER, x->T * x->m->hidden * BF16, TRUE);
}

graph_event *emit_last_event(emit *x)
{
  return x->ev ? &g_array_index(x->ev, graph_event, x->ev->len - 1) : &x->scratch;
}
