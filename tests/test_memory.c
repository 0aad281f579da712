/* test_memory -- the memory model (workloads/memory, docs/memory.md) against
 * hand computations: model states of llama-13b, the activation bytes of one
 * layer in closed form (Korthikanti et al. 2022 adapted to Llama, written
 * independently here), micro-batches in flight per stage under the study's
 * 1F1B schedule, and conservation along every program of a generated graph. */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workloads/block.h"
#include "workloads/generate.h"
#include "workloads/memory.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

static model load13b(void)
{
  model m;
  ck_assert(model_load_named("llama-13b", &m, NULL));
  return m;
}

static layout make_layout(const model *m, int gpus, int tp, int pp, gboolean sp, int mb, layout_attn attn,
                          layout_ckpt ckpt)
{
  layout l = test_layout(gpus, tp, pp, mb, ckpt);
  l.sp = sp;
  l.attn = attn;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, m, &err), "%s", err ? err->message : "");
  return l;
}

/* llama-13b, vocab 128k, all on one stage: N = 40*(4h^2+3hf+2h) + h + 2Vh. */
static double n13b(void) { return 40.0 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824 + 2.0 * 5120) + 5120 + 2.0 * 128000 * 5120; }

START_TEST(test_llama13b_dp64_model_states_with_zero1_are_4N_plus_12N_over_64)
{
  model m = load13b();
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  partition p;
  ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
  mem_states s;
  mem_model_states(&m, &l, NULL, &p, 0, &s);
  double N = n13b();
  ck_assert_double_eq_tol(s.params_bytes, 2 * N, 1);
  ck_assert_double_eq_tol(s.grads_bytes, 2 * N, 1);
  ck_assert_double_eq_tol(s.optimizer_bytes, 12 * N / 64, 1);
  /* about 52.2 GiB of bf16 weights and grads, 2.4 GiB of sharded fp32 states */
  ck_assert_double_eq_tol((s.params_bytes + s.grads_bytes) / (1 << 30), 52.2, 0.1);
  partition_clear(&p);
}
END_TEST

/* FP8 (Transformer Engine, current scaling) keeps, beside the bf16 weights, an FP8 copy of every linear
 * layer's weight and its transpose for the step: 2 bytes per linear parameter, the 40 layers' 4h^2 + 3hf;
 * mxfp8 also their E8M0 scales, one byte per 32 elements of each: 2 + 2/32. Nothing else moves. */
START_TEST(test_fp8_model_states_add_two_bytes_per_linear_parameter)
{
  model m = load13b();
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  partition p;
  ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
  mem_states bf, f8, mx;
  mem_model_states(&m, &l, NULL, &p, 0, &bf);
  l.precision = PREC_FP8;
  mem_model_states(&m, &l, NULL, &p, 0, &f8);
  l.precision = PREC_MXFP8;
  mem_model_states(&m, &l, NULL, &p, 0, &mx);
  double linear = 40.0 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824);
  ck_assert_double_eq_tol(f8.buffers_bytes - bf.buffers_bytes, 2 * linear, 1);
  ck_assert_double_eq_tol(mx.buffers_bytes - bf.buffers_bytes, (2 + 2.0 / 32) * linear, 1);
  ck_assert_double_eq(f8.params_bytes, bf.params_bytes);
  ck_assert_double_eq(f8.grads_bytes, bf.grads_bytes);
  ck_assert_double_eq(f8.optimizer_bytes, bf.optimizer_bytes);
  partition_clear(&p);
}
END_TEST

/* FP8 primary weights (--fp8-param-gather, Transformer Engine's fp8_param): the FP8 weight and its transpose are the
 * linear layers' only copy, the bf16 weights of those layers are not kept: 2 bytes per linear parameter less than
 * FP8 without it (the 40 layers' 4h^2 + 3hf); the embedding, head and norms stay bf16, and nothing else moves. */
START_TEST(test_fp8_primary_weights_drop_the_bf16_copy_of_every_linear_parameter)
{
  model m = load13b();
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  partition p;
  ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
  mem_states f8, prim;
  l.precision = PREC_FP8;
  mem_model_states(&m, &l, NULL, &p, 0, &f8);
  l.fp8_param_gather = TRUE;
  mem_model_states(&m, &l, NULL, &p, 0, &prim);
  double linear = 40.0 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824);
  ck_assert_double_eq_tol(f8.params_bytes - prim.params_bytes, 2 * linear, 1);
  ck_assert_double_eq_tol(prim.params_bytes, 2 * (n13b() - linear), 1); /* what is left in bf16 */
  ck_assert_double_eq(prim.buffers_bytes, f8.buffers_bytes);
  ck_assert_double_eq(prim.grads_bytes, f8.grads_bytes);
  ck_assert_double_eq(prim.optimizer_bytes, f8.optimizer_bytes);
  partition_clear(&p);
}
END_TEST

START_TEST(test_llama13b_dp64_model_states_without_zero1_are_20N)
{
  model m = load13b();
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  l.zero = 0;
  partition p;
  ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
  mem_states s;
  mem_model_states(&m, &l, NULL, &p, 0, &s);
  double N = n13b();
  /* bf16 weights 2N + bf16 grads 2N + fp32 master, grads, exp_avg, exp_avg_sq 16N */
  ck_assert_double_eq_tol(s.params_bytes + s.grads_bytes + s.optimizer_bytes, 20 * N, 1);
  partition_clear(&p);
}
END_TEST

