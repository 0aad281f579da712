/* ops -- what the study's PyTorch operators move through HBM and how many
 * kernels they launch: the workload side of the compute cost (the hardware
 * side, how fast HBM and launches are, lives in platforms/profile).
 *
 * Counts are for the kernels as written in Aleph-Alpha/scaling (plain
 * PyTorch RMSNorm, rotary, SwiGLU, fp32 cross-entropy) and the fused
 * kernels of the flash-attn repository. Bytes are per element of the
 * operator's main tensor, read + write, forward. See docs/model.md.
 */
#ifndef OPS_H
#define OPS_H

#include "layout.h"

/* Fused RMSNorm: read x (bf16), write y (bf16). */
#define OPS_NORM_FUSED_BYTES_PER_EL 4.0
/* Torch RMSNorm: x.float() (2r+4w), pow (4r+4w), mean (4r), x*rsqrt (4r+4w),
 * cast (4r+2w), *weight (2r+2w) = 40 bytes over 6 kernels. */
#define OPS_NORM_TORCH_BYTES_PER_EL 40.0
#define OPS_NORM_TORCH_KERNELS 6
/* Rotary on q and k (per element of q and k): x*cos, rotate_half(x)*sin, add, cat. */
#define OPS_ROTARY_BYTES_PER_EL 16.0
#define OPS_ROTARY_KERNELS 6
/* SwiGLU per element of the ffn output: silu(gate) (2r+2w), *up (4r+2w). */
#define OPS_SWIGLU_BYTES_PER_EL 10.0
#define OPS_SWIGLU_KERNELS 2
/* fp32 cross-entropy on the full logits: cast (2r+4w), log_softmax (8r+4w), nll gather. */
#define OPS_LOSS_FWD_BYTES_PER_EL 18.0
#define OPS_LOSS_FWD_KERNELS 4
/* backward: softmax grad (4r+4w), cast back to bf16 (4r+2w). */
#define OPS_LOSS_BWD_BYTES_PER_EL 14.0
#define OPS_LOSS_BWD_KERNELS 3
/* AdamW on the local shard, per parameter: grad slice bf16->fp32 (2r+4w),
 * master/m/v read+write and grad read (28), copy back to bf16 (4r+2w). */
#define OPS_ADAMW_BYTES_PER_PARAM 40.0
#define OPS_ADAMW_KERNELS 12

/* Traffic per element of the s x s score matrix for unfused attention, forward
 * (QK^T write, mask, softmax read+write, read for AV) or backward (its
 * autograd nodes); 0 for flash kernels. */
double ops_score_bytes_per_el(layout_attn a, gboolean backward);
/* Kernel launches of one attention forward or backward (flash: 1 and 2). */
int ops_attention_kernels(layout_attn a, gboolean backward);

#endif
