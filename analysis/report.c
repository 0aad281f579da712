/* report -- see report.h. */
#include "report.h"

#include "workloads/precision.h"

#include <string.h>

#include "energy.h"
#include "platforms/fabric.h"
#include "platforms/whatif.h"

#include "workloads/model_params.h"
#include "workloads/schedule.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *gpus_word(int n) { return n == 1 ? "GPU" : "GPUs"; }

/* Why HFU is below MFU without recompute, on one line: the PaLM formula's 6N holds the input embedding
 * (6Vh per token) and the norm weights (6(2L+1)h), which no kernel executes (a lookup, elementwise
 * scales); attention is counted alike in both (docs/metrics.md). */
static void hfu_note(FILE *f, const sim_request *rq)
{
  fputs("  (HFU < MFU: MFU's 6N counts the embedding lookup and the norm weights", f);
  if (rq) {
    const model *m = &rq->m;
    double idle = 6.0 * m->vocab * m->hidden + 6.0 * (2.0 * m->layers + 1) * m->hidden;
    fprintf(f, ", %.1f%% of its FLOPs here", 100 * idle / model_flops_per_token(m, rq->l.seq_len));
  }
  fputs(", which no kernel executes)\n", f);
}

void report_params_line(FILE *f, const sim_request *rq)
{
  const model *m = &rq->m;
  fprintf(f, "parameters: %.3f B", model_params(m) / 1e9);
  if (model_has_experts(m)) fprintf(f, " (%.3f B active: top-%d of %d experts)", model_params_active(m) / 1e9, m->moe.top_k,
                                     m->moe.experts);
  fprintf(f, ", %.3f B per GPU (largest stage / tp %d); vocab %d", model_params_per_gpu(m, &rq->l, rq->gen.partition) / 1e9,
          rq->l.tp, m->vocab);
  if (m->vocab_unpadded)
    fprintf(f, " (%d padded by %s's code to a multiple of %g x tp)", m->vocab_unpadded, rq->prof.stack.name,
            rq->prof.stack.vocab_pad_multiple);
  fputc('\n', f);
}

double report_kwh_per_mtok(const metrics *m)
{
  double tokens = m->tokens_per_s * m->step_time_s;
  return tokens > 0 ? energy_kwh_per_mtok(m->energy_j, tokens) : -1;
}

static cJSON *breakdown_json(const double sec[TL_N])
{
  cJSON *b = cJSON_CreateObject();
  double compute_s = 0;
  for (int c = 0; c < TL_N; c++)
    if (tl_cat_info_of((tl_cat)c)->compute) compute_s += sec[c];
  cJSON_AddNumberToObject(b, "compute_s", compute_s);
  for (int c = 0; c < TL_N; c++) {
    g_autofree char *key = g_strdup_printf("%s_s", tl_cat_name((tl_cat)c));
    g_strdelimit(key, "-", '_');
    cJSON_AddNumberToObject(b, key, sec[c]);
  }
  return b;
}