/* One llama-13b layer at s = 2048, b = 1 (docs/memory.md, "one layer"):
 *   norms   2 * Tl*h * (2 fused | 10 torch),  Tl = T/t with sp
 *   GEMM inputs replicated over tp: QKV 2Th, MLP-in 2Th
 *   attention flash: (8 + 2) Th/t + 4 T a/t ; fused softmax: (6 + 2) Th/t + 2 a s^2 b/t ;
 *             torch: (6 + 2) Th/t + 6 a s^2 b/t
 *   MLP: SwiGLU 6 T f/t, down input 2 T f/t */
static double closed_form(layout_attn attn, int t, gboolean sp)
{
  double s = 2048, b = 1, h = 5120, f = 13824, a = 40, T = s * b;
  double region = sp ? T / t : T;
  double norm = attn == ATTN_FLASH2_RMSNORM ? 2 : 10;
  double attn_bytes;
  if (attn == ATTN_TORCH) attn_bytes = 8 * T * h / t + 6 * a * s * s * b / t;
  else if (attn == ATTN_FUSED_SOFTMAX) attn_bytes = 8 * T * h / t + 2 * a * s * s * b / t;
  else attn_bytes = 10 * T * h / t + 4 * T * a / t;
  return 2 * norm * region * h + 4 * T * h + attn_bytes + 8 * T * f / t;
}

START_TEST(test_llama13b_layer_activation_bytes_match_closed_form_for_every_kernel_tp_sp)
{
  model m = load13b();
  const layout_attn kernels[] = {ATTN_TORCH, ATTN_FUSED_SOFTMAX, ATTN_FLASH1, ATTN_FLASH2, ATTN_FLASH2_RMSNORM};
  const int tps[] = {1, 2, 4, 8};
  for (size_t k = 0; k < G_N_ELEMENTS(kernels); k++)
    for (size_t i = 0; i < G_N_ELEMENTS(tps); i++)
      for (int sp = 0; sp <= (tps[i] > 1); sp++) {
        layout l = make_layout(&m, 64, tps[i], 1, sp, 1, kernels[k], CKPT_NONE);
        mem_ctx c;
        mem_ctx_init(&c, &m, &l);
        double want = closed_form(kernels[k], tps[i], sp);
        ck_assert_msg(fabs(mem_layer_bytes(&c) - want) < 1, "%s tp=%d sp=%d: %.0f vs %.0f", layout_attn_name(kernels[k]),
                      tps[i], sp, mem_layer_bytes(&c), want);
      }
  /* scale: flash2+rmsnorm, tp1: (4 + 4 + 10) Th + 8 Tf + 4 Ta = 188.7M + 226.5M + 0.3M = 415.6 MB */
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  mem_ctx c;
  mem_ctx_init(&c, &m, &l);
  ck_assert_double_eq_tol(mem_layer_bytes(&c) / 1e6, 415.6, 0.1);
}
END_TEST

START_TEST(test_checkpoint_keeps_only_the_layer_input)
{
  model m = load13b();
  layout l = make_layout(&m, 64, 4, 1, TRUE, 2, ATTN_FLASH2, CKPT_EVERY_LAYER);
  mem_ctx c;
  mem_ctx_init(&c, &m, &l);
  ck_assert_double_eq(mem_checkpoint_bytes(&c), 2.0 * 2048 * 2 / 4 * 5120);
}
END_TEST

/* Micro-batches whose forward ran and whose backward has not: walked on the graph. */
static int max_in_flight(const graph *g, const graph_program *p)
{
  int n, first, open = 0, best = 0, last_mb = -2, last_phase = -1;
  const graph_event *ev = graph_program_events(g, p, &n, &first);
  for (int i = 0; i < n; i++) {
    const graph_event *e = &ev[i];
    if (e->kind != EV_COMPUTE || e->micro_batch < 0) continue;
    if (e->micro_batch == last_mb && e->phase != PH_FORWARD && last_phase != PH_FORWARD) continue;
    if (e->micro_batch == last_mb && e->phase == last_phase) continue;
    if (e->phase == PH_FORWARD && !(e->micro_batch == last_mb && last_phase == PH_FORWARD)) open++;
    if (e->phase != PH_FORWARD && (last_mb != e->micro_batch || last_phase == PH_FORWARD)) open--;
    best = MAX(best, open);
    last_mb = e->micro_batch;
    last_phase = e->phase;
  }
  return best;
}

