/* test_coll_algo -- each collective algorithm of sim/collective.h against its closed form (alpha-beta
 * per step, pure link model: no per-step overhead, efficiencies 1), every member active and with the
 * members but one mirrors (the lone fast path); and NCCL's tuner (platforms/nccl_tune.h) against NCCL
 * 2.30.7's formulas written out here (src/graph/tuning.cc), one regime per algorithm, and the replay
 * running and recording what the tuner chose. */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <string.h>

#include "platforms/kernel_cost.h"
#include "platforms/nccl_tune.h"
#include "platforms/plat_params.h"
#include "sim/collective.h"
#include "sim/replay.h"
#include "sim_child.h"

#define GIB_BYTES 1073741824.0
#define MIB_BYTES 1048576.0

static gpu_profile test_profile(const char *name)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack(name, "study", &p, NULL));
  p.stack.nccl_step_latency_s = 0; /* pure link model: alpha = route latency */
  p.stack.nccl_bw_efficiency_nvlink = p.stack.nccl_bw_efficiency_ib = 1.0;
  return p;
}

typedef struct coll_case {
  const char *profile; /* NULL: a100-sxm4-80gb */
  int world, n, members[64];
  gboolean symmetric;  /* one explicit member, the others mirrors that never wake */
  graph_coll coll;
  double bytes;
  coll_algo algo;      /* forced; AUTO: the tuner */
  gboolean tuned;      /* the stack's nccl_latency "tuned" (else no per-step overhead at all) */
  int flex_experts, flex_top_k; /* an ep group under the flex dispatcher: the graph's meta.flex_* (0: a dp group) */
  double nvlink_bytes_per_s;    /* > 0: the profile's NVLink bandwidth replaced */
  double flex_nvlink_efficiency; /* the stack's (0: NCCL's, 1 here) */
  double flex_ib_efficiency;     /* the stack's (0: NCCL's, 1 here) */
  char what[128];      /* out: the replay's record of what ran */
} coll_case;

static void run_coll(void *arg, double out[SIM_CHILD_MAX])
{
  coll_case *c = arg;
  gpu_profile p = test_profile(c->profile ? c->profile : "a100-sxm4-80gb");
  p.stack.nccl_latency_tuned = c->tuned;
  if (c->nvlink_bytes_per_s > 0) p.nvlink_bytes_per_s = c->nvlink_bytes_per_s;
  p.stack.flex_nvlink_efficiency = c->flex_nvlink_efficiency;
  p.stack.flex_ib_efficiency = c->flex_ib_efficiency;
  graph *g = graph_new(c->world);
  for (int r = 0; r < c->world; r++) graph_program_of(g, r);
  int gid = graph_add_group(g, c->members, c->n, c->flex_top_k ? "ep" : "dp");
  g->meta.flex_experts = c->flex_experts;
  g->meta.flex_top_k = c->flex_top_k;
  graph_event e = {.kind = EV_COLLECTIVE, .op = GRAPH_OP_COMM, .phase = PH_DP, .peer = gid, .bytes = c->bytes,
                   .micro_batch = -1, .layer = -1, .variant = (uint8_t)c->coll};
  g_array_append_val(graph_program_of(g, c->members[0])->events, e);
  for (int i = 1; i < c->n; i++) {
    if (c->symmetric) graph_make_mirror(g, c->members[i], c->members[0], 1);
    else g_array_append_val(graph_program_of(g, c->members[i])->events, e);
  }
  GError *err = NULL;
  ck_assert(graph_check(g, &err));
  plat_params pp = plat_params_of(&p, c->world);
  replay_options o = {.nccl_algo = c->algo};
  replay_result *res = replay_run(g, &p, &pp, &o, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  out[0] = res->step_time_s;
  /* the record, through the pipe as doubles: enough for "dp all-reduce nvls x 1" */
  char what[8 * 8] = {0};
  g_strlcpy(what, res->coll_algos, sizeof what);
  memcpy(&out[1], what, sizeof what);
  replay_result_free(res);
  graph_free(g);
}

/* Both ways (explicit, symmetric): the step time, which must be within 0.5% of want. */
static void expect_both(coll_case c, double want, const char *algo_name)
{
  for (int sym = 0; sym < 2; sym++) {
    c.symmetric = sym;
    double out[SIM_CHILD_MAX];
    sim_child_run(run_coll, &c, out);
    char what[8 * 8];
    memcpy(what, &out[1], sizeof what);
    what[sizeof what - 1] = 0;
    ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "%s sym %d: %.9f vs %.9f", algo_name, sym, out[0], want);
    ck_assert_msg(strstr(what, algo_name), "ran '%s', want %s", what, algo_name);
  }
}

