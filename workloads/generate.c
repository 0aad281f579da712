/* generate -- see generate.h.
 *
 * Sizes use b = micro-batch, s = sequence, T = b*s tokens, h, f, V, tp = t.
 * With sequence parallelism the norm/residual region holds T/t tokens.
 * FLOPs are model FLOPs (no causal halving); a backward GEMM is dgrad + wgrad
 * (2x the forward). Bytes are what a kernel reads plus writes in HBM.
 */
#include "generate.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "block.h"
#include "precision.h"
#include "memory.h"
#include "mesh.h"
#include "ops.h"
#include "schedule.h"

#define BF16 2.0
#define FP32 4.0
/* allreduce_bucket_size of the study's optimizer: elements per gradient bucket. */
#define GRAD_BUCKET_ELEMENTS 500000000.0

gen_code gen_default_code(void)
{
  return (gen_code){.mlp_in_gemms = 2, .fused_norm = FALSE, .grad_reduce_bytes = FP32};
}

gen_options gen_default_options(void)
{
  gen_options o = {.partition = PARTITION_AUTO, .code = gen_default_code(), .symmetry = TRUE, .gpus_per_node = 8};
  return o;
}

/* Megatron's order tp-cp-(ep)-dp-pp (parallel_state.py): the mesh's (mesh.h). */
int gen_rank_cp(const layout *l, int stage, int dpi, int cpi, int tpi)
{
  mesh me;
  mesh_init(&me, l);
  int c[AXIS_N] = {[AXIS_TP] = tpi, [AXIS_CP] = cpi, [AXIS_DP] = dpi, [AXIS_PP] = stage};
  return mesh_rank(&me, c);
}

gboolean gen_mirrors_active_in_step(const gen_options *o, const layout *l) { return o->mirrors_active_in_step || l->cp > 1; }

gboolean gen_symmetry_holds(const layout *l)
{
  return l->cp == 1 || (l->zero < 2 && !l->overlap_grad_reduce && !l->overlap_param_gather);
}

int gen_rank(const layout *l, int stage, int dpi, int tpi) { return gen_rank_cp(l, stage, dpi, 0, tpi); }

/* Which part of a backward is emitted: all of it, or (split schedules, schedule.h) the input gradient B or
 * the weight gradient W. A GEMM's event says which in its variant (kernel_cost.h). */
typedef enum { BWD_WHOLE, BWD_INPUT, BWD_WEIGHT } bwd_part;

/* Everything one stage's program emission needs. */
typedef struct emit {
  const model *m;
  const layout *l;
  const gen_code *code;
  const partition *part;
  block layer_ops, embed, head; /* the operator tables of the items (block.h) */
  GArray *ev;      /* the program being written; NULL: only count the events (gen_stage_events) */
  double counted;  /* events counted when ev is NULL */
  double bucket_counted; /* of them, the gradient buckets' and the parameter all-gathers' */
  graph_event scratch; /* what a counted event is written to */
  int stage;
  int vstage;      /* the virtual stage being emitted: chunk * pp + stage (the stage with one chunk) */
  bwd_part bpart;
  int tp_group, dp_group, pp_group; /* dp_group: Megatron's dp-cp group (dp * cp ranks) with cp > 1 */
  int prev_rank, next_rank; /* the neighbours of the virtual stage (-1: none) */
  int cp_next, cp_prev;     /* the ranks after and before this one around the cp ring (-1: cp 1) */
  int up_rank, down_rank;   /* the ranks of stages stage - 1 and stage + 1 around the pipeline */
  double T, Tl;    /* tokens per micro-batch on the rank (seq / cp of each sequence); in the sequence-parallel region */
  graph_phase phase;
  int mb, layer;
  /* streams (docs/schedules.md, "Overlap"): what runs on the communication stream and what waits for it */
  graph_program *prog;  /* the program written (its deps); NULL when counting */
  double stage_params;
  gboolean on_side;     /* events pushed now go to stream 1 */
  int wait_for;         /* the next stream-0 event waits for this event (-1: none) */
  int last_main, last_side; /* the latest event of stream 0, of stream 1 (-1: none) */
  gboolean gather_units;    /* ZeRO-3 at dp > 1: each unit's weights gathered before its pass */
  int unit_gather;          /* the gather of the unit being emitted (-1: none) */
  double unit_gathered_bytes; /* what that gather brought in */
  gboolean reducing;        /* this backward reduces its gradients as it completes them */
  int n_buckets, buckets_done;
  double bucket_elements, grad_ready;
  GArray *param_gathers;    /* --overlap-param-gather: the step's first gathers (event indices), by bucket */
  gboolean param_wait;      /* this forward's units wait for them */
  double param_offset;      /* the parameters before the unit, in forward order */
} emit;

/* The block as the stack's code runs it. */
static block_code code_of(const layout *l, const gen_code *code)
{
  return (block_code){.fused_norm = layout_norm_fused(l, code->fused_norm), .mlp_in_gemms = code->mlp_in_gemms,
                      .fused_softmax_batches = code->fused_softmax_batches};
}

static void emit_tables(emit *x)
{
  block_code bc = code_of(x->l, x->code);
  block_layer(x->m, x->l, &bc, &x->layer_ops);
  block_embedding(x->m, x->l, &bc, &x->embed);
  block_head(x->m, x->l, &bc, &x->head);
}

/* Index of the event pushed last. */
static int last_index(const emit *x) { return x->ev ? (int)x->ev->len - 1 : (int)x->counted - 1; }

