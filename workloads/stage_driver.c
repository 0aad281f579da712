/* stage_driver -- the generator's schedule driver: one stage's program as its schedule's instructions
 * (schedule.h) -- forward, backward (whole or split into B and W) of each model chunk it holds, the
 * pipeline's sends and receives -- then the optimizer step.
 *
 * Owns: the order of a stage's passes, the pipeline p2p events, checkpointing's recompute placement.
 * May not touch: what a pass of one item emits (layer_pass.c).
 */
#include "emit.h"

#include <string.h>

static gint dep_cmp(gconstpointer pa, gconstpointer pb)
{
  const graph_dep *a = pa, *b = pb;
  if (a->event != b->event) return (a->event > b->event) - (a->event < b->event);
  return (a->after > b->after) - (a->after < b->after);
}

static double act_send_bytes(const emit *x)
{
  /* activations [b, s(/tp with sp), h] in bf16 plus int64 position ids */
  return x->Tl * x->m->hidden * BF16 + x->T * 8.0;
}

gboolean stage_pipe_scatters(const emit *x) { return x->code->pipe_scatter_gather && x->l->tp > 1 && !x->l->sp; }

/* A pipeline tensor of `full` bytes as it travels: each tensor-parallel rank's 1/tp of it where the code scatters
 * (gen_code pipe_scatter_gather), the receiver then all-gathering it over tp (its own NVLink collective). */
static double pipe_bytes(const emit *x, double full) { return stage_pipe_scatters(x) ? full / x->l->tp : full; }
static void pipe_gather(emit *x, double full)
{
  if (stage_pipe_scatters(x)) emit_collective(x, COLL_ALL_GATHER, x->tp_group, full);
}

/* Forward of every item the stage holds; with checkpointing, forward keeps only
 * each item's input, and backward first recomputes the item. */
static void stage_forward(emit *x, const mem_ctx *mc)
{
  int first, count, stage = x->vstage;
  partition_layers(x->part, x->m, stage, &first, &count);
  g_autofree double *units = g_new(double, count + 2);
  int n = grad_sync_stage_units(x, units), u = 0;
  graph_phase ph = x->phase;
  if (partition_has_embedding(x->part, stage)) {
    grad_sync_unit_begin(x, units, n, u++, 1);
    layer_embedding(x);
    grad_sync_unit_end_forward(x);
  }
  for (int i = 0; i < count; i++) {
    x->layer = first + i;
    grad_sync_unit_begin(x, units, n, u++, 1);
    layer_forward(x);
    if (ph == PH_FORWARD && x->l->ckpt == CKPT_EVERY_LAYER) /* the checkpointed input of the layer */
      emit_last_event(x)->mem_delta_bytes += mem_checkpoint_bytes(mc);
    grad_sync_unit_end_forward(x);
  }
  x->layer = -1;
  gboolean hn = partition_has_final_norm(x->part, x->m, stage), hh = partition_has_head(x->part, x->m, stage);
  if (hn || hh) {
    grad_sync_unit_begin(x, units, n, u++, 1);
    layer_head_forward(x, hn, hh);
    grad_sync_unit_end_forward(x);
  }
}

static void stage_backward(emit *x, const mem_ctx *mc)
{
  int first, count, stage = x->vstage;
  partition_layers(x->part, x->m, stage, &first, &count);
  g_autofree double *units = g_new(double, count + 2);
  int n = grad_sync_stage_units(x, units), u = n - 1;
  gboolean ckpt = x->l->ckpt == CKPT_EVERY_LAYER;
  gboolean hn = partition_has_final_norm(x->part, x->m, stage), hh = partition_has_head(x->part, x->m, stage);
  if (hn || hh) {
    grad_sync_unit_begin(x, units, n, u, -1);
    if (ckpt) {
      x->phase = PH_RECOMPUTE;
      layer_head_forward(x, hn, hh);
      x->phase = PH_BACKWARD;
    }
    layer_head_backward(x, hn, hh);
    grad_sync_unit_end_backward(x, units, u--);
  }
  for (int i = count - 1; i >= 0; i--) {
    x->layer = first + i;
    grad_sync_unit_begin(x, units, n, u, -1);
    if (ckpt) {
      x->phase = PH_RECOMPUTE;
      layer_forward(x);
      x->phase = PH_BACKWARD;
    }
    layer_backward(x);
    if (ckpt) emit_last_event(x)->mem_delta_bytes -= mem_checkpoint_bytes(mc);
    grad_sync_unit_end_backward(x, units, u--);
  }
  x->layer = -1;
  if (partition_has_embedding(x->part, stage) && x->bpart == BWD_WHOLE) { /* split: the embedding is all W */
    grad_sync_unit_begin(x, units, n, u, -1);
    if (ckpt) { /* the embedding's recompute keeps nothing worth counting */
      x->phase = PH_RECOMPUTE;
      layer_embedding(x);
      x->phase = PH_BACKWARD;
    }
    layer_embedding(x);
    grad_sync_unit_end_backward(x, units, u--);
  }
  while (x->reducing && x->l->zero < 3 && x->buckets_done < x->n_buckets) grad_sync_reduce_bucket(x, x->bucket_elements);
}

