/* layer_pass -- the generator's passes of one item of a stage: the forward (or recompute) and backward of a
 * transformer layer (its block table, block.h, in order or reversed), core attention with the cp ring,
 * the embedding and the head (with a model's multi-token prediction modules, docs/moe.md), and the memory each
 * operator records.
 *
 * Owns: which events one item's pass emits and the activation memory they keep or free.
 * May not touch: units and gradient buckets (grad_sync.c), the schedule (stage_driver.c).
 */
#include "emit.h"

/* The output gradient of a GEMM's event (T x n, `launches` of them): what its W needs besides the input. */
static double gemm_output_grad_bytes(const graph_event *e) { return BF16 * e->m * (double)e->n * e->launches; }

/* Of what an operator saves, the part a partial recomputation drops at the forward and its recompute
 * brings back: selective, the attention core's score-sized tensors; mlp, all the MLP sub-block saves but
 * its input. */
static double dropped_bytes(const layout *l, const block_op *o)
{
  if (l->ckpt == CKPT_SELECTIVE) return o->score_bytes;
  if (l->ckpt == CKPT_MLP && o->mlp) return o->saved_bytes - o->mlp_input_bytes;
  if (l->ckpt == CKPT_MLA_UP_PROJ) return o->up_proj_bytes;
  return 0;
}

/* Record the memory an operator needs (block.h): the activations it keeps for backward (+ at forward and
 * recompute, - at backward) and what it holds only while it runs. Under every-layer checkpointing the
 * forward of a checkpointed item keeps nothing (its input is kept by the caller). */
void layer_saves(emit *x, graph_event *e, const block_op *o)
{
  gboolean bwd = x->phase == PH_BACKWARD;
  double saved = o->saved_bytes;
  if (bwd && x->bpart != BWD_WHOLE && o->kind == BLOCK_GEMM) {
    /* split backward: B keeps the GEMM's input and its output gradient alive until W has run */
    double kept = saved + gemm_output_grad_bytes(e);
    e->mem_delta_bytes += x->bpart == BWD_INPUT ? kept - saved : -kept;
    e->mem_transient_bytes += o->transient_bytes[1];
    return;
  }
  /* selective and mlp: the forward keeps all but what they drop, which the recompute brings back */
  gboolean partial = x->l->ckpt == CKPT_SELECTIVE || x->l->ckpt == CKPT_MLP || x->l->ckpt == CKPT_MLA_UP_PROJ;
  if (x->phase == PH_FORWARD && (x->l->ckpt == CKPT_NONE || partial)) e->mem_delta_bytes += saved - dropped_bytes(x->l, o);
  else if (x->phase == PH_RECOMPUTE) e->mem_delta_bytes += partial ? dropped_bytes(x->l, o) : saved;
  else if (bwd) e->mem_delta_bytes -= saved;
  e->mem_transient_bytes += o->transient_bytes[bwd];
}

/* One attention kernel of an operator (one ring step with cp > 1). */
static graph_event *attention_kernel(emit *x, const block_op *o)
{
  gboolean bwd = emit_in_backward(x);
  graph_event *e = emit_push(x, EV_COMPUTE, COST_ATTENTION, o->label);
  e->variant = (uint8_t)o->attn_kind;
  e->m = o->attn_m;
  e->n = o->attn_n;
  e->k = o->attn_k;
  e->flops = o->flops * (bwd ? 2 : 1);
  e->bytes = o->bytes[bwd];
  e->launches = o->launches[bwd];
  return e;
}

/* A block handed on around the cp ring: sent to the next rank (an isend, TransformerEngine's batched
 * isend/irecv) and received from the previous one; the backward's ring runs the other way. Sequential: the
 * overlap TransformerEngine has with the attention kernels is not in the graph (docs/model.md). */
