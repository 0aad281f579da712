/* test_moe_model -- mixture-of-experts, MLA and multi-token-prediction models (workloads/model.c keys,
 * workloads/model_params.c counts, workloads/hf_config.c readers): the six shipped MoE models against their
 * published total and active counts and against each layer counted by hand here; the HuggingFace configs in
 * tests/hf/ give the same models as the shipped files; bad keys exit 2 naming the key, value and range; and a
 * simulation refuses the model until expert parallelism exists (docs/model.md, "Mixture of experts"). */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "common/lsim_error.h"
#include "workloads/block.h"
#include "workloads/model.h"
#include "workloads/model_params.h"

static model named(const char *name)
{
  model m;
  GError *err = NULL;
  ck_assert_msg(model_load_named(name, &m, &err), "%s: %s", name, err ? err->message : "");
  return m;
}

static model hf(const char *dir)
{
  g_autofree char *path = g_strdup_printf("%s/tests/hf/%s/config.json", LSIM_DATADIR, dir);
  model m;
  GError *err = NULL;
  ck_assert_msg(model_load_file(path, &m, &err), "%s: %s", path, err ? err->message : "");
  return m;
}

/* Each layer by hand (SwiGLU experts 3 h f; RMSNorm weights h; untied embedding and head V h each). */
START_TEST(test_moe_models_counted_by_hand)
{
  /* Mixtral 8x7B: q, o 4096^2; k, v 4096 x 1024; router 4096 x 8; 8 experts of 3 x 4096 x 14336; two norms */
  double h = 4096, attn = 2 * h * h + 2 * h * 1024, expert = 3 * h * 14336;
  model m = named("mixtral-8x7b");
  ck_assert_double_eq(model_params_total(&m), 32 * (attn + h * 8 + 8 * expert + 2 * h) + h + 2 * 32000 * h);
  ck_assert_double_eq(model_params_active(&m), 32 * (attn + h * 8 + 2 * expert + 2 * h) + h + 2 * 32000 * h);
  /* Qwen3-30B-A3B: q 2048 x (32 x 128), k, v 2048 x (4 x 128), o (32 x 128) x 2048, q_norm and k_norm 128 each;
   * router 2048 x 128; 128 experts of 3 x 2048 x 768 */
  h = 2048;
  attn = h * 4096 + 2 * h * 512 + 4096 * h + 2 * 128;
  expert = 3 * h * 768;
  m = named("qwen3-30b-a3b");
  ck_assert_double_eq(model_params_total(&m), 48 * (attn + h * 128 + 128 * expert + 2 * h) + h + 2 * 151936 * h);
  ck_assert_double_eq(model_params_active(&m), 48 * (attn + h * 128 + 8 * expert + 2 * h) + h + 2 * 151936 * h);
  /* DeepSeek-V3, MLA: q down 7168 x 1536, its norm 1536, q up 1536 x 128 x (128 + 64); kv down 7168 x (512 + 64), its
   * norm 512, kv up 512 x 128 x (128 + 128); o 128 x 128 x 7168. Layers 0-2 dense (3 x 7168 x 18432), 3-60 MoE: router
   * 7168 x 256, 256 routed and 1 shared expert of 3 x 7168 x 2048. MTP: two norms, 2h x h, an MoE layer, a norm. */
  h = 7168;
  attn = h * 1536 + 1536 + 1536 * 128 * 192.0 + h * 576 + 512 + 512 * 128 * 256.0 + 128 * 128 * h;
  expert = 3 * h * 2048;
  double dense = attn + 3 * h * 18432 + 2 * h, moe = attn + h * 256 + 257 * expert + 2 * h;
  double moe_active = attn + h * 256 + 9 * expert + 2 * h, mtp = 2 * h + 2 * h * h + moe + h;
  m = named("deepseek-v3");
  ck_assert_double_eq(model_mtp_params(&m, FALSE), mtp);
  ck_assert_double_eq(model_params_total(&m), 3 * dense + 58 * moe + h + 2 * 129280 * h + mtp);
  ck_assert_double_eq(model_params_active(&m),
                      3 * dense + 58 * moe_active + h + 2 * 129280 * h + (2 * h + 2 * h * h + moe_active + h));
  /* gpt-oss-120b: q 2880 x 4096 + 4096, k, v 2880 x 512 + 512, o 4096 x 2880 + 2880; router 2880 x 128 + 128; 128
   * experts of gate_up 2880 x 5760 + 5760 and down 2880 x 2880 + 2880 */
  h = 2880;
  attn = h * 4096 + 4096 + 2 * (h * 512 + 512) + 4096 * h + h;
  expert = h * 5760 + 5760 + h * h + h;
  m = named("gpt-oss-120b");
  ck_assert_double_eq(model_params_total(&m), 36 * (attn + h * 128 + 128 + 128 * expert + 2 * h) + h + 2 * 201088 * h);
  ck_assert_double_eq(model_params_active(&m), 36 * (attn + h * 128 + 128 + 4 * expert + 2 * h) + h + 2 * 201088 * h);
}
END_TEST

