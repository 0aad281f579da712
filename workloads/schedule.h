/* schedule -- pipeline schedules as a table of modules. A schedule turns
 * (stage, stages, chunks, micro-batches) into the ordered instructions of
 * one stage: forward, backward (or backward split into B, the input
 * gradient, and W, the weight gradient, as zero-bubble schedules do), send
 * and receive of micro-batch i and model chunk c, and the optimizer step at
 * the end. A stage holds `chunks` chunks of layers; which virtual stage
 * (the position in the model's order of layers) chunk c of stage s is, is
 * the schedule's: c*stages + s by default (Megatron-LM's interleaving; one
 * chunk otherwise), 2*stages - 1 - s for DualPipeV's second chunk (a V).
 * Everything that depends on the schedule (the chunk map, the fast path's
 * micro-batch counts, where the memory peak is reached, the constraints on
 * m and layers, whether a send waits for its receive) is asked of its table
 * entry, never assumed elsewhere.
 *
 * One file per schedule (sched_1f1b.c, sched_gpipe.c, sched_interleaved.c,
 * sched_zbh1.c, sched_dualpipev.c), each exporting one `sched_def`; schedule.c holds the table
 * and the helpers they share, sched_counts.c the counts they state as data. Adding one: docs/schedules.md.
 *
 * Owns: the instruction lists and the schedule table. May not touch: costs, ranks, memory bytes.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include <glib.h>

#include "sched_counts.h"

typedef enum {
  SCHED_RECV_ACT,
  SCHED_SEND_ACT,
  SCHED_RECV_GRAD,
  SCHED_SEND_GRAD,
  SCHED_FORWARD,  /* includes the loss on the last virtual stage */
  SCHED_BACKWARD, /* input and weight gradients together */
  SCHED_OPTIMIZER, /* reduce grads + optimizer step, once at the end */
  SCHED_BACKWARD_B, /* the input gradient only (what the previous stage waits for); the tp all-reduces */
  SCHED_BACKWARD_W, /* the weight gradient of a micro-batch whose B ran before */
  SCHED_N_KINDS
} sched_kind;

typedef struct sched_instr {
  sched_kind kind;
  int micro_batch; /* -1 for SCHED_OPTIMIZER */
  int chunk;       /* model chunk of the stage, 0..chunks-1 (0 for SCHED_OPTIMIZER) */
  gboolean paired; /* SCHED_BACKWARD: one F&B pair with the forward just before it, run as one (DualPipe's
                    * overlapped_forward_backward; what --overlap-moe-ep-comm overlaps) */
} sched_instr;

/* One schedule. Every function gets the pipeline depth `stages` (pp) and `chunks` (virtual stages per
 * stage, 1 unless the schedule is chunked). */
typedef struct sched_def {
  const char *name;  /* as --schedule and the `schedule` column take it */
  const char *about; /* one line: what it is and after whom */
  gboolean chunked;  /* takes --virtual-stages above 1 */
  /* A send does not wait for its receive (isend, as Megatron-LM's p2p): the sender goes on at once and the
   * receiver waits for the data. FALSE: a rendezvous (the study's blocking torch.distributed.send). */
  gboolean eager_sends;
  /* Append the instructions of `stage`, for m micro-batches (the layout is checked: `check` passed). */
  void (*emit)(GArray *out, int stage, int stages, int chunks, int m);
  /* Micro-batch counts m1 < m2 from which every time of the step is affine in m (the fast path), or that
   * this is not known (the pool then replays the whole step), and the count m' <= m at which every stage's
   * memory peak at m is already reached (sched_counts.h; asked through sched_affine_counts and
   * sched_memory_micro_batches). */
  sched_counts counts;
  /* The chunks per stage it runs where the command line does not say (--virtual-stages left out); 0: 1. */
  int default_chunks;
  /* The only chunks per stage it runs (its check refuses others), which a sweep's space then enumerates alone;
   * 0: any that split the layers. */
  int fixed_chunks;
  /* The fewest stages (pp) where it is a schedule of its own; 0: 1. Below, it is refused (sched_check) rather
   * than run as another schedule under its name (a value silently ignored), and a sweep enumerates the default
   * in its place; `below_min` says why, after "at pp P, where ". */
  int min_stages;
  const char *below_min;
  /* Constraints on m and on the layers; NULL: none. FALSE with err naming the option, its value and what is
   * allowed. */
  gboolean (*check)(int stages, int chunks, int m, int layers, GError **err);
  /* The virtual stage (0 .. stages*chunks - 1, in the model's order) of chunk `chunk` of `stage`; NULL:
   * chunk*stages + stage (Megatron-LM's interleaving). */
  int (*vstage)(int stage, int chunk, int stages, int chunks);
} sched_def;

