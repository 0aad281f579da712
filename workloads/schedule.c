/* schedule -- see schedule.h. The micro-batch id functions are those of the
 * study's code, verbatim (floor divisions on non-negative step ids). */
#include "schedule.h"

static const char *const NAMES[] = {"recv_act", "send_act", "recv_grad", "send_grad", "forward", "backward",
                                    "optimizer"};

const char *sched_kind_name(sched_kind k) { return NAMES[k]; }

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

static void push(GArray *a, sched_kind k, int mb)
{
  sched_instr in = {k, mb};
  g_array_append_val(a, in);
}

GArray *sched_1f1b(int r, int P, int m)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  int total = 2 * (m + P - 1);
  int prev = -1;
  gboolean prev_valid = FALSE;
  for (int step = 0; step < total; step++) {
    gboolean fwd;
    int mb = step_micro_batch(step, r, P, &fwd);
    gboolean valid = mb >= 0 && mb < m;
    if (fwd) {
      if (valid && r > 0) push(out, SCHED_RECV_ACT, mb);
      if (prev_valid && r > 0) push(out, SCHED_SEND_GRAD, prev);
    } else {
      if (prev_valid && r < P - 1) push(out, SCHED_SEND_ACT, prev);
      if (valid && r < P - 1) push(out, SCHED_RECV_GRAD, mb);
    }
    if (valid) push(out, fwd ? SCHED_FORWARD : SCHED_BACKWARD, mb);
    if (step == total - 1) push(out, SCHED_OPTIMIZER, -1);
    prev = mb;
    prev_valid = valid;
  }
  return out;
}

int sched_pipe_buffers(int r, int P, int m)
{
  int b = MIN(P - r + 1, m);
  return MAX(2, b);
}
