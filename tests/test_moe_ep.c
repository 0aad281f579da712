/* test_moe_ep -- expert parallelism (docs/moe.md): the folded expert mesh against Megatron-Core's expert rank
 * generator, the MoE block's all-to-all dispatch and combine, --moe-imbalance's exact scaling, the expert
 * gradients' reduction over edp and the experts' model states, and the refusals of bad ep/etp.
 *
 * Expected values are computed here from their closed forms:
 *   dispatch (and combine) per rank per direction: each rank sends its k*T token copies, h wide in bf16, S = k*T*h*2
 *   bytes, S/ep to each member of the ep group, its own share staying: (ep-1)/ep * S leaves the rank (the pairwise
 *   plan, sim/coll_alltoall.c, whose time tests/test_coll_algo.c checks as (n-1)/n S/B);
 *   expert GEMMs: E/ep local experts, etp*ep*k*T/E rows each when balanced; F times the FLOPs and bytes on the
 *   slowest rank, F times every all-to-all message;
 *   edp = tp*cp*dp/(etp*ep); the routed experts' gradients (E/ep * 3*h*fe/etp per MoE layer) all-reduced over it.
 *   FP8 (fp8-cs, mxfp8): each expert GEMM is a dense FP8 GEMM of its shape (docs/precision.md's bytes), its input
 *   cast (6 or 2 + 2(1 + 1/32) bytes an element) and its weights' once a step, 2 bytes a linear parameter of FP8
 *   copies; a capacity factor c caps the slowest rank's load at min(F, c).
 * The expert groups were worked out from Megatron-Core's generate_masked_orthogonal_rank_groups for the expert
 * RankGenerator(tp=etp, ep=ep, dp=edp, pp=pp, cp=1, order "tp-cp-ep-dp-pp") (parallel_state.py).
 */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"
#include <math.h>
#include <string.h>

#include "platforms/kernel_cost.h"
#include "platforms/profile.h"
#include "workloads/axes.h"
#include "workloads/block.h"
#include "workloads/generate.h"
#include "workloads/memory.h"
#include "workloads/mesh.h"
#include "workloads/precision.h"

/* 4 MoE layers, 8 experts, top 2, each expert 128 wide (SwiGLU). */
static model moe(void)
{
  model m = {.name = "moe", .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .vocab = 1024};
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn = 128;
  return m;
}

static layout lay(int gpus, int tp, int pp, int ep, int etp)
{
  layout l = test_layout(gpus, tp, pp, 1, CKPT_NONE);
  l.sp = tp > 1;
  l.ep = ep;
  l.etp = etp;
  l.seq_len = 256;
  l.global_batch = 2 * gpus / (tp * pp); /* two micro-batches a replica */
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

static const graph_group *group(const graph *g, int id) { return g_ptr_array_index(g->groups, id); }

static void assert_groups(const mesh *me, unsigned mask, const int *expected, int count, int size)
{
  ck_assert_int_eq(mesh_group_count(me, mask), count);
  ck_assert_int_eq(mesh_group_size(me, mask), size);
  int got[16];
  for (int i = 0; i < count; i++) {
    mesh_group_ranks(me, mask, i, got);
    for (int k = 0; k < size; k++) ck_assert_int_eq(got[k], expected[i * size + k]);
  }
}

/* Whether the graph has a group of this label with exactly these ranks. */
static gboolean has_group(const graph *g, const char *label, const int *ranks, int n)
{
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = group(g, (int)i);
    if (strcmp(gr->label, label) || (int)gr->ranks->len != n) continue;
    gboolean same = TRUE;
    for (int k = 0; k < n; k++) same &= g_array_index(gr->ranks, int, k) == ranks[k];
    if (same) return TRUE;
  }
  return FALSE;
}

