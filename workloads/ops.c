/* ops -- see ops.h. */
#include "ops.h"

/* Forward HBM traffic per element of the local [b * heads/tp, s, s] score
 * matrix (backward: twice this, generate.c). Aleph-Alpha/scaling's TORCH
 * path (masked_softmax.py, scaling-facts 8.1): baddbmm writes the bf16 scores
 * (w2); the mask fill runs on a clone (r2 w2) and in place (r2 w2, the
 * broadcast bool mask stays in cache); softmax in fp32: cast (r2 w4), softmax
 * (r4 w4), cast back (r4 w2); dropout (r2 w2, bool mask w1); the AV bmm
 * reads the probabilities (r2): 2+4+4+6+8+6+5+2 = 37.
 * fused-softmax (Megatron scale-mask-softmax, not in the public code;
 * assumed to replace only the fill + fp32 softmax): baddbmm (w2), clone of
 * the view (r2 w2), fused scale-mask-softmax (r2 w2, mask r1), dropout
 * (r2 w2 w1), AV read (r2): 2+4+5+5+2 = 18. */
double ops_score_bytes_per_el(layout_attn a)
{
  switch (a) {
  case ATTN_TORCH: return 37.0;
  case ATTN_FUSED_SOFTMAX: return 18.0;
  default: return 0.0;
  }
}

/* baddbmm, clone, masked_fill, to(fp32), softmax, to(bf16), dropout (2), bmm;
 * fused: baddbmm, clone, fused softmax, dropout (2), bmm. */
int ops_attention_kernels(layout_attn a) { return a == ATTN_TORCH ? 9 : a == ATTN_FUSED_SOFTMAX ? 6 : 1; }
