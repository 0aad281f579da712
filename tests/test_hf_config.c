/* test_hf_config -- HuggingFace config.json files as models (workloads/hf_config.c): the three published configs
 * in tests/hf/ (copied unchanged from the Hub: Qwen/Qwen2.5-32B, meta-llama/Llama-3.1-70B,
 * mistralai/Mistral-7B-v0.1) load and give the published parameter counts within 0.5%; what the block cannot
 * express is refused naming the key; the vocabulary is padded as the stack's code pads it. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "workloads/model.h"
#include "workloads/model_params.h"

static model load(const char *name)
{
  g_autofree char *path = g_strdup_printf("%s/tests/hf/%s/config.json", LSIM_DATADIR, name);
  model m;
  GError *err = NULL;
  ck_assert_msg(model_load_file(path, &m, &err), "%s", err ? err->message : "");
  return m;
}

/* Published counts: Llama 3.1 70B 70.6 B (the Hub's safetensors count for meta-llama/Llama-3.1-70B); Mistral 7B
 * 7.24 B (mistralai/Mistral-7B-v0.1's); Qwen2.5-32B 32.76 B: its checkpoint, 65.53 GB of BF16 (2 bytes a
 * parameter), and its architecture by hand below; the model card's "32.5B" is 0.8% below both (docs/model.md). */
START_TEST(test_published_configs_give_the_published_parameter_counts)
{
  static const struct { const char *dir, *name; double published; } cases[] = {
      {"llama3.1-70b", "llama3.1-70b", 70.6e9}, {"mistral-7b", "mistral-7b", 7.24e9}, {"qwen2.5-32b", "qwen2.5-32b", 32.765e9}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    model m = load(cases[i].dir);
    ck_assert_str_eq(m.name, cases[i].name);
    double n = model_params(&m);
    ck_assert_msg(fabs(n / cases[i].published - 1) < 0.005, "%s: %.4g against %.4g", m.name, n, cases[i].published);
  }
  /* Qwen2.5-32B by hand: 64 layers of q (5120x5120 + bias 5120), k and v (5120x1024 + bias 1024 each), o
   * (5120x5120), gate, up, down (5120x27648 each), two RMSNorm weights; the final norm; untied embedding and head
   * (152064 x 5120 each) */
  model q = load("qwen2.5-32b");
  double layer = 5120.0 * 5120 + 5120 + 2 * (5120.0 * 1024 + 1024) + 5120.0 * 5120 + 3 * 5120.0 * 27648 + 2 * 5120;
  ck_assert_double_eq(model_params(&q), 64 * layer + 5120 + 2 * 152064.0 * 5120);
  ck_assert(q.qkv_bias && !q.bias && !q.tied_embeddings && q.kv_heads == 8 && q.heads == 40);
  model mi = load("mistral-7b");
  ck_assert_int_eq(mi.attention_window, 4096);
}
END_TEST

