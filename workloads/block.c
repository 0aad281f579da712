/* block -- see block.h. docs/memory.md section 3 derives the saved bytes, docs/model.md the operators;
 * workloads/ops.h holds the bytes per element of the study's PyTorch kernels.
 *
 * Every number is written as the product the generator and the memory model wrote before the block
 * became data (the same factors in the same order), so the study's graphs are bit for bit the same. */
#include "block.h"

#include "graph.h"
#include "ops.h"
#include "precision.h"

#define BF16 2.0
#define FP32 4.0

static const char *const LABELS[BL_N] = {"comm",     "embed",  "norm",   "qkv",      "rotary",
                                         "attention", "attn_out", "residual", "mlp_up", "swiglu",
                                         "mlp_down", "logits", "loss",   "optimizer", "bias",
                                         "gelu",     "dropout", "positions", "fp8_cast", "router", "topk", "permute",
                                         "expert_up", "expert_act", "expert_down", "unpermute", "q_down", "kv_down",
                                         "q_up", "kv_up", "mtp_embed", "mtp_proj"};

const char *block_label_name(block_label b) { return LABELS[b]; }

/* Per-rank sizes of one micro-batch. */
typedef struct dims {
  double T, Tl, h, f, t, V, s, kvd; /* kvd: key/value width kv_heads * head size */
  double qd;                        /* query width heads * head size (= h but where head_dim is given) */
  double B;                         /* elements of the rank's score matrix: b * heads/t * s^2 */
} dims;

static dims dims_of(const model *m, const layout *l)
{
  dims d = {.T = layout_tokens_per_rank(l), .h = m->hidden, .f = m->ffn, .t = l->tp, .V = m->vocab,
            .s = l->seq_len, .kvd = (double)m->kv_heads * model_head_dim(m),
            .qd = m->head_dim ? (double)m->heads * m->head_dim : m->hidden};
  d.Tl = l->sp ? d.T / l->tp : d.T;
  d.B = (double)l->micro_batch * m->heads / l->tp * l->seq_len * l->seq_len; /* cp = 1: cp needs flash (layout.c) */
  return d;
}

static double norm_params(const model *m);

static block_op *add(block *b, block_kind kind, block_label label)
{
  g_assert(b->n < BLOCK_MAX_OPS);
  block_op *o = &b->op[b->n++];
  *o = (block_op){.kind = kind, .label = label, .count = 1, .launches = {1, 1}};
  return o;
}

/* Backward of a GEMM (T x k).(k x n): the incoming output gradient, the input gradient it writes and the
 * weight gradient it writes before AccumulateGrad adds it into param.grad. */
static double gemm_backward_bytes(double T, double k, double n, int count)
{
  return count * (T * n + T * k + k * n) * BF16;
}

/* A GEMM of `rows` token rows (rows != T: its rows field says so, the emitter reads it). */
static block_op *gemm_rows(block *b, block_label label, const dims *d, double rows, double n, double k, int count,
                           double saved)
{
  block_op *o = add(b, BLOCK_GEMM, label);
  o->dtype[0] = o->dtype[1] = DT_BF16;
  o->n = n;
  o->k = k;
  o->count = count;
  o->saved_bytes = saved;
  o->transient_bytes[1] = gemm_backward_bytes(rows, k, n, count);
  if (rows != d->T) o->rows = rows;
  return o;
}

static block_op *gemm(block *b, block_label label, const dims *d, double n, double k, int count, double saved)
{
  return gemm_rows(b, label, d, d->T, n, k, count, saved);
}

/* A memory pass whose backward reads the saved inputs and the output gradient and writes the input
 * gradients: twice the forward's bytes and kernels. */
static block_op *pass(block *b, block_label label, double elements, double per_el, int kernels)
{
  block_op *o = add(b, BLOCK_MEMORY, label);
  o->elements = elements;
  for (int k = 1; k <= 2; k++) {
    o->bytes[k - 1] = k * elements * per_el;
    o->launches[k - 1] = k * kernels;
  }
  return o;
}

/* RMSNorm over the sequence-parallel region. Fused: one kernel reading and writing bf16, saving its input.
 * Torch (the study's code): x.float(), pow, mean, x*rsqrt, cast, *weight, saving the fp32 input copy
 * (pow, mul), the fp32 normalised product and the bf16 output; two fp32 temporaries while it runs. */
static void norm_of(block *b, const model *m, double el, gboolean fused)
{
  if (m->norm == MODEL_NORM_LAYERNORM) { /* torch's layer_norm is one native kernel: the fused kernel's cost */
    block_op *o = pass(b, BL_NORM, el, OPS_LAYERNORM_BYTES_PER_EL, 1);
    o->saved_bytes = el * BF16; /* its input (mean and rstd per token are negligible) */
    o->transient_bytes[1] = el * (BF16 + BF16 + FP32);
    return;
  }
  block_op *o = pass(b, BL_NORM, el, fused ? OPS_NORM_FUSED_BYTES_PER_EL : OPS_NORM_TORCH_BYTES_PER_EL,
                     fused ? 1 : OPS_NORM_TORCH_KERNELS);
  o->saved_bytes = el * (fused ? BF16 : FP32 + FP32 + BF16);
  o->transient_bytes[0] = fused ? 0 : el * 2 * FP32;
  o->transient_bytes[1] = el * (BF16 + BF16 + (fused ? FP32 : 2 * FP32));
}

static void norm(block *b, const model *m, const dims *d, gboolean fused) { norm_of(b, m, d->Tl * d->h, fused); }

/* The residual add after a row-parallel GEMM; with a bias or dropout Megatron's fused bias-dropout-add, which
 * keeps the 1-byte dropout mask, and whose bias gradient sums the output gradient. */
static void residual(block *b, const model *m, const dims *d)
{
  double el = d->Tl * d->h;
  block_op *o = add(b, BLOCK_MEMORY, BL_RESIDUAL);
  o->elements = el;
  o->bytes[0] = o->bytes[1] = 3 * BF16 * el; /* backward: the gradient passes through, one add */
  if (m->dropout > 0) {
    o->bytes[0] = OPS_BIAS_DROPOUT_ADD_FWD_BYTES_PER_EL * el;
    o->bytes[1] = OPS_BIAS_DROPOUT_ADD_BWD_BYTES_PER_EL * el;
    o->saved_bytes = el; /* the mask */
  }
  if (m->bias) o->bytes[1] += OPS_BIAS_BWD_BYTES_PER_EL * el;
}

