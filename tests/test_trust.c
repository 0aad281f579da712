/* test_trust -- how far a prediction is trusted (analysis/trust.h): one layout of each regime
 * carries its flag and no other, the band comes from its class and is widened outside the
 * calibration data, the OOM risk flips at the fragmentation margin, the table file is strict and
 * round-trips, and validate's table (val_trust_table) has hand-computed statistics. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analysis/trust.h"
#include "workloads/precision.h"
#include "analysis/validate.h"
#include "check_main.h"
#include "check_tmpdir.h"
#include "test_layout.h"
#include "workloads/schedule.h"

/* A table by hand: calibrated on llama-13b..65b, seq 2048, 4-16 nodes of the A100 profile. */
static trust_table table(void)
{
  trust_table t = {.name = "t", .profile = "a100-sxm4-80gb", .schedule = "1f1b", .ib_gbps = 200, .nvlink_gbps = 2400, .nics_per_node = 8,
                   .model_params_min = 13e9, .model_params_max = 70e9, .seq_len_min = 2048, .seq_len_max = 2048,
                   .nodes_min = 4, .nodes_max = 16, .score_block_gib = 2, .scores_rows = 10, .scores_oom = 7,
                   .cp_min = 1, .cp_max = 1, .fragmentation_margin = 0.05, .oos_p90_pct = 0,
                   .band_pct_per_doubling = 4};
  t.cls[TRUST_CLASS_BASE] = (trust_class_stats){100, 6, -0.3};
  t.cls[TRUST_CLASS_PP2] = (trust_class_stats){50, 15, -3.5};
  t.cls[TRUST_CLASS_TP8_CKPT] = (trust_class_stats){18, 10, -4.6};
  return t;
}

/* llama-13b on 64 GPUs (8 nodes) of the shipped profile: inside the table's coverage. */
static sim_request request(int tp, int pp, int mb, layout_ckpt ckpt, layout_attn attn)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-13b", &rq.m, &err));
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.l = test_layout(64, tp, pp, mb, ckpt);
  rq.l.attn = attn;
  rq.capacity_gib = 80;
  return rq;
}

/* The assessment far from the memory boundary (fragmentation limit 1 against the profile's 0.14). */
static trust_assessment assess(const trust_table *t, const sim_request *rq)
{
  trust_assessment a;
  trust_assess(t, rq, 40, 80, 1.0, &a);
  return a;
}

START_TEST(test_base_layout_has_no_flag_and_the_base_band)
{
  trust_table t = table();
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  trust_assessment a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 0);
  ck_assert_int_eq(a.cls, TRUST_CLASS_BASE);
  ck_assert_double_eq(a.band_pct, 6);
  ck_assert_double_eq(a.headroom_gib, 40);
  ck_assert_int_eq(a.nodes, 8);
  g_autofree char *s = trust_flags_string(a.flags);
  ck_assert_str_eq(s, "");
}
END_TEST

START_TEST(test_context_parallelism_is_outside_the_calibration_and_widens_the_band)
{
  trust_table t = table(); /* no calibration run had cp > 1 */
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  rq.l.cp = 2;
  trust_assessment a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_CP);
  ck_assert_double_eq_tol(a.band_pct, sqrt(6 * 6 + 4 * 4), 1e-9); /* one doubling (cp 2 against 1) at 4 points */
  g_autofree char *s = trust_flags_string(a.flags);
  ck_assert_str_eq(s, "outside:cp");
  g_auto(GStrv) w = trust_warnings(&t, &rq, &a, 1.0);
  ck_assert(w[0] && strstr(w[0], "cp 2 (calibrated 1-1;"));
  /* a table whose runs ran cp 2 (the nemo stack's): cp 2 is inside, cp 1 and 4 outside */
  t.cp_min = t.cp_max = 2;
  ck_assert_uint_eq(assess(&t, &rq).flags, 0);
  rq.l.cp = 4;
  ck_assert_uint_eq(assess(&t, &rq).flags, 1u << TRUST_OUT_CP);
  rq.l.cp = 1;
  trust_assessment one = assess(&t, &rq);
  ck_assert_uint_eq(one.flags, 1u << TRUST_OUT_CP);
  /* cp 1 runs no KV ring: the warning names the range, not the ring's overlap */
  g_auto(GStrv) w1 = trust_warnings(&t, &rq, &one, 1.0);
  ck_assert_msg(w1[0] && strstr(w1[0], "cp 1 (calibrated 2-2)") && !strstr(w1[0], "KV ring"), "%s", w1[0]);
}
END_TEST

