/* model -- see model.h. Built-in models live as JSON in workloads/models/;
 * LSIM_DATADIR (set by meson to the source tree) or $LAYOUTSIM_DATA finds them. */
#include "model.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"

static const char *const BUILTIN[] = {"llama-7b", "llama-13b", "llama-30b", "llama-65b"};

const char *model_builtin_names(void) { return "llama-7b, llama-13b, llama-30b, llama-65b"; }

/* A model file's keys, all required; any other key is an error (a misspelt one would be ignored). */
static const char *const KEYS[] = {"name", "layers", "hidden", "heads", "ffn", "vocab"};

static gboolean model_from_json(const cJSON *j, const char *where, model *out, GError **err)
{
  memset(out, 0, sizeof *out);
  if (!lsim_json_known_keys(j, KEYS, G_N_ELEMENTS(KEYS), where, err)) return FALSE;
  if (!lsim_json_name(j, KEYS[0], out->name, sizeof out->name, where, err)) return FALSE; /* it reaches every output */
  int *dst[] = {&out->layers, &out->hidden, &out->heads, &out->ffn, &out->vocab}; /* KEYS[1..] */
  /* Far above any model (Llama 65B: 80 layers, hidden 8192, 64 heads, FFN 22016, vocab 128000),
   * low enough that no product of them overflows and a graph of one step stays in memory. */
  static const int MAX[] = {1024, 1 << 20, 1 << 16, 1 << 22, MODEL_MAX_VOCAB};
  G_STATIC_ASSERT(G_N_ELEMENTS(dst) + 1 == G_N_ELEMENTS(KEYS) && G_N_ELEMENTS(MAX) == G_N_ELEMENTS(dst));
  for (size_t i = 0; i < G_N_ELEMENTS(dst); i++) {
    if (!lsim_json_positive_int(j, KEYS[i + 1], dst[i], where, err)) return FALSE;
    if (*dst[i] > MAX[i]) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: %s = %d (allowed: 1..%d)", where, KEYS[i + 1], *dst[i],
                  MAX[i]);
      return FALSE;
    }
  }
  if (out->hidden % out->heads != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: hidden (%d) must be a multiple of heads (%d)",
                where, out->hidden, out->heads);
    return FALSE;
  }
  return TRUE;
}

gboolean model_load_file(const char *path, model *out, GError **err)
{
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_MODEL, err);
  if (!j) return FALSE;
  gboolean ok = model_from_json(j, path, out, err);
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

gboolean model_is_builtin(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(BUILTIN); i++)
    if (!strcmp(name, BUILTIN[i])) return TRUE;
  return FALSE;
}

gboolean model_load_named(const char *name, model *out, GError **err)
{
  if (!model_is_builtin(name)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: unknown '%s' (allowed: %s)", name,
                model_builtin_names());
    return FALSE;
  }
  g_autofree char *path = builtin_path(name);
  return model_load_file(path, out, err);
}

int model_head_dim(const model *m) { return m->hidden / m->heads; }

double model_layer_params(const model *m)
{
  double h = m->hidden, f = m->ffn;
  return 4.0 * h * h + 3.0 * h * f + 2.0 * h;
}

double model_params(const model *m)
{
  double h = m->hidden;
  return m->layers * model_layer_params(m) + h + 2.0 * m->vocab * h;
}

double model_flops_per_token(const model *m, int seq_len)
{
  return 6.0 * model_params(m) + 12.0 * m->layers * (double)m->hidden * seq_len;
}