START_TEST(test_expert_groups_are_megatrons_expert_rank_generator_groups)
{
  /* 16 GPUs, tp 2 pp 2 (dp 4), ep 4 etp 1: experts etp 1 x ep 4 x edp 2 x pp 2, ep fastest */
  model m = moe();
  layout l = lay(16, 2, 2, 4, 1);
  g_autoptr(graph) g = generate(&m, &l);
  ck_assert_int_eq(axis_edp(&l), 2);
  mesh xe;
  mesh_init_expert(&xe, &l);
  static const int EP[4][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}};
  static const int EDP[8][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}};
  assert_groups(&xe, AXIS_BIT(AXIS_EP), &EP[0][0], 4, 4);
  assert_groups(&xe, AXIS_BIT(AXIS_DP), &EDP[0][0], 8, 2);
  for (int i = 0; i < 4; i++) ck_assert(has_group(g, "ep", EP[i], 4));
  for (int i = 0; i < 8; i++) ck_assert(has_group(g, "edp", EDP[i], 2));
  /* the dense order is unchanged: tp {0,1}, dp {0,2,4,6} */
  ck_assert(has_group(g, "tp", (const int[]){0, 1}, 2));
  ck_assert(has_group(g, "dp", (const int[]){0, 2, 4, 6}, 4));

  /* etp 2 ep 2 on the same GPUs: etp {0,1}, ep {0,2}, edp {0,4} */
  layout l2 = lay(16, 2, 2, 2, 2);
  ck_assert(layout_validate(&l2, &m, NULL));
  mesh_init_expert(&xe, &l2);
  static const int ETP2[8][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}};
  static const int EP2[8][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}};
  static const int EDP2[8][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}};
  assert_groups(&xe, AXIS_BIT(AXIS_ETP), &ETP2[0][0], 8, 2);
  assert_groups(&xe, AXIS_BIT(AXIS_EP), &EP2[0][0], 8, 2);
  assert_groups(&xe, AXIS_BIT(AXIS_DP), &EDP2[0][0], 8, 2);
  /* the pipeline groups agree in both orders (Megatron asserts it) */
  mesh de;
  mesh_init(&de, &l2);
  for (int r = 0; r < 16; r++)
    ck_assert_int_eq(mesh_group_position(&xe, r, AXIS_BIT(AXIS_PP)), mesh_group_position(&de, r, AXIS_BIT(AXIS_PP)));
}
END_TEST

/* The all-to-alls of rank 0's forward of layer `layer`, micro-batch 0: their count and each one's bytes. */
static int forward_all_to_alls(const graph *g, int layer, double *bytes, int *group_size)
{
  const graph_program *p = program(g, 0);
  int n = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind != EV_COLLECTIVE || e->variant != COLL_ALL_TO_ALL || e->phase != PH_FORWARD || e->micro_batch != 0 ||
        e->layer != layer)
      continue;
    bytes[n] = e->bytes;
    *group_size = (int)group(g, e->peer)->ranks->len;
    ck_assert_int_eq(group(g, e->peer)->tclass, TC_EP);
    n++;
  }
  return n;
}

START_TEST(test_dispatch_all_to_all_moves_k_T_h_bytes_times_ep_minus_1_over_ep)
{
  model m = moe();
  for (int tp = 1; tp <= 2; tp++) {
    layout l = lay(8, tp, 1, 4, 1);
    g_autoptr(graph) g = generate(&m, &l);
    double T = (double)l.micro_batch * l.seq_len / tp; /* the rank's tokens in the sequence-parallel region */
    double S = m.moe.top_k * T * m.hidden * 2.0;     /* k*T*h bf16 */
    double bytes[8];
    int n = 0, size = 0;
    n = forward_all_to_alls(g, 1, bytes, &size);
    ck_assert_int_eq(n, 2); /* dispatch and combine */
    ck_assert_int_eq(size, 4);
    for (int i = 0; i < n; i++) {
      ck_assert_double_eq_tol(bytes[i], S, 1e-9 * S);
      /* what leaves the rank: the pairwise plan's (ep-1) shares of S/ep */
      ck_assert_double_eq_tol(bytes[i] * (size - 1) / size, S * 3 / 4, 1e-9 * S);
    }
  }
  /* ep 1: no all-to-all at all (the permuted tokens stay) */
  layout l1 = lay(8, 1, 1, 1, 1);
  g_autoptr(graph) g1 = generate(&m, &l1);
  double b[8];
  int s = 0;
  ck_assert_int_eq(forward_all_to_alls(g1, 1, b, &s), 0);
}
END_TEST

static const graph_event *first_event(const graph *g, block_label op, graph_phase ph)
{
  const graph_program *p = program(g, 0);
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->op == op && e->phase == ph) return e;
  }
  ck_abort_msg("no %s event", block_label_name(op));
  return NULL;
}

