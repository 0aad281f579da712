/* model -- a Llama-architecture transformer's dimensions and the counts that
 * follow from them alone (parameters, model FLOPs per token).
 *
 * Owns: struct model, loading it from JSON (built-in names or a user file).
 * May not touch: layouts, hardware, the simulator.
 */
#ifndef MODEL_H
#define MODEL_H

#include <glib.h>

typedef struct model {
  char name[64];
  int layers;
  int hidden;
  int heads;
  int ffn;   /* SwiGLU inner size */
  int vocab; /* untied input and output embeddings */
} model;

/* The largest vocabulary a model may have, from a model file, --vocab or a table's vocab column:
 * far above any model (Llama: 32000 to 128256), low enough that no product with the other
 * dimensions overflows. */
#define MODEL_MAX_VOCAB (1 << 24)

/* Whether `name` is a built-in model ("llama-13b", ...). */
gboolean model_is_builtin(const char *name);
/* Load a built-in model from the shipped JSON files; an unknown name is an error listing the
 * built-in ones. */
gboolean model_load_named(const char *name, model *out, GError **err);
/* Load a model from a user JSON file with the same keys. */
gboolean model_load_file(const char *path, model *out, GError **err);
/* Comma-separated list of built-in names (static string). */
const char *model_builtin_names(void);
/* The shipped files of the built-in models, NULL-terminated (g_strfreev). */
char **model_builtin_paths(void);

int model_head_dim(const model *m);
/* Parameters of one transformer layer: 4h^2 (attention) + 3hf (SwiGLU) + 2h (norms). */
double model_layer_params(const model *m);
/* All parameters: layers, final norm, input embedding and output head. */
double model_params(const model *m);
/* The study's (PaLM) model FLOPs per token: 6N + 12 L H Q T. */
double model_flops_per_token(const model *m, int seq_len);

#endif
