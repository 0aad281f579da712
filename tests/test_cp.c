/* test_cp -- context parallelism (layout cp, Megatron's --context-parallel-size) against answers written
 * out here: Megatron's rank order, a layer's FLOPs per rank (GEMMs on s/cp tokens, the causal attention
 * split over the ring), TransformerEngine's KV ring exchanges forward and backward, the gradient
 * all-reduce over the dp-cp group, activations per rank 1/cp, the replay with mirrors equal to the one
 * without, and the layout's refusals. */
#include <check.h>

#include "check_main.h"
#include "sim_child.h"
#include "test_layout.h"
#include <math.h>
#include <string.h>

#include "analysis/simulate.h"
#include "workloads/block.h"
#include "workloads/generate.h"
#include "workloads/memory.h"

/* A Llama block with grouped-query attention: head size 32, 2 key/value heads. */
static model gqa(void)
{
  model m = {.name = "gqa", .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .vocab = 1024};
  return m;
}

static layout cp_layout(int gpus, int tp, int cp, int seq)
{
  layout l = test_layout(gpus, tp, 1, 1, CKPT_NONE);
  l.cp = cp;
  l.seq_len = seq;
  l.attn = ATTN_FLASH2_RMSNORM;
  l.global_batch = 2 * gpus / (tp * cp); /* two micro-batches a replica */
  return l;
}

static graph *generate(const model *m, layout *l)
{
  GError *err = NULL;
  ck_assert_msg(layout_validate(l, m, &err), "%s", err ? err->message : "");
  gen_options o = gen_default_options();
  graph *g = gen_graph(m, l, &o, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  return g;
}

static const graph_program *program(const graph *g, int rank)
{
  const graph_program *p = g_ptr_array_index(g->programs, rank);
  return p->mirror_of >= 0 ? g_ptr_array_index(g->programs, p->mirror_of) : p;
}

START_TEST(test_ranks_follow_megatrons_order_tp_cp_dp_pp)
{
  /* tp2 cp2 dp2 pp2 on 16 GPUs: rank = t + 2 (c + 2 (d + 2 s)) */
  layout l = test_layout(16, 2, 2, 1, CKPT_NONE);
  l.cp = 2;
  l.global_batch = 8;
  model m = gqa();
  ck_assert(layout_validate(&l, &m, NULL));
  ck_assert_int_eq(l.dp, 2);
  ck_assert_int_eq(gen_rank_cp(&l, 1, 0, 1, 1), 1 + 2 * (1 + 2 * (0 + 2 * 1)));
  ck_assert_int_eq(gen_rank_cp(&l, 0, 1, 0, 0), 4);
  ck_assert_int_eq(gen_rank_cp(&l, 0, 0, 1, 0), 2);
  /* the cp group of rank 0 is {0, 2}: the next tp-sized block */
  g_autoptr(graph) g = generate(&m, &l);
  gboolean found = FALSE;
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(g->groups, i);
    if (strcmp(gr->label, "cp") || g_array_index(gr->ranks, int, 0) != 0) continue;
    ck_assert_int_eq(gr->ranks->len, 2);
    ck_assert_int_eq(g_array_index(gr->ranks, int, 1), 2);
    found = TRUE;
  }
  ck_assert(found);
}
END_TEST

/* FLOPs of layer 0's forward of micro-batch 0 on a rank. */
static double layer_forward_flops(const graph *g, int rank)
{
  const graph_program *p = program(g, rank);
  double f = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind == EV_COMPUTE && e->layer == 0 && e->micro_batch == 0 && e->phase == PH_FORWARD) f += e->flops;
  }
  return f;
}