START_TEST(test_imbalance_scales_slowest_rank_expert_gemms_and_largest_message_exactly)
{
  model m = moe();
  const double F = 1.7;
  layout l1 = lay(8, 1, 1, 4, 1), lf = lay(8, 1, 1, 4, 1);
  lf.moe_imbalance = F;
  g_autoptr(graph) g1 = generate(&m, &l1);
  g_autoptr(graph) gf = generate(&m, &lf);
  gpu_profile p;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "megatron-deepspeed", &p, NULL));
  double T = (double)l1.seq_len, E = m.moe.experts, k = m.moe.top_k;
  for (int ph = PH_FORWARD; ph <= PH_BACKWARD; ph += PH_BACKWARD - PH_FORWARD) {
    for (block_label op = BL_EXPERT_UP; op <= BL_EXPERT_DOWN; op += BL_EXPERT_DOWN - BL_EXPERT_UP) {
      const graph_event *a = first_event(g1, op, ph), *b = first_event(gf, op, ph);
      /* the balanced shape: E/ep experts of etp*ep*k*T/E rows */
      ck_assert_int_eq(a->m, (int)(1 * 4 * k * T / E));
      ck_assert_int_eq(a->launches, (int)(E / 4) * (ph == PH_BACKWARD ? 2 : 1));
      ck_assert_int_eq(b->m, a->m);
      ck_assert_double_eq_tol(b->flops, F * a->flops, 1e-12 * b->flops);
      ck_assert_double_eq_tol(b->bytes, F * a->bytes, 1e-12 * b->bytes);
      double launch = a->launches * p.stack.launch_overhead_s;
      double ta = kcost_seconds(&p, a) - launch, tb = kcost_seconds(&p, b) - launch;
      ck_assert_double_eq_tol(tb, F * ta, 1e-12 * tb);
    }
  }
  double b1[8], bf[8];
  int s = 0;
  ck_assert_int_eq(forward_all_to_alls(g1, 0, b1, &s), 2);
  ck_assert_int_eq(forward_all_to_alls(gf, 0, bf, &s), 2);
  for (int i = 0; i < 2; i++) ck_assert_double_eq_tol(bf[i] / s, F * b1[i] / s, 1e-12 * bf[i]); /* each message */
  /* the router and the attention are not imbalanced */
  ck_assert_double_eq(first_event(gf, BL_ROUTER, PH_FORWARD)->flops, first_event(g1, BL_ROUTER, PH_FORWARD)->flops);
}
END_TEST

START_TEST(test_expert_gradients_reduce_over_edp_not_dp)
{
  /* 8 GPUs, tp 2 (dp 4), ep 4: edp = 2*4/4 = 2; the experts' gradients over edp, the rest over dp */
  model m = moe();
  layout l = lay(8, 2, 1, 4, 1);
  g_autoptr(graph) g = generate(&m, &l);
  gen_code c = gen_default_code();
  double experts = m.layers * (m.moe.experts / 4.0) * 3.0 * m.hidden * m.moe.expert_ffn; /* E/ep of 3 h fe */
  double edp_bytes = 0, dp_bytes = 0;
  int edp_size = 0;
  const graph_program *p = program(g, 0);
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind != EV_COLLECTIVE || e->phase != PH_DP || e->variant != COLL_ALL_REDUCE) continue;
    const graph_group *gr = group(g, e->peer);
    if (!strcmp(gr->label, "edp")) {
      edp_bytes += e->bytes;
      edp_size = (int)gr->ranks->len;
      ck_assert_int_eq(gr->tclass, TC_DP);
    } else if (!strcmp(gr->label, "dp")) dp_bytes += e->bytes;
  }
  ck_assert_int_eq(edp_size, 2);
  ck_assert_double_eq_tol(edp_bytes, experts * c.grad_reduce_bytes, 1e-9 * edp_bytes);
  /* the dense buckets carry the rest of the stage: its parameters without the routed experts */
  partition part;
  ck_assert(partition_make_chunked(&part, &m, 1, 1, l.tp, PARTITION_BALANCED, NULL));
  double dense = mem_stage_params(&m, &l, &part, 0);
  ck_assert_double_eq_tol(mem_stage_expert_params(&m, &l, &part, 0), experts, 1e-9 * experts);
  ck_assert_double_eq_tol(dp_bytes, dense * c.grad_reduce_bytes, 1e-9 * dp_bytes);
  /* the distributed optimizer: dense states over dp-cp (4), the experts' over edp (2) */
  mem_states st;
  mem_model_states(&m, &l, NULL, &part, 0, &st);
  ck_assert_double_eq_tol(st.optimizer_bytes, 12.0 * (dense / 4 + experts / 2), 1e-9 * st.optimizer_bytes);
  ck_assert_double_eq_tol(st.params_bytes, 2.0 * (dense + experts), 1e-9 * st.params_bytes);
  partition_clear(&part);
}
END_TEST