static void ring_exchange(emit *x, double bytes)
{
  gboolean bwd = emit_in_backward(x);
  graph_event *e = emit_push(x, EV_SEND, COST_NONE, BL_COMM);
  e->peer = bwd ? x->cp_prev : x->cp_next;
  e->bytes = bytes;
  e->variant = GRAPH_P2P_EAGER | GRAPH_P2P_LAYER;
  e = emit_push(x, EV_RECV, COST_NONE, BL_COMM);
  e->peer = bwd ? x->cp_next : x->cp_prev;
  e->bytes = bytes;
  e->variant = GRAPH_P2P_LAYER;
}

/* Core attention: one kernel, or with cp > 1 the ring (block.h): forward cp kernels with the KV block passed
 * on before each but the first (cp - 1 exchanges); backward cp kernels, each followed by an exchange: the KV
 * block after the first, the KV block and its dKV after the middle ones, the dKV home after the last
 * (AttnFuncWithCPAndKVP2P.backward). What the operator keeps is counted at its first kernel; each holds the
 * transients. */
/* The all-to-all context parallelism's exchanges (TransformerEngine's AttnFuncWithCPAndQKVOA2A): forward q, k, v
 * (before the kernel) or the output (after it), one all-to-all each over the cp group; backward the output
 * gradient (before) or dq, dk, dv (after). */
static void cp_a2a_exchange(emit *x, const block_op *o, gboolean before)
{
  gboolean qkv = before != emit_in_backward(x);
  for (int i = qkv ? 0 : 3; i < (qkv ? 3 : 4); i++) emit_collective(x, COLL_ALL_TO_ALL, x->cp_group, o->cp_a2a_bytes[i]);
}

static graph_event *attention_emit(emit *x, const block_op *o)
{
  gboolean bwd = emit_in_backward(x);
  if (o->cp_a2a_bytes[0] > 0) { /* cp a2a: one kernel between the all-to-alls */
    cp_a2a_exchange(x, o, TRUE);
    graph_event *e = attention_kernel(x, o);
    layer_saves(x, e, o);
    cp_a2a_exchange(x, o, FALSE);
    return e;
  }
  int steps = MAX(o->ring_steps, 1);
  graph_event *first = NULL;
  for (int j = 0; j < steps; j++) {
    if (!bwd && j > 0) ring_exchange(x, o->kv_block_bytes);
    graph_event *e = attention_kernel(x, o);
    if (j == 0) layer_saves(x, e, o);
    else e->mem_transient_bytes += o->transient_bytes[bwd];
    if (!first) first = e;
    if (bwd && steps > 1) ring_exchange(x, (j == 0 || j == steps - 1 ? 1 : 2) * o->kv_block_bytes);
  }
  return first;
}

/* The table of layer x->layer; an MTP module's layer (x->layer >= layers) is built like the last one. */
const block *layer_table(const emit *x)
{
  int i = MIN(x->layer, x->m->layers - 1);
  return x->moe_ops.n && i >= 0 && model_layer_is_moe(x->m, i) ? &x->moe_ops : &x->layer_ops;
}

/* A tensor-parallel region's entry over a tensor `width` elements per token wide (block.h: h unless MLA's
 * latents): with sp its all-gather forward and reduce-scatter backward; without, backward `reduces` all-reduces
 * of the input gradient. */
static void tp_enter_emit(emit *x, const block_op *o)
{
  double w = o->width > 0 ? o->width : x->m->hidden, bytes = x->T * w * BF16;
  gboolean bwd = emit_in_backward(x);
  if (!emit_tp_on(x)) return;
  if (!x->l->sp) {
    for (int i = 0; bwd && i < o->bwd_reduces; i++) emit_collective(x, COLL_ALL_REDUCE, x->tp_group, bytes);
    return;
  }
  tp_overlap_collective(x, bwd ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER, bytes, !bwd);
}

/* MoE's token exchange (docs/moe.md): dispatch forward = all-to-all over ep, then with etp > 1 an all-gather over
 * etp; its backward the reverse (reduce-scatter over etp, all-to-all). Combine mirrors dispatch. */