static coll_case one_per_node(int nodes, double bytes, coll_algo a, graph_coll coll)
{
  coll_case c = {.world = 8 * nodes, .n = nodes, .coll = coll, .bytes = bytes, .algo = a};
  for (int i = 0; i < nodes; i++) c.members[i] = 8 * i; /* GPU 0 of each node: its own NIC */
  return c;
}

static coll_case one_node(int n, double bytes, coll_algo a, graph_coll coll)
{
  coll_case c = {.world = 8, .n = n, .coll = coll, .bytes = bytes, .algo = a};
  for (int i = 0; i < n; i++) c.members[i] = i;
  return c;
}

/* ---- each algorithm against its closed form ---- */

START_TEST(test_ring_allreduce_is_2_n_minus_1_over_n_s_over_b_plus_2_n_minus_1_alpha)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  expect_both(one_per_node(8, S, COLL_ALGO_RING, COLL_ALL_REDUCE), 2.0 * 7 / 8 * S / 25e9 + 14 * p.ib_latency_s, "ring");
  /* reduce-scatter: n-1 steps of S/n */
  expect_both(one_node(8, S, COLL_ALGO_RING, COLL_REDUCE_SCATTER), 7.0 / 8 * S / 300e9 + 7 * 1e-6, "ring");
}
END_TEST

/* Double binary tree over 4 domains of one GPU: tree 0 is ncclGetBtree(4): 0-2, 2-1, 2-3; tree 1 its
 * mirror r -> 3-r: 3-1, 1-2, 1-0. Each edge carries S/2 each way per tree: domains 1 and 2 send
 * S (to each other, an edge of both trees) + S/2 + S/2 through their NIC, 2S, the bottleneck (the S/2
 * flows end at 1.5 S/B, the S one then has the NIC alone). The critical path is 2 log2(4) = 4 hops. */
START_TEST(test_tree_allreduce_is_its_busiest_nic_plus_2_log2_d_hops)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  expect_both(one_per_node(4, S, COLL_ALGO_TREE, COLL_ALL_REDUCE), 2 * S / 25e9 + 4 * p.ib_latency_s, "tree");
  /* 4 KiB: the latency term, 2 log2(D) hops (not a ring's 2(D-1)), is most of it */
  expect_both(one_per_node(4, 4096, COLL_ALGO_TREE, COLL_ALL_REDUCE), 2 * 4096 / 25e9 + 4 * p.ib_latency_s, "tree");
}
END_TEST

/* Inside one node the tree is a chain per channel (8 channels of S/16 per tree, each chain rotated):
 * every GPU is inner (two neighbours) in 6 of the 8 chains and an end (one) in 2, so it sends
 * 2 trees x (6 x 2 + 2 x 1) x S/16 = 1.75 S over its NVLink; the chain's critical path is
 * 2 (k-1) = 14 hops. */
START_TEST(test_tree_inside_a_node_is_a_chain_per_channel)
{
  double S = GIB_BYTES;
  expect_both(one_node(8, S, COLL_ALGO_TREE, COLL_ALL_REDUCE), 2 * (6 * 2 + 2 * 1) * (S / 16) / 300e9 + 14 * 1e-6, "tree");
}
END_TEST

/* NVLS: every GPU's link carries S once up into the switch and once down: S/B, two hops. */
START_TEST(test_nvls_allreduce_is_s_over_b_plus_two_hops)
{
  double S = GIB_BYTES;
  expect_both(one_node(8, S, COLL_ALGO_NVLS, COLL_ALL_REDUCE), S / 300e9 + 2 * 1e-6, "nvls");
}
END_TEST

