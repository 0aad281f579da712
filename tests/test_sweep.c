/* test_sweep -- the pool's fast path and memory verdict, and the sweep's enumeration and ranking,
 * against answers known without the code under test: a closed-form count of the layout space, an
 * affine law, and the full replay the fast path stands for. */
#include <check.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "analysis/pool.h"
#include "analysis/predict.h"
#include "analysis/sweep.h"
#include "analysis/sweep_plot.h"
#include "analysis/sweep_report.h"
#include "check_main.h"
#include "check_table.h"
#include "workloads/schedule.h"
#include "test_layout.h"

static sim_request request(const char *model, layout l)
{
  sim_request rq = {.l = l, .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named(model, &rq.m, &err), "%s", err ? err->message : "");
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.capacity_gib = rq.prof.memory_gib;
  return rq;
}

/* T(m) = a + b m for every time of the step: the combination of two runs at m1, m2 gives it at m,
 * bubble fraction, MFU and tokens/s included (FLOPs and tokens linear in m). */
START_TEST(test_combine_extrapolates_every_time_affinely_and_rescales_mfu)
{
  prediction p1 = {.status = PRED_OK, .how = PRED_HOW_FULL, .m = 5, .step_time_s = 2 + 0.5 * 5, .mfu = 0.4,
                   .tokens_per_s = 1000};
  prediction p2 = p1;
  p2.m = 6;
  p2.step_time_s = 2 + 0.5 * 6;
  for (int c = 0; c < TL_N; c++) {
    p1.seconds[c] = c + 0.1 * c * 5;
    p2.seconds[c] = c + 0.1 * c * 6;
  }
  prediction p = pool_combine(&p1, &p2, 100);
  ck_assert_int_eq(p.how, PRED_HOW_FAST);
  ck_assert_double_eq_tol(p.step_time_s, 2 + 0.5 * 100, 1e-12);
  for (int c = 0; c < TL_N; c++) ck_assert_double_eq_tol(p.seconds[c], c + 0.1 * c * 100, 1e-12);
  ck_assert_double_eq_tol(p.bubble_fraction, p.seconds[TL_PP_WAIT] / p.step_time_s, 1e-12);
  /* model FLOPs per step x100/5, time 4.5 -> 52 s: MFU 0.4 * 20 * 4.5 / 52 */
  ck_assert_double_eq_tol(p.mfu, 0.4 * (100.0 / 5) * 4.5 / 52, 1e-12);
  ck_assert_double_eq_tol(p.tokens_per_s, 1000 * (100.0 / 5) * 4.5 / 52, 1e-9);
  /* a time constant in m but for rounding (2e-15 then 1e-15 s) extrapolates below 0 (2e-15 - 95e-15): it is 0,
   * never negative (merge refuses a negative time) */
  p1.seconds[TL_IDLE] = 2e-15;
  p2.seconds[TL_IDLE] = 1e-15;
  ck_assert_double_eq(pool_combine(&p1, &p2, 100).seconds[TL_IDLE], 0);
}
END_TEST

/* The fast path stands for the full replay: same step time (to rounding), breakdown and verdict,
 * on a pipelined layout with many micro-batches (m = 32 > 2 (pp + 2)). */
START_TEST(test_fast_prediction_equals_the_full_replay)
{
  layout l = test_layout(8, 2, 2, 1, CKPT_NONE);
  l.global_batch = 64;
  l.seq_len = 1024;
  sim_request rq = request("llama-7b", l), *rqs[] = {&rq};
  prediction full, fast;
  pool_cfg cf = {.jobs = 1, .fidelity = POOL_FULL}, cq = {.jobs = 1, .fidelity = POOL_AUTO, .prune_oom = TRUE};
  pool_run(rqs, 1, &cf, &full);
  pool_run(rqs, 1, &cq, &fast);
  ck_assert_int_eq(full.how, PRED_HOW_FULL);
  ck_assert_int_eq(fast.how, PRED_HOW_FAST);
  ck_assert_int_eq(fast.m, 32);
  ck_assert_int_eq(fast.m1, 2); /* pp: the first count with the schedule's full shape on every stage */
  ck_assert_int_eq(fast.m2, 3);
  ck_assert_int_eq(full.status, fast.status);
  ck_assert_double_eq_tol(fast.step_time_s / full.step_time_s, 1.0, 1e-9);
  ck_assert_double_eq_tol(fast.mfu / full.mfu, 1.0, 1e-9);
  for (int c = 0; c < TL_N; c++) ck_assert_double_eq_tol(fast.seconds[c], full.seconds[c], 1e-9 * full.step_time_s);
  ck_assert_double_eq_tol(fast.peak_gib, full.peak_gib, 1e-9);
  ck_assert(full.energy_j > 0);
  ck_assert_double_eq_tol(fast.energy_j / full.energy_j, 1.0, 1e-9); /* power x affine seconds: affine too */
}
END_TEST

/* Each schedule's fast path stands for its full replay on one pipelined layout (pp 4, m 32): the
 * counts it claims (1f1b, zb-h1: 4 and 5; interleaved V 2: 8 and 12; dualpipev 2P + 1 and 2P + 2) extrapolate every time exactly,
 * GPipe claims none and is replayed whole; and the memory verdict without a replay, from the graph at
 * the count where the schedule says its peak is reached, is the full replay's peak. */