static void ep_exchange(emit *x, const block_op *o)
{
  gboolean bwd = emit_in_backward(x), gather_first = (o->kind == BLOCK_EP_COMBINE) != bwd;
  graph_coll etp_coll = (o->kind == BLOCK_EP_DISPATCH) != bwd ? COLL_ALL_GATHER : COLL_REDUCE_SCATTER;
  double etp_full = o->etp_bytes * x->l->etp; /* the gathered (or scattered) whole */
  if (x->ep_group < 0 && o->etp_bytes == 0) return; /* ep 1, etp 1: the permuted tokens stay on the rank */
  if (gather_first && o->etp_bytes > 0) emit_collective(x, etp_coll, x->etp_group, etp_full);
  emit_collective(x, COLL_ALL_TO_ALL, x->ep_group, o->bytes[bwd]);
  if (!gather_first && o->etp_bytes > 0) emit_collective(x, etp_coll, x->etp_group, etp_full);
  if (x->ep_group >= 0) emit_last_event(x)->mem_transient_bytes += o->transient_bytes[bwd]; /* the receive buffer */
}

/* One operator of a table, forward (or recompute) or backward: its compute event and what it saves, or the
 * tensor-parallel collectives of a region's entry or exit (Megatron's: no sp, an all-reduce after each
 * row-parallel GEMM forward and of each column-parallel GEMM's input gradient backward; sp, all-gather
 * before each column-parallel block and reduce-scatter after each row-parallel one, and the reverse in
 * backward). */
static graph_event *op_emit(emit *x, const block_op *o)
{
  gboolean bwd = emit_in_backward(x);
  graph_event *e = NULL;
  switch (o->kind) {
  case BLOCK_GEMM: e = emit_block_gemm(x, o); break;
  case BLOCK_MEMORY:
    e = emit_stream(x, o->label, o->elements, o->bytes[bwd], o->launches[bwd]);
    /* an FP8 cast: the weights' at the first micro-batch's forward, kept for the step's others (docs/precision.md) */
    if (x->phase == PH_FORWARD && x->mb == 0 && o->step_bytes > 0) e->bytes += o->step_bytes;
    break;
  case BLOCK_ATTENTION: return attention_emit(x, o);
  case BLOCK_TP_ENTER:
    if (o->width > 0) {
      tp_enter_emit(x, o);
      return NULL;
    }
    for (int i = 0; bwd && emit_tp_on(x) && !x->l->sp && i < o->bwd_reduces; i++) /* one per GEMM's input gradient */
      emit_collective(x, COLL_ALL_REDUCE, x->tp_group, x->T * x->m->hidden * BF16);
    emit_sp_gather(x);
    return NULL;
  case BLOCK_TP_EXIT:
    if (bwd) emit_sp_scatter_backward(x);
    else emit_tp_reduce(x);
    return NULL;
  case BLOCK_EP_DISPATCH:
  case BLOCK_EP_COMBINE: ep_exchange(x, o); return NULL;
  }
  layer_saves(x, e, o);
  return e;
}

/* The compute events from index `from` on, emitted for operator o: captured in the layer's partial CUDA graph when
 * o is (block_op.captured, the layout's cuda_graph_scope). Megatron-Core hands Transformer Engine one callable per
 * layer (transformer_layer.py _te_cuda_graph_capture), graphed forward and backward: so a layer's pass launches one
 * graph, at its first captured event (graph_launch), and its other captured kernels are not launched one by one. */
static void mark_captured(emit *x, int from, const block_op *o)
{
  if (!o->captured || !x->ev) return;
  for (guint i = (guint)from; i < x->ev->len; i++) {
    graph_event *e = &g_array_index(x->ev, graph_event, i);
    if (e->kind != EV_COMPUTE) continue; /* a collective in the graph: still one call here (docs/moe.md) */
    e->captured = 1;
    e->graph_launch = !x->graph_launched;
    x->graph_launched = TRUE;
  }
}

/* op_emit, its events marked as o's capture says. */
static void op_emit_marked(emit *x, const block_op *o)
{
  int from = emit_last_index(x) + 1;
  op_emit(x, o);
  mark_captured(x, from, o);
}