/* The published counts. Conventions differ: Mistral and Qwen count a token's embedding row in the active count;
 * DeepSeek (README_WEIGHTS.md: 36.6B "including 0.9B for the output Head") and OpenAI (gpt-oss model card, Table
 * 1: 5.13B) leave the input embedding out, so theirs is compared with active minus model_input_embedding_params.
 * DeepSeek-V3's 671B is the main model (the MTP module apart); its 685B checkpoint also stores the MTP layer's
 * copies of the embedding and head. Within 0.5%, but Qwen3's active counts, published as 3.3B and 22B (two
 * figures; the by-hand count above is 3.353B and 22.19B): these within the published figure's last digit
 * (half a unit) and 0.5% more. */
START_TEST(test_shipped_moe_models_have_their_published_counts)
{
  static const struct {
    const char *name;
    double total, active, half_unit;
    gboolean active_without_embedding;
  } cases[] = {
      {"mixtral-8x7b", 46.7e9, 12.9e9, 0, FALSE},    {"mixtral-8x22b", 141e9, 39e9, 0, FALSE},
      {"deepseek-v3", 671e9, 36.6e9, 0, TRUE},       {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.05e9, FALSE},
      {"qwen3-235b-a22b", 235e9, 22e9, 0.5e9, FALSE}, {"gpt-oss-120b", 116.83e9, 5.13e9, 0, TRUE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    model m = named(cases[i].name);
    double total = model_params_total(&m) - model_mtp_params(&m, FALSE);
    double active = model_params_active(&m) - model_mtp_params(&m, TRUE) -
                    (cases[i].active_without_embedding ? model_input_embedding_params(&m) : 0);
    ck_assert_msg(fabs(total / cases[i].total - 1) < 0.005, "%s: %.5g parameters, published %.5g", m.name, total,
                  cases[i].total);
    ck_assert_msg(fabs(active - cases[i].active) < cases[i].half_unit + 0.005 * cases[i].active,
                  "%s: %.5g active, published %.5g", m.name, active, cases[i].active);
  }
  /* DeepSeek-V3's checkpoint: main model, the MTP module and its stored copies of the embedding and head: 685B */
  model d = named("deepseek-v3");
  double checkpoint = model_params_total(&d) + 2 * 129280.0 * 7168;
  ck_assert_msg(fabs(checkpoint / 685e9 - 1) < 0.005, "%.5g", checkpoint);
  /* Qwen3's non-embedding counts (model cards: 29.9B, 234B) are exact to 0.5% */
  model q = named("qwen3-30b-a3b"), q2 = named("qwen3-235b-a22b");
  ck_assert(fabs((model_params_total(&q) - 2 * 151936.0 * 2048 - 2048) / 29.9e9 - 1) < 0.005);
  ck_assert(fabs((model_params_total(&q2) - 2 * 151936.0 * 4096 - 4096) / 234e9 - 1) < 0.005);
}
END_TEST

/* The HuggingFace configs (tests/hf/, written from the public config.json files) are the shipped models. */
START_TEST(test_hf_configs_give_the_shipped_models)
{
  static const char *const pairs[][2] = {{"mixtral-8x7b", "mixtral-8x7b"}, {"qwen3-30b-a3b", "qwen3-30b-a3b"},
                                         {"deepseek-v3", "deepseek-v3"},   {"gpt-oss-120b", "gpt-oss-120b"}};
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
    model a = hf(pairs[i][0]), b = named(pairs[i][1]);
    g_autofree char *sa = model_arch_string(&a);
    g_autofree char *sb = model_arch_string(&b);
    ck_assert_str_eq(sa, sb);
    ck_assert_double_eq(model_params_total(&a), model_params_total(&b));
    ck_assert_double_eq(model_params_active(&a), model_params_active(&b));
    ck_assert_int_eq(a.layers, b.layers);
    ck_assert_int_eq(a.ffn, b.ffn);
    ck_assert_int_eq(a.vocab, b.vocab);
  }
  model d = hf("deepseek-v3");
  for (int i = 0; i < 61; i++) ck_assert_int_eq(model_layer_is_moe(&d, i), i >= 3);
  ck_assert_int_eq(d.moe.router, MODEL_ROUTER_SIGMOID);
  ck_assert_int_eq(d.mtp_layers, 1);
  model g = hf("gpt-oss-120b");
  ck_assert_int_eq(g.attention_window, 128);
  ck_assert_int_eq(g.window_every, 2);
  ck_assert(g.bias);
}
END_TEST