START_TEST(test_pp2_at_tp_up_to_2_is_its_class)
{
  trust_table t = table();
  for (int tp = 1; tp <= 8; tp *= 2) {
    sim_request rq = request(tp, 2, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
    trust_assessment a = assess(&t, &rq);
    ck_assert_uint_eq(a.flags, tp <= 2 ? 1u << TRUST_PP2 : 0);
    ck_assert_double_eq(a.band_pct, tp <= 2 ? 15 : 6);
  }
  sim_request rq = request(1, 4, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM); /* pp 4 is not the pp 2 regime */
  ck_assert_uint_eq(assess(&t, &rq).flags, 0);
}
END_TEST

START_TEST(test_tp8_with_checkpointing_is_its_class)
{
  trust_table t = table();
  sim_request rq = request(8, 1, 1, CKPT_EVERY_LAYER, ATTN_FLASH2_RMSNORM);
  trust_assessment a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_TP8_CKPT);
  ck_assert_int_eq(a.cls, TRUST_CLASS_TP8_CKPT);
  ck_assert_double_eq(a.band_pct, 10);
  rq = request(8, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert_uint_eq(assess(&t, &rq).flags, 0);
  /* a class without rows in the table falls back to the base band */
  t.cls[TRUST_CLASS_TP8_CKPT].rows = 0;
  rq = request(8, 1, 1, CKPT_EVERY_LAYER, ATTN_FLASH2_RMSNORM);
  ck_assert_double_eq(assess(&t, &rq).band_pct, 6);
}
END_TEST

/* llama-13b: 40 heads. tp 2, mb 8, s 2048: 8 * 20 * 2048^2 fp32 = 2.5 GiB, over the 2 GiB threshold;
 * mb 4 is 1.25 GiB, under it; FlashAttention never materializes the scores. */
START_TEST(test_large_unfused_score_block_is_flagged_by_its_size)
{
  trust_table t = table();
  sim_request rq = request(2, 1, 8, CKPT_EVERY_LAYER, ATTN_TORCH);
  trust_assessment a = assess(&t, &rq);
  ck_assert_double_eq_tol(a.score_block_gib, 2.5, 1e-12);
  ck_assert_uint_eq(a.flags, 1u << TRUST_SCORES);
  ck_assert_int_eq(a.cls, TRUST_CLASS_BASE); /* a memory flag: the time band is the base one */
  rq = request(2, 1, 8, CKPT_EVERY_LAYER, ATTN_FUSED_SOFTMAX);
  ck_assert_uint_eq(assess(&t, &rq).flags, 1u << TRUST_SCORES);
  rq = request(2, 1, 4, CKPT_EVERY_LAYER, ATTN_TORCH);
  ck_assert_uint_eq(assess(&t, &rq).flags, 0);
  rq = request(2, 1, 8, CKPT_EVERY_LAYER, ATTN_FLASH2);
  ck_assert_uint_eq(assess(&t, &rq).flags, 0);
  rq = request(2, 1, 8, CKPT_EVERY_LAYER, ATTN_TORCH);
  g_auto(GStrv) w = trust_warnings(&t, &rq, &a, 1.0);
  ck_assert_uint_eq(g_strv_length(w), 1);
  ck_assert_ptr_nonnull(strstr(w[0], "2.5 GiB"));
  ck_assert_ptr_nonnull(strstr(w[0], "of 10 such calibration runs predicted to fit, 7 ran out of memory"));
}
END_TEST

/* The profile's fragmentation is 0.1392: the verdict is near when the limit is within 0.05 of it,
 * on either side. */
START_TEST(test_oom_risk_flips_at_the_fragmentation_margin)
{
  trust_table t = table();
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  double f = rq.prof.stack.fragmentation;
  const struct { double limit; gboolean risk; } cases[] = {
      {f + 0.049, TRUE}, {f + 0.051, FALSE}, {f - 0.049, TRUE}, {f - 0.051, FALSE}, {f, TRUE}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    trust_assessment a;
    trust_assess(&t, &rq, 79, 80, cases[i].limit, &a);
    ck_assert_msg(!!(a.flags & (1u << TRUST_NEAR_OOM)) == cases[i].risk, "limit %g", cases[i].limit);
    ck_assert_double_eq(a.headroom_gib, 1);
  }
}
END_TEST

/* An uncalibrated profile never gets a calibrated profile's band: the machine is one dimension outside, as far
 * as its peak's doublings from the calibration GPU's, plus one; band = sqrt(base^2 + (4 points x distance)^2),
 * distance the root-sum-square of the dimensions' doublings (hand-computed below). */
START_TEST(test_uncalibrated_profile_widens_by_dimension_and_distance)
{
  trust_table t = table(); /* 4 points per doubling, calibrated on a100-sxm4-80gb, 13B-70B, seq 2048, 4-16 nodes */
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  trust_assessment cal = assess(&t, &rq);
  ck_assert_double_eq(cal.band_pct, 6);
  rq.prof.calibrated_precisions = 0; /* the same figures, marked uncalibrated: the machine alone, 0 + 1 doubling */
  trust_assessment a = assess(&t, &rq);
  ck_assert(a.flags & (1u << TRUST_UNCALIBRATED));
  ck_assert_double_eq_tol(a.band_pct, sqrt(36 + 16), 1e-9);
  ck_assert_double_eq_tol(a.distance, 1, 1e-12);
  g_autofree char *s = trust_flags_string(a.flags);
  ck_assert_str_eq(s, "uncalibrated-profile");
  g_auto(GStrv) w = trust_warnings(&t, &rq, &a, 1.0);
  ck_assert_ptr_nonnull(strstr(w[0], "is not calibrated"));
  /* 8x the peak: 3 + 1 doublings; and 64 nodes: 2 doublings beyond 16: distance sqrt(16 + 4) */
  rq.prof.peak_flops *= 8;
  a = assess(&t, &rq);
  ck_assert_double_eq_tol(a.band_pct, sqrt(36 + 16 * 16), 1e-9);
  rq.l.gpus = 512;
  a = assess(&t, &rq);
  ck_assert_double_eq_tol(a.band_pct, sqrt(36 + 16 * (16 + 4)), 1e-9);
  /* 2048 nodes: 7 doublings beyond 16, farther than 64 */
  rq.l.gpus = 16384;
  trust_assessment far = assess(&t, &rq);
  ck_assert_double_eq_tol(far.band_pct, sqrt(36 + 16 * (16 + 49)), 1e-9);
  ck_assert(far.band_pct > a.band_pct);
  /* the same layout calibrated: one doubling less on the machine (3, the peak's) */
  rq.prof.calibrated_precisions = 1u << PREC_BF16;
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, sqrt(36 + 16 * (9 + 49)), 1e-9);
  /* calibration is per precision: the same profile, fitted in bf16 only, runs an fp8 layout as an uncalibrated
   * machine (its FP8 constants are no fit's); marked fp8 too, it is calibrated again */
  rq.l.precision = PREC_FP8;
  trust_assessment fp8 = assess(&t, &rq);
  ck_assert(fp8.flags & (1u << TRUST_UNCALIBRATED));
  ck_assert_double_eq_tol(fp8.band_pct, sqrt(36 + 16 * (16 + 49)), 1e-9);
  g_auto(GStrv) wf = trust_warnings(&t, &rq, &fp8, 1.0);
  ck_assert_ptr_nonnull(strstr(wf[0], "is not calibrated in fp8"));
  rq.prof.calibrated_precisions |= 1u << PREC_FP8;
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, sqrt(36 + 16 * (9 + 49)), 1e-9);
}
END_TEST