/* A bias add on a column-parallel GEMM's output of `elements` (a separate kernel, as Megatron's linear layer). */
static void bias_add(block *b, const model *m, double elements)
{
  if (!m->bias) return;
  block_op *o = add(b, BLOCK_MEMORY, BL_BIAS);
  o->elements = elements;
  o->bytes[0] = OPS_BIAS_FWD_BYTES_PER_EL * elements;
  o->bytes[1] = OPS_BIAS_BWD_BYTES_PER_EL * elements;
}

static int attn_kind(layout_attn a) { return layout_attn_class(a); }

/* The softmax the code runs for fused-softmax: Megatron(-DeepSpeed)'s FusedScaleMaskSoftmax takes its
 * fused kernel only where seq_len is in (16, 2048], a multiple of 4, and micro-batch x heads/tp a multiple
 * of 4 (megatron/model/fused_softmax.py, custom_kernel_constraint), and torch's softmax in fp32 (cast,
 * scale, masked fill, softmax, cast back) elsewhere: as the torch kernel's passes and kernels, its memory
 * too. Under any rule a sequence longer than the code's fused_softmax_max_seq falls back the same way
 * (is_kernel_available's 16 < sk <= 4096 in the Megatron-LM of 2022-23, whose kernel the study ran). */
static layout_attn softmax_run(const model *m, const layout *l, const block_code *c)
{
  if (l->attn != ATTN_FUSED_SOFTMAX) return l->attn;
  /* beyond the kernel's longest sequence the code runs torch's fp32 softmax (forward_torch_softmax) */
  if (c->fused_softmax_max_seq > 0 && l->seq_len > c->fused_softmax_max_seq) return ATTN_TORCH;
  if (c->fused_softmax_batches <= 0) return l->attn;
  long batches = (long)l->micro_batch * (m->heads / l->tp);
  gboolean fits = l->seq_len > 16 && l->seq_len <= 2048 && l->seq_len % 4 == 0 && batches % c->fused_softmax_batches == 0;
  return fits ? ATTN_FUSED_SOFTMAX : ATTN_TORCH;
}

gboolean block_same_attention(const model *m, const layout *a, const block_code *ca, const layout *b,
                              const block_code *cb)
{
  if (ca->fused_norm != cb->fused_norm || layout_attn_is_flash(a->attn) != layout_attn_is_flash(b->attn)) return FALSE;
  if (layout_attn_is_flash(a->attn)) return layout_attn_class(a->attn) == layout_attn_class(b->attn);
  return softmax_run(m, a, ca) == softmax_run(m, b, cb);
}

/* Core attention of the rank's heads: q and o of h/t columns, k and v of kvd/t (grouped-query attention
 * shares each key/value head among heads/kv_heads query heads). With context parallelism (cp > 1) it is
 * TransformerEngine's ring attention (AttnFuncWithCPAndKVP2P): the sequence in 2cp chunks, the rank's T tokens
 * chunks i and 2cp-1-i, so that every one of its cp steps does the same causal work: one kernel of the local
 * queries against one KV block of T tokens (the model FLOPs of an s/cp x s/cp causal block), the block handed
 * on around the ring between steps. The row's numbers are then one step's. */
static void attention(block *b, const model *m, const layout *l, const block_code *c, const dims *d)
{
  block_op *o = add(b, BLOCK_ATTENTION, BL_ATTENTION);
  double T = d->T, h = d->qd, t = d->t, B = d->B, hl = h / t; /* h: the query width here */
  layout_attn run = softmax_run(m, l, c);
  gboolean flash = layout_attn_is_flash(l->attn), torch = run == ATTN_TORCH, a2a = layout_cp_a2a(l);
  /* the keys one step sees and its queries' length: the ring's s/cp; a2a's one kernel over the whole sequence on
   * heads/(t cp) heads (its FLOPs, 4 T s h/t, the ring's cp steps') */
  int kv_len = a2a ? l->seq_len : l->seq_len / l->cp, q_len = l->seq_len / l->cp;
  /* widths over all heads: q and k, v, the output; MLA's q and k are heads x (d_nope + d_rope) wide, its v and
   * output heads x d_v (every head its own key and value) */
  double qw = h, kw = d->kvd, vw = d->kvd, ow = h;
  o->attn_kind = attn_kind(l->attn);
  o->attn_m = (int)((double)l->micro_batch * m->heads / l->tp / (a2a ? l->cp : 1));
  o->attn_n = kv_len;
  o->attn_k = model_head_dim(m);
  o->flops = 4.0 * T * kv_len * hl;
  if (model_has_mla(m)) {
    double dqk = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim, dv = m->mla.v_head_dim;
    qw = kw = m->heads * dqk;
    vw = ow = m->heads * dv;
    /* QK^T of d_qk and PV of d_v per head: 2 T s (heads/t) (d_qk + d_v), the flash kernel's model FLOPs; its
     * head size for the kernel's efficiency the FLOP-weighted mean (d_qk + d_v) / 2, so that 4 m n k holds */
    o->flops = 2.0 * T * kv_len * m->heads / t * (dqk + dv);
    o->attn_k = (int)((dqk + dv) / 2);
  }
  o->ring_steps = a2a ? 1 : l->cp;
  o->kv_block_bytes = l->cp > 1 && !a2a ? T * (kw + vw) / t * BF16 : 0;
  if (a2a) {
    double widths[4] = {qw, kw, vw, ow};
    for (int i = 0; i < 4; i++) o->cp_a2a_bytes[i] = T * widths[i] / t * BF16;
    q_len = l->seq_len;
  }
  double qkvo = T * (qw + ow + kw + vw) / t * BF16, scores = (double)o->attn_m * q_len * kv_len;
  for (int k = 0; k < 2; k++) {
    gboolean megatron_fwd = k == 0 && run == ATTN_FUSED_SOFTMAX && c->fused_softmax_batches > 0;
    o->bytes[k] = qkvo * (k + 1) +
                  scores * (megatron_fwd ? OPS_MEGATRON_SOFTMAX_FWD_BYTES_PER_EL : ops_score_bytes_per_el(run, k == 1));
    o->launches[k] = megatron_fwd ? OPS_MEGATRON_SOFTMAX_FWD_KERNELS : ops_attention_kernels(run, k == 1);
  }
  /* flash: q, k, v (after rotary), output and the fp32 log-sum-exp; unfused: q, k, v and the bf16
   * probabilities (torch also its fp32 softmax output) */
  if (flash) o->saved_bytes = T * (qw + ow + kw + vw) / t * BF16 + T * m->heads / t * FP32;
  else o->saved_bytes = T * (qw + kw + vw) / t * BF16 + B * (torch ? BF16 + FP32 : BF16);
  /* Transformer Engine's attention in Megatron (sbhd): in bf16 its saved output is the output projection's saved
   * input, one storage, counted there (under FP8 that projection saves its own FP8 copy) */
  if (flash && c->attn_out_shared && l->precision == PREC_BF16 && !a2a) o->saved_bytes -= T * ow / t * BF16;
  /* (a2a: TE saves the kernel's output before the all-to-all back, AttnFuncWithCPAndQKVOA2A's out_part, and returns
   * the all-to-all's output, which the projection saves: two storages) */
  o->score_bytes = flash ? 0 : B * (torch ? BF16 + FP32 : BF16);
  /* unfused: the raw scores (torch: and the masked copy and its fp32 cast) live until softmax ends */
  o->transient_bytes[0] = flash ? 0 : torch ? B * (BF16 + BF16 + FP32) : B * BF16;
  /* dO and dq (h/t), dk and dv (kvd/t); flash: its fp32 dq accumulator, unfused: the gradients of the
   * probabilities and of the scores */
  double grads = T * (qw + ow) / t * BF16 + T * (kw + vw) / t * BF16;
  o->transient_bytes[1] = flash ? grads + T * qw / t * FP32 : grads + B * (torch ? 2 * FP32 + BF16 : 2 * BF16);
  if (a2a) {
    /* forward: the q, k, v before their all-to-all, held by the caller while the kernel runs; backward: the output
     * gradient and dq, dk, dv on the other side of their all-to-alls */
    o->transient_bytes[0] += T * (qw + kw + vw) / t * BF16;
    o->transient_bytes[1] += qkvo;
  } else if (l->cp > 1) {
    /* forward: the cp - 1 KV blocks received, held to its end; backward: two ring buffers, each a KV block and
     * its dKV */
    o->transient_bytes[0] += (l->cp - 1) * o->kv_block_bytes;
    o->transient_bytes[1] += 4 * o->kv_block_bytes;
  }
  if (m->dropout > 0 && !flash) { /* dropout on the probabilities: its mask and output, kept for the AV bmm's backward */
    for (int k = 0; k < 2; k++) {
      o->bytes[k] += OPS_DROPOUT_BYTES_PER_EL * scores;
      o->launches[k] += 1;
    }
    o->saved_bytes += B * (1 + BF16);
    o->score_bytes += B * (1 + BF16);
  } /* FlashAttention drops out inside the kernel (it keeps the generator's state only) */
}