/* The forward (or recompute) ops of one transformer layer, in order. */
void layer_forward(emit *x)
{
  const block *b = layer_table(x);
  x->graph_launched = FALSE;
  for (int i = 0; i < b->n; i++) op_emit_marked(x, &b->op[i]);
}

/* The backward ops of one layer: the table in reverse order; with selective recomputation the attention
 * core is run forward again just before its backward (where it kept score-sized tensors), with mlp the
 * MLP sub-block (its tp entry to its exit, collectives included) just before the backward of its exit. */
void layer_backward(emit *x)
{
  const block *b = layer_table(x);
  x->graph_launched = FALSE;
  for (int i = b->n - 1; i >= 0; i--) {
    const block_op *o = &b->op[i];
    if (x->l->ckpt == CKPT_SELECTIVE && o->kind == BLOCK_ATTENTION && o->score_bytes > 0) {
      x->phase = PH_RECOMPUTE;
      op_emit_marked(x, o);
      x->phase = PH_BACKWARD;
    }
    if (x->l->ckpt == CKPT_MLA_UP_PROJ && o->kind == BLOCK_ATTENTION && o->up_proj) {
      /* mla_up_proj: the up-projections and rope run again before the attention's backward (its q, k, v back) */
      int first = i;
      while (first > 0 && b->op[first - 1].up_proj) first--;
      x->phase = PH_RECOMPUTE;
      for (int j = first; j < i; j++) op_emit_marked(x, &b->op[j]);
      emit_last_event(x)->mem_delta_bytes += o->up_proj_bytes;
      x->phase = PH_BACKWARD;
    }
    if (x->l->ckpt == CKPT_MLP && o->mlp && (i == b->n - 1 || !b->op[i + 1].mlp)) {
      int first = i;
      while (first > 0 && b->op[first - 1].mlp) first--;
      x->phase = PH_RECOMPUTE;
      for (int j = first; j <= i; j++) op_emit_marked(x, &b->op[j]);
      x->phase = PH_BACKWARD;
    }
    if (o->kind == BLOCK_GEMM && i > 0 && b->op[i - 1].kind == BLOCK_TP_ENTER && tp_async_applies(x)) {
      int from = emit_last_index(x) + 1;
      tp_async_column_backward(x, o, &b->op[i - 1]); /* Megatron's async input-gradient reduction (tp_overlap.c) */
      mark_captured(x, from, o);
      i--;
      continue;
    }
    op_emit_marked(x, o);
  }
}

/* The vocab-parallel lookup and its tp collective (forward: all-reduce, or reduce-scatter into the sequence-
 * parallel region; backward with sp: all-gather), then the rest of the embedding item's table. */
void layer_embedding(emit *x)
{
  double el = x->T * x->m->hidden;
  gboolean bwd = emit_in_backward(x);
  for (int i = x->embed.n - 1; bwd && i >= 1; i--) op_emit(x, &x->embed.op[i]);
  op_emit(x, &x->embed.op[0]);
  if (!bwd && emit_tp_on(x)) emit_collective(x, x->l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->tp_group, el * BF16);
  if (bwd && emit_tp_on(x) && x->l->sp) emit_collective(x, COLL_ALL_GATHER, x->tp_group, el * BF16);
  for (int i = 1; !bwd && i < x->embed.n; i++) op_emit(x, &x->embed.op[i]);
}

/* Final norm, output projection and logits all-gather (forward or recompute),
 * then on forward the fp32 cross-entropy. The gathered bf16 logits are the
 * stage's output: kept until the loss backward (on recompute they are a
 * temporary). The loss runs outside the checkpointed head, so its fp32
 * log-softmax is saved even with every-layer checkpointing. */
static void head_forward(emit *x, gboolean has_norm, gboolean has_head);
static void head_backward(emit *x, gboolean has_norm, gboolean has_head);

