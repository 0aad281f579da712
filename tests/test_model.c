/* test_model -- parameter and FLOP counts of the study's models against
 * the numbers study.md states (independent of the code's formulas). */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <string.h>

#include "workloads/model.h"

START_TEST(test_llama13b_vocab128k_has_14e9_parameters)
{
  model m;
  GError *err = NULL;
  ck_assert(model_load_named("llama-13b", &m, &err));
  ck_assert_int_eq(m.vocab, 128000);
  /* study.md: N ~= 14.0e9 */
  ck_assert_double_eq_tol(model_params(&m) / 1e9, 14.0, 0.05);
  /* by hand: 40 * (4*5120^2 + 3*5120*13824 + 2*5120) + 5120 + 2*128000*5120 */
  double by_hand = 40.0 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824 + 2.0 * 5120) + 5120 + 2.0 * 128000 * 5120;
  ck_assert_double_eq(model_params(&m), by_hand);
}
END_TEST

START_TEST(test_llama13b_flops_per_token_and_step_match_study)
{
  model m;
  ck_assert(model_load_named("llama-13b", &m, NULL));
  /* study.md: 89.05 GFLOP per token at T=2048, about 373.5 PFLOP per step */
  ck_assert_double_eq_tol(model_flops_per_token(&m, 2048) / 1e9, 89.05, 0.05);
  ck_assert_double_eq_tol(model_flops_per_token(&m, 2048) * 2048 * 2048 / 1e15, 373.5, 0.5);
  /* the 70.6% run: 26.54 s on 64 GPUs */
  double mfu = model_flops_per_token(&m, 2048) * 2048 * 2048 / 26.54 / (64 * 312e12);
  ck_assert_double_eq_tol(mfu, 0.706, 0.002);
}
END_TEST

START_TEST(test_unknown_model_names_allowed_values)
{
  model m;
  GError *err = NULL;
  ck_assert(!model_load_named("llama-99b", &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "llama-13b"));
  g_error_free(err);
}
END_TEST

START_TEST(test_models_30b_65b_dimensions)
{
  model m;
  ck_assert(model_load_named("llama-30b", &m, NULL));
  ck_assert_int_eq(m.layers, 60);
  ck_assert_int_eq(m.heads, 52);
  ck_assert(model_load_named("llama-65b", &m, NULL));
  ck_assert_int_eq(m.hidden, 8192);
  ck_assert_int_eq(m.ffn, 22016);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("model");
  TCase *tc = tcase_create("counts");
  tcase_add_test(tc, test_llama13b_vocab128k_has_14e9_parameters);
  tcase_add_test(tc, test_llama13b_flops_per_token_and_step_match_study);
  tcase_add_test(tc, test_unknown_model_names_allowed_values);
  tcase_add_test(tc, test_models_30b_65b_dimensions);
  suite_add_tcase(s, tc);
  return check_run(s);
}
