/* test_cuda_graph -- a step captured as one CUDA graph (--cuda-graph, graph_meta.cuda_graph; docs/moe.md, "CUDA
 * graphs"): the kernels replay back to back from the graph, so a kernel costs its work alone, without the
 * stack's per-launch gap (launch_overhead_s), and the host issues nothing kernel by kernel (host_dispatch_s).
 * And the partial graphs of --cuda-graph-scope (graph_event.captured; docs/moe.md, "CUDA graph scope"): a layer
 * pass's captured kernels pay neither, but the pass pays one launch for its graph.
 *
 * Expected values from the closed forms: a graphed kernel's time is kcost_seconds on a copy of the profile whose
 * launch_overhead_s is 0 (computed independently of the graphed path), i.e. the eager time less launches times
 * the gap; a one-GPU step (no collective, one stream) graphed is the sum of its kernels' graphed times, however
 * slow the host, and eager with a slow host it is host-bound: at least the launches times host_dispatch_s.
 */
#include <check.h>

#include "check_main.h"
#include "sim_child.h"
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "analysis/simulate.h"
#include "platforms/kernel_cost.h"
#include "workloads/generate.h"

static gpu_profile h100(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &p, NULL));
  ck_assert(p.stack.launch_overhead_s > 0);
  return p;
}

START_TEST(test_graphed_kernel_costs_its_work_without_the_launch_gaps)
{
  gpu_profile p = h100(), nogap = h100();
  nogap.stack.launch_overhead_s = 0;
  graph_event gemm = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .dtype = DT_BF16, .m = 4096,
                      .n = 4096, .k = 4096, .launches = 3};
  gemm.flops = 2.0 * gemm.m * gemm.n * gemm.k * gemm.launches;
  gemm.bytes = 2.0 * (gemm.m * (double)gemm.k + gemm.k * (double)gemm.n + gemm.m * (double)gemm.n) * 3;
  graph_event pass = {.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_BACKWARD, .launches = 5, .bytes = 1e8};
  const graph_event *evs[] = {&gemm, &pass};
  for (int i = 0; i < 2; i++) {
    double eager = kcost_seconds(&p, evs[i]), graphed = kcost_seconds_in(&p, evs[i], TRUE);
    ck_assert_double_eq_tol(graphed, kcost_seconds(&nogap, evs[i]), 1e-15);
    ck_assert_double_eq_tol(eager - graphed, evs[i]->launches * p.stack.launch_overhead_s, 1e-15);
    ck_assert_double_eq(kcost_seconds_in(&p, evs[i], FALSE), eager);
  }
}
END_TEST

typedef struct gcase {
  gboolean graphed;
} gcase;

/* out: [0] step time, [1] the sum of rank 0's compute events' graphed times, [2] their launches, [3] events that
 * are not compute on stream 0 */
static void run(void *arg, double out[SIM_CHILD_MAX])
{
  const gcase *c = arg;
  sim_request rq = {.l = layout_default(), .gen = gen_default_options(), .prof = h100()};
  model m = {.layers = 4, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn = 4096, .vocab = 1024};
  g_strlcpy(m.name, "dense-4", sizeof m.name);
  rq.m = m;
  rq.prof.stack.host_dispatch_s = 1e-3; /* a host far slower than any kernel: eager, the step is host-bound */
  rq.prof.stack.straggler_sigma = 0;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l.gpus = 1;
  rq.l.seq_len = 1024;
  rq.l.global_batch = 2;
  rq.l.cuda_graph = c->graphed;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&rq.l, &rq.m, &err), "%s", err ? err->message : "");
  sim_outcome o = {0};
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(o.g->meta.cuda_graph, c->graphed);
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const graph_event *ev = (const graph_event *)p->events->data;
  out[0] = o.res->step_time_s;
  for (guint i = 0; i < p->events->len; i++) {
    if (ev[i].kind != EV_COMPUTE || ev[i].stream != 0) {
      out[3]++;
      continue;
    }
    out[1] += kcost_seconds_in(&rq.prof, &ev[i], TRUE);
    out[2] += ev[i].launches;
  }
  out[4] = rq.prof.stack.host_dispatch_s;
  sim_outcome_clear(&o);
}

START_TEST(test_graphed_step_is_its_kernels_back_to_back_whatever_the_host)
{
  double eager[SIM_CHILD_MAX], graphed[SIM_CHILD_MAX];
  sim_child_run(run, &(gcase){FALSE}, eager);
  sim_child_run(run, &(gcase){TRUE}, graphed);
  ck_assert_int_eq((int)graphed[3], 0); /* one GPU: compute only, one stream */
  ck_assert_double_eq_tol(graphed[0], graphed[1], 1e-9 * graphed[1]);
  /* eager: the host issues each launch in host_dispatch_s, far slower than the kernels */
  ck_assert_msg(eager[0] >= eager[2] * eager[4] * (1 - 1e-9), "eager %.6f s below the host's %.6f s", eager[0],
                eager[2] * eager[4]);
  ck_assert(graphed[0] < 0.5 * eager[0]);
}
END_TEST

