/* generate -- see generate.h. The graph-level entry: the ranks to emit (symmetry, mirrors), the groups,
 * the meta, and the per-stage event counts; the emitter is emit.h's (emit.c, layer_pass.c, grad_sync.c,
 * optimizer.c, stage_driver.c, gen_groups.c; sizes, FLOPs and bytes as emit.c says).
 */
#include "emit.h"

gen_code gen_default_code(void)
{
  return (gen_code){.mlp_in_gemms = 2, .fused_norm = FALSE, .grad_reduce_bytes = FP32, .fused_softmax_max_seq = 4096};
}

gen_options gen_default_options(void)
{
  gen_options o = {.partition = PARTITION_AUTO, .code = gen_default_code(), .symmetry = TRUE, .gpus_per_node = 8};
  return o;
}

gboolean gen_mirrors_active_in_step(const gen_options *o, const layout *l) { (void)l; return o->mirrors_active_in_step; }

static void emit_rank(graph *g, const model *m, const layout *l, const gen_code *code, const partition *part,
                      const gen_groups *gs, int rank)
{
  const mesh *me = &gs->me;
  int s = mesh_group_position(me, rank, AXIS_BIT(AXIS_PP));
  graph_program *p = graph_program_of(g, rank);
  mem_ctx mc;
  mem_ctx_init(&mc, m, l);
  mc.code = emit_code_of(l, code);
  gboolean ring = l->cp > 1;
  emit x = {.m = m, .l = l, .code = code, .part = part, .ev = p->events, .prog = p, .wait_for = -1, .last_main = -1,
            .last_side = -1, .tp_pending = -1, .before_gemm = -1, .last_gemm = -1, .stage = s, .tp_group = gen_group_of(gs, AXIS_TP, rank), .dp_group = gen_group_of(gs, AXIS_DP, rank),
            .pp_group = gen_group_of(gs, AXIS_PP, rank), .ep_group = gen_group_of(gs, AXIS_EP, rank),
            .etp_group = gen_group_of(gs, AXIS_ETP, rank), .edp_group = gen_group_edp_of(gs, rank),
            .cp_group = gen_group_of(gs, AXIS_CP, rank),
            .up_rank = mesh_step(me, rank, AXIS_PP, -1), .down_rank = mesh_step(me, rank, AXIS_PP, 1),
            .cp_next = ring ? mesh_step(me, rank, AXIS_CP, 1) : -1,
            .cp_prev = ring ? mesh_step(me, rank, AXIS_CP, -1) : -1, .T = layout_tokens_per_rank(l)};
  x.Tl = l->sp ? x.T / l->tp : x.T;
  emit_tables(&x);
  double stage_params = mem_stage_params(m, l, part, s);
  x.stage_params = stage_params;
  x.param_gathers = g_array_new(FALSE, FALSE, sizeof(int));
  x.gathers_from = g_new0(int, l->virtual_stages + 1);
  emit_stage(&x, &mc, stage_params);
  g_array_free(x.param_gathers, TRUE);
  g_free(x.gathers_from);
  mem_states st;
  mem_model_states(m, l, code, part, s, &st);
  p->mem_params_bytes = st.params_bytes;
  p->mem_grads_bytes = st.grads_bytes;
  p->mem_optimizer_bytes = st.optimizer_bytes;
  p->mem_buffers_bytes = st.buffers_bytes;
  p->mem_static_bytes = st.params_bytes + st.grads_bytes + st.optimizer_bytes + st.buffers_bytes;
}

