/* lsim_error -- the one error domain of layoutsim.
 *
 * Owns: the GError domain and codes used by every layer to report bad user
 * input or unreadable files up to main(), which prints one line and exits 2;
 * how a value from user input is shown in such a line.
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

/* A value from user input as a message shows it: in double quotes, on one line whatever it holds
 * (a control character, a backslash, a quote or a byte that is not UTF-8 escaped as \n, \t, \\,
 * \" or \xNN), cut after max_bytes bytes of it with "..." (0: never cut). Newly allocated. */
char *lsim_quote(const char *s, gsize max_bytes);
/* msg with every control character (a byte below 0x20, or 0x7f) written as \xNN: one line on
 * stderr whatever a value quoted in it holds (an option value, a table cell with a line break).
 * Newly allocated. */
char *lsim_one_line(const char *msg);
/* A number from user input as a message shows it: an integer below 1e17 in full, anything else with
 * the fewest significant digits (up to 17) that read back as the same double, so that
 * 4.000000000000001 is not shown as 4 (%g) nor 0.1 as 0.10000000000000001 (%.17g). Newly allocated. */
char *lsim_number(double d);
/* Set err to LSIM_ERROR_INVALID "WHERE: MESSAGE" (a file's fields: where is the file); returns FALSE, so that a
 * check reads `return lsim_invalid_at(err, path, "...", ...)`. */
gboolean lsim_invalid_at(GError **err, const char *where, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
