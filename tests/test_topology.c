/* test_topology -- the machine as levels (platforms/topology.h): an NVLink domain larger than a host
 * (GB200 NVL72: 72 GPUs, hosts of 4) keeps tensor-parallel groups of 16 and 32 inside one domain, a
 * route between two GPUs of one domain on different hosts uses NVLink only (SimGrid's route and a
 * 1 GiB transfer's time), the sweep on 576 GB200 lists tp 16 and 32, and the Paje writer draws the
 * network SimGrid builds: rail leaves and a spine on a rail fabric, a core on a fat-tree. */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdio.h>
#include <string.h>
#include <xbt/dynar.h>

#include "analysis/simulate.h"
#include "platforms/cluster.h"
#include "platforms/fabric.h"
#include "platforms/plat_params.h"
#include "platforms/topology.h"
#include "workloads/precision.h"
#include "sim/replay.h"
#include "sim_child.h"
#include "traces/paje.h"

#define GIB_BYTES 1073741824.0

static gpu_profile gb200(void)
{
  gpu_profile p;
  GError *err = NULL;
  if (!profile_load_with_stack("gb200-nvl72", "study", &p, &err)) ck_abort_msg("%s", err->message);
  return p;
}

static sim_request gb200_request(int gpus, int tp, int pp)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-65b", &rq.m, &err)); /* 64 heads, 64 kv heads, vocab 32000 */
  rq.prof = gb200();
  rq.l = layout_default();
  rq.l.gpus = gpus;
  rq.l.tp = tp;
  rq.l.pp = pp;
  rq.l.micro_batch = 1;
  rq.l.global_batch = 2 * gpus / (tp * pp);
  rq.gen = gen_default_options();
  rq.capacity_gib = rq.prof.memory_gib;
  return rq;
}

/* The shipped profile: 72 GPUs per domain, 4 per host, a NIC each. */
START_TEST(test_gb200_profile_is_a_72_gpu_domain_of_4_gpu_hosts)
{
  gpu_profile p = gb200();
  ck_assert_int_eq(p.gpus_per_domain, 72);
  ck_assert_int_eq(p.gpus_per_node, 4);
  ck_assert_int_eq(p.nics_per_node, 4);
  /* its FP8 GEMM scale fitted on fp8-cs and mxfp8 rows; bf16 only transferred from b200: docs/blackwell.md */
  ck_assert(profile_calibrated_for(&p, PREC_MXFP8) && !profile_calibrated_for(&p, PREC_BF16) &&
            p.fp8_gemm_efficiency_scale < 1);
  ck_assert_double_eq(p.nvlink_bytes_per_s, 900e9); /* NVLink 5: 1.8 TB/s per GPU, both ways */
  plat_params pp = plat_params_of(&p, 144);
  ck_assert_int_eq(topo_hosts_per_domain(&pp), 18);
  ck_assert_int_eq(topo_domains(&pp), 2);
}
END_TEST

/* Every tp group of a tp 16 and a tp 32 layout on 128 GB200 lies in one domain: 72 // 16 * 16 = 64
 * GPUs of each domain hold 4 (tp 16) or 2 (tp 32) whole groups, domain = rank / 64. */
START_TEST(test_gb200_tp_groups_never_leave_their_nvlink_domain)
{
  const int tps[] = {16, 32};
  for (size_t i = 0; i < G_N_ELEMENTS(tps); i++) {
    sim_request rq = gb200_request(128, tps[i], 2);
    GError *err = NULL;
    if (!sim_request_prepare(&rq, &err)) ck_abort_msg("tp %d: %s", tps[i], err->message);
    ck_assert_int_eq(rq.prof.gpus_per_domain, 64);
    graph *g = gen_graph(&rq.m, &rq.l, &rq.gen, &err);
    ck_assert_msg(g, "%s", err ? err->message : "");
    plat_params pp = plat_params_of(&rq.prof, g->world_size);
    int tp_groups = 0;
    for (guint gi = 0; gi < g->groups->len; gi++) {
      const graph_group *gr = g_ptr_array_index(g->groups, gi);
      if (strcmp(gr->label, "tp")) continue;
      tp_groups++;
      ck_assert_int_eq((int)gr->ranks->len, tps[i]);
      int r0 = g_array_index(gr->ranks, int, 0);
      for (guint k = 0; k < gr->ranks->len; k++) {
        int r = g_array_index(gr->ranks, int, k);
        ck_assert_msg(r / 64 == r0 / 64, "tp %d: ranks %d and %d in different domains", tps[i], r0, r);
        ck_assert_int_eq(topo_domain_of(&pp, r), r / 64);
      }
    }
    ck_assert_int_gt(tp_groups, 0);
    graph_free(g);
  }
}
END_TEST