/* Write `json` to a config.json in a fresh folder and load it: the error message, or NULL. */
static char *load_error(const char *json)
{
  g_autofree char *dir = g_dir_make_tmp("lsim-hf-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "config.json", NULL);
  ck_assert(g_file_set_contents(path, json, -1, NULL));
  model m;
  GError *err = NULL;
  gboolean ok = model_load_file(path, &m, &err);
  g_unlink(path);
  g_rmdir(dir);
  if (ok) return NULL;
  char *msg = g_strdup(err->message);
  g_error_free(err);
  return msg;
}

#define DIMS "\"hidden_size\":1024,\"intermediate_size\":4096,\"num_hidden_layers\":2,\"num_attention_heads\":8,\"vocab_size\":1000"

START_TEST(test_what_the_block_cannot_express_is_refused_by_name)
{
  static const struct { const char *json, *want; } cases[] = {
      {"{\"architectures\":[\"MixtralForCausalLM\"]," DIMS ",\"num_experts_per_tok\":2}", "num_local_experts: missing"},
      {"{\"architectures\":[\"GemmaForCausalLM\"]," DIMS "}", "architectures = [\"GemmaForCausalLM\"] is not an architecture"},
      {"{\"model_type\":\"llama\",\"architectures\":[\"MistralForCausalLM\"]," DIMS "}", "model_type = \"llama\" contradicts"},
      {"{\"model_type\":\"llama\"," DIMS ",\"attention_bias\":true}", "attention_bias = true with mlp_bias = false"},
      {"{\"model_type\":\"qwen3_moe\"," DIMS ",\"num_experts\":8,\"num_experts_per_tok\":9,\"moe_intermediate_size\":64}",
       "num_experts_per_tok = 9 (allowed: an integer from 1 to 8)"},
      {"{\"model_type\":\"llama\",\"hidden_size\":1024,\"intermediate_size\":4096,\"num_hidden_layers\":0,"
       "\"num_attention_heads\":8,\"vocab_size\":1000}", "num_hidden_layers = 0 (allowed: an integer from 1 to 1024)"},
      {"{\"model_type\":\"llama\",\"hidden_size\":1024,\"intermediate_size\":4096,\"num_hidden_layers\":40.5,"
       "\"num_attention_heads\":8,\"vocab_size\":1000}", "num_hidden_layers = 40.5 (allowed: an integer from 1 to 1024)"},
      {"{\"model_type\":\"deepseek_v3\"," DIMS ",\"n_routed_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,"
       "\"kv_lora_rank\":64,\"qk_rope_head_dim\":16,\"qk_nope_head_dim\":32,\"v_head_dim\":32,\"q_lora_rank\":-3}",
       "q_lora_rank = -3 (allowed: an integer from 0 to 65536)"},
      {"{\"model_type\":\"qwen3_moe\"," DIMS ",\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,"
       "\"mlp_only_layers\":[0,1]}", "every layer is dense"},
      {"{\"model_type\":\"deepseek_v3\"," DIMS ",\"n_routed_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,"
       "\"kv_lora_rank\":64,\"qk_rope_head_dim\":16,\"qk_nope_head_dim\":32,\"v_head_dim\":32,\"scoring_func\":\"tanh\"}",
       "scoring_func = \"tanh\" (allowed: \"softmax\", \"sigmoid\")"},
      {"{\"model_type\":\"gpt_oss\"," DIMS ",\"num_local_experts\":8,\"num_experts_per_tok\":2,\"attention_bias\":true,"
       "\"sliding_window\":128,\"layer_types\":[\"full_attention\",\"sliding_attention\"]}", "layer_types: not 2 entries"},
      {"{\"model_type\":\"mixtral\"," DIMS ",\"num_local_experts\":8,\"num_experts_per_tok\":2,\"n_shared_experts\":1}",
       "key \"n_shared_experts\" of the HuggingFace config is not one layoutsim maps for MixtralForCausalLM"},
      {"{\"model_type\":\"llama\"," DIMS ",\"hidden_act\":\"gelu\"}", "hidden_act = \"gelu\""},
      {"{\"model_type\":\"llama\"," DIMS ",\"attention_dropout\":0.1}", "attention_dropout = nonzero"},
      {"{\"model_type\":\"qwen2\"," DIMS ",\"use_sliding_window\":true}", "use_sliding_window = true"},
      {"{\"model_type\":\"llama\"," DIMS ",\"num_experts\":8}", "key \"num_experts\" of the HuggingFace config is not one layoutsim maps"},
      {"{\"model_type\":\"llama\",\"hidden_size\":1024}", "num_hidden_layers: missing"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *msg = load_error(cases[i].json);
    ck_assert_msg(msg && strstr(msg, cases[i].want), "case %zu: want '%s', got '%s'", i, cases[i].want, msg ? msg : "(loaded)");
  }
  g_autofree char *ok = load_error("{\"model_type\":\"llama\"," DIMS ",\"attention_bias\":true,\"mlp_bias\":true}");
  ck_assert_msg(ok == NULL, "%s", ok);
}
END_TEST

/* Megatron pads 50257 at tp 8 to the next multiple of 128 x 8 = 1024: 49 x 1024 = 50176 < 50257 <= 51200; a
 * vocabulary tp divides is left as it is; a code that does not pad leaves it. */
START_TEST(test_vocabulary_padded_as_the_stack_pads_it)
{
  ck_assert_int_eq(model_padded_vocab(50257, 8, 128), 51200);
  ck_assert_int_eq(model_padded_vocab(50257, 1, 128), 50257);
  ck_assert_int_eq(model_padded_vocab(32000, 8, 128), 32000);
  ck_assert_int_eq(model_padded_vocab(50257, 8, 0), 50257);
  /* the published GPT-3 layout: refused by the study's code, run by Megatron-DeepSpeed's with 51200 */
  GError *err = NULL;
  sim_request rq = {.gen = gen_default_options()};
  ck_assert(model_load_named("gpt3-175b", &rq.m, &err));
  rq.l = layout_default();
  rq.l.gpus = 64;
  rq.l.tp = 8;
  rq.l.pp = 8;
  rq.l.global_batch = 64;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  sim_request st = rq;
  ck_assert(!sim_request_prepare(&st, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "vocab: 50257 is not a multiple of tp=8"));
  g_clear_error(&err);
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "megatron-deepspeed", &rq.prof, &err));
  ck_assert_msg(sim_request_prepare(&rq, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(rq.m.vocab, 51200);
  ck_assert_int_eq(rq.m.vocab_unpadded, 50257);
  /* the padded rows are parameters: 2 x (51200 - 50257) x 12288 more than the model's own count (untied? GPT-3's
   * head is tied: once) */
  model plain;
  ck_assert(model_load_named("gpt3-175b", &plain, NULL));
  double extra = (plain.tied_embeddings ? 1.0 : 2.0) * (51200 - 50257) * 12288.0;
  ck_assert_double_eq(model_params(&rq.m) - model_params(&plain), extra);
}
END_TEST

/* Mistral's window of 4096 never cuts a sequence of 4096; a longer one is refused naming the window. */
START_TEST(test_a_sequence_longer_than_the_attention_window_is_refused)
{
  GError *err = NULL;
  sim_request rq = {.gen = gen_default_options(), .m = load("mistral-7b")};
  rq.l = layout_default();
  rq.l.gpus = 8;
  rq.l.seq_len = 4096;
  rq.l.global_batch = 8;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  sim_request ok = rq;
  ck_assert_msg(sim_request_prepare(&ok, &err), "%s", err ? err->message : "");
  rq.l.seq_len = 8192;
  ck_assert(!sim_request_prepare(&rq, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "attention window of 4096 tokens"));
  g_clear_error(&err);
}
END_TEST

/* Per GPU: llama3.1-70b at tp 8, pp 1: every layer, both embeddings and the final norm, matrices over 8. */
START_TEST(test_params_per_gpu_is_the_largest_stages_tp_shard)
{
  model m = load("llama3.1-70b");
  layout l = layout_default();
  l.gpus = 8;
  l.tp = 8;
  double h = 8192, kvd = 1024, f = 28672, V = 128256;
  double by_hand = 80 * ((h * (h + 2 * kvd) + h * h + 3 * h * f) / 8 + 2 * h) + h + 2 * V * h / 8;
  ck_assert_double_eq_tol(model_params_per_gpu(&m, &l, PARTITION_LAYERS), by_hand, 1);
  l.pp = 2; /* 40 layers each; the first stage has the embedding, the last the head and the final norm */
  double half = 40 * ((h * (h + 2 * kvd) + h * h + 3 * h * f) / 8 + 2 * h) + V * h / 8 + h;
  ck_assert_double_eq_tol(model_params_per_gpu(&m, &l, PARTITION_LAYERS), half, 1);
}
END_TEST

/* Per GPU of a model with experts: its routed experts are held too, experts/ep of them (each whole at etp 1).
 * qwen3-30b-a3b at ep 8 on 8 GPUs (tp 1, pp 1): per layer attention (q 32 x 128, k and v 4 x 128, o), its two
 * q/k norms of 128, two RMSNorms, the router h x 128 and 128/8 = 16 experts of 3 x h x 768; then the final norm,
 * the embedding and the head. Without the experts it was 1.54 B, a third of what a GPU holds. */
START_TEST(test_params_per_gpu_counts_the_experts_of_a_rank)
{
  model m = load("qwen3-30b-a3b");
  layout l = layout_default();
  l.gpus = 8;
  l.ep = 8;
  double h = 2048, qd = 32 * 128, kvd = 4 * 128, d = 128, V = 151936;
  double layer = h * (qd + 2 * kvd) + qd * h + 2 * d + 2 * h + h * 128 + 128.0 / 8 * 3 * h * 768;
  double by_hand = 48 * layer + h + 2 * V * h;
  ck_assert_double_eq_tol(model_params_per_gpu(&m, &l, PARTITION_LAYERS), by_hand, 1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("hf_config");
  TCase *tc = tcase_create("hf_config");
  tcase_add_test(tc, test_published_configs_give_the_published_parameter_counts);
  tcase_add_test(tc, test_what_the_block_cannot_express_is_refused_by_name);
  tcase_add_test(tc, test_vocabulary_padded_as_the_stack_pads_it);
  tcase_add_test(tc, test_a_sequence_longer_than_the_attention_window_is_refused);
  tcase_add_test(tc, test_params_per_gpu_is_the_largest_stages_tp_shard);
  tcase_add_test(tc, test_params_per_gpu_counts_the_experts_of_a_rank);
  suite_add_tcase(s, tc);
  return check_run(s);
}
