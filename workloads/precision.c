/* precision -- see precision.h. */
#include "precision.h"

/* The precisions' names, the one list of them: the layout's field table (layout.c E_precision) reads it for
 * --precision, the precision column and a profile's calibrated list. */
const char *const PRECISION_NAMES[PREC_N] = {"bf16", "fp8", "fp8-cs", "mxfp8"};

const char *precision_name(precision p) { return PRECISION_NAMES[(unsigned)p < PREC_N ? p : PREC_BF16]; }

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
