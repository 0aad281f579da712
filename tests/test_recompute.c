/* test_recompute -- `--checkpointing mlp` (docs/memory.md section 3) against its closed forms: the forward
 * keeps all a layer saves but the MLP sub-block's activations (its input kept), 8 T f/t bytes a layer less
 * for SwiGLU and 4 T f/t for a GeLU MLP; the backward runs the MLP forward again, 6 T h f/t FLOPs a layer
 * (SwiGLU: gate, up and down GEMMs, 2 T h f/t each; GeLU: 4 T h f/t) with its tensor-parallel
 * collectives; and on one GPU the step takes exactly the recomputed kernels' time longer, written here
 * from the kernel cost model's formula (docs/profile.md) with the MLP's GEMM shapes. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "platforms/kernel_cost.h"
#include "sim_child.h"
#include "test_layout.h"
#include "workloads/block.h"
#include "workloads/generate.h"
#include "workloads/ops.h"

static model load(const char *name)
{
  model m;
  ck_assert(model_load_named(name, &m, NULL));
  return m;
}

/* What micro-batch 0 of rank 0 does in one step: the bytes its forward keeps, and what its recompute runs. */
typedef struct mb0 {
  double kept_bytes;      /* mem_delta_bytes of the forward events */
  double recompute_flops; /* FLOPs of the recompute's compute events */
  double recompute_colls[COLL_N]; /* the recompute's collectives by kind */
  double recompute_coll_bytes;
  gboolean recompute_outside_mlp; /* a recomputed compute event that is not an MLP operator */
} mb0;

static mb0 sums(const model *m, int gpus, int tp, gboolean sp, layout_ckpt ck)
{
  layout l = test_layout(gpus, tp, 1, 1, ck);
  l.sp = sp;
  l.global_batch = gpus / tp;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, m, &err), "%s", err ? err->message : "");
  gen_options o = gen_default_options();
  g_autoptr(graph) g = gen_graph(m, &l, &o, NULL);
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  mb0 s = {0};
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->micro_batch != 0) continue;
    if (e->phase == PH_FORWARD) s.kept_bytes += e->mem_delta_bytes;
    if (e->phase != PH_RECOMPUTE) continue;
    if (e->kind == EV_COLLECTIVE) {
      s.recompute_colls[e->variant]++;
      s.recompute_coll_bytes += e->bytes;
      continue;
    }
    s.recompute_flops += e->flops;
    const char *op = block_label_name((block_label)e->op);
    if (strcmp(op, "mlp_up") && strcmp(op, "swiglu") && strcmp(op, "gelu") && strcmp(op, "mlp_down") && strcmp(op, "bias"))
      s.recompute_outside_mlp = TRUE;
  }
  return s;
}

/* llama-13b (SwiGLU, f 13824) at tp 2, s 2048, micro-batch 1: SwiGLU's up, gate and silu(up) outputs
 * (6 T f/t) and the down GEMM's input (2 T f/t) are dropped, the shared input 2 T h kept; 40 layers.
 * With sp the input kept is the same all-gathered one (the QKV and MLP GEMMs save it replicated). */
START_TEST(test_mlp_forward_keeps_8Tf_over_t_bytes_a_swiglu_layer_less)
{
  model m = load("llama-13b");
  double T = 2048, f = 13824, t = 2, L = 40, want = 8 * T * f / t * L;
  for (int sp = 0; sp < 2; sp++) {
    double none = sums(&m, 16, 2, sp, CKPT_NONE).kept_bytes, mlp = sums(&m, 16, 2, sp, CKPT_MLP).kept_bytes;
    ck_assert_msg(fabs(none - mlp - want) <= 1e-9 * want, "sp %d: %.0f bytes less, closed form %.0f", sp, none - mlp, want);
  }
}
END_TEST

/* gpt3-175b (GeLU MLP, f 4h = 49152, 96 layers) at tp 8: the GeLU's input and the down GEMM's input,
 * 2 T f/t each, are dropped (the bias-dropout-add's mask after the MLP is not the MLP's: kept). */
START_TEST(test_mlp_forward_keeps_4Tf_over_t_bytes_a_gelu_layer_less)
{
  model m = load("gpt3-175b");
  m.vocab = 50304; /* padded to a multiple of tp, as Megatron pads it */
  double T = 2048, f = 49152, t = 8, L = 96, want = 4 * T * f / t * L;
  double none = sums(&m, 8, 8, FALSE, CKPT_NONE).kept_bytes, mlp = sums(&m, 8, 8, FALSE, CKPT_MLP).kept_bytes;
  ck_assert_msg(fabs(none - mlp - want) <= 1e-9 * want, "%.0f bytes less, closed form %.0f", none - mlp, want);
}
END_TEST

/* The recompute is the MLP forward and nothing else: 3 GEMMs of 2 T h f/t FLOPs (SwiGLU) or 2 (GeLU) a
 * layer, and its tensor-parallel exit again: without sp one all-reduce of the layer's 2 T h bytes, with sp
 * the entry's all-gather and the exit's reduce-scatter, 2 T h bytes each. */
