/* test_kernel_cost -- the compute model against hand computations of tile
 * and wave quantization, the backward split and the attention formulas. */
#include <check.h>

#include "check_main.h"
#include <math.h>

#include "platforms/kernel_cost.h"
#include "workloads/layout.h"

static gpu_profile prof(void)
{
  gpu_profile p = {0};
  p.peak_flops = 312e12;
  p.hbm_bytes_per_s = 2.0e12;
  p.sm_count = 108;
  p.stack.gemm_tile_m = 256;
  p.stack.gemm_tile_n = 128;
  p.stack.gemm_efficiency = 0.8;
  p.stack.gemm_k_half = 128;
  p.stack.hbm_efficiency = 0.8;
  p.stack.attention[GRAPH_ATTN_SCORES] = (stack_attention){STACK_ATTN_MATERIALIZED, 0};
  p.stack.attention[GRAPH_ATTN_FLASH1] = (stack_attention){STACK_ATTN_FUSED, 0.3};
  p.stack.attention[GRAPH_ATTN_FLASH2] = (stack_attention){STACK_ATTN_FUSED, 0.6};
  p.stack.attn_seq_half = 300;
  p.stack.attn_head_dim_half = 24;
  p.stack.launch_overhead_s = 4e-6;
  return p;
}

START_TEST(test_gemm_filling_whole_waves_loses_only_the_k_term)
{
  gpu_profile p = prof();
  /* 2048 x 13824 output: 8 x 108 tiles of 256 x 128 = 864 = 8 full waves of 108 SMs */
  ck_assert_double_eq_tol(kcost_gemm_efficiency(&p, 2048, 13824, 5120), 0.8 * 5120 / (5120 + 128.0), 1e-12);
}
END_TEST

START_TEST(test_gemm_partial_last_wave_costs_its_idle_sms)
{
  gpu_profile p = prof();
  /* 2048 x 7680 (QKV at tp 2): 8 x 60 = 480 tiles (either orientation) -> 5 waves = 540 slots */
  double want = 0.8 * (480.0 / 540.0) * 5120 / (5120 + 128.0);
  ck_assert_double_eq_tol(kcost_gemm_efficiency(&p, 2048, 7680, 5120), want, 1e-12);
}
END_TEST

START_TEST(test_gemm_ragged_edge_pays_tile_padding)
{
  gpu_profile p = prof();
  /* 2048 x 200: 256x128 tiles: 8 x 2 = 16 tiles covering 2048 x 256 (useful 200/256), one wave of 16/108;
   * 128x256 tiles: 16 x 1 = 16 tiles covering 2048 x 256, same. */
  double want = 0.8 * (200.0 / 256.0) * (16.0 / 108.0) * 1024 / (1024 + 128.0);
  ck_assert_double_eq_tol(kcost_gemm_efficiency(&p, 2048, 200, 1024), want, 1e-12);
}
END_TEST

/* An FP8 GEMM (either 8-bit format) runs at the FP8 peak times the stack's FP8 efficiency with the same tile,
 * wave and k terms; a bf16 one of the same shape at the bf16 peak and efficiency. 2048 x 13824 x 5120 fills
 * 8 whole waves (the test above), so the time is flops / (peak x eff x k / (k + k_half)). */
START_TEST(test_fp8_gemm_costs_flops_over_fp8_peak_times_fp8_efficiency)
{
  gpu_profile p = prof();
  p.peak_flops = 989e12;
  p.peak_fp8_flops = 1979e12;
  p.stack.fp8_gemm_efficiency = 0.6;
  p.stack.launch_overhead_s = 0;
  double m = 2048, n = 13824, k = 5120, flops = 2 * m * n * k, kterm = k / (k + 128.0);
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .m = 2048, .n = 13824, .k = 5120,
                   .launches = 1, .flops = flops, .bytes = 0};
  graph_dtype fp8s[] = {DT_FP8_E4M3, DT_FP8_E5M2, DT_MXFP8};
  for (size_t i = 0; i < G_N_ELEMENTS(fp8s); i++) {
    e.dtype = fp8s[i];
    ck_assert_double_eq_tol(kcost_seconds(&p, &e), flops / (1979e12 * 0.6 * kterm), 1e-15);
  }
  e.dtype = DT_BF16;
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), flops / (989e12 * 0.8 * kterm), 1e-15);
}
END_TEST