/* Qwen3 dense: head_dim 128 where 5120 / 64 = 80, per-head q and k norms. Qwen3-32B: 64 layers of q 5120 x 8192, k and v
 * 5120 x 1024, o 8192 x 5120, two norms of 128, MLP 3 x 5120 x 25600, two RMSNorms; published 32.8B. Its block's QKV
 * GEMM is (8192 + 2048) / tp wide and the norms of q and k are an op of T (8192 + 1024) / tp elements. */
START_TEST(test_qwen3_dense_head_dim_and_qk_norm)
{
  model m = hf("qwen3-32b");
  ck_assert_int_eq(m.head_dim, 128);
  ck_assert(m.qk_norm);
  double h = 5120, layer = h * 8192 + 2 * h * 1024 + 8192 * h + 256 + 3 * h * 25600 + 2 * h;
  ck_assert_double_eq(model_layer_params(&m), layer);
  ck_assert_double_eq(model_params(&m), 64 * layer + h + 2 * 151936 * h);
  ck_assert(fabs(model_params(&m) / 32.8e9 - 1) < 0.005);
  /* model_params.c's parts add up to block.c's count */
  ck_assert_double_eq(model_layer_params_at(&m, 0, FALSE), block_layer_params(&m, 1));
  layout l = layout_default();
  l.tp = 2;
  l.micro_batch = 1;
  l.seq_len = 1024;
  l.attn = ATTN_FLASH2;
  block_code c = {.fused_norm = TRUE, .mlp_in_gemms = 2};
  block b;
  block_layer(&m, &l, &c, &b);
  ck_assert_int_eq(b.op[2].label, BL_QKV);
  ck_assert_double_eq(b.op[2].n, (8192 + 2048) / 2.0);
  ck_assert_int_eq(b.op[3].label, BL_NORM);
  ck_assert_double_eq(b.op[3].elements, 1024 * (8192 + 1024) / 2.0);
  /* FLOPs per token: 6 N + 6 L heads (qk + v) s = 6 N + 12 L (heads x head_dim) s */
  ck_assert_double_eq_tol(model_flops_per_token(&m, 4096), 6 * model_params(&m) + 12.0 * 64 * 8192 * 4096, 1);
}
END_TEST

/* Write `json` as a model file and load it: the message, or NULL. */
static char *file_error(const char *json, char **path_out)
{
  char *path = NULL;
  int fd = g_file_open_tmp("lsim-moe-XXXXXX.json", &path, NULL);
  close(fd);
  ck_assert(g_file_set_contents(path, json, -1, NULL));
  model m;
  GError *err = NULL;
  gboolean ok = model_load_file(path, &m, &err);
  g_unlink(path);
  *path_out = path;
  if (ok) return NULL;
  ck_assert(g_error_matches(err, LSIM_ERROR, LSIM_ERROR_INVALID));
  char *msg = g_strdup(err->message);
  g_error_free(err);
  return msg;
}

