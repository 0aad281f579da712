/* test_model -- parameter and FLOP counts of the study's models against
 * the numbers study.md states (independent of the code's formulas), and
 * what a model file may hold: its six keys, each once. */
#include <check.h>

#include "check_main.h"
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

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

/* Load a model file holding `json`; returns the error message (caller frees), NULL if it loaded. */
static char *model_file_error(const char *json, model *m, char **path_out)
{
  GError *err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("lsim-model-XXXXXX.json", &path, &err);
  ck_assert_msg(fd >= 0, "tmp file: %s", err ? err->message : "?");
  close(fd);
  ck_assert(g_file_set_contents(path, json, -1, NULL));
  gboolean ok = model_load_file(path, m, &err);
  g_unlink(path);
  *path_out = path;
  if (ok) return NULL;
  char *msg = g_strdup(err->message);
  g_error_free(err);
  return msg;
}

#define GOOD_MODEL "\"name\":\"x\",\"layers\":2,\"hidden\":512,\"heads\":8,\"ffn\":1024,\"vocab\":1000"

/* A key given twice would be read from its first place (cJSON's lookup), a misspelt key ignored
 * (its dimension then missing or, worse, present twice): both are errors naming the key. */
START_TEST(test_model_file_takes_each_known_key_once)
{
  model m;
  g_autofree char *path = NULL;
  g_autofree char *ok = model_file_error("{" GOOD_MODEL "}", &m, &path);
  ck_assert_msg(ok == NULL, "%s", ok);
  ck_assert_int_eq(m.layers, 2);
  ck_assert_int_eq(m.ffn, 1024);
  static const struct { const char *json, *want; } cases[] = {
      {"{" GOOD_MODEL ",\"layers\":4}", "key 'layers' appears more than once (each key may appear once)"},
      {"{" GOOD_MODEL ",\"ffn_dim\":1024}", "unknown key 'ffn_dim' (allowed: name, layers, hidden, heads, ffn, vocab, kv_heads, norm, mlp, positions, "
       "max_positions, bias, tied_embeddings, embedding_norm, dropout, qkv_bias, attention_window, comment, head_dim, qk_norm, window_every, experts, top_k, expert_ffn, shared_experts, "
       "shared_expert_ffn, first_dense_layers, moe_layer_freq, dense_layers, router, capacity_factor, q_lora_rank, kv_lora_rank, "
       "qk_rope_head_dim, qk_nope_head_dim, v_head_dim, mtp_layers)"},
      {"{\"name\":\"x\",\"layers\":1000000000,\"hidden\":512,\"heads\":8,\"ffn\":1024,\"vocab\":1000}",
       "layers = 1000000000 (allowed: 1..1024)"},
      {"[{" GOOD_MODEL "}]", "not a JSON object (allowed: an object with the keys name, layers, hidden, heads, ffn, vocab, kv_heads, norm, "
       "mlp, positions, max_positions, bias, tied_embeddings, embedding_norm, dropout, qkv_bias, attention_window, comment, head_dim, qk_norm, window_every, experts, top_k, expert_ffn, shared_experts, "
       "shared_expert_ffn, first_dense_layers, moe_layer_freq, dense_layers, router, capacity_factor, q_lora_rank, kv_lora_rank, "
       "qk_rope_head_dim, qk_nope_head_dim, v_head_dim, mtp_layers)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *p = NULL;
    g_autofree char *msg = model_file_error(cases[i].json, &m, &p);
    g_autofree char *want = g_strdup_printf("%s: %s", p, cases[i].want);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_str_eq(msg, want);
  }
}
END_TEST

/* A model's name reaches every output (text and JSON reports, SVG titles, traces) as it is: it must be
 * printable UTF-8 of 1 to 63 bytes (struct model holds 64), refused naming the field otherwise, never
 * cut. */
START_TEST(test_model_name_is_printable_utf8_of_at_most_63_bytes)
{
  model m;
  static const char *const REST = ",\"layers\":2,\"hidden\":512,\"heads\":8,\"ffn\":1024,\"vocab\":1000}";
  char a63[64], a64[65];
  memset(a63, 'a', 63);
  a63[63] = '\0';
  memset(a64, 'a', 64);
  a64[64] = '\0';
  static const char *const ALLOWED = " (allowed: printable UTF-8 text, 1 to 63 bytes)";
  struct { const char *name, *want; } cases[] = {
      {"x\\u0007y", "name: \"x\\x07y\" holds a control or format character"},
      {"x\\ny", "name: \"x\\ny\" holds a control or format character"},
      {"x\xffy", "name: \"x\\xFFy\" is not valid UTF-8"},
      {"", "name: \"\" is empty"},
      {a64, NULL}, /* below */
      {a63, ""},
      {"llama-7b \xc3\xbc", ""}, /* valid UTF-8 beyond ASCII */
  };
  g_autofree char *want64 = g_strdup_printf("name: \"%s\" is 64 bytes long", a64);
  cases[4].want = want64;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strconcat("{\"name\":\"", cases[i].name, "\"", REST, NULL);
    g_autofree char *p = NULL;
    g_autofree char *msg = model_file_error(json, &m, &p);
    if (!*cases[i].want) {
      ck_assert_msg(msg == NULL, "case %zu: %s", i, msg);
      ck_assert_str_eq(m.name, cases[i].name);
      continue;
    }
    g_autofree char *want = g_strconcat(p, ": ", cases[i].want, ALLOWED, NULL);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_str_eq(msg, want);
  }
}
END_TEST