START_TEST(test_cp2_layer_flops_per_rank_are_half_of_cp1)
{
  model m = gqa();
  double h = m.hidden, f = m.ffn, t = 2, s = 2048, kvd = m.kv_heads * 32.0;
  double matmul_params = h * (h + 2 * kvd) + h * h + 3 * h * f; /* qkv, attention out, gate + up + down */
  double per_cp[3] = {0};
  for (int cp = 1; cp <= 2; cp++) {
    layout l = cp_layout(8, 2, cp, (int)s);
    g_autoptr(graph) g = generate(&m, &l);
    /* closed form: T = s/cp tokens through the GEMMs (2 T params/t), and cp ring steps of 4 T (s/cp) h/t each
     * (a causal s/cp x s/cp block in model FLOPs): 4 s^2 h / (t cp) */
    double T = s / cp;
    double want = 2 * T * matmul_params / t + cp * 4 * T * (s / cp) * h / t;
    per_cp[cp] = layer_forward_flops(g, 0);
    ck_assert_msg(fabs(per_cp[cp] - want) <= 1e-9 * want, "cp %d: %.6g FLOPs, want %.6g", cp, per_cp[cp], want);
    ck_assert_double_eq_tol(layer_forward_flops(g, 2), per_cp[cp], 1e-9 * want); /* the other cp rank alike */
  }
  ck_assert_double_eq_tol(per_cp[2], per_cp[1] / 2, 1e-9 * per_cp[1]);
}
END_TEST

typedef struct ring_count {
  int sends, recvs, kernels;
  double bytes;
} ring_count;

/* The ring's messages and attention kernels in layer 0 of micro-batch 0, in one phase. */
static ring_count ring_of(const graph *g, int rank, graph_phase ph, int *first_peer)
{
  const graph_program *p = program(g, rank);
  ring_count c = {0};
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->layer != 0 || e->micro_batch != 0 || e->phase != ph) continue;
    if (e->kind == EV_SEND) {
      ck_assert(e->variant & GRAPH_P2P_LAYER);
      if (!c.sends && first_peer) *first_peer = e->peer;
      c.sends++;
      c.bytes += e->bytes;
    }
    if (e->kind == EV_RECV) c.recvs++;
    if (e->kind == EV_COMPUTE && e->cost == COST_ATTENTION) c.kernels++;
  }
  return c;
}

START_TEST(test_kv_ring_exchanges_per_layer_forward_and_backward)
{
  model m = gqa();
  int cp = 4, tp = 2;
  double s = 2048;
  layout l = cp_layout(16, tp, cp, (int)s);
  g_autoptr(graph) g = generate(&m, &l);
  /* the KV block: K and V of the rank's s/cp tokens, kv_heads/tp heads of 32, bf16 */
  double kv = 2 * (s / cp) * (m.kv_heads / tp) * 32 * 2.0;
  int peer = -1;
  /* forward: cp kernels, cp - 1 exchanges of the KV block, to the next cp rank (rank + tp) */
  ring_count f = ring_of(g, 0, PH_FORWARD, &peer);
  ck_assert_int_eq(f.kernels, cp);
  ck_assert_int_eq(f.sends, cp - 1);
  ck_assert_int_eq(f.recvs, cp - 1);
  ck_assert_double_eq_tol(f.bytes, (cp - 1) * kv, 1e-9 * kv);
  ck_assert_int_eq(peer, tp);
  /* backward: cp kernels, cp exchanges -- KV, then KV + dKV, then dKV home: 2 (cp - 1) blocks -- the other way */
  ring_count b = ring_of(g, 0, PH_BACKWARD, &peer);
  ck_assert_int_eq(b.kernels, cp);
  ck_assert_int_eq(b.sends, cp);
  ck_assert_int_eq(b.recvs, cp);
  ck_assert_double_eq_tol(b.bytes, 2 * (cp - 1) * kv, 1e-9 * kv);
  ck_assert_int_eq(peer, (cp - 1) * tp);
  /* and cp 1 exchanges nothing */
  layout one = cp_layout(16, tp, 1, (int)s);
  g_autoptr(graph) g1 = generate(&m, &one);
  ring_count n = ring_of(g1, 0, PH_FORWARD, NULL);
  ck_assert_int_eq(n.sends + n.recvs, 0);
  ck_assert_int_eq(n.kernels, 1);
  ck_assert(graph_check(g, NULL));
}
END_TEST