/* tp 16 and 32 simulate; tp 5 (no whole hosts of 4 hold whole groups of 5 within 72... 20 does: 60) and a
 * tp larger than the domain that is not whole domains are refused or placed as the rule says. */
START_TEST(test_gb200_domain_use_follows_whole_hosts_of_whole_groups)
{
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 8), 72);
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 16), 64);
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 32), 64);
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 64), 64);
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 24), 72);
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 144), 72); /* whole domains */
  ck_assert_int_eq(sim_domain_gpus_used(72, 4, 128), 0);
  ck_assert_int_eq(sim_domain_gpus_used(8, 8, 16), 8);    /* an HGX board: as before, parts or whole nodes */
  ck_assert_int_eq(sim_domain_gpus_used(8, 8, 3), 0);
}
END_TEST

typedef struct route_case {
  int fabric, world, src, dst;
} route_case;

/* In the child: SimGrid's route from src to dst: out[0] NVLink links, out[1] NIC links, out[2] others. */
static void run_route(void *arg, double out[SIM_CHILD_MAX])
{
  route_case *c = arg;
  gpu_profile p = gb200();
  p.fabric = c->fabric;
  plat_params pp = plat_params_of(&p, c->world);
  ck_assert(replay_prepare(&pp, NULL));
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(plat_host(&pp, c->src), plat_host(&pp, c->dst), links);
  unsigned i;
  sg_link_t l;
  xbt_dynar_foreach (links, i, l) {
    const char *n = sg_link_get_name(l);
    out[g_str_has_prefix(n, "nvl_") ? 0 : g_str_has_prefix(n, "nic_") ? 1 : 2] += 1;
  }
  xbt_dynar_free(&links);
}

/* GPU 0 (host 0) and GPU 40 (host 10) of one domain: two NVLink links, no NIC, on both fabrics; GPU 0
 * and GPU 72 (the next domain): two NICs. */
START_TEST(test_gb200_route_inside_a_domain_across_hosts_uses_no_nic)
{
  const int fabrics[] = {FABRIC_FAT_TREE, FABRIC_RAIL};
  for (size_t i = 0; i < G_N_ELEMENTS(fabrics); i++) {
    double out[SIM_CHILD_MAX];
    route_case in = {fabrics[i], 144, 0, 40}, across = {fabrics[i], 144, 0, 72};
    sim_child_run(run_route, &in, out);
    ck_assert_msg(out[0] == 2 && out[1] == 0 && out[2] == 0, "%s, 0 -> 40: %g nvl, %g nic, %g other",
                  fabric_name(fabrics[i]), out[0], out[1], out[2]);
    sim_child_run(run_route, &across, out);
    ck_assert_msg(out[0] == 0 && out[1] == 2, "%s, 0 -> 72: %g nvl, %g nic", fabric_name(fabrics[i]), out[0], out[1]);
  }
}
END_TEST

static void run_p2p(void *arg, double out[SIM_CHILD_MAX])
{
  route_case *c = arg;
  gpu_profile p = gb200();
  p.stack.nccl_bw_efficiency_nvlink = p.stack.nccl_bw_efficiency_ib = 1.0;
  graph *g = graph_new(c->world);
  for (int r = 0; r < c->world; r++) graph_program_of(g, r);
  graph_event s = {.kind = EV_SEND, .op = GRAPH_OP_COMM, .phase = PH_FORWARD, .peer = c->dst, .bytes = GIB_BYTES,
                   .micro_batch = -1, .layer = -1};
  graph_event r = s;
  r.kind = EV_RECV;
  r.peer = c->src;
  g_array_append_val(graph_program_of(g, c->src)->events, s);
  g_array_append_val(graph_program_of(g, c->dst)->events, r);
  plat_params pp = plat_params_of(&p, c->world);
  replay_result *res = replay_run(g, &p, &pp, NULL, NULL);
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

/* 1 GiB from GPU 0 to GPU 40 takes 1 GiB / 900 GB/s + the NVLink latency (1 us), not the NIC's 50 GB/s. */
START_TEST(test_gb200_transfer_inside_a_domain_runs_at_nvlink_speed)
{
  double out[SIM_CHILD_MAX];
  route_case c = {FABRIC_FAT_TREE, 144, 0, 40};
  sim_child_run(run_p2p, &c, out);
  double want = GIB_BYTES / 900e9 + 1e-6;
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "%.9f vs %.9f", out[0], want);
  route_case x = {FABRIC_FAT_TREE, 144, 0, 72};
  sim_child_run(run_p2p, &x, out);
  want = GIB_BYTES / 50e9 + 2e-6; /* ConnectX-7 400 Gb/s, the IB latency */
  ck_assert_msg(fabs(out[0] - want) <= 1e-3 * want, "across domains: %.9f vs %.9f", out[0], want);
}
END_TEST

