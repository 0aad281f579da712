/* schedule -- the synchronous 1F1B pipeline schedule of the study's code
 * (Aleph-Alpha/scaling, pipeline_schedule/train.py, after DeepSpeed's
 * TrainSchedule): 2*(m + pp - 1) steps per stage; even/odd stages alternate
 * forward and backward by step parity; the activation of a forward is sent
 * one step later; within a step RecvActivation precedes SendGrad and
 * SendActivation precedes RecvGrad.
 *
 * Owns: the instruction list of one stage. May not touch: costs, ranks.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include <glib.h>

typedef enum {
  SCHED_RECV_ACT,
  SCHED_SEND_ACT,
  SCHED_RECV_GRAD,
  SCHED_SEND_GRAD,
  SCHED_FORWARD,  /* includes the loss on the last stage */
  SCHED_BACKWARD,
  SCHED_OPTIMIZER /* reduce grads + optimizer step, once at the end */
} sched_kind;

typedef struct sched_instr {
  sched_kind kind;
  int micro_batch; /* -1 for SCHED_OPTIMIZER */
} sched_instr;

/* Instructions of `stage` (0-based) of `stages`, for `micro_batches` micro-batches. Caller frees. */
GArray *sched_1f1b(int stage, int stages, int micro_batches);
/* Pipe buffers the study's code allocates: max(2, min(stages - stage + 1, micro_batches)). */
int sched_pipe_buffers(int stage, int stages, int micro_batches);
const char *sched_kind_name(sched_kind k);

#endif
