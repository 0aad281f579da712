/* model -- see model.h. Built-in models live as JSON in workloads/models/;
 * LSIM_DATADIR (set by meson to the source tree) or $LAYOUTSIM_DATA finds them. */
#include "model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "block.h"
#include "hf_config.h"
#include "model_params.h"
#include "common/lsim_error.h"
#include "common/lsim_json.h"

static const char *const BUILTIN[] = {"llama-7b",  "llama-13b",  "llama-30b",   "llama-65b", "llama2-70b",
                                      "llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b", "bloom-176b",
                                      "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b",
                                      "gpt-oss-120b"};

/* Names users type for a built-in model (the same architecture and dimensions): Llama 3.1 is Llama 3 with longer
 * rotary scaling, which changes no cost. */
static const char *const ALIASES[][2] = {{"llama3.1-8b", "llama3-8b"},   {"llama3.1-70b", "llama3-70b"},
                                         {"llama3.1-405b", "llama3-405b"}, {"llama-2-70b", "llama2-70b"},
                                         {"llama-3-8b", "llama3-8b"},     {"llama-3-70b", "llama3-70b"},
                                         {"llama-3.1-8b", "llama3-8b"},   {"llama-3.1-70b", "llama3-70b"},
                                         {"llama-3.1-405b", "llama3-405b"}, {"gpt-3-175b", "gpt3-175b"}};

const char *model_alias_names(void)
{
  return "llama3.1-8b, llama3.1-70b, llama3.1-405b (= llama3-*), llama-3-8b, llama-3-70b, llama-3.1-8b, "
         "llama-3.1-70b, llama-3.1-405b, llama-2-70b, gpt-3-175b; any case";
}

/* The built-in name `name` stands for (itself, an alias's, either in any case), or NULL. */
static const char *builtin_of(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(BUILTIN); i++)
    if (!g_ascii_strcasecmp(name, BUILTIN[i])) return BUILTIN[i];
  for (size_t i = 0; i < G_N_ELEMENTS(ALIASES); i++)
    if (!g_ascii_strcasecmp(name, ALIASES[i][0])) return ALIASES[i][1];
  return NULL;
}

const char *model_builtin_names(void)
{
  return "llama-7b, llama-13b, llama-30b, llama-65b, llama2-70b, llama3-8b, llama3-70b, llama3-405b, gpt3-175b, "
         "bloom-176b, mixtral-8x7b, mixtral-8x22b, deepseek-v3, qwen3-30b-a3b, qwen3-235b-a22b, gpt-oss-120b";
}

/* A model file's keys: the six dimensions, required, then the architecture, optional (Llama's values by default);
 * any other key is an error (a misspelt one would be ignored). */
static const char *const KEYS[] = {"name",      "layers", "hidden", "heads",     "ffn",           "vocab",
                                   "kv_heads",  "norm",   "mlp",    "positions", "max_positions", "bias",
                                   "tied_embeddings", "embedding_norm", "dropout", "qkv_bias",
                                   "attention_window", "comment", "head_dim", "qk_norm", "window_every",
                                   "experts", "top_k", "expert_ffn", "shared_experts", "shared_expert_ffn",
                                   "first_dense_layers", "moe_layer_freq", "dense_layers", "router",
                                   "capacity_factor", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
                                   "qk_nope_head_dim", "v_head_dim", "mtp_layers"};
#define N_REQUIRED 6

static const char *const NORMS[] = {"rmsnorm", "layernorm"};
static const char *const MLPS[] = {"swiglu", "gelu"};
static const char *const POSITIONS[] = {"rotary", "learned", "alibi"};
static const char *const ROUTERS[] = {"softmax", "sigmoid"};

/* The keys of a mixture of experts and of MLA, each allowed only with the key that turns it on. */
static const char *const MOE_KEYS[] = {"top_k", "expert_ffn", "shared_experts", "shared_expert_ffn",
                                       "first_dense_layers", "moe_layer_freq", "dense_layers", "router",
                                       "capacity_factor"};
static const char *const MLA_KEYS[] = {"q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"};
#define MODEL_MAX_EXPERTS (1 << 16)
#define MODEL_MAX_MTP 16

