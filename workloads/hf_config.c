/* hf_config -- see hf_config.h. The keys are those of transformers' LlamaConfig, MistralConfig, Qwen2Config,
 * Qwen3Config, MixtralConfig, Qwen3MoeConfig, DeepseekV3Config and GptOssConfig (configuration_*.py) as the
 * published config.json files spell them. */
#include "hf_config.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

/* The architectures layoutsim's block expresses: the transformers class, its model_type, and what the class
 * builds beyond the Llama block. */
typedef enum { HF_DENSE, HF_MIXTRAL, HF_QWEN3_MOE, HF_DEEPSEEK_V3, HF_GPT_OSS } hf_family;

typedef struct hf_arch {
  const char *cls, *type;
  gboolean qkv_bias;       /* the class puts a bias on q, k and v (Qwen2's, fixed in its code) */
  gboolean window_key;     /* "sliding_window" applies to every layer (Mistral, Mixtral) */
  gboolean qwen_window;    /* "use_sliding_window" says whether it applies (Qwen2, Qwen3) */
  gboolean qk_norm;        /* a per-head RMSNorm of q and k (Qwen3's q_norm, k_norm) */
  hf_family family;        /* the mixture-of-experts classes: which keys say what (below) */
} hf_arch;

static const hf_arch ARCHS[] = {
    {"LlamaForCausalLM", "llama", FALSE, FALSE, FALSE, FALSE, HF_DENSE},
    {"MistralForCausalLM", "mistral", FALSE, TRUE, FALSE, FALSE, HF_DENSE},
    {"Qwen2ForCausalLM", "qwen2", TRUE, FALSE, TRUE, FALSE, HF_DENSE},
    {"Qwen3ForCausalLM", "qwen3", FALSE, FALSE, TRUE, TRUE, HF_DENSE},
    {"MixtralForCausalLM", "mixtral", FALSE, TRUE, FALSE, FALSE, HF_MIXTRAL},
    {"Qwen3MoeForCausalLM", "qwen3_moe", FALSE, FALSE, TRUE, TRUE, HF_QWEN3_MOE},
    {"DeepseekV3ForCausalLM", "deepseek_v3", FALSE, FALSE, FALSE, FALSE, HF_DEEPSEEK_V3},
    {"GptOssForCausalLM", "gpt_oss", FALSE, TRUE, FALSE, FALSE, HF_GPT_OSS},
};

/* The keys of each mixture-of-experts family, mapped below or of no effect on a step's cost (docs/model.md). */
static const char *const KEYS_MIXTRAL[] = {"num_local_experts", "num_experts_per_tok", "router_aux_loss_coef",
                                           "router_jitter_noise", "output_router_logits", NULL};
static const char *const KEYS_QWEN3_MOE[] = {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob",
                                             "router_aux_loss_coef", "output_router_logits", NULL};
static const char *const KEYS_DEEPSEEK_V3[] = {
    "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size", "first_k_dense_replace",
    "moe_layer_freq", "scoring_func", "topk_method", "n_group", "topk_group", "routed_scaling_factor", "norm_topk_prob",
    "aux_loss_alpha", "seq_aux", "ep_size", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
    "v_head_dim", "num_nextn_predict_layers", "quantization_config", "auto_map", NULL};
static const char *const KEYS_GPT_OSS[] = {"num_local_experts", "num_experts_per_tok", "experts_per_token",
                                           "router_aux_loss_coef", "output_router_logits", "swiglu_limit",
                                           "layer_types", "initial_context_length", "quantization_config", NULL};

static const char *const *family_keys(hf_family f)
{
  switch (f) {
  case HF_MIXTRAL: return KEYS_MIXTRAL;
  case HF_QWEN3_MOE: return KEYS_QWEN3_MOE;
  case HF_DEEPSEEK_V3: return KEYS_DEEPSEEK_V3;
  case HF_GPT_OSS: return KEYS_GPT_OSS;
  default: return NULL;
  }
}

/* Keys whose value does not change a training step's work, memory or communication (docs/model.md says why
 * for each): read nowhere, accepted whatever their value. */
static const char *const NO_EFFECT[] = {
    "rope_theta", "rope_scaling", "max_position_embeddings", "rms_norm_eps", "initializer_range", "bos_token_id",
    "eos_token_id", "pad_token_id", "torch_dtype", "transformers_version", "use_cache", "pretraining_tp"};