/* Never narrower: over a grid of layouts inside and outside the data (nodes, sequence, model, schedule, cp, links,
 * class), the request on an uncalibrated profile has a strictly wider band than the same request calibrated, and
 * than the table's own calibrated profile; and the shipped H200 (uncalibrated) against the shipped H100 (calibrated,
 * the nemo table's machine, the same peak and links) on every layout of the grid. */
START_TEST(test_uncalibrated_band_is_never_narrower_than_a_calibrated_one)
{
  trust_table t = table();
  trust_table h = t; /* a table calibrated on the H100, as the nemo table */
  g_strlcpy(h.profile, "h100-sxm5-80gb", sizeof h.profile);
  h.ib_gbps = 400, h.nvlink_gbps = 3600;
  GError *err = NULL;
  gpu_profile h100, h200;
  ck_assert_msg(profile_load_with_stack("h100-sxm5-80gb", "study", &h100, &err), "%s", err ? err->message : "");
  ck_assert_msg(profile_load_with_stack("h200-sxm-141gb", "study", &h200, &err), "%s", err ? err->message : "");
  ck_assert(profile_calibrated_for(&h100, PREC_BF16) && !profile_calibrated_for(&h200, PREC_BF16));
  const int gpus[] = {8, 64, 256, 4096};
  const int seqs[] = {1024, 2048, 8192};
  const int pps[] = {1, 2, 4};
  int n = 0;
  for (size_t g = 0; g < G_N_ELEMENTS(gpus); g++)
    for (size_t q = 0; q < G_N_ELEMENTS(seqs); q++)
      for (size_t p = 0; p < G_N_ELEMENTS(pps); p++)
        for (int cp = 1; cp <= 2; cp++) {
          sim_request rq = request(1, pps[p], 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
          rq.l.gpus = gpus[g], rq.l.seq_len = seqs[q], rq.l.cp = cp;
          if (pps[p] == 4) ck_assert(sched_parse("zb-h1", &rq.l.schedule, NULL));
          trust_assessment own = assess(&t, &rq);
          sim_request un = rq;
          un.prof.calibrated_precisions = 0;
          trust_assessment u = assess(&t, &un);
          ck_assert_msg(u.band_pct > own.band_pct, "gpus %d seq %d pp %d cp %d: %g <= %g", gpus[g], seqs[q], pps[p], cp,
                        u.band_pct, own.band_pct);
          sim_request on100 = rq, on200 = rq;
          on100.prof = h100, on200.prof = h200;
          trust_assessment a100 = assess(&h, &on100), a200 = assess(&h, &on200);
          ck_assert(a200.flags & (1u << TRUST_UNCALIBRATED) && !(a100.flags & (1u << TRUST_UNCALIBRATED)));
          ck_assert_msg(a200.band_pct > a100.band_pct, "gpus %d seq %d: h200 %g <= h100 %g", gpus[g], seqs[q],
                        a200.band_pct, a100.band_pct);
          n++;
        }
  ck_assert_int_eq(n, 72);
}
END_TEST

/* A calibrated profile's band grows with the distance outside the data and with the number of dimensions out:
 * nodes x2, x8, x32 beyond 16 (1, 3, 5 doublings) and 2 doublings below 4; then the sequence 2 doublings out too. */
START_TEST(test_calibrated_band_grows_with_the_number_and_distance_of_dimensions)
{
  trust_table t = table();
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  const struct { int gpus; double doublings; } nodes[] = {{256, 1}, {1024, 3}, {4096, 5}, {8, 2}};
  double last = 6;
  for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
    rq.l.gpus = nodes[i].gpus;
    trust_assessment a = assess(&t, &rq);
    ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_NODES);
    ck_assert_double_eq_tol(a.distance, nodes[i].doublings, 1e-12);
    ck_assert_double_eq_tol(a.band_pct, sqrt(36 + 16 * nodes[i].doublings * nodes[i].doublings), 1e-9);
    if (i < 3) ck_assert(a.band_pct > last); /* x2 < x8 < x32 */
    last = a.band_pct;
  }
  rq.l.gpus = 4096, rq.l.seq_len = 8192; /* two dimensions: 5 and 2 doublings in quadrature */
  trust_assessment two = assess(&t, &rq);
  ck_assert_double_eq_tol(two.band_pct, sqrt(36 + 16 * (25 + 4)), 1e-9);
  ck_assert(two.band_pct > last);
  /* the table's out-of-sample P90 scales every class by its ratio to the in-sample base (9 / 6), never below 1 */
  t.oos_p90_pct = 9;
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, 9, 1e-9);
  rq = request(1, 2, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, 22.5, 1e-9);
  rq.l.seq_len = 8192;
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, sqrt(22.5 * 22.5 + 64), 1e-9);
  t.oos_p90_pct = 4; /* below the in-sample P90: the in-sample stands */
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert_double_eq_tol(assess(&t, &rq).band_pct, 6, 1e-9);
}
END_TEST

