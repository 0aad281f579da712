/* sched_interleaved -- Megatron-LM's interleaved 1F1B (Narayanan et al.
 * 2021; megatron/core/pipeline_parallel/schedules.py,
 * forward_backward_pipelining_with_interleaving). Each stage holds V chunks;
 * chunk c of stage s is virtual stage c*pp + s. The m*V chunk passes of a
 * stage run in groups of pp micro-batches: forward k is chunk
 * (k mod pp*V) div pp of micro-batch (k div pp*V)*pp + k mod pp, backward k
 * the same with the chunks in reverse. Warm-up: 2(pp - s - 1) + (V - 1) pp
 * forwards (all m*V when m = pp), then one forward and one backward per
 * step, then the cool-down backwards. Sends do not wait for their receive
 * (Megatron's batched isend/irecv).
 *
 * Megatron's constraints: m a multiple of pp, layers divisible by pp*V, at
 * least 2 stages and 2 chunks. The bubble is (pp - 1)(t_f + t_b)/V.
 * A stage holds warm-up + 1 chunk passes: the peak is reached at m = 2 pp
 * (at m = pp every pass is a warm-up one: m*V of them). From m = 2 pp the
 * warm-up and cool-down do not change and each further group of pp
 * micro-batches adds pp*V steady pairs to every stage, so the fast path's
 * counts are 2 pp and 3 pp (checked against full replays in test_sweep).
 */
#include "schedule.h"

#include "common/lsim_error.h"

static int chunk_of(int k, int stages, int chunks, gboolean forward)
{
  int c = (k % (stages * chunks)) / stages;
  return forward ? c : chunks - 1 - c;
}

static int micro_batch_of(int k, int stages, int chunks) { return k / (stages * chunks) * stages + k % stages; }

static void pass(GArray *out, gboolean forward, int k, int stage, int stages, int chunks)
{
  sched_push_with_p2p(out, forward ? SCHED_FORWARD : SCHED_BACKWARD, micro_batch_of(k, stages, chunks),
                      chunk_of(k, stages, chunks, forward), stage, stages, chunks);
}

static void emit(GArray *out, int stage, int stages, int chunks, int m)
{
  int total = m * chunks;
  int warmup = m == stages ? total : MIN(2 * (stages - stage - 1) + (chunks - 1) * stages, total);
  int steady = total - warmup;
  for (int k = 0; k < warmup; k++) pass(out, TRUE, k, stage, stages, chunks);
  for (int k = 0; k < steady; k++) {
    pass(out, TRUE, warmup + k, stage, stages, chunks);
    pass(out, FALSE, k, stage, stages, chunks);
  }
  for (int k = steady; k < total; k++) pass(out, FALSE, k, stage, stages, chunks);
  sched_push(out, SCHED_OPTIMIZER, -1, 0);
}

static gboolean check(int stages, int chunks, int m, int layers, GError **err)
{
  if (chunks < 2) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "virtual_stages: %d with schedule interleaved (allowed: 2 or more chunks per stage, with layers "
                "divisible by pp*virtual_stages)", chunks);
    return FALSE;
  }
  if (layers % (stages * chunks) != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "virtual_stages: %d does not split the %d layers evenly over pp*virtual_stages = %d*%d virtual "
                "stages (allowed: layers divisible by pp*virtual_stages, as Megatron-LM requires)",
                chunks, layers, stages, chunks);
    return FALSE;
  }
  if (m % stages != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "global_batch: %d micro-batches per step is not a multiple of pp = %d, as the interleaved schedule "
                "requires (allowed: global_batch/(dp*micro_batch) a multiple of %d)", m, stages, stages);
    return FALSE;
  }
  return TRUE;
}

const sched_def sched_def_interleaved = {
    .name = "interleaved",
    .about = "Megatron-LM's interleaved 1F1B over --virtual-stages chunks per stage (Narayanan et al. 2021)",
    .chunked = TRUE,
    .eager_sends = TRUE,
    .emit = emit,
    /* the header: whole from 2 pp, a group of pp micro-batches per steady round, the peak reached at 2 pp */
    .counts = {.affine = TRUE, .whole = {2, 0}, .round = {1, 0}, .peak = {2, 0}},
    .check = check,
    .min_stages = 2,
    .below_min = "there is no other stage to interleave chunks with",
};
