/* sched_dualpipev -- DeepSeek's DualPipeV, the "cut-in-half" DualPipe
 * (deepseek-ai/DualPipe, dualpipe/dualpipev.py, DualPipeV.step; Sea AI
 * Lab's "Cut-in-half"). Each of the pp ranks holds two chunks of the
 * 2*pp virtual stages placed in a V: chunk 0 of rank r is virtual stage r,
 * chunk 1 is virtual stage 2*pp - 1 - r. The embedding and the loss (the
 * first and last virtual stages) both sit on rank 0; chunk 0's activations
 * flow r -> r + 1, chunk 1's r + 1 -> r, and on the last rank chunk 0's
 * output is chunk 1's input without a send (its gradient likewise).
 *
 * The step order is DualPipeV.step's, verbatim, for rank r of P and m >= 2P
 * micro-batches: 1. 2(P - r - 1) F0; 2. r + 1 times F0 F1; 3. P - r - 1
 * times B1 (zero bubble: input gradient, W deferred) W F1; 4. m - 2P + r + 1
 * times F0&B1 F1&B0 (the last rank's first F0 and B1 apart); 5. P - r - 1
 * times B1 F1&B0; 6. r + 1 times B1 B0, the second half with W deferred;
 * 7. P - r - 1 times W B0 (W deferred); 8. r + 1 W. W runs the oldest
 * deferred weight gradient (WeightGradStore's FIFO). Communication as the
 * reference batches it: receives and sends are posted as the code posts
 * them and issued together where it commits (batch_isend_irecv and wait),
 * before the next compute: the sends first (eager, Megatron-style isend),
 * then the receives, which that compute waits for. An F&B pair is a forward
 * then a backward on the compute stream, the backward marked `paired` (the
 * overlap of one micro-batch's all-to-all with the other's compute is
 * --overlap-moe-ep-comm's, stage_driver.c).
 *
 * With F&B the time of an overlapped forward-backward pair, B a whole
 * backward and W its weight part, the README's bubble is
 * (PP/2 - 1)(F&B + B - 3W) for PP = 2P stages, and a rank holds PP + 1
 * chunk activations (2P + 1 forwards whose backward has not run).
 */
#include "schedule.h"

#include "common/lsim_error.h"

typedef struct dpv {
  GArray *out;
  int r, P;
  int f[2], b[2];                          /* next micro-batch to compute, per phase (chunk) */
  int recv_f[2], send_f[2], recv_b[2], send_b[2]; /* next micro-batch to receive or send, per phase */
  GArray *posted;                          /* communication posted since the last commit */
  GArray *weights;                         /* deferred W (FIFO) */
  guint weights_done;
} dpv;

static gboolean first(const dpv *d) { return d->r == 0; }
static gboolean last(const dpv *d) { return d->r == d->P - 1; }

static void post(dpv *d, sched_kind k, int mb, int phase)
{
  sched_instr in = {k, mb, phase, FALSE};
  g_array_append_val(d->posted, in);
}

/* batch_isend_irecv of what was posted, then wait: the sends (eager) first, then the receives */
static void commit(dpv *d)
{
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < d->posted->len; i++) {
      sched_instr in = g_array_index(d->posted, sched_instr, i);
      gboolean send = in.kind == SCHED_SEND_ACT || in.kind == SCHED_SEND_GRAD;
      if (send == (pass == 0)) g_array_append_val(d->out, in);
    }
  g_array_set_size(d->posted, 0);
}

static void recv_forward(dpv *d, int ph)
{
  if ((first(d) && ph == 0) || (last(d) && ph == 1)) return;
  post(d, SCHED_RECV_ACT, d->recv_f[ph]++, ph);
}

static void send_forward(dpv *d, int ph)
{
  if ((first(d) && ph == 1) || (last(d) && ph == 0)) return;
  post(d, SCHED_SEND_ACT, d->send_f[ph]++, ph);
}

static void recv_backward(dpv *d, int ph)
{
  if ((first(d) && ph == 1) || (last(d) && ph == 0)) return;
  post(d, SCHED_RECV_GRAD, d->recv_b[ph]++, ph);
}

static void send_backward(dpv *d, int ph)
{
  if ((first(d) && ph == 0) || (last(d) && ph == 1)) return;
  post(d, SCHED_SEND_GRAD, d->send_b[ph]++, ph);
}

static void forward_compute(dpv *d, int ph) { sched_push(d->out, SCHED_FORWARD, d->f[ph]++, ph); }

static void backward_compute(dpv *d, int ph, gboolean zb)
{
  int mb = d->b[ph]++;
  sched_push(d->out, zb ? SCHED_BACKWARD_B : SCHED_BACKWARD, mb, ph);
  if (zb) {
    sched_instr w = {SCHED_BACKWARD_W, mb, ph, FALSE};
    g_array_append_val(d->weights, w);
  }
}

static void forward_chunk(dpv *d, int ph, gboolean recv, gboolean send)
{
  if (recv) recv_forward(d, ph);
  commit(d);
  forward_compute(d, ph);
  if (send) send_forward(d, ph);
}

static void backward_chunk(dpv *d, int ph, gboolean zb)
{
  recv_backward(d, ph);
  commit(d);
  backward_compute(d, ph, zb);
  send_backward(d, ph);
}

/* _forward_backward_chunk: forward of phase0 and backward of phase1 after one commit */
static void forward_backward_chunk(dpv *d, int ph0, int ph1, gboolean recv0)
{
  if (recv0) recv_forward(d, ph0);
  recv_backward(d, ph1);
  commit(d);
  forward_compute(d, ph0);
  backward_compute(d, ph1, FALSE);
  g_array_index(d->out, sched_instr, d->out->len - 1).paired = TRUE;
  send_forward(d, ph0);
  send_backward(d, ph1);
}