/* The distributed optimizer's parameter all-gather of the routed experts: their updated shards gathered over edp
 * (Megatron's expert-parallel parameter buffers), E/ep * 3 h fe per MoE layer in bf16 a step, at 1 byte with FP8
 * primary weights; the same with --overlap-param-gather (before the first forward); and the events the generator
 * counts for the sweep equal the program it writes. 8 GPUs, tp 2 (dp 4), ep 4: edp 2. */
START_TEST(test_expert_parameters_are_gathered_over_edp)
{
  model m = moe();
  double experts = m.layers * (m.moe.experts / 4.0) * 3.0 * m.hidden * m.moe.expert_ffn;
  for (int c = 0; c < 4; c++) {
    layout l = lay(8, 2, 1, 4, 1);
    l.overlap_param_gather = c & 1;
    if (c & 2) {
      l.precision = PREC_FP8_CS;
      l.fp8_param_gather = TRUE;
    }
    g_autoptr(graph) g = generate(&m, &l);
    double edp_bytes = 0;
    const graph_program *p = program(g, 0);
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_GATHER && !strcmp(group(g, e->peer)->label, "edp"))
        edp_bytes += e->bytes;
    }
    ck_assert_msg(fabs(edp_bytes - experts * (c & 2 ? 1 : 2)) < 1e-9 * experts, "case %d: %.0f, want %.0f", c, edp_bytes,
                  experts * (c & 2 ? 1 : 2));
    gen_options o = gen_default_options();
    partition part;
    ck_assert(partition_make_chunked(&part, &m, 1, 1, l.tp, o.partition, NULL));
    gen_stage_size sz;
    gen_stage_events(&m, &l, &o.code, &part, 0, &sz);
    ck_assert_msg(sz.events == p->events->len, "case %d: counted %.0f, written %u", c, sz.events, p->events->len);
    partition_clear(&part);
  }
}
END_TEST

static void refused(const model *m, layout l, const char *field)
{
  GError *err = NULL;
  ck_assert(!layout_validate(&l, m, &err));
  ck_assert_msg(g_str_has_prefix(err->message, field), "%s", err->message);
  ck_assert(strstr(err->message, "allowed") != NULL);
  g_error_free(err);
}

START_TEST(test_bad_ep_and_etp_are_refused_naming_the_field)
{
  model m = moe(), dense = moe();
  dense.moe.experts = 0;
  refused(&m, lay(8, 1, 1, 3, 1), "ep: 3 does not divide the 8 experts");
  refused(&m, lay(8, 2, 2, 4, 2), "ep: etp*ep"); /* 8 > tp*dp = 4 */
  refused(&dense, lay(8, 1, 1, 2, 1), "ep: 2 on moe");
  model odd = moe();
  odd.moe.expert_ffn = 100;
  refused(&odd, lay(8, 1, 1, 1, 8), "etp: 8 does not divide the experts' inner width 100");
  layout nosp = lay(8, 2, 1, 2, 1);
  nosp.sp = FALSE;
  refused(&m, nosp, "sp: 0 with tp 2");
  layout under = lay(8, 1, 1, 2, 1);
  under.moe_imbalance = 0.5;
  refused(&m, under, "moe_imbalance: 0.5");
  layout ok = lay(8, 2, 1, 4, 2); /* etp*ep = tp*dp = 8: edp 1 */
  ck_assert(layout_validate(&ok, &m, NULL));
  ck_assert_int_eq(axis_edp(&ok), 1);
}
END_TEST

/* A dense GEMM event of the shape and dtype given, its FLOPs and bytes by the documented formulas
 * (docs/precision.md: FP8 operands 1 byte an element, mxfp8 1 + 1/32, the output bf16; backward dgrad + wgrad). */
static graph_event dense_gemm(graph_phase ph, int m, int n, int k, int count, graph_dtype dt, double opnd)
{
  int mult = ph == PH_BACKWARD ? 2 : 1;
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = ph, .dtype = dt, .m = m, .n = n, .k = k,
                   .launches = count * mult};
  e.flops = 2.0 * m * n * k * count * mult;
  e.bytes = (opnd * ((double)m * k + (double)k * n) + 2.0 * m * n) * count * mult;
  return e;
}

