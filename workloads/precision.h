/* precision -- the training precision of a run (`--precision`, the `precision` column): bf16, or FP8 as
 * NVIDIA's Transformer Engine runs it: the linear layers' GEMMs in FP8 (E4M3 forward, E5M2 gradients: the
 * HYBRID format) with per-tensor delayed scaling (fp8: TE's default recipe, NeMo's of 2024, the scale from
 * an amax history), per-tensor current scaling (fp8-cs, Megatron-Bridge's: the scale from the tensor's own
 * amax, an extra pass) or MXFP8's 32-element block scales (mxfp8, Blackwell). Attention's core, the
 * embedding and the output head stay bf16 (docs/precision.md).
 *
 * Owns: the precision enum, its names, and the data type a linear layer's GEMM runs in.
 * May not touch: hardware, time.
 */
#ifndef PRECISION_H
#define PRECISION_H

#include <glib.h>

#include "graph.h"

typedef enum { PREC_BF16, PREC_FP8, PREC_FP8_CS, PREC_MXFP8, PREC_N } precision;

/* The names, value i's at i: the one list; parsed (--precision, the precision column, a profile's calibrated list)
 * through the layout's field table (layout.c E_precision, layout_enum_parse). */
extern const char *const PRECISION_NAMES[PREC_N];
const char *precision_name(precision p);
/* The dtype of a linear layer's GEMM under p, forward (E4M3) or backward (the gradient's: E5M2 under
 * current scaling's HYBRID recipe, MXFP8 blocks under mxfp8). */
graph_dtype precision_gemm_dtype(precision p, gboolean backward);
/* Bytes an FP8 GEMM operand takes per element (1: E4M3/E5M2 data; mxfp8 adds its E8M0 scale per 32). */
double precision_operand_bytes(precision p);
/* HBM bytes per element of a bf16 tensor Transformer Engine quantizes for an FP8 GEMM, and its kernels:
 * delayed scaling (fp8) casts it with the scale of its amax history and writes its transpose in one kernel
 * that also records its amax (cast_transpose: 2 read + 1 + 1 written): 4 bytes, 1 kernel; current scaling
 * (fp8-cs) reads it once more for its amax first: 6 bytes, 2 kernels; mxfp8 computes its block scales in
 * the cast: 2 read + 2 x (1 + 1/32) written, 1 kernel. 0 for bf16. */
double precision_cast_bytes_per_el(precision p);
int precision_cast_kernels(precision p);
/* Bytes per linear-layer parameter of the FP8 weight copies Transformer Engine keeps for the step (the
 * weight cast at the first micro-batch, reused by the others): the FP8 weight and its transpose (Hopper's
 * FP8 GEMMs take only the TN layout), 2 bytes; mxfp8 their block scales too. 0 for bf16. */
double precision_weight_copy_bytes(precision p);

#endif
