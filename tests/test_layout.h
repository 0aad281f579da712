/* test_layout -- the one layout builder of the test suites: layout_default() with
 * the GPU count, parallel degrees, micro-batch and checkpointing set. Callers change
 * any other field afterwards. */
#ifndef TEST_LAYOUT_H
#define TEST_LAYOUT_H

#include "workloads/layout.h"

static inline layout test_layout(int gpus, int tp, int pp, int mb, layout_ckpt ckpt)
{
  layout l = layout_default();
  l.gpus = gpus;
  l.tp = tp;
  l.pp = pp;
  l.micro_batch = mb;
  l.ckpt = ckpt;
  return l;
}

#endif