/* The ops from `first` (the MLP's tp entry) to the last one added are the MLP sub-block, the function
 * Megatron-Core's `--recompute-modules mlp` checkpoints (tensor_parallel.checkpoint(self.mlp, ...)): its
 * input, what its first GEMM saves, is kept; the rest of what it saves is dropped and recomputed. */
static void mark_mlp(block *b, int first)
{
  for (int i = first; i < b->n; i++) b->op[i].mlp = TRUE;
  for (int i = first; i < b->n; i++)
    if (b->op[i].kind == BLOCK_GEMM) {
      b->op[i].mlp_input_bytes = b->op[i].saved_bytes;
      break;
    }
}

static void tp_enter(block *b, int reduces) { add(b, BLOCK_TP_ENTER, BL_COMM)->bwd_reduces = reduces; }
static void tp_exit(block *b) { add(b, BLOCK_TP_EXIT, BL_COMM); }

/* A linear layer of a transformer layer: its GEMM, under FP8 (Transformer Engine's Linear) preceded by the
 * quantization of its input (forward: T x k elements; the weights, k x n x count, once a step) and of its
 * output gradient (backward: T x n x count); the GEMM then runs in FP8 and saves its input in FP8 (the
 * transpose wgrad reads). `in_bytes`: the saved input's bytes per element under bf16 over what it saves. */
static block_op *linear_rows(block *b, const layout *l, block_label label, const dims *d, double rows, double n,
                             double k, int count, double saved_el)
{
  precision pr = (precision)l->precision;
  if (pr == PREC_BF16) return gemm_rows(b, label, d, rows, n, k, count, saved_el * BF16);
  block_op *c = add(b, BLOCK_MEMORY, BL_FP8_CAST);
  c->elements = rows * k;
  c->bytes[0] = precision_cast_bytes_per_el(pr) * rows * k;
  c->bytes[1] = precision_cast_bytes_per_el(pr) * rows * n * count;
  c->launches[0] = c->launches[1] = precision_cast_kernels(pr);
  c->step_bytes = precision_cast_bytes_per_el(pr) * k * n * count;
  block_op *o = gemm_rows(b, label, d, rows, n, k, count, saved_el * precision_operand_bytes(pr));
  o->dtype[0] = precision_gemm_dtype(pr, FALSE);
  o->dtype[1] = precision_gemm_dtype(pr, TRUE);
  return o;
}

static block_op *linear(block *b, const layout *l, block_label label, const dims *d, double n, double k, int count,
                        double saved_el)
{
  return linear_rows(b, l, label, d, d->T, n, k, count, saved_el);
}

/* A tensor-parallel entry of a tensor `width` elements per token wide (its sp all-gather forward; backward the
 * reduce-scatter, or without sp `reduces` all-reduces of the input gradient). */
static block_op *tp_enter_width(block *b, int reduces, double width)
{
  block_op *o = add(b, BLOCK_TP_ENTER, BL_COMM);
  o->bwd_reduces = reduces;
  o->width = width;
  return o;
}