/* Keys mapped to a model field or checked (below). */
static const char *const MAPPED[] = {
    "architectures", "model_type", "_name_or_path", "hidden_size", "intermediate_size", "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "vocab_size", "hidden_act", "tie_word_embeddings",
    "attention_bias", "mlp_bias", "attention_dropout", "head_dim", "sliding_window", "use_sliding_window",
    "max_window_layers"};


gboolean hf_config_detect(const cJSON *j)
{
  return cJSON_IsObject(j) && (cJSON_GetObjectItemCaseSensitive(j, "architectures") ||
                               cJSON_GetObjectItemCaseSensitive(j, "model_type"));
}

static gboolean in_list(const char *key, const char *const *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!strcmp(key, list[i])) return TRUE;
  return FALSE;
}

static char *arch_names(void)
{
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(ARCHS); i++) g_string_append_printf(s, "%s%s", i ? ", " : "", ARCHS[i].cls);
  return g_string_free(s, FALSE);
}

/* The architecture the config names ("architectures": one class; "model_type" alone: its type), both agreeing. */
static gboolean find_arch(const cJSON *j, const char *where, const hf_arch **out, GError **err)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "architectures"), *t = cJSON_GetObjectItemCaseSensitive(j, "model_type");
  g_autofree char *names = arch_names();
  *out = NULL;
  if (a) {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 1 || !cJSON_IsString(cJSON_GetArrayItem(a, 0)))
      return lsim_invalid_at(err, where, "architectures = %s (allowed: a list of one of %s)",
                 cJSON_IsArray(a) ? "a list not of one string" : lsim_json_type_name(a), names);
    const char *cls = cJSON_GetArrayItem(a, 0)->valuestring;
    for (size_t i = 0; i < G_N_ELEMENTS(ARCHS); i++)
      if (!strcmp(cls, ARCHS[i].cls)) *out = &ARCHS[i];
    if (!*out) {
      g_autofree char *shown = lsim_quote(cls, 60);
      return lsim_invalid_at(err, where, "architectures = [%s] is not an architecture layoutsim's block expresses (allowed: %s)",
                 shown, names);
    }
  }
  if (t) {
    if (!cJSON_IsString(t)) return lsim_invalid_at(err, where, "model_type = %s (allowed: a string)", lsim_json_type_name(t));
    const hf_arch *byt = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(ARCHS); i++)
      if (!strcmp(t->valuestring, ARCHS[i].type)) byt = &ARCHS[i];
    g_autofree char *shown = lsim_quote(t->valuestring, 60);
    if (!byt) return lsim_invalid_at(err, where, "model_type = %s is not one layoutsim's block expresses (allowed: llama, mistral, "
                         "qwen2, qwen3, mixtral, qwen3_moe, deepseek_v3, gpt_oss)", shown);
    if (*out && *out != byt)
      return lsim_invalid_at(err, where, "model_type = %s contradicts architectures = [\"%s\"] (allowed: \"%s\")", shown,
                 (*out)->cls, (*out)->type);
    *out = byt;
  }
  return TRUE;
}

/* A required (or, with dflt > 0, optional) integer key in 1..max. */
static gboolean hf_int(const cJSON *j, const char *key, int max, int dflt, int *out, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v && dflt > 0) {
    *out = dflt;
    return TRUE;
  }
  if (!v) return lsim_invalid_at(err, where, "%s: missing (a config.json of this architecture has it)", key);
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 || v->valuedouble > max)
    return cJSON_IsNumber(v) ? lsim_invalid_at(err, where, "%s = %.17g (allowed: an integer from 1 to %d)", key,
                                               v->valuedouble, max)
                             : lsim_invalid_at(err, where, "%s = %s (allowed: an integer from 1 to %d)", key,
                                               lsim_json_type_name(v), max);
  *out = (int)v->valuedouble;
  return TRUE;
}

/* An optional boolean key (dflt when absent). */
static gboolean hf_bool(const cJSON *j, const char *key, gboolean dflt, gboolean *out, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v) {
    *out = dflt;
    return TRUE;
  }
  if (!cJSON_IsBool(v)) return lsim_invalid_at(err, where, "%s = %s (allowed: true | false)", key, lsim_json_type_name(v));
  *out = cJSON_IsTrue(v);
  return TRUE;
}