START_TEST(test_outside_the_calibration_data_widens_the_band)
{
  trust_table t = table();
  sim_request rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  rq.l.seq_len = 8192;
  trust_assessment a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_SEQ);
  ck_assert_double_eq_tol(a.band_pct, 10, 1e-9); /* 2 doublings at 4 points: sqrt(6^2 + 8^2) */
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  rq.l.gpus = 256; /* 32 nodes */
  ck_assert_uint_eq(assess(&t, &rq).flags, 1u << TRUST_OUT_NODES);
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert_uint_eq(assess(&t, &rq).flags, 1u << TRUST_OUT_MODEL);
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  rq.prof.ib_bytes_per_s *= 2; /* the what-if --ib-gbps 400 */
  a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_PLATFORM);
  ck_assert_double_eq_tol(a.band_pct, sqrt(52), 1e-9); /* IB one doubling out */
  g_auto(GStrv) w = trust_warnings(&t, &rq, &a, 1.0);
  ck_assert_ptr_nonnull(strstr(w[0], "ib_gbps 400 (calibrated 200)"));
  rq = request(1, 2, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  g_strlcpy(rq.prof.name, "h100", sizeof rq.prof.name);
  a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_PP2 | 1u << TRUST_OUT_PLATFORM);
  ck_assert_double_eq_tol(a.band_pct, sqrt(15 * 15 + 4 * 4), 1e-9); /* the pp2 band, another machine (same peak): 1 */
  g_autofree char *s = trust_flags_string(a.flags);
  ck_assert_str_eq(s, "pp2-cost;outside:platform");
  rq = request(1, 4, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert(sched_parse("zb-h1", &rq.l.schedule, NULL));
  a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_SCHEDULE);
  ck_assert_double_eq_tol(a.band_pct, sqrt(52), 1e-9); /* a schedule: one */
  g_auto(GStrv) ws = trust_warnings(&t, &rq, &a, 1.0);
  ck_assert_ptr_nonnull(strstr(ws[0], "schedule zb-h1 (calibrated 1f1b)"));
  /* at pp 1 there is no pipeline to schedule: every schedule runs the same program, none is outside */
  rq = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  ck_assert(sched_parse("interleaved", &rq.l.schedule, NULL));
  a = assess(&t, &rq);
  ck_assert_uint_eq(a.flags, 0);
  /* the partial recomputations: no calibration run recomputed part of a layer (every_layer is calibrated) */
  const layout_ckpt partial[] = {CKPT_SELECTIVE, CKPT_MLP};
  for (size_t i = 0; i < G_N_ELEMENTS(partial); i++) {
    rq = request(1, 1, 1, partial[i], ATTN_FLASH2_RMSNORM);
    a = assess(&t, &rq);
    ck_assert_uint_eq(a.flags, 1u << TRUST_OUT_CKPT);
    ck_assert_double_eq_tol(a.band_pct, sqrt(52), 1e-9);
    g_autofree char *fs = trust_flags_string(a.flags);
    ck_assert_str_eq(fs, "outside:checkpointing");
    g_auto(GStrv) wc = trust_warnings(&t, &rq, &a, 1.0);
    g_autofree char *what = g_strdup_printf("checkpointing %s (calibrated none and every_layer)", layout_ckpt_name(partial[i]));
    ck_assert_ptr_nonnull(strstr(wc[0], what));
  }
}
END_TEST