/* The profile's GEMM efficiency scales (a GPU's achieved fraction of its peak against the H100 the stack was
 * fitted on, docs/blackwell.md) multiply the stack's efficiency of their dtype only: the same 8-whole-wave GEMM
 * takes flops / (peak x eff x scale x k-term); attention and the memory passes are not scaled. */
START_TEST(test_gemm_efficiency_scale_multiplies_its_dtype_efficiency_only)
{
  gpu_profile p = prof();
  p.peak_fp8_flops = 624e12;
  p.stack.fp8_gemm_efficiency = 0.6;
  p.stack.launch_overhead_s = 0;
  p.gemm_efficiency_scale = 0.5;
  p.fp8_gemm_efficiency_scale = 0.75;
  double m = 2048, n = 13824, k = 5120, flops = 2 * m * n * k, kterm = k / (k + 128.0);
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .m = m, .n = n, .k = k, .launches = 1,
                   .flops = flops, .dtype = DT_BF16};
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), flops / (312e12 * 0.8 * 0.5 * kterm), 1e-15);
  e.dtype = DT_FP8_E4M3;
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), flops / (624e12 * 0.6 * 0.75 * kterm), 1e-15);
  graph_event mem = {.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_FORWARD, .launches = 0, .bytes = 1e9};
  ck_assert_double_eq_tol(kcost_seconds(&p, &mem), 1e9 / (2.0e12 * 0.8), 1e-15);
  graph_event fa = {.kind = EV_COMPUTE, .cost = COST_ATTENTION, .phase = PH_FORWARD, .variant = GRAPH_ATTN_FLASH2,
                    .m = 64, .n = 4096, .k = 128, .launches = 0, .flops = 4.0 * 64 * 4096 * 4096 * 128};
  double fa_eff = 0.6 * 4096 / (4096 + 300.0) * 128 / (128 + 24.0);
  ck_assert_double_eq_tol(kcost_seconds(&p, &fa), fa.flops * 0.5 / (312e12 * fa_eff), 1e-12);
}
END_TEST

START_TEST(test_backward_gemm_is_dgrad_plus_wgrad_shapes)
{
  gpu_profile p = prof();
  p.stack.launch_overhead_s = 0;
  graph_event f = {.kind = EV_COMPUTE, .cost = COST_GEMM, .phase = PH_FORWARD, .m = 2048, .n = 5120, .k = 13824,
                   .launches = 1};
  f.flops = 2.0 * 2048 * 5120 * 13824;
  graph_event b = f;
  b.phase = PH_BACKWARD;
  b.flops = 2 * f.flops;
  /* dgrad: output 2048 x 13824, reduction 5120; wgrad: output 13824 x 5120, reduction 2048 */
  double want = f.flops / (312e12 * kcost_gemm_efficiency(&p, 2048, 13824, 5120)) +
                f.flops / (312e12 * kcost_gemm_efficiency(&p, 13824, 5120, 2048));
  ck_assert_double_eq_tol(kcost_seconds(&p, &b), want, 1e-15);
  ck_assert_double_eq_tol(kcost_seconds(&p, &f), f.flops / (312e12 * kcost_gemm_efficiency(&p, 2048, 5120, 13824)),
                          1e-15);
}
END_TEST