/* W of a split backward: the weight gradient of every GEMM, in the backward's order, and the embedding's
 * backward (a weight gradient only). Each GEMM releases what its B kept alive. */
static void stage_weight(emit *x)
{
  int first, count, v = x->vstage;
  partition_layers(x->part, x->m, v, &first, &count);
  if (partition_has_head(x->part, x->m, v)) {
    const block_op *o = &x->head.op[1]; /* the logits GEMM */
    layer_saves(x, emit_block_gemm(x, o), o);
  }
  for (int i = count - 1; i >= 0; i--) {
    x->layer = first + i;
    const block *b = layer_table(x);
    for (int j = b->n - 1; j >= 0; j--) {
      const block_op *o = &b->op[j];
      if (o->kind == BLOCK_GEMM) layer_saves(x, emit_block_gemm(x, o), o);
    }
  }
  x->layer = -1;
  if (partition_has_embedding(x->part, v)) {
    if (x->l->ckpt == CKPT_EVERY_LAYER) {
      x->phase = PH_RECOMPUTE;
      layer_embedding(x);
      x->phase = PH_BACKWARD;
    }
    layer_embedding(x);
  }
}

/* The rank holding virtual stage v, a neighbour of the emitter's: the stage before or after it around the
 * pipeline; -1 where there is none or it is this stage (DualPipeV's turn of the V: no send). */
static int neighbour_rank(const emit *x, int v)
{
  const layout *l = x->l;
  int s = sched_vstage_holder(l->schedule, v, l->pp, l->virtual_stages, NULL);
  if (s < 0 || s == x->stage) return -1;
  return s == (x->stage + l->pp - 1) % l->pp ? x->up_rank : x->down_rank;
}

/* Point the emitter at chunk c of its stage: the virtual stage (the schedule's chunk map) and its neighbours. */
void stage_at_chunk(emit *x, int c)
{
  const layout *l = x->l;
  x->chunk = c;
  x->vstage = sched_vstage(l->schedule, x->stage, c, l->pp, l->virtual_stages);
  x->prev_rank = neighbour_rank(x, x->vstage - 1);
  x->next_rank = neighbour_rank(x, x->vstage + 1);
}

/* The code's gradient accumulation outside the weight-gradient GEMM, once per pass that writes weight gradients
 * (gen_code grad_accum_bytes: bytes per parameter of the chunk, an HBM-bound pass; 0: none, the accumulation fused
 * into the GEMM or the gradient written once). DeepSpeed's BF16_Optimizer.update_hp_grads after every micro-batch's
 * backward: the bf16 gradient cast to fp32 and added into its fp32 buffer; autograd's AccumulateGrad: the new
 * gradient added into param.grad (docs/trust.md, "BLOOM's step"). */
static void grad_accum_pass(emit *x)
{
  double b = x->code->grad_accum_bytes;
  if (b <= 0) return;
  x->layer = -1;
  emit_stream(x, BL_OPTIMIZER, x->pass_params, x->pass_params * b, 1);
}

/* The compute of one schedule instruction (a forward, a backward or a part of one); `final` says it is the
 * last backward of its chunk (Megatron-Core reduces a chunk's gradients as its last micro-batch's backward
 * completes them), `first` the chunk's first forward. */