START_TEST(test_fast_equals_full_and_memory_verdict_for_every_schedule)
{
  static const struct { const char *name; int V, m1, m2; } cases[] = {
      {"1f1b", 1, 4, 5}, {"gpipe", 1, 0, 0}, {"interleaved", 2, 8, 12}, {"zb-h1", 1, 4, 5}, {"dualpipev", 2, 9, 10}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    layout l = test_layout(8, 1, 4, 1, CKPT_NONE);
    l.global_batch = 64;
    l.seq_len = 512; /* GPipe holds all 32 micro-batches: at 1024 tokens they do not fit in 80 GiB */
    ck_assert(sched_parse(cases[i].name, &l.schedule, NULL));
    l.virtual_stages = cases[i].V;
    sim_request rq = request("llama-7b", l), *rqs[] = {&rq};
    prediction full, fast, mem;
    /* fast: auto replays m = 32 in full where the three runs would replay more (interleaved: 8 + 12 + 24) */
    pool_cfg cf = {.jobs = 1, .fidelity = POOL_FULL}, cq = {.jobs = 1, .fidelity = POOL_FAST, .prune_oom = TRUE},
             cm = {.jobs = 1, .memory_only = TRUE};
    pool_run(rqs, 1, &cf, &full);
    pool_run(rqs, 1, &cq, &fast);
    pool_run(rqs, 1, &cm, &mem);
    ck_assert_msg(full.status == PRED_OK, "%s: %s", cases[i].name, full.error);
    ck_assert_int_eq(fast.how, cases[i].m1 ? PRED_HOW_FAST : PRED_HOW_FULL);
    ck_assert_int_eq(fast.m1, cases[i].m1);
    ck_assert_int_eq(fast.m2, cases[i].m2);
    ck_assert_msg(fabs(fast.step_time_s / full.step_time_s - 1) < 1e-9, "%s: fast %.12g s, full %.12g s",
                  cases[i].name, fast.step_time_s, full.step_time_s);
    for (int c = 0; c < TL_N; c++) ck_assert_double_eq_tol(fast.seconds[c], full.seconds[c], 1e-9 * full.step_time_s);
    ck_assert_double_eq_tol(fast.peak_gib, full.peak_gib, 1e-9);
    ck_assert_double_eq_tol(mem.peak_gib, full.peak_gib, 1e-9);
  }
}
END_TEST

/* DualPipeV on an MoE (qwen3-30b-a3b, ep 8, H100, nemo), with and without the all-to-all overlap, at pp 2 and 4:
 * the fast path from the schedule's counts equals the full replay of m = 24 micro-batches to 1e-9. The round
 * 2P -> 2P + 1 is not yet a steady one here (0.1% shorter: counts 2P and 2P + 1 extrapolate 0.1% off). */
START_TEST(test_dualpipev_fast_path_is_exact_on_an_moe_with_and_without_the_overlap)
{
  for (int pp = 2; pp <= 4; pp += 2)
    for (int ov = 0; ov <= 1; ov++) {
      layout l = test_layout(8 * pp, 1, pp, 1, CKPT_NONE);
      l.ep = 8;
      l.global_batch = 8 * 24;
      l.seq_len = 1024;
      l.virtual_stages = 2;
      l.overlap_moe_ep_comm = ov;
      ck_assert(sched_parse("dualpipev", &l.schedule, NULL));
      sim_request rq = {.l = l, .gen = gen_default_options()}, *rqs[] = {&rq};
      GError *err = NULL;
      ck_assert_msg(model_load_named("qwen3-30b-a3b", &rq.m, &err), "%s", err ? err->message : "");
      ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &rq.prof, &err));
      rq.capacity_gib = 1000;
      prediction full, fast;
      /* fast: auto replays m = 24 in full (the three runs would replay 2P + 1, 2P + 2 and 4P + 4) */
      pool_cfg cf = {.jobs = 1, .fidelity = POOL_FULL}, cq = {.jobs = 1, .fidelity = POOL_FAST};
      pool_run(rqs, 1, &cf, &full);
      pool_run(rqs, 1, &cq, &fast);
      ck_assert_msg(full.status == PRED_OK, "pp %d overlap %d: %s", pp, ov, full.error);
      ck_assert_int_eq(fast.how, PRED_HOW_FAST);
      ck_assert_msg(fabs(fast.step_time_s / full.step_time_s - 1) < 1e-9, "pp %d overlap %d: fast %.12g s, full %.12g s",
                    pp, ov, fast.step_time_s, full.step_time_s);
    }
}
END_TEST

/* The memory verdict without a replay is the replay's: the same peak, on layouts with and without
 * pipelining and checkpointing, one of them out of memory. */
START_TEST(test_memory_verdict_without_replay_is_the_replays)
{
  layout ls[] = {test_layout(8, 1, 4, 2, CKPT_NONE), test_layout(8, 2, 2, 1, CKPT_EVERY_LAYER),
                 test_layout(8, 1, 1, 4, CKPT_NONE)};
  for (size_t i = 0; i < G_N_ELEMENTS(ls); i++) {
    ls[i].global_batch = 64;
    ls[i].seq_len = 1024;
    sim_request rq = request("llama-7b", ls[i]), *rqs[] = {&rq};
    prediction full, mem;
    pool_cfg cf = {.jobs = 1, .fidelity = POOL_FULL}, cm = {.jobs = 1, .memory_only = TRUE};
    pool_run(rqs, 1, &cf, &full);
    pool_run(rqs, 1, &cm, &mem);
    ck_assert_int_eq(mem.how, PRED_HOW_MEMORY);
    ck_assert_int_eq(mem.status, full.status);
    ck_assert_double_eq_tol(mem.peak_gib, full.peak_gib, 1e-9);
    ck_assert_double_eq_tol(mem.fragmentation_limit, full.fragmentation_limit, 1e-9);
  }
  /* the third holds the whole 7B model's weights and gradients (28 GB) on each GPU: not in 20 GiB */
  layout big = ls[2];
  sim_request rq = request("llama-7b", big), *rqs[] = {&rq};
  rq.capacity_gib = 20;
  prediction mem;
  pool_cfg cm = {.jobs = 1, .memory_only = TRUE};
  pool_run(rqs, 1, &cm, &mem);
  ck_assert_int_eq(mem.status, PRED_OOM);
}
END_TEST