/* Multi-head latent attention as Megatron-Core's MLASelfAttention runs it (TE spec: multi_latent_attention.py,
 * gpt_layer_specs.py), H heads, r_q, r_kv the ranks, d_nope, d_rope, d_v; docs/moe.md "MLA" derives each number.
 * The down-projections are TELinear in 'duplicated' mode: replicated on every tp rank, each on its own Tl tokens
 * (the sequence-parallel shard; T without sp), no collective. Their latents are normalised (the norm fused into
 * TELayerNormColumnParallelLinear, on the Tl tokens) and all-gathered into the column-parallel up-projections: q
 * r_q -> H/t x (d_nope + d_rope), kv r_kv -> H/t x (d_nope + d_v); the rotary key (d_rope, shared by the heads)
 * is all-gathered beside. Then the rotary embedding (Megatron's fused MLA rope: q and k written in the attention's
 * layout), core attention with d_qk = d_nope + d_rope and d_v, and the row-parallel output projection H/t x d_v ->
 * h. Without q_lora_rank the queries are one column-parallel projection h -> H/t x d_qk. */
static void mla_attention(const model *m, const layout *l, const block_code *c, const dims *dp, block *out)
{
  dims d = *dp;
  const model_mla *a = &m->mla;
  double T = d.T, Tl = d.Tl, h = d.h, t = d.t, H = m->heads;
  double rq = a->q_lora_rank, rkv = a->kv_lora_rank, rope = a->qk_rope_head_dim, dv = a->v_head_dim;
  double dqk = a->qk_nope_head_dim + rope, kvw = a->qk_nope_head_dim + dv;
  gboolean fp8 = l->precision != PREC_BF16;
  int up_first;
  block_op *o;
  norm(out, m, &d, c->fused_norm); /* input_layernorm, on the Tl tokens */
  /* the down-projections read the norm's output (one tensor: saved once in bf16; under FP8 each linear layer
   * quantizes and saves its own copy) */
  if (rq > 0) linear_rows(out, l, BL_Q_DOWN, &d, Tl, rq, h, 1, Tl * h);
  linear_rows(out, l, BL_KV_DOWN, &d, Tl, rkv + rope, h, 1, rq > 0 && !fp8 ? 0 : Tl * h);
  up_first = out->n;
  if (rq > 0) {
    norm_of(out, m, Tl * rq, c->fused_norm); /* q_layernorm, fused into the up-projection's TE module */
    tp_enter_width(out, 1, rq);
    o = linear(out, l, BL_Q_UP, &d, H * dqk / t, rq, 1, c->sp_saves_shard ? Tl * rq : T * rq);
    o->up_proj_bytes = o->saved_bytes; /* the normalised latent, inside the checkpointed function */
  } else {
    tp_enter_width(out, 1, h);
    linear(out, l, BL_Q_UP, &d, H * dqk / t, h, 1, c->sp_saves_shard ? Tl * h : T * h);
  }
  tp_enter_width(out, 0, rope); /* k_pos_emb gathered from the sequence-parallel region */
  norm_of(out, m, Tl * rkv, c->fused_norm); /* kv_layernorm */
  tp_enter_width(out, 1, rkv);
  o = linear(out, l, BL_KV_UP, &d, H * kvw / t, rkv, 1, c->sp_saves_shard ? Tl * rkv : T * rkv);
  o->up_proj_bytes = o->saved_bytes;
  /* rotary (fused_apply_mla_rope_for_q and _for_kv): reads q and the up-projected kv and the rotary key, writes q,
   * k (the rotary key copied into every head) and v; backward the same traffic */
  o = add(out, BLOCK_MEMORY, BL_ROTARY);
  o->elements = T * H / t * dqk;
  o->bytes[0] = o->bytes[1] = BF16 * (T * H / t * (dqk + kvw) + T * rope + T * H / t * (2 * dqk + dv));
  o->launches[0] = o->launches[1] = 2;
  for (int i = up_first; i < out->n; i++) out->op[i].up_proj = TRUE;
  attention(out, m, l, c, &d);
  o = &out->op[out->n - 1];
  o->up_proj = TRUE;
  o->up_proj_bytes = T * H / t * (2 * dqk + dv) * BF16; /* it saves q, k and v, the checkpoint's outputs (by reference) */
  linear(out, l, BL_ATTN_OUT, &d, h, H * dv / t, 1, T * H * dv / t); /* its input, the attention's output */
  tp_exit(out);
  residual(out, m, &d);
  norm(out, m, &d, c->fused_norm);
}

/* A layer's attention sub-block, its residual and the MLP's norm. */
static void attention_block(const model *m, const layout *l, const block_code *c, const dims *dp, block *out)
{
  if (model_has_mla(m)) {
    mla_attention(m, l, c, dp, out);
    return;
  }
  dims d = *dp;
  double T = d.T, h = d.h, t = d.t;
  block_op *o;
  norm(out, m, &d, c->fused_norm);
  tp_enter(out, 1);
  double qd = d.qd;
  /* A column-parallel GEMM saves its input: the study's code the (sp: all-gathered) T x h, replicated over tp;
   * Megatron and Transformer Engine under sp only the rank's shard Tl x h, all-gathered again in backward
   * (Korthikanti et al. 2022, sec. 4.2.2) */
  double col_in = c->sp_saves_shard ? d.Tl * h : T * h;
  linear(out, l, BL_QKV, &d, (qd + 2 * d.kvd) / t, h, 1, col_in);
  if (m->qkv_bias && !m->bias) { /* Qwen2: the QKV projection's bias alone */
    model qkv = *m;
    qkv.bias = TRUE;
    bias_add(out, &qkv, T * (qd + 2 * d.kvd) / t);
  } else bias_add(out, m, T * (qd + 2 * d.kvd) / t);
  if (m->qk_norm) norm_of(out, m, T * (qd + d.kvd) / t, c->fused_norm); /* Qwen3: each head of q and k (Megatron's
                                                                        * --qk-layernorm), before rotary */
  if (m->positions == MODEL_POS_ROTARY) {
    o = add(out, BLOCK_MEMORY, BL_ROTARY); /* on q and k: x*cos, rotate_half(x)*sin, add, cat */
    o->elements = T * (qd + d.kvd) / t;
    for (int k = 1; k <= 2; k++) {
      o->bytes[k - 1] = k * OPS_ROTARY_BYTES_PER_EL * T * (qd + d.kvd) / t;
      o->launches[k - 1] = k * OPS_ROTARY_KERNELS;
    }
  } /* ALiBi's per-head bias enters the score kernel (b * heads/t * s bytes: negligible); learned: the embedding's */
  attention(out, m, l, c, &d);
  linear(out, l, BL_ATTN_OUT, &d, h, qd / t, 1, T * qd / t); /* its contiguous input */
  tp_exit(out);
  residual(out, m, &d);
  norm(out, m, &d, c->fused_norm);
}