START_TEST(test_fp8_expert_gemm_costs_as_the_dense_fp8_gemm_of_its_shape)
{
  /* Transformer Engine's GroupedLinear under fp8_autocast: each local expert's GEMM in FP8 (E4M3 forward, E5M2
   * backward; MXFP8 blocks), costed as a dense FP8 GEMM of (rows x k).(k x n); the router's GEMM stays bf16 */
  model m = moe();
  static const struct { const char *profile; precision pr; graph_dtype fwd, bwd; double opnd, cast; } CASES[] = {
      {"h100-sxm5-80gb", PREC_FP8_CS, DT_FP8_E4M3, DT_FP8_E5M2, 1, 6},
      {"b200", PREC_MXFP8, DT_MXFP8, DT_MXFP8, 1 + 1.0 / 32, 2 + 2 * (1 + 1.0 / 32)}};
  for (size_t c = 0; c < G_N_ELEMENTS(CASES); c++) {
    gpu_profile p;
    ck_assert(profile_load_with_stack(CASES[c].profile, "nemo", &p, NULL));
    for (int imb = 0; imb < 2; imb++) {
      double F = imb ? 1.7 : 1.0;
      layout l = lay(8, 1, 1, 4, 1);
      l.precision = CASES[c].pr;
      l.moe_imbalance = F;
      g_autoptr(graph) g = generate(&m, &l);
      double T = l.seq_len, h = m.hidden, fe = m.moe.expert_ffn, k = m.moe.top_k, E = m.moe.experts;
      int rows = (int)(4 * k * T / E), local = (int)(E / 4); /* etp*ep*k*T/E balanced rows, E/ep experts */
      for (int ph = PH_FORWARD; ph <= PH_BACKWARD; ph += PH_BACKWARD - PH_FORWARD) {
        graph_dtype dt = ph == PH_BACKWARD ? CASES[c].bwd : CASES[c].fwd;
        const graph_event *up = first_event(g, BL_EXPERT_UP, ph), *down = first_event(g, BL_EXPERT_DOWN, ph);
        graph_event eu = dense_gemm(ph, rows, (int)(2 * fe), (int)h, local, dt, CASES[c].opnd);
        graph_event ed = dense_gemm(ph, rows, (int)h, (int)fe, local, dt, CASES[c].opnd);
        const graph_event *got[2] = {up, down};
        graph_event *want[2] = {&eu, &ed};
        for (int i = 0; i < 2; i++) {
          ck_assert_int_eq(got[i]->dtype, dt);
          ck_assert_int_eq(got[i]->m, want[i]->m);
          ck_assert_int_eq(got[i]->launches, want[i]->launches);
          ck_assert_double_eq_tol(got[i]->flops, F * want[i]->flops, 1e-12 * got[i]->flops);
          ck_assert_double_eq_tol(got[i]->bytes, F * want[i]->bytes, 1e-12 * got[i]->bytes);
          if (F == 1.0) /* the same time as the dense FP8 GEMM of that shape */
            ck_assert_double_eq_tol(kcost_seconds(&p, got[i]), kcost_seconds(&p, want[i]),
                                    1e-12 * kcost_seconds(&p, want[i]));
        }
        ck_assert_int_eq(first_event(g, BL_ROUTER, ph)->dtype, DT_BF16);
      }
      /* the casts: forward every expert's input (local x rows x h, F times on the slowest rank) before expert_up;
       * the weights (local x h x 2fe) at the first micro-batch only; backward the output gradients */
      const graph_program *pg = program(g, 0);
      double cast_fwd0 = -1, cast_fwd1 = -1;
      for (guint i = 1; i < pg->events->len; i++) {
        const graph_event *e = &g_array_index(pg->events, graph_event, i), *prev = e - 1;
        if (e->op != BL_EXPERT_UP || e->phase != PH_FORWARD || e->layer != 0 || prev->op != BL_FP8_CAST) continue;
        if (e->micro_batch == 0) cast_fwd0 = prev->bytes;
        if (e->micro_batch == 1) cast_fwd1 = prev->bytes;
      }
      ck_assert_double_eq_tol(cast_fwd1, CASES[c].cast * F * local * rows * h, 1e-9 * cast_fwd1);
      ck_assert_double_eq_tol(cast_fwd0 - cast_fwd1, CASES[c].cast * local * h * 2 * fe, 1e-9 * cast_fwd0);
    }
  }
}
END_TEST

