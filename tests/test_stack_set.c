/* test_stack_set -- --stack-set KEY=VALUE and a table's stack_set cell (platforms/stack_set.h): a set key changes
 * the result as its closed form says (cuda_context_gib is memory beside the model: the peak moves by exactly the
 * change; zero is the layout default the stack gives), the row's keys apply after the command's, the outputs
 * record them, and every bad setting is refused with one line naming the key, the bad value and what is allowed. */
#include <check.h>
#include <string.h>

#include "analysis/metrics.h"
#include "analysis/predict.h"
#include "analysis/report.h"
#include "check_main.h"
#include "check_table.h"
#include "cli/options.h"
#include "platforms/plat_file.h"
#include "platforms/stack_set.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* cli_parse and cli_resolve of `line` (blank-separated, the command first) for simulate: the error or NULL. */
static char *resolve(const char *line, cli_opts *o)
{
  g_auto(GStrv) argv = g_strsplit(line, " ", -1);
  GError *err = NULL;
  cli_opts_init(o);
  gboolean ok = cli_parse(o, "simulate", CMD_SIMULATE, (int)g_strv_length(argv), argv, &err) &&
                cli_resolve(o, TRUE, &err);
  char *msg = ok ? NULL : g_strdup(err->message);
  g_clear_error(&err);
  return msg;
}

/* The peak memory per GPU of the resolved request, from the memory walk of its graph. */
static double peak_bytes(cli_opts *o)
{
  GError *err = NULL;
  sim_request rq = o->rq;
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  graph *g = gen_graph(&rq.m, &rq.l, &rq.gen, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  metrics *m = metrics_memory_only(g, &rq.prof, rq.capacity_gib);
  double peak = m->mem_peak_bytes;
  metrics_free(m);
  graph_free(g);
  return peak;
}

/* Memory beside the model is (cuda_context_gib + nccl_buffers_gib) GiB + fragmentation x the model's dynamic
 * bytes (docs/memory.md): setting cuda_context_gib from the study's 0.75 to 2.75 adds exactly 2 GiB to the peak,
 * nccl_buffers_gib from 0.5 to 0 takes 0.5 GiB off; and the summary's platform line, the JSON's
 * platform.stack_set say so, in the order given. */
START_TEST(test_a_set_memory_key_moves_the_peak_by_its_closed_form_and_the_outputs_say_so)
{
  const char *base = "simulate --model llama-7b --gpus 8 --tp 2 --pp 2 --global-batch 16";
  cli_opts o0, o1;
  g_autofree char *m0 = resolve(base, &o0);
  ck_assert_msg(!m0, "%s", m0);
  g_autofree char *line = g_strconcat(base, " --stack-set cuda_context_gib=2.75 --stack-set nccl_buffers_gib=0", NULL);
  g_autofree char *m1 = resolve(line, &o1);
  ck_assert_msg(!m1, "%s", m1);
  ck_assert_str_eq(o0.rq.prof.stack.name, "study");
  ck_assert_double_eq(o0.rq.prof.stack.cuda_context_gib, 0.75);
  ck_assert_double_eq(o0.rq.prof.stack.nccl_buffers_gib, 0.5);
  double expected = (2.75 + 0) - (0.75 + 0.5); /* GiB */
  ck_assert_double_eq_tol(peak_bytes(&o1) - peak_bytes(&o0), expected * GIB, 1);
  ck_assert_str_eq(o0.rq.prof.stack.set, "");
  ck_assert_str_eq(o1.rq.prof.stack.set, "cuda_context_gib=2.75;nccl_buffers_gib=0");
  ck_assert_str_eq(o1.rq.prof.stack.name, "study"); /* its name (the trust table's key) unchanged */
  cli_opts_clear(&o0);
  cli_opts_clear(&o1);
}
END_TEST

/* zero is what the stack's code runs where the layout does not say (stack_layout_defaults): --stack-set zero=0
 * gives ZeRO 0, and --zero given still wins; a time key (gemm_efficiency) is set as given. */
START_TEST(test_a_set_default_key_reaches_the_layout_unless_the_option_is_given)
{
  cli_opts o;
  g_autofree char *m = resolve("simulate --model llama-7b --gpus 8 --stack nemo --stack-set zero=0", &o);
  ck_assert_msg(!m, "%s", m);
  ck_assert_int_eq(o.rq.l.zero, 0);
  cli_opts_clear(&o);
  g_autofree char *m2 = resolve("simulate --model llama-7b --gpus 8 --stack nemo --stack-set zero=0 --zero 2", &o);
  ck_assert_msg(!m2, "%s", m2);
  ck_assert_int_eq(o.rq.l.zero, 2);
  cli_opts_clear(&o);
  g_autofree char *m3 = resolve("simulate --model llama-7b --gpus 8 --stack nemo --stack-set gemm_efficiency=0.5", &o);
  ck_assert_msg(!m3, "%s", m3);
  ck_assert_double_eq(o.rq.prof.stack.gemm_efficiency, 0.5);
  cli_opts_clear(&o);
}
END_TEST

/* A table row: the command's --stack-set applies to the row's own stack too, then the row's stack_set cell (a later
 * key of the row wins over the command's); an empty cell keeps the command's; a bad cell is the row's error. */
START_TEST(test_a_row_stack_set_applies_after_the_command_on_its_own_stack)
{
  static const char *const cols[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                     "attention_kernel", "micro_batch", "tp", "pp", "sp", "stack", "stack_set"};
  predict_cfg cfg = {.gen = gen_default_options()};
  GError *err = NULL;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "study", &cfg.prof, &err));
  cfg.capacity_gib = cfg.prof.memory_gib;
  g_autoptr(GArray) sets = g_array_new(FALSE, FALSE, sizeof(stack_setting));
  ck_assert(stack_setting_parse(sets, "cuda_context_gib=2", "--stack-set", &err));
  ck_assert(stack_setting_parse(sets, "tp_comm_overlap=0", "--stack-set", &err));
  cfg.stack_sets = sets;
  const char *own[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "2", "1", "1", "nemo",
                       "grad_reduce_bytes=4;tp_comm_overlap=1"};
  const char *keep[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "2", "1", "1", "nemo", ""};
  const char *bad[] = {"llama-7b", "1024", "16", "32000", "16", "none", "flash2", "1", "2", "1", "1", "nemo",
                       "grad_reduce_bytes=3"};
  g_autoptr(csv_table) to = check_one_row(cols, G_N_ELEMENTS(cols), own);
  g_autoptr(csv_table) tk = check_one_row(cols, G_N_ELEMENTS(cols), keep);
  g_autoptr(csv_table) tb = check_one_row(cols, G_N_ELEMENTS(cols), bad);
  sim_request rq;
  ck_assert_msg(predict_row_request(to, 0, &cfg, &rq, &err), "%s", err ? err->message : "");
  ck_assert_str_eq(rq.prof.stack.name, "nemo");
  ck_assert_double_eq(rq.prof.stack.cuda_context_gib, 2);
  ck_assert_double_eq(rq.prof.stack.grad_reduce_bytes, 4);
  ck_assert_double_eq(rq.prof.stack.tp_comm_overlap, 1); /* the row's, after the command's 0 */
  ck_assert_str_eq(rq.prof.stack.set, "cuda_context_gib=2;tp_comm_overlap=0;grad_reduce_bytes=4;tp_comm_overlap=1");
  ck_assert(predict_row_request(tk, 0, &cfg, &rq, &err));
  ck_assert_double_eq(rq.prof.stack.tp_comm_overlap, 0);
  ck_assert_double_eq(rq.prof.stack.grad_reduce_bytes, 2); /* nemo's own */
  ck_assert(!predict_row_request(tb, 0, &cfg, &rq, &err));
  ck_assert_str_eq(err->message, "stack_set: grad_reduce_bytes = '3' (allowed: 2, 4)");
  g_clear_error(&err);
}
END_TEST