/* NVLS on an H100 and a B200: the switch's traffic at NCCL's nvlsEfficiency of the link (tuning.cc: 0.85
 * Hopper, 0.74 Blackwell): S / (B x eff), two hops of the profile's NVLink latency. */
START_TEST(test_nvls_allreduce_runs_at_nccls_nvls_efficiency)
{
  double S = GIB_BYTES;
  coll_case h = one_node(8, S, COLL_ALGO_NVLS, COLL_ALL_REDUCE);
  h.profile = "h100-sxm5-80gb";
  expect_both(h, S / (450e9 * 0.85) + 2 * 1e-6, "nvls");
  coll_case b = one_node(8, S, COLL_ALGO_NVLS, COLL_ALL_REDUCE);
  b.profile = "b200";
  expect_both(b, S / (900e9 * 0.74) + 2 * 1e-6, "nvls");
}
END_TEST

/* Hierarchical over 2 nodes of 8: ring reduce-scatter of S in the node, ring all-reduce of S/8 between
 * the two GPUs of the same index (own NIC each), ring all-gather of S in the node. */
START_TEST(test_hier_allreduce_is_rs_in_node_plus_ar_across_plus_ag_in_node)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  coll_case c = {.world = 16, .n = 16, .coll = COLL_ALL_REDUCE, .bytes = S, .algo = COLL_ALGO_HIER};
  for (int i = 0; i < 16; i++) c.members[i] = i;
  double rs = 7.0 / 8 * S / 300e9 + 7 * 1e-6, ar = 2.0 * 1 / 2 * (S / 8) / 25e9 + 2 * p.ib_latency_s;
  expect_both(c, rs + ar + rs, "hier");
}
END_TEST

/* All-to-all: S/n to every other member at once, one hop. */
START_TEST(test_alltoall_is_n_minus_1_over_n_s_over_b_plus_one_hop)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  expect_both(one_node(8, S, COLL_ALGO_AUTO, COLL_ALL_TO_ALL), 7.0 / 8 * S / 300e9 + 1e-6, "pairwise");
  expect_both(one_per_node(8, S, COLL_ALGO_AUTO, COLL_ALL_TO_ALL), 7.0 / 8 * S / 25e9 + p.ib_latency_s, "pairwise");
}
END_TEST

/* C(n, k) as a double, by the multiplicative formula */
static double choose(int n, int k)
{
  double c = 1;
  for (int i = 1; i <= k; i++) c = c * (n - k + i) / i;
  return c;
}

/* coll_flex_reach against a count over every top-k set: E experts in `parts` equal blocks, the mean number of
 * blocks a set touches, over parts (E 8 k 2 in 4 parts: 28 sets; E 12 k 3 in 3 parts: 220 sets; E 6 k 6 in
 * 2 parts: always both); and for Qwen3-30B-A3B's routing (128 experts, top-8) against the binomials written
 * out: over 2 nodes 1 - C(64, 8) / C(128, 8) = 0.99690, over 16 GPUs 1 - C(120, 8) / C(128, 8) = 0.41228. */
START_TEST(test_flex_reach_is_the_mean_distinct_parts_of_a_top_k_set_over_parts)
{
  const int cases[][3] = {{8, 2, 4}, {12, 3, 3}, {6, 6, 2}, {16, 4, 16}};
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    int E = cases[c][0], k = cases[c][1], parts = cases[c][2];
    double sets = 0, touched = 0;
    for (unsigned mask = 0; mask < 1u << E; mask++) {
      if (__builtin_popcount(mask) != k) continue;
      unsigned hit = 0;
      for (int e = 0; e < E; e++)
        if (mask >> e & 1) hit |= 1u << (e / (E / parts));
      sets++;
      touched += __builtin_popcount(hit);
    }
    double want = touched / sets / parts;
    ck_assert_msg(fabs(coll_flex_reach(E, k, parts) - want) < 1e-12, "E %d k %d parts %d: %.15f vs %.15f", E, k,
                  parts, coll_flex_reach(E, k, parts), want);
  }
  ck_assert(fabs(coll_flex_reach(128, 8, 2) - (1 - choose(64, 8) / choose(128, 8))) < 1e-12);
  ck_assert(fabs(coll_flex_reach(128, 8, 16) - (1 - choose(120, 8) / choose(128, 8))) < 1e-12);
  ck_assert(fabs(coll_flex_reach(128, 8, 2) - 0.99690) < 1e-5 && fabs(coll_flex_reach(128, 8, 16) - 0.41228) < 1e-5);
}
END_TEST