START_TEST(test_pp4_micro_batches_in_flight_follow_1f1b_and_the_buffer_count)
{
  model m = load13b();
  layout l = make_layout(&m, 4, 1, 4, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  l.global_batch = 8;
  ck_assert(layout_validate(&l, &m, NULL));
  ck_assert_int_eq(l.grad_accum, 8);
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
  ck_assert_ptr_nonnull(g);
  /* by hand, from the schedule of scaling-facts 2.4: stage 0 runs F0..F3 before B0,
   * stage 1 F0..F2, stage 2 F0,F1, stage 3 alternates F,B: 4, 3, 2, 1 */
  const int want[] = {4, 3, 2, 1};
  for (int s = 0; s < 4; s++) {
    const graph_program *p = g_ptr_array_index(g->programs, gen_rank(&l, s, 0, 0));
    ck_assert_int_eq(max_in_flight(g, p), want[s]);
    /* the study's buffer count max(2, min(pp - r + 1, m)) is one more than that */
    ck_assert_int_eq(sched_pipe_buffers(s, 4, 8), want[s] + 1);
  }
  /* and the memory timeline sees it: when stage 0 starts its first backward it
   * holds 4 micro-batches of layer activations (plus their 4 output buffers) */
  mem_ctx c;
  mem_ctx_init(&c, &m, &l);
  const graph_program *p0 = g_ptr_array_index(g->programs, 0);
  mem_walk w;
  mem_walk_init(&w);
  for (guint i = 0; i < p0->events->len; i++) {
    const graph_event *e = &g_array_index(p0->events, graph_event, i);
    if (e->phase == PH_BACKWARD) break;
    mem_walk_event(&w, e, (int)i);
  }
  int first, count;
  partition part;
  partition_make(&part, &m, 4, 1, o.partition, NULL);
  partition_layers(&part, &m, 0, &first, &count);
  partition_clear(&part);
  double four = 4 * (count * mem_layer_bytes(&c) + mem_pipe_buffer_bytes(&c, TRUE));
  ck_assert_msg(fabs(w.act_bytes - four) < 1, "%.0f vs %.0f", w.act_bytes, four);
}
END_TEST

static void check_conservation(const layout *l, const model *m)
{
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(m, l, &o, NULL);
  ck_assert_ptr_nonnull(g);
  for (guint r = 0; r < g->programs->len; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    mem_walk w;
    mem_walk_init(&w);
    mem_walk_program(g, p, &w);
    double scale = MAX(w.peak_bytes, 1.0);
    ck_assert_msg(w.min_bytes > -1e-9 * scale, "rank %u goes negative: %.0f", r, w.min_bytes);
    ck_assert_msg(fabs(w.act_bytes) < 1e-9 * scale, "rank %u ends at %.0f, not at the model states", r, w.act_bytes);
    ck_assert(w.peak_bytes > 0);
    ck_assert_double_eq_tol(p->mem_static_bytes,
                            p->mem_params_bytes + p->mem_grads_bytes + p->mem_optimizer_bytes + p->mem_buffers_bytes,
                            1);
  }
}

START_TEST(test_memory_never_negative_and_back_to_model_states_at_step_end)
{
  model m = load13b();
  const layout_attn kernels[] = {ATTN_TORCH, ATTN_FLASH2, ATTN_FLASH2_RMSNORM};
  for (size_t k = 0; k < G_N_ELEMENTS(kernels); k++)
    for (int ck = 0; ck < 4; ck++) /* none, every_layer, selective, mlp */
      for (int sp = 0; sp < 2; sp++) {
        layout l = make_layout(&m, 16, 2, 4, sp, 2, kernels[k], (layout_ckpt)ck);
        l.global_batch = 32;
        ck_assert(layout_validate(&l, &m, NULL));
        check_conservation(&l, &m);
        if (ck < CKPT_SELECTIVE) continue;
        ck_assert(sched_parse("zb-h1", &l.schedule, NULL)); /* the split backward under a partial recompute */
        check_conservation(&l, &m);
      }
}
END_TEST

/* Selective recomputation (Korthikanti et al. 2022): the forward keeps everything but the attention
 * core's score-sized tensors, torch's bf16 and fp32 probabilities 6 b (a/t) s^2 bytes a layer, which its
 * backward recomputes; FlashAttention keeps none, so selective is none there. Summed over the forward
 * events of micro-batch 0 of llama-13b at tp 2, mb 1, s 2048 (40 layers): 6 * 20 * 2048^2 * 40 bytes. */
static double forward_kept(const model *m, layout_attn a, layout_ckpt ck)
{
  layout l = make_layout(m, 16, 2, 1, FALSE, 1, a, ck);
  l.global_batch = 8;
  ck_assert(layout_validate(&l, m, NULL));
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(m, &l, &o, NULL);
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  double kept = 0, recomputed = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->micro_batch != 0) continue;
    if (e->phase == PH_FORWARD) kept += e->mem_delta_bytes;
    if (e->phase == PH_RECOMPUTE) recomputed++;
  }
  return ck == CKPT_SELECTIVE && a != ATTN_TORCH ? (recomputed == 0 ? kept : -1) : kept;
}

START_TEST(test_selective_recompute_drops_the_score_tensors_only)
{
  model m = load13b();
  double scores = 6.0 * 20 * 2048.0 * 2048 * 40;
  ck_assert_double_eq_tol(forward_kept(&m, ATTN_TORCH, CKPT_NONE) - forward_kept(&m, ATTN_TORCH, CKPT_SELECTIVE), scores,
                          1e-9 * scores);
  ck_assert_double_eq(forward_kept(&m, ATTN_FLASH2, CKPT_SELECTIVE), forward_kept(&m, ATTN_FLASH2, CKPT_NONE));
}
END_TEST