/* The event pushed last waits for event `after` (its stream's order aside). */
static void depend(emit *x, int after)
{
  if (!x->ev || after < 0) return;
  int i = last_index(x);
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

static graph_event *push(emit *x, graph_kind kind, graph_cost cost, block_label label)
{
  graph_event e = {.kind = (uint8_t)kind, .cost = (uint8_t)cost, .op = (uint16_t)label, .phase = (uint8_t)x->phase,
                   .micro_batch = x->mb, .layer = (int16_t)x->layer, .peer = -1, .launches = 1,
                   .stream = x->on_side ? 1 : 0};
  graph_event *out;
  if (!x->ev) {
    x->counted++;
    x->scratch = e;
    out = &x->scratch;
  } else {
    g_array_append_val(x->ev, e);
    out = &g_array_index(x->ev, graph_event, x->ev->len - 1);
  }
  if (x->on_side) {
    x->last_side = last_index(x);
  } else {
    x->last_main = last_index(x);
    if (x->wait_for >= 0) depend(x, x->wait_for);
    x->wait_for = -1;
  }
  return out;
}

static gboolean backward(const emit *x) { return x->phase == PH_BACKWARD; }

/* A GEMM (m x k).(k x n), `count` of them; backward does dgrad + wgrad. */
static graph_event *gemm(emit *x, block_label op, double m, double n, double k, int count)
{
  graph_event *e = push(x, EV_COMPUTE, COST_GEMM, op);
  int mult = backward(x) && x->bpart == BWD_WHOLE ? 2 : 1;
  if (backward(x)) e->variant = (uint8_t)x->bpart; /* 1: dgrad only, 2: wgrad only */
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
static graph_event *block_gemm(emit *x, const block_op *o)
{
  graph_event *e = gemm(x, o->label, x->T, o->n, o->k, o->count);
  graph_dtype dt = (graph_dtype)o->dtype[backward(x)];
  if (dt == DT_BF16) return e;
  double opnd = precision_operand_bytes((precision)x->l->precision), m = e->m, n = e->n, k = e->k;
  e->dtype = (uint8_t)dt;
  e->bytes = (opnd * (m * k + k * n) + BF16 * m * n) * e->launches;
  return e;
}

/* A memory-bound operator moving `bytes` with `launches` kernels. */
static graph_event *stream(emit *x, block_label op, double elements, double bytes, int launches)
{
  graph_event *e = push(x, EV_COMPUTE, COST_MEMORY, op);
  e->m = (int32_t)MIN(elements, 2e9);
  e->bytes = bytes;
  e->launches = launches;
  return e;
}

static void collective(emit *x, graph_coll c, int group, double bytes)
{
  if (group < 0) return;
  graph_event *e = push(x, EV_COLLECTIVE, COST_NONE, BL_COMM);
  e->variant = (uint8_t)c;
  e->peer = group;
  e->bytes = bytes;
}

static gboolean tp_on(const emit *x) { return x->l->tp > 1; }

/* Tensor-parallel exit of a row-parallel GEMM (forward) or entry of a column-parallel one (backward). */
static void tp_reduce(emit *x)
{
  if (!tp_on(x)) return;
  double full = x->T * x->m->hidden * BF16;
  collective(x, x->l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->tp_group, full);
}

/* Sequence-parallel gather before a column-parallel GEMM (forward), its backward reduce-scatter. */
static void sp_gather(emit *x)
{
  if (!tp_on(x) || !x->l->sp) return;
  double full = x->T * x->m->hidden * BF16;
  collective(x, backward(x) ? COLL_REDUCE_SCATTER : COLL_ALL_GATHER, x->tp_group, full);
}

/* Backward of a row-parallel GEMM with sp: all-gather the output gradient. */
static void sp_scatter_backward(emit *x)
{
  if (!tp_on(x) || !x->l->sp) return;
  collective(x, COLL_ALL_GATHER, x->tp_group, x->T * x->m->hidden * BF16);
}

/* The output gradient of a GEMM's event (T x n, `launches` of them): what its W needs besides the input. */
static double gemm_output_grad_bytes(const graph_event *e) { return BF16 * e->m * (double)e->n * e->launches; }

/* Of what an operator saves, the part a partial recomputation drops at the forward and its recompute
 * brings back: selective, the attention core's score-sized tensors; mlp, all the MLP sub-block saves but
 * its input. */
static double dropped_bytes(const layout *l, const block_op *o)
{
  if (l->ckpt == CKPT_SELECTIVE) return o->score_bytes;
  if (l->ckpt == CKPT_MLP && o->mlp) return o->saved_bytes - o->mlp_input_bytes;
  return 0;
}

/* Record the memory an operator needs (block.h): the activations it keeps for backward (+ at forward and
 * recompute, - at backward) and what it holds only while it runs. Under every-layer checkpointing the
 * forward of a checkpointed item keeps nothing (its input is kept by the caller). */
static void saves(emit *x, graph_event *e, const block_op *o)
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
  gboolean partial = x->l->ckpt == CKPT_SELECTIVE || x->l->ckpt == CKPT_MLP;
  if (x->phase == PH_FORWARD && (x->l->ckpt == CKPT_NONE || partial)) e->mem_delta_bytes += saved - dropped_bytes(x->l, o);
  else if (x->phase == PH_RECOMPUTE) e->mem_delta_bytes += partial ? dropped_bytes(x->l, o) : saved;
  else if (bwd) e->mem_delta_bytes -= saved;
  e->mem_transient_bytes += o->transient_bytes[bwd];
}

static graph_event *last_event(emit *x)
{
  return x->ev ? &g_array_index(x->ev, graph_event, x->ev->len - 1) : &x->scratch;
}

/* One attention kernel of an operator (one ring step with cp > 1). */
static graph_event *attention_kernel(emit *x, const block_op *o)
{
  gboolean bwd = backward(x);
  graph_event *e = push(x, EV_COMPUTE, COST_ATTENTION, o->label);
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
  gboolean bwd = backward(x);
  graph_event *e = push(x, EV_SEND, COST_NONE, BL_COMM);
  e->peer = bwd ? x->cp_prev : x->cp_next;
  e->bytes = bytes;
  e->variant = GRAPH_P2P_EAGER | GRAPH_P2P_LAYER;
  e = push(x, EV_RECV, COST_NONE, BL_COMM);
  e->peer = bwd ? x->cp_next : x->cp_prev;
  e->bytes = bytes;
  e->variant = GRAPH_P2P_LAYER;
}

/* Core attention: one kernel, or with cp > 1 the ring (block.h): forward cp kernels with the KV block passed
 * on before each but the first (cp - 1 exchanges); backward cp kernels, each followed by an exchange: the KV
 * block after the first, the KV block and its dKV after the middle ones, the dKV home after the last
 * (AttnFuncWithCPAndKVP2P.backward). What the operator keeps is counted at its first kernel; each holds the
 * transients. */
static graph_event *attention_emit(emit *x, const block_op *o)
{
  gboolean bwd = backward(x);
  int steps = MAX(o->ring_steps, 1);
  graph_event *first = NULL;
  for (int j = 0; j < steps; j++) {
    if (!bwd && j > 0) ring_exchange(x, o->kv_block_bytes);
    graph_event *e = attention_kernel(x, o);
    if (j == 0) saves(x, e, o);
    else e->mem_transient_bytes += o->transient_bytes[bwd];
    if (!first) first = e;
    if (bwd && steps > 1) ring_exchange(x, (j == 0 || j == steps - 1 ? 1 : 2) * o->kv_block_bytes);
  }
  return first;
}

/* One operator of a table, forward (or recompute) or backward: its compute event and what it saves, or the
 * tensor-parallel collectives of a region's entry or exit (Megatron's: no sp, an all-reduce after each
 * row-parallel GEMM forward and of each column-parallel GEMM's input gradient backward; sp, all-gather
 * before each column-parallel block and reduce-scatter after each row-parallel one, and the reverse in
 * backward). */
static graph_event *op_emit(emit *x, const block_op *o)
{
  gboolean bwd = backward(x);
  graph_event *e = NULL;
  switch (o->kind) {
  case BLOCK_GEMM: e = block_gemm(x, o); break;
  case BLOCK_MEMORY:
    e = stream(x, o->label, o->elements, o->bytes[bwd], o->launches[bwd]);
    /* an FP8 cast: the weights' at the first micro-batch's forward, kept for the step's others (docs/precision.md) */
    if (x->phase == PH_FORWARD && x->mb == 0 && o->step_bytes > 0) e->bytes += o->step_bytes;
    break;
  case BLOCK_ATTENTION: return attention_emit(x, o);
  case BLOCK_TP_ENTER:
    for (int i = 0; bwd && tp_on(x) && !x->l->sp && i < o->bwd_reduces; i++) /* one per GEMM's input gradient */
      collective(x, COLL_ALL_REDUCE, x->tp_group, x->T * x->m->hidden * BF16);
    sp_gather(x);
    return NULL;
  case BLOCK_TP_EXIT:
    if (bwd) sp_scatter_backward(x);
    else tp_reduce(x);
    return NULL;
  }
  saves(x, e, o);
  return e;
}

/* The forward (or recompute) ops of one transformer layer, in order. */
static void layer_forward(emit *x)
{
  for (int i = 0; i < x->layer_ops.n; i++) op_emit(x, &x->layer_ops.op[i]);
}

/* The backward ops of one layer: the table in reverse order; with selective recomputation the attention
 * core is run forward again just before its backward (where it kept score-sized tensors), with mlp the
 * MLP sub-block (its tp entry to its exit, collectives included) just before the backward of its exit. */
static void layer_backward(emit *x)
{
  const block *b = &x->layer_ops;
  for (int i = b->n - 1; i >= 0; i--) {
    const block_op *o = &b->op[i];
    if (x->l->ckpt == CKPT_SELECTIVE && o->kind == BLOCK_ATTENTION && o->score_bytes > 0) {
      x->phase = PH_RECOMPUTE;
      op_emit(x, o);
      x->phase = PH_BACKWARD;
    }
    if (x->l->ckpt == CKPT_MLP && o->mlp && (i == b->n - 1 || !b->op[i + 1].mlp)) {
      int first = i;
      while (first > 0 && b->op[first - 1].mlp) first--;
      x->phase = PH_RECOMPUTE;
      for (int j = first; j <= i; j++) op_emit(x, &b->op[j]);
      x->phase = PH_BACKWARD;
    }
    op_emit(x, o);
  }
}

/* The vocab-parallel lookup and its tp collective (forward: all-reduce, or reduce-scatter into the sequence-
 * parallel region; backward with sp: all-gather), then the rest of the embedding item's table. */
static void embedding(emit *x)
{
  double el = x->T * x->m->hidden;
  gboolean bwd = backward(x);
  for (int i = x->embed.n - 1; bwd && i >= 1; i--) op_emit(x, &x->embed.op[i]);
  op_emit(x, &x->embed.op[0]);
  if (!bwd && tp_on(x)) collective(x, x->l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->tp_group, el * BF16);
  if (bwd && tp_on(x) && x->l->sp) collective(x, COLL_ALL_GATHER, x->tp_group, el * BF16);
  for (int i = 1; !bwd && i < x->embed.n; i++) op_emit(x, &x->embed.op[i]);
}

/* Final norm, output projection and logits all-gather (forward or recompute),
 * then on forward the fp32 cross-entropy. The gathered bf16 logits are the
 * stage's output: kept until the loss backward (on recompute they are a
 * temporary). The loss runs outside the checkpointed head, so its fp32
 * log-softmax is saved even with every-layer checkpointing. */
static void head_forward(emit *x, gboolean has_norm, gboolean has_head)
{
  const block_op *norm = &x->head.op[0], *logits_op = &x->head.op[1], *loss = &x->head.op[2];
  if (has_norm) op_emit(x, norm);
  if (!has_head) return;
  sp_gather(x);
  op_emit(x, logits_op);
  double logits = x->T * x->m->vocab * BF16;
  if (tp_on(x)) collective(x, COLL_ALL_GATHER, x->tp_group, logits);
  if (x->phase == PH_RECOMPUTE) {
    last_event(x)->mem_transient_bytes += logits;
    return;
  }
  last_event(x)->mem_delta_bytes += logits;
  graph_event *e = stream(x, loss->label, loss->elements, loss->bytes[0], loss->launches[0]);
  e->mem_delta_bytes += loss->saved_bytes;
  e->mem_transient_bytes += loss->transient_bytes[0];
}

static void head_backward(emit *x, gboolean has_norm, gboolean has_head)
{
  if (has_head) {
    graph_event *e = op_emit(x, &x->head.op[2]);
    e->mem_delta_bytes -= x->T * x->m->vocab * BF16; /* the logits (stage output) are released */
    op_emit(x, &x->head.op[1]);
    if (tp_on(x) && !x->l->sp) collective(x, COLL_ALL_REDUCE, x->tp_group, x->T * x->m->hidden * BF16);
    sp_gather(x);
  }
  if (has_norm) op_emit(x, &x->head.op[0]);
}

static double act_send_bytes(const emit *x)
{
  /* activations [b, s(/tp with sp), h] in bf16 plus int64 position ids */
  return x->Tl * x->m->hidden * BF16 + x->T * 8.0;
}

/* ---- units: what ZeRO-3 gathers (FSDP's wrapped modules) and what a backward completes the gradients of ---- */

/* The parameters of the units of the virtual stage in forward order: the embedding, each layer, the final
 * norm with the head (their sum is mem_stage_params'). Returns how many; out holds count + 2. */
static int stage_units(const emit *x, double *out)
{
  int first, count, v = x->vstage, n = 0;
  partition_layers(x->part, x->m, v, &first, &count);
  gboolean emb = partition_has_embedding(x->part, v), hn = partition_has_final_norm(x->part, x->m, v),
           hh = partition_has_head(x->part, x->m, v);
  if (emb) out[n++] = block_embedding_params(x->m, x->l->tp);
  for (int i = 0; i < count; i++) out[n++] = block_layer_params(x->m, x->l->tp);
  /* tied embeddings on the embedding's stage: the head's weights are the embedding's, counted there */
  if (hn || hh)
    out[n++] = (hn ? block_final_norm_params(x->m) : 0) + (hh && !(x->m->tied_embeddings && emb) ? block_head_params(x->m, x->l->tp) : 0);
  return n;
}

/* An all-gather of the dp shards of `params` weights on the communication stream, after event `after` of
 * stream 0 (-1: none); it holds the other ranks' shards from its end. Returns its index. */
static int gather_unit(emit *x, double params, int after)
{
  graph_phase ph = x->phase;
  x->phase = PH_DP;
  x->on_side = TRUE;
  collective(x, COLL_ALL_GATHER, x->dp_group, params * BF16);
  last_event(x)->mem_delta_bytes += params * BF16 * (layout_dp_cp(x->l) - 1) / layout_dp_cp(x->l);
  depend(x, after);
  x->on_side = FALSE;
  x->phase = ph;
  return last_index(x);
}

/* Before unit u of n (params[u]) of a pass that walks them by `dir` (+1 forward, -1 backward): ZeRO-3 gathers
 * it (issued when the pass begins) and the next unit's weights, once this unit starts (FSDP's prefetch:
 * at most two units whole), and its first kernel waits for its own gather; the first forward of a step with
 * --overlap-param-gather waits for the bucket of the step's first gathers that completes the unit. */
static void unit_begin(emit *x, const double *params, int n, int u, int dir)
{
  if (x->gather_units) {
    int mine = u == (dir > 0 ? 0 : n - 1) ? gather_unit(x, params[u], x->last_main) : x->unit_gather;
    int next = u + dir;
    x->unit_gather = next >= 0 && next < n ? gather_unit(x, params[next], x->last_main) : -1;
    x->unit_gathered_bytes = params[u] * BF16 * (layout_dp_cp(x->l) - 1) / layout_dp_cp(x->l);
    x->wait_for = mine;
  }
  if (x->param_wait && x->param_gathers && x->param_gathers->len) {
    int buckets = (int)x->param_gathers->len;
    double per = x->stage_params / buckets, end = x->param_offset + params[u];
    int b = MIN(buckets - 1, MAX(0, (int)ceil(end / per * (1 - 1e-12)) - 1));
    x->wait_for = g_array_index(x->param_gathers, int, b);
    x->param_offset = end;
  }
}

/* One bucket of gradients completed by the backward: flattened and cast (stream 0), reduced over dp (all-reduce;
 * reduce-scatter under ZeRO-2/3) and, all-reduced, copied back. --overlap-grad-reduce: the reduction and the copy
 * on the communication stream once the cast ended, the bucket held from the cast to the end of its reduction;
 * else all on stream 0, the bucket a transient of each. */
static void reduce_bucket(emit *x, double elements)
{
  gboolean overlap = x->l->overlap_grad_reduce, rs = x->l->zero >= 2;
  double g = x->code->grad_reduce_bytes, held = elements * (BF16 + g);
  graph_phase ph = x->phase;
  x->phase = PH_DP;
  graph_event *e = stream(x, BL_OPTIMIZER, elements, elements * (BF16 + g), 1);
  if (overlap) e->mem_delta_bytes += held;
  else e->mem_transient_bytes = held;
  int cast = last_index(x);
  x->on_side = overlap;
  collective(x, rs ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, x->dp_group, elements * g);
  /* with the overlap after its cast; else, on stream 0, after the gathers ZeRO-3 prefetches on the other stream
   * (one group's collectives run one at a time, as on one NCCL communicator) */
  depend(x, overlap ? cast : x->gather_units ? x->last_side : -1);
  e = last_event(x);
  if (!rs) {
    if (!overlap) e->mem_transient_bytes = held;
    e = stream(x, BL_OPTIMIZER, elements, elements * (BF16 + g), 1);
  }
  if (overlap) e->mem_delta_bytes -= held;
  else e->mem_transient_bytes = held;
  x->on_side = FALSE;
  x->phase = ph;
  x->buckets_done++;
}

/* After unit u's backward: its gradients are complete. ZeRO-3 reduces each unit's; otherwise each bucket of
 * stage_params / buckets elements, in the backward's order, as soon as the units complete it. */
static void unit_end_backward(emit *x, const double *params, int u)
{
  if (x->gather_units) last_event(x)->mem_delta_bytes -= x->unit_gathered_bytes;
  if (!x->reducing) return;
  if (x->l->zero >= 3) {
    reduce_bucket(x, params[u]);
    return;
  }
  x->grad_ready += params[u];
  while (x->buckets_done < x->n_buckets - 1 && x->grad_ready >= (x->buckets_done + 1) * x->bucket_elements * (1 - 1e-12))
    reduce_bucket(x, x->bucket_elements);
}

static void unit_end_forward(emit *x)
{
  if (x->gather_units) last_event(x)->mem_delta_bytes -= x->unit_gathered_bytes;
}

/* Forward of every item the stage holds; with checkpointing, forward keeps only
 * each item's input, and backward first recomputes the item. */
static void stage_forward(emit *x, const mem_ctx *mc)
{
  int first, count, stage = x->vstage;
  partition_layers(x->part, x->m, stage, &first, &count);
  g_autofree double *units = g_new(double, count + 2);
  int n = stage_units(x, units), u = 0;
  graph_phase ph = x->phase;
  if (partition_has_embedding(x->part, stage)) {
    unit_begin(x, units, n, u++, 1);
    embedding(x);
    unit_end_forward(x);
  }
  for (int i = 0; i < count; i++) {
    x->layer = first + i;
    unit_begin(x, units, n, u++, 1);
    layer_forward(x);
    if (ph == PH_FORWARD && x->l->ckpt == CKPT_EVERY_LAYER) /* the checkpointed input of the layer */
      last_event(x)->mem_delta_bytes += mem_checkpoint_bytes(mc);
    unit_end_forward(x);
  }
  x->layer = -1;
  gboolean hn = partition_has_final_norm(x->part, x->m, stage), hh = partition_has_head(x->part, x->m, stage);
  if (hn || hh) {
    unit_begin(x, units, n, u++, 1);
    head_forward(x, hn, hh);
    unit_end_forward(x);
  }
}

static void stage_backward(emit *x, const mem_ctx *mc)
{
  int first, count, stage = x->vstage;
  partition_layers(x->part, x->m, stage, &first, &count);
  g_autofree double *units = g_new(double, count + 2);
  int n = stage_units(x, units), u = n - 1;
  gboolean ckpt = x->l->ckpt == CKPT_EVERY_LAYER;
  gboolean hn = partition_has_final_norm(x->part, x->m, stage), hh = partition_has_head(x->part, x->m, stage);
  if (hn || hh) {
    unit_begin(x, units, n, u, -1);
    if (ckpt) {
      x->phase = PH_RECOMPUTE;
      head_forward(x, hn, hh);
      x->phase = PH_BACKWARD;
    }
    head_backward(x, hn, hh);
    unit_end_backward(x, units, u--);
  }
  for (int i = count - 1; i >= 0; i--) {
    x->layer = first + i;
    unit_begin(x, units, n, u, -1);
    if (ckpt) {
      x->phase = PH_RECOMPUTE;
      layer_forward(x);
      x->phase = PH_BACKWARD;
    }
    layer_backward(x);
    if (ckpt) last_event(x)->mem_delta_bytes -= mem_checkpoint_bytes(mc);
    unit_end_backward(x, units, u--);
  }
  x->layer = -1;
  if (partition_has_embedding(x->part, stage) && x->bpart == BWD_WHOLE) { /* split: the embedding is all W */
    unit_begin(x, units, n, u, -1);
    if (ckpt) { /* the embedding's recompute keeps nothing worth counting */
      x->phase = PH_RECOMPUTE;
      embedding(x);
      x->phase = PH_BACKWARD;
    }
    embedding(x);
    unit_end_backward(x, units, u--);
  }
  while (x->reducing && x->l->zero < 3 && x->buckets_done < x->n_buckets) reduce_bucket(x, x->bucket_elements);
}

/* Reduce gradients and step the optimizer (scaling's Optimizer.step()). */
static void optimizer_step(emit *x, double stage_params)
{
  const layout *l = x->l;
  x->mb = -1;
  x->layer = -1;
  x->phase = PH_DP;
  x->wait_for = x->last_side; /* the step goes on once the communication stream's reductions ended */
  if (l->sp && tp_on(x)) collective(x, COLL_ALL_REDUCE, x->tp_group, 2.0 * x->m->hidden * BF16);
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
      double held = mem_bucket_transient_bytes(MIN(stage_params, GRAD_BUCKET_ELEMENTS)), g = x->code->grad_reduce_bytes;
      stream(x, BL_OPTIMIZER, per, per * (BF16 + g), 1)->mem_transient_bytes = held;
      collective(x, COLL_ALL_REDUCE, x->dp_group, per * g);
      last_event(x)->mem_transient_bytes = held;
      stream(x, BL_OPTIMIZER, per, per * (BF16 + g), 1)->mem_transient_bytes = held;
    }
  }
  collective(x, COLL_ALL_REDUCE, x->tp_group, FP32); /* grad norm over tp, then pp */
  collective(x, COLL_ALL_REDUCE, x->pp_group, FP32);
  x->phase = PH_OPTIMIZER;
  double shard = l->zero >= 1 ? stage_params / layout_dp_cp(l) : stage_params; /* sharded over dp-cp */
  /* copy grad slice to fp32, AdamW (master, m, v read+write, grad read), copy back to bf16 */
  stream(x, BL_OPTIMIZER, shard, shard * OPS_ADAMW_BYTES_PER_PARAM, OPS_ADAMW_KERNELS)->mem_transient_bytes =
      mem_adam_transient_bytes(l, shard);
  if ((l->zero == 1 || l->zero == 2) && layout_dp_cp(l) > 1 && !l->overlap_param_gather) {
    x->phase = PH_DP;
    double shards = MAX(1, floor(shard * layout_dp_cp(l) / GRAD_BUCKET_ELEMENTS));
    if (!x->ev) {
      x->counted += shards;
      x->bucket_counted += shards;
    }
    for (int i = 0; x->ev && i < (int)shards; i++)
      collective(x, COLL_ALL_GATHER, x->dp_group, stage_params / shards * BF16);
  }
}