START_TEST(test_flash_attention_runs_causal_half_at_its_efficiency)
{
  gpu_profile p = prof();
  p.stack.launch_overhead_s = 0;
  double s = 2048, d = 128, bh = 40;
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_ATTENTION, .phase = PH_FORWARD, .variant = GRAPH_ATTN_FLASH2,
                   .m = (int)bh, .n = (int)s, .k = (int)d, .launches = 1};
  e.flops = 4.0 * s * s * d * bh;
  double eff2 = 0.6 * s / (s + 300) * d / (d + 24);
  ck_assert_double_eq_tol(kcost_fused_attention_efficiency(&p, GRAPH_ATTN_FLASH2, s, d), eff2, 1e-12);
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), 0.5 * e.flops / (312e12 * eff2), 1e-15);
  /* backward: graph counts 2x forward, the kernel does 2.5x */
  graph_event b = e;
  b.phase = PH_BACKWARD;
  b.flops = 2 * e.flops;
  ck_assert_double_eq_tol(kcost_seconds(&p, &b), 2.5 * kcost_seconds(&p, &e), 1e-15);
  /* FlashAttention-1 at half the efficiency takes twice as long */
  graph_event f1 = e;
  f1.variant = GRAPH_ATTN_FLASH1;
  ck_assert_double_eq_tol(kcost_seconds(&p, &f1), 2 * kcost_seconds(&p, &e), 1e-15);
  /* longer sequences are more efficient */
  ck_assert(kcost_fused_attention_efficiency(&p, GRAPH_ATTN_FLASH2, 8192, d) > eff2);
}
END_TEST

/* The SFU's exponentials beside the tensor cores (kernel_cost.c exp_factor): per score element the forward does 4 d
 * tensor FLOPs and one exponential, the backward 10 d and one; in series the time per element is 4d/P + 1/E, where
 * the stack's efficiency was fitted at 4d/P + rho_fit/P. A B200-like GPU (2.25e15 FLOP/s, 5e12 exp/s) against an
 * H100 fit (rho 236.7): the forward 1.285x, the backward 1.141x; without the profile's rate, or at the fit's own
 * rho, nothing changes. */
START_TEST(test_attention_exponentials_scale_the_fitted_time_by_the_gpus_sfu_rate)
{
  gpu_profile p = prof();
  p.stack.launch_overhead_s = 0;
  p.peak_flops = 2.25e15;
  double s = 8192, d = 128, bh = 8, P = 2.25e15, E = 5e12, ref = 236.7;
  graph_event f = {.kind = EV_COMPUTE, .cost = COST_ATTENTION, .phase = PH_FORWARD, .variant = GRAPH_ATTN_FLASH2,
                   .m = (int)bh, .n = (int)s, .k = (int)d, .launches = 1};
  f.flops = 4.0 * s * s * d * bh;
  graph_event b = f;
  b.phase = PH_BACKWARD;
  b.flops = 2 * f.flops;
  double t0f = kcost_seconds(&p, &f), t0b = kcost_seconds(&p, &b);
  p.exp_per_s = E; /* the fit's reference unknown: unchanged */
  ck_assert_double_eq(kcost_seconds(&p, &f), t0f);
  p.stack.attn_fit_flops_per_exp = ref;
  ck_assert_double_eq_tol(kcost_seconds(&p, &f), t0f * (4 * d / P + 1 / E) / (4 * d / P + ref / P), 1e-15);
  ck_assert_double_eq_tol(kcost_seconds(&p, &b), t0b * (10 * d / P + 1 / E) / (10 * d / P + ref / P), 1e-15);
  ck_assert(kcost_seconds(&p, &f) > 1.28 * t0f && kcost_seconds(&p, &f) < 1.29 * t0f);
  p.exp_per_s = P / ref; /* the fit GPU's own ratio */
  ck_assert_double_eq_tol(kcost_seconds(&p, &f), t0f, 1e-15);
  p.exp_per_s = 0;
  ck_assert_double_eq(kcost_seconds(&p, &b), t0b);
}
END_TEST

