/* lsim_error -- the one error domain of layoutsim.
 *
 * Owns: the GError domain and codes used by every layer to report bad user
 * input or unreadable files up to main(), which prints one line and exits 2.
 * May not touch: anything else; library code never calls exit().
 */
#ifndef LSIM_ERROR_H
#define LSIM_ERROR_H

#include <glib.h>

#define LSIM_ERROR (lsim_error_quark())

typedef enum {
  LSIM_ERROR_INVALID, /* a field has a value outside its allowed set */
  LSIM_ERROR_IO,      /* a file could not be read or written */
  LSIM_ERROR_PARSE,   /* a file is not in the expected format */
} LsimErrorCode;

GQuark lsim_error_quark(void);

#endif