/* The default space of llama-7b (32 heads, 32 layers) on 8 A100 (every kernel), global batch 16, counted by hand:
 * (tp, pp) with tp*pp | 8: tp1 pp1,2,4,8; tp2 pp1,2,4; tp4 pp1,2; tp8 pp1. Micro-batches: the
 * divisors of 16/dp (dp 8 -> 2 values, 4 -> 3, 2 -> 4, 1 -> 5). sp: 1 value at tp 1, else 2; 2
 * checkpointing modes x 6 kernels = 12. tp1: (2+3+4+5) 12 = 168; tp2: (3+4+5) 2 12 = 288;
 * tp4: (4+5) 2 12 = 216; tp8: 5 2 12 = 120; 792 in all, none invalid. */
START_TEST(test_default_space_is_every_valid_layout)
{
  sweep_spec s = {.seq_len = 1024, .global_batch = 16, .zero = 1, .gen = gen_default_options(), .shard_i = 1, .shard_n = 1,
                  .pool = {.jobs = 1, .memory_only = TRUE}};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &s.m, &err));
  s.profiles = g_ptr_array_new();
  g_ptr_array_add(s.profiles, "a100-sxm4-80gb");
  s.stacks = g_ptr_array_new();
  g_ptr_array_add(s.stacks, "study");
  s.gpus = g_array_new(FALSE, FALSE, sizeof(int));
  int eight = 8;
  g_array_append_val(s.gpus, eight);
  g_autoptr(csv_table) t = sweep_run(&s, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(t->rows->len, 792);
  int c = csv_column(t, "status");
  for (guint r = 0; r < t->rows->len; r++) ck_assert_str_ne(csv_cell(t, r, c), "invalid");
  /* a listed value the model does not allow is counted, not dropped: tp 3 */
  GArray *tp = g_array_new(FALSE, FALSE, sizeof(int));
  int three = 3;
  g_array_append_val(tp, three);
  s.layout[AX_TP] = tp;
  g_autoptr(csv_table) t3 = sweep_run(&s, &err);
  ck_assert_uint_gt(t3->rows->len, 0);
  for (guint r = 0; r < t3->rows->len; r++) ck_assert_str_eq(csv_cell(t3, r, c), "invalid");
  g_array_unref(tp);
  s.layout[AX_TP] = NULL;
  /* on the H100 the default space has its profile's kernels only, the flash ones (sweep_kernels): 2 of 6, so
   * 792 / 6 x 2 = 264 layouts, none of them the unfused torch or fused-softmax */
  g_ptr_array_index(s.profiles, 0) = "h100-sxm5-80gb";
  g_ptr_array_index(s.stacks, 0) = "nemo";
  g_autoptr(csv_table) th = sweep_run(&s, &err);
  ck_assert_msg(th != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(th->rows->len, 264);
  int ka = csv_column(th, "attention_kernel");
  for (guint r = 0; r < th->rows->len; r++)
    ck_assert_msg(g_str_has_prefix(csv_cell(th, r, ka), "flash2"), "%s", csv_cell(th, r, ka));
  g_array_unref(s.gpus);
  g_ptr_array_unref(s.profiles);
  g_ptr_array_unref(s.stacks);
}
END_TEST

static int sched_id_of(const char *name)
{
  int id = -1;
  ck_assert(sched_parse(name, &id, NULL));
  return id;
}

/* A list of the values lo..hi. */
static GArray *range(int lo, int hi)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  for (int v = lo; v <= hi; v++) g_array_append_val(a, v);
  return a;
}

static GArray *values(int n, const int *v)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(a, v, (guint)n);
  return a;
}

static void spec_clear(sweep_spec *s)
{
  for (int a = 0; a < AX_N; a++)
    if (s->layout[a]) g_array_unref(s->layout[a]);
  g_array_unref(s->gpus);
  g_ptr_array_unref(s->profiles);
  g_ptr_array_unref(s->stacks);
}

static sweep_spec spec_of(const char *model, int gb, sweep_space space, int n_gpus, const int *gpus)
{
  sweep_spec s = {.seq_len = 1024, .global_batch = gb, .zero = 1, .space = space, .gen = gen_default_options(),
                  .shard_i = 1, .shard_n = 1, .pool = {.jobs = 1, .memory_only = TRUE}};
  GError *err = NULL;
  ck_assert_msg(model_load_named(model, &s.m, &err), "%s", err ? err->message : "");
  s.profiles = g_ptr_array_new();
  g_ptr_array_add(s.profiles, "h100-sxm5-80gb");
  s.stacks = g_ptr_array_new();
  g_ptr_array_add(s.stacks, "study");
  s.gpus = values(n_gpus, gpus);
  return s;
}

/* The size of a sweep is counted per axis, without enumerating (analysis/sweep.c, "counted
 * arithmetically"): on spaces that exercise every coupling of the enumeration (dp 1 and the overlaps'
 * and ZeRO's first values, the full space's rules of ZeRO, the overlaps, split backwards and virtual
 * stages, selective checkpointing with flash kernels, listed tp, pp and cp that do not divide the GPUs,
 * micro-batches at each data-parallel degree, two machines whose profiles sweep different kernels), the count
 * is what walking the enumeration gives. */
START_TEST(test_the_sweeps_count_is_its_enumerations)
{
  static const int gpus[] = {8, 12, 16, 48};
  static const int tps[] = {1, 2, 3, 4, 8, 16}, pps[] = {1, 2, 3, 4, 5, 8, 64}, cps[] = {1, 2, 3, 4};
  static const int mbs[] = {1, 2, 4, 5}, zeros[] = {0, 1, 2, 3}, both[] = {0, 1}, vss[] = {1, 2, 4};
  for (int c = 0; c < 8; c++) {
    sweep_spec s = spec_of("llama-7b", c % 2 ? 96 : 64, c < 4 ? SWEEP_SPACE_FULL : SWEEP_SPACE_DEFAULT, 4, gpus);
    if (c % 4 >= 1) { /* listed tp, pp and cp: values that do not divide the GPUs among them */
      s.layout[AX_TP] = values(6, tps);
      s.layout[AX_PP] = values(7, pps);
      s.layout[AX_CP] = values(4, cps);
    }
    if (c % 4 == 2) s.layout[AX_MB] = values(4, mbs);
    if (c >= 4 && c % 2) g_ptr_array_add(s.profiles, "a100-sxm4-80gb"); /* a machine sweeping other kernels */
    if (c % 4 == 3 || c == 4) { /* ZeRO, the overlaps, every schedule and virtual stages listed */
      s.layout[AX_ZERO] = values(4, zeros);
      s.layout[AX_OGR] = values(2, both);
      s.layout[AX_OPG] = values(2, both);
      s.layout[AX_SCHED] = range(0, sched_count() - 1);
      s.layout[AX_VS] = values(3, vss);
    }
    GError *err = NULL;
    double counted = sweep_count_layouts(&s, FALSE, &err), walked = sweep_count_layouts(&s, TRUE, &err);
    ck_assert_msg(walked > 0, "case %d: %s", c, err ? err->message : "");
    ck_assert_msg(counted == walked, "case %d: counted %.0f, the enumeration has %.0f", c, counted, walked);
    spec_clear(&s);
  }
}
END_TEST