START_TEST(test_gradient_all_reduce_runs_over_the_dp_cp_group)
{
  model m = gqa();
  layout l = cp_layout(16, 2, 2, 1024); /* dp = 16 / (2 * 2) = 4 */
  g_autoptr(graph) g = generate(&m, &l);
  ck_assert_int_eq(l.dp, 4);
  const graph_program *p = program(g, 0);
  int reduces = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind != EV_COLLECTIVE || e->phase != PH_DP || e->variant != COLL_ALL_REDUCE || e->bytes <= 4) continue;
    const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
    /* dp * cp members: rank 2 (c + 2 d) for tp index 0, cp fastest */
    ck_assert_int_eq(gr->ranks->len, l.dp * l.cp);
    for (int k = 0; k < l.dp * l.cp; k++) ck_assert_int_eq(g_array_index(gr->ranks, int, k), 2 * (k % 2 + 2 * (k / 2)));
    reduces++;
  }
  ck_assert_int_ge(reduces, 1);
  /* the weights a rank holds do not depend on cp: the same 16 GPUs at cp 1 (dp 8) hold as many */
  layout one = cp_layout(16, 2, 1, 1024);
  g_autoptr(graph) g1 = generate(&m, &one);
  ck_assert_double_eq(program(g1, 0)->mem_params_bytes, p->mem_params_bytes);
}
END_TEST

/* What rank 0 keeps after the forward of micro-batch 0 (the sum of the events' memory changes up to its
 * first backward event). */
static double kept_after_first_forward(const graph *g)
{
  const graph_program *p = program(g, 0);
  double kept = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->phase == PH_BACKWARD) break;
    kept += e->mem_delta_bytes;
  }
  return kept;
}

START_TEST(test_activation_bytes_per_rank_shrink_by_cp)
{
  model m = gqa();
  double h = m.hidden, f = m.ffn, t = 2, s = 2048, kvd = m.kv_heads * 32.0, heads = m.heads;
  double kept[3] = {0};
  for (int cp = 1; cp <= 2; cp++) {
    layout l = cp_layout(8, 2, cp, (int)s);
    g_autoptr(graph) g = generate(&m, &l);
    mem_ctx c;
    mem_ctx_init(&c, &m, &l);
    c.code.fused_norm = TRUE; /* flash2+rmsnorm */
    /* docs/memory.md, per layer with FlashAttention and fused norms, T = s/cp tokens, bf16 = 2: two norm inputs
     * (2 T h each), the QKV and MLP inputs (2 T h each), q k v o (2 T (2h + 2kvd)/t) and the fp32 log-sum-exp
     * (4 T heads/t), the attention output's input (2 T h/t), SwiGLU's three (6 T f/t), the down GEMM's (2 T f/t) */
    double T = s / cp;
    double want = T * (2 * 2 * h + 2 * 2 * h + 2 * (2 * h + 2 * kvd) / t + 4 * heads / t + 2 * h / t + 6 * f / t +
                       2 * f / t);
    ck_assert_double_eq_tol(mem_layer_bytes(&c), want, 1e-9 * want);
    kept[cp] = kept_after_first_forward(g);
  }
  /* the whole forward (embedding, layers, head and its loss) is linear in the rank's tokens */
  ck_assert_double_eq_tol(kept[2], kept[1] / 2, 1e-9 * kept[1]);
}
END_TEST

static gpu_profile profile(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "megatron-deepspeed", &p, NULL));
  return p;
}

typedef struct replay_case {
  gboolean symmetry;
  int zero;
  gboolean overlap_grad_reduce;
} replay_case;

static void run_cp(void *arg, double out[SIM_CHILD_MAX])
{
  const replay_case *rc = arg;
  sim_request rq;
  memset(&rq, 0, sizeof rq);
  rq.m = gqa();
  rq.l = cp_layout(16, 2, 2, 2048);
  rq.gen = gen_default_options();
  rq.l.zero = rc->zero ? rc->zero : 1;
  rq.l.overlap_grad_reduce = rc->overlap_grad_reduce;
  rq.gen.symmetry = rc->symmetry;
  rq.prof = profile();
  rq.capacity_gib = 80;
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  out[0] = o.met->step_time_s;
  out[1] = o.met->bubble_fraction;
  sim_outcome_clear(&o);
}

