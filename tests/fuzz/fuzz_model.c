/* fuzz_model -- libFuzzer harness of the model-file loader (workloads/model.c model_load_file, with
 * common/lsim_json.c under it: the read, the parse, repeated and unknown keys, the name's text).
 *
 * Owns: the properties a loaded model has whatever the file held: every dimension within its cap,
 * hidden a multiple of heads, a name of printable UTF-8 of 1 to 63 bytes, and counts that are
 * finite and positive (model_params, model_flops_per_token at the longest sequence). A refused
 * file has one error. Seeds: tests/fuzz/corpus/model/.
 */
#include <math.h>
#include <string.h>

#include "common/lsim_json.h"
#include "fuzz_common.h"
#include "workloads/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file("model.json", data, size);
  model m;
  GError *err = NULL;
  gboolean ok = model_load_file(path, &m, &err);
  fuzz_check_result(ok, err);
  g_clear_error(&err);
  if (!ok) return 0;
  fuzz_require(m.layers >= 1 && m.layers <= 1024 && m.hidden >= 1 && m.hidden <= (1 << 20) && m.heads >= 1 &&
               m.heads <= (1 << 16) && m.ffn >= 1 && m.ffn <= (1 << 22) && m.vocab >= 1 && m.vocab <= MODEL_MAX_VOCAB,
               "dimensions out of their caps: %d %d %d %d %d", m.layers, m.hidden, m.heads, m.ffn, m.vocab);
  fuzz_require(m.hidden % m.heads == 0, "hidden %d, heads %d", m.hidden, m.heads);
  fuzz_require(lsim_json_check_text(m.name, sizeof m.name - 1, path, "name", NULL), "name not checked");
  double params = model_params(&m), flops = model_flops_per_token(&m, 1 << 24);
  fuzz_require(isfinite(params) && params > 0 && isfinite(flops) && flops > 0, "params %g, flops %g", params, flops);
  return 0;
}
