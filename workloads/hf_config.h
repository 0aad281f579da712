/* hf_config -- a HuggingFace transformers config.json read as a model: the architectures layoutsim's
 * block expresses (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM where its
 * head size is hidden/heads), each key mapped to a model field or named as having no effect on a
 * training step's cost, and every other key, value or architecture refused by name (docs/model.md,
 * "HuggingFace config.json").
 *
 * Owns: the mapping from config.json keys to struct model. May not touch: layouts, hardware.
 */
#ifndef HF_CONFIG_H
#define HF_CONFIG_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "model.h"

/* Whether a model file's JSON object is a HuggingFace config (it has "architectures" or "model_type",
 * which no layoutsim model file has). */
gboolean hf_config_detect(const cJSON *j);
/* The model of a config.json at `path` (its name: the config's "_name_or_path", else the folder holding a
 * file named config.json, else the file's name without .json); FALSE with err naming the key, its value
 * and what is allowed where the config says something layoutsim cannot simulate. */
gboolean hf_config_to_model(const cJSON *j, const char *path, model *out, GError **err);

#endif