static cJSON *layout_json(const sim_outcome *o, const sim_request *rq)
{
  cJSON *j = cJSON_CreateObject();
  if (!rq) {
    const char *v = (o->g->meta.layout[0] ? o->g->meta.layout : NULL);
    const char *mname = (o->g->meta.model[0] ? o->g->meta.model : NULL);
    cJSON_AddStringToObject(j, "model", mname ? mname : "unknown");
    cJSON_AddStringToObject(j, "description", v ? v : "graph file");
    cJSON_AddNumberToObject(j, "gpus", o->g->world_size);
    return j;
  }
  const layout *l = &rq->l;
  cJSON_AddStringToObject(j, "model", rq->m.name);
  cJSON_AddNumberToObject(j, "vocab", rq->m.vocab); /* as the stack's code embeds it (padded) */
  if (rq->m.vocab_unpadded) cJSON_AddNumberToObject(j, "vocab_unpadded", rq->m.vocab_unpadded);
  cJSON_AddNumberToObject(j, "params", model_params(&rq->m));
  if (model_has_experts(&rq->m)) cJSON_AddNumberToObject(j, "params_active", model_params_active(&rq->m));
  cJSON_AddNumberToObject(j, "params_per_gpu", model_params_per_gpu(&rq->m, l, rq->gen.partition));
  cJSON_AddNumberToObject(j, "gpus", l->gpus);
  cJSON_AddNumberToObject(j, "dp", l->dp);
  cJSON_AddNumberToObject(j, "tp", l->tp);
  cJSON_AddNumberToObject(j, "pp", l->pp);
  cJSON_AddNumberToObject(j, "cp", l->cp);
  gsize nf;
  const layout_field *fs = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++) /* the enumerations (layout.h layout_enum, LAYOUT_SHOW_REPORT), when said */
    if (fs[i].en && (fs[i].en->shows & LAYOUT_SHOW_REPORT) && layout_enum_said(l, &fs[i]))
      cJSON_AddStringToObject(j, fs[i].en->key, layout_enum_name(&fs[i], layout_enum_value(l, &fs[i])));
  cJSON_AddBoolToObject(j, "sp", l->sp);
  cJSON_AddNumberToObject(j, "micro_batch", l->micro_batch);
  cJSON_AddNumberToObject(j, "global_batch", l->global_batch);
  cJSON_AddNumberToObject(j, "seq_len", l->seq_len);
  cJSON_AddNumberToObject(j, "grad_accum", l->grad_accum);
  cJSON_AddStringToObject(j, "checkpointing", layout_ckpt_name(l->ckpt));
  cJSON_AddStringToObject(j, "attention_kernel", layout_attn_name(l->attn));
  cJSON_AddBoolToObject(j, "zero1", l->zero >= 1); /* optimizer states sharded (the older key) */
  cJSON_AddNumberToObject(j, "zero", l->zero);
  cJSON_AddBoolToObject(j, "overlap_grad_reduce", l->overlap_grad_reduce);
  cJSON_AddBoolToObject(j, "overlap_param_gather", l->overlap_param_gather);
  cJSON_AddStringToObject(j, "precision", precision_name(l->precision));
  const char *used = (o->g->meta.partition[0] ? o->g->meta.partition : NULL); /* auto resolved by the generator */
  cJSON_AddStringToObject(j, "partition", used ? used : partition_method_name(rq->gen.partition));
  if (l->pipeline_layout[0]) cJSON_AddStringToObject(j, "pipeline_layout", l->pipeline_layout);
  for (gsize i = 0; i < nf; i++) /* the switches (layout.h LAYOUT_SHOW_REPORT): said only when on */
    if ((fs[i].shows & LAYOUT_SHOW_REPORT) && layout_switch_on(l, &fs[i])) cJSON_AddBoolToObject(j, fs[i].name, TRUE);
  char scope[LAYOUT_CG_SCOPE_NAME_MAX];
  if (l->cuda_graph_scope) /* the partial CUDA graphs (docs/moe.md): said when any */
    cJSON_AddStringToObject(j, "cuda_graph_scope", layout_cg_scope_name(l->cuda_graph_scope, scope));
  cJSON_AddStringToObject(j, "schedule", sched_name(l->schedule));
  cJSON_AddNumberToObject(j, "virtual_stages", l->virtual_stages);
  return j;
}

static cJSON *platform_json(const sim_outcome *o, const gpu_profile *p)
{
  cJSON *j = cJSON_CreateObject();
  int nodes = (o->g->world_size + p->gpus_per_node - 1) / p->gpus_per_node;
  cJSON_AddStringToObject(j, "profile", p->name);
  cJSON_AddStringToObject(j, "stack", p->stack.name);
  if (p->stack.set[0]) cJSON_AddStringToObject(j, "stack_set", p->stack.set); /* said only where keys were set */
  cJSON_AddNumberToObject(j, "nodes", nodes);
  cJSON_AddNumberToObject(j, "gpus_per_node", p->gpus_per_node);
  cJSON_AddNumberToObject(j, "nics_per_node", p->nics_per_node);
  cJSON_AddNumberToObject(j, "gpus_per_domain", profile_gpus_per_domain(p)); /* the NVLink domain (docs/topology.md) */
  cJSON_AddNumberToObject(j, "peak_tflops", p->peak_flops / 1e12);
  cJSON_AddNumberToObject(j, "nvlink_gbps", p->nvlink_bytes_per_s * 8 / 1e9);
  cJSON_AddNumberToObject(j, "ib_gbps", p->ib_bytes_per_s * 8 / 1e9);
  cJSON_AddNumberToObject(j, "memory_gib", p->memory_gib);
  cJSON_AddStringToObject(j, "fabric", fabric_name(p->fabric));
  cJSON_AddNumberToObject(j, "leaf_nodes", p->leaf_nodes);
  cJSON_AddNumberToObject(j, "oversubscription", p->oversubscription);
  return j;
}