/* The full space of llama-7b at tp 1, micro-batch 1, checkpointing none on `gpus` GPUs, at the listed pp values
 * (taken), the flash2 kernel alone or every kernel. */
static sweep_spec full_tp1_mb1(int gb, const int *gpus, GArray *pps, gboolean flash2_only)
{
  static const int one[] = {1};
  int none = CKPT_NONE, flash2 = ATTN_FLASH2;
  sweep_spec f = spec_of("llama-7b", gb, SWEEP_SPACE_FULL, 1, gpus);
  f.layout[AX_TP] = values(1, one);
  f.layout[AX_PP] = pps;
  f.layout[AX_MB] = values(1, one);
  f.layout[AX_CKPT] = values(1, &none);
  if (flash2_only) f.layout[AX_ATTN] = values(1, &flash2);
  return f;
}

/* Below its fewest stages a schedule is the default's step under another name (zb-h1 at pp 1: each W right after
 * its B; interleaved: nothing to interleave with), which layout_validate refuses: a sweep listing every schedule
 * but 1f1b over pp 1 and 2 enumerates, at pp 1, 1f1b once in their place and the schedules that are their own
 * there (gpipe: all forwards first; dualpipev: the V's two chunks on one rank, its F&B pairs), and at pp 2 every
 * listed one; no row is invalid. The full space at pp 1: neither of the two, its count its enumeration's. */