/* The flex dispatcher's all-to-all (DeepEP, HybridEP) over 2 A100 nodes of 8 (ep 16, 128 experts, top-8): each
 * rank sends each token once to the other node (to its rail peer, its own NIC), so S (the k copies) / k x
 * (1 - C(64, 8) / C(128, 8)) crosses InfiniBand instead of the pairwise S / 2: 4.01x fewer bytes; its NVLink
 * forwarding (7 x 2 x 0.412 / 8 S at 300 GB/s) ends first. The same group without the routing is pairwise. */
START_TEST(test_flex_alltoall_sends_a_token_once_per_destination_node)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  coll_case c = {.world = 16, .n = 16, .coll = COLL_ALL_TO_ALL, .bytes = S, .algo = COLL_ALGO_AUTO};
  for (int i = 0; i < 16; i++) c.members[i] = i;
  c.flex_experts = 128;
  c.flex_top_k = 8;
  double net = (1 - choose(64, 8) / choose(128, 8)) / 8 * S;
  expect_both(c, net / 25e9 + p.ib_latency_s, "flex");
  /* the stack's flex_ib_efficiency 0.5 (NCCL's 1 here): the kernels' RDMA moves the same bytes at half the NIC's rate;
   * the NVLink side (300 GB/s) still ends first */
  c.flex_ib_efficiency = 0.5;
  expect_both(c, net / (0.5 * 25e9) + p.ib_latency_s, "flex");
  c.flex_ib_efficiency = 0;
  /* NVLink at 10 GB/s, so that the forwarding sets the time: each GPU sends its node's 7 others its own tokens
   * and those its rail peer brought, 2 x (1 - C(120, 8) / C(128, 8)) / 8 S each */
  c.nvlink_bytes_per_s = 10e9;
  double fwd = 7 * 2 * (1 - choose(120, 8) / choose(128, 8)) / 8 * S;
  expect_both(c, fwd / 10e9 + p.nvlink_latency_s, "flex");
  /* the stack's flex_nvlink_efficiency 0.4 (NCCL's 1 here): the flex kernels move the same bytes at 0.4 of the link */
  c.flex_nvlink_efficiency = 0.4;
  expect_both(c, fwd / (0.4 * 10e9) + p.nvlink_latency_s, "flex");
  c.flex_nvlink_efficiency = 0;
  c.nvlink_bytes_per_s = 0;
  c.flex_experts = c.flex_top_k = 0;
  expect_both(c, S / 2 / 25e9 + p.ib_latency_s, "pairwise");
}
END_TEST

/* The flex all-to-all on the communication stream beside compute (Megatron's --overlap-moe-expert-parallel-comm):
 * its kernels hold the stack's flex_sms of the GPU's sm_count while they run, so the compute beside them runs on
 * the rest. 8 A100s (108 SMs) in one node, ep 8 (128 experts, top-8): every rank starts the all-to-all (A seconds
 * alone) on stream 1 and a memory pass (C > A seconds alone) on stream 0 together. The pass does A (1 - s) of its
 * work while the all-to-all runs and the rest at full speed: it ends at C + s A, s = flex_sms / sm_count (54 SMs:
 * s = 1/2, SimGrid's even share, so the bound is what holds it). Without the key the two overlap freely: C. The
 * all-to-all's own time does not change, and the pass's recorded end is when it ended. */
typedef struct beside_case {
  double flex_sms, bytes, pass_bytes; /* the stack's flex_sms; the all-to-all's buffer; the pass's bytes (0: none) */
} beside_case;