/* W of a split backward: the weight gradient of every GEMM, in the backward's order, and the embedding's
 * backward (a weight gradient only). Each GEMM releases what its B kept alive. */
static void stage_weight(emit *x)
{
  int first, count, v = x->vstage;
  partition_layers(x->part, x->m, v, &first, &count);
  if (partition_has_head(x->part, x->m, v)) {
    const block_op *o = &x->head.op[1]; /* the logits GEMM */
    saves(x, block_gemm(x, o), o);
  }
  for (int i = count - 1; i >= 0; i--) {
    x->layer = first + i;
    for (int j = x->layer_ops.n - 1; j >= 0; j--) {
      const block_op *o = &x->layer_ops.op[j];
      if (o->kind == BLOCK_GEMM) saves(x, block_gemm(x, o), o);
    }
  }
  x->layer = -1;
  if (partition_has_embedding(x->part, v)) {
    if (x->l->ckpt == CKPT_EVERY_LAYER) {
      x->phase = PH_RECOMPUTE;
      embedding(x);
      x->phase = PH_BACKWARD;
    }
    embedding(x);
  }
}

/* Point the emitter at chunk c of its stage: the virtual stage and its neighbours. */
static void at_chunk(emit *x, int c)
{
  int last = x->l->pp * x->l->virtual_stages - 1;
  x->vstage = c * x->l->pp + x->stage;
  x->prev_rank = x->vstage > 0 ? x->up_rank : -1;
  x->next_rank = x->vstage < last ? x->down_rank : -1;
}

