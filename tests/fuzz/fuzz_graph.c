/* fuzz_graph -- libFuzzer harness of the task-graph loader (workloads/graph.c graph_load: the JSON
 * form, graph_check's structural checks) and of what replay computes from a loaded graph before
 * SimGrid starts: its memory estimate (analysis/footprint.c), and each mirror's peers
 * (graph_peer_for). The replay itself is not run: SimGrid's engine is one per process.
 *
 * Owns: the properties of a loaded graph: every program present, a mirror's source explicit and
 * its active_from within it; and that graph_save writes what loads back to the same graph (world,
 * typed meta, groups and their traffic classes, programs, every event field, its data type included). A refused file has one error. Seeds:
 * tests/fuzz/corpus/graph/.
 */
#include <math.h>
#include <string.h>

#include "analysis/footprint.h"
#include "fuzz_common.h"
#include "platforms/profile.h"
#include "workloads/graph.h"

static void require_same_graph(const graph *a, const graph *b)
{
  fuzz_require(a->world_size == b->world_size, "world %d, reloaded %d", a->world_size, b->world_size);
  const graph_meta *ma = &a->meta, *mb = &b->meta;
  fuzz_require(!strcmp(ma->model, mb->model) && !strcmp(ma->layout, mb->layout) &&
               !strcmp(ma->partition, mb->partition) && !strcmp(ma->precision, mb->precision) &&
               !strcmp(ma->profile, mb->profile) && !strcmp(ma->stack, mb->stack) &&
               !strcmp(ma->stack_set, mb->stack_set), "meta texts differ");
  fuzz_require(ma->tokens_per_step == mb->tokens_per_step && ma->model_flops_per_step == mb->model_flops_per_step &&
               ma->pp == mb->pp && ma->ranks_per_stage == mb->ranks_per_stage &&
               ma->gpus_per_node == mb->gpus_per_node, "meta numbers differ");
  fuzz_require(a->groups->len == b->groups->len, "groups differ");
  for (guint i = 0; i < a->groups->len; i++) {
    const graph_group *x = g_ptr_array_index(a->groups, i), *y = g_ptr_array_index(b->groups, i);
    fuzz_require(!strcmp(x->label, y->label) && x->tclass == y->tclass && x->ranks->len == y->ranks->len &&
                 (x->ranks->len == 0 || !memcmp(x->ranks->data, y->ranks->data, x->ranks->len * sizeof(int))),
                 "group %u differs", i);
  }
  for (int r = 0; r < a->world_size; r++) {
    const graph_program *p = g_ptr_array_index(a->programs, r), *q = g_ptr_array_index(b->programs, r);
    fuzz_require(p->mirror_of == q->mirror_of && p->active_from == q->active_from, "rank %d: mirror differs", r);
    fuzz_require(p->mem_static_bytes == q->mem_static_bytes && p->mem_params_bytes == q->mem_params_bytes &&
                 p->mem_grads_bytes == q->mem_grads_bytes && p->mem_optimizer_bytes == q->mem_optimizer_bytes &&
                 p->mem_buffers_bytes == q->mem_buffers_bytes, "rank %d: memory differs", r);
    if (p->mirror_of >= 0) {
      for (int gid = 0; gid < (int)a->groups->len; gid++)
        fuzz_require(graph_group_for(p, gid) == graph_group_for(q, gid), "rank %d: group_map differs", r);
      continue;
    }
    fuzz_require(p->events->len == q->events->len, "rank %d: %u events, reloaded %u", r, p->events->len,
                 q->events->len);
    for (guint i = 0; i < p->events->len; i++) { /* field by field: -0 and 0 are one value */
      const graph_event *e = &g_array_index(p->events, graph_event, i), *f = &g_array_index(q->events, graph_event, i);
      fuzz_require(e->kind == f->kind && e->op == f->op && e->phase == f->phase && e->variant == f->variant &&
                   e->dtype == f->dtype && e->stream == f->stream &&
                   e->micro_batch == f->micro_batch && e->layer == f->layer && e->peer == f->peer && e->m == f->m &&
                   e->n == f->n && e->k == f->k && e->launches == f->launches && e->flops == f->flops &&
                   e->bytes == f->bytes && e->mem_delta_bytes == f->mem_delta_bytes &&
                   e->mem_transient_bytes == f->mem_transient_bytes, "rank %d event %u differs", r, i);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static gpu_profile prof;
  static gboolean prof_loaded;
  if (!prof_loaded) fuzz_require(profile_load_named("a100-sxm4-80gb", &prof, NULL), "the shipped profile");
  prof_loaded = TRUE;
  const char *path = fuzz_file("graph.json", data, size);
  GError *err = NULL;
  graph *g = graph_load(path, &err);
  fuzz_check_result(g != NULL, err);
  g_clear_error(&err);
  if (!g) return 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    fuzz_require(p != NULL, "rank %d has no program", r);
    if (p->mirror_of < 0) continue;
    int n, first;
    const graph_event *ev = graph_program_events(g, p, &n, &first);
    fuzz_require(first >= 0 && first <= n, "rank %d: active_from %d of %d events", r, first, n);
    for (int i = 0; i < n; i++) /* the replay's passive mirror talks to its peers' counterparts */
      if (ev[i].kind == EV_SEND || ev[i].kind == EV_RECV) {
        int peer = graph_peer_for(g, p, ev[i].peer);
        fuzz_require(peer >= -1 && peer < g->world_size, "rank %d: peer %d", r, peer);
      }
  }
  footprint fp;
  footprint_of_graph(g, &prof, NULL, &fp);
  fuzz_require(isfinite(fp.total_bytes) && fp.total_bytes > 0, "footprint %g", fp.total_bytes);
  gboolean fits = footprint_check(&fp, FOOTPRINT_BUDGET_BYTES, &err);
  fuzz_check_result(fits, err);
  g_clear_error(&err);
  const char *saved = fuzz_path("saved.json");
  gboolean ok = graph_save(g, saved, &err);
  fuzz_check_result(ok, err);
  fuzz_require(ok, "cannot save: %s", err->message);
  graph *back = graph_load(saved, &err);
  fuzz_check_result(back != NULL, err);
  fuzz_require(back, "the saved graph does not load: %s", err->message);
  require_same_graph(g, back);
  graph_free(back);
  graph_free(g);
  return 0;
}
