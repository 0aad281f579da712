/* sweep -- the layout search: every combination of the layout axes (tp, pp,
 * micro-batch, sequence parallelism, checkpointing, attention kernel)
 * (and, when listed, the pipeline schedule and its virtual stages: left out,
 * the study's 1F1B with one chunk per stage; a chunked schedule left
 * without --virtual-stages takes every V >= 2 dividing layers/pp)
 * crossed with the platform axes (profile, stack, GPUs, InfiniBand and NVLink
 * bandwidth, NICs per node, memory per GPU), each a list given by the user
 * or, for a layout axis left out, every value valid for the model and the
 * cluster. Invalid layouts are counted by reason, the memory verdict comes
 * first (layouts that do not fit are not replayed), the rest is replayed
 * by the worker pool.
 *
 * The result is one canonical table (sweep_columns()): a row per
 * enumerated layout in enumeration order, with its index, its predict
 * columns, its platform columns and what the pool found. Every output
 * (sweep_report.h) is computed from that table alone, so a run split in
 * shards (--shard I/N: the rows whose index is I-1 mod N) and merged gives
 * byte for byte what the whole run gives. A shard's table (N > 1) has two
 * more columns, last: shard ("I/N"), enumerated (the layouts of the
 * whole sweep) and sweep (a hash of the sweep's lists and options), so
 * that merge can name a missing shard and refuse shards of two sweeps;
 * merge drops them.
 *
 * Owns: the axes, the enumeration, the canonical table.
 * May not touch: ranking and formats (sweep_report), option parsing.
 */
#ifndef SWEEP_H
#define SWEEP_H

#include <glib.h>

#include "csv.h"
#include "platforms/whatif.h"
#include "pool.h"
#include "workloads/axes.h"

/* The layout axes, in the enumeration's order (outer to inner). */
/* AX_ZERO, AX_OGR, AX_OPG: the ZeRO stage and the two overlaps (--zero, --overlap-grad-reduce,
 * --overlap-param-gather); left out, the one value given (or the default), unless the space is full. */
typedef enum { AX_TP, AX_PP, AX_SP, AX_CKPT, AX_ATTN, AX_MB, AX_SCHED, AX_VS, AX_CP, AX_PREC, AX_ZERO, AX_OGR, AX_OPG,
               AX_N } sweep_layout_axis;

/* What a layout axis left out covers: the default space (each axis as its option's help says: every valid tp,
 * pp, micro-batch, sp, checkpointing none/every_layer, attention kernel; one value of the others) or the full
 * one (--space full: every valid value of every axis, docs/sweep.md). */
typedef enum { SWEEP_SPACE_DEFAULT, SWEEP_SPACE_FULL } sweep_space;

typedef struct sweep_spec {
  model m;
  const char *model_file; /* the file m was read from, or NULL for a shipped model */
  int seq_len;
  int global_batch;       /* 0: 4194304 / seq_len (the study's ~4.2M tokens) */
  int zero;               /* the ZeRO stage where --zero is not a list (layout[AX_ZERO] NULL) */
  gboolean overlap_grad_reduce, overlap_param_gather; /* the same for the overlaps (docs/schedules.md, "Overlap") */
  sweep_space space;      /* what an axis left out covers */
  int top;                /* exact top-K (docs/sweep.md, "Exact top-K"): replay in order of the lower bound and stop
                           * once K layouts of a point are faster than the next bound; 0: replay every layout */
  unsigned layout_given;  /* STACK_GIVEN_* bits: which of zero and the overlaps the command gave (else each
                           * stack's) */
  GArray *folded[AXIS_N]; /* int degrees of each folded axis of workloads/axes.h (ep, etp: --ep, --etp): the list
                           * given or the one value; NULL (the other axes, or no value: 1) */
  GArray *moe_imbalance;  /* double: the values of --moe-imbalance; NULL: 1 (docs/moe.md) */
  gen_options gen;
  GArray *layout[AX_N];   /* int values (enums as ints); NULL: every valid value */
  GPtrArray *profiles;    /* profile names or files, at least one */
  GPtrArray *stacks;      /* stack names or files, at least one */
  gboolean partition_set; /* gen.partition given (else each stack's own) */
  GArray *gpus;           /* int, at least one */
  GArray *whatif[WHATIF_N]; /* double; NULL: the profile's own */
  int shard_i, shard_n;   /* this run's slice (1-based I of N); 1 of 1: all */
  guint window;           /* requests handed to the pool at once; 0: SWEEP_WINDOW (tests set a small one) */
  pool_cfg pool;
  GHashTable *trusts;     /* trust tables by stack (trust_lookup): each prediction's band and flags; NULL: none */
} sweep_spec;

/* A sweep's size, counted before anything is allocated (docs/sweep.md, "Size"): at most
 * SWEEP_MAX_LAYOUTS layouts enumerated (sharded or not: every shard enumerates the whole sweep to
 * find its rows), SWEEP_MAX_RUN_LAYOUTS rows in one run (one shard: about 5 KiB each, half a GiB in all)
 * and SWEEP_MAX_POINTS platform points; above, refused with the count and the list that shrinks it. */
#define SWEEP_MAX_LAYOUTS 100000000.0
#define SWEEP_MAX_RUN_LAYOUTS 100000
#define SWEEP_MAX_POINTS 100000.0
/* The requests a sweep hands the pool at once (but exact top-K, which orders a run's by their bound). */
#define SWEEP_WINDOW 8192
/* The largest context-parallel degree the full space takes (--space full; a larger one where listed, --cp). */
#define SWEEP_FULL_MAX_CP 8

/* The columns a shard's rows add to the canonical table (sweep_run with shard_n > 1). */
#define SWEEP_SHARD_COLUMN "shard"
#define SWEEP_ENUMERATED_COLUMN "enumerated"
#define SWEEP_ID_COLUMN "sweep" /* a hash of what the sweep is (its lists, model, batch): one value per sweep */

const char *const *sweep_columns(guint *n);
/* Enumerate, check and simulate; returns the canonical table (NULL with err on a bad profile). */
csv_table *sweep_run(const sweep_spec *s, GError **err);
/* How many layouts the sweep enumerates (every shard's), counted per axis without enumerating them
 * (docs/hardening.md); by_enumeration: by walking the enumeration without making rows (what the count
 * must equal; for tests). -1 with err on a list or a profile refused. */
double sweep_count_layouts(const sweep_spec *s, gboolean by_enumeration, GError **err);
/* Check that t is a canonical sweep table (merge's input), naming path in the error. */
gboolean sweep_check_table(const csv_table *t, const char *path, GError **err);
/* A shard's columns (t has SWEEP_SHARD_COLUMN): every column of this version, the sweep's hash among
 * them; *id (NULL: none yet) takes the first row's hash and *id_path path. */
gboolean sweep_check_shard_columns(const csv_table *t, const char *path, char **id, const char **id_path, GError **err);
/* Check row r of shard t (merge's input) trusting nothing: status in its domain, times and figures
 * finite and not negative (a step time above 0 where status is ok), and model, model_file, seq_len,
 * global_batch and vocab those of `first` (the first shard; NULL: none yet). */
gboolean sweep_check_row(const csv_table *t, guint r, const char *path, const csv_table *first, GError **err);

#endif