void gen_stage_events(const model *m, const layout *l, const gen_code *code, const partition *part, int stage,
                      gen_stage_size *out)
{
  mem_ctx mc;
  mem_ctx_init(&mc, m, l);
  mc.code = emit_code_of(l, code);
  /* the groups and neighbours a rank of the stage has, as emit_rank's ids: only whether they exist counts */
  emit x = {.m = m, .l = l, .code = code, .part = part, .stage = stage, .wait_for = -1, .last_main = -1, .last_side = -1,
            .tp_pending = -1, .before_gemm = -1, .last_gemm = -1,
            .stage_params = mem_stage_params(m, l, part, stage), .tp_group = gen_group_exists(l, AXIS_TP),
            .dp_group = gen_group_exists(l, AXIS_DP), .pp_group = gen_group_exists(l, AXIS_PP),
            .ep_group = gen_group_exists(l, AXIS_EP), .etp_group = gen_group_exists(l, AXIS_ETP),
            .cp_group = gen_group_exists(l, AXIS_CP),
            .edp_group = model_has_experts(m) ? gen_group_edp_exists(l) : -1, .up_rank = 0, .down_rank = 0,
            .cp_next = l->cp > 1 ? 0 : -1, .cp_prev = l->cp > 1 ? 0 : -1, .T = layout_tokens_per_rank(l)};
  x.Tl = l->sp ? x.T / l->tp : x.T;
  emit_tables(&x);
  /* the events of each pass (kind, chunk), counted once; then the schedule's instructions add them up */
  int V = l->virtual_stages;
  g_autofree double *per_pass = g_new(double, SCHED_N_KINDS * V);
  for (int k = 0; k < SCHED_N_KINDS * V; k++) per_pass[k] = -1;
  g_autoptr(GArray) instrs = sched_instructions(l->schedule, stage, l->pp, V, l->grad_accum);
  g_autofree int *first_fwd = g_new(int, V), *final_bwd = g_new(int, V);
  stage_first_and_final(instrs, V, first_fwd, final_bwd);
  double compute = 0, p2p = 0, final_extra = 0;
  for (guint i = 0; i < instrs->len; i++) {
    const sched_instr *in = &g_array_index(instrs, sched_instr, i);
    sched_kind k = in->kind;
    if (k == SCHED_RECV_ACT || k == SCHED_SEND_ACT || k == SCHED_RECV_GRAD || k == SCHED_SEND_GRAD) p2p++;
    if ((k == SCHED_RECV_ACT || k == SCHED_RECV_GRAD) && stage_pipe_scatters(&x)) p2p++; /* its tp all-gather */
    if (k != SCHED_FORWARD && k != SCHED_BACKWARD && k != SCHED_BACKWARD_B && k != SCHED_BACKWARD_W) continue;
    double *n = &per_pass[k * V + in->chunk];
    if (*n < 0) {
      stage_at_chunk(&x, in->chunk);
      double before = x.counted;
      emit_pass(&x, &mc, k, FALSE, FALSE);
      *n = x.counted - before;
    }
    compute += *n;
    if ((int)i == final_bwd[in->chunk] && l->overlap_grad_reduce && l->zero < 2 && layout_dp_cp(l) > 1) {
      stage_at_chunk(&x, in->chunk); /* the chunk's buckets, once a step */
      double before = x.counted, plain = *n;
      emit_pass(&x, &mc, k, FALSE, TRUE);
      final_extra += x.counted - before - plain;
    }
  }
  x.counted = 0;
  x.bucket_counted = final_extra;
  grad_sync_param_gather_prologue(&x);
  optimizer_step(&x, mem_stage_params(m, l, part, stage));
  x.counted += final_extra;
  int mbs = MAX(l->grad_accum, 1);
  out->micro_batch_events = compute / mbs + p2p / mbs;
  out->step_events = x.counted;
  out->bucket_events = x.bucket_counted;
  out->events = compute + p2p + x.counted;
}

/* Index of the first event of the optimizer step (where mirrors become active). */
static int optimizer_start(const graph_program *p)
{
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->phase == PH_DP || e->phase == PH_OPTIMIZER) return (int)i;
  }
  return (int)p->events->len;
}

static void set_meta(graph *g, const model *m, const layout *l, const gen_options *o, const partition *part)
{
  graph_meta *gm = &g->meta;
  g_strlcpy(gm->partition, partition_method_name(part->method), sizeof gm->partition);
  g_strlcpy(gm->model, m->name, sizeof gm->model);
  GString *lay = g_string_new(NULL);
  g_string_printf(lay, "gpus=%d tp=%d pp=%d dp=%d sp=%d micro_batch=%d global_batch=%d seq_len=%d "
                  "checkpointing=%s attention_kernel=%s zero1=%d", l->gpus, l->tp, l->pp, l->dp, l->sp, l->micro_batch,
                  l->global_batch, l->seq_len, layout_ckpt_name(l->ckpt), layout_attn_name(l->attn), l->zero >= 1);
  if (l->zero > 1 || l->overlap_grad_reduce || l->overlap_param_gather) /* the study's string is unchanged */
    g_string_append_printf(lay, " zero=%d overlap_grad_reduce=%d overlap_param_gather=%d", l->zero,
                           l->overlap_grad_reduce, l->overlap_param_gather);
  if (l->cp > 1) g_string_append_printf(lay, " cp=%d", l->cp); /* cp 1 is the layout string's silent default */
  layout_enums_string(l, lay); /* the enumerations (layout.h layout_enum): cp_comm_type=a2a; p2p the silent default */
  if (l->schedule != 0 || l->virtual_stages != 1) /* the study's 1F1B is the layout string's silent default */
    g_string_append_printf(lay, " schedule=%s virtual_stages=%d", sched_name(l->schedule), l->virtual_stages);
  if (l->pipeline_layout[0]) /* the stages' layers as placed (Megatron's string, up to 255 bytes of its own) */
    g_string_append_printf(lay, " pipeline_layout='%s'", l->pipeline_layout);
  if (l->precision != PREC_BF16) g_string_append_printf(lay, " precision=%s", precision_name(l->precision));
  gsize nf;
  const layout_field *fs = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++) /* the switches on (layout.h LAYOUT_SHOW_STRING, LAYOUT_SHOW_META) */
    if (fs[i].shows && layout_switch_on(l, &fs[i])) {
      if (fs[i].shows & LAYOUT_SHOW_STRING) g_string_append_printf(lay, " %s=1", fs[i].name);
      if (fs[i].shows & LAYOUT_SHOW_META) *(int *)((char *)gm + fs[i].meta_offset) = 1;
    }
  char scope[LAYOUT_CG_SCOPE_NAME_MAX]; /* the partial CUDA graphs, said when any (their events are marked) */
  if (l->cuda_graph_scope) g_string_append_printf(lay, " cuda_graph_scope=%s", layout_cg_scope_name(l->cuda_graph_scope, scope));
  if (l->ep > 1 || l->etp > 1 || l->moe_imbalance != 1) /* expert parallelism: silent without it; last, after the */
    g_string_append_printf(lay, " ep=%d etp=%d moe_imbalance=%g", l->ep, l->etp, l->moe_imbalance); /* switches */
  graph_meta_set_text(g, "layout", lay->str); /* whole, however long (it was cut at 255 bytes) */
  g_string_free(lay, TRUE);
  g_strlcpy(gm->precision, precision_name(l->precision), sizeof gm->precision);
  gm->gpus_per_node = o->gpus_per_node;
  if (l->moe_flex_dispatcher && l->ep > 1) { /* the routing the ep all-to-alls deduplicate by (sim/coll_alltoall_flex.c) */
    gm->flex_experts = m->moe.experts;
    gm->flex_top_k = m->moe.top_k;
  }
  gm->tokens_per_step = (double)l->global_batch * l->seq_len;
  gm->model_flops_per_step = model_flops_per_token(m, l->seq_len) * l->global_batch * l->seq_len;
  gm->pp = l->pp;
  gm->ranks_per_stage = (int)axis_product(l, AXIS_ALL & ~axis_mask_stage()); /* every axis' but the stage's */
}

