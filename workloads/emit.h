/* emit -- the generator's private header (not for use outside workloads/generate.c and the files it was
 * split into): the emitter's state while one stage's program is written, the rank groups, and the
 * functions the generator's files share. Public interface: generate.h.
 *
 * Owns: struct emit, gen_groups, the shared internals of emit.c, gen_groups.c, layer_pass.c, grad_sync.c,
 * optimizer.c, stage_driver.c and generate.c.
 * May not touch: anything outside the generator includes this header.
 */
#ifndef EMIT_H
#define EMIT_H

#include "generate.h"

#include <math.h>
#include <string.h>

#include "common/lsim_error.h"
#include "axes.h"
#include "block.h"
#include "precision.h"
#include "memory.h"
#include "mesh.h"
#include "ops.h"
#include "schedule.h"

#define BF16 2.0

#define FP32 4.0

/* allreduce_bucket_size of the study's optimizer: elements per gradient bucket. */
#define GRAD_BUCKET_ELEMENTS 500000000.0

/* Which part of a backward is emitted: all of it, or (split schedules, schedule.h) the input gradient B or
 * the weight gradient W. A GEMM's event says which in its variant (kernel_cost.h). */
typedef enum { BWD_WHOLE, BWD_INPUT, BWD_WEIGHT } bwd_part;

/* Everything one stage's program emission needs. */
typedef struct emit {
  const model *m;
  const layout *l;
  const gen_code *code;
  const partition *part;
  block layer_ops, embed, head; /* the operator tables of the items (block.h) */
  block moe_ops;   /* a mixture-of-experts layer's (models with experts) */
  block mtp_ops;   /* a multi-token prediction module's entry (block_mtp_entry; models with mtp_layers) */
  GArray *ev;      /* the program being written; NULL: only count the events (gen_stage_events) */
  double counted;  /* events counted when ev is NULL */
  double bucket_counted; /* of them, the gradient buckets' and the parameter all-gathers' */
  graph_event scratch; /* what a counted event is written to */
  int stage;
  int vstage;      /* the virtual stage being emitted: the schedule's map of (stage, chunk) (sched_vstage) */
  int chunk;       /* the chunk of the stage being emitted */
  bwd_part bpart;
  int tp_group, dp_group, pp_group; /* dp_group: Megatron's dp-cp group (dp * cp ranks) with cp > 1 */
  int ep_group, etp_group, edp_group; /* the expert layers' groups (mesh_init_expert; -1: none) */
  int prev_rank, next_rank; /* the neighbours of the virtual stage (-1: none) */
  int cp_next, cp_prev;     /* the ranks after and before this one around the cp ring (-1: cp 1) */
  int cp_group;             /* the cp group (cp a2a's all-to-alls; -1: cp 1) */
  int up_rank, down_rank;   /* the ranks of stages stage - 1 and stage + 1 around the pipeline */
  double T, Tl;    /* tokens per micro-batch on the rank (seq / cp of each sequence); in the sequence-parallel region */
  graph_phase phase;
  int mb, layer;
  gboolean graph_launched; /* this layer pass has launched its partial CUDA graph (layer_pass.c mark_captured) */
  /* streams (docs/schedules.md, "Overlap"): what runs on the communication stream and what waits for it */
  graph_program *prog;  /* the program written (its deps); NULL when counting */
  double stage_params;
  gboolean on_side;     /* events pushed now go to stream 1 */
  gboolean on_tp;       /* events pushed now go to stream 2 (tensor-parallel overlap, tp_overlap.c) */
  /* the stack's tp_comm_overlap (docs/stacks.md, "Tensor-parallel overlap"): the collective running beside a GEMM */
  int tp_pending;       /* the overlapped tp collective the compute stream has not waited for yet (-1: none) */
  gboolean tp_beside;   /* the next stream-0 event, if a GEMM, runs beside it (an all-gather before its GEMM) */
  int before_gemm, last_gemm; /* the stream-0 event before the latest GEMM, and that GEMM (-1: none) */
  int wait_for;         /* the next stream-0 event waits for this event (-1: none) */
  int last_main, last_side; /* the latest event of stream 0, of stream 1 (-1: none) */
  gboolean gather_units;    /* ZeRO-3 at dp > 1: each unit's weights gathered before its pass */
  int unit_gather;          /* the gather of the unit being emitted (-1: none) */
  double unit_gathered_bytes; /* what that gather brought in */
  gboolean reducing;        /* this backward reduces its gradients as it completes them */
  int n_buckets, buckets_done;
  double bucket_elements, grad_ready;
  GArray *param_gathers;    /* --overlap-param-gather: the step's first gathers (event indices), by chunk and bucket */
  int *gathers_from;        /* per chunk, the index of its first bucket in param_gathers ([V]: their count) */
  gboolean param_wait;      /* this forward's units wait for them */
  double param_offset;      /* the parameters before the unit, in forward order */
  double pass_params;       /* the parameters of the chunk being emitted (its own buckets: Megatron-Core's DDP
                             * buffer per model chunk); the stage's with one chunk */
} emit;