/* Memory of the rank at the peak of the stage that peaks highest (GiB). */
static void memory_fields(cJSON *j, const stage_metrics *s)
{
  cJSON_AddNumberToObject(j, "params", s->mem_params_bytes / GIB);
  cJSON_AddNumberToObject(j, "grads", s->mem_grads_bytes / GIB);
  cJSON_AddNumberToObject(j, "optimizer", s->mem_optimizer_bytes / GIB);
  cJSON_AddNumberToObject(j, "activations_peak", s->mem_activation_peak_bytes / GIB);
  cJSON_AddNumberToObject(j, "buffers", s->mem_buffers_bytes / GIB);
  cJSON_AddNumberToObject(j, "overhead", s->mem_overhead_bytes / GIB);
  cJSON_AddNumberToObject(j, "peak_gib", s->mem_peak_bytes / GIB);
}

static cJSON *memory_json(const metrics *m)
{
  cJSON *j = cJSON_CreateObject();
  memory_fields(j, &m->stage[m->mem_peak_stage]);
  cJSON_AddNumberToObject(j, "capacity_gib", m->mem_capacity_bytes / GIB);
  cJSON_AddNumberToObject(j, "stage_of_peak", m->mem_peak_stage);
  return j;
}

/* The assessment of the outcome of rq (FALSE without a request or a table). */
static gboolean assess(const sim_outcome *o, const sim_request *rq, const trust_table *trust, trust_assessment *a)
{
  if (!rq || !trust) return FALSE;
  const metrics *m = o->met;
  trust_assess(trust, rq, m->mem_peak_bytes / GIB, m->mem_capacity_bytes / GIB, m->mem_fragmentation_limit, a);
  return TRUE;
}

static cJSON *trust_json(const trust_assessment *a, const trust_table *t, const sim_request *rq, const metrics *m)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "table", t->name);
  cJSON_AddNumberToObject(j, "band_pct", a->band_pct);
  cJSON_AddStringToObject(j, "band_class", trust_class_name(a->cls));
  cJSON_AddNumberToObject(j, "headroom_gib", a->headroom_gib);
  cJSON_AddBoolToObject(j, "oom_risk", (a->flags & (1u << TRUST_NEAR_OOM)) != 0);
  cJSON *flags = cJSON_AddArrayToObject(j, "flags");
  for (int i = 0; i < TRUST_N_FLAGS; i++)
    if (a->flags & (1u << i)) cJSON_AddItemToArray(flags, cJSON_CreateString(trust_flag_name((trust_flag)i)));
  g_auto(GStrv) w = trust_warnings(t, rq, a, m->mem_fragmentation_limit);
  cJSON *warn = cJSON_AddArrayToObject(j, "warnings");
  for (char **p = w; *p; p++) cJSON_AddItemToArray(warn, cJSON_CreateString(*p));
  return j;
}