/* A dense MLP of inner width f (the layer's, or the shared experts'), its tp region. */
static void mlp_block(const model *m, const layout *l, const block_code *c, const dims *dp, double f, block *out)
{
  dims d = *dp;
  double T = d.T, h = d.h, t = d.t;
  block_op *o;
  double col_in = c->sp_saves_shard ? d.Tl * h : T * h; /* the saved input (attention_block's comment) */
  int mlp_first = out->n;
  if (m->mlp == MODEL_MLP_GELU) { /* GPT: h -> f GEMM, GeLU (fused with its bias), f -> h GEMM */
    tp_enter(out, 1);
    linear(out, l, BL_MLP_UP, &d, f / t, h, 1, col_in); /* its input */
    o = add(out, BLOCK_MEMORY, BL_GELU);
    o->elements = T * f / t;
    o->bytes[0] = OPS_GELU_FWD_BYTES_PER_EL * T * f / t;
    o->bytes[1] = (OPS_GELU_BWD_BYTES_PER_EL + (m->bias ? OPS_BIAS_BWD_BYTES_PER_EL : 0)) * T * f / t;
    o->saved_bytes = T * f / t * BF16;            /* its input (the up GEMM's output) */
    o->transient_bytes[1] = 2 * T * f / t * BF16; /* incoming and outgoing gradient */
    linear(out, l, BL_MLP_DOWN, &d, h, f / t, 1, T * f / t); /* its input, the GeLU output */
    tp_exit(out);
    mark_mlp(out, mlp_first);
    return;
  }
  tp_enter(out, c->mlp_in_gemms);
  /* gate and up, f/t columns each: two GEMMs (the study's w1, w3) or one of 2f/t (fused); the shared input */
  if (c->mlp_in_gemms == 1) linear(out, l, BL_MLP_UP, &d, 2 * f / t, h, 1, col_in);
  else linear(out, l, BL_MLP_UP, &d, f / t, h, 2, col_in);
  bias_add(out, m, 2 * T * f / t);
  o = add(out, BLOCK_MEMORY, BL_SWIGLU); /* silu(gate) (2r+2w), *up (4r+2w) per element of f/t */
  o->elements = T * f / t;
  for (int k = 1; k <= 2; k++) {
    o->bytes[k - 1] = k * OPS_SWIGLU_BYTES_PER_EL * T * f / t;
    o->launches[k - 1] = k * OPS_SWIGLU_KERNELS;
  }
  /* torch: up output, gate output, silu(gate); Megatron's fused SwiGLU (bias_swiglu_impl) its input alone, the
   * fused gate-and-up output */
  o->saved_bytes = (c->fused_swiglu ? 2 : 3) * T * f / t * BF16;
  o->transient_bytes[1] = 4 * T * f / t * BF16; /* incoming grad, two outgoing, silu' temporary */
  linear(out, l, BL_MLP_DOWN, &d, h, f / t, 1, T * f / t); /* its input silu(up)*gate */
  tp_exit(out);
  mark_mlp(out, mlp_first);
}

/* Transformer Engine's linears with gradient-accumulation fusion (Megatron's default; TE >= 2.3, the stack's
 * te_dummy_wgrad): the wgrad GEMM accumulates into the parameter's fp32 main_grad (module/linear.py,
 * fuse_wgrad_accumulation: general_gemm(..., out=main_grad, accumulate=True)) and autograd gets the cached dummy
 * (counted once per rank, workloads/memory.c), so a backward allocates no bf16 weight gradient: its transient is
 * the output gradient and the input gradient alone. The layer's linears only: the router (Megatron's own) and the
 * routed experts' grouped linears keep theirs (docs/memory.md). */
static void te_wgrad_in_main_grad(block *b)
{
  static const block_label TE[] = {BL_QKV, BL_ATTN_OUT, BL_MLP_UP, BL_MLP_DOWN, BL_Q_DOWN, BL_KV_DOWN, BL_Q_UP, BL_KV_UP};
  for (int i = 0; i < b->n; i++) {
    block_op *o = &b->op[i];
    for (gsize j = 0; o->kind == BLOCK_GEMM && j < G_N_ELEMENTS(TE); j++)
      if (o->label == TE[j]) o->transient_bytes[1] -= o->k * o->n * o->count * BF16;
  }
}

/* Mark ops [from, to) of b captured in the layer's CUDA graph (block_op.captured). */
static void capture(block *b, int from, int to)
{
  for (int i = from; i < to; i++) b->op[i].captured = TRUE;
}

void block_layer(const model *m, const layout *l, const block_code *c, block *out)
{
  dims d = dims_of(m, l);
  out->n = 0;
  attention_block(m, l, c, &d, out);
  int pre_mlp_norm = out->n - 1; /* attention_block's last op: _forward_mlp's first */
  mlp_block(m, l, c, &d, d.f, out);
  residual(out, m, &d);
  if (c->wgrad_in_main_grad) te_wgrad_in_main_grad(out);
  int s = l->cuda_graph_scope;
  if (s & (CG_SCOPE_FULL | CG_SCOPE_ATTN)) capture(out, 0, pre_mlp_norm);
  if (s & (CG_SCOPE_FULL | CG_SCOPE_MLP)) capture(out, pre_mlp_norm, out->n);
}

/* The routed experts' grouped GEMM (Megatron-Core's TEGroupedMLP, Transformer Engine's GroupedLinear): `count` local
 * experts of `rows` balanced token rows each, (rows x k).(k x n), the slowest rank doing `scale` times that work at
 * that shape. Under FP8 it is a linear layer as linear_rows's: TE quantizes every expert's input (split_quantize:
 * count x rows x k elements forward, times scale), its output gradient (count x rows x n backward) and, at the first
 * micro-batch (is_first_microbatch), the count experts' weights (k x n each, kept for the step's others); the GEMMs
 * run in the layout's FP8 dtype and save their inputs in FP8 (docs/moe.md, "FP8 experts"). The router and the
 * permutation stay bf16 (fp32 scores) as Megatron runs them. Each expert's input is its own tensor: the saved bytes
 * are count x rows x k x scale (the shared input of a dense layer's gate and up is one). */
