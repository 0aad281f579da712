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
/* The GPT block's kernels (Megatron-LM / Megatron-DeepSpeed), per element of their main tensor. */
/* torch's native layer_norm: one kernel reading and writing bf16 (mean and rstd per token are negligible). */
#define OPS_LAYERNORM_BYTES_PER_EL 4.0
/* A bias add after a GEMM (output = output + bias): r2 w2; backward the bias gradient's sum over the tokens: r2. */
#define OPS_BIAS_FWD_BYTES_PER_EL 4.0
#define OPS_BIAS_BWD_BYTES_PER_EL 2.0
/* GeLU (fused with the bias: bias_gelu): r2 w2; backward reads the gradient and the input, writes the gradient. */
#define OPS_GELU_FWD_BYTES_PER_EL 4.0
#define OPS_GELU_BWD_BYTES_PER_EL 6.0
/* Dropout: read x, write y and the 1-byte mask (r2 w2 w1); backward read the gradient and the mask, write (r2 r1 w2). */
#define OPS_DROPOUT_BYTES_PER_EL 5.0
/* Megatron's fused bias-dropout-add after a row-parallel GEMM adds the mask write (w1) to the residual add's 6;
 * its backward reads the gradient and the mask and writes the gradient (5). */
#define OPS_BIAS_DROPOUT_ADD_FWD_BYTES_PER_EL 7.0
#define OPS_BIAS_DROPOUT_ADD_BWD_BYTES_PER_EL 5.0
/* Learned positions: the position rows added to the word embedding (r2 r2 w2); backward the rows' gradient (r2 w2). */
#define OPS_POSITIONS_FWD_BYTES_PER_EL 6.0
#define OPS_POSITIONS_BWD_BYTES_PER_EL 4.0
/* Megatron's causal fused softmax (ScaledUpperTriangMaskedSoftmax, megatron/model/fused_softmax.py) on the
 * baddbmm output as it is (a view, no clone; the causal mask is computed, not read): baddbmm w2, softmax r2 w2,
 * AV bmm r2 over 3 kernels forward; its backward is the fused-softmax's (ops.c). */
#define OPS_MEGATRON_SOFTMAX_FWD_BYTES_PER_EL 8.0
#define OPS_MEGATRON_SOFTMAX_FWD_KERNELS 3

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