static void weight_chunk(dpv *d)
{
  commit(d);
  g_array_append_val(d->out, g_array_index(d->weights, sched_instr, d->weights_done));
  d->weights_done++;
}

static void emit(GArray *out, int r, int P, int chunks, int m)
{
  (void)chunks;
  dpv d = {.out = out, .r = r, .P = P};
  d.posted = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  d.weights = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  /* 1: nF0 */
  for (int i = 0; i < 2 * (P - r - 1); i++) forward_chunk(&d, 0, TRUE, TRUE);
  /* 2: nF0F1 */
  int step_2 = r + 1;
  recv_forward(&d, 0);
  for (int i = 0; i < step_2; i++) {
    forward_chunk(&d, 0, FALSE, FALSE);
    recv_forward(&d, 0);
    forward_chunk(&d, 1, TRUE, !last(&d) || i < step_2 - 1);
    send_forward(&d, 0);
  }
  /* 3: nB1W1F1 (zero bubble) */
  for (int i = 0; i < P - r - 1; i++) {
    backward_chunk(&d, 1, TRUE);
    recv_forward(&d, 1);
    weight_chunk(&d);
    forward_chunk(&d, 1, FALSE, TRUE);
  }
  /* 4 (main): nF0B1F1B0 */
  int step_4 = m - 2 * P + r + 1;
  for (int i = 0; i < step_4; i++) {
    if (i == 0) {
      if (last(&d)) { /* the reference does not overlap these two, to shorten the bubble */
        forward_chunk(&d, 0, FALSE, FALSE);
        send_forward(&d, 1);
        recv_backward(&d, 1); /* _backward_chunk(1, send=False) */
        commit(&d);
        backward_compute(&d, 1, FALSE);
        send_forward(&d, 0);
        send_backward(&d, 1);
      } else {
        forward_backward_chunk(&d, 0, 1, FALSE);
      }
    } else {
      forward_backward_chunk(&d, 0, 1, TRUE);
    }
    forward_backward_chunk(&d, 1, 0, TRUE);
  }
  /* 5: nB1F1B0 */
  for (int i = 0; i < P - r - 1; i++) {
    backward_chunk(&d, 1, FALSE);
    forward_backward_chunk(&d, 1, 0, TRUE);
  }
  /* 6: nB1B0, the second half with W deferred */
  int step_6 = r + 1;
  gboolean zb = FALSE;
  for (int i = 0; i < step_6; i++) {
    if (i == step_6 / 2 && r % 2 == 1) zb = TRUE;
    backward_chunk(&d, 1, zb);
    if (i == step_6 / 2 && r % 2 == 0) zb = TRUE;
    backward_chunk(&d, 0, zb);
  }
  /* 7: nWB0 (zero bubble) */
  for (int i = 0; i < P - r - 1; i++) {
    weight_chunk(&d);
    backward_chunk(&d, 0, TRUE);
  }
  /* 8: nW */
  for (int i = 0; i < r + 1; i++) weight_chunk(&d);
  commit(&d);
  sched_push(out, SCHED_OPTIMIZER, -1, 0);
  g_array_free(d.posted, TRUE);
  g_array_free(d.weights, TRUE);
}

/* the V: rank r holds virtual stages r and 2P - 1 - r */
static int vstage(int stage, int chunk, int stages, int chunks)
{
  (void)chunks;
  return chunk == 0 ? stage : 2 * stages - 1 - stage;
}

static gboolean check(int stages, int chunks, int m, int layers, GError **err)
{
  if (chunks != 2) { /* sched_def_dualpipev.fixed_chunks */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "virtual_stages: %d with schedule dualpipev (allowed: 2, the two chunks of the V on every rank)",
                chunks);
    return FALSE;
  }
  if (m < 2 * stages) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "global_batch: %d micro-batches per step, fewer than 2*pp = %d, which DualPipeV needs (allowed: "
                "global_batch/(dp*micro_batch) >= %d)", m, 2 * stages, 2 * stages);
    return FALSE;
  }
  if (layers % (2 * stages) != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "virtual_stages: 2 does not split the %d layers evenly over the 2*pp = %d virtual stages of "
                "DualPipeV (allowed: layers divisible by 2*pp, or a --pipeline-layout)", layers, 2 * stages);
    return FALSE;
  }
  return TRUE;
}

const sched_def sched_def_dualpipev = {
    .name = "dualpipev",
    .about = "DeepSeek's DualPipeV: two chunks per rank in a V, loss on rank 0 (deepseek-ai/DualPipe)",
    .chunked = TRUE,
    .eager_sends = TRUE,
    .emit = emit,
    /* From m = 2P every rank has its whole shape (steps 1-3 and 5-8 do not depend on m), and one more micro-batch
     * adds one F0&B1 F1&B0 round of step 4 to every rank; but the first of those rounds (2P -> 2P + 1) is not yet
     * the steady one: its pairs meet the warm-up's last forwards, and with collectives in the layers (an MoE's
     * all-to-alls, latency-bound layers) it took 0.1-1.7% less than the rounds after it. From 2P + 1 every round
     * is the same events: 2P + 1 and 2P + 2 (checked against full replays in test_sweep). The memory: 2P + 1
     * chunk passes in flight at the first round of step 4, which every m >= 2P has. */
    .counts = {.affine = TRUE, .whole = {2, 1}, .round = {0, 1}, .peak = {2, 0}},
    .default_chunks = 2, /* the V's two chunks: --schedule dualpipev alone runs them */
    .fixed_chunks = 2,
    .check = check,
    .vstage = vstage,
};