/* The unfused attention's score-sized tensors where every_layer checkpointing brings them back: the recompute
 * of a layer's attention and its backward, per element of the rank's score block B = b (a/t) s^2 (docs/memory.md
 * sections 3 and 4), written from the study's code (Aleph-Alpha/scaling multi_head_attention, MaskedSoftmaxTorch):
 *   torch, recompute: keeps q, k, v (3 T h/t bf16) and the fp32 softmax output with its bf16 copy for the AV bmm
 *     (4 + 2 bytes); holds while it runs the bf16 scores, their bf16 masked copy and the fp32 cast (2 + 2 + 4);
 *   torch, backward: frees what the recompute kept; holds dO, dq, dk, dv (4 T h/t bf16) and the gradients of the
 *     probabilities and scores in fp32 and the bf16 cast (4 + 4 + 2);
 *   fused-softmax: keeps the bf16 probabilities (2), holds the bf16 scores while the kernel runs (2) and the
 *     bf16 gradients of probabilities and scores in backward (2 + 2);
 * and Megatron's FusedScaleMaskSoftmax (the study's fused-softmax) takes its kernel up to s = 4096 only
 * (is_kernel_available, 16 < sk <= 4096), falling back to torch's fp32 softmax beyond: at s = 8192 fused-softmax
 * holds torch's bytes, at 4096 its own. llama-13b, tp 2, mb 1, layer 7 of micro-batch 0. */
static void attention_bytes(layout_attn a, int seq, double *kept, double *fwd_transient, double *bwd_transient,
                            double *freed)
{
  model m = load13b();
  layout l = test_layout(16, 2, 1, 1, CKPT_EVERY_LAYER);
  l.attn = a;
  l.seq_len = seq;
  l.global_batch = 8;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
  ck_assert_ptr_nonnull(g);
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  int found = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->micro_batch != 0 || e->layer != 7 || e->cost != COST_ATTENTION) continue;
    if (e->phase == PH_RECOMPUTE) {
      *kept = e->mem_delta_bytes;
      *fwd_transient = e->mem_transient_bytes;
      found |= 1;
    } else if (e->phase == PH_BACKWARD) {
      *freed = -e->mem_delta_bytes;
      *bwd_transient = e->mem_transient_bytes;
      found |= 2;
    }
  }
  ck_assert_int_eq(found, 3);
}

START_TEST(test_unfused_attention_score_tensors_in_recompute_and_backward)
{
  const double h = 5120, t = 2;
  const struct { layout_attn a; int seq; double kept, fwd, bwd; } cases[] = {
      {ATTN_TORCH, 2048, 4 + 2, 2 + 2 + 4, 4 + 4 + 2},
      {ATTN_FUSED_SOFTMAX, 2048, 2, 2, 2 + 2},
      {ATTN_FUSED_SOFTMAX, 4096, 2, 2, 2 + 2},
      {ATTN_FUSED_SOFTMAX, 8192, 4 + 2, 2 + 2 + 4, 4 + 4 + 2}, /* beyond the kernel: torch's softmax */
      {ATTN_TORCH, 8192, 4 + 2, 2 + 2 + 4, 4 + 4 + 2},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double s = cases[i].seq, T = s, B = 1 * (40 / t) * s * s;
    double kept = 0, fwd = 0, bwd = 0, freed = 0;
    attention_bytes(cases[i].a, cases[i].seq, &kept, &fwd, &bwd, &freed);
    double qkv = 3 * T * h / t * 2, grads = 4 * T * h / t * 2;
    ck_assert_msg(fabs(kept - (qkv + cases[i].kept * B)) <= 1e-9 * kept, "case %zu: kept %.6g, want %.6g", i, kept,
                  qkv + cases[i].kept * B);
    ck_assert_msg(fabs(freed - kept) <= 1e-9 * kept, "case %zu: backward frees %.6g of %.6g", i, freed, kept);
    ck_assert_msg(fabs(fwd - cases[i].fwd * B) <= 1e-9 * fwd, "case %zu: recompute holds %.6g, want %.6g", i, fwd,
                  cases[i].fwd * B);
    ck_assert_msg(fabs(bwd - (grads + cases[i].bwd * B)) <= 1e-9 * bwd, "case %zu: backward holds %.6g, want %.6g", i,
                  bwd, grads + cases[i].bwd * B);
  }
}
END_TEST

START_TEST(test_graph_json_keeps_model_states_and_transients)
{
  model m = load13b();
  layout l = make_layout(&m, 8, 2, 2, TRUE, 1, ATTN_TORCH, CKPT_EVERY_LAYER);
  l.global_batch = 8;
  ck_assert(layout_validate(&l, &m, NULL));
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
  char path[] = "/tmp/test_memory_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(graph_save(g, path, NULL));
  g_autoptr(graph) h = graph_load(path, NULL);
  unlink(path);
  ck_assert_ptr_nonnull(h);
  for (guint r = 0; r < g->programs->len; r++) {
    const graph_program *a = g_ptr_array_index(g->programs, r), *b = g_ptr_array_index(h->programs, r);
    ck_assert_double_eq(a->mem_params_bytes, b->mem_params_bytes);
    ck_assert_double_eq(a->mem_optimizer_bytes, b->mem_optimizer_bytes);
    mem_walk wa, wb;
    mem_walk_init(&wa);
    mem_walk_init(&wb);
    mem_walk_program(g, a, &wa);
    mem_walk_program(h, b, &wb);
    ck_assert_double_eq_tol(wa.peak_bytes, wb.peak_bytes, 1e-6 * wa.peak_bytes);
  }
}
END_TEST