START_TEST(test_fp8_experts_keep_weight_copies_and_save_fp8_inputs)
{
  /* memory (docs/precision.md): TE keeps every linear weight's FP8 copy and its transpose for the step, 2 bytes a
   * parameter (fp8-cs): per MoE layer the attention's h*(q + 2kv) + q*h and the E/ep local experts' 3*h*fe; the
   * router (bf16) none. The experts' GEMMs save their inputs in FP8: 1 byte an element instead of 2 */
  model m = moe();
  layout lb = lay(8, 1, 1, 4, 1), lf = lay(8, 1, 1, 4, 1);
  lf.precision = PREC_FP8_CS;
  ck_assert(layout_validate(&lb, &m, NULL) && layout_validate(&lf, &m, NULL));
  partition part;
  ck_assert(partition_make_chunked(&part, &m, 1, 1, 1, PARTITION_BALANCED, NULL));
  mem_states sb, sf;
  mem_model_states(&m, &lb, NULL, &part, 0, &sb);
  mem_model_states(&m, &lf, NULL, &part, 0, &sf);
  double h = m.hidden, q = h, kv = 2 * 32, attention = h * (q + 2 * kv) + q * h;
  double experts = 8 / 4 * 3 * h * m.moe.expert_ffn;
  ck_assert_double_eq_tol(sf.buffers_bytes - sb.buffers_bytes, m.layers * (attention + experts) * 2,
                          1e-9 * sf.buffers_bytes);
  /* FP8 primary weights (--fp8-param-gather): the dp all-gather after the optimizer moves the attention's linear
   * weights at 1 byte, the rest of the dense parameters (embedding, head, norms, router) at 2; the routed experts
   * are not in it (their own buffers, over edp) */
  lf.fp8_param_gather = TRUE;
  ck_assert(layout_validate(&lf, &m, NULL));
  ck_assert_double_eq_tol(mem_stage_dense_linear_params(&m, &lf, &part, 0), m.layers * attention, 1e-9);
  graph *g = generate(&m, &lf);
  double gathered = 0;
  const graph_program *p0 = program(g, 0);
  for (guint i = 0; i < p0->events->len; i++) {
    const graph_event *e = &g_array_index(p0->events, graph_event, i);
    if (e->kind == EV_COLLECTIVE && e->variant == COLL_ALL_GATHER && !strcmp(group(g, e->peer)->label, "dp"))
      gathered += e->bytes;
  }
  double dense = mem_stage_params(&m, &lf, &part, 0);
  ck_assert_double_eq_tol(gathered, 2 * (dense - m.layers * attention) + 1 * m.layers * attention, 1e-9 * gathered);
  graph_free(g);
  partition_clear(&part);
  block bb, bf;
  block_code code = {.mlp_in_gemms = 1};
  block_moe_layer(&m, &lb, &code, &bb);
  block_moe_layer(&m, &lf, &code, &bf);
  double Tk = lb.seq_len * m.moe.top_k; /* the rank's token rows over its local experts (etp 1) */
  for (int i = 0, n = 0; i < bf.n; i++) {
    const block_op *o = &bf.op[i];
    if (o->label != BL_EXPERT_UP && o->label != BL_EXPERT_DOWN) continue;
    double width = o->label == BL_EXPERT_UP ? h : m.moe.expert_ffn;
    ck_assert_double_eq_tol(o->saved_bytes, Tk * width * 1, 1e-9 * o->saved_bytes);
    for (int j = 0; j < bb.n; j++)
      if (bb.op[j].label == o->label) ck_assert_double_eq_tol(bb.op[j].saved_bytes, Tk * width * 2, 1e-9 * Tk);
    ck_assert_int_le(++n, 2);
  }
  /* Megatron-Core's MoE saves (moe_utils.py, experts.py since its memory-efficient permutation): the weighted SwiGLU
   * its input (2fe wide, bf16) and the rows' fp32 probabilities; unpermute no copies (probabilities applied before) */
  for (int i = 0; i < bb.n; i++) {
    if (bb.op[i].label == BL_EXPERT_ACT)
      ck_assert_double_eq_tol(bb.op[i].saved_bytes, Tk * (2 * m.moe.expert_ffn * 2 + 4), 1e-9 * Tk);
    if (bb.op[i].label == BL_UNPERMUTE) ck_assert_double_eq(bb.op[i].saved_bytes, 0);
  }
}
END_TEST

