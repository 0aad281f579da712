/* calibrate -- see calibrate.h. */
#include "calibrate.h"

#include "common/lsim_error.h"

gboolean calib_run(const char *const *paths, int n_paths, const calib_cfg *cfg, gpu_profile *out, GError **err)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "calibrate: not implemented yet");
  return FALSE;
}
