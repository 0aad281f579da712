/* test_pipeline_layout -- Megatron's pipeline layout string (workloads/pipeline_layout.h) against counts made
 * by hand: Llama 3 405B's 126 layers on pp 16 with 4 chunks, the embedding and the loss each in place of a layer
 * ('Et|(tt|)*62,tL', as Megatron-Bridge's 405B recipe accounts for them), places item boundaries 0, 2, 4, ..., 128,
 * 129; every stage then holds the parameters the layout intends (stage 0: the embedding and 7 layers, the middle
 * stages 8, the last 7 and the head), computed here from Llama 3 405B's published shape (h 16384, 128 heads, 8 KV
 * heads, ffn 53248, vocabulary 128256), so the largest stage holds within 5% of the smallest, where the even
 * split of the layers over pp 16 (Megatron's default without the string) holds 20% more on its largest. Each
 * malformed string is refused with the fault named. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "workloads/layout.h"
#include "workloads/memory.h"
#include "workloads/partition.h"
#include "workloads/pipeline_layout.h"

#define SPEC_405B "Et|(tt|)*62,tL"

START_TEST(test_405b_string_places_one_layer_beside_embedding_and_loss)
{
  int b[65];
  GError *err = NULL;
  ck_assert_msg(pipeline_layout_bounds(SPEC_405B, 126, 0, 64, b, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(b[0], 0);
  ck_assert_int_eq(b[1], 2); /* E and layer 1 */
  for (int v = 1; v < 64; v++) ck_assert_int_eq(b[v], 2 * v); /* two layers each */
  ck_assert_int_eq(b[64], 126 + 3); /* the last: its layer, the final norm and the head */
}
END_TEST

/* Llama 3 405B's parameters of one tensor-parallel rank of one layer, from the published shape. */
static double layer_params_405b(int tp)
{
  double h = 16384, kv = h / 128 * 8, ffn = 53248;
  return (2 * h * h + 2 * h * kv + 3 * h * ffn) / tp + 2 * h; /* q, o; k, v; gate, up, down; two norms */
}

START_TEST(test_uneven_stages_hold_the_parameters_the_layout_intends)
{
  model m;
  ck_assert(model_load_named("llama3-405b", &m, NULL));
  layout l = layout_default();
  l.gpus = 2048, l.tp = 8, l.pp = 16, l.virtual_stages = 4;
  g_strlcpy(l.pipeline_layout, SPEC_405B, sizeof l.pipeline_layout);
  partition p;
  GError *err = NULL;
  ck_assert_msg(partition_make_for(&p, &m, &l, PARTITION_AUTO, &err), "%s", err ? err->message : "");
  double layer = layer_params_405b(8), emb = 128256.0 * 16384 / 8, norm = 16384;
  ck_assert_double_eq_tol(mem_stage_params(&m, &l, &p, 0), emb + 7 * layer, 1e-9 * emb);
  for (int s = 1; s < 15; s++) ck_assert_double_eq_tol(mem_stage_params(&m, &l, &p, s), 8 * layer, 1e-9 * emb);
  ck_assert_double_eq_tol(mem_stage_params(&m, &l, &p, 15), 7 * layer + norm + emb, 1e-9 * emb);
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < 16; s++) lo = MIN(lo, mem_stage_params(&m, &l, &p, s)), hi = MAX(hi, mem_stage_params(&m, &l, &p, s));
  ck_assert_msg(hi / lo < 1.05, "largest stage %.4g over smallest %.4g", hi, lo);
  partition_clear(&p);
  /* without the string: Megatron's even split of the layers, embedding and head on top */
  layout e = l;
  e.pipeline_layout[0] = 0, e.virtual_stages = 1;
  ck_assert(partition_make_for(&p, &m, &e, PARTITION_LAYERS, NULL));
  lo = INFINITY, hi = 0;
  for (int s = 0; s < 16; s++) lo = MIN(lo, mem_stage_params(&m, &e, &p, s)), hi = MAX(hi, mem_stage_params(&m, &e, &p, s));
  ck_assert_msg(hi / lo > 1.2, "even split: largest stage %.4g over smallest %.4g", hi, lo);
  partition_clear(&p);
}
END_TEST

START_TEST(test_malformed_strings_are_refused_naming_the_fault)
{
  static const struct { const char *spec; int layers, vstages; const char *says; } bad[] = {
      {"Et|ttL", 4, 3, "names 2 stages"},
      {"t|tttL", 4, 2, "does not open with E"},
      {"Ett|ttt", 5, 2, "does not close with L"},
      {"Ett|tttL", 4, 2, "more than the model's 4 layers"},
      {"EtLt|t", 3, 2, "places L after"},
      {"Ett||ttL", 4, 3, "stage 1"},
      {"Ett|ttLm", 4, 2, "right before L"},
      {"Ett|ttx", 4, 2, "not a layout letter"},
      {"E(t*9)*9|L", 4, 2, "expands to more than"},
      {"E(t*1000)*1000|L", 4, 2, "out of range"},
      {"E(tt|ttL", 4, 2, "without its ')'"},
      {"Ett)|ttL", 4, 2, "without its '('"},
      {"Et*0t|ttL", 3, 2, "out of range"},
      {"Et*|ttL", 3, 2, "not followed by a count"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    int b[8];
    GError *err = NULL;
    ck_assert_msg(!pipeline_layout_bounds(bad[i].spec, bad[i].layers, 0, bad[i].vstages, b, &err), "%s accepted",
                  bad[i].spec);
    ck_assert_msg(strstr(err->message, bad[i].says), "%s: '%s' lacks '%s'", bad[i].spec, err->message, bad[i].says);
    g_error_free(err);
  }
}
END_TEST

Suite *pipeline_layout_suite(void)
{
  Suite *s = suite_create("pipeline_layout");
  TCase *tc = tcase_create("placement");
  tcase_add_test(tc, test_405b_string_places_one_layer_beside_embedding_and_loss);
  tcase_add_test(tc, test_uneven_stages_hold_the_parameters_the_layout_intends);
  tcase_add_test(tc, test_malformed_strings_are_refused_naming_the_fault);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(pipeline_layout_suite()); }