/* ZeRO-1/2's parameter all-gather, with --overlap-param-gather at the start of the step (the previous step's
 * update, issued per bucket on the communication stream: the first forward's units wait for their own bucket
 * only). The buckets as the optimizer's gather. */
static void param_gather_prologue(emit *x)
{
  const layout *l = x->l;
  if (!l->overlap_param_gather || layout_dp_cp(l) < 2) return;
  double shards = MAX(1, floor(x->stage_params / GRAD_BUCKET_ELEMENTS));
  x->phase = PH_DP;
  x->mb = -1;
  x->layer = -1;
  x->on_side = TRUE;
  for (int i = 0; i < (int)shards; i++) {
    collective(x, COLL_ALL_GATHER, x->dp_group, x->stage_params / shards * BF16);
    x->bucket_counted += !x->ev;
    if (x->param_gathers) {
      int at = last_index(x);
      g_array_append_val(x->param_gathers, at);
    }
  }
  x->on_side = FALSE;
}

/* The compute of one schedule instruction (a forward, a backward or a part of one); `final` says it is the
 * stage's last backward, `first` its first forward. */
static void emit_pass(emit *x, const mem_ctx *mc, sched_kind k, gboolean first, gboolean final)
{
  const layout *l = x->l;
  x->gather_units = l->zero >= 3 && layout_dp_cp(l) > 1;
  x->unit_gather = -1;
  x->reducing = k == SCHED_BACKWARD && layout_dp_cp(l) > 1 && (l->zero >= 2 || (l->overlap_grad_reduce && final));
  x->n_buckets = (int)ceil(x->stage_params / GRAD_BUCKET_ELEMENTS);
  x->bucket_elements = x->stage_params / MAX(x->n_buckets, 1);
  x->buckets_done = 0;
  x->grad_ready = 0;
  x->param_wait = k == SCHED_FORWARD && first && l->overlap_param_gather;
  x->param_offset = 0;
  x->bpart = k == SCHED_BACKWARD_B ? BWD_INPUT : k == SCHED_BACKWARD_W ? BWD_WEIGHT : BWD_WHOLE;
  x->phase = k == SCHED_FORWARD ? PH_FORWARD : PH_BACKWARD;
  if (k == SCHED_FORWARD) stage_forward(x, mc);
  else if (k == SCHED_BACKWARD_W) stage_weight(x);
  else stage_backward(x, mc);
  x->bpart = BWD_WHOLE;
  x->reducing = x->param_wait = FALSE;
}