model model_llama(const char *name, int layers, int hidden, int heads, int ffn, int vocab)
{
  model m = {.layers = layers, .hidden = hidden, .heads = heads, .kv_heads = heads, .ffn = ffn, .vocab = vocab};
  g_strlcpy(m.name, name, sizeof m.name);
  return m;
}


/* An optional string key naming one of `names` (its index in *out); absent: *out untouched. */
static gboolean opt_choice(const cJSON *j, const char *key, const char *const *names, int n, int *out, const char *where,
                           GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v) return TRUE;
  g_autoptr(GString) allowed = g_string_new(NULL);
  for (int i = 0; i < n; i++) g_string_append_printf(allowed, "%s%s", i ? " | " : "", names[i]);
  if (cJSON_IsString(v))
    for (int i = 0; i < n; i++)
      if (!strcmp(v->valuestring, names[i])) {
        *out = i;
        return TRUE;
      }
  g_autofree char *got = cJSON_IsString(v) ? g_strdup_printf("'%s'", v->valuestring) : g_strdup(lsim_json_type_name(v));
  return lsim_invalid_at(err, where, "%s = %s (allowed: %s)", key, got, allowed->str);
}

static gboolean opt_bool(const cJSON *j, const char *key, gboolean *out, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v) return TRUE;
  if (!cJSON_IsBool(v)) return lsim_invalid_at(err, where, "%s = %s (allowed: true | false)", key, lsim_json_type_name(v));
  *out = cJSON_IsTrue(v);
  return TRUE;
}

static gboolean opt_int(const cJSON *j, const char *key, int max, int *out, const char *where, GError **err)
{
  if (!cJSON_GetObjectItemCaseSensitive(j, key)) return TRUE;
  if (!lsim_json_positive_int(j, key, out, where, err)) return FALSE;
  if (*out > max) return lsim_invalid_at(err, where, "%s = %d (allowed: 1..%d)", key, *out, max);
  return TRUE;
}

/* An optional integer key in lo..hi (absent: *out untouched). */
static gboolean opt_range(const cJSON *j, const char *key, int lo, int hi, int *out, const char *where, GError **err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!v) return TRUE;
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi) {
    g_autofree char *got = cJSON_IsNumber(v) ? lsim_number(v->valuedouble) : g_strdup(lsim_json_type_name(v));
    return lsim_invalid_at(err, where, "%s = %s (allowed: an integer from %d to %d)", key, got, lo, hi);
  }
  *out = (int)v->valuedouble;
  return TRUE;
}

/* A required integer key in lo..hi where `because` turns its group on. */
static gboolean req_range(const cJSON *j, const char *key, int lo, int hi, const char *because, int *out,
                          const char *where, GError **err)
{
  if (!cJSON_GetObjectItemCaseSensitive(j, key))
    return lsim_invalid_at(err, where, "%s: missing (required with %s; allowed: an integer from %d to %d)", key, because, lo, hi);
  return opt_range(j, key, lo, hi, out, where, err);
}

static void set_dense(model *m, int i) { m->moe.dense_mask[i / 32] |= 1u << (i % 32); }

/* The experts: experts, top_k and expert_ffn together, the rest optional; which layers are dense from
 * first_dense_layers and moe_layer_freq (layer i >= first_dense_layers is MoE where i % moe_layer_freq == 0,
 * Megatron's --moe-layer-freq and DeepSeek's first_k_dense_replace) or from an explicit dense_layers list. */