START_TEST(test_capacity_caps_the_slowest_rank_at_cf_times_the_mean)
{
  /* Megatron's --moe-expert-capacity-factor c: an expert takes at most c times its balanced share, the rest is
   * dropped; the slowest rank's expert GEMMs and all-to-all messages are min(F, c) times the balanced ones */
  model m = moe();
  layout l1 = lay(8, 1, 1, 4, 1);
  g_autoptr(graph) g1 = generate(&m, &l1);
  static const struct { double F, cf, model_cf, load; } CASES[] = {
      {3.0, 1.5, 0, 1.5}, {1.2, 1.5, 0, 1.2}, {3.0, 0, 1.25, 1.25}, {3.0, 2.0, 1.25, 2.0}, {3.0, 0, 0, 3.0}};
  for (size_t c = 0; c < G_N_ELEMENTS(CASES); c++) {
    model mc = moe();
    mc.moe.capacity_factor = CASES[c].model_cf;
    layout l = lay(8, 1, 1, 4, 1);
    l.moe_imbalance = CASES[c].F;
    l.moe_capacity_factor = CASES[c].cf;
    g_autoptr(graph) g = generate(&mc, &l);
    ck_assert_double_eq(layout_moe_load(&l, &mc), CASES[c].load);
    double x = CASES[c].load;
    for (block_label op = BL_EXPERT_UP; op <= BL_EXPERT_DOWN; op += BL_EXPERT_DOWN - BL_EXPERT_UP) {
      const graph_event *a = first_event(g1, op, PH_FORWARD), *b = first_event(g, op, PH_FORWARD);
      ck_assert_int_eq(b->m, a->m);
      ck_assert_double_eq_tol(b->flops, x * a->flops, 1e-12 * b->flops);
    }
    double b1[8], bc[8];
    int s = 0;
    ck_assert_int_eq(forward_all_to_alls(g1, 0, b1, &s), 2);
    ck_assert_int_eq(forward_all_to_alls(g, 0, bc, &s), 2);
    for (int i = 0; i < 2; i++) ck_assert_double_eq_tol(bc[i], x * b1[i], 1e-12 * bc[i]);
  }
  model dense = moe();
  dense.moe.experts = 0;
  layout bad = lay(8, 1, 1, 1, 1);
  bad.moe_capacity_factor = 1.0;
  refused(&dense, bad, "moe_capacity_factor: 1 on moe, a model without experts");
  layout neg = lay(8, 1, 1, 4, 1);
  neg.moe_capacity_factor = 65;
  refused(&m, neg, "moe_capacity_factor: 65");
}
END_TEST

START_TEST(test_ep_does_not_change_the_world_or_dp)
{
  model m = moe();
  layout l = lay(16, 2, 2, 4, 1);
  ck_assert(layout_validate(&l, &m, NULL));
  ck_assert_int_eq(l.dp, 4); /* gpus / (tp*cp*pp), ep folded */
  mesh de;
  mesh_init(&de, &l);
  ck_assert_int_eq(de.world, 16);
  ck_assert_int_eq(layout_dp_cp(&l), 4);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("moe_ep");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_expert_groups_are_megatrons_expert_rank_generator_groups);
  tcase_add_test(tc, test_dispatch_all_to_all_moves_k_T_h_bytes_times_ep_minus_1_over_ep);
  tcase_add_test(tc, test_imbalance_scales_slowest_rank_expert_gemms_and_largest_message_exactly);
  tcase_add_test(tc, test_expert_gradients_reduce_over_edp_not_dp);
  tcase_add_test(tc, test_expert_parameters_are_gathered_over_edp);
  tcase_add_test(tc, test_bad_ep_and_etp_are_refused_naming_the_field);
  tcase_add_test(tc, test_ep_does_not_change_the_world_or_dp);
  tcase_add_test(tc, test_fp8_expert_gemm_costs_as_the_dense_fp8_gemm_of_its_shape);
  tcase_add_test(tc, test_fp8_experts_keep_weight_copies_and_save_fp8_inputs);
  tcase_add_test(tc, test_capacity_caps_the_slowest_rank_at_cf_times_the_mean);
  suite_add_tcase(s, tc);
  return check_run(s);
}
