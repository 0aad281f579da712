/* lsim_error -- see lsim_error.h. */
#include "lsim_error.h"

G_DEFINE_QUARK(layoutsim-error-quark, lsim_error)