static gboolean moe_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  model_moe *e = &out->moe;
  if (!cJSON_GetObjectItemCaseSensitive(j, "experts")) {
    for (size_t i = 0; i < G_N_ELEMENTS(MOE_KEYS); i++)
      if (cJSON_GetObjectItemCaseSensitive(j, MOE_KEYS[i]))
        return lsim_invalid_at(err, where, "%s is a mixture-of-experts key (allowed only with experts)", MOE_KEYS[i]);
    return TRUE;
  }
  if (!opt_range(j, "experts", 1, MODEL_MAX_EXPERTS, &e->experts, where, err) ||
      !req_range(j, "top_k", 1, e->experts, "experts", &e->top_k, where, err) ||
      !req_range(j, "expert_ffn", 1, 1 << 22, "experts", &e->expert_ffn, where, err) ||
      !opt_range(j, "shared_experts", 0, 1024, &e->shared_experts, where, err))
    return FALSE;
  e->shared_expert_ffn = e->expert_ffn;
  if (cJSON_GetObjectItemCaseSensitive(j, "shared_expert_ffn") && !e->shared_experts)
    return lsim_invalid_at(err, where, "shared_expert_ffn is the width of a shared expert (allowed only with shared_experts >= 1)");
  if (!opt_range(j, "shared_expert_ffn", 1, 1 << 22, &e->shared_expert_ffn, where, err)) return FALSE;
  if (!e->shared_experts) e->shared_expert_ffn = 0;
  int router = e->router;
  if (!opt_choice(j, "router", ROUTERS, G_N_ELEMENTS(ROUTERS), &router, where, err)) return FALSE;
  e->router = (model_router)router;
  const cJSON *cf = cJSON_GetObjectItemCaseSensitive(j, "capacity_factor");
  if (cf && !(cJSON_IsNumber(cf) && cf->valuedouble > 0 && cf->valuedouble <= 64)) {
    g_autofree char *got = cJSON_IsNumber(cf) ? lsim_number(cf->valuedouble) : g_strdup(lsim_json_type_name(cf));
    return lsim_invalid_at(err, where, "capacity_factor = %s (allowed: a number above 0 up to 64; absent: dropless)", got);
  }
  if (cf) e->capacity_factor = cf->valuedouble;
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "dense_layers");
  if (list) {
    if (cJSON_GetObjectItemCaseSensitive(j, "first_dense_layers") || cJSON_GetObjectItemCaseSensitive(j, "moe_layer_freq"))
      return lsim_invalid_at(err, where, "dense_layers with %s: give the dense layers one way (allowed: dense_layers alone, or "
                 "first_dense_layers and moe_layer_freq)",
                 cJSON_GetObjectItemCaseSensitive(j, "first_dense_layers") ? "first_dense_layers" : "moe_layer_freq");
    if (!cJSON_IsArray(list))
      return lsim_invalid_at(err, where, "dense_layers = %s (allowed: a list of distinct layer indices from 0 to %d)",
                 lsim_json_type_name(list), out->layers - 1);
    const cJSON *x;
    cJSON_ArrayForEach(x, list)
    {
      if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < 0 || x->valuedouble >= out->layers) {
        g_autofree char *got = cJSON_IsNumber(x) ? lsim_number(x->valuedouble) : g_strdup(lsim_json_type_name(x));
        return lsim_invalid_at(err, where, "dense_layers: %s (allowed: distinct layer indices from 0 to %d)", got, out->layers - 1);
      }
      int i = (int)x->valuedouble;
      if (!model_layer_is_moe(out, i))
        return lsim_invalid_at(err, where, "dense_layers: %d appears more than once (allowed: distinct layer indices from 0 to %d)",
                   i, out->layers - 1);
      set_dense(out, i);
    }
  } else {
    int first = 0, freq = 1;
    if (!opt_range(j, "first_dense_layers", 0, out->layers - 1, &first, where, err) ||
        !opt_range(j, "moe_layer_freq", 1, out->layers, &freq, where, err))
      return FALSE;
    for (int i = 0; i < out->layers; i++)
      if (i < first || i % freq != 0) set_dense(out, i);
  }
  if (model_moe_layers(out) == 0)
    return lsim_invalid_at(err, where, "experts = %d but every layer is dense (allowed: at least one layer left a mixture of "
               "experts by first_dense_layers, moe_layer_freq or dense_layers)", e->experts);
  return TRUE;
}

/* Multi-head latent attention: kv_lora_rank turns it on; the head widths are then required, the query's rank
 * optional (absent: queries projected directly). */