static void run_beside(void *arg, double out[SIM_CHILD_MAX])
{
  const beside_case *c = arg;
  gpu_profile p = test_profile("a100-sxm4-80gb");
  p.stack.flex_sms = c->flex_sms;
  graph *g = graph_new(8);
  int members[8];
  for (int r = 0; r < 8; r++) members[r] = r;
  int gid = graph_add_group(g, members, 8, "ep");
  g->meta.flex_experts = 128;
  g->meta.flex_top_k = 8;
  graph_event a2a = {.kind = EV_COLLECTIVE, .op = GRAPH_OP_COMM, .phase = PH_FORWARD, .peer = gid, .bytes = c->bytes,
                     .micro_batch = 0, .layer = 0, .variant = COLL_ALL_TO_ALL, .stream = 1};
  graph_event pass = {.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_FORWARD, .launches = 1, .bytes = c->pass_bytes,
                      .micro_batch = 0, .layer = 0};
  for (int r = 0; r < 8; r++) {
    graph_program *pr = graph_program_of(g, r);
    if (c->bytes > 0) g_array_append_val(pr->events, a2a);
    if (c->pass_bytes > 0) g_array_append_val(pr->events, pass);
  }
  GError *err = NULL;
  ck_assert_msg(graph_check(g, &err), "%s", err ? err->message : "");
  plat_params pp = plat_params_of(&p, 8);
  replay_options o = {0};
  replay_result *res = replay_run(g, &p, &pp, &o, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  out[0] = res->step_time_s;
  out[1] = kcost_seconds(&p, &pass);
  out[2] = p.sm_count;
  out[3] = c->pass_bytes > 0 ? res->ranks[0].end_s[c->bytes > 0 ? 1 : 0] : 0; /* the pass's recorded end */
  replay_result_free(res);
  graph_free(g);
}

START_TEST(test_flex_kernels_hold_their_sms_from_the_compute_beside_them)
{
  double S = 256 * MIB_BYTES, P = 4 * GIB_BYTES, out[SIM_CHILD_MAX];
  for (int k = 0; k < 3; k++) {
    double sms = k == 0 ? 0 : k == 1 ? 32 : 54;
    beside_case alone_a = {sms, S, 0}, alone_c = {sms, 0, P}, both = {sms, S, P};
    sim_child_run(run_beside, &alone_a, out);
    double A = out[0];
    sim_child_run(run_beside, &alone_c, out);
    double C = out[0], sm_count = out[2];
    ck_assert_double_eq_tol(C, out[1], 1e-9 * C); /* the pass alone: its kernel's seconds */
    ck_assert_msg(A < C, "the all-to-all (%.6f s) must end first (%.6f s)", A, C);
    sim_child_run(run_beside, &both, out);
    double want = C + sms / sm_count * A;
    ck_assert_msg(fabs(out[0] - want) <= 1e-6 * want, "flex_sms %.0f: %.9f s, want C + s A = %.9f + %.4f x %.9f = %.9f",
                  sms, out[0], C, sms / sm_count, A, want);
    /* the timeline records the pass as long as it ran (its times stretched), not its kernel's seconds */
    ck_assert_msg(fabs(out[3] - want) <= 1e-6 * want, "flex_sms %.0f: the pass recorded ending at %.9f s, ran to %.9f s",
                  sms, out[3], want);
  }
}
END_TEST

/* A forced algorithm that does not fit the group (tree on an all-gather, NVLS across nodes) runs the ring,
 * and says so. */
START_TEST(test_a_forced_algorithm_that_does_not_fit_runs_the_ring)
{
  gpu_profile p = test_profile("a100-sxm4-80gb");
  double S = GIB_BYTES;
  expect_both(one_per_node(8, S, COLL_ALGO_NVLS, COLL_ALL_REDUCE), 2.0 * 7 / 8 * S / 25e9 + 14 * p.ib_latency_s, "ring");
  expect_both(one_node(8, S, COLL_ALGO_TREE, COLL_ALL_GATHER), 7.0 / 8 * S / 300e9 + 7 * 1e-6, "ring");
}
END_TEST

/* ---- NCCL's tuner: its formulas written out for each regime ---- */

static nccl_tune_comm comm_of(int nranks, int nnodes, int compcap, gboolean nvls, double nvlink, double net)
{
  return (nccl_tune_comm){.nranks = nranks, .nnodes = nnodes, .compcap = compcap, .nvls = nvls,
                          .nvlink_bytes_per_s = nvlink, .node_net_bytes_per_s = net};
}

/* 1 MiB across 64 A100 nodes, one GPU each (ppn 1: latencies are the tree's NET ones): the ring's
 * 2(n-1) = 126 network steps lose to the tree's 2 log2(64) = 12. Tree LL128: latency 14.0 + 2 (0 + 6 x
 * 8.5) = 116 us; bandwidth min(25 x 0.92 x 120/128, 16 x 20) x 0.5, times the tree correction of
 * log2(1 MiB / 64) = 14 for LL128, 0.6. */
START_TEST(test_tuner_picks_tree_for_a_small_allreduce_across_many_nodes)
{
  nccl_tune_comm cm = comm_of(64, 64, 80, FALSE, 300e9, 25e9);
  nccl_tune_proto proto;
  ck_assert_int_eq(nccl_tune_choose(&cm, COLL_ALL_REDUCE, MIB_BYTES, &proto), NCCL_TUNE_TREE);
  ck_assert_int_eq(proto, NCCL_TUNE_LL128);
  double bw = MIN(25 * 0.92 * 120.0 / 128.0, 16 * 20.0) * 0.5 * 0.6;
  double want = 14.0 + 2 * (6 * 8.5) + MIB_BYTES / (1000 * bw);
  ck_assert_double_eq_tol(nccl_tune_time_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_TREE, NCCL_TUNE_LL128, MIB_BYTES), want, 1e-3);
  /* the ring, Simple: (8.4 + 126 x 14) x 1.4 (plateau) + S / (25 x 64/126) */
  double ring = (8.4 + 126 * 14.0) * 1.4 + MIB_BYTES / (1000 * 25.0 * 64 / 126);
  ck_assert_double_eq_tol(nccl_tune_time_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_RING, NCCL_TUNE_SIMPLE, MIB_BYTES), ring, 1e-3);
}
END_TEST