#define BASE "\"name\":\"x\",\"layers\":4,\"hidden\":512,\"heads\":8,\"ffn\":1024,\"vocab\":1000"
#define MOE BASE ",\"experts\":8,\"top_k\":2,\"expert_ffn\":256"
#define MLA ",\"kv_lora_rank\":64,\"qk_rope_head_dim\":16,\"qk_nope_head_dim\":32,\"v_head_dim\":32"

START_TEST(test_bad_moe_mla_keys_name_the_field_value_and_range)
{
  static const struct { const char *json, *want; } cases[] = {
      {"{" BASE ",\"top_k\":2}", "top_k is a mixture-of-experts key (allowed only with experts)"},
      {"{" BASE ",\"experts\":8,\"expert_ffn\":256}", "top_k: missing (required with experts; allowed: an integer from 1 to 8)"},
      {"{" BASE ",\"experts\":8,\"top_k\":9,\"expert_ffn\":256}", "top_k = 9 (allowed: an integer from 1 to 8)"},
      {"{" BASE ",\"experts\":0,\"top_k\":1,\"expert_ffn\":256}", "experts = 0 (allowed: an integer from 1 to 65536)"},
      {"{" MOE ",\"router\":\"tanh\"}", "router = 'tanh' (allowed: softmax | sigmoid)"},
      {"{" MOE ",\"capacity_factor\":0}", "capacity_factor = 0 (allowed: a number above 0 up to 64; absent: dropless)"},
      {"{" MOE ",\"first_dense_layers\":4}", "first_dense_layers = 4 (allowed: an integer from 0 to 3)"},
      {"{" MOE ",\"dense_layers\":[0,4]}", "dense_layers: 4 (allowed: distinct layer indices from 0 to 3)"},
      {"{" MOE ",\"dense_layers\":[1,1]}", "dense_layers: 1 appears more than once (allowed: distinct layer indices from 0 to 3)"},
      {"{" MOE ",\"dense_layers\":[0,1,2,3]}", "experts = 8 but every layer is dense"},
      {"{" MOE ",\"dense_layers\":[0],\"moe_layer_freq\":2}", "dense_layers with moe_layer_freq"},
      {"{" MOE ",\"shared_expert_ffn\":128}", "shared_expert_ffn is the width of a shared expert (allowed only with shared_experts >= 1)"},
      {"{" BASE ",\"v_head_dim\":32}", "v_head_dim is a key of multi-head latent attention (allowed only with kv_lora_rank)"},
      {"{" BASE ",\"kv_lora_rank\":64,\"qk_rope_head_dim\":16,\"qk_nope_head_dim\":32}",
       "v_head_dim: missing (required with kv_lora_rank; allowed: an integer from 1 to 65536)"},
      {"{" BASE MLA ",\"kv_heads\":2}", "kv_heads = 2 with kv_lora_rank"},
      {"{" BASE ",\"mtp_layers\":17}", "mtp_layers = 17 (allowed: an integer from 0 to 16)"},
      {"{" BASE ",\"head_dim\":0}", "head_dim = 0 (allowed: an integer from 1 to 65536)"},
      {"{" BASE ",\"qk_norm\":1}", "qk_norm = a number (allowed: true | false)"},
      {"{" BASE ",\"window_every\":2}", "window_every says which layers have the attention window (allowed only with attention_window)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = NULL;
    g_autofree char *msg = file_error(cases[i].json, &path);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    g_autofree char *want = g_strdup_printf("%s: %s", path, cases[i].want);
    ck_assert_msg(g_str_has_prefix(msg, want), "case %zu: want '%s', got '%s'", i, want, msg);
  }
}
END_TEST

/* first_dense_layers k and moe_layer_freq n: layer i is MoE where i >= k and i % n == 0 (Megatron, DeepSeek); an
 * explicit list otherwise; counts follow the layers. */
START_TEST(test_which_layers_are_moe)
{
  g_autofree char *path = NULL;
  g_autofree char *dir = g_dir_make_tmp("lsim-moe-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "m.json", NULL);
  ck_assert(g_file_set_contents(file, "{" MOE ",\"layers\":8,\"first_dense_layers\":1,\"moe_layer_freq\":2,"
                                "\"shared_experts\":2,\"shared_expert_ffn\":64}" , -1, NULL) == TRUE);
  model m;
  GError *err = NULL;
  /* "layers" twice is refused: build the file without BASE's */
  ck_assert(!model_load_file(file, &m, &err));
  g_clear_error(&err);
  ck_assert(g_file_set_contents(file, "{\"name\":\"x\",\"layers\":8,\"hidden\":512,\"heads\":8,\"ffn\":1024,\"vocab\":1000,"
                                "\"experts\":8,\"top_k\":2,\"expert_ffn\":256,\"first_dense_layers\":1,\"moe_layer_freq\":2,"
                                "\"shared_experts\":2,\"shared_expert_ffn\":64}", -1, NULL));
  ck_assert_msg(model_load_file(file, &m, &err), "%s", err ? err->message : "");
  static const gboolean want[8] = {FALSE, FALSE, TRUE, FALSE, TRUE, FALSE, TRUE, FALSE};
  for (int i = 0; i < 8; i++) ck_assert_int_eq(model_layer_is_moe(&m, i), want[i]);
  ck_assert_int_eq(model_moe_layers(&m), 3);
  double h = 512, attn = 4 * h * h, dense = attn + 3 * h * 1024 + 2 * h;
  double moe = attn + h * 8 + 8 * 3 * h * 256 + 2 * 3 * h * 64 + 2 * h, moe_active = moe - 6 * 3 * h * 256;
  ck_assert_double_eq(model_params_total(&m), 5 * dense + 3 * moe + h + 2 * 1000 * h);
  ck_assert_double_eq(model_params_active(&m), 5 * dense + 3 * moe_active + h + 2 * 1000 * h);
  /* Qwen3-MoE: layer i is MoE where (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers */
  g_autofree char *cfg = g_build_filename(dir, "config.json", NULL);
  ck_assert(g_file_set_contents(cfg, "{\"model_type\":\"qwen3_moe\",\"hidden_size\":512,\"intermediate_size\":1024,"
                                "\"num_hidden_layers\":6,\"num_attention_heads\":8,\"vocab_size\":1000,\"num_experts\":8,"
                                "\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,\"decoder_sparse_step\":2,"
                                "\"mlp_only_layers\":[3]}", -1, NULL));
  ck_assert_msg(model_load_file(cfg, &m, &err), "%s", err ? err->message : "");
  static const gboolean qwen[6] = {FALSE, TRUE, FALSE, FALSE, FALSE, TRUE};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(model_layer_is_moe(&m, i), qwen[i]);
  g_unlink(cfg);
  g_unlink(file);
  g_rmdir(dir);
  (void)path;
}
END_TEST

/* An MoE model simulates (expert parallelism: tests/test_moe_ep.c); until MLA and MTP exist a simulation refuses
 * them: exit 2, naming the model and its counts. */
START_TEST(test_simulation_refuses_experts_until_expert_parallelism)
{
  sim_request rq = {.gen = gen_default_options()};
  rq.m = named("qwen3-30b-a3b");
  rq.l = layout_default();
  GError *err = NULL;
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &rq.prof, &err));
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  model d = named("deepseek-v3"); /* MLA and MTP simulate (tests/test_mla.c); MLA with biases does not */
  ck_assert(model_check_simulable(&d, NULL));
  d.bias = TRUE;
  ck_assert(!model_check_simulable(&d, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "bias false with kv_lora_rank"));
  g_clear_error(&err);
  model l = named("llama3-70b");
  ck_assert(model_check_simulable(&l, NULL));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("moe_model");
  TCase *tc = tcase_create("moe");
  tcase_add_test(tc, test_moe_models_counted_by_hand);
  tcase_add_test(tc, test_shipped_moe_models_have_their_published_counts);
  tcase_add_test(tc, test_hf_configs_give_the_shipped_models);
  tcase_add_test(tc, test_qwen3_dense_head_dim_and_qk_norm);
  tcase_add_test(tc, test_bad_moe_mla_keys_name_the_field_value_and_range);
  tcase_add_test(tc, test_which_layers_are_moe);
  tcase_add_test(tc, test_simulation_refuses_experts_until_expert_parallelism);
  suite_add_tcase(s, tc);
  return check_run(s);
}