/* A grouped-query layer by hand (llama3-70b, tp 8, s 2048, flash2 with the fused norm): the QKV GEMM's output is
 * q (h/t) and k, v of the kv heads (kvd/t each); attention keeps q, o (h/t), k, v (kvd/t) and the fp32
 * log-sum-exp of the query heads. */
START_TEST(test_gqa_layer_kv_projection_and_activation_bytes_by_hand)
{
  model m;
  ck_assert(model_load_named("llama3-70b", &m, NULL));
  layout l = make_layout(&m, 64, 8, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  double T = 2048, h = 8192, kvd = 8 * 128, f = 28672, a = 64, t = 8;
  block_code bc = {.fused_norm = TRUE, .mlp_in_gemms = 2};
  block b;
  block_layer(&m, &l, &bc, &b);
  const block_op *qkv = NULL, *attn = NULL;
  for (int i = 0; i < b.n; i++) {
    if (b.op[i].label == BL_QKV) qkv = &b.op[i];
    if (b.op[i].label == BL_ATTENTION) attn = &b.op[i];
  }
  ck_assert_ptr_nonnull(qkv);
  ck_assert_ptr_nonnull(attn);
  ck_assert_double_eq(qkv->n, (h + 2 * kvd) / t); /* 1280 columns, not 3h/t = 3072 */
  ck_assert_double_eq(qkv->k, h);
  ck_assert_double_eq(attn->saved_bytes, 2 * T * (h + h + kvd + kvd) / t + 4 * T * a / t);
  mem_ctx c;
  mem_ctx_init(&c, &m, &l);
  double layer = 2 * 2 * T * h /* two fused norms: their inputs */ + 2 * T * h /* QKV input */ +
                 (2 * T * (2 * h + 2 * kvd) / t + 4 * T * a / t) /* attention */ + 2 * T * h / t /* out-proj input */ +
                 2 * T * h /* MLP input */ + 6 * T * f / t /* SwiGLU */ + 2 * T * f / t /* down input */;
  ck_assert_double_eq_tol(mem_layer_bytes(&c), layer, 1);
}
END_TEST


/* A GPT layer's saved activations against Korthikanti et al. 2022 (Reducing Activation Recomputation in Large
 * Transformer Models, eq. 1 and 2), which count a GPT layer with dropout (the model file's `dropout`, 0.1 in
 * gpt3-175b.json) and materialized attention scores (fused-softmax here): s b h (34 + 5 a s / h) bytes without
 * parallelism and s b h (10 + 24/t + 5 a s / (h t)) with tensor parallelism t (no sequence parallelism). */
START_TEST(test_gpt_layer_activation_bytes_match_korthikanti)
{
  model m;
  ck_assert(model_load_named("gpt3-175b", &m, NULL));
  m.vocab = 51200; /* padded as Megatron pads it (a multiple of 128 x tp); no layer term depends on it */
  ck_assert(m.dropout > 0);
  double s = 2048, b = 1, h = 12288, a = 96;
  const int tps[] = {1, 2, 4, 8};
  for (size_t i = 0; i < G_N_ELEMENTS(tps); i++) {
    double t = tps[i];
    layout l = make_layout(&m, 64, tps[i], 1, FALSE, 1, ATTN_FUSED_SOFTMAX, CKPT_NONE);
    mem_ctx c;
    mem_ctx_init(&c, &m, &l);
    double want = t == 1 ? s * b * h * (34 + 5 * a * s / h) : s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
    ck_assert_msg(fabs(mem_layer_bytes(&c) - want) < 1, "tp %g: %.0f vs Korthikanti %.0f", t, mem_layer_bytes(&c), want);
  }
  /* without dropout the masks (s b h twice) and the dropped-out probabilities (a s^2 b + 2 a s^2 b) go */
  m.dropout = 0;
  layout l = make_layout(&m, 64, 1, 1, FALSE, 1, ATTN_FUSED_SOFTMAX, CKPT_NONE);
  mem_ctx c;
  mem_ctx_init(&c, &m, &l);
  ck_assert_double_eq_tol(mem_layer_bytes(&c), s * b * h * 32 + 2 * a * s * s * b, 1);
}
END_TEST

/* Korthikanti et al. 2022 (arXiv:2205.05198), Table 2: activation bytes per layer and micro-batch of a GPT layer
 * (dropout, materialized softmax scores: fused-softmax), s b h times
 *   no parallelism            34 + 5as/h
 *   tensor parallel           10 + 24/t + 5as/(ht)
 *   tensor + sequence par.    34/t + 5as/(ht)
 *   tp + selective            10 + 24/t
 *   tp + sp + selective       34/t
 *   full recompute            2 (the layer's input; with sp the rank's shard, 2/t)
 * Read from the task graph Megatron's code makes (column-parallel GEMMs save their input's sp shard and
 * re-gather it in backward, Korthikanti sec. 4.2.2): the bytes the forward of micro-batch 0 keeps with two
 * layers less those with one, so that the embedding and the head cancel. GPT-3 175B's sizes, tp 8. */
static double korthikanti_layer_kept(int tp, gboolean sp, layout_ckpt ck)
{
  double kept[2];
  for (int n = 0; n < 2; n++) {
    model m;
    ck_assert(model_load_named("gpt3-175b", &m, NULL));
    m.layers = n + 1;
    m.vocab = 51200;
    layout l = test_layout(tp, tp, 1, 1, ck);
    l.sp = sp;
    l.attn = ATTN_FUSED_SOFTMAX;
    l.global_batch = 1;
    GError *err = NULL;
    ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
    gen_options o = gen_default_options();
    o.code.sp_saves_shard = TRUE; /* Megatron's ColumnParallelLinear under sp */
    o.code.fused_softmax_batches = 0;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
    ck_assert_ptr_nonnull(g);
    const graph_program *p = g_ptr_array_index(g->programs, 0);
    kept[n] = 0;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->micro_batch == 0 && e->phase == PH_FORWARD) kept[n] += e->mem_delta_bytes;
    }
  }
  return kept[1] - kept[0];
}

