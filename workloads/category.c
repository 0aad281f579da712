/* category -- see category.h. */
#include "category.h"

#include <string.h>

#include "graph.h"

static const tl_cat_info TABLE[TL_N] = {
    [TL_FORWARD] = {"forward", "forward", "forward", "t_forward_s", "fwd_s", "#4e79a7", "0.2 0.5 0.9", TL_STREAM_COMPUTE, .compute = TRUE},
    [TL_BACKWARD] = {"backward", "backward", "backward", "t_backward_s", "bwd_s", "#59a14f", "0.1 0.7 0.3", TL_STREAM_COMPUTE, .compute = TRUE},
    [TL_RECOMPUTE] = {"recompute", "recompute", "recompute", "t_recompute_s", "recomp_s", "#f28e2b", "0.9 0.6 0.1", TL_STREAM_COMPUTE, .compute = TRUE},
    [TL_TP_COMM] = {"tp-comm", "tp-comm", "tp-comm", "t_tp_comm_s", "tp_s", "#e15759", "0.8 0.2 0.2", TL_STREAM_TP},
    [TL_CP_COMM] = {"cp-comm", "cp-comm", "cp-comm", "t_cp_comm_s", "cp_s", "#9c755f", "0.6 0.45 0.35", TL_STREAM_CP,
                    .when_present = TRUE, .late_column = TRUE},
    [TL_EP_COMM] = {"ep-comm", "ep-comm", "ep-comm", "t_ep_comm_s", "ep_s", "#ff9da7", "1.0 0.6 0.7", TL_STREAM_EP,
                    .when_present = TRUE, .late_column = TRUE},
    [TL_PP_WAIT] = {"pp-wait", "pp-wait (bubble)", "bubble", "t_pp_wait_s", "pp_s", "#c9c9c9", "0.6 0.6 0.6", TL_STREAM_PP},
    [TL_DP_COMM] = {"dp-comm", "dp-comm", "dp-comm", "t_dp_comm_s", "dp_s", "#b07aa1", "0.6 0.2 0.7", TL_STREAM_DP},
    [TL_OPTIMIZER] = {"optimizer", "optimizer", "optimizer", "t_optimizer_s", "opt_s", "#edc948", "0.9 0.9 0.2", TL_STREAM_COMPUTE},
    [TL_IDLE] = {"idle", "idle", "idle", "t_idle_s", "idle_s", "#f4f4f4", "1.0 1.0 1.0", TL_STREAM_COMPUTE},
};

static const char *const STREAM_NAMES[TL_STREAM_N] = {"compute", "tp-comm", "cp-comm", "pp-comm", "dp-comm", "ep-comm"};

const tl_cat_info *tl_cat_info_of(tl_cat c) { return &TABLE[(unsigned)c < TL_N ? c : TL_IDLE]; }

const char *tl_cat_name(tl_cat c) { return tl_cat_info_of(c)->name; }

int tl_cat_from_name(const char *name)
{
  for (int c = 0; c < TL_N; c++)
    if (name && !strcmp(name, TABLE[c].name)) return c;
  return -1;
}

tl_stream tl_stream_of(tl_cat c) { return tl_cat_info_of(c)->stream; }

const char *tl_stream_name(tl_stream s) { return STREAM_NAMES[(unsigned)s < TL_STREAM_N ? s : TL_STREAM_COMPUTE]; }

tl_cat tl_category(const graph *g, const graph_event *e)
{
  if (e->kind == EV_SEND || e->kind == EV_RECV)
    return (e->variant & GRAPH_P2P_LAYER) ? tc_info_of(TC_LAYER_P2P)->layer_category : TL_PP_WAIT;
  if (e->kind == EV_COLLECTIVE) {
    const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
    /* e.g. the grad-norm all-reduce over the pipeline group: it waits for the pipeline to drain */
    if (tc_info_of(gr->tclass)->count == TC_COUNT_PIPELINE) return TL_PP_WAIT;
    return e->phase == PH_DP || e->phase == PH_OPTIMIZER ? TL_DP_COMM : tc_info_of(gr->tclass)->layer_category;
  }
  switch (e->phase) {
  case PH_FORWARD: return TL_FORWARD;
  case PH_BACKWARD: return TL_BACKWARD;
  case PH_RECOMPUTE: return TL_RECOMPUTE;
  default: return TL_OPTIMIZER;
  }
}
