/* test_network -- the replay engine's communication against closed forms:
 * point-to-point transfer times (size/bandwidth + latency) inside a node and
 * between nodes, NCCL ring all-reduce (2(n-1)/n S/B + 2(n-1) alpha) inside a
 * node, across nodes, and by symmetry; and whole-step invariants: replaying
 * a saved graph equals simulating the layout, and the symmetric (mirrored)
 * graph equals the fully explicit one; a replay on a platform replay_prepare
 * built beforehand equals one that builds its own, and refuses another. */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <string.h>

#include "analysis/simulate.h"
#include "platforms/cluster.h"
#include "platforms/fabric.h"
#include "platforms/plat_params.h"
#include "sim_child.h"

#define GIB_BYTES 1073741824.0

static gpu_profile test_profile(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &p, NULL));
  p.stack.nccl_step_latency_s = 0; /* pure link model: alpha = route latency */
  p.stack.nccl_bw_efficiency_nvlink = p.stack.nccl_bw_efficiency_ib = 1.0;
  return p;
}

static graph_event comm_event(graph_kind k, int peer, double bytes)
{
  graph_event e = {.kind = (uint8_t)k, .op = GRAPH_OP_COMM, .phase = PH_FORWARD, .peer = peer, .bytes = bytes,
                   .micro_batch = -1, .layer = -1};
  return e;
}

typedef struct p2p_case {
  int world, src, dst;
} p2p_case;

/* The step of one transfer of 1 GiB from rank src to rank dst of `world` ranks on profile p. */
static double p2p_seconds(const gpu_profile *p, int world, int src, int dst)
{
  graph *g = graph_new(world);
  for (int r = 0; r < world; r++) graph_program_of(g, r);
  graph_event s = comm_event(EV_SEND, dst, GIB_BYTES), r = comm_event(EV_RECV, src, GIB_BYTES);
  g_array_append_val(graph_program_of(g, src)->events, s);
  g_array_append_val(graph_program_of(g, dst)->events, r);
  plat_params pp = plat_params_of(p, world);
  replay_result *res = replay_run(g, p, &pp, NULL, NULL);
  double t = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
  return t;
}

static void run_p2p(void *arg, double out[SIM_CHILD_MAX])
{
  p2p_case *c = arg;
  gpu_profile p = test_profile();
  out[0] = p2p_seconds(&p, c->world, c->src, c->dst);
}