#define K_S 2048.0
#define K_H 12288.0
#define K_A 96.0
#define K_SBH (K_S * 1 * K_H)

static void check_korthikanti(double got, double want, const char *what)
{
  ck_assert_msg(fabs(got - want) < 1e-9 * want, "%s: %.0f bytes vs Korthikanti's %.0f", what, got, want);
}

START_TEST(test_korthikanti_table2_no_parallelism_is_sbh_34_plus_5as_over_h)
{
  check_korthikanti(korthikanti_layer_kept(1, FALSE, CKPT_NONE), K_SBH * (34 + 5 * K_A * K_S / K_H), "t 1");
}
END_TEST

START_TEST(test_korthikanti_table2_tensor_parallel_is_sbh_10_plus_24_over_t_plus_5as_over_ht)
{
  double t = 8;
  check_korthikanti(korthikanti_layer_kept(8, FALSE, CKPT_NONE), K_SBH * (10 + 24 / t + 5 * K_A * K_S / (K_H * t)), "tp 8");
}
END_TEST

START_TEST(test_korthikanti_table2_tensor_and_sequence_parallel_is_sbh_34_over_t_plus_5as_over_ht)
{
  double t = 8;
  check_korthikanti(korthikanti_layer_kept(8, TRUE, CKPT_NONE), K_SBH * (34 / t + 5 * K_A * K_S / (K_H * t)), "tp 8 sp");
}
END_TEST

START_TEST(test_korthikanti_table2_tp_selective_is_sbh_10_plus_24_over_t)
{
  double t = 8;
  check_korthikanti(korthikanti_layer_kept(8, FALSE, CKPT_SELECTIVE), K_SBH * (10 + 24 / t), "tp 8 selective");
}
END_TEST

START_TEST(test_korthikanti_table2_tp_sp_selective_is_sbh_34_over_t)
{
  double t = 8;
  check_korthikanti(korthikanti_layer_kept(8, TRUE, CKPT_SELECTIVE), K_SBH * 34 / t, "tp 8 sp selective");
}
END_TEST

START_TEST(test_korthikanti_table2_full_recompute_keeps_the_layer_input_2sbh)
{
  check_korthikanti(korthikanti_layer_kept(8, FALSE, CKPT_EVERY_LAYER), 2 * K_SBH, "tp 8 full");
  check_korthikanti(korthikanti_layer_kept(8, TRUE, CKPT_EVERY_LAYER), 2 * K_SBH / 8, "tp 8 sp full"); /* its shard */
}
END_TEST

/* Pipe buffers as Megatron keeps them (stack pipe_tensors_shared): the received stage input is the tensor the
 * first layer saves (no copy; non-first stages receive no position ids) and the stage output is pseudo-freed
 * once sent (deallocate_output_tensor). At its peak stage 1 of 4 holds P - r = 3 micro-batches in flight under
 * 1F1B; the study's code keeps for each an input (2 T h + 8 T: bf16 and int64 ids) and an output (2 T h) apart,
 * so the two peaks differ by 3 (4 T h + 8 T) bytes (llama-13b, s 2048, mb 1, every layer checkpointed). */
START_TEST(test_megatron_pipe_buffers_share_the_input_and_free_the_output)
{
  model m = load13b();
  layout l = make_layout(&m, 4, 1, 4, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_EVERY_LAYER);
  l.global_batch = 8;
  ck_assert(layout_validate(&l, &m, NULL));
  double peak[2];
  for (int shared = 0; shared < 2; shared++) {
    gen_options o = gen_default_options();
    o.code.pipe_tensors_shared = shared;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
    const graph_program *p = g_ptr_array_index(g->programs, 1);
    mem_walk w;
    mem_walk_init(&w);
    peak[shared] = 0; /* the highest level (the step's peak is the optimizer's bucket) */
    for (guint i = 0; i < p->events->len; i++) {
      mem_walk_event(&w, &g_array_index(p->events, graph_event, i), (int)i);
      peak[shared] = MAX(peak[shared], w.act_bytes);
    }
    ck_assert_double_eq_tol(w.act_bytes, 0, 1); /* back to the model states at the end */
  }
  double T = 2048, h = 5120;
  double saved = peak[0] - peak[1];
  ck_assert_double_eq_tol(saved, 3 * (4 * T * h + 8 * T), 1);
}
END_TEST