/* 1 GiB on 2 A100 nodes of 8 (bus bandwidth: the 8 NICs, 200 GB/s): ring Simple, latency
 * (8.4 + 28 x max(3.4, 2 x 3) + 2 x 14) x 1.4, bandwidth 200 x 16/30; the tree's 200 x 0.92 x 0.5 is slower. */
START_TEST(test_tuner_picks_ring_for_a_large_allreduce_on_few_nodes)
{
  nccl_tune_comm cm = comm_of(16, 2, 80, FALSE, 300e9, 200e9);
  nccl_tune_proto proto;
  ck_assert_int_eq(nccl_tune_choose(&cm, COLL_ALL_REDUCE, GIB_BYTES, &proto), NCCL_TUNE_RING);
  ck_assert_int_eq(proto, NCCL_TUNE_SIMPLE);
  double want = (8.4 + 28 * 6.0 + 2 * 14.0) * 1.4 + GIB_BYTES / (1000 * 200.0 * 16 / 30);
  ck_assert_double_eq_tol(nccl_tune_time_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_RING, NCCL_TUNE_SIMPLE, GIB_BYTES), want, 1e-3);
}
END_TEST

/* 256 MiB inside one H100 node: NVLS (latency 25 us, busBw min(28.125 x 0.85 x 15/16 x 2, 28.125) x 16,
 * x 8/14) beats the ring's Simple (8.4 + 14 x 3.4 us, the same bandwidth). */
START_TEST(test_tuner_picks_nvls_inside_an_nvls_capable_domain)
{
  nccl_tune_comm cm = comm_of(8, 1, 90, TRUE, 450e9, 450e9);
  double S = 256 * MIB_BYTES;
  ck_assert_int_eq(nccl_tune_choose(&cm, COLL_ALL_REDUCE, S, NULL), NCCL_TUNE_NVLS);
  double nvls = 25 + S / (1000 * 450.0 * 8 / 14), ring = 8.4 + 14 * 3.4 + S / (1000 * 450.0 * 8 / 14);
  ck_assert_double_eq_tol(nccl_tune_time_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_NVLS, NCCL_TUNE_SIMPLE, S), nvls, 1e-3);
  ck_assert_double_eq_tol(nccl_tune_time_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_RING, NCCL_TUNE_SIMPLE, S), ring, 1e-3);
}
END_TEST