START_TEST(test_mlp_recompute_is_the_mlp_forward_with_its_collectives)
{
  model m = load("llama-13b");
  double T = 2048, h = 5120, f = 13824, t = 2, L = 40, fwd = 3 * 2 * T * h * f / t * L;
  mb0 s = sums(&m, 16, 2, FALSE, CKPT_MLP);
  ck_assert_msg(fabs(s.recompute_flops - fwd) <= 1e-12 * fwd, "%.6g FLOPs, closed form %.6g", s.recompute_flops, fwd);
  ck_assert(!s.recompute_outside_mlp);
  ck_assert_double_eq(s.recompute_colls[COLL_ALL_REDUCE], L);
  ck_assert_double_eq(s.recompute_colls[COLL_ALL_GATHER] + s.recompute_colls[COLL_REDUCE_SCATTER], 0);
  ck_assert_double_eq(s.recompute_coll_bytes, L * 2 * T * h);
  s = sums(&m, 16, 2, TRUE, CKPT_MLP);
  ck_assert_double_eq_tol(s.recompute_flops, fwd, 1e-12 * fwd);
  ck_assert_double_eq(s.recompute_colls[COLL_ALL_GATHER], L);
  ck_assert_double_eq(s.recompute_colls[COLL_REDUCE_SCATTER], L);
  ck_assert_double_eq(s.recompute_colls[COLL_ALL_REDUCE], 0);
  ck_assert_double_eq(s.recompute_coll_bytes, L * 2 * 2 * T * h);
  ck_assert_double_eq(sums(&m, 16, 2, FALSE, CKPT_NONE).recompute_flops, 0);
  model g = load("gpt3-175b");
  g.vocab = 50304;
  double gh = 12288, gf = 49152, gt = 8, gL = 96, gfwd = 2 * 2 * T * gh * gf / gt * gL;
  s = sums(&g, 8, 8, FALSE, CKPT_MLP);
  ck_assert_msg(fabs(s.recompute_flops - gfwd) <= 1e-12 * gfwd, "%.6g FLOPs, closed form %.6g", s.recompute_flops, gfwd);
  ck_assert(!s.recompute_outside_mlp);
}
END_TEST

static gpu_profile a100(void)
{
  gpu_profile p;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &p, NULL));
  return p;
}

/* out[0]: the step time of llama-13b on one GPU, one micro-batch of 2048 tokens, checkpointing *arg */
static void run_one_gpu(void *arg, double out[SIM_CHILD_MAX])
{
  sim_request rq = {0};
  ck_assert(model_load_named("llama-13b", &rq.m, NULL));
  rq.l = test_layout(1, 1, 1, 1, *(layout_ckpt *)arg);
  rq.l.global_batch = 1;
  rq.gen = gen_default_options();
  rq.prof = a100();
  rq.capacity_gib = 80;
  GError *err = NULL;
  sim_outcome o = {0};
  ck_assert_msg(sim_run_layout(&rq, &o, &err), "%s", err ? err->message : "");
  out[0] = o.met->step_time_s;
  sim_outcome_clear(&o);
}

/* A forward GEMM (T x k).(k x n), c of them, on the kernel cost model (platforms/kernel_cost.h):
 * c launches + max(FLOPs at peak x efficiency, bf16 bytes at HBM x its efficiency). */
static double gemm_s(const gpu_profile *p, double T, double n, double k, int c)
{
  double math = 2 * T * n * k * c / (p->peak_flops * kcost_gemm_efficiency(p, T, n, k));
  double hbm = 2 * (T * k + k * n + T * n) * c / (p->hbm_bytes_per_s * p->stack.hbm_efficiency);
  return c * p->stack.launch_overhead_s + fmax(math, hbm);
}

/* One GPU, nothing to wait for: the step with mlp is longer by the recomputed kernels, 40 times the gate
 * and up GEMMs (T x h).(h x f), the SwiGLU pass (10 bytes an element of T x f, 2 kernels) and the down
 * GEMM (T x f).(f x h). */
START_TEST(test_mlp_adds_the_mlp_forward_kernels_to_a_one_gpu_step)
{
  gpu_profile p = a100();
  double T = 2048, h = 5120, f = 13824, L = 40;
  double swiglu = OPS_SWIGLU_KERNELS * p.stack.launch_overhead_s +
                  OPS_SWIGLU_BYTES_PER_EL * T * f / (p.hbm_bytes_per_s * p.stack.hbm_efficiency);
  double want = L * (gemm_s(&p, T, f, h, 2) + swiglu + gemm_s(&p, T, h, f, 1));
  layout_ckpt none = CKPT_NONE, mlp = CKPT_MLP;
  double a[SIM_CHILD_MAX], b[SIM_CHILD_MAX];
  sim_child_run(run_one_gpu, &none, a);
  sim_child_run(run_one_gpu, &mlp, b);
  ck_assert_msg(fabs(b[0] - a[0] - want) <= 1e-6 * want, "mlp adds %.9f s, the MLP forward %.9f s", b[0] - a[0], want);
  ck_assert(want > 0.05 * a[0]); /* about 2/3 of a forward: a test that can see it */
}
END_TEST

int main(void)
{
  Suite *s = suite_create("recompute");
  TCase *tc = tcase_create("recompute");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_mlp_forward_keeps_8Tf_over_t_bytes_a_swiglu_layer_less);
  tcase_add_test(tc, test_mlp_forward_keeps_4Tf_over_t_bytes_a_gelu_layer_less);
  tcase_add_test(tc, test_mlp_recompute_is_the_mlp_forward_with_its_collectives);
  tcase_add_test(tc, test_mlp_adds_the_mlp_forward_kernels_to_a_one_gpu_step);
  suite_add_tcase(s, tc);
  return check_run(s);
}