/* Megatron's model states (stack grad_buffer: its DDP's gradient buffer, its optimizers), bytes per parameter as
 * Megatron-LM's docs/source/distrib_optimizer.md tabulates them, d the data-parallel size:
 *   bf16 params, fp32 grads   18 without the distributed optimizer, 6 + 12/d with it
 *   fp16 params, fp16 grads   20 without,                           4 + 16/d with it
 * The fp16 rows count the fp32 copy of the (owned) gradients the optimizer makes at its step (main_grad.float()),
 * which does not persist through the forward and backward: the persistent part is 16 and 4 + 12/d, and the step's
 * transient 4 and 4/d. The fused Adam allocates nothing; the gradient buckets are reduced in place.
 * llama-13b on one stage, dp 8. */
START_TEST(test_megatron_model_states_follow_the_distributed_optimizer_table)
{
  model m = load13b();
  double N = n13b(), d = 8;
  const struct {
    double grad_bytes;
    int zero;
    double at_step, persistent; /* bytes per parameter */
  } rows[] = {{4, 0, 18, 18}, {4, 1, 6 + 12 / d, 6 + 12 / d}, {2, 0, 20, 16}, {2, 1, 4 + 16 / d, 4 + 12 / d}};
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    layout l = make_layout(&m, 8, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
    l.zero = rows[i].zero;
    ck_assert(layout_validate(&l, &m, NULL));
    gen_code code = gen_default_code();
    code.grad_buffer = TRUE;
    code.grad_reduce_bytes = rows[i].grad_bytes;
    partition p;
    ck_assert(partition_make(&p, &m, 1, 1, PARTITION_UNIFORM, NULL));
    mem_states s;
    mem_model_states(&m, &l, &code, &p, 0, &s);
    double states = s.params_bytes + s.grads_bytes + s.optimizer_bytes;
    double step = mem_adam_transient_bytes(&code, &l, l.zero >= 1 ? N / d : N);
    ck_assert_msg(fabs(states - rows[i].persistent * N) < 1e-9 * states, "row %zu: %.4f bytes a parameter, want %.4f",
                  i, states / N, rows[i].persistent);
    ck_assert_msg(fabs(states + step - rows[i].at_step * N) < 1e-9 * states, "row %zu at the step: %.4f, want %.4f", i,
                  (states + step) / N, rows[i].at_step);
    ck_assert_double_eq(mem_bucket_transient_bytes(&code, 5e8), 0); /* reduced in place */
    partition_clear(&p);
  }
  /* the study's code: bf16 param.grad and, at the step, its fp32 slice and torch's AdamW temporary */
  layout l = make_layout(&m, 8, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
  ck_assert_int_eq(l.zero, 1);
  gen_code study = gen_default_code();
  ck_assert_double_eq_tol(mem_adam_transient_bytes(&study, &l, N / d), 8 * N / d, 1);
  ck_assert_double_eq_tol(mem_bucket_transient_bytes(&study, 5e8), 5e8 * 6, 1);
}
END_TEST

/* The same through the generated graph: with Megatron's fp32 buffer no event of the gradient reduction or the
 * optimizer step allocates anything, the reduction at the step's end or overlapped with the backward; the
 * program's gradients are 4 bytes a parameter. */
START_TEST(test_megatron_fp32_grad_buffer_step_allocates_nothing)
{
  model m = load13b();
  m.layers = 2;
  for (int overlap = 0; overlap < 2; overlap++) {
    layout l = make_layout(&m, 8, 1, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
    l.global_batch = 8;
    l.overlap_grad_reduce = overlap;
    ck_assert(layout_validate(&l, &m, NULL));
    gen_options o = gen_default_options();
    o.code.grad_buffer = TRUE;
    o.code.grad_reduce_bytes = 4;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
    const graph_program *p = g_ptr_array_index(g->programs, 0);
    double params = p->mem_params_bytes / 2, step = 0;
    int reduced = 0;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->phase == PH_OPTIMIZER || e->phase == PH_DP) step = MAX(step, e->mem_transient_bytes + fabs(e->mem_delta_bytes));
      reduced += e->phase == PH_DP && e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_REDUCE && e->bytes > 1e6;
    }
    ck_assert_int_gt(reduced, 0);
    ck_assert_msg(step == 0, "overlap %d: the reduction or the step holds %.0f bytes", overlap, step);
    ck_assert_double_eq_tol(p->mem_grads_bytes, 4 * params, 1);
  }
}
END_TEST