static block_op *grouped_linear(block *b, const layout *l, block_label label, const dims *d, double rows, double n,
                                double k, int count, double scale)
{
  precision pr = (precision)l->precision;
  double in = scale * count * rows * k; /* the slowest rank's input elements */
  if (pr != PREC_BF16) {
    block_op *c = add(b, BLOCK_MEMORY, BL_FP8_CAST);
    c->elements = in;
    c->bytes[0] = precision_cast_bytes_per_el(pr) * in;
    c->bytes[1] = precision_cast_bytes_per_el(pr) * scale * count * rows * n;
    c->launches[0] = c->launches[1] = precision_cast_kernels(pr);
    c->step_bytes = precision_cast_bytes_per_el(pr) * k * n * count;
  }
  block_op *o = gemm_rows(b, label, d, rows, n, k, count, in * (pr == PREC_BF16 ? BF16 : precision_operand_bytes(pr)));
  o->rows = rows;
  o->scale = scale;
  o->transient_bytes[1] = scale * gemm_backward_bytes(rows, k, n, count);
  o->dtype[0] = precision_gemm_dtype(pr, FALSE);
  o->dtype[1] = precision_gemm_dtype(pr, TRUE);
  return o;
}

/* The MoE block on a rank (docs/moe.md derives each number). Tm = the rank's tokens in the sequence-parallel
 * region (Megatron requires sp with tp > 1 and MoE), E experts, k = top_k, fe the expert width; F = --moe-imbalance.
 * Dispatch: each rank sends its k*Tm token copies (h wide, bf16) to the ranks of their experts, (ep-1)/ep of it off
 * the rank when balanced; the slowest rank receives F times its share (the all-to-all's largest message: every
 * message is taken at it). Experts: a rank holds E/ep experts and, gathered over etp, computes etp*k*Tm rows on
 * them, etp*ep*k*Tm/E per expert when balanced, each expert fe/etp wide; the slowest rank's GEMMs F times that. */
static void moe_block(const model *m, const layout *l, const block_code *c, const dims *dp, block *out)
{
  const model_moe *e = &m->moe;
  double Tm = dp->Tl, h = dp->h, E = e->experts, k = e->top_k, fe = e->expert_ffn;
  double F = layout_moe_load(l, m); /* the imbalance, capped at the capacity factor (tokens beyond it dropped) */
  double etp = l->etp, ep = l->ep, local = E / ep;
  double rows = etp * Tm * k * F; /* token rows on the slowest rank's local experts */
  int first = out->n;
  block_op *o = gemm(out, BL_ROUTER, dp, E, h, 1, Tm * h * BF16);
  o->rows = Tm;
  o->transient_bytes[1] = gemm_backward_bytes(Tm, h, E, 1);
  o = pass(out, BL_TOPK, Tm * E, FP32 + FP32, 2); /* the fp32 scores read, probabilities written; top-k */
  o->saved_bytes = Tm * E * FP32;
  o = pass(out, BL_PERMUTE, Tm * h, BF16 * (1 + k), 1); /* reads the tokens, writes k copies */
  o->transient_bytes[0] = o->transient_bytes[1] = k * Tm * h * BF16;
  o = add(out, BLOCK_EP_DISPATCH, BL_COMM);
  o->bytes[0] = o->bytes[1] = F * k * Tm * h * BF16;
  o->etp_bytes = etp > 1 ? F * k * Tm * h * BF16 : 0;
  o->transient_bytes[0] = o->transient_bytes[1] = F * k * Tm * h * BF16 * etp; /* the receive buffer */
  gboolean gelu = m->mlp == MODEL_MLP_GELU;
  double per_expert = rows / F / local; /* balanced rows of one expert */
  grouped_linear(out, l, BL_EXPERT_UP, dp, per_expert, (gelu ? 1 : 2) * fe / etp, h, (int)local, F);
  o = pass(out, BL_EXPERT_ACT, rows * fe / etp, gelu ? OPS_GELU_FWD_BYTES_PER_EL : OPS_SWIGLU_BYTES_PER_EL,
           gelu ? 1 : OPS_SWIGLU_KERNELS);
  /* Megatron-Core (since its memory-efficient permutation, NVIDIA/Megatron-LM 2659630, 2025-04) multiplies the
   * router's probabilities in here (weighted_bias_swiglu_impl, the recipes' bias_activation_fusion): it saves its
   * input, the up GEMM's output (2fe/etp wide for SwiGLU), and the rows' fp32 probabilities */
  o->saved_bytes = (gelu ? 1 : 2) * rows * fe / etp * BF16 + rows * FP32;
  o->transient_bytes[1] = 4 * rows * fe / etp * BF16;
  grouped_linear(out, l, BL_EXPERT_DOWN, dp, per_expert, h, fe / etp, (int)local, F);
  o = add(out, BLOCK_EP_COMBINE, BL_COMM);
  o->bytes[0] = o->bytes[1] = F * k * Tm * h * BF16;
  o->etp_bytes = etp > 1 ? F * k * Tm * h * BF16 : 0;
  o->transient_bytes[0] = o->transient_bytes[1] = F * k * Tm * h * BF16 * etp;
  /* k copies read, summed per token (the probabilities were applied in the activation): its backward scatters the
   * gradient back by the saved index map, keeping no copies */
  o = pass(out, BL_UNPERMUTE, Tm * h, BF16 * (1 + k), 1);
  mark_mlp(out, first); /* --recompute-modules mlp runs the MoE block again, its input (the router's) kept */
  if (e->shared_experts) mlp_block(m, l, c, dp, (double)e->shared_experts * e->shared_expert_ffn, out);
}

void block_moe_layer(const model *m, const layout *l, const block_code *c, block *out)
{
  dims d = dims_of(m, l);
  out->n = 0;
  attention_block(m, l, c, &d, out);
  int pre_mlp_norm = out->n - 1;
  moe_block(m, l, c, &d, out);
  int shared = out->n; /* the shared experts, after the unpermutation; none: the end */
  for (int i = pre_mlp_norm; i < out->n; i++)
    if (out->op[i].label == BL_UNPERMUTE) shared = i + 1;
  residual(out, m, &d);
  if (c->wgrad_in_main_grad) te_wgrad_in_main_grad(out);
  int s = l->cuda_graph_scope;
  if (s & (CG_SCOPE_FULL | CG_SCOPE_ATTN)) capture(out, 0, pre_mlp_norm);
  if (s & (CG_SCOPE_FULL | CG_SCOPE_MOE)) capture(out, pre_mlp_norm, out->n);
  if (s & CG_SCOPE_MOE_ROUTER) {
    capture(out, pre_mlp_norm, pre_mlp_norm + 1);
    capture(out, shared, out->n - 1); /* the shared experts, not the residual add after them */
  }
  for (int i = pre_mlp_norm; i < out->n; i++) {
    block_label b = out->op[i].label;
    if (((s & CG_SCOPE_MOE_ROUTER) && (b == BL_ROUTER || b == BL_TOPK)) || ((s & CG_SCOPE_MOE_PREPROCESS) && b == BL_PERMUTE))
      out->op[i].captured = TRUE;
  }
}