void emit_pass(emit *x, const mem_ctx *mc, sched_kind k, gboolean first, gboolean final)
{
  const layout *l = x->l;
  x->gather_units = l->zero >= 3 && layout_dp_cp(l) > 1;
  x->unit_gather = -1;
  x->reducing = k == SCHED_BACKWARD && layout_dp_cp(l) > 1 && (l->zero >= 2 || (l->overlap_grad_reduce && final));
  x->pass_params = grad_sync_chunk_params(x);
  x->n_buckets = (int)ceil(x->pass_params / GRAD_BUCKET_ELEMENTS);
  x->bucket_elements = x->pass_params / MAX(x->n_buckets, 1);
  x->buckets_done = 0;
  x->grad_ready = 0;
  x->param_wait = k == SCHED_FORWARD && first && l->overlap_param_gather;
  x->param_offset = 0;
  x->bpart = k == SCHED_BACKWARD_B ? BWD_INPUT : k == SCHED_BACKWARD_W ? BWD_WEIGHT : BWD_WHOLE;
  x->phase = k == SCHED_FORWARD ? PH_FORWARD : PH_BACKWARD;
  if (k == SCHED_FORWARD) stage_forward(x, mc);
  else if (k == SCHED_BACKWARD_W) stage_weight(x);
  else stage_backward(x, mc);
  if (k == SCHED_BACKWARD_W || k == SCHED_BACKWARD) grad_accum_pass(x);
  x->bpart = BWD_WHOLE;
  x->reducing = x->param_wait = FALSE;
}

/* Per chunk of the stage (V of them), the instruction indices of its first forward and last backward (-1: none). */
void stage_first_and_final(const GArray *instrs, int V, int *first_fwd, int *final_bwd)
{
  for (int c = 0; c < V; c++) first_fwd[c] = final_bwd[c] = -1;
  for (guint i = 0; i < instrs->len; i++) {
    sched_kind k = g_array_index(instrs, sched_instr, i).kind;
    int c = g_array_index(instrs, sched_instr, i).chunk;
    if (k == SCHED_FORWARD && first_fwd[c] < 0) first_fwd[c] = (int)i;
    if (k == SCHED_BACKWARD) final_bwd[c] = (int)i;
  }
}

/* ---- --overlap-moe-ep-comm: an F&B pair's all-to-alls beside the other micro-batch's compute ---- */

/* Whether event i of the program is one of the MoE token exchange's collectives (the all-to-all over ep, and the
 * all-gather or reduce-scatter over etp beside it). */
static gboolean ep_exchange_event(const emit *x, int i)
{
  const graph_event *e = &g_array_index(x->ev, graph_event, i);
  return e->kind == EV_COLLECTIVE && e->stream == 0 &&
         ((x->ep_group >= 0 && e->peer == x->ep_group) || (x->etp_group >= 0 && e->peer == x->etp_group));
}

/* Split the events [a, b) of one pass into its compute segments and the exchanges after them: seg[k] is the
 * first event of segment k, xch[k] the first event of the exchange ending it (== seg[k + 1]'s start when none),
 * seg[n] == b. Returns n, the number of segments. */
static int ep_segments(const emit *x, int a, int b, GArray *seg, GArray *xch)
{
  g_array_append_val(seg, a);
  for (int i = a; i < b; i++) {
    if (!ep_exchange_event(x, i)) continue;
    int j = i;
    gboolean a2a = FALSE; /* a run of etp collectives alone (etp's group may be tp's) is no exchange */
    for (; j < b && ep_exchange_event(x, j); j++)
      a2a |= g_array_index(x->ev, graph_event, j).variant == COLL_ALL_TO_ALL && x->ep_group >= 0 &&
             g_array_index(x->ev, graph_event, j).peer == x->ep_group;
    if (a2a) {
      g_array_append_val(xch, i);
      g_array_append_val(seg, j);
    }
    i = j - 1;
  }
  g_array_append_val(xch, b);
  int n = (int)seg->len;
  g_array_append_val(seg, b);
  return n;
}

/* An F&B pair, Megatron-Core's --overlap-moe-expert-parallel-comm and DualPipe's overlapped_forward_backward:
 * the forward's events [a, mid) and the backward's [mid, b) are interleaved segment by segment (a segment is
 * the compute between two token exchanges), each exchange on stream 1 after its segment's last stream-0 event,
 * and the pass's next segment waits for it; so the forward's dispatch runs while the backward's segment
 * computes and the other way round. */