/* Megatron's vocab-parallel cross-entropy (stack vocab_parallel_loss_bytes; tensor_parallel/cross_entropy.py):
 * each of t ranks keeps its logits shard, T V / t elements, never gathered: 4 bytes an element as the fp32 softmax
 * it computes in place in logits.float(), 2 as the bf16 gradient a fused kernel writes over the logits
 * (--cross-entropy-loss-fusion); the study's head all-gathers the T V bf16 logits and keeps them beside its fp32
 * log-softmax, 6 T V bytes on every rank. Over tp go three all-reduces of one fp32 number a token (the max, the sum
 * of exponentials, the target's logit). llama-13b (V 128000), one layer, s 2048, tp 4: what the forward of
 * micro-batch 0 keeps at its loss. */
START_TEST(test_vocab_parallel_loss_keeps_the_logits_shard)
{
  model m = load13b();
  m.layers = 1;
  double T = 2048, V = 128000, t = 4;
  const double keep[] = {0, 4, 2}, want[] = {6 * T * V, 4 * T * V / t, 2 * T * V / t};
  for (size_t k = 0; k < G_N_ELEMENTS(keep); k++) {
    layout l = make_layout(&m, 4, 4, 1, FALSE, 1, ATTN_FLASH2_RMSNORM, CKPT_NONE);
    l.global_batch = 1;
    ck_assert(layout_validate(&l, &m, NULL));
    gen_options o = gen_default_options();
    o.code.vocab_parallel_loss_bytes = keep[k];
    g_autoptr(graph) g = gen_graph(&m, &l, &o, NULL);
    const graph_program *p = g_ptr_array_index(g->programs, 0);
    double before = 0, at_loss = NAN, gathered = 0;
    int small_reduces = 0;
    mem_walk w;
    mem_walk_init(&w);
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      gboolean logits = !strcmp(graph_op_name(g, e->op), "logits") && e->phase == PH_FORWARD;
      if (logits) before = w.act_bytes;
      mem_walk_event(&w, e, (int)i);
      if (e->phase == PH_FORWARD && !strcmp(graph_op_name(g, e->op), "loss")) at_loss = w.act_bytes - before;
      if (e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_GATHER && e->bytes >= T * V * 2) gathered += e->bytes;
      if (e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_REDUCE && e->bytes == T * 4) small_reduces++;
    }
    ck_assert_double_eq_tol(w.act_bytes, 0, 1); /* back to the model states at the end */
    /* the logits GEMM keeps its input (T h bf16: no sp) in both */
    double got = at_loss - T * 5120 * 2;
    ck_assert_msg(fabs(got - want[k]) < 1, "keep %g: %.0f bytes at the loss, want %.0f", keep[k], got, want[k]);
    ck_assert_double_eq(gathered, keep[k] > 0 ? 0 : T * V * 2);
    ck_assert_int_eq(small_reduces, keep[k] > 0 ? 3 : 0);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("memory");
  TCase *tc = tcase_create("memory");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_llama13b_dp64_model_states_with_zero1_are_4N_plus_12N_over_64);
  tcase_add_test(tc, test_llama13b_dp64_model_states_without_zero1_are_20N);
  tcase_add_test(tc, test_llama13b_layer_activation_bytes_match_closed_form_for_every_kernel_tp_sp);
  tcase_add_test(tc, test_checkpoint_keeps_only_the_layer_input);
  tcase_add_test(tc, test_selective_recompute_drops_the_score_tensors_only);
  tcase_add_test(tc, test_unfused_attention_score_tensors_in_recompute_and_backward);
  tcase_add_test(tc, test_gqa_layer_kv_projection_and_activation_bytes_by_hand);
  tcase_add_test(tc, test_gpt_layer_activation_bytes_match_korthikanti);
  tcase_add_test(tc, test_pp4_micro_batches_in_flight_follow_1f1b_and_the_buffer_count);
  tcase_add_test(tc, test_memory_never_negative_and_back_to_model_states_at_step_end);
  tcase_add_test(tc, test_graph_json_keeps_model_states_and_transients);
  tcase_add_test(tc, test_fp8_model_states_add_two_bytes_per_linear_parameter);
  tcase_add_test(tc, test_fp8_primary_weights_drop_the_bf16_copy_of_every_linear_parameter);
  tcase_add_test(tc, test_korthikanti_table2_no_parallelism_is_sbh_34_plus_5as_over_h);
  tcase_add_test(tc, test_korthikanti_table2_tensor_parallel_is_sbh_10_plus_24_over_t_plus_5as_over_ht);
  tcase_add_test(tc, test_korthikanti_table2_tensor_and_sequence_parallel_is_sbh_34_over_t_plus_5as_over_ht);
  tcase_add_test(tc, test_korthikanti_table2_tp_selective_is_sbh_10_plus_24_over_t);
  tcase_add_test(tc, test_korthikanti_table2_tp_sp_selective_is_sbh_34_over_t);
  tcase_add_test(tc, test_korthikanti_table2_full_recompute_keeps_the_layer_input_2sbh);
  tcase_add_test(tc, test_megatron_pipe_buffers_share_the_input_and_free_the_output);
  tcase_add_test(tc, test_megatron_model_states_follow_the_distributed_optimizer_table);
  tcase_add_test(tc, test_megatron_fp32_grad_buffer_step_allocates_nothing);
  tcase_add_test(tc, test_vocab_parallel_loss_keeps_the_logits_shard);
  suite_add_tcase(s, tc);
  return check_run(s);
}