/* The partial graphs. A one-GPU step (one stream, no collective) is the sum of its kernels' times, so the scope's
 * saving is exactly the launch gaps it removes: the expected value is counted here from the graph's operator
 * labels alone, never from its captured bits. Megatron-Core graphs, per layer and micro-batch, forward and
 * backward, one callable (transformer_layer.py _te_cuda_graph_capture): with attn the layer's operators on the input
 * side of its first residual add (input norm, qkv, rotary, attention, output projection, the add); with
 * moe_router + moe_preprocess also the pre-MLP norm (the first norm after that add), the router, the top-k and the
 * permutation. A pass's captured launches C save (C - 1) gaps: the graph's own launch is one. */
typedef struct scase {
  gboolean moe;
  int scope;
  double host_s; /* the host's dispatch per launch; 0: none, the step is its kernels */
} scase;

static gboolean label_is(const graph *g, const graph_event *e, const char *name)
{
  return !strcmp(graph_op_name(g, e->op), name);
}

/* out: [0] step time, [1] sum over layer passes of (captured launches - 1) by the labels, [2] layer passes with a
 * capture by the labels, [3] events marked graph_launch, [4] the stack's launch gap, [5] compute launches in all,
 * [6] the sum of the kernels' times as the replay costs them, [7] events not compute on stream 0, [8] the layer
 * passes, 2 x layers x micro-batches, [9] events whose bits a graph file does not carry back */
static void run_scoped(void *arg, double out[SIM_CHILD_MAX])
{
  const scase *c = arg;
  sim_request rq = {.l = layout_default(), .gen = gen_default_options(), .prof = h100()};
  model m = {.layers = 4, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn = 4096, .vocab = 1024};
  g_strlcpy(m.name, c->moe ? "moe-4" : "dense-4", sizeof m.name);
  if (c->moe) { /* every layer MoE, 8 experts of 512, top-2; ep 1: no all-to-all on one GPU */
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.expert_ffn = 512;
  }
  rq.m = m;
  rq.prof.stack.host_dispatch_s = c->host_s;
  rq.prof.stack.straggler_sigma = 0;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l.gpus = 1;
  rq.l.seq_len = 1024;
  rq.l.global_batch = 2;
  rq.l.cuda_graph_scope = c->scope;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&rq.l, &rq.m, &err), "%s", err ? err->message : "");
  sim_outcome o = {0};
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  const graph_program *p = g_ptr_array_index(o.g->programs, 0);
  const graph_event *ev = (const graph_event *)p->events->data;
  int n = (int)p->events->len;
  out[0] = o.res->step_time_s;
  out[4] = rq.prof.stack.launch_overhead_s;
  out[8] = 2.0 * m.layers * rq.l.grad_accum; /* layer passes: forward and backward of each layer and micro-batch */
  for (int i = 0; i < n; i++) {
    if (ev[i].kind != EV_COMPUTE || ev[i].stream != 0) {
      out[7]++;
      continue;
    }
    out[3] += ev[i].graph_launch;
    out[5] += ev[i].launches;
    out[6] += kcost_seconds_in(&rq.prof, &ev[i], FALSE);
  }
  /* the layer passes: runs of events of one layer, micro-batch and phase, read in forward order */
  for (int a = 0; a < n;) {
    int b = a;
    while (b < n && ev[b].layer == ev[a].layer && ev[b].micro_batch == ev[a].micro_batch && ev[b].phase == ev[a].phase)
      b++;
    if (ev[a].layer >= 0 && ev[a].kind == EV_COMPUTE) {
      gboolean bwd = ev[a].phase == PH_BACKWARD;
      int captured = 0, part = 0; /* part 0: before the first residual add, 1: after it, 2: past the pre-MLP norm */
      for (int k = 0; k < b - a; k++) {
        const graph_event *e = &ev[bwd ? b - 1 - k : a + k];
        gboolean in = FALSE;
        if (part == 0) in = (c->scope & CG_SCOPE_ATTN) != 0;
        else if (c->scope & CG_SCOPE_MOE_ROUTER)
          in = (part == 1 && label_is(o.g, e, "norm")) || label_is(o.g, e, "router") || label_is(o.g, e, "topk") ||
               ((c->scope & CG_SCOPE_MOE_PREPROCESS) && label_is(o.g, e, "permute"));
        if (in) captured += e->launches;
        if (part == 0 && label_is(o.g, e, "residual")) part = 1;
        else if (part == 1 && label_is(o.g, e, "norm")) part = 2;
      }
      if (captured > 0) {
        out[1] += captured - 1;
        out[2]++;
      }
    }
    a = b;
  }
  /* [9]: events whose captured or graph_launch bit differs once the graph is written and read back */
  gchar *path = NULL;
  int fd = g_file_open_tmp("layoutsim-cg-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_msg(graph_save(o.g, path, &err), "%s", err ? err->message : "");
  graph *back = graph_load(path, &err);
  ck_assert_msg(back, "%s", err ? err->message : "");
  const graph_event *bev = (const graph_event *)((const graph_program *)g_ptr_array_index(back->programs, 0))->events->data;
  for (int i = 0; i < n; i++) out[9] += bev[i].captured != ev[i].captured || bev[i].graph_launch != ev[i].graph_launch;
  graph_free(back);
  g_unlink(path);
  g_free(path);
  sim_outcome_clear(&o);
}