/* The model's name: "_name_or_path"'s last part, else the folder of a config.json, else the file's name. */
static gboolean hf_name(const cJSON *j, const char *path, model *out, GError **err)
{
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "_name_or_path");
  g_autofree char *name = NULL;
  if (n && cJSON_IsString(n) && n->valuestring[0]) name = g_path_get_basename(n->valuestring);
  else {
    g_autofree char *base = g_path_get_basename(path);
    if (!strcmp(base, "config.json")) {
      g_autofree char *dir = g_path_get_dirname(path);
      name = g_path_get_basename(dir);
    } else name = g_str_has_suffix(base, ".json") ? g_strndup(base, strlen(base) - 5) : g_strdup(base);
  }
  if (!strcmp(name, ".") || !strcmp(name, "/")) { g_free(name); name = g_strdup("config"); }
  if (!lsim_json_check_text(name, sizeof out->name - 1, path, "the model's name (from _name_or_path or the path)", err))
    return FALSE;
  g_strlcpy(out->name, name, sizeof out->name);
  return TRUE;
}

/* An optional non-negative integer key (absent or null: dflt). */
static gboolean hf_count(const cJSON *j, const char *key, int max, int dflt, int *out, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v || cJSON_IsNull(v)) {
    *out = dflt;
    return TRUE;
  }
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > max)
    return cJSON_IsNumber(v) ? lsim_invalid_at(err, where, "%s = %.17g (allowed: an integer from 0 to %d)", key,
                                               v->valuedouble, max)
                             : lsim_invalid_at(err, where, "%s = %s (allowed: an integer from 0 to %d)", key,
                                               lsim_json_type_name(v), max);
  *out = (int)v->valuedouble;
  return TRUE;
}

/* GPT-OSS's layer_types: every layer "full_attention" (no window), or "sliding_attention" on the even layers and
 * "full_attention" on the odd ones (the released models: window_every 2), or every layer sliding. */
static gboolean gpt_oss_window(const cJSON *j, const char *where, model *out, GError **err)
{
  const cJSON *lt = cJSON_GetObjectItemCaseSensitive(j, "layer_types");
  int window = out->attention_window;
  out->attention_window = 0;
  if (!lt) return TRUE; /* GptOssConfig's default: alternating, from sliding_window */
  int sliding = 0, even_sliding = 0, n = cJSON_IsArray(lt) ? cJSON_GetArraySize(lt) : -1;
  for (int i = 0; i < n; i++) {
    const cJSON *x = cJSON_GetArrayItem(lt, i);
    gboolean sl = cJSON_IsString(x) && !strcmp(x->valuestring, "sliding_attention");
    if (!sl && !(cJSON_IsString(x) && !strcmp(x->valuestring, "full_attention"))) n = -1;
    sliding += sl;
    even_sliding += sl && i % 2 == 0;
  }
  gboolean alternate = sliding == even_sliding && sliding == (out->layers + 1) / 2;
  if (n != out->layers || !(sliding == 0 || sliding == out->layers || alternate))
    return lsim_invalid_at(err, where, "layer_types: not %d entries of full_attention, or sliding_attention on every layer or on "
               "the even ones (allowed: those; another pattern of windowed layers is not expressed)", out->layers);
  if (sliding && !window)
    return lsim_invalid_at(err, where, "layer_types has sliding_attention without a sliding_window (allowed: a sliding_window)");
  if (sliding) out->attention_window = window;
  out->window_every = sliding && sliding != out->layers ? 2 : 0;
  return TRUE;
}

/* DeepSeek-V3's multi-head latent attention and its multi-token prediction modules. */
static gboolean deepseek_mla(const cJSON *j, const char *where, model *out, GError **err)
{
  model_mla *a = &out->mla;
  if (!hf_count(j, "q_lora_rank", 1 << 16, 0, &a->q_lora_rank, where, err) ||
      !hf_int(j, "kv_lora_rank", 1 << 16, 0, &a->kv_lora_rank, where, err) ||
      !hf_int(j, "qk_rope_head_dim", 1 << 16, 0, &a->qk_rope_head_dim, where, err) ||
      !hf_int(j, "qk_nope_head_dim", 1 << 16, 0, &a->qk_nope_head_dim, where, err) ||
      !hf_int(j, "v_head_dim", 1 << 16, 0, &a->v_head_dim, where, err) ||
      !hf_count(j, "num_nextn_predict_layers", 16, 0, &out->mtp_layers, where, err))
    return FALSE;
  if (out->kv_heads != out->heads)
    return lsim_invalid_at(err, where, "num_key_value_heads (%d) is not num_attention_heads (%d): latent attention expands keys and "
               "values for every head (allowed: %d)", out->kv_heads, out->heads, out->heads);
  return TRUE;
}

