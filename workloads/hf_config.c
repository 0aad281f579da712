/* hf_config -- see hf_config.h. The keys are those of transformers' LlamaConfig, MistralConfig, Qwen2Config
 * and Qwen3Config (configuration_*.py) as the published config.json files spell them. */
#include "hf_config.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

/* The architectures layoutsim's block expresses: the transformers class, its model_type, and what the class
 * builds beyond the Llama block. */
typedef struct hf_arch {
  const char *cls, *type;
  gboolean qkv_bias;       /* the class puts a bias on q, k and v (Qwen2's, fixed in its code) */
  gboolean window_key;     /* "sliding_window" applies to every layer (Mistral) */
  gboolean qwen_window;    /* "use_sliding_window" says whether it applies (Qwen2, Qwen3) */
  gboolean qk_norm;        /* a per-head RMSNorm of q and k (Qwen3), which the block does not model */
} hf_arch;

static const hf_arch ARCHS[] = {
    {"LlamaForCausalLM", "llama", FALSE, FALSE, FALSE, FALSE},
    {"MistralForCausalLM", "mistral", FALSE, TRUE, FALSE, FALSE},
    {"Qwen2ForCausalLM", "qwen2", TRUE, FALSE, TRUE, FALSE},
    {"Qwen3ForCausalLM", "qwen3", FALSE, FALSE, TRUE, TRUE},
};

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
                         "qwen2, qwen3)", shown);
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
    return lsim_invalid_at(err, where, "%s = %s (allowed: an integer from 1 to %d)", key,
               cJSON_IsNumber(v) ? "out of range" : lsim_json_type_name(v), max);
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

gboolean hf_config_to_model(const cJSON *j, const char *path, model *out, GError **err)
{
  memset(out, 0, sizeof *out);
  const char *where = path;
  for (const cJSON *k = j->child; k; k = k->next) /* every key is mapped, of no effect, or refused */
    if (!in_list(k->string, MAPPED, G_N_ELEMENTS(MAPPED)) && !in_list(k->string, NO_EFFECT, G_N_ELEMENTS(NO_EFFECT))) {
      g_autofree char *shown = lsim_quote(k->string, 60);
      return lsim_invalid_at(err, where, "key %s of the HuggingFace config is not one layoutsim maps (allowed: the keys of "
                 "docs/model.md, \"HuggingFace config.json\"; a key that changes the model's cost is refused rather "
                 "than ignored)", shown);
    }
  const hf_arch *arch;
  if (!find_arch(j, where, &arch, err)) return FALSE;
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
  if (head_dim && head_dim != out->hidden / out->heads)
    return lsim_invalid_at(err, where, "head_dim = %d, not hidden_size / num_attention_heads = %d: attention's width differs from "
               "the model's, which layoutsim's block does not express (allowed: head_dim %d, or no head_dim)", head_dim,
               out->hidden / out->heads, out->hidden / out->heads);
  if (arch->qk_norm)
    return lsim_invalid_at(err, where, "architectures = [\"%s\"]: its per-head RMSNorm of queries and keys (q_norm, k_norm) is not "
               "in layoutsim's block (allowed: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM)", arch->cls);
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
  return TRUE;
}