START_TEST(test_schedules_below_their_fewest_stages_are_enumerated_as_the_default)
{
  static const int eight[] = {8}, one[] = {1}, zero[] = {0}, pps[] = {1, 2}, two[] = {2};
  sweep_spec s = spec_of("llama-7b", 64, SWEEP_SPACE_DEFAULT, 1, eight);
  int none = CKPT_NONE, flash2 = ATTN_FLASH2;
  s.layout[AX_TP] = values(1, one);
  s.layout[AX_PP] = values(2, pps);
  s.layout[AX_MB] = values(1, one);
  s.layout[AX_SP] = values(1, zero);
  s.layout[AX_CKPT] = values(1, &none);
  s.layout[AX_ATTN] = values(1, &flash2);
  s.layout[AX_SCHED] = range(1, sched_count() - 1); /* every schedule but 1f1b */
  s.layout[AX_VS] = values(1, two);                /* the chunked ones' */
  GError *err = NULL;
  g_autoptr(csv_table) t = sweep_run(&s, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  int pc = csv_column(t, "pp"), sc = csv_column(t, "schedule"), st = csv_column(t, "status");
  g_autoptr(GString) at_pp1 = g_string_new(NULL), at_pp2 = g_string_new(NULL);
  for (guint r = 0; r < t->rows->len; r++) {
    ck_assert_msg(strcmp(csv_cell(t, r, st), "invalid") != 0, "row %u (pp %s, %s) invalid", r, csv_cell(t, r, pc),
                  csv_cell(t, r, sc));
    GString *at = !strcmp(csv_cell(t, r, pc), "1") ? at_pp1 : at_pp2;
    g_string_append_printf(at, "%s%s", at->len ? " " : "", csv_cell(t, r, sc));
  }
  ck_assert_str_eq(at_pp1->str, "gpipe 1f1b dualpipev"); /* in the list's order, 1f1b in interleaved's place */
  ck_assert_str_eq(at_pp2->str, "gpipe interleaved zb-h1 dualpipev");
  ck_assert(sweep_count_layouts(&s, FALSE, &err) == t->rows->len);
  spec_clear(&s);
  sweep_spec f = full_tp1_mb1(64, eight, values(1, one), TRUE);
  g_autoptr(csv_table) tf = sweep_run(&f, &err);
  ck_assert_msg(tf != NULL, "%s", err ? err->message : "");
  ck_assert_uint_gt(tf->rows->len, 0);
  int fsc = csv_column(tf, "schedule");
  for (guint r = 0; r < tf->rows->len; r++)
    ck_assert_msg(sched_min_stages(sched_id_of(csv_cell(tf, r, fsc))) == 1, "%s at pp 1", csv_cell(tf, r, fsc));
  ck_assert(sweep_count_layouts(&f, FALSE, &err) == tf->rows->len);
  spec_clear(&f);
}
END_TEST

/* The full space enumerates only virtual stages its schedules take: dualpipev its V's two chunks alone (sched_def.
 * fixed_chunks), and a chunked schedule not at all at a pp where no count splits the layers (llama-7b's 32 layers
 * at pp 32: interleaved needs 2 chunks of a layer per stage, dualpipev 2 x 32 virtual stages); at cp > 1 only
 * the flash kernels; a schedule only at the micro-batch counts its check takes. No row invalid, the count its
 * enumeration's. */
START_TEST(test_the_full_space_enumerates_only_valid_virtual_stages)
{
  static const int sixtyfour[] = {64}, one[] = {1}, pps[] = {2, 16, 32};
  sweep_spec f = full_tp1_mb1(128, sixtyfour, values(3, pps), TRUE); /* m >= 2 pp: dualpipev's fewest */
  GError *err = NULL;
  g_autoptr(csv_table) t = sweep_run(&f, &err);
  ck_assert_msg(t != NULL, "%s", err ? err->message : "");
  int pc = csv_column(t, "pp"), sc = csv_column(t, "schedule"), vc = csv_column(t, "virtual_stages"),
      st = csv_column(t, "status");
  int dualpipev = 0, inter_pp32 = 0, inter = 0;
  for (guint r = 0; r < t->rows->len; r++) {
    ck_assert_msg(strcmp(csv_cell(t, r, st), "invalid") != 0, "row %u (pp %s, %s v%s) invalid", r, csv_cell(t, r, pc),
                  csv_cell(t, r, sc), csv_cell(t, r, vc));
    if (!strcmp(csv_cell(t, r, sc), "dualpipev")) {
      ck_assert_str_eq(csv_cell(t, r, vc), "2");
      dualpipev++;
    }
    if (!strcmp(csv_cell(t, r, sc), "interleaved")) *(!strcmp(csv_cell(t, r, pc), "32") ? &inter_pp32 : &inter) += 1;
  }
  ck_assert_int_gt(dualpipev, 0);
  ck_assert_int_gt(inter, 0);
  ck_assert_int_eq(inter_pp32, 0);
  ck_assert(sweep_count_layouts(&f, FALSE, &err) == t->rows->len);
  spec_clear(&f);
  /* and only flash kernels at cp > 1 (TransformerEngine's ring), every kernel at cp 1 */
  sweep_spec k = full_tp1_mb1(128, sixtyfour, values(1, one), FALSE);
  g_autoptr(csv_table) tk = sweep_run(&k, &err);
  ck_assert_msg(tk != NULL, "%s", err ? err->message : "");
  int kc = csv_column(tk, "cp"), ka = csv_column(tk, "attention_kernel"), ks = csv_column(tk, "status");
  int flash_cp = 0, other_cp1 = 0;
  for (guint r = 0; r < tk->rows->len; r++) {
    ck_assert_msg(strcmp(csv_cell(tk, r, ks), "invalid") != 0, "row %u (cp %s, %s) invalid", r, csv_cell(tk, r, kc),
                  csv_cell(tk, r, ka));
    layout_attn a = 0;
    for (int i = 0; i < layout_enum_sweep_count(layout_enum_field("attention_kernel"), TRUE); i++)
      if (!strcmp(layout_attn_name((layout_attn)i), csv_cell(tk, r, ka))) a = (layout_attn)i;
    if (strcmp(csv_cell(tk, r, kc), "1")) flash_cp += layout_attn_is_flash(a);
    else other_cp1 += !layout_attn_is_flash(a);
  }
  ck_assert_int_gt(flash_cp, 0);
  ck_assert_int_gt(other_cp1, 0);
  ck_assert(sweep_count_layouts(&k, FALSE, &err) == tk->rows->len);
  spec_clear(&k);
  /* and a schedule only at the micro-batches its check takes: dualpipev at 2 pp = 4 or more per step (pp 2, 128
   * sequences: dp 32 / cp and every micro-batch dividing the replica's share), the others at fewer too */
  static const int two[] = {2};
  sweep_spec d = full_tp1_mb1(128, sixtyfour, values(1, two), TRUE);
  g_array_unref(d.layout[AX_MB]);
  d.layout[AX_MB] = NULL;
  g_autoptr(csv_table) td = sweep_run(&d, &err);
  ck_assert_msg(td != NULL, "%s", err ? err->message : "");
  int dm = csv_column(td, "micro_batch"), dsc = csv_column(td, "schedule"), dst = csv_column(td, "status"),
      dcp = csv_column(td, "cp");
  int dualpipev_rows = 0, others_below = 0;
  for (guint r = 0; r < td->rows->len; r++) {
    ck_assert_msg(strcmp(csv_cell(td, r, dst), "invalid") != 0, "row %u (%s, mb %s) invalid", r, csv_cell(td, r, dsc),
                  csv_cell(td, r, dm));
    int cpv = atoi(csv_cell(td, r, dcp)), mbv = atoi(csv_cell(td, r, dm));
    ck_assert_msg(cpv > 0 && mbv > 0, "row %u: cp '%s', micro_batch '%s'", r, csv_cell(td, r, dcp), csv_cell(td, r, dm));
    int m = 128 / (64 / (2 * cpv) * mbv); /* dp = 64 / (tp 1 x pp 2 x cp) */
    if (!strcmp(csv_cell(td, r, dsc), "dualpipev")) {
      ck_assert_msg(m >= 4, "dualpipev at %d micro-batches", m);
      dualpipev_rows++;
    } else others_below += m < 4;
  }
  ck_assert_int_gt(dualpipev_rows, 0);
  ck_assert_int_gt(others_below, 0);
  ck_assert(sweep_count_layouts(&d, FALSE, &err) == td->rows->len);
  spec_clear(&d);
}
END_TEST

/* Lists that do not interact (sp, tp, pp, cp and micro-batch listed, the default space's one value of
 * ZeRO and the overlaps): the count is the product of the lists' lengths, checkpointing's 2 values,
 * the (listed) kernels and the points, here 1000 x 1000 x 8 x 100000 x 2 x 2 x 2 x 6 x 8 = 1.5e16, counted in
 * well under a second (the enumeration walked each of them: centuries). */
START_TEST(test_a_huge_sweep_is_counted_at_once)
{
  static const int gpus[] = {1, 2, 3, 4, 5, 6, 7, 8}, sps[] = {0, 1};
  sweep_spec s = spec_of("llama-7b", 64, SWEEP_SPACE_DEFAULT, 8, gpus);
  s.layout[AX_TP] = range(1, 1000);
  s.layout[AX_PP] = range(1, 1000);
  s.layout[AX_CP] = range(1, 8);
  s.layout[AX_MB] = range(1, 100000);
  s.layout[AX_SP] = values(2, sps);
  s.layout[AX_ATTN] = range(0, ATTN_N_KERNELS - 1); /* every kernel, listed: the product is the lists' */
  gint64 t0 = g_get_monotonic_time();
  GError *err = NULL;
  double n = sweep_count_layouts(&s, FALSE, &err);
  double seconds = (g_get_monotonic_time() - t0) / 1e6;
  ck_assert_msg(n == 1000.0 * 1000 * 8 * 100000 * 2 * 2 * ATTN_N_KERNELS * 8, "counted %.17g", n);
  ck_assert_msg(seconds < 5, "counted in %.2f s", seconds); /* about 0.05 s; loose on a shared machine */
  spec_clear(&s);
}
END_TEST

/* A run hands the pool its requests a window at a time (SWEEP_WINDOW; the rows keep only their layouts):
 * the table is the same, byte for byte, whatever the window, for the memory verdicts of the default space's layouts and
 * for the replays of 8 (windows of 7 and 3, not dividing the requests). */
START_TEST(test_the_table_is_the_same_whatever_the_window)
{
  static const int eight[] = {8}, tp8[] = {8}, mbs[] = {1, 2}, none[] = {CKPT_NONE}, kernels[] = {0, 1};
  for (int replay = 0; replay < 2; replay++) {
    sweep_spec s = spec_of("llama-7b", 16, SWEEP_SPACE_DEFAULT, 1, eight);
    s.pool = (pool_cfg){.jobs = 2, .memory_only = !replay, .prune_oom = TRUE};
    if (replay) {
      s.layout[AX_TP] = values(1, tp8);
      s.layout[AX_MB] = values(2, mbs);
      s.layout[AX_CKPT] = values(1, none);
      s.layout[AX_ATTN] = values(2, kernels);
    }
    GError *err = NULL;
    g_autoptr(csv_table) whole = sweep_run(&s, &err);
    ck_assert_msg(whole != NULL, "%s", err ? err->message : "");
    s.window = replay ? 3 : 7;
    g_autoptr(csv_table) windowed = sweep_run(&s, &err);
    ck_assert_msg(windowed != NULL, "%s", err ? err->message : "");
    ck_assert_uint_gt(whole->rows->len, (guint)(replay ? 6 : 200));
    g_autoptr(GString) a = g_string_new(NULL);
    g_autoptr(GString) b = g_string_new(NULL);
    csv_format(whole, a);
    csv_format(windowed, b);
    ck_assert_msg(g_string_equal(a, b), "the windowed table differs");
    spec_clear(&s);
  }
}
END_TEST

/* Ranking: within a platform point by step time, the gap to the best and the category that grew. */
START_TEST(test_rank_orders_by_step_time_and_names_the_grown_category)
{
  guint n;
  const char *const *cols = sweep_columns(&n);
  g_autoptr(csv_table) t = csv_new(cols, n);
  const double steps[] = {12.0, 10.0, 11.0};
  for (int i = 0; i < 3; i++) {
    GPtrArray *row = g_ptr_array_new();
    for (guint k = 0; k < n; k++) g_ptr_array_add(row, g_strdup("0"));
    guint r = csv_append_row(t, row, 0);
    g_autofree char *ix = g_strdup_printf("%d", i), *st = g_strdup_printf("%g", steps[i]);
    csv_set(t, r, csv_column(t, "index"), ix);
    csv_set(t, r, csv_column(t, "status"), "ok");
    csv_set(t, r, csv_column(t, "profile"), "p");
    csv_set(t, r, csv_column(t, "step_time_s"), st);
    csv_set(t, r, csv_column(t, i == 0 ? "t_pp_wait_s" : "t_forward_s"), i == 0 ? "2" : i == 2 ? "1" : "0");
  }
  g_autoptr(csv_table) rk = sweep_rank(t);
  ck_assert_str_eq(csv_cell(rk, 0, csv_column(rk, "index")), "1");
  ck_assert_str_eq(csv_cell(rk, 0, csv_column(rk, "rank")), "1");
  ck_assert_str_eq(csv_cell(rk, 1, csv_column(rk, "index")), "2");
  ck_assert_str_eq(csv_cell(rk, 1, csv_column(rk, "gap_pct")), "10.00");
  ck_assert_str_eq(csv_cell(rk, 1, csv_column(rk, "gap_cause")), "forward +1 s");
  ck_assert_str_eq(csv_cell(rk, 2, csv_column(rk, "gap_pct")), "20.00");
  ck_assert_str_eq(csv_cell(rk, 2, csv_column(rk, "gap_cause")), "bubble +2 s");
}
END_TEST

/* Labels name every option that differs (issue 27 item 4, issue 30 item 7): from one row, each layout option
 * changed alone gives a label of its own, in the text, CSV and JSON alike (the ranked table's layout column);
 * dp is gpus / (tp * pp * cp); validate's row label adds the platform columns a table has (fabric). */
START_TEST(test_labels_name_every_option_that_differs)
{
  guint n;
  const char *const *cols = sweep_columns(&n);
  static const char *const base[][2] = {
      {"gpus", "16"}, {"tp", "2"}, {"pp", "2"}, {"cp", "1"}, {"micro_batch", "1"}, {"sp", "1"},
      {"checkpointing", "none"}, {"attention_kernel", "flash2"}, {"schedule", "1f1b"}, {"virtual_stages", "1"},
      {"zero", "1"}, {"overlap_grad_reduce", "0"}, {"overlap_param_gather", "0"}, {"precision", "bf16"}};
  /* each option's other value; gpus 32 is dp 8 */
  static const char *const other[][2] = {
      {"gpus", "32"}, {"tp", "4"}, {"pp", "4"}, {"cp", "2"}, {"micro_batch", "2"}, {"sp", "0"},
      {"checkpointing", "selective"}, {"attention_kernel", "torch"}, {"schedule", "gpipe"}, {"zero", "3"},
      {"zero", "0"}, {"overlap_grad_reduce", "1"}, {"overlap_param_gather", "1"}, {"precision", "fp8"}};
  g_autoptr(csv_table) t = csv_new(cols, n);
  for (size_t v = 0; v <= G_N_ELEMENTS(other); v++) {
    GPtrArray *row = g_ptr_array_new();
    for (guint k = 0; k < n; k++) g_ptr_array_add(row, g_strdup(""));
    guint r = csv_append_row(t, row, 0);
    for (size_t b = 0; b < G_N_ELEMENTS(base); b++) csv_set(t, r, csv_column(t, base[b][0]), base[b][1]);
    if (v > 0) csv_set(t, r, csv_column(t, other[v - 1][0]), other[v - 1][1]);
    g_autofree char *ix = g_strdup_printf("%zu", v);
    csv_set(t, r, csv_column(t, "index"), ix);
    csv_set(t, r, csv_column(t, "status"), "invalid");
  }
  static const struct { guint row; const char *label; } want[] = {
      {0, "tp2 pp2 dp4 mb1 sp1 none flash2"}, {1, "tp2 pp2 dp8 mb1 sp1 none flash2"},
      {4, "tp2 pp2 cp2 dp2 mb1 sp1 none flash2"}, {10, "tp2 pp2 dp4 mb1 sp1 none flash2 zero3"},
      {14, "tp2 pp2 dp4 mb1 sp1 none flash2 fp8"}};
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    g_autofree char *got = sweep_layout_label(t, want[i].row);
    ck_assert_str_eq(got, want[i].label);
  }
  for (guint a = 0; a < t->rows->len; a++)
    for (guint b = a + 1; b < t->rows->len; b++) {
      g_autofree char *la = sweep_layout_label(t, a), *lb = sweep_layout_label(t, b);
      ck_assert_msg(strcmp(la, lb), "rows %u and %u differ but share the label '%s'", a, b, la);
    }
  /* the ranked table carries the label and dp in CSV and JSON */
  g_autoptr(csv_table) rk = sweep_rank(t);
  g_autoptr(GString) csv = g_string_new(NULL), json = g_string_new(NULL);
  sweep_view vc = {.format = SWEEP_CSV}, vj = {.format = SWEEP_JSON};
  sweep_render(rk, &vc, csv);
  sweep_render(rk, &vj, json);
  ck_assert_ptr_nonnull(strstr(csv->str, ",tp2 pp2 dp4 mb1 sp1 none flash2 zero3,"));
  ck_assert_ptr_nonnull(strstr(json->str, "\"layout\":\t\"tp2 pp2 dp4 mb1 sp1 none flash2 overlap-grad\""));
  ck_assert_ptr_nonnull(strstr(json->str, "\"dp\":\t8"));
  /* validate's label: the platform columns the table has */
  csv_set(t, 0, csv_column(t, "fabric"), "rail");
  g_autofree char *row = sweep_row_label(t, 0);
  ck_assert_str_eq(row, "tp2 pp2 dp4 mb1 sp1 none flash2, fabric rail");
}
END_TEST