/* The instruction indices of the stage's first forward and last backward (-1: none). */
static void first_and_final(const GArray *instrs, int *first_fwd, int *final_bwd)
{
  *first_fwd = *final_bwd = -1;
  for (guint i = 0; i < instrs->len; i++) {
    sched_kind k = g_array_index(instrs, sched_instr, i).kind;
    if (k == SCHED_FORWARD && *first_fwd < 0) *first_fwd = (int)i;
    if (k == SCHED_BACKWARD) *final_bwd = (int)i;
  }
}

static void emit_stage(emit *x, const mem_ctx *mc, double stage_params)
{
  const layout *l = x->l;
  const sched_def *sd = sched_get(l->schedule);
  g_autoptr(GArray) instrs = sched_instructions(l->schedule, x->stage, l->pp, l->virtual_stages, l->grad_accum);
  double act_buf = mem_pipe_buffer_bytes(mc, FALSE), grad_buf = mem_pipe_buffer_bytes(mc, TRUE);
  /* the study's rendezvous sends keep variant 0; other schedules' sends do not wait, and gradients travel
   * apart from activations (a stage may get both from one neighbour around an interleaved pipeline) */
  uint8_t eager = sd->eager_sends ? GRAPH_P2P_EAGER : 0, grad_channel = sd->eager_sends ? GRAPH_P2P_GRAD_CHANNEL : 0;
  int first_fwd, final_bwd;
  first_and_final(instrs, &first_fwd, &final_bwd);
  param_gather_prologue(x);
  for (guint i = 0; i < instrs->len; i++) {
    const sched_instr *in = &g_array_index(instrs, sched_instr, i);
    at_chunk(x, in->chunk);
    x->mb = in->micro_batch;
    x->layer = -1;
    graph_event *e;
    switch (in->kind) {
    case SCHED_RECV_ACT:
    case SCHED_SEND_ACT:
      x->phase = PH_FORWARD;
      e = push(x, in->kind == SCHED_RECV_ACT ? EV_RECV : EV_SEND, COST_NONE, BL_COMM);
      e->peer = in->kind == SCHED_RECV_ACT ? x->prev_rank : x->next_rank;
      e->bytes = act_send_bytes(x);
      if (in->kind == SCHED_SEND_ACT) e->variant = eager;
      if (in->kind == SCHED_RECV_ACT) e->mem_delta_bytes = act_buf; /* stage input, kept until its backward */
      break;
    case SCHED_RECV_GRAD:
    case SCHED_SEND_GRAD:
      x->phase = PH_BACKWARD;
      e = push(x, in->kind == SCHED_RECV_GRAD ? EV_RECV : EV_SEND, COST_NONE, BL_COMM);
      e->peer = in->kind == SCHED_RECV_GRAD ? x->next_rank : x->prev_rank;
      e->bytes = x->Tl * x->m->hidden * BF16;
      e->variant = grad_channel | (in->kind == SCHED_SEND_GRAD ? eager : 0);
      /* the output gradient lives until the backward ends; the input gradient until it is sent */
      e->mem_delta_bytes = in->kind == SCHED_RECV_GRAD ? grad_buf : -grad_buf;
      break;
    case SCHED_FORWARD:
      emit_pass(x, mc, in->kind, (int)i == first_fwd, FALSE);
      if (x->next_rank >= 0) last_event(x)->mem_delta_bytes += grad_buf; /* stage output, kept until RecvGrad */
      break;
    case SCHED_BACKWARD:
    case SCHED_BACKWARD_B:
      emit_pass(x, mc, in->kind, FALSE, (int)i == final_bwd);
      /* output and its gradient released; the input replaced by its gradient, sent next */
      if (x->next_rank >= 0) last_event(x)->mem_delta_bytes -= 2 * grad_buf;
      if (x->prev_rank >= 0) last_event(x)->mem_delta_bytes += grad_buf - act_buf;
      break;
    case SCHED_BACKWARD_W:
      emit_pass(x, mc, in->kind, FALSE, FALSE);
      break;
    case SCHED_OPTIMIZER:
      optimizer_step(x, stage_params);
      break;
    case SCHED_N_KINDS:
      break;
    }
  }
}

