/* precision -- see precision.h. */
#include "precision.h"

#include <string.h>

#include "common/lsim_error.h"

/* The precisions' names, the one list of them: the layout's field table (layout.c E_precision) reads it for
 * --precision and the precision column. */
const char *const PRECISION_NAMES[PREC_N] = {"bf16", "fp8", "fp8-cs", "mxfp8"};
#define NAMES PRECISION_NAMES

const char *precision_name(precision p) { return NAMES[(unsigned)p < PREC_N ? p : PREC_BF16]; }

char *precision_names(void)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < PREC_N; i++) g_string_append_printf(s, "%s%s", i ? ", " : "", NAMES[i]);
  return g_string_free(s, FALSE);
}

gboolean precision_parse(const char *field, const char *s, precision *out, GError **err)
{
  for (int i = 0; i < PREC_N; i++)
    if (s && !strcmp(s, NAMES[i])) {
      *out = (precision)i;
      return TRUE;
    }
  g_autofree char *names = precision_names();
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is not a precision (allowed: %s)", field, s ? s : "",
              names);
  return FALSE;
}

double precision_operand_bytes(precision p) { return p == PREC_MXFP8 ? 1 + 1.0 / 32 : p == PREC_BF16 ? 2 : 1; }

double precision_cast_bytes_per_el(precision p)
{
  switch (p) {
  case PREC_FP8: return 2 + 1 + 1;
  case PREC_FP8_CS: return 2 + 2 + 1 + 1;
  case PREC_MXFP8: return 2 + 2 * (1 + 1.0 / 32);
  default: return 0;
  }
}

int precision_cast_kernels(precision p) { return p == PREC_FP8_CS ? 2 : p == PREC_BF16 ? 0 : 1; }

double precision_weight_copy_bytes(precision p) { return p == PREC_BF16 ? 0 : 2 * precision_operand_bytes(p); }

graph_dtype precision_gemm_dtype(precision p, gboolean backward)
{
  switch (p) {
  case PREC_FP8:
  case PREC_FP8_CS: return backward ? DT_FP8_E5M2 : DT_FP8_E4M3;
  case PREC_MXFP8: return DT_MXFP8;
  default: return DT_BF16;
  }
}