static void ep_overlap_pair(emit *x, int a, int mid, int b)
{
  if (!x->ev) return; /* counting: the same events */
  g_autoptr(GArray) sf = g_array_new(FALSE, FALSE, sizeof(int)), xf = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) sb = g_array_new(FALSE, FALSE, sizeof(int)), xb = g_array_new(FALSE, FALSE, sizeof(int));
  int nf = ep_segments(x, a, mid, sf, xf), nb = ep_segments(x, mid, b, sb, xb);
  if (nf == 1 && nb == 1) return; /* no exchange in either pass */
  int n = b - a;
  g_autofree int *order = g_new(int, n), *to_new = g_new(int, n);
  g_autoptr(GArray) extra = g_array_new(FALSE, FALSE, sizeof(graph_dep)); /* in new indices */
  int k = 0, last_main = a - 1;
  int pend[2] = {-1, -1}; /* per pass, the last exchange event (new index) its next segment waits for */
  for (int j = 0; j < MAX(nf, nb); j++)
    for (int pass = 0; pass < 2; pass++) {
      GArray *seg = pass ? sb : sf, *xch = pass ? xb : xf;
      if (j >= (pass ? nb : nf)) continue;
      int s0 = g_array_index(seg, int, j), x0 = g_array_index(xch, int, j), s1 = g_array_index(seg, int, j + 1);
      gboolean waits = pend[pass] >= 0;
      for (int i = s0; i < x0; i++) {
        order[k] = i;
        if (g_array_index(x->ev, graph_event, i).stream == 0) {
          if (waits) {
            graph_dep d = {a + k, pend[pass]};
            g_array_append_val(extra, d);
            waits = FALSE;
          }
          last_main = a + k;
        }
        k++;
      }
      pend[pass] = -1;
      for (int i = x0; i < s1; i++) { /* the exchange, on stream 1 after the segment */
        order[k] = i;
        g_array_index(x->ev, graph_event, i).stream = 1;
        if (i == x0 && last_main >= 0) {
          graph_dep d = {a + k, last_main};
          g_array_append_val(extra, d);
        }
        pend[pass] = a + k;
        k++;
      }
    }
  g_assert(k == n);
  for (int i = 0; i < n; i++) to_new[order[i] - a] = a + i;
  g_autoptr(GArray) moved = g_array_sized_new(FALSE, FALSE, sizeof(graph_event), n);
  for (int i = 0; i < n; i++) g_array_append_val(moved, g_array_index(x->ev, graph_event, order[i]));
  memcpy(&g_array_index(x->ev, graph_event, a), moved->data, sizeof(graph_event) * (size_t)n);
#define REMAP(idx) ((idx) >= a && (idx) < b ? to_new[(idx) - a] : (idx))
  GArray *deps = x->prog->deps;
  if (!deps) deps = x->prog->deps = g_array_new(FALSE, FALSE, sizeof(graph_dep));
  for (guint i = 0; i < deps->len; i++) {
    graph_dep *d = &g_array_index(deps, graph_dep, i);
    d->event = REMAP(d->event);
    d->after = REMAP(d->after);
  }
  x->wait_for = x->wait_for >= 0 ? REMAP(x->wait_for) : -1;
  x->tp_pending = x->tp_pending >= 0 ? REMAP(x->tp_pending) : -1;
#undef REMAP
  g_array_append_vals(deps, extra->data, extra->len);
  g_array_sort(deps, dep_cmp);
  guint w = 0; /* one dependency per event: the later (as emit_depend keeps it) */
  for (guint i = 0; i < deps->len; i++) {
    graph_dep d = g_array_index(deps, graph_dep, i);
    if (w && g_array_index(deps, graph_dep, w - 1).event == d.event) {
      graph_dep *p = &g_array_index(deps, graph_dep, w - 1);
      p->after = MAX(p->after, d.after);
    } else {
      g_array_index(deps, graph_dep, w++) = d;
    }
  }
  g_array_set_size(deps, w);
  x->last_main = x->last_side = -1;
  for (int i = b - 1; i >= 0 && (x->last_main < 0 || x->last_side < 0); i--) {
    int st = g_array_index(x->ev, graph_event, i).stream;
    if (st == 0 && x->last_main < 0) x->last_main = i;
    if (st == 1 && x->last_side < 0) x->last_side = i;
  }
}