static gboolean mla_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  model_mla *a = &out->mla;
  if (!cJSON_GetObjectItemCaseSensitive(j, "kv_lora_rank")) {
    for (size_t i = 0; i < G_N_ELEMENTS(MLA_KEYS); i++)
      if (cJSON_GetObjectItemCaseSensitive(j, MLA_KEYS[i]))
        return lsim_invalid_at(err, where, "%s is a key of multi-head latent attention (allowed only with kv_lora_rank)", MLA_KEYS[i]);
    return TRUE;
  }
  const int MAX = 1 << 16;
  if (!opt_range(j, "kv_lora_rank", 1, MAX, &a->kv_lora_rank, where, err) ||
      !opt_range(j, "q_lora_rank", 1, MAX, &a->q_lora_rank, where, err) ||
      !req_range(j, "qk_rope_head_dim", 1, MAX, "kv_lora_rank", &a->qk_rope_head_dim, where, err) ||
      !req_range(j, "qk_nope_head_dim", 1, MAX, "kv_lora_rank", &a->qk_nope_head_dim, where, err) ||
      !req_range(j, "v_head_dim", 1, MAX, "kv_lora_rank", &a->v_head_dim, where, err))
    return FALSE;
  if (out->kv_heads != out->heads)
    return lsim_invalid_at(err, where, "kv_heads = %d with kv_lora_rank: latent attention expands keys and values for every head "
               "(allowed: kv_heads = heads, %d, or absent)", out->kv_heads, out->heads);
  if (out->head_dim)
    return lsim_invalid_at(err, where, "head_dim with kv_lora_rank: latent attention's head widths are qk_nope_head_dim + "
               "qk_rope_head_dim and v_head_dim (allowed: no head_dim)");
  if (out->qk_norm)
    return lsim_invalid_at(err, where, "qk_norm with kv_lora_rank: latent attention normalises its latents, not each head "
               "(allowed: qk_norm false)");
  return TRUE;
}

static gboolean architecture_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  int norm = out->norm, mlp = out->mlp, pos = out->positions;
  if (!opt_int(j, "kv_heads", out->heads, &out->kv_heads, where, err)) return FALSE;
  if (out->heads % out->kv_heads != 0)
    return lsim_invalid_at(err, where, "kv_heads (%d) must divide heads (%d)", out->kv_heads, out->heads);
  if (!opt_choice(j, "norm", NORMS, G_N_ELEMENTS(NORMS), &norm, where, err) ||
      !opt_choice(j, "mlp", MLPS, G_N_ELEMENTS(MLPS), &mlp, where, err) ||
      !opt_choice(j, "positions", POSITIONS, G_N_ELEMENTS(POSITIONS), &pos, where, err))
    return FALSE;
  out->norm = (model_norm)norm;
  out->mlp = (model_mlp)mlp;
  out->positions = (model_positions)pos;
  if (out->positions == MODEL_POS_LEARNED) out->max_positions = 2048; /* GPT-3's context, unless given */
  else if (cJSON_GetObjectItemCaseSensitive(j, "max_positions"))
    return lsim_invalid_at(err, where, "max_positions is the size of a learned position table (allowed only with positions = learned)");
  if (!opt_int(j, "max_positions", 1 << 24, &out->max_positions, where, err)) return FALSE;
  if (!opt_bool(j, "bias", &out->bias, where, err) || !opt_bool(j, "tied_embeddings", &out->tied_embeddings, where, err) ||
      !opt_bool(j, "embedding_norm", &out->embedding_norm, where, err) ||
      !opt_bool(j, "qkv_bias", &out->qkv_bias, where, err))
    return FALSE;
  if (cJSON_GetObjectItemCaseSensitive(j, "attention_window") &&
      !opt_int(j, "attention_window", 1 << 24, &out->attention_window, where, err))
    return FALSE;
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "dropout");
  if (d && !(cJSON_IsNumber(d) && d->valuedouble >= 0 && d->valuedouble < 1)) {
    g_autofree char *got = cJSON_IsNumber(d) ? lsim_number(d->valuedouble) : g_strdup(lsim_json_type_name(d));
    return lsim_invalid_at(err, where, "dropout = %s (allowed: a probability from 0 to below 1)", got);
  }
  if (d) out->dropout = d->valuedouble;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "comment");
  if (c && !cJSON_IsString(c)) return lsim_invalid_at(err, where, "comment = %s (allowed: a string)", lsim_json_type_name(c));
  if (!opt_range(j, "head_dim", 1, 1 << 16, &out->head_dim, where, err) ||
      !opt_bool(j, "qk_norm", &out->qk_norm, where, err))
    return FALSE;
  if (!out->head_dim && out->hidden % out->heads != 0)
    return lsim_invalid_at(err, where, "hidden (%d) must be a multiple of heads (%d)", out->hidden, out->heads);
  if (out->head_dim == out->hidden / out->heads && out->hidden % out->heads == 0) out->head_dim = 0; /* the default */
  if (cJSON_GetObjectItemCaseSensitive(j, "window_every")) {
    if (!out->attention_window)
      return lsim_invalid_at(err, where, "window_every says which layers have the attention window (allowed only with attention_window)");
    if (!opt_range(j, "window_every", 1, 2, &out->window_every, where, err)) return FALSE;
    if (out->window_every == 1) out->window_every = 0;
  }
  if (!opt_range(j, "mtp_layers", 0, MODEL_MAX_MTP, &out->mtp_layers, where, err)) return FALSE;
  return mla_from_json(j, where, out, err) && moe_from_json(j, where, out, err);
}

