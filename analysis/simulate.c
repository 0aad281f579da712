/* simulate -- see simulate.h. */
#include "simulate.h"

#include "workloads/precision.h"
#include "common/lsim_error.h"
#include "common/lsim_input.h"
#include "footprint.h"
#include "run_cost.h"
#include "platforms/cluster.h"
#include "platforms/fabric.h"
#include "platforms/plat_file_xml.h"
#include "platforms/plat_params.h"

/* Whether leaf groups of world_size GPUs share oversubscribed uplinks: traffic of mirrored ranks, which
 * the replay does not send, would then slow the traffic it does send. A rail fabric's leaves have
 * uplinks as soon as there are two nodes (traffic between rails climbs them). */
static gboolean shared_uplinks(const gpu_profile *p, int world_size)
{
  int nodes = (world_size + p->gpus_per_node - 1) / p->gpus_per_node;
  if (fabric_is_rail(p->fabric)) return nodes > 1 && p->oversubscription > 1;
  return p->leaf_nodes > 0 && nodes > p->leaf_nodes && p->oversubscription > 1;
}

/* A graph reduced by symmetry (mirrored ranks) stands for ranks with links of their own: where GPUs
 * share NICs or leaf groups share oversubscribed uplinks it would hide their contention (docs/model.md). */
static gboolean check_mirrors(const graph *g, const gpu_profile *prof, const replay_options *ro, GError **err)
{
  gboolean uplinks = shared_uplinks(prof, g->world_size), file = ro && ro->platform_file;
  if (prof->nics_per_node >= prof->gpus_per_node && !uplinks && !file) return TRUE;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of < 0) continue;
    if (file)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "--platform-file: '%s' may make any ranks contend, but the graph mirrors ranks (symmetry reduction) "
                  "(allowed: a graph written with --no-symmetry)", ro->platform_file);
    else if (uplinks)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "oversubscription: %g above the leaves (fabric %s, leaf_nodes %g), but the graph mirrors ranks "
                  "(symmetry reduction), which assumes links of their own (allowed: a graph written with --no-symmetry, "
                  "or oversubscription 1)", prof->oversubscription, fabric_name(prof->fabric), prof->leaf_nodes);
    else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "nics_per_node: %d GPUs share a NIC, but the graph mirrors ranks (symmetry reduction), which assumes "
                  "a NIC per GPU (allowed: a graph written with --no-symmetry, or %d NICs per node)",
                  prof->gpus_per_node / prof->nics_per_node, prof->gpus_per_node);
    return FALSE;
  }
  return TRUE;
}

/* The pairs of ranks g makes talk (rank, peer of each send and receive; ring neighbours in each group,
 * and every pair of a group of at most 16), each once: what a platform file must route. */
static GArray *talking_pairs(const graph *g)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
#define ADD_PAIR(a, b)                                                                                             \
  do {                                                                                                             \
    int a_ = (a), b_ = (b);                                                                                        \
    gint64 key = (gint64)a_ * g->world_size + b_;                                                                  \
    if (a_ != b_ && a_ >= 0 && b_ >= 0 && a_ < g->world_size && b_ < g->world_size &&                              \
        !g_hash_table_contains(seen, &key)) {                                                                      \
      g_hash_table_add(seen, g_memdup2(&key, sizeof key));                                                         \
      g_array_append_val(out, a_);                                                                                 \
      g_array_append_val(out, b_);                                                                                 \
    }                                                                                                              \
  } while (0)
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    for (guint i = 0; p->events && i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      if (e->kind == EV_SEND) ADD_PAIR(r, e->peer);
      else if (e->kind == EV_RECV) ADD_PAIR(e->peer, r);
    }
  }
  for (guint gi = 0; g->groups && gi < g->groups->len; gi++) {
    const graph_group *gr = g_ptr_array_index(g->groups, gi);
    int n = (int)gr->ranks->len;
    const int *rk = (const int *)gr->ranks->data;
    for (int i = 0; i < n && n > 1; i++)
      for (int j = 0; j < n; j++)
        if (j == (i + 1) % n || j == (i + n - 1) % n || n <= 16) ADD_PAIR(rk[i], rk[j]);
  }