/* The experts of the MoE classes: their count, top-k and width, the shared experts, the dense layers (DeepSeek:
 * i < first_k_dense_replace or i % moe_layer_freq != 0; Qwen3-MoE: i in mlp_only_layers or (i + 1) %
 * decoder_sparse_step != 0; Mixtral and GPT-OSS: none), and the router's scoring. */
static gboolean moe_of(const cJSON *j, const hf_arch *arch, const char *where, model *out, GError **err)
{
  model_moe *e = &out->moe;
  const int MAXE = 1 << 16;
  switch (arch->family) {
  case HF_MIXTRAL:
    if (!hf_int(j, "num_local_experts", MAXE, 0, &e->experts, where, err)) return FALSE;
    e->expert_ffn = out->ffn;
    break;
  case HF_GPT_OSS: {
    if (!hf_int(j, "num_local_experts", MAXE, 0, &e->experts, where, err)) return FALSE;
    e->expert_ffn = out->ffn;
    int alias = 0;
    if (!hf_count(j, "experts_per_token", MAXE, 0, &alias, where, err)) return FALSE;
    if (alias && cJSON_GetObjectItemCaseSensitive(j, "num_experts_per_tok") &&
        cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "num_experts_per_tok")) != alias)
      return lsim_invalid_at(err, where, "experts_per_token = %d contradicts num_experts_per_tok (allowed: the same value)", alias);
    if (alias && !cJSON_GetObjectItemCaseSensitive(j, "num_experts_per_tok")) e->top_k = alias;
    break;
  }
  case HF_QWEN3_MOE:
    if (!hf_int(j, "num_experts", MAXE, 0, &e->experts, where, err) ||
        !hf_int(j, "moe_intermediate_size", 1 << 22, 0, &e->expert_ffn, where, err))
      return FALSE;
    break;
  case HF_DEEPSEEK_V3:
    if (!hf_int(j, "n_routed_experts", MAXE, 0, &e->experts, where, err) ||
        !hf_int(j, "moe_intermediate_size", 1 << 22, 0, &e->expert_ffn, where, err) ||
        !hf_count(j, "n_shared_experts", 1024, 0, &e->shared_experts, where, err))
      return FALSE;
    e->shared_expert_ffn = e->expert_ffn;
    break;
  default: return TRUE;
  }
  if (!e->top_k && !hf_int(j, "num_experts_per_tok", e->experts, 0, &e->top_k, where, err)) return FALSE;
  e->router = MODEL_ROUTER_SOFTMAX;
  const cJSON *sf = cJSON_GetObjectItemCaseSensitive(j, "scoring_func");
  if (sf) {
    if (!cJSON_IsString(sf) || (strcmp(sf->valuestring, "softmax") && strcmp(sf->valuestring, "sigmoid"))) {
      g_autofree char *shown = cJSON_IsString(sf) ? lsim_quote(sf->valuestring, 40) : g_strdup(lsim_json_type_name(sf));
      return lsim_invalid_at(err, where, "scoring_func = %s (allowed: \"softmax\", \"sigmoid\")", shown);
    }
    if (!strcmp(sf->valuestring, "sigmoid")) e->router = MODEL_ROUTER_SIGMOID;
  }
  if (arch->family == HF_DEEPSEEK_V3) {
    int first = 0, freq = 1;
    if (!hf_count(j, "first_k_dense_replace", out->layers - 1, 0, &first, where, err) ||
        !hf_int(j, "moe_layer_freq", out->layers, 1, &freq, where, err))
      return FALSE;
    for (int i = 0; i < out->layers; i++)
      if (i < first || i % freq != 0) e->dense_mask[i / 32] |= 1u << (i % 32);
  } else if (arch->family == HF_QWEN3_MOE) {
    int step = 1;
    if (!hf_int(j, "decoder_sparse_step", out->layers, 1, &step, where, err)) return FALSE;
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(j, "mlp_only_layers"), *x;
    if (only && !cJSON_IsArray(only))
      return lsim_invalid_at(err, where, "mlp_only_layers = %s (allowed: a list of layer indices from 0 to %d)",
                 lsim_json_type_name(only), out->layers - 1);
    for (int i = 0; i < out->layers; i++)
      if ((i + 1) % step != 0) e->dense_mask[i / 32] |= 1u << (i % 32);
    cJSON_ArrayForEach(x, only)
    {
      if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < 0 || x->valuedouble >= out->layers)
        return lsim_invalid_at(err, where, "mlp_only_layers: an entry that is not a layer index (allowed: integers from 0 to %d)",
                   out->layers - 1);
      int i = (int)x->valuedouble;
      e->dense_mask[i / 32] |= 1u << (i % 32);
    }
  }
  if (model_moe_layers(out) == 0)
    return lsim_invalid_at(err, where, "every layer is dense (allowed: at least one mixture-of-experts layer; a dense model's class)");
  return TRUE;
}