static gboolean model_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  memset(out, 0, sizeof *out);
  if (!lsim_json_known_keys(j, KEYS, G_N_ELEMENTS(KEYS), where, err)) return FALSE;
  if (!lsim_json_name(j, KEYS[0], out->name, sizeof out->name, where, err)) return FALSE; /* it reaches every output */
  int *dst[] = {&out->layers, &out->hidden, &out->heads, &out->ffn, &out->vocab}; /* KEYS[1..5] */
  /* Far above any model (Llama 3 405B: 126 layers, hidden 16384, 128 heads, FFN 53248, vocab 128256), low enough
   * that no product of them overflows and a graph of one step stays in memory. */
  static const int MAX[] = {MODEL_MAX_LAYERS, 1 << 20, 1 << 16, 1 << 22, MODEL_MAX_VOCAB};
  G_STATIC_ASSERT(G_N_ELEMENTS(dst) + 1 == N_REQUIRED && G_N_ELEMENTS(MAX) == G_N_ELEMENTS(dst));
  for (size_t i = 0; i < G_N_ELEMENTS(dst); i++) {
    if (!lsim_json_positive_int(j, KEYS[i + 1], dst[i], where, err)) return FALSE;
    if (*dst[i] > MAX[i]) return lsim_invalid_at(err, where, "%s = %d (allowed: 1..%d)", KEYS[i + 1], *dst[i], MAX[i]);
  }
  out->kv_heads = out->heads;
  return architecture_from_json(j, where, out, err);
}

gboolean model_load_file(const char *path, model *out, GError **err)
{
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_MODEL, err);
  if (!j) return FALSE;
  gboolean ok = hf_config_detect(j) ? hf_config_to_model(j, path, out, err) : model_from_json(j, path, out, err);
  cJSON_Delete(j);
  return ok;
}

static char *builtin_path(const char *name)
{
  g_autofree char *file = g_strconcat(name, ".json", NULL);
  return lsim_data_path("workloads/models", file);
}

char **model_builtin_paths(void)
{
  char **paths = g_new0(char *, G_N_ELEMENTS(BUILTIN) + 1);
  for (size_t i = 0; i < G_N_ELEMENTS(BUILTIN); i++) paths[i] = builtin_path(BUILTIN[i]);
  return paths;
}

gboolean model_is_builtin(const char *name) { return builtin_of(name) != NULL; }

gboolean model_load_named(const char *name, model *out, GError **err)
{
  if (!model_is_builtin(name)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: unknown '%s' (allowed: %s)", name,
                model_builtin_names());
    return FALSE;
  }
  g_autofree char *path = builtin_path(builtin_of(name));
  return model_load_file(path, out, err);
}

int model_head_dim(const model *m) { return m->head_dim ? m->head_dim : m->hidden / m->heads; }

gboolean model_layer_is_moe(const model *m, int i)
{
  return m->moe.experts > 0 && i >= 0 && i < MODEL_MAX_LAYERS && !(m->moe.dense_mask[i / 32] & (1u << (i % 32)));
}

int model_moe_layers(const model *m)
{
  int n = 0;
  for (int i = 0; i < m->layers; i++) n += model_layer_is_moe(m, i);
  return n;
}

gboolean model_has_experts(const model *m) { return m->moe.experts > 0; }
gboolean model_has_mla(const model *m) { return m->mla.kv_lora_rank > 0; }