cJSON *report_json(const sim_outcome *o, const sim_request *rq, const gpu_profile *prof, const trust_table *trust)
{
  const metrics *m = o->met;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "status", m->oom ? "oom" : "ok");
  cJSON_AddNumberToObject(j, "step_time_s", m->step_time_s);
  if (o->res && o->res->coll_algos) cJSON_AddStringToObject(j, "collective_algorithms", o->res->coll_algos);
  if (m->tokens_per_s >= 0) cJSON_AddNumberToObject(j, "tokens_per_s", m->tokens_per_s);
  else cJSON_AddNullToObject(j, "tokens_per_s");
  if (m->mfu >= 0) cJSON_AddNumberToObject(j, "mfu", m->mfu);
  else cJSON_AddNullToObject(j, "mfu");
  if (m->hfu >= 0) cJSON_AddNumberToObject(j, "hfu", m->hfu);
  else cJSON_AddNullToObject(j, "hfu"); /* a step of zero time (a graph without work) */
  cJSON_AddNumberToObject(j, "bubble_fraction", m->bubble_fraction);
  cJSON *stages = cJSON_AddArrayToObject(j, "stages");
  for (int s = 0; s < m->stages; s++) {
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "stage", s);
    cJSON_AddNumberToObject(st, "bubble_fraction", m->stage[s].bubble_fraction);
    cJSON_AddNumberToObject(st, "peak_gib", m->stage[s].mem_peak_bytes / GIB);
    cJSON *mem = cJSON_AddObjectToObject(st, "memory");
    memory_fields(mem, &m->stage[s]);
    cJSON_AddItemToObject(st, "breakdown", breakdown_json(m->stage[s].seconds));
    cJSON_AddItemToArray(stages, st);
  }
  cJSON_AddItemToObject(j, "breakdown", breakdown_json(m->seconds));
  cJSON *ranks = cJSON_AddArrayToObject(j, "ranks");
  for (int r = 0; r < m->world_size; r++) {
    cJSON *rk = cJSON_CreateObject();
    cJSON_AddNumberToObject(rk, "rank", r);
    cJSON_AddNumberToObject(rk, "stage", tl_stage_of(&o->tl, r));
    cJSON_AddItemToObject(rk, "breakdown", breakdown_json(&m->rank_seconds[(gsize)r * TL_N]));
    cJSON_AddItemToArray(ranks, rk);
  }
  cJSON_AddItemToObject(j, "memory", memory_json(m));
  cJSON_AddItemToObject(j, "layout", layout_json(o, rq));
  cJSON_AddItemToObject(j, "platform", platform_json(o, prof));
  cJSON *e = cJSON_AddObjectToObject(j, "energy");
  cJSON_AddNumberToObject(e, "step_j", m->energy_j);
  cJSON_AddNumberToObject(e, "gpus_j", m->energy_gpu_j);
  cJSON_AddNumberToObject(e, "nodes_j", m->energy_node_j);
  if (m->tokens_per_s > 0) cJSON_AddNumberToObject(e, "kwh_per_million_tokens", report_kwh_per_mtok(m));
  static const char *const CLS[EN_N] = {"compute_s", "memory_s", "comm_s", "idle_s"};
  cJSON *es = cJSON_AddObjectToObject(e, "gpu_seconds");
  for (int c = 0; c < EN_N; c++) cJSON_AddNumberToObject(es, CLS[c], m->energy_seconds[c]);
  trust_assessment a;
  if (assess(o, rq, trust, &a)) cJSON_AddItemToObject(j, "trust", trust_json(&a, trust, rq, m));
  return j;
}

