/* sched_gpipe -- GPipe (Huang et al. 2019): every stage runs the forwards
 * of all m micro-batches, then their backwards in reverse order (the last
 * forward's backward first, as autograd over the concatenated outputs
 * runs), then the optimizer step. Sends do not wait for their receive.
 *
 * A stage holds all m micro-batches' activations at the end of its forwards,
 * so the memory peak grows with m: the memory verdict needs the whole step.
 * Its step time is a maximum of affine functions of m with different slopes
 * once the stages differ (the forward wave is bound by the slowest stage up
 * to s, the backward wave by another), so no affine counts are claimed and
 * the pool replays the whole step.
 */
#include "schedule.h"

static void emit(GArray *out, int stage, int stages, int chunks, int m)
{
  for (int i = 0; i < m; i++) sched_push_with_p2p(out, SCHED_FORWARD, i, 0, stage, stages, chunks);
  for (int i = m - 1; i >= 0; i--) sched_push_with_p2p(out, SCHED_BACKWARD, i, 0, stage, stages, chunks);
  sched_push(out, SCHED_OPTIMIZER, -1, 0);
}

const sched_def sched_def_gpipe = {
    .name = "gpipe",
    .about = "GPipe: all forwards, then all backwards (Huang et al. 2019)",
    .eager_sends = TRUE,
    .emit = emit,
    .counts = {.affine = FALSE, .peak_grows = TRUE}, /* the header: no affine counts, the peak grows with m */
};