/* A group of n ranks in ring order; none (-1) for fewer than 2. */
static int add_group_of(graph *g, const int *ranks, int n, const char *label)
{
  return n < 2 ? -1 : graph_add_group(g, ranks, n, label);
}

/* Group ids of every rank's groups: per axis of the table (axes.h), one group per mesh group along the axis'
 * group axes (dp's: Megatron's dp-cp group of dp * cp ranks, cp fastest), numbered as the mesh numbers them;
 * made in the table's order, so the graph's group ids are tp's, then cp's, dp's, pp's. */
typedef struct groups {
  mesh me;
  int *id[AXIS_N]; /* by mesh_group_index */
} groups;

static void make_groups(graph *g, const layout *l, groups *gs)
{
  mesh_init(&gs->me, l);
  g_autofree int *ranks = g_new(int, gs->me.world);
  for (int a = 0; a < AXIS_N; a++) {
    unsigned mask = axis_get(a)->group;
    int n = mesh_group_size(&gs->me, mask), count = mesh_group_count(&gs->me, mask);
    char label[sizeof ((graph_group *)NULL)->label];
    axis_group_label(l, a, label, sizeof label);
    gs->id[a] = g_new(int, count);
    for (int i = 0; i < count; i++) {
      mesh_group_ranks(&gs->me, mask, i, ranks);
      gs->id[a][i] = add_group_of(g, ranks, n, label);
    }
  }
}