START_TEST(test_table_file_round_trips_and_is_strict)
{
  trust_table t = table(), back;
  g_autofree char *path = tmp_path("t.json");
  FILE *f = fopen(path, "w");
  trust_put(&t, f);
  fclose(f);
  GError *err = NULL;
  ck_assert_msg(trust_load_file(path, &back, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(memcmp(&t, &back, sizeof t), 0);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  const struct { const char *from, *to, *message; } bad[] = {
      {"\"pp2_p90_pct\":", "\"pp2_p09_pct\":", "pp2_p09_pct"},               /* a misspelt key */
      {"\"fragmentation_margin\":\t0.05", "\"fragmentation_margin\":\t2", "fragmentation_margin: 2 is out of range"},
      {"\"nodes_min\":\t4", "\"nodes_min\":\t40", "a *_min above its *_max"},
      {"\"band_pct_per_doubling\":\t4", "\"band_pct_per_doubling\":\t0", "band_pct_per_doubling: 0 is out of range"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_ptr_nonnull(strstr(text, bad[i].from));
    g_autoptr(GString) s = g_string_new(text);
    g_string_replace(s, bad[i].from, bad[i].to, 1);
    ck_assert(g_file_set_contents(path, s->str, -1, NULL));
    ck_assert(!trust_load_file(path, &back, &err));
    ck_assert_msg(strstr(err->message, bad[i].message), "%s", err->message);
    g_clear_error(&err);
  }
}
END_TEST

START_TEST(test_shipped_table_loads)
{
  trust_table t;
  GError *err = NULL;
  ck_assert_msg(trust_load_named("study", &t, &err), "%s", err ? err->message : "");
  ck_assert_str_eq(t.profile, "a100-sxm4-80gb");
  ck_assert(t.cls[TRUST_CLASS_BASE].rows > 0 && t.cls[TRUST_CLASS_BASE].p90_pct > 0);
}
END_TEST

/* A row of validate for val_trust_table: measured and predicted times, flags from a request. */
static val_row vrow(const trust_table *t, const sim_request *rq, meas_status m, double ms, pred_status p, double ps)
{
  val_row v = {.meas = m, .meas_step_s = ms, .pred = p, .pred_step_s = ps};
  trust_assess(t, rq, 40, 80, 1.0, &v.trust);
  return v;
}

START_TEST(test_validate_table_statistics_by_hand)
{
  trust_table prior = table();
  sim_request base = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  sim_request pp2 = request(1, 2, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  sim_request big = request(1, 1, 1, CKPT_NONE, ATTN_FLASH2_RMSNORM);
  big.l.gpus = 128; /* 16 nodes */
  sim_request scores = request(2, 1, 8, CKPT_EVERY_LAYER, ATTN_TORCH);
  val_row rows[] = {
      vrow(&prior, &base, MEAS_OK, 10, PRED_OK, 9),   /* -10% */
      vrow(&prior, &base, MEAS_OK, 10, PRED_OK, 10.2), /* +2% */
      vrow(&prior, &big, MEAS_OK, 20, PRED_OK, 21),   /* +5% */
      vrow(&prior, &pp2, MEAS_OK, 10, PRED_OK, 8),    /* -20%: the pp2 class */
      vrow(&prior, &scores, MEAS_OOM, NAN, PRED_OK, 30),
      vrow(&prior, &scores, MEAS_OK, 10, PRED_OK, 10),
      vrow(&prior, &base, MEAS_OOM, NAN, PRED_OOM, 5), /* labelled, not timed */
  };
  rows[1].invalid[0] = 'x'; /* left out of every statistic */
  trust_table t;
  GError *err = NULL;
  ck_assert(val_trust_table(rows, G_N_ELEMENTS(rows), &prior, &base.prof, "c", &t, &err));
  /* base class: |-10|, |+5|, |0| (the scores row is base for time) -> P90 of {0, 5, 10} = 9, mean -5/3 */
  ck_assert_double_eq(t.cls[TRUST_CLASS_BASE].rows, 3);
  ck_assert_double_eq_tol(t.cls[TRUST_CLASS_BASE].p90_pct, 9, 1e-9);
  ck_assert_double_eq_tol(t.cls[TRUST_CLASS_BASE].bias_pct, -5.0 / 3, 1e-9);
  ck_assert_double_eq(t.cls[TRUST_CLASS_PP2].rows, 1);
  ck_assert_double_eq_tol(t.cls[TRUST_CLASS_PP2].p90_pct, 20, 1e-9);
  ck_assert_double_eq(t.cls[TRUST_CLASS_TP8_CKPT].rows, 0);
  ck_assert_double_eq(t.scores_rows, 2);
  ck_assert_double_eq(t.scores_oom, 1);
  ck_assert_double_eq(t.nodes_min, 8);
  ck_assert_double_eq(t.nodes_max, 16);
  ck_assert_double_eq(t.seq_len_min, 2048);
  ck_assert_double_eq(t.model_params_min, model_params(&base.m));
  ck_assert_double_eq(t.fragmentation_margin, prior.fragmentation_margin); /* kept from the prior */
  ck_assert_str_eq(t.comment, "c");
  /* no timed row: refused */
  ck_assert(!val_trust_table(rows + 6, 1, &prior, &base.prof, "c", &t, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "--trust-out"));
  g_clear_error(&err);
}
END_TEST

static Suite *trust_suite(void)
{
  Suite *s = suite_create("trust");
  TCase *tc = tcase_create("regimes");
  tcase_add_test(tc, test_base_layout_has_no_flag_and_the_base_band);
  tcase_add_test(tc, test_context_parallelism_is_outside_the_calibration_and_widens_the_band);
  tcase_add_test(tc, test_pp2_at_tp_up_to_2_is_its_class);
  tcase_add_test(tc, test_tp8_with_checkpointing_is_its_class);
  tcase_add_test(tc, test_large_unfused_score_block_is_flagged_by_its_size);
  tcase_add_test(tc, test_oom_risk_flips_at_the_fragmentation_margin);
  tcase_add_test(tc, test_outside_the_calibration_data_widens_the_band);
  tcase_add_test(tc, test_uncalibrated_profile_widens_by_dimension_and_distance);
  tcase_add_test(tc, test_uncalibrated_band_is_never_narrower_than_a_calibrated_one);
  tcase_add_test(tc, test_calibrated_band_grows_with_the_number_and_distance_of_dimensions);
  tcase_add_test(tc, test_shipped_table_loads);
  tcase_add_test(tc, test_validate_table_statistics_by_hand);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("file");
  tcase_add_checked_fixture(tf, tmpdir_setup, tmpdir_teardown);
  tcase_add_test(tf, test_table_file_round_trips_and_is_strict);
  suite_add_tcase(s, tf);
  return s;
}

int main(void) { return check_run(trust_suite()); }