double block_moe_expert_params(const model *m, const layout *l)
{
  double per = (m->mlp == MODEL_MLP_GELU ? 2.0 : 3.0) * m->hidden * m->moe.expert_ffn;
  return (double)m->moe.experts / l->ep * per / l->etp;
}

double block_moe_dense_params(const model *m, int tp)
{
  model att = *m; /* the layer without its MLP: block_layer_params at ffn 0 */
  att.ffn = 0;
  double p = block_layer_params(&att, tp) + (double)m->hidden * m->moe.experts; /* the router, replicated */
  if (m->moe.shared_experts)
    p += (m->mlp == MODEL_MLP_GELU ? 2.0 : 3.0) * m->hidden * m->moe.shared_experts * m->moe.shared_expert_ffn / tp;
  return p;
}

void block_mtp_entry(const model *m, const layout *l, const block_code *c, block *out)
{
  dims d = dims_of(m, l);
  double T = d.T, h = d.h, t = d.t;
  out->n = 0;
  /* the next tokens' embedding: the lookup as the embedding's (the shared weights' copy on this stage), then its
   * vocab-parallel collective, the region's exit (all-reduce, or reduce-scatter into the sequence-parallel region) */
  block_op *o = add(out, BLOCK_MEMORY, BL_MTP_EMBED);
  o->elements = T * h;
  for (int k = 1; k <= 2; k++) o->bytes[k - 1] = k * 2 * BF16 * T * h + 8 * T;
  o->launches[0] = o->launches[1] = 2;
  o->transient_bytes[1] = T * h * BF16 + d.V / t * h * BF16;
  tp_exit(out);
  norm(out, m, &d, c->fused_norm); /* enorm, of the embedding */
  norm(out, m, &d, c->fused_norm); /* hnorm, of the main model's last hidden state */
  /* eh_proj, column-parallel over the concatenation [enorm; hnorm] (all-gathered, 2h wide): 2h -> h/t, its output
   * gathered and scattered back into the sequence-parallel region (taken as the region's exit collective) */
  tp_enter_width(out, 1, 2 * h);
  linear(out, l, BL_MTP_PROJ, &d, h / t, 2 * h, 1, c->sp_saves_shard ? d.Tl * 2 * h : T * 2 * h);
  tp_exit(out);
}

double block_mtp_dense_params(const model *m, const layout *l, gboolean has_embedding)
{
  if (!m->mtp_layers) return 0;
  int last = m->layers - 1;
  double layer = model_layer_is_moe(m, last) ? block_moe_dense_params(m, l->tp) : block_layer_params(m, l->tp);
  double module = 3 * norm_params(m) + 2.0 * m->hidden * m->hidden / l->tp + layer; /* enorm, hnorm, final norm */
  return m->mtp_layers * module + (has_embedding ? 0 : block_embedding_params(m, l->tp));
}

double block_mtp_expert_params(const model *m, const layout *l)
{
  return model_layer_is_moe(m, m->layers - 1) ? m->mtp_layers * block_moe_expert_params(m, l) : 0;
}

void block_embedding(const model *m, const layout *l, const block_code *c, block *out)
{
  dims d = dims_of(m, l);
  double el = d.T * d.h;
  out->n = 0;
  block_op *o = add(out, BLOCK_MEMORY, BL_EMBED); /* gather rows (bf16) + int64 ids; backward: scatter-add */
  o->elements = el;
  for (int k = 1; k <= 2; k++) o->bytes[k - 1] = k * 2 * BF16 * el + 8 * d.T;
  o->launches[0] = o->launches[1] = 2;
  o->transient_bytes[1] = d.T * d.h * BF16 + d.V / d.t * d.h * BF16; /* incoming grad, dense weight grad */
  /* after the lookup's tp collective, over the sequence-parallel region */
  double el_l = d.Tl * d.h;
  if (m->positions == MODEL_POS_LEARNED) { /* the position rows added (replicated over tp) */
    o = add(out, BLOCK_MEMORY, BL_POSITIONS);
    o->elements = el_l;
    o->bytes[0] = OPS_POSITIONS_FWD_BYTES_PER_EL * el_l;
    o->bytes[1] = OPS_POSITIONS_BWD_BYTES_PER_EL * el_l;
    o->transient_bytes[1] = (double)m->max_positions * d.h * BF16; /* the table's dense gradient */
  }
  if (m->embedding_norm) norm(out, m, &d, c->fused_norm); /* BLOOM's word_embeddings_layernorm */
  if (m->dropout > 0) {
    o = add(out, BLOCK_MEMORY, BL_DROPOUT);
    o->elements = el_l;
    o->bytes[0] = o->bytes[1] = OPS_DROPOUT_BYTES_PER_EL * el_l;
    o->saved_bytes = el_l; /* the mask */
  }
}