/* The id of a rank's group of axis a (-1: none, a group of 1). */
static int group_of(const groups *gs, axis_id a, int rank)
{
  return gs->id[a][mesh_group_index(&gs->me, rank, axis_get(a)->group)];
}

static void groups_clear(groups *gs)
{
  for (int a = 0; a < AXIS_N; a++) g_free(gs->id[a]);
}

static void emit_rank(graph *g, const model *m, const layout *l, const gen_code *code, const partition *part,
                      const groups *gs, int rank)
{
  const mesh *me = &gs->me;
  int s = mesh_group_position(me, rank, AXIS_BIT(AXIS_PP));
  graph_program *p = graph_program_of(g, rank);
  mem_ctx mc;
  mem_ctx_init(&mc, m, l);
  mc.code = code_of(l, code);
  gboolean ring = l->cp > 1;
  emit x = {.m = m, .l = l, .code = code, .part = part, .ev = p->events, .prog = p, .wait_for = -1, .last_main = -1,
            .last_side = -1, .stage = s, .tp_group = group_of(gs, AXIS_TP, rank), .dp_group = group_of(gs, AXIS_DP, rank),
            .pp_group = group_of(gs, AXIS_PP, rank),
            .up_rank = mesh_step(me, rank, AXIS_PP, -1), .down_rank = mesh_step(me, rank, AXIS_PP, 1),
            .cp_next = ring ? mesh_step(me, rank, AXIS_CP, 1) : -1,
            .cp_prev = ring ? mesh_step(me, rank, AXIS_CP, -1) : -1, .T = layout_tokens_per_rank(l)};
  x.Tl = l->sp ? x.T / l->tp : x.T;
  emit_tables(&x);
  double stage_params = mem_stage_params(m, l, part, s);
  x.stage_params = stage_params;
  x.param_gathers = g_array_new(FALSE, FALSE, sizeof(int));
  emit_stage(&x, &mc, stage_params);
  g_array_free(x.param_gathers, TRUE);
  mem_states st;
  mem_model_states(m, l, part, s, &st);
  p->mem_params_bytes = st.params_bytes;
  p->mem_grads_bytes = st.grads_bytes;
  p->mem_optimizer_bytes = st.optimizer_bytes;
  p->mem_buffers_bytes = st.buffers_bytes;
  p->mem_static_bytes = st.params_bytes + st.grads_bytes + st.optimizer_bytes + st.buffers_bytes;
}

/* 0 when a rank has a group of axis a, -1 when it has none (a group of 1). */
static int group_exists(const layout *l, axis_id a) { return axis_product(l, axis_get(a)->group) > 1 ? 0 : -1; }

void gen_stage_events(const model *m, const layout *l, const gen_code *code, const partition *part, int stage,
                      gen_stage_size *out)
{
  mem_ctx mc;
  mem_ctx_init(&mc, m, l);
  mc.code = code_of(l, code);
  /* the groups and neighbours a rank of the stage has, as emit_rank's ids: only whether they exist counts */
  emit x = {.m = m, .l = l, .code = code, .part = part, .stage = stage, .wait_for = -1, .last_main = -1, .last_side = -1,
            .stage_params = mem_stage_params(m, l, part, stage), .tp_group = group_exists(l, AXIS_TP),
            .dp_group = group_exists(l, AXIS_DP), .pp_group = group_exists(l, AXIS_PP), .up_rank = 0, .down_rank = 0,
            .cp_next = l->cp > 1 ? 0 : -1, .cp_prev = l->cp > 1 ? 0 : -1, .T = layout_tokens_per_rank(l)};
  x.Tl = l->sp ? x.T / l->tp : x.T;
  emit_tables(&x);
  /* the events of each pass (kind, chunk), counted once; then the schedule's instructions add them up */
  int V = l->virtual_stages;
  g_autofree double *per_pass = g_new(double, SCHED_N_KINDS * V);
  for (int k = 0; k < SCHED_N_KINDS * V; k++) per_pass[k] = -1;
  g_autoptr(GArray) instrs = sched_instructions(l->schedule, stage, l->pp, V, l->grad_accum);
  int first_fwd, final_bwd;
  first_and_final(instrs, &first_fwd, &final_bwd);
  double compute = 0, p2p = 0, final_extra = 0;
  for (guint i = 0; i < instrs->len; i++) {
    const sched_instr *in = &g_array_index(instrs, sched_instr, i);
    sched_kind k = in->kind;
    if (k == SCHED_RECV_ACT || k == SCHED_SEND_ACT || k == SCHED_RECV_GRAD || k == SCHED_SEND_GRAD) p2p++;
    if (k != SCHED_FORWARD && k != SCHED_BACKWARD && k != SCHED_BACKWARD_B && k != SCHED_BACKWARD_W) continue;
    double *n = &per_pass[k * V + in->chunk];
    if (*n < 0) {
      at_chunk(&x, in->chunk);
      double before = x.counted;
      emit_pass(&x, &mc, k, FALSE, FALSE);
      *n = x.counted - before;
    }
    compute += *n;
    if ((int)i == final_bwd && l->overlap_grad_reduce && l->zero < 2 && layout_dp_cp(l) > 1) { /* its buckets, once a step */
      at_chunk(&x, in->chunk);
      double before = x.counted, plain = *n;
      x.bucket_counted = 0;
      emit_pass(&x, &mc, k, FALSE, TRUE);
      final_extra = x.counted - before - plain;
    }
  }
  x.counted = 0;
  x.bucket_counted = final_extra;
  param_gather_prologue(&x);
  optimizer_step(&x, mem_stage_params(m, l, part, stage));
  x.counted += final_extra;
  int mbs = MAX(l->grad_accum, 1);
  out->micro_batch_events = compute / mbs + p2p / mbs;
  out->step_events = x.counted;
  out->bucket_events = x.bucket_counted;
  out->events = compute + p2p + x.counted;
}

