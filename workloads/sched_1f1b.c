/* sched_1f1b -- the synchronous 1F1B pipeline schedule of the study's code
 * (Aleph-Alpha/scaling, pipeline_schedule/train.py, after DeepSpeed's
 * TrainSchedule), the default: 2*(m + pp - 1) steps per stage; even/odd
 * stages alternate forward and backward by step parity; the activation of a
 * forward is sent one step later; within a step RecvActivation precedes
 * SendGrad and SendActivation precedes RecvGrad. Sends are blocking
 * rendezvous. The micro-batch id functions are those of the study's code,
 * verbatim (floor divisions on non-negative step ids).
 *
 * Stage s holds min(pp - s, m) micro-batches; from m = pp on every stage has
 * its whole shape (pp - s - 1 warm-up forwards, at least one steady
 * forward-backward pair, the cool-down) and one more micro-batch adds one
 * steady pair to every stage, so every time of the step is affine in m
 * (docs/calibration.md, "Fast mode").
 */
#include "schedule.h"

static int floordiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Micro-batch of `step` for stage r of P, and whether it is a forward. */
static int step_micro_batch(int step, int r, int P, gboolean *fwd)
{
  gboolean even_step = step % 2 == 0, even_stage = r % 2 == 0;
  if (step < 0) {
    *fwd = FALSE;
    return -1000000;
  }
  if (even_step && even_stage) {
    *fwd = TRUE;
    return floordiv(step, 2) - floordiv(r, 2);
  }
  if (!even_step && !even_stage) {
    *fwd = TRUE;
    return floordiv(step - 1, 2) - floordiv(r, 2);
  }
  *fwd = FALSE;
  if (even_step) return floordiv(step, 2) - P + floordiv(r + 1, 2);
  return floordiv(step - 1, 2) - P + 1 + floordiv(r, 2);
}

static void emit(GArray *out, int r, int P, int chunks, int m)
{
  (void)chunks;
  int total = 2 * (m + P - 1);
  int prev = -1;
  gboolean prev_valid = FALSE;
  for (int step = 0; step < total; step++) {
    gboolean fwd;
    int mb = step_micro_batch(step, r, P, &fwd);
    gboolean valid = mb >= 0 && mb < m;
    if (fwd) {
      if (valid && r > 0) sched_push(out, SCHED_RECV_ACT, mb, 0);
      if (prev_valid && r > 0) sched_push(out, SCHED_SEND_GRAD, prev, 0);
    } else {
      if (prev_valid && r < P - 1) sched_push(out, SCHED_SEND_ACT, prev, 0);
      if (valid && r < P - 1) sched_push(out, SCHED_RECV_GRAD, mb, 0);
    }
    if (valid) sched_push(out, fwd ? SCHED_FORWARD : SCHED_BACKWARD, mb, 0);
    if (step == total - 1) sched_push(out, SCHED_OPTIMIZER, -1, 0);
    prev = mb;
    prev_valid = valid;
  }
}

GArray *sched_1f1b(int r, int P, int m)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  emit(out, r, P, 1, m);
  return out;
}

const sched_def sched_def_1f1b = {
    .name = "1f1b",
    .about = "synchronous 1F1B of the study's code (DeepSpeed's TrainSchedule), blocking sends",
    .emit = emit,
    .counts = SCHED_COUNTS_1F1B,
};