void block_head(const model *m, const layout *l, const block_code *c, block *out)
{
  dims d = dims_of(m, l);
  double T = d.T, h = d.h, t = d.t, V = d.V;
  out->n = 0;
  norm(out, m, &d, c->fused_norm);
  block_op *o = gemm(out, BL_LOGITS, &d, V / t, h, 1, T * h * BF16);
  double keep = c->vocab_parallel_loss_bytes;
  if (keep > 0) {
    /* Megatron's vocab-parallel cross-entropy on the rank's shard: its bf16 logits live until the loss has cast
     * them (keep 4: logits.float(), the softmax computed in place and saved) or are themselves what it keeps
     * (keep 2: a fused kernel writes the gradient over them); backward the shard's gradient in bf16 */
    o->transient_bytes[0] = keep < FP32 ? 0 : T * V / t * BF16;
    o->transient_bytes[1] = gemm_backward_bytes(T, h, V / t, 1);
    o = add(out, BLOCK_MEMORY, BL_LOSS);
    o->elements = T * V / t;
    o->bytes[0] = T * V / t * OPS_LOSS_FWD_BYTES_PER_EL;
    o->bytes[1] = T * V / t * OPS_LOSS_BWD_BYTES_PER_EL;
    o->launches[0] = OPS_LOSS_FWD_KERNELS;
    o->launches[1] = OPS_LOSS_BWD_KERNELS;
    o->saved_bytes = T * V / t * keep;
    o->transient_bytes[0] = 0;
    o->transient_bytes[1] = keep < FP32 ? 0 : T * V / t * BF16; /* the gradient cast back to bf16 */
    return;
  }
  /* the rank's vocab shard, and the all-gather list before torch.cat; backward the full d logits */
  o->transient_bytes[0] = t > 1 ? T * V / t * BF16 + T * V * BF16 : 0;
  o->transient_bytes[1] = gemm_backward_bytes(T, h, V / t, 1) - T * V / t * BF16 + T * V * BF16;
  /* fp32 cross-entropy over the full logits: cast (2r+4w), log_softmax (8r+4w), nll gather; backward softmax
   * grad (4r+4w), cast back (4r+2w). It keeps the fp32 log-softmax; logits.float() is a temporary; its
   * backward writes d log-softmax, then d logits while both and the saved log-softmax are held */
  o = add(out, BLOCK_MEMORY, BL_LOSS);
  o->elements = T * V;
  o->bytes[0] = T * V * OPS_LOSS_FWD_BYTES_PER_EL;
  o->bytes[1] = T * V * OPS_LOSS_BWD_BYTES_PER_EL;
  o->launches[0] = OPS_LOSS_FWD_KERNELS;
  o->launches[1] = OPS_LOSS_BWD_KERNELS;
  o->saved_bytes = T * V * FP32;
  o->transient_bytes[0] = T * V * FP32;
  o->transient_bytes[1] = T * V * (FP32 + FP32);
}

double block_saved_bytes(const block *b)
{
  double sum = 0;
  for (int i = 0; i < b->n; i++) sum += b->op[i].saved_bytes;
  return sum;
}

/* RMSNorm: a weight; LayerNorm: a weight and a bias. */
static double norm_params(const model *m) { return m->norm == MODEL_NORM_LAYERNORM ? 2.0 * m->hidden : m->hidden; }

/* MLA's linear layers on a rank (mla_attention): the replicated down-projections, the column-parallel
 * up-projections and the row-parallel output projection over tp. */
static double mla_linear_params(const model *m, int tp)
{
  const model_mla *a = &m->mla;
  double h = m->hidden, H = m->heads, dqk = a->qk_nope_head_dim + a->qk_rope_head_dim;
  double down = h * (a->q_lora_rank + a->kv_lora_rank + a->qk_rope_head_dim);
  double q_up = (a->q_lora_rank ? a->q_lora_rank : h) * H * dqk;
  double kv_up = a->kv_lora_rank * H * (a->qk_nope_head_dim + a->v_head_dim), o = H * a->v_head_dim * h;
  return down + (q_up + kv_up + o) / tp;
}

double block_layer_params(const model *m, int tp)
{
  double h = m->hidden, f = m->ffn, kvd = (double)m->kv_heads * model_head_dim(m);
  double qd = m->head_dim ? (double)m->heads * m->head_dim : h;
  gboolean gelu = m->mlp == MODEL_MLP_GELU;
  double attention = h * (qd + 2 * kvd) + qd * h, mlp = (gelu ? 2.0 : 3.0) * h * f;
  if (model_has_mla(m)) /* its latent norms replicated (MLA has no biases: model_check_simulable) */
    return mla_linear_params(m, tp) + m->mla.q_lora_rank + m->mla.kv_lora_rank + mlp / tp + 2 * norm_params(m);
  double params = (attention + mlp) / tp + 2 * norm_params(m);
  /* biases: QKV's and the MLP input's split over tp (column-parallel), the output projections' replicated */
  if (m->bias) params += ((qd + 2 * kvd) + (gelu ? f : 2 * f)) / tp + 2 * h;
  else if (m->qkv_bias) params += (qd + 2 * kvd) / tp; /* Qwen2: QKV's alone, column-parallel */
  if (m->qk_norm) params += 2.0 * model_head_dim(m); /* q_norm and k_norm of one head's width, replicated */
  return params;
}

double block_embedding_params(const model *m, int tp)
{
  double params = (double)m->vocab * m->hidden / tp;
  if (m->positions == MODEL_POS_LEARNED) params += (double)m->max_positions * m->hidden; /* replicated */
  if (m->embedding_norm) params += norm_params(m);
  return params;
}

double block_final_norm_params(const model *m) { return norm_params(m); }

double block_head_params(const model *m, int tp) { return (double)m->vocab * m->hidden / tp; }

double block_layer_linear_params(const model *m, int tp)
{
  double h = m->hidden, f = m->ffn, kvd = (double)m->kv_heads * model_head_dim(m);
  double qd = m->head_dim ? (double)m->heads * m->head_dim : h;
  if (model_has_mla(m)) return mla_linear_params(m, tp) + (m->mlp == MODEL_MLP_GELU ? 2.0 : 3.0) * h * f / tp;
  return (h * (qd + 2 * kvd) + qd * h + (m->mlp == MODEL_MLP_GELU ? 2.0 : 3.0) * h * f) / tp;
}

double block_layer_linear_params_at(const model *m, const layout *l, int i)
{
  if (!model_layer_is_moe(m, MIN(i, m->layers - 1))) return block_layer_linear_params(m, l->tp);
  model att = *m; /* the attention's linear layers: the layer's at ffn 0 */
  att.ffn = 0;
  double shared = (m->mlp == MODEL_MLP_GELU ? 2.0 : 3.0) * m->hidden * m->moe.shared_experts * m->moe.shared_expert_ffn;
  return block_layer_linear_params(&att, l->tp) + block_moe_expert_params(m, l) + shared / l->tp;
}

double block_layer_buffer_bytes(const model *m, const layout *l)
{
  if (m->positions != MODEL_POS_ROTARY) return 0;
  return 2.0 * l->seq_len * model_head_dim(m) * BF16; /* rotary cos and sin, max_seq_len x head size each (every
                                                        * cp rank keeps the whole table) */
}