START_TEST(test_unfused_attention_is_gemms_plus_score_traffic)
{
  gpu_profile p = prof();
  double s = 2048, d = 128, bh = 40;
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_ATTENTION, .phase = PH_FORWARD, .variant = GRAPH_ATTN_SCORES,
                   .m = (int)bh, .n = (int)s, .k = (int)d, .launches = 6};
  e.flops = 4.0 * s * s * d * bh;
  e.bytes = 14.0 * bh * s * s;
  double want = 6 * 4e-6 + e.flops / (312e12 * 0.8 * d / (d + 128)) + e.bytes / (2.0e12 * 0.8);
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), want, 1e-15);
}
END_TEST

/* The graph names a class; how its kernel runs is the stack's: the same flash2 event under a stack whose flash2
 * entry is materialized costs as the scores path (two batched GEMMs plus its bytes), and under a fused entry of
 * another efficiency scales with it. */
START_TEST(test_attention_class_cost_model_comes_from_the_stack_entry)
{
  gpu_profile p = prof();
  double s = 2048, d = 128, bh = 40;
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_ATTENTION, .phase = PH_FORWARD, .variant = GRAPH_ATTN_FLASH2,
                   .m = (int)bh, .n = (int)s, .k = (int)d, .launches = 0};
  e.flops = 4.0 * s * s * d * bh;
  e.bytes = 8.0 * bh * s * s;
  p.stack.attention[GRAPH_ATTN_FLASH2] = (stack_attention){STACK_ATTN_MATERIALIZED, 0};
  double want = e.flops / (312e12 * 0.8 * d / (d + 128)) + e.bytes / (2.0e12 * 0.8);
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), want, 1e-15);
  p.stack.attention[GRAPH_ATTN_FLASH2] = (stack_attention){STACK_ATTN_FUSED, 0.45};
  double eff = 0.45 * s / (s + 300) * d / (d + 24);
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), fmax(0.5 * e.flops / (312e12 * eff), e.bytes / (2.0e12 * 0.8)), 1e-15);
}
END_TEST

START_TEST(test_memory_bound_op_is_bytes_over_effective_bandwidth_plus_launches)
{
  gpu_profile p = prof();
  graph_event e = {.kind = EV_COMPUTE, .cost = COST_MEMORY, .phase = PH_FORWARD, .launches = 6, .bytes = 40.0 * 2048 * 5120};
  ck_assert_double_eq_tol(kcost_seconds(&p, &e), 6 * 4e-6 + e.bytes / (2.0e12 * 0.8), 1e-15);
}
END_TEST

Suite *kcost_suite(void)
{
  Suite *s = suite_create("kernel_cost");
  TCase *tc = tcase_create("model");
  tcase_add_test(tc, test_gemm_filling_whole_waves_loses_only_the_k_term);
  tcase_add_test(tc, test_gemm_partial_last_wave_costs_its_idle_sms);
  tcase_add_test(tc, test_gemm_ragged_edge_pays_tile_padding);
  tcase_add_test(tc, test_backward_gemm_is_dgrad_plus_wgrad_shapes);
  tcase_add_test(tc, test_fp8_gemm_costs_flops_over_fp8_peak_times_fp8_efficiency);
  tcase_add_test(tc, test_gemm_efficiency_scale_multiplies_its_dtype_efficiency_only);
  tcase_add_test(tc, test_flash_attention_runs_causal_half_at_its_efficiency);
  tcase_add_test(tc, test_unfused_attention_is_gemms_plus_score_traffic);
  tcase_add_test(tc, test_memory_bound_op_is_bytes_over_effective_bandwidth_plus_launches);
  tcase_add_test(tc, test_attention_class_cost_model_comes_from_the_stack_entry);
  tcase_add_test(tc, test_attention_exponentials_scale_the_fitted_time_by_the_gpus_sfu_rate);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(kcost_suite()); }