/* A tp 16 layout on 128 GB200 simulates to a positive step. */
static void run_tp16(void *arg, double out[SIM_CHILD_MAX])
{
  (void)arg;
  sim_request rq = gb200_request(128, 16, 2);
  sim_outcome o = {0};
  GError *err = NULL;
  if (!sim_run_layout(&rq, &o, &err)) ck_abort_msg("%s", err->message);
  out[0] = o.res->step_time_s;
  sim_outcome_clear(&o);
}

START_TEST(test_gb200_tp16_layout_simulates)
{
  double out[SIM_CHILD_MAX];
  sim_child_run(run_tp16, NULL, out);
  ck_assert(out[0] > 0 && isfinite(out[0]));
}
END_TEST

/* The sweep's default tp list on 576 GB200 reaches into the domain: 16 and 32 are listed (llama-65b's
 * 64 heads and kv heads allow them) and valid at pp 2 (576 / (16 * 2) = 18 and 576 / (32 * 2) = 9 data-parallel
 * replicas): their rows have status ok. */
START_TEST(test_sweep_on_576_gb200_lists_tp16_and_tp32)
{
  const char *exe = g_getenv("LAYOUTSIM");
  if (!exe) return;
  char *argv[] = {(char *)exe, "sweep", "--profile", "gb200-nvl72", "--gpus", "576", "--model", "llama-65b", "--pp",
                  "2", "--micro-batch", "1", "--global-batch", "1152", "--attention-kernel", "flash2",
                  "--checkpointing", "every_layer", "--sp", "1", "--format", "csv", NULL};
  char *out = NULL;
  int status;
  GError *err = NULL;
  ck_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, &err));
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "%s", out);
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  g_auto(GStrv) head = g_strsplit(lines[0], ",", -1);
  int tp_col = -1, status_col = -1;
  for (int i = 0; head[i]; i++) {
    if (!strcmp(head[i], "tp")) tp_col = i;
    if (!strcmp(head[i], "status")) status_col = i;
  }
  ck_assert_int_ge(tp_col, 0);
  ck_assert_int_ge(status_col, 0);
  gboolean seen[65] = {FALSE};
  for (int l = 1; lines[l] && *lines[l]; l++) {
    g_auto(GStrv) cell = g_strsplit(lines[l], ",", -1);
    ck_assert_int_gt((int)g_strv_length(cell), MAX(tp_col, status_col));
    int tp = atoi(cell[tp_col]);
    if (tp > 0 && tp <= 64 && !strcmp(cell[status_col], "ok")) seen[tp] = TRUE;
  }
  ck_assert_msg(seen[16] && seen[32], "%s", out);
  g_free(out);
}
END_TEST

/* In the child: a 1 GiB all-reduce over GPUs 0-7 (hosts 0 and 1 of domain 0) and 72-79 (hosts 18 and 19 of
 * domain 1), every link at its datasheet rate. */
static void run_two_domain_ring(void *arg, double out[SIM_CHILD_MAX])
{
  (void)arg;
  gpu_profile p = gb200();
  p.stack.nccl_bw_efficiency_nvlink = p.stack.nccl_bw_efficiency_ib = 1.0;
  p.stack.nccl_step_latency_s = 0;
  graph *g = graph_new(144);
  for (int r = 0; r < 144; r++) graph_program_of(g, r);
  int members[16];
  for (int k = 0; k < 16; k++) members[k] = k < 8 ? k : 64 + k;
  int gid = graph_add_group(g, members, 16, "dp");
  graph_event e = {.kind = EV_COLLECTIVE, .op = GRAPH_OP_COMM, .phase = PH_FORWARD, .peer = gid, .bytes = GIB_BYTES,
                   .micro_batch = -1, .layer = -1, .variant = COLL_ALL_REDUCE};
  for (int k = 0; k < 16; k++) g_array_append_val(graph_program_of(g, members[k])->events, e);
  plat_params pp = plat_params_of(&p, 144);
  GError *err = NULL;
  replay_result *res = replay_run(g, &p, &pp, NULL, &err);
  ck_assert_msg(res != NULL, "%s", err ? err->message : "");
  out[0] = res->step_time_s;
  replay_result_free(res);
  graph_free(g);
}