void emit_stage(emit *x, const mem_ctx *mc, double stage_params)
{
  const layout *l = x->l;
  const sched_def *sd = sched_get(l->schedule);
  g_autoptr(GArray) instrs = sched_instructions(l->schedule, x->stage, l->pp, l->virtual_stages, l->grad_accum);
  if (layout_combined_1f1b(l)) sched_combine_no_pipelining(instrs); /* Megatron's combined 1F1B */
  double act_buf = mem_pipe_buffer_bytes(mc, FALSE), grad_buf = mem_pipe_buffer_bytes(mc, TRUE);
  double out_buf = mem_pipe_output_bytes(mc);
  /* the study's rendezvous sends keep variant 0; other schedules' sends do not wait, and gradients travel
   * apart from activations (a stage may get both from one neighbour around an interleaved pipeline) */
  uint8_t eager = sd->eager_sends ? GRAPH_P2P_EAGER : 0, grad_channel = sd->eager_sends ? GRAPH_P2P_GRAD_CHANNEL : 0;
  g_autofree int *first_fwd = g_new(int, l->virtual_stages), *final_bwd = g_new(int, l->virtual_stages);
  stage_first_and_final(instrs, l->virtual_stages, first_fwd, final_bwd);
  grad_sync_param_gather_prologue(x);
  int pass_start = -1, prev_fwd = -1; /* the events of the forward just emitted, when an F&B pair may follow */
  for (guint i = 0; i < instrs->len; i++) {
    const sched_instr *in = &g_array_index(instrs, sched_instr, i);
    gboolean pair = l->overlap_moe_ep_comm && in->kind == SCHED_BACKWARD && in->paired && i > 0 &&
                    g_array_index(instrs, sched_instr, i - 1).kind == SCHED_FORWARD;
    pass_start = emit_last_index(x) + 1;
    stage_at_chunk(x, in->chunk);
    x->mb = in->micro_batch;
    x->layer = -1;
    graph_event *e;
    switch (in->kind) {
    case SCHED_RECV_ACT:
    case SCHED_SEND_ACT:
      x->phase = PH_FORWARD;
      e = emit_push(x, in->kind == SCHED_RECV_ACT ? EV_RECV : EV_SEND, COST_NONE, BL_COMM);
      e->peer = in->kind == SCHED_RECV_ACT ? x->prev_rank : x->next_rank;
      e->bytes = pipe_bytes(x, act_send_bytes(x));
      if (in->kind == SCHED_SEND_ACT) e->variant = eager;
      if (in->kind == SCHED_RECV_ACT) {
        e->mem_delta_bytes = act_buf; /* stage input, kept until its backward */
        pipe_gather(x, x->Tl * x->m->hidden * BF16);
      }
      break;
    case SCHED_RECV_GRAD:
    case SCHED_SEND_GRAD:
      x->phase = PH_BACKWARD;
      e = emit_push(x, in->kind == SCHED_RECV_GRAD ? EV_RECV : EV_SEND, COST_NONE, BL_COMM);
      e->peer = in->kind == SCHED_RECV_GRAD ? x->next_rank : x->prev_rank;
      e->bytes = pipe_bytes(x, x->Tl * x->m->hidden * BF16);
      e->variant = grad_channel | (in->kind == SCHED_SEND_GRAD ? eager : 0);
      /* the output gradient lives until the backward ends; the input gradient until it is sent */
      e->mem_delta_bytes = in->kind == SCHED_RECV_GRAD ? grad_buf : -grad_buf;
      if (in->kind == SCHED_RECV_GRAD) pipe_gather(x, x->Tl * x->m->hidden * BF16);
      break;
    case SCHED_FORWARD:
      emit_pass(x, mc, in->kind, (int)i == first_fwd[in->chunk], FALSE);
      if (x->next_rank >= 0) emit_last_event(x)->mem_delta_bytes += out_buf; /* stage output, kept until RecvGrad */
      prev_fwd = pass_start;
      break;
    case SCHED_BACKWARD:
    case SCHED_BACKWARD_B:
      emit_pass(x, mc, in->kind, FALSE, (int)i == final_bwd[in->chunk]);
      /* output and its gradient released; the input replaced by its gradient, sent next */
      if (x->next_rank >= 0) emit_last_event(x)->mem_delta_bytes -= out_buf + grad_buf;
      if (x->prev_rank >= 0) emit_last_event(x)->mem_delta_bytes += grad_buf - act_buf;
      if (pair) ep_overlap_pair(x, prev_fwd, pass_start, emit_last_index(x) + 1);
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