/* The table: index 0 is the default (1f1b, the study's). */
int sched_count(void);
const sched_def *sched_get(int id);
/* Id of `name`; FALSE with err listing the names. */
gboolean sched_parse(const char *name, int *id, GError **err);
const char *sched_name(int id);
/* "1f1b, gpipe, ..." (for help and errors). Caller frees. */
char *sched_names(const char *sep);
/* The fewest stages where schedule `id` is one of its own (sched_def.min_stages; 1 at least). */
int sched_min_stages(int id);
/* Check the schedule's own constraints, its fewest stages, and that chunks is 1 where it is not chunked. */
gboolean sched_check(int id, int stages, int chunks, int m, int layers, GError **err);
/* The virtual stage of chunk `chunk` of `stage` under schedule `id` (its sched_def.vstage). */
int sched_vstage(int id, int stage, int chunk, int stages, int chunks);
/* The stage holding virtual stage v (and its chunk there, when chunk is not NULL); -1 when v is outside
 * 0 .. stages*chunks - 1. */
int sched_vstage_holder(int id, int v, int stages, int chunks, int *chunk);
/* Its counts (sched_def.counts): the fast path's m1 < m2 (FALSE where T(m) is not known affine), and the count at
 * which every stage's memory peak at m is reached. */
gboolean sched_affine_counts(int id, int stages, int *m1, int *m2);
int sched_memory_micro_batches(int id, int stages, int m);
/* The instructions of `stage` under schedule `id`. Caller frees. */
GArray *sched_instructions(int id, int stage, int stages, int chunks, int m);

/* Megatron-Core's combined 1F1B without pipelining (combined_1f1b.py, combined_1f1b_schedule_for_no_pipelining,
 * what --overlap-moe-expert-parallel-comm runs at pp 1): the forwards and backwards of one stage, F0 B0 F1 B1 ...
 * Fm-1 Bm-1, reordered as F0, then the pairs (F1, B0) ... (Fm-1, Bm-2), each backward `paired` with the forward
 * before it, then Bm-1; anything else (the optimizer) stays after them. Only for a stage without pipeline
 * messages (pp 1). */
void sched_combine_no_pipelining(GArray *instrs);

/* For schedules: append one instruction. */
void sched_push(GArray *out, sched_kind k, int mb, int chunk);
/* For schedules with the default chunk map: append compute instruction `k` of micro-batch mb and chunk c with
 * its communication: the receive of its input before it (activation before a forward, gradient before a
 * backward or B) and the send of its output after it, where virtual stage c*stages + stage has a neighbour
 * there. W has none. */
void sched_push_with_p2p(GArray *out, sched_kind k, int mb, int chunk, int stage, int stages, int chunks);

/* The study's 1F1B (sched_1f1b.c), one chunk. Caller frees. */
GArray *sched_1f1b(int stage, int stages, int micro_batches);
/* Pipe buffers the study's code allocates: max(2, min(stages - stage + 1, micro_batches)). */
int sched_pipe_buffers(int stage, int stages, int micro_batches);
const char *sched_kind_name(sched_kind k);

#endif
