/* ops -- see ops.h. */
#include "ops.h"

double ops_score_bytes_per_el(layout_attn a)
{
  switch (a) {
  case ATTN_TORCH: return 14.0;        /* baddbmm write 2, masked_fill clone 2r+2w, softmax 2r+2w, AV read 2, +fp32 cast */
  case ATTN_FUSED_SOFTMAX: return 8.0; /* scores write 2, fused softmax 2r+2w, AV read 2 */
  default: return 0.0;
  }
}

int ops_attention_kernels(layout_attn a) { return a == ATTN_TORCH ? 6 : a == ATTN_FUSED_SOFTMAX ? 3 : 1; }