#undef ADD_PAIR
  return out;
}

gboolean sim_precision_check(const gpu_profile *prof, gboolean fp8, gboolean mx, const char *field, const char *value,
                             GError **err)
{
  if (fp8 && !(prof->peak_fp8_flops > 0)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' needs FP8 tensor cores, which profile '%s' has not (its "
                "peak_fp8_flops is 0; allowed on it: bf16)", field, value, prof->name);
    return FALSE;
  }
  if (mx && !prof->mxfp8) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' needs MX block-scaled tensor cores (Blackwell), which "
                "profile '%s' has not (its mxfp8 is false; allowed on it: bf16, fp8, fp8-cs)", field, value, prof->name);
    return FALSE;
  }
  return TRUE;
}

/* A graph's GEMM dtypes against the profile's tensor cores (a graph file may come from any profile). */
static gboolean graph_precision_check(const graph *g, const gpu_profile *prof, GError **err)
{
  gboolean fp8 = FALSE, mx = FALSE;
  graph_dtype seen = DT_BF16;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    for (guint i = 0; p->events && i < p->events->len; i++) {
      graph_dtype dt = (graph_dtype)g_array_index(p->events, graph_event, i).dtype;
      if (graph_dtype_is_fp8(dt) && (!fp8 || dt == DT_MXFP8)) seen = dt;
      fp8 |= graph_dtype_is_fp8(dt);
      mx |= dt == DT_MXFP8;
    }
  }
  return sim_precision_check(prof, fp8, mx, "graph dtype", graph_dtype_name(seen), err);
}

gboolean sim_run_graph(graph *g, const gpu_profile *prof, double capacity_gib, const replay_options *ro,
                       sim_outcome *out, GError **err)
{
  out->g = g;
  if (!graph_precision_check(g, prof, err)) return FALSE;
  if (!check_mirrors(g, prof, ro, err)) return FALSE;
  if (ro && ro->platform_file) {
    char why[400];
    g_autofree char *text = NULL;
    gsize len;
    if (!lsim_input_read(ro->platform_file, LSIM_INPUT_PLATFORM, &text, &len, err)) return FALSE;
    if (!plat_file_xml_validate(ro->platform_file, text, len, run_cost_budget_bytes(), NULL, err)) return FALSE;
    g_autoptr(GArray) pairs = talking_pairs(g);
    if (!plat_file_check_routes(ro->platform_file, prof->gpus_per_node, g->world_size, (const int *)pairs->data,
                                (int)(pairs->len / 2), why, sizeof why)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--platform-file: %s: %s (allowed: a SimGrid platform file with "
                  "a host n<node>_g<gpu> for every rank, node = rank / %d and gpu = rank %% %d, and a route between every two ranks "
                  "that talk: docs/model.md)",
                  ro->platform_file, why, prof->gpus_per_node, prof->gpus_per_node);
      return FALSE;
    }
  }
  footprint fp; /* a graph file's replay (sim_run_layout checked its own before generating it) */
  footprint_of_graph(g, prof, ro, &fp);
  if (!run_cost_admit(&fp, err)) return FALSE;
  out->plat = plat_params_of(prof, g->world_size);
  out->res = replay_run(g, prof, &out->plat, ro, err);
  if (!out->res) return FALSE;
  out->tl = tl_make(g, out->res);
  out->met = metrics_compute(&out->tl, prof, capacity_gib);
  return TRUE;
}

