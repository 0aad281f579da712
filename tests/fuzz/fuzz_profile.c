/* fuzz_profile -- libFuzzer harness of the hardware-profile and stack loaders (platforms/profile.c
 * profile_load_file, platforms/stack.c stack_load_file, with platforms/plat_file.c and
 * common/lsim_json.c under them) and of the stack's writer, stack_save, which calibrate uses.
 *
 * Owns: the properties of a loaded profile: its node shape within 1..128 GPUs and NICs, the NICs
 * dividing the GPUs, a name of printable UTF-8; the same name rule for a loaded stack, and that what
 * stack_save writes loads back to the same stack, byte for byte. A refused file has one error.
 * Seeds: tests/fuzz/corpus/profile/ (profiles and stacks).
 */
#include <string.h>

#include "common/lsim_json.h"
#include "fuzz_common.h"
#include "platforms/profile.h"

static void profile_properties(const char *path)
{
  gpu_profile p;
  GError *err = NULL;
  gboolean ok = profile_load_file(path, &p, &err);
  fuzz_check_result(ok, err);
  g_clear_error(&err);
  if (!ok) return;
  fuzz_require(p.gpus_per_node >= 1 && p.gpus_per_node <= 128 && p.nics_per_node >= 1 && p.nics_per_node <= 128 &&
               p.gpus_per_node % p.nics_per_node == 0, "node of %d GPUs, %d NICs", p.gpus_per_node, p.nics_per_node);
  fuzz_require(lsim_json_check_text(p.name, sizeof p.name - 1, path, "name", NULL), "name not checked");
}

static void stack_round_trip(const char *path)
{
  stack_profile s, back;
  GError *err = NULL;
  gboolean ok = stack_load_file(path, &s, &err);
  fuzz_check_result(ok, err);
  g_clear_error(&err);
  if (!ok) return;
  fuzz_require(lsim_json_check_text(s.name, sizeof s.name - 1, path, "name", NULL), "name not checked");
  const char *saved = fuzz_path("saved.json");
  ok = stack_save(&s, saved, &err);
  fuzz_check_result(ok, err);
  fuzz_require(ok, "cannot save: %s", err->message);
  ok = stack_load_file(saved, &back, &err);
  fuzz_check_result(ok, err);
  fuzz_require(ok, "the saved stack does not load: %s", err->message);
  fuzz_require(memcmp(&s, &back, sizeof s) == 0, "the saved stack loads as another");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file("profile.json", data, size);
  profile_properties(path);
  stack_round_trip(path);
  return 0;
}