/* Group ids of every rank's groups: per axis of the table (axes.h), one group per mesh group along the axis'
 * group axes (dp's: Megatron's dp-cp group of dp * cp ranks, cp fastest), numbered as the mesh numbers them;
 * made in the table's order, so the graph's group ids are tp's, then cp's, dp's, pp's. */
typedef struct gen_groups {
  mesh me;
  mesh xme;        /* the expert layers' order (mesh_init_expert): the folded axes' groups are its */
  int *id[AXIS_N]; /* by mesh_group_index */
  int *edp_id;     /* the expert data-parallel groups (the expert mesh's dp), by its group index */
} gen_groups;

/* emit.c */
block_code emit_code_of(const layout *l, const gen_code *code);
void emit_tables(emit *x);
int emit_last_index(const emit *x);
void emit_depend(emit *x, int after);
graph_event *emit_push(emit *x, graph_kind kind, graph_cost cost, block_label label);
gboolean emit_in_backward(const emit *x);
graph_event *emit_block_gemm(emit *x, const block_op *o);
graph_event *emit_stream(emit *x, block_label op, double elements, double bytes, int launches);
void emit_collective(emit *x, graph_coll c, int group, double bytes);
gboolean emit_tp_on(const emit *x);
void emit_tp_reduce(emit *x);
void emit_sp_gather(emit *x);
void emit_sp_scatter_backward(emit *x);
graph_event *emit_last_event(emit *x);

/* tp_overlap.c */
void tp_overlap_collective(emit *x, graph_coll c, double bytes, gboolean before);
void tp_overlap_on_push(emit *x, graph_cost cost);
gboolean tp_async_applies(const emit *x);
graph_event *tp_async_column_backward(emit *x, const block_op *g, const block_op *enter);

/* gen_groups.c */
/* experts: the model has experts (the expert data-parallel groups are made; a dense model's graph has none) */
void gen_groups_make(graph *g, const layout *l, gboolean experts, gen_groups *gs);
int gen_group_of(const gen_groups *gs, axis_id a, int rank);
void gen_groups_clear(gen_groups *gs);
int gen_group_exists(const layout *l, axis_id a);
int gen_group_edp_of(const gen_groups *gs, int rank);
int gen_group_edp_exists(const layout *l);
/* layer_pass.c: the operator table of the layer being emitted (x->layer: MoE or dense) */
const block *layer_table(const emit *x);

/* layer_pass.c */
void layer_saves(emit *x, graph_event *e, const block_op *o);
void layer_forward(emit *x);
void layer_backward(emit *x);
void layer_embedding(emit *x);
void layer_head_forward(emit *x, gboolean has_norm, gboolean has_head);
void layer_head_backward(emit *x, gboolean has_norm, gboolean has_head);

/* grad_sync.c */
int grad_sync_stage_units(const emit *x, double *out);
void grad_sync_unit_begin(emit *x, const double *params, int n, int u, int dir);
void grad_sync_reduce_bucket(emit *x, double elements);
void grad_sync_unit_end_backward(emit *x, const double *params, int u);
void grad_sync_unit_end_forward(emit *x);
void grad_sync_param_gather_prologue(emit *x);
double grad_sync_chunk_params(const emit *x);

/* optimizer.c */
void optimizer_step(emit *x, double stage_params);

/* stage_driver.c */
void stage_at_chunk(emit *x, int c);
void emit_pass(emit *x, const mem_ctx *mc, sched_kind k, gboolean first, gboolean final);
void stage_first_and_final(const GArray *instrs, int V, int *first_fwd, int *final_bwd);
void emit_stage(emit *x, const mem_ctx *mc, double stage_params);
/* Whether the stage's pipeline tensors travel scattered over tp (gen_code pipe_scatter_gather, tp > 1, no sp). */
gboolean stage_pipe_scatters(const emit *x);

#endif