/* A refused number is shown as given, not rounded to a value that would have been allowed: %g printed
 * 4.000000000000001 as "got 4". */
START_TEST(test_model_file_messages_show_the_number_as_given)
{
  model m;
  static const struct { const char *layers, *got; } cases[] = {
      {"4.000000000000001", "4.000000000000001"}, {"2.5", "2.5"}, {"0.1", "0.1"}, {"1e30", "1e+30"}, {"-3", "-3"}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strdup_printf("{\"name\":\"x\",\"layers\":%s,\"hidden\":512,\"heads\":8,\"ffn\":1024,"
                                            "\"vocab\":1000}", cases[i].layers);
    g_autofree char *p = NULL;
    g_autofree char *msg = model_file_error(json, &m, &p);
    g_autofree char *want = g_strdup_printf("%s: field 'layers' must be a whole number from 1 to 1000000000 (got %s)", p, cases[i].got);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_str_eq(msg, want);
  }
}
END_TEST

/* The shipped models pass the same checks. */
START_TEST(test_every_builtin_model_loads)
{
  g_auto(GStrv) names = g_strsplit(model_builtin_names(), ", ", -1);
  ck_assert_uint_eq(g_strv_length(names), 16); /* 10 dense, 6 mixtures of experts (test_moe_model.c) */
  for (char **n = names; *n; n++) {
    model m;
    GError *err = NULL;
    ck_assert_msg(model_load_named(*n, &m, &err), "%s: %s", *n, err ? err->message : "");
    ck_assert_str_eq(m.name, *n);
  }
}
END_TEST


/* The shipped models' parameter counts against their published ones (the model hubs' counts of the released
 * weights: Hugging Face's "Model size" of meta-llama/Llama-2-70b-hf 69B, Meta-Llama-3-8B 8.03B,
 * Meta-Llama-3-70B 70.6B, Llama-3.1-405B 406B), within 0.5%; and FLOPs per token, 6N + 12 L h s, with the
 * published N. */
static const struct { const char *name; double published; } PUBLISHED[] = {
    {"llama2-70b", 69.0e9}, {"llama3-8b", 8.03e9}, {"llama3-70b", 70.6e9}, {"llama3-405b", 406e9},
    {"gpt3-175b", 174.6e9},       /* Brown et al. 2020 Table 2.1 says 175.0B; 12 L h^2 (1 + 13/(12h)) + (V + 2048) h */
    {"bloom-176b", 176247271424}, /* BigScience 2022, the released checkpoint */
};

START_TEST(test_shipped_models_have_their_published_parameter_counts_within_half_a_percent)
{
  for (size_t i = 0; i < G_N_ELEMENTS(PUBLISHED); i++) {
    model m;
    GError *err = NULL;
    ck_assert_msg(model_load_named(PUBLISHED[i].name, &m, &err), "%s", err ? err->message : "");
    double n = model_params(&m), want = PUBLISHED[i].published;
    ck_assert_msg(fabs(n / want - 1) < 0.005, "%s: %.4g parameters, published %.4g", m.name, n, want);
    double s = 2048, flops = 6 * want + 12.0 * m.layers * m.hidden * s;
    ck_assert_msg(fabs(model_flops_per_token(&m, (int)s) / flops - 1) < 0.005, "%s: FLOPs per token", m.name);
  }
}
END_TEST

/* Llama 3 70B by hand: grouped-query attention's K and V are 8 heads of 128 (h x 1024 each), not h x h. */
/* GPT-3 175B by hand: a layer is 12 h^2 + 13 h (QKV and output projection 4 h^2 with biases 4h, MLP 8 h^2 with
 * biases 5h, two LayerNorms 4h); the tied embedding counts once, with the 2048 learned positions and the final
 * LayerNorm. */
START_TEST(test_gpt3_175b_parameters_by_hand)
{
  model m;
  ck_assert(model_load_named("gpt3-175b", &m, NULL));
  double h = 12288, L = 96, V = 50257;
  ck_assert_double_eq(model_layer_params(&m), 12 * h * h + 13 * h);
  ck_assert_double_eq(model_params(&m), L * (12 * h * h + 13 * h) + V * h + 2048 * h + 2 * h); /* 174,604,259,328 */
}
END_TEST

START_TEST(test_gqa_layer_counts_k_and_v_of_the_kv_heads_only)
{
  model m;
  ck_assert(model_load_named("llama3-70b", &m, NULL));
  ck_assert_int_eq(m.kv_heads, 8);
  double h = 8192, kv = 8 * 128.0, f = 28672;
  double layer = h * h /* q */ + 2 * h * kv /* k, v */ + h * h /* o */ + 3 * h * f + 2 * h;
  ck_assert_double_eq(model_layer_params(&m), layer);
  ck_assert_double_eq(model_params(&m), 80 * layer + h + 2 * 128256.0 * h); /* 70,553,706,496 */
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
  tcase_add_test(tc, test_model_file_takes_each_known_key_once);
  tcase_add_test(tc, test_every_builtin_model_loads);
  tcase_add_test(tc, test_shipped_models_have_their_published_parameter_counts_within_half_a_percent);
  tcase_add_test(tc, test_gqa_layer_counts_k_and_v_of_the_kv_heads_only);
  tcase_add_test(tc, test_gpt3_175b_parameters_by_hand);
  tcase_add_test(tc, test_model_name_is_printable_utf8_of_at_most_63_bytes);
  tcase_add_test(tc, test_model_file_messages_show_the_number_as_given);
  suite_add_tcase(s, tc);
  return check_run(s);
}