/* Multi-token prediction (docs/moe.md, "MTP"), on the head's stage as Megatron places it: each module's entry
 * (the next tokens' embedding, the two norms, the 2h -> h projection), its transformer layer (numbered layers + j,
 * built like the last), its final norm and the shared head's logits and loss. Forward before the main head,
 * backward after it; under a split backward (zbh1) the modules' backward is whole in B (their weight gradients
 * are not deferred to W: a simplification). */
static void mtp_forward(emit *x)
{
  for (int j = 0; j < x->m->mtp_layers; j++) {
    for (int i = 0; i < x->mtp_ops.n; i++) op_emit(x, &x->mtp_ops.op[i]);
    x->layer = x->m->layers + j;
    layer_forward(x);
    x->layer = -1;
    head_forward(x, TRUE, TRUE);
  }
}

static void mtp_backward(emit *x)
{
  bwd_part part = x->bpart;
  x->bpart = BWD_WHOLE;
  for (int j = x->m->mtp_layers - 1; j >= 0; j--) {
    head_backward(x, TRUE, TRUE);
    x->layer = x->m->layers + j;
    layer_backward(x);
    x->layer = -1;
    for (int i = x->mtp_ops.n - 1; i >= 0; i--) op_emit(x, &x->mtp_ops.op[i]);
  }
  x->bpart = part;
}

void layer_head_forward(emit *x, gboolean has_norm, gboolean has_head)
{
  if (has_head && x->m->mtp_layers) mtp_forward(x);
  head_forward(x, has_norm, has_head);
}

void layer_head_backward(emit *x, gboolean has_norm, gboolean has_head)
{
  head_backward(x, has_norm, has_head);
  if (has_head && x->m->mtp_layers) mtp_backward(x);
}

static void head_forward(emit *x, gboolean has_norm, gboolean has_head)
{
  const block_op *norm = &x->head.op[0], *logits_op = &x->head.op[1], *loss = &x->head.op[2];
  if (has_norm) op_emit(x, norm);
  if (!has_head) return;
  emit_sp_gather(x);
  if (x->code->vocab_parallel_loss_bytes > 0) { /* Megatron's vocab-parallel loss (generate.h) */
    op_emit(x, logits_op);
    if (x->phase == PH_RECOMPUTE) return;
    graph_event *e = emit_stream(x, loss->label, loss->elements, loss->bytes[0], loss->launches[0]);
    e->mem_delta_bytes += loss->saved_bytes;
    e->mem_transient_bytes += logits_op->transient_bytes[0]; /* the bf16 logits while cast */
    for (int i = 0; emit_tp_on(x) && i < 3; i++) /* the max, the sum of exponentials, the target's logit */
      emit_collective(x, COLL_ALL_REDUCE, x->tp_group, x->T * FP32);
    return;
  }
  op_emit(x, logits_op);
  double logits = x->T * x->m->vocab * BF16;
  if (emit_tp_on(x)) emit_collective(x, COLL_ALL_GATHER, x->tp_group, logits);
  if (x->phase == PH_RECOMPUTE) {
    emit_last_event(x)->mem_transient_bytes += logits;
    return;
  }
  emit_last_event(x)->mem_delta_bytes += logits;
  graph_event *e = emit_stream(x, loss->label, loss->elements, loss->bytes[0], loss->launches[0]);
  e->mem_delta_bytes += loss->saved_bytes;
  e->mem_transient_bytes += loss->transient_bytes[0];
}

static void head_backward(emit *x, gboolean has_norm, gboolean has_head)
{
  if (has_head) {
    graph_event *e = op_emit(x, &x->head.op[2]);
    if (x->code->vocab_parallel_loss_bytes == 0)
      e->mem_delta_bytes -= x->T * x->m->vocab * BF16; /* the logits (stage output) are released */
    op_emit(x, &x->head.op[1]);
    if (emit_tp_on(x) && !x->l->sp) emit_collective(x, COLL_ALL_REDUCE, x->tp_group, x->T * x->m->hidden * BF16);
    emit_sp_gather(x);
  }
  if (has_norm) op_emit(x, &x->head.op[0]);
}