/* The what-if plot (issue 27 item 3): a band around each line (one polygon per line and panel), a marker at each
 * near-OOM point (and its legend), and value ticks at round steps (1, 2 or 5 times a power of ten). */
START_TEST(test_plot_draws_bands_near_oom_marks_and_round_ticks)
{
  guint n;
  const char *const *cols = sweep_columns(&n);
  g_autoptr(csv_table) t = csv_new(cols, n);
  /* two layouts at ib 100 and 200: steps 10.3/9.7 s and 11.1/10.9 s, bands 8.4%; one point near OOM */
  static const struct { const char *ib, *tp, *step, *mfu, *flags; } rows[] = {
      {"100", "1", "10.3", "0.41", ""}, {"100", "2", "11.1", "0.38", ""},
      {"200", "1", "9.7", "0.437", "near-oom"}, {"200", "2", "10.9", "0.389", ""}};
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    GPtrArray *row = g_ptr_array_new();
    for (guint k = 0; k < n; k++) g_ptr_array_add(row, g_strdup(""));
    guint r = csv_append_row(t, row, 0);
    g_autofree char *ix = g_strdup_printf("%zu", i);
    const char *set[][2] = {{"index", ix}, {"status", "ok"}, {"profile", "p"}, {"gpus", "8"}, {"ib_gbps", rows[i].ib},
                            {"tp", rows[i].tp}, {"pp", "1"}, {"step_time_s", rows[i].step}, {"mfu", rows[i].mfu},
                            {"band_pct", "8.4"}, {"flags", rows[i].flags}};
    for (size_t c = 0; c < G_N_ELEMENTS(set); c++) csv_set(t, r, csv_column(t, set[c][0]), set[c][1]);
  }
  g_autoptr(csv_table) rk = sweep_rank(t);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert(sweep_plot_put(rk, f, NULL));
  fclose(f);
  int polygons = 0, marks = 0;
  for (const char *q = buf; (q = strstr(q, "<polygon")); q++) polygons++;
  for (const char *q = buf; (q = strstr(q, "l6,6 l-6,6")); q++) marks++;
  ck_assert_int_eq(polygons, 4); /* 2 lines x 2 panels */
  ck_assert_int_eq(marks, 2 + 1); /* the near-OOM point on both panels, and the legend's */
  ck_assert_ptr_nonnull(strstr(buf, "near OOM"));
  /* the value ticks: text-anchor end; consecutive labels one round step apart */
  double prev = NAN, step = NAN;
  int ticks = 0;
  for (const char *q = buf; (q = strstr(q, "text-anchor=\"end\">")); ) {
    q += strlen("text-anchor=\"end\">");
    double v = g_ascii_strtod(q, NULL);
    if (!isnan(prev) && v < prev) { /* the second panel begins */
      prev = NAN;
      step = NAN;
    }
    if (!isnan(prev)) {
      double d = v - prev, e = pow(10, floor(log10(d) + 1e-9)), m = d / e;
      ck_assert_msg(fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6, "tick step %g", d);
      if (!isnan(step)) ck_assert_double_eq_tol(d, step, 1e-9);
      step = d;
    }
    prev = v;
    ticks++;
  }
  ck_assert_int_ge(ticks, 6);
  free(buf);
}
END_TEST