START_TEST(test_1gib_nvlink_transfer_is_size_over_bandwidth_plus_latency)
{
  gpu_profile p = test_profile();
  p2p_case c = {8, 0, 5};
  double out[SIM_CHILD_MAX];
  sim_child_run(run_p2p, &c, out);
  double want = GIB_BYTES / 300e9 + 1e-6; /* 300 GB/s per direction, 1 us GPU to GPU */
  ck_assert_double_eq(p.nvlink_bytes_per_s, 300e9);
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

START_TEST(test_1gib_internode_transfer_is_size_over_bandwidth_plus_latency)
{
  gpu_profile p = test_profile();
  p2p_case c = {16, 3, 11}; /* node 0 GPU 3 -> node 1 GPU 3 */
  double out[SIM_CHILD_MAX];
  sim_child_run(run_p2p, &c, out);
  double want = GIB_BYTES / (200e9 / 8) + p.ib_latency_s; /* HDR 200 Gb/s */
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

/* A pipeline send between nodes at the stack's p2p_bw_efficiency_ib (docs/trust.md, "BLOOM's step"): size over the
 * link bandwidth times that efficiency, plus latency; a send within a node keeps NVLink's time. */
static void run_p2p_slow(void *arg, double out[SIM_CHILD_MAX])
{
  p2p_case *c = arg;
  gpu_profile p = test_profile();
  p.stack.p2p_bw_efficiency_ib = 0.25;
  out[0] = p2p_seconds(&p, c->world, c->src, c->dst);
}

START_TEST(test_internode_pipeline_send_runs_at_the_p2p_efficiency)
{
  gpu_profile p = test_profile();
  double out[SIM_CHILD_MAX];
  sim_child_run(run_p2p_slow, &(p2p_case){16, 3, 11}, out);
  double want = GIB_BYTES / (200e9 / 8 * 0.25) + p.ib_latency_s; /* HDR 200 Gb/s at a quarter */
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "%.9f vs %.9f", out[0], want);
  sim_child_run(run_p2p_slow, &(p2p_case){8, 0, 5}, out);
  want = GIB_BYTES / 300e9 + 1e-6; /* within a node: NVLink's, untouched */
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

/* The same transfer on a platform replay_prepare built beforehand (as a pool's family zygote does):
 * out[0] its step time; with `other`, a platform of twice the GPUs was prepared: out[1] = 1 when the
 * replay refused it. */
typedef struct prepared_case {
  p2p_case p2p;
  gboolean other;
} prepared_case;

static void run_p2p_prepared(void *arg, double out[SIM_CHILD_MAX])
{
  prepared_case *c = arg;
  gpu_profile p = test_profile();
  plat_params prep = plat_params_of(&p, c->other ? 2 * c->p2p.world : c->p2p.world);
  ck_assert(replay_prepare(&prep, NULL));
  graph *g = graph_new(c->p2p.world);
  for (int r = 0; r < c->p2p.world; r++) graph_program_of(g, r);
  graph_event s = comm_event(EV_SEND, c->p2p.dst, GIB_BYTES), r = comm_event(EV_RECV, c->p2p.src, GIB_BYTES);
  g_array_append_val(graph_program_of(g, c->p2p.src)->events, s);
  g_array_append_val(graph_program_of(g, c->p2p.dst)->events, r);
  plat_params pp = plat_params_of(&p, c->p2p.world);
  GError *err = NULL;
  replay_result *res = replay_run(g, &p, &pp, NULL, &err);
  out[0] = res ? res->step_time_s : -1;
  out[1] = !res && err && strstr(err->message, "the prepared platform is not this replay's");
  replay_result_free(res);
  g_clear_error(&err);
  graph_free(g);
}

START_TEST(test_a_replay_on_a_prepared_platform_equals_one_that_builds_its_own)
{
  gpu_profile p = test_profile();
  prepared_case c = {.p2p = {16, 3, 11}};
  double fresh[SIM_CHILD_MAX], prepared[SIM_CHILD_MAX];
  sim_child_run(run_p2p, &c.p2p, fresh);
  sim_child_run(run_p2p_prepared, &c, prepared);
  double want = GIB_BYTES / (200e9 / 8) + p.ib_latency_s; /* node 0 GPU 3 -> node 1 GPU 3, HDR 200 Gb/s */
  ck_assert_msg(fabs(prepared[0] - want) <= 1e-3 * want, "%.9f vs %.9f", prepared[0], want);
  ck_assert_double_eq(prepared[0], fresh[0]); /* the same platform: bit for bit */
}
END_TEST

START_TEST(test_a_replay_refuses_a_prepared_platform_that_is_not_its_own)
{
  prepared_case c = {.p2p = {16, 3, 11}, .other = TRUE};
  double out[SIM_CHILD_MAX];
  sim_child_run(run_p2p_prepared, &c, out);
  ck_assert_double_eq(out[0], -1);
  ck_assert_double_eq(out[1], 1);
}
END_TEST

typedef struct ring_case {
  int world;
  int members[64];
  int n;
  gboolean symmetric; /* one explicit member, the others mirrors that never wake */
  double bytes;
  double leaf_nodes, oversubscription; /* the fabric; 0: the profile's */
} ring_case;

static void run_ring(void *arg, double out[SIM_CHILD_MAX])
{
  ring_case *c = arg;
  gpu_profile p = test_profile();
  if (c->leaf_nodes > 0) p.leaf_nodes = c->leaf_nodes;
  if (c->oversubscription > 0) p.oversubscription = c->oversubscription;
  graph *g = graph_new(c->world);
  for (int r = 0; r < c->world; r++) graph_program_of(g, r);
  int gid = graph_add_group(g, c->members, c->n, "dp");
  graph_event e = comm_event(EV_COLLECTIVE, gid, c->bytes);
  e.variant = COLL_ALL_REDUCE;
  g_array_append_val(graph_program_of(g, c->members[0])->events, e);
  for (int i = 1; i < c->n; i++) {
    if (c->symmetric) graph_make_mirror(g, c->members[i], c->members[0], 1);
    else g_array_append_val(graph_program_of(g, c->members[i])->events, e);
  }
  GError *err = NULL;
  ck_assert(graph_check(g, &err));
  plat_params pp = plat_params_of(&p, c->world);
  replay_result *res = replay_run(g, &p, &pp, NULL, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

static double ring_formula(int n, double bytes, double bw, double alpha)
{
  return 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * alpha;
}

START_TEST(test_ring_allreduce_8_gpus_one_node_matches_alpha_beta_within_half_percent)
{
  for (int sym = 0; sym < 2; sym++) {
    ring_case c = {.world = 8, .n = 8, .symmetric = sym, .bytes = GIB_BYTES};
    for (int i = 0; i < 8; i++) c.members[i] = i;
    double out[SIM_CHILD_MAX];
    sim_child_run(run_ring, &c, out);
    double want = ring_formula(8, GIB_BYTES, 300e9, 1e-6);
    ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "sym %d: %.9f vs %.9f", sym, out[0], want);
  }
}
END_TEST

START_TEST(test_ring_allreduce_8_nodes_matches_alpha_beta_within_half_percent)
{
  gpu_profile p = test_profile();
  for (int sym = 0; sym < 2; sym++) {
    ring_case c = {.world = 64, .n = 8, .symmetric = sym, .bytes = GIB_BYTES};
    for (int i = 0; i < 8; i++) c.members[i] = 8 * i; /* GPU 0 of each node */
    double out[SIM_CHILD_MAX];
    sim_child_run(run_ring, &c, out);
    double want = ring_formula(8, GIB_BYTES, 25e9, p.ib_latency_s);
    ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "sym %d: %.9f vs %.9f", sym, out[0], want);
  }
}
END_TEST

START_TEST(test_64_gpu_allreduce_uses_all_8_nics_through_channels)
{
  /* NCCL on DGX runs one ring per NIC: each ring carries S/8 through one NIC pair per node,
   * so the time is the 64-member ring formula with 8x the NIC bandwidth. */
  gpu_profile p = test_profile();
  ring_case c = {.world = 64, .n = 64, .symmetric = FALSE, .bytes = GIB_BYTES};
  for (int i = 0; i < 64; i++) c.members[i] = i;
  double out[SIM_CHILD_MAX];
  sim_child_run(run_ring, &c, out);
  double want = 2.0 * 63 / 64 * GIB_BYTES / (8 * 25e9) + p.ib_latency_s + (2 * 63 - 1) * p.ib_latency_s;
  ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

/* ---- a platform file of the user's ---- */

/* Two hosts under the naming convention, one shared link of 10 GB/s and 3 us between them. */
static const char BUS_XML[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
    "<host id=\"n0_g0\" speed=\"1e12\"/><host id=\"n0_g1\" speed=\"1e12\"/>"
    "<link id=\"bus\" bandwidth=\"10GBps\" latency=\"3us\"/>"
    "<route src=\"n0_g0\" dst=\"n0_g1\"><link_ctn id=\"bus\"/></route></zone></platform>\n";

static void run_file_p2p(void *arg, double out[SIM_CHILD_MAX])
{
  gpu_profile p = test_profile();
  graph *g = graph_new(2);
  for (int r = 0; r < 2; r++) graph_program_of(g, r);
  graph_event s = comm_event(EV_SEND, 1, GIB_BYTES), r = comm_event(EV_RECV, 0, GIB_BYTES);
  g_array_append_val(graph_program_of(g, 0)->events, s);
  g_array_append_val(graph_program_of(g, 1)->events, r);
  replay_options o = {.platform_file = arg};
  plat_params pp = plat_params_of(&p, 2);
  replay_result *res = replay_run(g, &p, &pp, &o, NULL);
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

START_TEST(test_a_platform_file_carries_the_transfer)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("layoutsim-test-bus-XXXXXX.xml", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, BUS_XML, -1, NULL));
  char why[400];
  ck_assert_msg(plat_file_check(path, 8, 2, why, sizeof why), "%s", why);
  ck_assert(!plat_file_check(path, 8, 3, why, sizeof why)); /* rank 2 would be n0_g2 */
  ck_assert_str_eq(why, "no host 'n0_g2' for rank 2");
  double out[SIM_CHILD_MAX];
  sim_child_run(run_file_p2p, path, out);
  double want = GIB_BYTES / 10e9 + 3e-6; /* the file's link, not the profile's NVLink */
  unlink(path);
  ck_assert_msg(fabs(out[0] - want) <= 1e-6 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

/* ---- fabrics: leaf groups under oversubscribed uplinks ---- */

/* The 8 GPUs of node 0 each send 1 GiB to their peer on node 1, in another leaf group (leaf_nodes 1):
 * the group's uplink carries 8 NICs' worth over the oversubscription R, so each flow gets 1/R of a NIC. */
static void run_eight_flows(void *arg, double out[SIM_CHILD_MAX])
{
  double R = *(double *)arg;
  gpu_profile p = test_profile();
  p.leaf_nodes = 1;
  p.oversubscription = R;
  graph *g = graph_new(16);
  for (int r = 0; r < 16; r++) graph_program_of(g, r);
  for (int r = 0; r < 8; r++) {
    graph_event s = comm_event(EV_SEND, r + 8, GIB_BYTES), v = comm_event(EV_RECV, r, GIB_BYTES);
    g_array_append_val(graph_program_of(g, r)->events, s);
    g_array_append_val(graph_program_of(g, r + 8)->events, v);
  }
  plat_params pp = plat_params_of(&p, 16);
  replay_result *res = replay_run(g, &p, &pp, NULL, NULL);
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

START_TEST(test_flows_across_an_oversubscribed_uplink_share_it)
{
  gpu_profile p = test_profile();
  const double ratios[] = {1, 2, 4};
  for (size_t i = 0; i < G_N_ELEMENTS(ratios); i++) {
    double R = ratios[i], out[SIM_CHILD_MAX];
    sim_child_run(run_eight_flows, &R, out);
    double want = GIB_BYTES / (25e9 / R) + p.ib_latency_s; /* the bottleneck: uplink 8 * 25 GB/s / R over 8 flows */
    ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "R %g: %.9f vs %.9f", R, out[0], want);
  }
}
END_TEST

/* A ring of GPU 0 of 8 nodes in two leaf groups of 4: two of its flows cross, one each way, each through
 * an uplink of 4 nodes * 8 NICs * 25 GB/s / R; at R = 64 that is 12.5 GB/s, half a NIC, and the ring
 * runs at the bottleneck link's bandwidth. At R = 8 the uplink (100 GB/s) is no bottleneck. */
START_TEST(test_ring_allreduce_across_leaf_groups_runs_at_the_bottleneck)
{
  gpu_profile p = test_profile();
  const struct { double R, bw; } cases[] = {{64, 12.5e9}, {8, 25e9}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ring_case c = {.world = 64, .n = 8, .bytes = GIB_BYTES, .leaf_nodes = 4, .oversubscription = cases[i].R};
    for (int k = 0; k < 8; k++) c.members[k] = 8 * k;
    double out[SIM_CHILD_MAX];
    sim_child_run(run_ring, &c, out);
    double want = ring_formula(8, GIB_BYTES, cases[i].bw, p.ib_latency_s);
    ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "R %g: %.9f vs %.9f", cases[i].R, out[0], want);
  }
}
END_TEST

/* ---- fabrics: rail-optimized leaves ---- */

typedef struct rail_case {
  int fabric, world, src, dst;
  double oversubscription;
} rail_case;

/* One transfer of 1 GiB from rank src to rank dst on a rail fabric. */
static void run_rail_p2p(void *arg, double out[SIM_CHILD_MAX])
{
  rail_case *c = arg;
  gpu_profile p = test_profile();
  p.fabric = c->fabric;
  p.oversubscription = c->oversubscription;
  out[0] = p2p_seconds(&p, c->world, c->src, c->dst);
}

/* Two nodes, R = 4: a rail leaf holds one NIC of each node, so its uplink is 2 * 25 GB/s / 4 = 12.5 GB/s.
 * GPU 3 to GPU 3 stays on rail 3 (NIC up, NIC down): alpha_ib + B / beta_nic, the uplink unused.
 * GPU 3 to GPU 5 (fabric rail) climbs rail 3's uplink and descends rail 5's: alpha_ib + B / min(25, 12.5) GB/s.
 * GPU 3 to GPU 5 (rail-pxn) goes over NVLink to GPU 5 of node 0, then rail 5: alpha_nvl + alpha_ib +
 * B / min(300, 25) GB/s, whatever R. */
START_TEST(test_rail_transfers_take_the_bottleneck_of_their_route)
{
  gpu_profile p = test_profile();
  double R = 4, nic = 25e9, uplink = 2 * nic / R;
  const struct { rail_case c; double want; const char *what; } cases[] = {
      {{FABRIC_RAIL, 16, 3, 11, R}, GIB_BYTES / nic + p.ib_latency_s, "same rail"},
      {{FABRIC_RAIL, 16, 3, 13, R}, GIB_BYTES / MIN(nic, uplink) + p.ib_latency_s, "cross rail, spine"},
      {{FABRIC_RAIL_PXN, 16, 3, 13, R}, GIB_BYTES / MIN(300e9, nic) + p.nvlink_latency_s + p.ib_latency_s, "cross rail, pxn"},
      {{FABRIC_RAIL, 16, 3, 5, R}, GIB_BYTES / 300e9 + p.nvlink_latency_s, "same node"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double out[SIM_CHILD_MAX];
    rail_case c = cases[i].c;
    sim_child_run(run_rail_p2p, &c, out);
    ck_assert_msg(fabs(out[0] - cases[i].want) <= 1e-3 * cases[i].want, "%s: %.9f vs %.9f", cases[i].what, out[0],
                  cases[i].want);
  }
}
END_TEST

typedef struct rail_ring_case {
  int fabric;
  gboolean diagonal; /* member k is GPU k of node k (every hop changes rail), else GPU 0 of node k */
  double oversubscription;
} rail_ring_case;

/* A ring all-reduce of 1 GiB over 8 members on 8 nodes (64 GPUs), every member active. */
static void run_rail_ring(void *arg, double out[SIM_CHILD_MAX])
{
  rail_ring_case *c = arg;
  gpu_profile p = test_profile();
  p.fabric = c->fabric;
  p.oversubscription = c->oversubscription;
  graph *g = graph_new(64);
  for (int r = 0; r < 64; r++) graph_program_of(g, r);
  int members[8];
  for (int k = 0; k < 8; k++) members[k] = 8 * k + (c->diagonal ? k : 0);
  int gid = graph_add_group(g, members, 8, "dp");
  graph_event e = comm_event(EV_COLLECTIVE, gid, GIB_BYTES);
  e.variant = COLL_ALL_REDUCE;
  for (int k = 0; k < 8; k++) g_array_append_val(graph_program_of(g, members[k])->events, e);
  plat_params pp = plat_params_of(&p, 64);
  GError *err = NULL;
  replay_result *res = replay_run(g, &p, &pp, NULL, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

/* The ring of GPU 0 of 8 nodes (a data-parallel group at tp 8) stays on rail 0: 2(n-1)/n B / beta_nic +
 * 2(n-1) alpha_ib at any R. The diagonal ring (GPU k of node k) changes rail at every hop: each hop climbs
 * one leaf's uplink (8 nodes * 25 GB/s / R, one flow) and descends another's, so at R = 16 (12.5 GB/s) it
 * runs at the uplink's bandwidth, at R = 1 (200 GB/s) at the NIC's; with PXN each hop is NVLink then the
 * destination's rail, 25 GB/s and alpha_nvl + alpha_ib a hop, at any R. */
START_TEST(test_oversubscription_slows_a_cross_rail_ring_not_a_same_rail_ring)
{
  gpu_profile p = test_profile();
  double a_ib = p.ib_latency_s, a_pxn = p.nvlink_latency_s + p.ib_latency_s;
  const struct { rail_ring_case c; double bw, alpha; const char *what; } cases[] = {
      {{FABRIC_RAIL, FALSE, 16}, 25e9, a_ib, "same rail, R 16"},
      {{FABRIC_RAIL, FALSE, 1}, 25e9, a_ib, "same rail, R 1"},
      {{FABRIC_RAIL, TRUE, 16}, 8 * 25e9 / 16, a_ib, "cross rail, R 16"},
      {{FABRIC_RAIL, TRUE, 1}, MIN(25e9, 8 * 25e9 / 1), a_ib, "cross rail, R 1"},
      {{FABRIC_RAIL_PXN, TRUE, 16}, 25e9, a_pxn, "cross rail with pxn, R 16"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double out[SIM_CHILD_MAX];
    rail_ring_case c = cases[i].c;
    sim_child_run(run_rail_ring, &c, out);
    double want = ring_formula(8, GIB_BYTES, cases[i].bw, cases[i].alpha);
    ck_assert_msg(fabs(out[0] - want) <= 5e-3 * want, "%s: %.9f vs %.9f", cases[i].what, out[0], want);
  }
}
END_TEST

/* ---- whole steps ---- */

typedef struct step_case {
  const char *graph_path; /* when set: replay this file */
  gboolean symmetry;
  int tp, gpus, pp;       /* when tp is set: the layout's tp, gpus and pp instead of small_request's */
} step_case;

static sim_request small_request(void)
{
  sim_request rq;
  memset(&rq, 0, sizeof rq);
  ck_assert(model_load_named("llama-7b", &rq.m, NULL));
  rq.m.layers = 8;
  rq.l = layout_default();
  rq.l.gpus = 16;
  rq.l.tp = 2;
  rq.l.pp = 2;
  rq.l.global_batch = 16;
  rq.l.seq_len = 1024;
  rq.gen = gen_default_options();
  rq.prof = test_profile();
  rq.capacity_gib = 80;
  return rq;
}

static void run_step(void *arg, double out[SIM_CHILD_MAX])
{
  step_case *c = arg;
  sim_request rq = small_request();
  rq.gen.symmetry = c->symmetry;
  if (c->tp) {
    rq.l.tp = c->tp;
    rq.l.gpus = c->gpus;
    rq.l.pp = c->pp;
  }
  sim_outcome o = {0};
  GError *err = NULL;
  gboolean ok;
  if (c->graph_path) {
    graph *g = graph_load(c->graph_path, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    ok = sim_run_graph(g, &rq.prof, 80, NULL, &o, &err);
  } else {
    ok = sim_run_layout(&rq, &o, &err);
  }
  ck_assert_msg(ok, "%s", err ? err->message : "");
  out[0] = o.met->step_time_s;
  out[1] = o.met->mfu;
  out[2] = o.met->bubble_fraction;
  out[3] = o.met->mem_peak_bytes;
  sim_outcome_clear(&o);
}

START_TEST(test_replay_of_saved_graph_equals_simulate)
{
  sim_request rq = small_request();
  ck_assert(layout_validate(&rq.l, &rq.m, NULL));
  g_autoptr(graph) g = gen_graph(&rq.m, &rq.l, &rq.gen, NULL);
  g_autofree char *path = NULL; /* a unique name: concurrent test runs do not clobber each other */
  int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(graph_save(g, path, NULL));
  step_case direct = {.symmetry = TRUE}, replayed = {.graph_path = path, .symmetry = TRUE};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_step, &direct, a);
  sim_child_run(run_step, &replayed, b);
  unlink(path);
  ck_assert(a[0] > 0);
  for (int i = 0; i < 4; i++) ck_assert_msg(a[i] == b[i], "value %d: %.17g vs %.17g", i, a[i], b[i]);
}
END_TEST

START_TEST(test_symmetric_graph_equals_fully_explicit_graph)
{
  step_case sym = {.symmetry = TRUE}, full = {.symmetry = FALSE};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_step, &sym, a);
  sim_child_run(run_step, &full, b);
  for (int i = 0; i < 4; i++)
    ck_assert_msg(fabs(a[i] - b[i]) <= 1e-9 * fabs(b[i]), "value %d: %.17g vs %.17g", i, a[i], b[i]);
}
END_TEST

START_TEST(test_prepare_turns_symmetry_off_under_oversubscribed_uplinks)
{
  sim_request rq = small_request(); /* 16 GPUs: 2 nodes */
  rq.prof.leaf_nodes = 1;
  rq.prof.oversubscription = 2;
  ck_assert(sim_request_prepare(&rq, NULL));
  ck_assert(!rq.gen.symmetry);
  rq = small_request();
  rq.prof.leaf_nodes = 2; /* both nodes under one leaf: no uplink */
  rq.prof.oversubscription = 2;
  ck_assert(sim_request_prepare(&rq, NULL));
  ck_assert(rq.gen.symmetry);
}
END_TEST

/* Rail leaves have uplinks as soon as there are two nodes: oversubscribed, mirrors would hide their sharing. */
START_TEST(test_prepare_turns_symmetry_off_under_oversubscribed_rail_leaves)
{
  sim_request rq = small_request(); /* 16 GPUs: 2 nodes, one stripe (leaf_nodes 0) */
  rq.prof.fabric = FABRIC_RAIL;
  rq.prof.oversubscription = 2;
  ck_assert(sim_request_prepare(&rq, NULL));
  ck_assert(!rq.gen.symmetry);
  rq = small_request();
  rq.prof.fabric = FABRIC_RAIL_PXN;
  rq.prof.oversubscription = 1; /* non-blocking leaves */
  ck_assert(sim_request_prepare(&rq, NULL));
  ck_assert(rq.gen.symmetry);
}
END_TEST

START_TEST(test_prepare_turns_symmetry_off_where_gpus_share_nics)
{
  sim_request rq = small_request();
  ck_assert(sim_request_prepare(&rq, NULL) && rq.gen.symmetry);
  rq.prof.nics_per_node = 2; /* 4 GPUs per NIC: mirrors would hide the contention */
  ck_assert(sim_request_prepare(&rq, NULL));
  ck_assert(!rq.gen.symmetry);
}
END_TEST

START_TEST(test_replay_refuses_a_mirrored_graph_where_gpus_share_nics)
{
  sim_request rq = small_request();
  ck_assert(sim_request_prepare(&rq, NULL) && rq.gen.symmetry);
  graph *g = gen_graph(&rq.m, &rq.l, &rq.gen, NULL); /* mirrored: one NIC per GPU assumed */
  rq.prof.nics_per_node = 2;
  sim_outcome o = {0};
  GError *err = NULL;
  ck_assert(!sim_run_graph(g, &rq.prof, 80, NULL, &o, &err)); /* refused before SimGrid starts */
  ck_assert_msg(g_str_has_prefix(err->message, "nics_per_node: 4 GPUs share a NIC"), "%s", err->message);
  g_error_free(err);
  sim_outcome_clear(&o);
}
END_TEST

/* A tensor-parallel group fills part of one node or whole nodes; anything else splits a node between groups. */
START_TEST(test_prepare_takes_tp_groups_of_whole_nodes)
{
  sim_request rq = small_request();
  rq.prof.gpus_per_node = 4;
  rq.prof.nics_per_node = 4;
  rq.l.tp = 8; /* two whole nodes */
  rq.l.pp = 1;
  GError *err = NULL;
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  rq.prof.gpus_per_node = rq.prof.nics_per_node = 16; /* a fraction of one: 16 % 8 */
  ck_assert(sim_request_prepare(&rq, &err));
  rq.prof.gpus_per_node = rq.prof.nics_per_node = 6; /* neither */
  rq.l.gpus = 48;
  rq.l.global_batch = 48;
  ck_assert(!sim_request_prepare(&rq, &err));
  ck_assert_msg(g_str_has_prefix(err->message, "tp: 8 neither fits whole hosts of the 6-GPU NVLink domain"), "%s",
                err->message);
  ck_assert_msg(strstr(err->message, "allowed for llama-7b up to 48: 1, 2)"), "%s", err->message);
  g_error_free(err);
}
END_TEST

/* tp 16 over two 8-GPU nodes: its rings cross the NICs, and mirroring the second replica gives what
 * simulating every rank gives. */
START_TEST(test_symmetric_graph_equals_explicit_with_tp_across_nodes)
{
  step_case sym = {.symmetry = TRUE, .tp = 16, .gpus = 32, .pp = 1}, full = {.tp = 16, .gpus = 32, .pp = 1},
            in_node = {.symmetry = TRUE, .tp = 8, .gpus = 32, .pp = 2};
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX], c[SIM_CHILD_MAX];
  sim_child_run(run_step, &sym, a);
  sim_child_run(run_step, &full, b);
  sim_child_run(run_step, &in_node, c);
  for (int i = 0; i < 4; i++)
    ck_assert_msg(fabs(a[i] - b[i]) <= 1e-9 * fabs(b[i]), "value %d: %.17g vs %.17g", i, a[i], b[i]);
  ck_assert_msg(a[0] > c[0], "tp 16 across nodes %.6f s, tp 8 pp 2 in nodes %.6f s", a[0], c[0]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("network");
  TCase *tc = tcase_create("transfers");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_1gib_nvlink_transfer_is_size_over_bandwidth_plus_latency);
  tcase_add_test(tc, test_prepare_turns_symmetry_off_where_gpus_share_nics);
  tcase_add_test(tc, test_prepare_takes_tp_groups_of_whole_nodes);
  tcase_add_test(tc, test_symmetric_graph_equals_explicit_with_tp_across_nodes);
  tcase_add_test(tc, test_replay_refuses_a_mirrored_graph_where_gpus_share_nics);
  tcase_add_test(tc, test_1gib_internode_transfer_is_size_over_bandwidth_plus_latency);
  tcase_add_test(tc, test_internode_pipeline_send_runs_at_the_p2p_efficiency);
  tcase_add_test(tc, test_a_replay_on_a_prepared_platform_equals_one_that_builds_its_own);
  tcase_add_test(tc, test_a_replay_refuses_a_prepared_platform_that_is_not_its_own);
  tcase_add_test(tc, test_ring_allreduce_8_gpus_one_node_matches_alpha_beta_within_half_percent);
  tcase_add_test(tc, test_ring_allreduce_8_nodes_matches_alpha_beta_within_half_percent);
  tcase_add_test(tc, test_64_gpu_allreduce_uses_all_8_nics_through_channels);
  tcase_add_test(tc, test_flows_across_an_oversubscribed_uplink_share_it);
  tcase_add_test(tc, test_a_platform_file_carries_the_transfer);
  tcase_add_test(tc, test_ring_allreduce_across_leaf_groups_runs_at_the_bottleneck);
  tcase_add_test(tc, test_prepare_turns_symmetry_off_under_oversubscribed_uplinks);
  tcase_add_test(tc, test_rail_transfers_take_the_bottleneck_of_their_route);
  tcase_add_test(tc, test_oversubscription_slows_a_cross_rail_ring_not_a_same_rail_ring);
  tcase_add_test(tc, test_prepare_turns_symmetry_off_under_oversubscribed_rail_leaves);
  tcase_add_test(tc, test_replay_of_saved_graph_equals_simulate);
  tcase_add_test(tc, test_symmetric_graph_equals_fully_explicit_graph);
  suite_add_tcase(s, tc);
  return check_run(s);
}