/* Bad input: exit status 2 (cli_resolve's caller) and one line naming the key, the bad value and the allowed ones. */
START_TEST(test_every_bad_setting_is_refused_naming_key_value_and_allowed)
{
  size_t n;
  const struct plat_field *keys = stack_key_table(&n);
  g_autoptr(GString) names = g_string_new(NULL);
  for (size_t i = 0; i < n; i++) g_string_append_printf(names, "%s%s", i ? ", " : "", keys[i].key);
  g_autofree char *unknown = g_strdup_printf("--stack-set: unknown key 'tp_overlap' (allowed: KEY=VALUE, KEY one of "
                                             "%s)", names->str);
  g_autofree char *no_eq = g_strdup_printf("--stack-set: not KEY=VALUE: 'tp_comm_overlap' (allowed: KEY=VALUE, KEY "
                                           "one of %s)", names->str);
  struct { const char *args; const char *msg; } cases[] = {
      {"--stack-set tp_overlap=1", unknown},
      {"--stack-set tp_comm_overlap", no_eq},
      {"--stack-set tp_comm_overlap=2", "--stack-set: tp_comm_overlap = '2' (allowed: an integer from 0 to 1)"},
      {"--stack-set tp_comm_overlap=0.5", "--stack-set: tp_comm_overlap = '0.5' (allowed: an integer from 0 to 1)"},
      {"--stack-set gemm_efficiency=fast", "--stack-set: gemm_efficiency = 'fast' (allowed: a number from 0.05 to 1)"},
      {"--stack-set gemm_efficiency=", "--stack-set: gemm_efficiency = '' (allowed: a number from 0.05 to 1)"},
      {"--stack-set gemm_efficiency=1.5", "--stack-set: gemm_efficiency = '1.5' (allowed: a number from 0.05 to 1)"},
      {"--stack-set grad_reduce_bytes=3", "--stack-set: grad_reduce_bytes = '3' (allowed: 2, 4)"},
      {"--stack-set vocab_parallel_loss_bytes=1", "--stack-set: vocab_parallel_loss_bytes = '1' (allowed: 0, 2, 4)"},
      {"--stack-set zero=1 --stack-set zero=0", "--stack-set: zero set more than once (allowed: each key once)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *line = g_strconcat("simulate --model llama-7b ", cases[i].args, NULL);
    cli_opts o;
    g_autofree char *msg = resolve(line, &o);
    ck_assert_msg(msg && !strcmp(msg, cases[i].msg), "%s: got %s, want %s", cases[i].args, msg, cases[i].msg);
    ck_assert_ptr_null(strchr(msg, '\n'));
    cli_opts_clear(&o);
  }
  /* two keys, each once: taken */
  cli_opts o;
  g_autofree char *ok = resolve("simulate --model llama-7b --stack-set grad_reduce_bytes=2 --stack-set zero=0", &o);
  ck_assert_msg(!ok, "%s", ok);
  ck_assert_str_eq(o.rq.prof.stack.set, "grad_reduce_bytes=2;zero=0");
  cli_opts_clear(&o);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("stack_set");
  TCase *tc = tcase_create("stack_set");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_a_set_memory_key_moves_the_peak_by_its_closed_form_and_the_outputs_say_so);
  tcase_add_test(tc, test_a_set_default_key_reaches_the_layout_unless_the_option_is_given);
  tcase_add_test(tc, test_a_row_stack_set_applies_after_the_command_on_its_own_stack);
  tcase_add_test(tc, test_every_bad_setting_is_refused_naming_key_value_and_allowed);
  suite_add_tcase(s, tc);
  return check_run(s);
}
