/* sched_zbh1 -- ZB-H1 of Qi et al. 2023 ("Zero Bubble Pipeline
 * Parallelism", arXiv:2401.10241), as sail-sg/zero-bubble-pipeline-
 * parallelism's ZeroBubbleH1Pipeline orders it (its exact semantics). The
 * backward is split into B (the input gradient, what the previous stage
 * waits for, with the tensor-parallel all-reduces) and W (the weight
 * gradient). Stage i of p: pp - i - 1 warm-up forwards; i steps of one
 * forward and one B, their W deferred; then one forward, one B and one W per
 * step while forwards remain; then B and W per step; then the i deferred W,
 * which fill the cool-down bubble. W runs the oldest pending micro-batch.
 * The first stage runs whole backwards (nobody waits for its input
 * gradient). Sends do not wait for their receive.
 *
 * Stage i holds pp - i micro-batches whole, as 1F1B, plus what the i
 * pending W keep alive (their GEMM inputs and output gradients). With
 * t_F = t_B = t_W the bubble is (p - 1)(t_F + t_B - t_W), a third of 1F1B's
 * (p - 1)(t_F + t_B + t_W). From m = pp every stage has its whole shape and
 * one more micro-batch adds one forward-B-W step to every stage: T(m) is
 * affine from there, as 1F1B's.
 */
#include "schedule.h"

typedef struct zb {
  GArray *out;
  int stage, stages, m;
  int forward, backward, weight; /* next micro-batch of each kind */
} zb;

static void f(zb *z) { sched_push_with_p2p(z->out, SCHED_FORWARD, z->forward++, 0, z->stage, z->stages, 1); }

/* B of the next backward; the first stage's whole backward (its W with it) */
static void b(zb *z)
{
  gboolean whole = z->stage == 0;
  sched_push_with_p2p(z->out, whole ? SCHED_BACKWARD : SCHED_BACKWARD_B, z->backward++, 0, z->stage, z->stages, 1);
  if (whole) z->weight++;
}

static void w(zb *z)
{
  if (z->weight < z->backward) sched_push(z->out, SCHED_BACKWARD_W, z->weight++, 0);
}

static void emit(GArray *out, int stage, int stages, int chunks, int m)
{
  (void)chunks;
  zb z = {.out = out, .stage = stage, .stages = stages, .m = m};
  for (int k = 0; k < stages - stage - 1 && z.forward < m; k++) f(&z);
  for (int k = 0; k < stage && z.forward < m; k++) {
    f(&z);
    b(&z);
  }
  while (z.forward < m) {
    f(&z);
    b(&z);
    w(&z);
  }
  while (z.backward < m) {
    b(&z);
    w(&z);
  }
  while (z.weight < m) w(&z);
  sched_push(out, SCHED_OPTIMIZER, -1, 0);
}

const sched_def sched_def_zbh1 = {
    .name = "zb-h1",
    .about = "ZB-H1 zero-bubble schedule, backward split into B and W (Qi et al. 2023)",
    .eager_sends = TRUE,
    .emit = emit,
    /* 1F1B's shape: its warm-up and cool-down, one more B and W pair per micro-batch, P - s in flight */
    .counts = SCHED_COUNTS_1F1B,
    /* at one stage each W follows its B at once: 1f1b's step, its times and memory, under another name */
    .min_stages = 2,
    .below_min = "its W passes fill a pipeline's bubbles and one stage has none: it runs 1f1b's step",
};