gboolean model_check_simulable(const model *m, GError **err)
{
  /* MLA's operators (block.c mla_attention) have no biases: a model file with both is refused */
  if (!model_has_mla(m) || !m->bias) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: %s has multi-head latent attention (kv_lora_rank) with bias true: "
              "MLA's projections have no biases here (allowed: bias false with kv_lora_rank, docs/moe.md)", m->name);
  return FALSE;
}

gboolean model_is_llama(const model *m)
{
  return m->norm == MODEL_NORM_RMSNORM && m->mlp == MODEL_MLP_SWIGLU && m->positions == MODEL_POS_ROTARY && !m->bias &&
         !m->qkv_bias && !m->tied_embeddings && !m->embedding_norm && m->dropout == 0 && m->attention_window == 0 &&
         !m->head_dim && !m->qk_norm && !model_has_experts(m) && !model_has_mla(m) && !m->mtp_layers;
}

char *model_arch_string(const model *m)
{
  g_autofree char *window = m->attention_window ? g_strdup_printf(" window%d%s", m->attention_window,
                                                                  m->window_every == 2 ? "/2" : "")
                                                : g_strdup("");
  /* the keys added with Qwen3, MoE and MLA only where set, so the dense models' strings (cache keys) stay as they were */
  GString *more = g_string_new(NULL);
  if (m->head_dim) g_string_append_printf(more, " head%d", m->head_dim);
  if (m->qk_norm) g_string_append(more, " qk-norm");
  if (model_has_mla(m))
    g_string_append_printf(more, " mla%d/%d/%d/%d/%d", m->mla.q_lora_rank, m->mla.kv_lora_rank, m->mla.qk_nope_head_dim,
                           m->mla.qk_rope_head_dim, m->mla.v_head_dim);
  if (model_has_experts(m)) {
    const model_moe *e = &m->moe;
    g_string_append_printf(more, " moe%dx%d/top%d shared%dx%d %s cf%g layers", e->experts, e->expert_ffn, e->top_k,
                           e->shared_experts, e->shared_expert_ffn, ROUTERS[e->router], e->capacity_factor);
    for (int i = 0; i < m->layers; i++) g_string_append_c(more, model_layer_is_moe(m, i) ? 'E' : 'D');
  }
  if (m->mtp_layers) g_string_append_printf(more, " mtp%d", m->mtp_layers);
  g_autofree char *extra = g_string_free(more, FALSE);
  return g_strdup_printf("kv%d %s %s %s%d%s%s%s%s dropout %g%s%s", m->kv_heads, NORMS[m->norm], MLPS[m->mlp],
                         POSITIONS[m->positions], m->max_positions, m->bias ? " bias" : "",
                         m->qkv_bias && !m->bias ? " qkv-bias" : "", m->tied_embeddings ? " tied" : "",
                         m->embedding_norm ? " embedding-norm" : "", m->dropout, window, extra);
}

double model_layer_params(const model *m) { return block_layer_params(m, 1); }

double model_params(const model *m) { return model_params_total(m); }

int model_padded_vocab(int vocab, int tp, int pad_multiple)
{
  if (pad_multiple <= 0 || tp <= 0 || vocab % tp == 0) return vocab;
  long step = (long)pad_multiple * tp, padded = ((long)vocab + step - 1) / step * step;
  return padded > MODEL_MAX_VOCAB ? vocab : (int)padded; /* beyond the limit: left for layout_validate to refuse */
}

double model_flops_per_token(const model *m, int seq_len)
{
  if (!m->head_dim && !model_has_mla(m) && !model_has_experts(m) && !m->mtp_layers) /* the study's expression */
    return 6.0 * model_params(m) + 12.0 * m->layers * (double)m->hidden * seq_len;
  /* QK^T and AV: 2 * s * (qk width + v width) forward per layer and token, x3 with the backward */
  double qk = model_has_mla(m) ? m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim : model_head_dim(m);
  double v = model_has_mla(m) ? m->mla.v_head_dim : model_head_dim(m);
  return 6.0 * model_params_active(m) + 6.0 * (m->layers + m->mtp_layers) * (double)m->heads * (qk + v) * seq_len;
}
