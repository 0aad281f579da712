/* model -- see model.h. Built-in models live as JSON in workloads/models/;
 * LSIM_DATADIR (set by meson to the source tree) or $LAYOUTSIM_DATA finds them. */
#include "model.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "block.h"
#include "hf_config.h"
#include "common/lsim_error.h"
#include "common/lsim_json.h"

static const char *const BUILTIN[] = {"llama-7b",  "llama-13b",  "llama-30b",   "llama-65b", "llama2-70b",
                                      "llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b", "bloom-176b"};

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
         "bloom-176b";
}

/* A model file's keys: the six dimensions, required, then the architecture, optional (Llama's values by default);
 * any other key is an error (a misspelt one would be ignored). */
static const char *const KEYS[] = {"name",      "layers", "hidden", "heads",     "ffn",           "vocab",
                                   "kv_heads",  "norm",   "mlp",    "positions", "max_positions", "bias",
                                   "tied_embeddings", "embedding_norm", "dropout", "qkv_bias",
                                   "attention_window", "comment"};
#define N_REQUIRED 6

static const char *const NORMS[] = {"rmsnorm", "layernorm"};
static const char *const MLPS[] = {"swiglu", "gelu"};
static const char *const POSITIONS[] = {"rotary", "learned", "alibi"};

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
  return TRUE;
}

static gboolean model_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  memset(out, 0, sizeof *out);
  if (!lsim_json_known_keys(j, KEYS, G_N_ELEMENTS(KEYS), where, err)) return FALSE;
  if (!lsim_json_name(j, KEYS[0], out->name, sizeof out->name, where, err)) return FALSE; /* it reaches every output */
  int *dst[] = {&out->layers, &out->hidden, &out->heads, &out->ffn, &out->vocab}; /* KEYS[1..5] */
  /* Far above any model (Llama 3 405B: 126 layers, hidden 16384, 128 heads, FFN 53248, vocab 128256), low enough
   * that no product of them overflows and a graph of one step stays in memory. */
  static const int MAX[] = {1024, 1 << 20, 1 << 16, 1 << 22, MODEL_MAX_VOCAB};
  G_STATIC_ASSERT(G_N_ELEMENTS(dst) + 1 == N_REQUIRED && G_N_ELEMENTS(MAX) == G_N_ELEMENTS(dst));
  for (size_t i = 0; i < G_N_ELEMENTS(dst); i++) {
    if (!lsim_json_positive_int(j, KEYS[i + 1], dst[i], where, err)) return FALSE;
    if (*dst[i] > MAX[i]) return lsim_invalid_at(err, where, "%s = %d (allowed: 1..%d)", KEYS[i + 1], *dst[i], MAX[i]);
  }
  if (out->hidden % out->heads != 0)
    return lsim_invalid_at(err, where, "hidden (%d) must be a multiple of heads (%d)", out->hidden, out->heads);
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

int model_head_dim(const model *m) { return m->hidden / m->heads; }

gboolean model_is_llama(const model *m)
{
  return m->norm == MODEL_NORM_RMSNORM && m->mlp == MODEL_MLP_SWIGLU && m->positions == MODEL_POS_ROTARY && !m->bias &&
         !m->qkv_bias && !m->tied_embeddings && !m->embedding_norm && m->dropout == 0 && m->attention_window == 0;
}

char *model_arch_string(const model *m)
{
  g_autofree char *window = m->attention_window ? g_strdup_printf(" window%d", m->attention_window) : g_strdup("");
  return g_strdup_printf("kv%d %s %s %s%d%s%s%s%s dropout %g%s", m->kv_heads, NORMS[m->norm], MLPS[m->mlp],
                         POSITIONS[m->positions], m->max_positions, m->bias ? " bias" : "",
                         m->qkv_bias && !m->bias ? " qkv-bias" : "", m->tied_embeddings ? " tied" : "",
                         m->embedding_norm ? " embedding-norm" : "", m->dropout, window);
}

double model_layer_params(const model *m) { return block_layer_params(m, 1); }

double model_params(const model *m)
{
  return m->layers * block_layer_params(m, 1) + block_final_norm_params(m) + block_embedding_params(m, 1) +
         (m->tied_embeddings ? 0 : block_head_params(m, 1));
}

int model_padded_vocab(int vocab, int tp, int pad_multiple)
{
  if (pad_multiple <= 0 || tp <= 0 || vocab % tp == 0) return vocab;
  long step = (long)pad_multiple * tp, padded = ((long)vocab + step - 1) / step * step;
  return padded > MODEL_MAX_VOCAB ? vocab : (int)padded; /* beyond the limit: left for layout_validate to refuse */
}

double model_flops_per_token(const model *m, int seq_len)
{
  return 6.0 * model_params(m) + 12.0 * m->layers * (double)m->hidden * seq_len;
}