gboolean hf_config_to_model(const cJSON *j, const char *path, model *out, GError **err)
{
  memset(out, 0, sizeof *out);
  const char *where = path;
  const hf_arch *arch;
  if (!find_arch(j, where, &arch, err)) return FALSE;
  const char *const *fam = arch ? family_keys(arch->family) : NULL;
  for (const cJSON *k = j->child; k; k = k->next) { /* every key is mapped, of no effect, or refused */
    gboolean known = in_list(k->string, MAPPED, G_N_ELEMENTS(MAPPED)) || in_list(k->string, NO_EFFECT, G_N_ELEMENTS(NO_EFFECT));
    for (const char *const *f = fam; f && *f && !known; f++) known = !strcmp(k->string, *f);
    if (!known) {
      g_autofree char *shown = lsim_quote(k->string, 60);
      return lsim_invalid_at(err, where, "key %s of the HuggingFace config is not one layoutsim maps%s%s (allowed: the keys of "
                 "docs/model.md, \"HuggingFace config.json\"; a key that changes the model's cost is refused rather "
                 "than ignored)", shown, arch ? " for " : "", arch ? arch->cls : "");
    }
  }
  if (!hf_name(j, path, out, err)) return FALSE;
  /* the dimensions, within the limits of a model file (docs/model.md) */
  if (!hf_int(j, "num_hidden_layers", 1024, 0, &out->layers, where, err) ||
      !hf_int(j, "hidden_size", 1 << 20, 0, &out->hidden, where, err) ||
      !hf_int(j, "num_attention_heads", 1 << 16, 0, &out->heads, where, err) ||
      !hf_int(j, "intermediate_size", 1 << 22, 0, &out->ffn, where, err) ||
      !hf_int(j, "vocab_size", MODEL_MAX_VOCAB, 0, &out->vocab, where, err) ||
      !hf_int(j, "num_key_value_heads", out->heads, out->heads, &out->kv_heads, where, err))
    return FALSE;
  if (out->hidden % out->heads != 0)
    return lsim_invalid_at(err, where, "hidden_size (%d) is not a multiple of num_attention_heads (%d) (allowed: a multiple; "
               "layoutsim's head size is hidden_size / num_attention_heads)", out->hidden, out->heads);
  if (out->heads % out->kv_heads != 0)
    return lsim_invalid_at(err, where, "num_key_value_heads (%d) does not divide num_attention_heads (%d) (allowed: a divisor)",
               out->kv_heads, out->heads);
  int head_dim = 0;
  if (cJSON_GetObjectItemCaseSensitive(j, "head_dim") && !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "head_dim")) &&
      !hf_int(j, "head_dim", 1 << 16, 0, &head_dim, where, err))
    return FALSE;
  if (head_dim && head_dim != out->hidden / out->heads) out->head_dim = head_dim; /* Qwen3-32B: 128 for 5120 / 64 */
  out->qk_norm = arch->qk_norm;
  /* the MLP: gated with SiLU (SwiGLU), the only activation of these classes layoutsim models */
  const cJSON *act = cJSON_GetObjectItemCaseSensitive(j, "hidden_act");
  if (act && !(cJSON_IsString(act) && !strcmp(act->valuestring, "silu"))) {
    g_autofree char *shown = cJSON_IsString(act) ? lsim_quote(act->valuestring, 40) : g_strdup(lsim_json_type_name(act));
    return lsim_invalid_at(err, where, "hidden_act = %s (allowed: \"silu\", the gated MLP layoutsim models as SwiGLU)", shown);
  }
  out->norm = MODEL_NORM_RMSNORM;
  out->mlp = MODEL_MLP_SWIGLU;
  out->positions = MODEL_POS_ROTARY;
  /* biases: Llama's attention_bias puts one on q, k, v and o, mlp_bias on the three MLP projections; layoutsim has
   * all of them (bias) or QKV's alone (qkv_bias, Qwen2's, which its class always builds) */
  gboolean attn_bias, mlp_bias;
  if (!hf_bool(j, "attention_bias", FALSE, &attn_bias, where, err) || !hf_bool(j, "mlp_bias", FALSE, &mlp_bias, where, err))
    return FALSE;
  if (arch->qkv_bias && (cJSON_GetObjectItemCaseSensitive(j, "attention_bias") || mlp_bias))
    return lsim_invalid_at(err, where, "%s = true: Qwen2's biases are fixed by its class (q, k and v) (allowed: no attention_bias, "
               "no mlp_bias)", mlp_bias ? "mlp_bias" : "attention_bias");
  if (arch->family == HF_GPT_OSS) { /* its experts and router always have biases: with attention_bias, every linear layer */
    if (cJSON_GetObjectItemCaseSensitive(j, "mlp_bias"))
      return lsim_invalid_at(err, where, "mlp_bias is not a key of GptOssForCausalLM (allowed: not given; its experts' biases are fixed by its class)");
    if (!attn_bias)
      return lsim_invalid_at(err, where, "attention_bias = false: GPT-OSS's experts and router have biases, its attention then none, "
                 "which layoutsim does not express (allowed: true)");
    mlp_bias = TRUE;
  }
  if (attn_bias != mlp_bias)
    return lsim_invalid_at(err, where, "attention_bias = %s with mlp_bias = %s: layoutsim has biases on every linear layer or on "
               "none (or on QKV alone, Qwen2) (allowed: both true or both false)", attn_bias ? "true" : "false",
               mlp_bias ? "true" : "false");
  out->bias = attn_bias && mlp_bias;
  out->qkv_bias = arch->qkv_bias;
  if (!hf_bool(j, "tie_word_embeddings", FALSE, &out->tied_embeddings, where, err)) return FALSE;
  const cJSON *drop = cJSON_GetObjectItemCaseSensitive(j, "attention_dropout");
  if (drop && !(cJSON_IsNumber(drop) && drop->valuedouble == 0))
    return lsim_invalid_at(err, where, "attention_dropout = %s: dropout on the attention probabilities alone, which layoutsim does "
               "not separate from hidden dropout (allowed: 0.0)", cJSON_IsNumber(drop) ? "nonzero" : lsim_json_type_name(drop));
  /* sliding-window attention: Mistral's on every layer (null: none); Qwen's only with use_sliding_window, and then
   * on the layers from max_window_layers on, which one model cannot say */
  const cJSON *sw = cJSON_GetObjectItemCaseSensitive(j, "sliding_window");
  if (arch->window_key && sw && !cJSON_IsNull(sw) &&
      !hf_int(j, "sliding_window", 1 << 24, 0, &out->attention_window, where, err))
    return FALSE;
  gboolean use_sw = FALSE;
  if (!hf_bool(j, "use_sliding_window", FALSE, &use_sw, where, err)) return FALSE;
  if (use_sw)
    return lsim_invalid_at(err, where, "use_sliding_window = true: sliding-window attention on the layers from max_window_layers "
               "on, which layoutsim does not model (allowed: false)");
  if (!arch->window_key && !arch->qwen_window && sw && !cJSON_IsNull(sw))
    return lsim_invalid_at(err, where, "sliding_window is not a key of %s (allowed: no sliding_window)", arch->cls);
  if (!arch->qwen_window && (cJSON_GetObjectItemCaseSensitive(j, "use_sliding_window") ||
                             cJSON_GetObjectItemCaseSensitive(j, "max_window_layers")))
    return lsim_invalid_at(err, where, "%s is not a key of %s (allowed: not given)",
               cJSON_GetObjectItemCaseSensitive(j, "use_sliding_window") ? "use_sliding_window" : "max_window_layers",
               arch->cls);
  if (arch->family == HF_GPT_OSS && !gpt_oss_window(j, where, out, err)) return FALSE;
  if (arch->family == HF_DEEPSEEK_V3 && !deepseek_mla(j, where, out, err)) return FALSE;
  return arch->family == HF_DENSE || moe_of(j, arch, where, out, err);
}