graph *gen_graph(const model *m, const layout *l, const gen_options *o, GError **err)
{
  partition part;
  if (!partition_make_for(&part, m, l, o->partition, err)) return NULL;
  graph *g = graph_new(l->gpus);
  /* a dense model's graph lists the dense ops only */
  int labels = model_has_experts(m) || model_has_mla(m) || m->mtp_layers ? BL_N : BL_N_DENSE;
  for (int i = 0; i < labels; i++) { /* the block's labels are the graph's op ids (BL_COMM = GRAPH_OP_COMM) */
    int id = graph_op_id(g, block_label_name((block_label)i));
    g_assert(id == i);
  }
  gen_groups gs;
  gen_groups_make(g, l, model_has_experts(m), &gs);
  set_meta(g, m, l, o, &part);
  gboolean symmetry = o->symmetry;
  /* symmetry: one explicit program per coordinates along the axes that are not mirrored (stage, cp index)
   * -- the cp ring's ranks talk to each other inside a layer -- and mirrors for the ranks along the mirrored
   * axes (the other replicas and tensor-parallel ranks), each of its source with 0 along them */
  const mesh *me = &gs.me;
  unsigned mirrored = axis_mask_mirrored();
  guint reserve = 0; /* the events of the rank before: the next has about as many, its array then grows in one go */
  for (int r = 0; r < me->world; r++)
    if (!symmetry || mesh_zeroed(me, r, mirrored) == r) {
      GArray *ev = graph_program_of(g, r)->events;
      guint n = ev->len;
      if (reserve > n) g_array_set_size(g_array_set_size(ev, reserve), n);
      emit_rank(g, m, l, &o->code, &part, &gs, r);
      reserve = ev->len;
    }
  if (symmetry)
    for (int r = 0; r < me->world; r++) {
      int src = mesh_zeroed(me, r, mirrored);
      if (src == r) continue;
      graph_program *sp = graph_program_of(g, src);
      int from = gen_mirrors_active_in_step(o, l) ? optimizer_start(sp) : (int)sp->events->len;
      graph_make_mirror(g, r, src, from);
      graph_program *mp = graph_program_of(g, r);
      mp->mem_params_bytes = sp->mem_params_bytes;
      mp->mem_grads_bytes = sp->mem_grads_bytes;
      mp->mem_optimizer_bytes = sp->mem_optimizer_bytes;
      mp->mem_buffers_bytes = sp->mem_buffers_bytes;
      mp->mem_static_bytes = sp->mem_static_bytes;
      for (int a = 0; a < AXIS_N; a++) /* the source's groups stand for the mirror's */
        if (gen_group_of(&gs, a, src) >= 0) graph_map_group(g, r, gen_group_of(&gs, a, src), gen_group_of(&gs, a, r));
      if (gen_group_edp_of(&gs, src) >= 0) graph_map_group(g, r, gen_group_edp_of(&gs, src), gen_group_edp_of(&gs, r));
    }
  gen_groups_clear(&gs);
  partition_clear(&part);
  return g;
}
