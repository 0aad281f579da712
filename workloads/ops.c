/* ops -- see ops.h. */
#include "ops.h"

/* HBM traffic per element of the local [b * heads/tp, s, s] score matrix.
 * Aleph-Alpha/scaling's TORCH path (masked_softmax.py, scaling-facts 8.1),
 * forward: baddbmm writes the bf16 scores (w2); the mask fill runs on a clone
 * (r2 w2) and in place (r2 w2, the broadcast bool mask stays in cache);
 * softmax in fp32: cast (r2 w4), softmax (r4 w4), cast back (r4 w2); the AV
 * bmm reads the probabilities (r2): 2+4+4+6+8+6+2 = 32.
 * Backward, node by node: the AV bmm writes dP (w2) and reads P for dV (r2);
 * the cast back's backward casts dP to fp32 (r2 w4); softmax backward reads
 * the output and dP and writes dS (r4 r4 w4); the cast's backward (r4 w2); the
 * in-place fill's backward zeroes the masked gradient (r2 w2); the clone's
 * passes it on; baddbmm's backward reads dS for dQ and dK (r2 r2):
 * 4+6+12+6+4+4 = 36.
 * fused-softmax (Megatron scale-mask-softmax, not in the public code;
 * assumed to replace only the fill + fp32 softmax): forward baddbmm (w2),
 * clone of the view (r2 w2), fused scale-mask-softmax (r2 w2, mask r1), AV
 * read (r2): 2+4+5+2 = 13; backward dP write and P read (4), fused softmax
 * backward (r2 r2 w2), dS read twice (4): 14.
 * No dropout: Llama is trained without it, the library default is 0.0, and
 * torch's dropout returns its input unchanged at p = 0 (no kernel, no mask);
 * the memory model counts no dropout masks either (docs/memory.md). */
double ops_score_bytes_per_el(layout_attn a, gboolean backward)
{
  switch (a) {
  case ATTN_TORCH: return backward ? 36.0 : 32.0;
  case ATTN_FUSED_SOFTMAX: return backward ? 14.0 : 13.0;
  default: return 0.0;
  }
}

/* torch forward: baddbmm, clone, masked_fill, to(fp32), softmax, to(bf16), bmm;
 * backward: bmm (2 GEMMs), cast, softmax backward, cast, fill, baddbmm (2 GEMMs).
 * fused forward: baddbmm, clone, fused softmax, bmm; backward: 2 + 1 + 2.
 * FlashAttention: one kernel forward, two backward (preprocess + main). */
int ops_attention_kernels(layout_attn a, gboolean backward)
{
  switch (a) {
  case ATTN_TORCH: return backward ? 8 : 7;
  case ATTN_FUSED_SOFTMAX: return backward ? 5 : 4;
  default: return backward ? 2 : 1;
  }
}