START_TEST(test_cp_replay_with_mirrors_equals_every_rank_explicit)
{
  double sym[SIM_CHILD_MAX], all[SIM_CHILD_MAX];
  replay_case a = {TRUE, 0, FALSE}, b = {FALSE, 0, FALSE};
  sim_child_run(run_cp, &a, sym);
  sim_child_run(run_cp, &b, all);
  ck_assert_double_gt(sym[0], 0);
  ck_assert_double_eq_tol(sym[0], all[0], 1e-9 * all[0]);
  ck_assert_double_eq_tol(sym[1], 0, 1e-12); /* pp 1: the ring's waits are no pipeline bubble */
}
END_TEST

/* ZeRO-2/3 and the overlapped reductions put dp-cp collectives inside the backward, where the mirrors of the cp
 * explicit programs are all passive: the layout is mirrored (one explicit program per cp index) and its replay
 * gives the step of the replay with every rank explicit (the passive members of a dp-cp call are every mirror
 * before its active part, whichever cp index it mirrors: sim/replay.c). tests/test_fast_path.c holds more. */
START_TEST(test_cp_with_zero2_or_overlap_is_mirrored_and_replays_as_every_rank)
{
  layout l = cp_layout(16, 2, 2, 2048);
  model m = gqa();
  l.zero = 2;
  g_autoptr(graph) g = generate(&m, &l);
  int explicit_ranks = 0;
  for (int r = 0; r < g->world_size; r++)
    explicit_ranks += ((const graph_program *)g_ptr_array_index(g->programs, r))->mirror_of == -1;
  ck_assert_int_eq(explicit_ranks, 2); /* one per cp index (pp 1) */
  const replay_case cases[][2] = {{{TRUE, 2, FALSE}, {FALSE, 2, FALSE}}, {{TRUE, 3, FALSE}, {FALSE, 3, FALSE}},
                                  {{TRUE, 1, TRUE}, {FALSE, 1, TRUE}}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double sym[SIM_CHILD_MAX], all[SIM_CHILD_MAX];
    sim_child_run(run_cp, (void *)&cases[i][0], sym);
    sim_child_run(run_cp, (void *)&cases[i][1], all);
    ck_assert_double_gt(all[0], 0);
    ck_assert_double_eq_tol(sym[0], all[0], 1e-9 * all[0]);
  }
}
END_TEST

START_TEST(test_bad_cp_layouts_name_the_field_and_allowed_values)
{
  model m = gqa();
  struct {
    int gpus, tp, cp, seq;
    layout_attn attn;
    const char *field;
  } cases[] = {
      {8, 2, 3, 2048, ATTN_FLASH2, "cp: 3 does not divide gpus/(tp*pp) = 4"},
      {8, 2, 2, 2046, ATTN_FLASH2, "seq_len: 2046 is not a multiple of 2*cp = 4"},
      {8, 2, 2, 2048, ATTN_FUSED_SOFTMAX, "attention_kernel: fused-softmax with cp 2"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    layout l = cp_layout(cases[i].gpus, cases[i].tp, 1, cases[i].seq);
    l.cp = cases[i].cp;
    l.attn = cases[i].attn;
    GError *err = NULL;
    ck_assert(!layout_validate(&l, &m, &err));
    ck_assert_msg(g_str_has_prefix(err->message, cases[i].field) && strstr(err->message, "(allowed: "), "%s",
                  err->message);
    g_error_free(err);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cp");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_ranks_follow_megatrons_order_tp_cp_dp_pp);
  tcase_add_test(tc, test_cp2_layer_flops_per_rank_are_half_of_cp1);
  tcase_add_test(tc, test_kv_ring_exchanges_per_layer_forward_and_backward);
  tcase_add_test(tc, test_gradient_all_reduce_runs_over_the_dp_cp_group);
  tcase_add_test(tc, test_activation_bytes_per_rank_shrink_by_cp);
  tcase_add_test(tc, test_cp_replay_with_mirrors_equals_every_rank_explicit);
  tcase_add_test(tc, test_cp_with_zero2_or_overlap_is_mirrored_and_replays_as_every_rank);
  tcase_add_test(tc, test_bad_cp_layouts_name_the_field_and_allowed_values);
  suite_add_tcase(s, tc);
  return check_run(s);
}