void report_text(FILE *f, const sim_outcome *o, const sim_request *rq, const gpu_profile *prof,
                 const trust_table *trust)
{
  const metrics *m = o->met;
  trust_assessment a;
  gboolean assessed = assess(o, rq, trust, &a);
  if (rq) {
    const layout *l = &rq->l;
    const char *part = (o->g->meta.partition[0] ? o->g->meta.partition : NULL);
    fprintf(f, "%s, seq %d, global batch %d, %d %s (%s): dp %d, tp %d, pp %d, sp %s, micro-batch %d, %s, %s",
            rq->m.name, l->seq_len, l->global_batch, l->gpus, gpus_word(l->gpus), prof->name, l->dp, l->tp, l->pp,
            l->sp ? "on" : "off",
            l->micro_batch, layout_ckpt_name(l->ckpt), layout_attn_name(l->attn));
    if (l->zero != 1) fprintf(f, ", zero %d", l->zero); /* ZeRO-1, the study's and nemo's, goes unsaid */
    if (l->overlap_grad_reduce || l->overlap_param_gather) /* off, the study's, goes unsaid */
      fprintf(f, ", overlapped %s", l->overlap_grad_reduce && l->overlap_param_gather ? "grad reduce and param gather"
                                    : l->overlap_grad_reduce                          ? "grad reduce"
                                                                                      : "param gather");
    if (l->precision != PREC_BF16) /* bf16 goes unsaid, as the study's runs; FP8 never (docs/precision.md) */
      fprintf(f, ", %s linear layers", precision_name(l->precision));
    if (l->cp > 1) fprintf(f, ", cp %d%s", l->cp, layout_cp_a2a(l) ? " a2a" : ""); /* cp 1 goes unsaid; p2p too */
    if (l->ep > 1 || l->etp > 1) /* expert parallelism: unsaid without it (docs/moe.md) */
      fprintf(f, ", ep %d, etp %d, edp %d, imbalance %g", l->ep, l->etp, l->tp * l->cp * l->dp / (l->ep * l->etp),
              l->moe_imbalance);
    else if (l->moe_imbalance != 1) /* at ep 1 too it scales the expert GEMMs: said where it is not 1 */
      fprintf(f, ", imbalance %g", l->moe_imbalance);
    if ((l->ep > 1 || l->etp > 1 || l->moe_imbalance != 1) && layout_moe_load(l, &rq->m) < l->moe_imbalance) /* capped */
      fprintf(f, " capped at capacity %g", layout_moe_load(l, &rq->m));
    if (l->pp > 1 && l->pipeline_layout[0]) fprintf(f, ", pipeline layout '%s'", l->pipeline_layout);
    else if (l->pp > 1) fprintf(f, ", %s partition", part ? part : partition_method_name(rq->gen.partition));
    if (l->pp > 1 && rq->gen.partition == PARTITION_AUTO && part && !strcmp(part, "uniform"))
      fprintf(f, " (balanced would leave a stage empty)");
    if (l->schedule != 0) fprintf(f, ", %s schedule", sched_name(l->schedule)); /* the study's 1F1B goes unsaid */
    if (l->virtual_stages > 1) fprintf(f, " (%d chunks per stage)", l->virtual_stages);
    gsize nf;
    const layout_field *fs = layout_fields(&nf);
    for (gsize i = 0; i < nf; i++) /* the switches on, in words (layout.h LAYOUT_SHOW_REPORT) */
      if ((fs[i].shows & LAYOUT_SHOW_REPORT) && layout_switch_on(l, &fs[i])) fprintf(f, ", %s", fs[i].text);
    char scope[LAYOUT_CG_SCOPE_NAME_MAX];
    if (l->cuda_graph_scope) fprintf(f, ", CUDA graphs of %s", layout_cg_scope_name(l->cuda_graph_scope, scope));
    fputc('\n', f);
  } else {
    fprintf(f, "graph of %d %s (%s)\n", o->g->world_size, gpus_word(o->g->world_size), prof->name);
  }
  /* the platform the numbers hold for, what-ifs applied: two summaries can never be confused */
  g_autofree char *whatifs = whatif_describe(prof, m->mem_capacity_bytes / GIB);
  fprintf(f, "platform: %s, stack %s%s%s%s, %s\n", prof->name, prof->stack.name, prof->stack.set[0] ? " (set " : "",
          prof->stack.set, prof->stack.set[0] ? ")" : "", whatifs); /* --stack-set's keys, where given */
  if (rq) report_params_line(f, rq);
  if (m->oom)
    fprintf(f, "NOT RUNNABLE: peak memory %.1f GiB on stage %d exceeds %.1f GiB; timing below is hypothetical\n",
            m->mem_peak_bytes / GIB, m->mem_peak_stage, m->mem_capacity_bytes / GIB);
  if (assessed && a.widening > 1 + 1e-9) /* outside the data: the band is not the P90 error itself (the warning says why) */
    fprintf(f, "step time      %10.3f s  +- %.1f%% (%s runs of the calibration: P90 error %.1f%%, widened %.2fx outside "
            "them; docs/trust.md)\n", m->step_time_s, a.band_pct, trust_class_name(a.cls), a.base_pct, a.widening);
  else if (assessed)
    fprintf(f, "step time      %10.3f s  +- %.1f%% (%s runs of the calibration: P90 error; docs/trust.md)\n",
            m->step_time_s, a.band_pct, trust_class_name(a.cls));
  else
    fprintf(f, "step time      %10.3f s\n", m->step_time_s);
  if (m->tokens_per_s >= 0) fprintf(f, "tokens/s       %10.0f\n", m->tokens_per_s);
  if (m->mfu >= 0) fprintf(f, "MFU            %10.1f %%\n", 100 * m->mfu);
  if (m->hfu >= 0) fprintf(f, "HFU            %10.1f %%\n", 100 * m->hfu);
  if (m->hfu >= 0 && m->mfu >= 0 && m->hfu < m->mfu) hfu_note(f, rq);
  fprintf(f, "bubble         %10.1f %%\n", 100 * m->bubble_fraction);
  fprintf(f, "peak memory    %10.1f GiB of %.1f (stage %d)\n", m->mem_peak_bytes / GIB, m->mem_capacity_bytes / GIB,
          m->mem_peak_stage);
  fprintf(f, "energy         %10.3f MJ per step", m->energy_j / 1e6);
  if (m->tokens_per_s > 0) fprintf(f, ", %.3f kWh per million tokens", report_kwh_per_mtok(m));
  fprintf(f, " (GPUs %.0f%%, nodes %.0f%%; %s; docs/energy.md)\n", m->energy_j > 0 ? 100 * m->energy_gpu_j / m->energy_j : 0,
          m->energy_j > 0 ? 100 * m->energy_node_j / m->energy_j : 0, prof->name);
  if (o->res && o->res->coll_algos && *o->res->coll_algos) fprintf(f, "collectives    %s\n", o->res->coll_algos);
  if (assessed) {
    fprintf(f, "headroom       %10.1f GiB%s\n", a.headroom_gib, a.flags & (1u << TRUST_NEAR_OOM) ? "  OOM RISK" : "");
    g_auto(GStrv) w = trust_warnings(trust, rq, &a, m->mem_fragmentation_limit);
    for (char **p = w; *p; p++) fprintf(f, "warning: %s\n", *p);
  }
  /* a column per category; cp_s and ep_s (when_present) only where a stage has some (a layout without cp or
   * experts keeps its table; docs/moe.md) */
  gboolean shown[TL_N];
  for (int c = 0; c < TL_N; c++) {
    shown[c] = !tl_cat_info_of((tl_cat)c)->when_present;
    for (int s = 0; s < m->stages; s++) shown[c] = shown[c] || m->stage[s].seconds[c] > 0;
  }
  fprintf(f, "\nstage  bubble%% ");
  for (int c = 0; c < TL_N; c++)
    if (shown[c]) fprintf(f, " %-8s", tl_cat_info_of((tl_cat)c)->head);
  fprintf(f, " mem_GiB\n");
  for (int s = 0; s < m->stages; s++) {
    const stage_metrics *st = &m->stage[s];
    fprintf(f, "%5d  %7.1f", s, 100 * st->bubble_fraction);
    for (int c = 0; c < TL_N; c++)
      if (shown[c]) fprintf(f, " %8.3f", st->seconds[c]);
    fprintf(f, " %8.1f\n", st->mem_peak_bytes / GIB);
  }
  fprintf(f, "\nmemory (GiB)  params    grads optimizer activations  buffers overhead     peak\n");
  for (int s = 0; s < m->stages; s++) {
    const stage_metrics *st = &m->stage[s];
    fprintf(f, "stage %-5d %8.2f %8.2f %9.2f %11.2f %8.2f %8.2f %8.2f%s\n", s, st->mem_params_bytes / GIB,
            st->mem_grads_bytes / GIB, st->mem_optimizer_bytes / GIB, st->mem_activation_peak_bytes / GIB,
            st->mem_buffers_bytes / GIB, st->mem_overhead_bytes / GIB, st->mem_peak_bytes / GIB,
            st->mem_peak_bytes > m->mem_capacity_bytes ? "  over capacity" : "");
  }
}
