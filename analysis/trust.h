/* trust -- how far to trust one prediction (docs/trust.md): the error band
 * of its step time, from the validation errors of its regime in the runs the
 * profile was calibrated on; its memory headroom and an OOM-risk flag when
 * the verdict would flip within the fragmentation margin; and flags for the
 * regimes known to be optimistic or outside the calibration data.
 *
 * The numbers come from a trust table (analysis/trust/NAME.json), written
 * by `layoutsim validate FILES --trust-out FILE` from the calibration runs.
 *
 * Owns: struct trust_table (load, save), the regimes (which flags a layout
 * carries, its band class) and the assessment of one prediction.
 * May not touch: statistics over rows (validate does them), formats.
 */
#ifndef TRUST_H
#define TRUST_H

#include <glib.h>
#include <stdio.h>

#include "simulate.h"

/* Regimes and conditions a prediction may carry (a bit each in trust_assessment.flags). */
typedef enum {
  TRUST_PP2,          /* time: pp 2 at tp <= 2, slower than modelled (docs/calibration.md) */
  TRUST_TP8_CKPT,     /* time: tp 8 with every-layer checkpointing, slower than modelled */
  TRUST_SCORES,       /* memory: unfused attention whose fp32 score block per rank is large */
  TRUST_NEAR_OOM,     /* memory: the verdict flips within the fragmentation margin */
  TRUST_OUT_MODEL,    /* outside the calibration data: model size */
  TRUST_OUT_SEQ,      /* sequence length */
  TRUST_OUT_NODES,    /* node count */
  TRUST_OUT_PLATFORM, /* another profile, or a what-if of its links */
  TRUST_OUT_SCHEDULE, /* a pipeline schedule the calibration runs did not use */
  TRUST_OUT_CKPT,     /* a partial recomputation (selective, mlp): no calibration run of either shipped table used one */
  TRUST_OUT_CP,       /* context parallelism: no calibration run had it */
  TRUST_UNCALIBRATED, /* the profile is marked "calibrated": false: datasheet figures, never measured */
  TRUST_OUT_MOE,      /* a model with experts (docs/moe.md): every calibration run was a dense model */
  TRUST_N_FLAGS
} trust_flag;

/* The step-time band classes: each has its own validation statistics. */
typedef enum { TRUST_CLASS_BASE, TRUST_CLASS_PP2, TRUST_CLASS_TP8_CKPT, TRUST_N_CLASSES } trust_class;

typedef struct trust_class_stats {
  double rows;     /* timed calibration rows of the class */
  double p90_pct;  /* 90th percentile of |predicted - measured| / measured */
  double bias_pct; /* mean of (predicted - measured) / measured */
} trust_class_stats;

typedef struct trust_table {
  char name[64];
  char comment[512];
  /* the platform of the calibration runs */
  char profile[64];
  char schedule[32];  /* the pipeline schedule of every calibration run */
  double ib_gbps, nvlink_gbps, nics_per_node;
  /* what the calibration runs covered */
  double model_params_min, model_params_max, seq_len_min, seq_len_max, nodes_min, nodes_max;
  double cp_min, cp_max; /* context-parallel degrees of the runs (optional in the file: absent, 1 and 1) */
  trust_class_stats cls[TRUST_N_CLASSES];
  /* memory: unfused attention from this fp32 score block per rank (GiB) on; of the calibration rows
   * in that regime predicted to fit and labelled, how many ran out of memory */
  double score_block_gib, scores_rows, scores_oom;
  /* the OOM-risk margin on the fragmentation (metrics.h); the base class's P90 out of sample (leave one
   * setting or model out; 0: not measured, the in-sample P90 stands); the band's growth per doubling
   * outside the data (percentage points, in quadrature per dimension): not derived from the rows
   * (validate --trust-out keeps them from the table it starts from; bench/bands.sh derives the last two) */
  double fragmentation_margin, oos_p90_pct, band_pct_per_doubling;
} trust_table;

typedef struct trust_assessment {
  guint flags;          /* 1 << trust_flag */
  trust_class cls;
  double band_pct;      /* +- step time: sqrt(base^2 + (band_pct_per_doubling x distance)^2) */
  double base_pct;      /* the class's P90, scaled by the table's out-of-sample / in-sample ratio */
  double widening;      /* band_pct / base_pct (1 inside the data) */
  double distance;      /* the dimensions outside, in doublings, root-sum-square over the dimensions (and,
                         * for another or an uncalibrated machine, the machine itself): docs/trust.md */
  double headroom_gib;  /* capacity - peak (negative: over) */
  /* what the flags were decided on */
  double model_params, score_block_gib;
  int seq_len, nodes, schedule, cp;
  int pp; /* the layout's pipeline depth: at pp 1 every schedule runs the same program, and none is outside */
} trust_assessment;

gboolean trust_load_file(const char *path, trust_table *out, GError **err);
/* analysis/trust/NAME.json, or a path (a '/' or ".json"). */
gboolean trust_load_named(const char *name, trust_table *out, GError **err);
/* The trust table of a stack (analysis/trust/STACK.json), through cache (a table of trust_cache_new):
 * *out NULL when the stack has none (its predictions carry no band); FALSE with err when its file
 * does not load. */
GHashTable *trust_cache_new(void);
gboolean trust_lookup(GHashTable *cache, const char *stack, const trust_table **out, GError **err);
/* The table as JSON text on f (its write errors are f's: lsim_outfile checks them). */
void trust_put(const trust_table *t, FILE *f);

const char *trust_flag_name(trust_flag f);
const char *trust_class_name(trust_class c);
/* The regime flags of a request and its band class (no memory or coverage flags). */
guint trust_regime_flags(const trust_table *t, const sim_request *rq);
trust_class trust_class_of(guint flags);
/* The whole assessment of a prediction of rq: peak and capacity in GiB, the fragmentation limit
 * (metrics.h; the prediction's). */
void trust_assess(const trust_table *t, const sim_request *rq, double peak_gib, double capacity_gib,
                  double fragmentation_limit, trust_assessment *out);
/* The assessment of a prediction of rq by its stack's table (trust_lookup through cache), or by fallback
 * where the stack has none (may be NULL). FALSE, out untouched, when there is neither or the stack's
 * table does not load: the prediction then goes without a band. */
gboolean trust_assess_by_stack(GHashTable *cache, const trust_table *fallback, const sim_request *rq, double peak_gib,
                               double capacity_gib, double fragmentation_limit, trust_assessment *out);
/* "pp2-cost;near-oom" (empty when no flag). Caller frees. */
char *trust_flags_string(guint flags);
/* One warning line per flag, for people (no trailing newline). Caller frees the array (g_strfreev). */
char **trust_warnings(const trust_table *t, const sim_request *rq, const trust_assessment *a,
                      double fragmentation_limit);

#endif