/* Index of the first event of the optimizer step (where mirrors become active). */
static int optimizer_start(const graph_program *p)
{
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->phase == PH_DP || e->phase == PH_OPTIMIZER) return (int)i;
  }
  return (int)p->events->len;
}

static void set_meta(graph *g, const model *m, const layout *l, const gen_options *o, const partition *part)
{
  graph_meta *gm = &g->meta;
  g_strlcpy(gm->partition, partition_method_name(part->method), sizeof gm->partition);
  g_strlcpy(gm->model, m->name, sizeof gm->model);
  GString *lay = g_string_new(NULL);
  g_string_printf(lay, "gpus=%d tp=%d pp=%d dp=%d sp=%d micro_batch=%d global_batch=%d seq_len=%d "
                  "checkpointing=%s attention_kernel=%s zero1=%d", l->gpus, l->tp, l->pp, l->dp, l->sp, l->micro_batch,
                  l->global_batch, l->seq_len, layout_ckpt_name(l->ckpt), layout_attn_name(l->attn), l->zero >= 1);
  if (l->zero > 1 || l->overlap_grad_reduce || l->overlap_param_gather) /* the study's string is unchanged */
    g_string_append_printf(lay, " zero=%d overlap_grad_reduce=%d overlap_param_gather=%d", l->zero,
                           l->overlap_grad_reduce, l->overlap_param_gather);
  if (l->cp > 1) g_string_append_printf(lay, " cp=%d", l->cp); /* cp 1 is the layout string's silent default */
  if (l->schedule != 0 || l->virtual_stages != 1) /* the study's 1F1B is the layout string's silent default */
    g_string_append_printf(lay, " schedule=%s virtual_stages=%d", sched_name(l->schedule), l->virtual_stages);
  if (l->precision != PREC_BF16) g_string_append_printf(lay, " precision=%s", precision_name(l->precision));
  g_strlcpy(gm->layout, lay->str, sizeof gm->layout);
  g_string_free(lay, TRUE);
  g_strlcpy(gm->precision, precision_name(l->precision), sizeof gm->precision);
  gm->gpus_per_node = o->gpus_per_node;
  gm->tokens_per_step = (double)l->global_batch * l->seq_len;
  gm->model_flops_per_step = model_flops_per_token(m, l->seq_len) * l->global_batch * l->seq_len;
  gm->pp = l->pp;
  gm->ranks_per_stage = (int)axis_product(l, AXIS_ALL & ~axis_mask_stage()); /* every axis' but the stage's */
}

graph *gen_graph(const model *m, const layout *l, const gen_options *o, GError **err)
{
  partition part;
  if (!partition_make_chunked(&part, m, l->pp, l->virtual_stages, l->tp, o->partition, err)) return NULL;
  graph *g = graph_new(l->gpus);
  for (int i = 0; i < BL_N; i++) { /* the block's labels are the graph's op ids (BL_COMM = GRAPH_OP_COMM) */
    int id = graph_op_id(g, block_label_name((block_label)i));
    g_assert(id == i);
  }
  groups gs;
  make_groups(g, l, &gs);
  set_meta(g, m, l, o, &part);
  gboolean symmetry = o->symmetry && gen_symmetry_holds(l);
  /* symmetry: one explicit program per coordinates along the axes that are not mirrored (stage, cp index)
   * -- the cp ring's ranks talk to each other inside a layer -- and mirrors for the ranks along the mirrored
   * axes (the other replicas and tensor-parallel ranks), each of its source with 0 along them */
  const mesh *me = &gs.me;
  unsigned mirrored = axis_mask_mirrored();
  for (int r = 0; r < me->world; r++)
    if (!symmetry || mesh_zeroed(me, r, mirrored) == r) emit_rank(g, m, l, &o->code, &part, &gs, r);
  if (symmetry)
    for (int r = 0; r < me->world; r++) {
      int src = mesh_zeroed(me, r, mirrored);
      if (src == r) continue;
      graph_program *sp = graph_program_of(g, src);
      int from = gen_mirrors_active_in_step(o, l) ? optimizer_start(sp) : (int)sp->events->len;
      graph_make_mirror(g, r, src, from);
      graph_program *mp = graph_program_of(g, r);
      mp->mem_params_bytes = sp->mem_params_bytes;
      mp->mem_grads_bytes = sp->mem_grads_bytes;
      mp->mem_optimizer_bytes = sp->mem_optimizer_bytes;
      mp->mem_buffers_bytes = sp->mem_buffers_bytes;
      mp->mem_static_bytes = sp->mem_static_bytes;
      for (int a = 0; a < AXIS_N; a++) /* the source's groups stand for the mirror's */
        if (group_of(&gs, a, src) >= 0) graph_map_group(g, r, group_of(&gs, a, src), group_of(&gs, a, r));
    }
  groups_clear(&gs);
  partition_clear(&part);
  return g;
}