START_TEST(test_scope_saves_the_launch_gaps_of_its_kernels_less_one_launch_per_graph)
{
  static const scase cases[] = {{FALSE, CG_SCOPE_ATTN, 0},
                                {TRUE, CG_SCOPE_ATTN, 0},
                                {TRUE, CG_SCOPE_MOE_ROUTER | CG_SCOPE_MOE_PREPROCESS, 0},
                                {TRUE, CG_SCOPE_ATTN | CG_SCOPE_MOE_ROUTER | CG_SCOPE_MOE_PREPROCESS, 0}};
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    double eager[SIM_CHILD_MAX], scoped[SIM_CHILD_MAX];
    scase e = cases[i];
    e.scope = 0;
    sim_child_run(run_scoped, &e, eager);
    sim_child_run(run_scoped, (void *)&cases[i], scoped);
    ck_assert_int_eq((int)scoped[7], 0); /* one GPU: compute only, one stream */
    ck_assert_int_eq((int)scoped[9], 0); /* the graph file carries the capture (docs/graph-format.md) */
    /* 4 layers x 2 micro-batches x (forward, backward): one graph each */
    ck_assert_int_eq((int)scoped[8], 16);
    ck_assert_int_eq((int)scoped[2], 16);
    ck_assert_int_eq((int)scoped[3], 16);
    double saved = scoped[1] * scoped[4];
    ck_assert_msg(scoped[1] > 16, "case %zu: %g launches captured beyond the graphs' own", i, scoped[1]);
    ck_assert_msg(fabs((eager[0] - scoped[0]) - saved) <= 1e-9 * eager[0],
                  "case %zu: the scope saved %.9f s, the captured launches %.0f x %.3g s = %.9f s", i,
                  eager[0] - scoped[0], scoped[1], scoped[4], saved);
  }
}
END_TEST

/* With a host far slower than the kernels (1 ms a launch), an eager step is host-bound; under a scope the host issues
 * only the launches outside the graphs and one per graph: with attn, all launches but the attention sub-blocks'
 * captured ones beyond each graph's own, counted from the labels as above. So the scoped step is the host's
 * issued x 1 ms, and at most the kernels' time more. */
START_TEST(test_scoped_kernels_are_not_issued_by_the_host)
{
  double scoped[SIM_CHILD_MAX], all[SIM_CHILD_MAX];
  sim_child_run(run_scoped, &(scase){FALSE, CG_SCOPE_ATTN, 1e-3}, scoped);
  sim_child_run(run_scoped, &(scase){FALSE, 0, 1e-3}, all);
  double issued = scoped[5] - scoped[1], h = 1e-3;
  ck_assert_msg(scoped[0] >= issued * h * (1 - 1e-9) && scoped[0] <= issued * h + scoped[6] + 1e-9,
                "scoped step %.6f s: the host's %.0f launches take %.6f s, the kernels %.6f s", scoped[0], issued,
                issued * h, scoped[6]);
  ck_assert(all[0] >= all[5] * h * (1 - 1e-9));
  ck_assert(scoped[0] < all[0] - 0.5 * scoped[1] * h);
}
END_TEST

static Suite *cuda_graph_suite(void)
{
  Suite *s = suite_create("cuda_graph");
  TCase *tc = tcase_create("closed forms");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_graphed_kernel_costs_its_work_without_the_launch_gaps);
  tcase_add_test(tc, test_graphed_step_is_its_kernels_back_to_back_whatever_the_host);
  tcase_add_test(tc, test_scope_saves_the_launch_gaps_of_its_kernels_less_one_launch_per_graph);
  tcase_add_test(tc, test_scoped_kernels_are_not_issued_by_the_host);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(cuda_graph_suite()); }