gboolean sim_request_fits(const sim_request *rq, gboolean replay, GError **err)
{
  footprint fp;
  return footprint_of_request(rq, replay, &fp, err) && run_cost_admit(&fp, err);
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

int sim_domain_gpus_used(int domain, int host, int tp)
{
  if (tp <= 0 || host <= 0) return 0;
  if (tp > domain) return tp % domain == 0 ? domain : 0;
  if (domain == host) return domain % tp == 0 ? domain : 0; /* a one-host domain: every GPU, groups dividing it */
  int unit = tp / gcd(tp, host) * host; /* whole groups on whole hosts */
  return unit <= domain ? domain / unit * unit : 0;
}

/* The vocabulary as the stack's code embeds it at the layout's tp (stack_profile.vocab_pad_multiple). */
static void pad_vocab(sim_request *rq)
{
  model *m = &rq->m;
  int unpadded = m->vocab_unpadded ? m->vocab_unpadded : m->vocab;
  int padded = model_padded_vocab(unpadded, rq->l.tp, (int)rq->prof.stack.vocab_pad_multiple);
  m->vocab = padded;
  m->vocab_unpadded = padded != unpadded ? unpadded : 0;
}

gboolean sim_request_prepare(sim_request *rq, GError **err)
{
  if (!model_check_simulable(&rq->m, err)) return FALSE; /* experts, MLA, MTP: docs/model.md */
  pad_vocab(rq);
  if (!layout_validate(&rq->l, &rq->m, err)) return FALSE;
  if (rq->m.attention_window > 0 && rq->l.seq_len > rq->m.attention_window) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "seq_len: %d is longer than %s's attention window of %d tokens "
                "(sliding-window attention, which layoutsim models only where the window never cuts) (allowed: "
                "--seq-len up to %d)", rq->l.seq_len, rq->m.name, rq->m.attention_window, rq->m.attention_window);
    return FALSE;
  }
  int node = rq->prof.gpus_per_node, tp = rq->l.tp, domain = profile_gpus_per_domain(&rq->prof);
  /* a tensor-parallel group lies inside one NVLink domain, or fills whole domains (NCCL's rings then cross
   * the NICs); a domain larger than a host holds as many whole groups as its whole hosts allow, the rest
   * of it idle (as a scheduler's segment of 16 of an NVL72's 18 trays) */
  int used = sim_domain_gpus_used(domain, node, tp);
  if (!used) {
    GString *ok = g_string_new(NULL);
    int most = MAX(8 * node, domain);
    for (int t = 1; t <= most; t++)
      if (sim_domain_gpus_used(domain, node, t) && rq->m.heads % t == 0 &&
          model_padded_vocab(rq->m.vocab_unpadded ? rq->m.vocab_unpadded : rq->m.vocab, t,
                             (int)rq->prof.stack.vocab_pad_multiple) % t == 0)
        g_string_append_printf(ok, "%s%d", ok->len ? ", " : "", t);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "tp: %d neither fits whole hosts of the %d-GPU NVLink domain nor is a multiple of it (profile '%s', "
                "%d GPUs per host; a tensor-parallel group lies inside one domain or fills whole domains; allowed for "
                "%s up to %d: %s)", tp, domain, rq->prof.name, node, rq->m.name, most, ok->str);
    g_string_free(ok, TRUE);
    return FALSE;
  }
  rq->prof.gpus_per_domain = used;
  if (!sim_precision_check(&rq->prof, rq->l.precision != PREC_BF16, rq->l.precision == PREC_MXFP8, "precision",
                           precision_name(rq->l.precision), err))
    return FALSE;
  rq->gen.gpus_per_node = node;
  rq->gen.code = stack_gen_code(&rq->prof.stack); /* what the stack's code runs */
  /* mirrors stand for ranks with links of their own; GPUs sharing a NIC contend, so emit every rank */
  /* a user's platform may make any two ranks contend: every rank is simulated */
  if (rq->prof.nics_per_node < node || shared_uplinks(&rq->prof, rq->l.gpus) || rq->replay.platform_file)
    rq->gen.symmetry = FALSE;
  return TRUE;
}

gboolean sim_run_layout(sim_request *rq, sim_outcome *out, GError **err)
{
  if (!sim_request_prepare(rq, err) || !sim_request_fits(rq, TRUE, err)) return FALSE;
  graph *g = gen_graph(&rq->m, &rq->l, &rq->gen, err);
  if (!g) return FALSE;
  return sim_run_graph(g, &rq->prof, rq->capacity_gib, &rq->replay, out, err);
}

void sim_outcome_clear(sim_outcome *o)
{
  metrics_free(o->met);
  replay_result_free(o->res);
  graph_free(o->g);
  o->met = NULL;
  o->res = NULL;
  o->g = NULL;
}