/* Platform columns of a table row are honoured per row (none is silently ignored): ib_gbps 400
 * doubles the NIC bandwidth of that row's request, nics_per_node and gpu_memory set theirs; an
 * empty cell keeps the command's value; a bad value is the row's error naming the column. */
START_TEST(test_platform_columns_override_the_command_per_row)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "ib_gbps", "nics_per_node",
                                     "gpu_memory"};
  predict_cfg cfg = {.gen = gen_default_options()};
  GError *err = NULL;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &cfg.prof, &err));
  cfg.capacity_gib = cfg.prof.memory_gib;
  const char *set[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "1", "2", "0", "400", "4", "40"};
  const char *keep[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "1", "2", "0", "", "", ""};
  const char *bad[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "1", "2", "0", "fast", "", ""};
  g_autoptr(csv_table) ts = check_one_row(cols, G_N_ELEMENTS(cols), set);
  g_autoptr(csv_table) tk = check_one_row(cols, G_N_ELEMENTS(cols), keep);
  g_autoptr(csv_table) tb = check_one_row(cols, G_N_ELEMENTS(cols), bad);
  sim_request rq;
  ck_assert_msg(predict_row_request(ts, 0, &cfg, &rq, &err), "%s", err ? err->message : "");
  ck_assert_double_eq_tol(rq.prof.ib_bytes_per_s, 400e9 / 8, 1);
  ck_assert_int_eq(rq.prof.nics_per_node, 4);
  ck_assert_double_eq_tol(rq.capacity_gib, 40, 1e-12);
  ck_assert(predict_row_request(tk, 0, &cfg, &rq, &err));
  ck_assert_double_eq_tol(rq.prof.ib_bytes_per_s, cfg.prof.ib_bytes_per_s, 1);
  ck_assert_double_eq_tol(rq.capacity_gib, 80, 1e-12);
  ck_assert(!predict_row_request(tb, 0, &cfg, &rq, &err));
  ck_assert_str_eq(err->message, "ib_gbps: invalid value 'fast' (allowed: a number from 0.008 to 800000)");
  g_clear_error(&err);
}
END_TEST