/* A100 has no NVLink SHARP (NVSwitch gen 2; NCCL's NVLS efficiency for Ampere is 0): never NVLS, at any
 * size, even if a profile claimed it. */
START_TEST(test_tuner_never_picks_nvls_on_a100)
{
  for (int claim = 0; claim < 2; claim++) {
    nccl_tune_comm cm = comm_of(8, 1, 80, claim, 300e9, 300e9);
    for (double b = 1024; b <= GIB_BYTES; b *= 4) ck_assert_int_ne(nccl_tune_choose(&cm, COLL_ALL_REDUCE, b, NULL), NCCL_TUNE_NVLS);
  }
}
END_TEST

/* The replay runs what the tuner chose, and records it: 64 KiB over GPU 0 of 8 A100 nodes is a tree
 * (NCCL: tree LL 6.8 + 2 x 3 x 5.0 us beats the ring's 14 network steps), 256 MiB inside one H100 node
 * is NVLS, 1 GiB over 8 A100 nodes a ring. */
START_TEST(test_replay_runs_and_records_the_tuners_choice)
{
  const struct { coll_case c; const char *want; } cases[] = {
      {one_per_node(8, 64 * 1024, COLL_ALGO_AUTO, COLL_ALL_REDUCE), "dp all-reduce tree x 1"},
      {one_node(8, 256 * MIB_BYTES, COLL_ALGO_AUTO, COLL_ALL_REDUCE), "dp all-reduce nvls x 1"},
      {one_per_node(8, GIB_BYTES, COLL_ALGO_AUTO, COLL_ALL_REDUCE), "dp all-reduce ring x 1"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    coll_case c = cases[i].c;
    if (i == 1) c.profile = "h100-sxm5-80gb";
    double out[SIM_CHILD_MAX];
    sim_child_run(run_coll, &c, out);
    char what[8 * 8];
    memcpy(what, &out[1], sizeof what);
    what[sizeof what - 1] = 0;
    ck_assert_str_eq(what, cases[i].want);
  }
}
END_TEST

/* ---- NCCL's own latency per collective (the stack's nccl_latency "tuned") ---- */

/* tuning.cc's ring latency, written out (Simple, the protocol NCCL runs at these sizes): baseLat 8.4 us, a
 * step over NVLink hwLat 3.4 us, raised inside a multi-node ring to the host's network overhead (AMD, DGX
 * A100: 2 x 3 = 6 us), a step over the network 14 us; the all-reduce's 2(n-1) steps cross nodes 2(nodes-1)
 * times, all-gather's n-1 steps nodes-1 times; the ring's Simple all-reduce across nodes x 1.4. */
START_TEST(test_tuned_ring_latency_is_base_plus_steps_by_link_type)
{
  nccl_tune_comm cm = comm_of(32, 4, 80, FALSE, 300e9, 200e9); /* 4 DGX A100 of 8 */
  nccl_tune_proto proto;
  double ag = nccl_tune_latency_us(&cm, COLL_ALL_GATHER, NCCL_TUNE_RING, GIB_BYTES, &proto);
  ck_assert_int_eq(proto, NCCL_TUNE_SIMPLE);
  ck_assert_double_eq_tol(ag, 8.4 + 28 * 6.0 + 3 * 14.0, 1e-9);
  ck_assert_double_eq_tol(nccl_tune_latency_us(&cm, COLL_ALL_REDUCE, NCCL_TUNE_RING, GIB_BYTES, NULL),
                          (8.4 + 56 * 6.0 + 6 * 14.0) * 1.4, 1e-9);
  /* one node: NVLink steps at 3.4 us, no plateau */
  nccl_tune_comm one = comm_of(8, 1, 80, FALSE, 300e9, 300e9);
  ck_assert_double_eq_tol(nccl_tune_latency_us(&one, COLL_REDUCE_SCATTER, NCCL_TUNE_RING, GIB_BYTES, NULL),
                          8.4 + 7 * 3.4, 1e-9);
  /* Hopper's Intel hosts: the NVLink steps of a multi-node ring at max(3.4, 1 x 3) = 3.4 us */
  nccl_tune_comm h = comm_of(32, 4, 90, FALSE, 450e9, 400e9);
  ck_assert_double_eq_tol(nccl_tune_latency_us(&h, COLL_ALL_GATHER, NCCL_TUNE_RING, GIB_BYTES, NULL),
                          8.4 + 28 * 3.4 + 3 * 14.0, 1e-9);
  /* reduce-scatter and all-gather are ring-only (tree and NVLS: NCCL runs them for all-reduce only) */
  ck_assert_double_eq(nccl_tune_latency_us(&cm, COLL_ALL_GATHER, NCCL_TUNE_TREE, GIB_BYTES, NULL), -1);
  ck_assert_int_eq(nccl_tune_choose(&cm, COLL_REDUCE_SCATTER, 64 * 1024, NULL), NCCL_TUNE_RING);
}
END_TEST

/* The replay charges that latency once per call, in place of the per-step overhead: a 1 GiB all-gather
 * over GPU 0 of 8 A100 nodes takes the pure link model's time plus 8.4 + 7 x 14 us (one GPU per node:
 * every step crosses the network; NCCL's hwLat[NET] of the tree for ppn 1 is 14 us for Simple too). */
START_TEST(test_replay_adds_the_tuned_latency_once_per_call)
{
  coll_case c = one_per_node(8, GIB_BYTES, COLL_ALGO_RING, COLL_ALL_GATHER);
  double plain[SIM_CHILD_MAX], tuned[SIM_CHILD_MAX];
  sim_child_run(run_coll, &c, plain);
  c.tuned = TRUE;
  sim_child_run(run_coll, &c, tuned);
  ck_assert_double_eq_tol(tuned[0] - plain[0], (8.4 + 7 * 14.0) * 1e-6, 1e-9);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll_algo");
  TCase *tc = tcase_create("algorithms");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_ring_allreduce_is_2_n_minus_1_over_n_s_over_b_plus_2_n_minus_1_alpha);
  tcase_add_test(tc, test_tree_allreduce_is_its_busiest_nic_plus_2_log2_d_hops);
  tcase_add_test(tc, test_tree_inside_a_node_is_a_chain_per_channel);
  tcase_add_test(tc, test_nvls_allreduce_is_s_over_b_plus_two_hops);
  tcase_add_test(tc, test_nvls_allreduce_runs_at_nccls_nvls_efficiency);
  tcase_add_test(tc, test_hier_allreduce_is_rs_in_node_plus_ar_across_plus_ag_in_node);
  tcase_add_test(tc, test_alltoall_is_n_minus_1_over_n_s_over_b_plus_one_hop);
  tcase_add_test(tc, test_flex_reach_is_the_mean_distinct_parts_of_a_top_k_set_over_parts);
  tcase_add_test(tc, test_flex_alltoall_sends_a_token_once_per_destination_node);
  tcase_add_test(tc, test_a_forced_algorithm_that_does_not_fit_runs_the_ring);
  tcase_add_test(tc, test_tuner_picks_tree_for_a_small_allreduce_across_many_nodes);
  tcase_add_test(tc, test_tuner_picks_ring_for_a_large_allreduce_on_few_nodes);
  tcase_add_test(tc, test_tuner_picks_nvls_inside_an_nvls_capable_domain);
  tcase_add_test(tc, test_tuner_never_picks_nvls_on_a100);
  tcase_add_test(tc, test_replay_runs_and_records_the_tuners_choice);
  tcase_add_test(tc, test_tuned_ring_latency_is_base_plus_steps_by_link_type);
  tcase_add_test(tc, test_replay_adds_the_tuned_latency_once_per_call);
  tcase_add_test(tc, test_flex_kernels_hold_their_sms_from_the_compute_beside_them);
  suite_add_tcase(s, tc);
  return check_run(s);
}
