/* fuzz_profile -- libFuzzer harness of the hardware-profile loader (platforms/profile.c
 * profile_load_file, with common/lsim_json.c under it) and of its writer, profile_save, which
 * calibrate uses.
 *
 * Owns: the properties of a loaded profile: its node shape within 1..128 GPUs and NICs, the NICs
 * dividing the GPUs, a name of printable UTF-8; and that what profile_save writes loads back to the
 * same profile, byte for byte. A refused file has one error. Seeds: tests/fuzz/corpus/profile/.
 */
#include <string.h>

#include "common/lsim_json.h"
#include "fuzz_common.h"
#include "platforms/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file("profile.json", data, size);
  gpu_profile p, back;
  GError *err = NULL;
  gboolean ok = profile_load_file(path, &p, &err);
  fuzz_check_result(ok, err);
  g_clear_error(&err);
  if (!ok) return 0;
  fuzz_require(p.gpus_per_node >= 1 && p.gpus_per_node <= 128 && p.nics_per_node >= 1 && p.nics_per_node <= 128 &&
               p.gpus_per_node % p.nics_per_node == 0, "node of %d GPUs, %d NICs", p.gpus_per_node, p.nics_per_node);
  fuzz_require(lsim_json_check_text(p.name, sizeof p.name - 1, path, "name", NULL), "name not checked");
  const char *saved = fuzz_path("saved.json");
  ok = profile_save(&p, saved, &err);
  fuzz_check_result(ok, err);
  fuzz_require(ok, "cannot save: %s", err->message);
  ok = profile_load_file(saved, &back, &err);
  fuzz_check_result(ok, err);
  fuzz_require(ok, "the saved profile does not load: %s", err->message);
  fuzz_require(memcmp(&p, &back, sizeof p) == 0, "the saved profile loads as another");
  return 0;
}