/* NCCL's channels count members per NVLink domain, not per host: 8 members a domain give 8 rings, each
 * leaving the domain through its own GPU's NIC, so the IB hop of a step carries S / (n * 8):
 * 2(n-1)/n * S / 8 / 50 GB/s (+ 2(n-1) hop latencies), half what 4 rings (members per host) take. */
START_TEST(test_ring_across_two_domains_runs_a_channel_per_member_of_a_domain)
{
  double out[SIM_CHILD_MAX];
  sim_child_run(run_two_domain_ring, NULL, out);
  double want = 2.0 * 15 / 16 * GIB_BYTES / 8 / 50e9;
  ck_assert_msg(fabs(out[0] - want) <= 0.03 * want, "%.9f vs %.9f", out[0], want);
}
END_TEST

static char *paje_of(int fabric)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.prof.fabric = fabric;
  rq.l = layout_default();
  rq.l.gpus = 16;
  rq.l.tp = 8;
  rq.l.pp = 1;
  rq.l.micro_batch = 1;
  rq.l.global_batch = 4;
  rq.gen = gen_default_options();
  rq.capacity_gib = rq.prof.memory_gib;
  sim_outcome o = {0};
  if (!sim_run_layout(&rq, &o, &err)) ck_abort_msg("%s", err->message);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  trace_paje_put(&o.tl, &o.plat, TRUE, f);
  fclose(f);
  sim_outcome_clear(&o);
  return buf;
}

static void run_paje(void *arg, double out[SIM_CHILD_MAX])
{
  int fabric = *(int *)arg;
  g_autofree char *t = paje_of(fabric);
  out[0] = strstr(t, "\"rail0_leaf0_UP\"") != NULL;
  out[1] = strstr(t, "\"rail7_leaf0_DOWN\"") != NULL;
  out[2] = strstr(t, "\"spine\"") != NULL;
  out[3] = strstr(t, "\"core\"") != NULL;
}

/* --fabric rail --paje-links: rail leaves' uplinks and the spine, no fat-tree core; fat-tree: the core. */
START_TEST(test_paje_draws_rail_leaves_on_a_rail_fabric_and_a_core_on_a_fat_tree)
{
  double out[SIM_CHILD_MAX];
  int rail = FABRIC_RAIL, fat = FABRIC_FAT_TREE;
  sim_child_run(run_paje, &rail, out);
  ck_assert_msg(out[0] == 1 && out[1] == 1 && out[2] == 1 && out[3] == 0, "rail: leaf0 %g leaf7 %g spine %g core %g",
                out[0], out[1], out[2], out[3]);
  sim_child_run(run_paje, &fat, out);
  ck_assert_msg(out[0] == 0 && out[2] == 0 && out[3] == 1, "fat-tree: leaf %g spine %g core %g", out[0], out[2], out[3]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("topology");
  TCase *tc = tcase_create("levels");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_gb200_profile_is_a_72_gpu_domain_of_4_gpu_hosts);
  tcase_add_test(tc, test_gb200_tp_groups_never_leave_their_nvlink_domain);
  tcase_add_test(tc, test_gb200_domain_use_follows_whole_hosts_of_whole_groups);
  tcase_add_test(tc, test_gb200_route_inside_a_domain_across_hosts_uses_no_nic);
  tcase_add_test(tc, test_gb200_transfer_inside_a_domain_runs_at_nvlink_speed);
  tcase_add_test(tc, test_gb200_tp16_layout_simulates);
  tcase_add_test(tc, test_sweep_on_576_gb200_lists_tp16_and_tp32);
  tcase_add_test(tc, test_ring_across_two_domains_runs_a_channel_per_member_of_a_domain);
  tcase_add_test(tc, test_paje_draws_rail_leaves_on_a_rail_fabric_and_a_core_on_a_fat_tree);
  suite_add_tcase(s, tc);
  return check_run(s);
}