/* A row may name a model file (model_file column) or take the command's --model-file; a model name
 * beside it must be the file's. */
START_TEST(test_model_file_column_and_option_give_the_rows_model)
{
  g_autofree char *path = g_build_filename(g_get_tmp_dir(), "test_sweep_model.json", NULL);
  ck_assert(g_file_set_contents(path, "{\"name\":\"mini\",\"layers\":4,\"hidden\":512,\"heads\":8,"
                                      "\"ffn\":1024,\"vocab\":1000}", -1, NULL));
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "model_file"};
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = 80};
  const char *named[] = {"mini", "128", "4", "1000", "4", "none", "flash2", "1", "1", "4", "0", path};
  const char *other[] = {"llama-7b", "128", "4", "1000", "4", "none", "flash2", "1", "1", "4", "0", path};
  g_autoptr(csv_table) tn = check_one_row(cols, G_N_ELEMENTS(cols), named);
  g_autoptr(csv_table) to = check_one_row(cols, G_N_ELEMENTS(cols), other);
  sim_request rq;
  GError *err = NULL;
  ck_assert_msg(predict_row_request(tn, 0, &cfg, &rq, &err), "%s", err ? err->message : "");
  ck_assert_str_eq(rq.m.name, "mini");
  ck_assert_int_eq(rq.m.layers, 4);
  ck_assert(!predict_row_request(to, 0, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "model: 'llama-7b' but the model file holds 'mini'"));
  g_clear_error(&err);
  /* --model-file for every row: the same model; with a model_file cell too, refused */
  model m;
  ck_assert(model_load_file(path, &m, &err));
  cfg.model_file = &m;
  static const char *const cols2[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                      "attention_kernel", "micro_batch", "tp", "pp", "sp"};
  const char *plain[] = {"", "128", "4", "1000", "4", "none", "flash2", "1", "1", "4", "0"};
  g_autoptr(csv_table) tp = check_one_row(cols2, G_N_ELEMENTS(cols2), plain);
  ck_assert_msg(predict_row_request(tp, 0, &cfg, &rq, &err), "%s", err ? err->message : "");
  ck_assert_str_eq(rq.m.name, "mini");
  ck_assert(!predict_row_request(tn, 0, &cfg, &rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "model_file:"));
  g_clear_error(&err);
  g_unlink(path);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("sweep");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_combine_extrapolates_every_time_affinely_and_rescales_mfu);
  tcase_add_test(tc, test_fast_prediction_equals_the_full_replay);
  tcase_add_test(tc, test_fast_equals_full_and_memory_verdict_for_every_schedule);
  tcase_add_test(tc, test_dualpipev_fast_path_is_exact_on_an_moe_with_and_without_the_overlap);
  tcase_add_test(tc, test_memory_verdict_without_replay_is_the_replays);
  tcase_add_test(tc, test_default_space_is_every_valid_layout);
  tcase_add_test(tc, test_the_sweeps_count_is_its_enumerations);
  tcase_add_test(tc, test_a_huge_sweep_is_counted_at_once);
  tcase_add_test(tc, test_schedules_below_their_fewest_stages_are_enumerated_as_the_default);
  tcase_add_test(tc, test_the_full_space_enumerates_only_valid_virtual_stages);
  tcase_add_test(tc, test_the_table_is_the_same_whatever_the_window);
  tcase_add_test(tc, test_rank_orders_by_step_time_and_names_the_grown_category);
  tcase_add_test(tc, test_labels_name_every_option_that_differs);
  tcase_add_test(tc, test_plot_draws_bands_near_oom_marks_and_round_ticks);
  tcase_add_test(tc, test_platform_columns_override_the_command_per_row);
  tcase_add_test(tc, test_model_file_column_and_option_give_the_rows_model);
  suite_add_tcase(s, tc);
  return check_run(s);
}
