/* graph_save -- the task graph's JSON form written (graph_save, docs/graph-format.md). It is written by
 * streaming (graphs of millions of events would not fit a cJSON tree comfortably). Doubles are printed
 * with 17 significant digits so that a saved and reloaded graph replays to exactly the same times.
 *
 * Owns: the file format's writer (the current version, GRAPH_FORMAT_VERSION).
 * May not touch: the checks (graph_check.c), the reader (graph_load.c).
 */
#include "graph_private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/lsim_error.h"
#include "common/lsim_json.h"
#include "common/lsim_outfile.h"

static void write_event(FILE *f, const graph *g, const graph_event *e, int after)
{
  /* labels were checked when added (graph_op_id's callers: the generator's fixed names, the loader's checked text) */
  fprintf(f, "{\"kind\":\"%s\",\"op\":\"%s\",\"phase\":\"%s\"", GRAPH_KIND_NAMES[e->kind], graph_op_name(g, e->op),
          GRAPH_PHASE_NAMES[e->phase]);
  if (e->kind == EV_COLLECTIVE) fprintf(f, ",\"collective\":\"%s\",\"group\":%d", GRAPH_COLL_NAMES[e->variant], e->peer);
  else if (e->kind != EV_COMPUTE) {
    fprintf(f, ",\"peer\":%d", e->peer);
    if (e->variant) fprintf(f, ",\"variant\":%d", e->variant);
  }
  else if (e->cost == COST_ATTENTION) /* its efficiency class by name (version 5) */
    fprintf(f, ",\"cost\":\"%s\",\"kernel\":\"%s\"", GRAPH_COST_NAMES[e->cost], GRAPH_ATTN_NAMES[e->variant]);
  else fprintf(f, ",\"cost\":\"%s\",\"variant\":%d", GRAPH_COST_NAMES[e->cost], e->variant);
  if (e->dtype != DT_BF16) fprintf(f, ",\"dtype\":\"%s\"", GRAPH_DTYPE_NAMES[e->dtype]);
  if (e->micro_batch >= 0) fprintf(f, ",\"micro_batch\":%d", e->micro_batch);
  if (e->layer >= 0) fprintf(f, ",\"layer\":%d", e->layer);
  if (e->kind == EV_COMPUTE) fprintf(f, ",\"m\":%d,\"n\":%d,\"k\":%d,\"launches\":%d,\"flops\":%.17g", e->m, e->n, e->k,
                                 e->launches, e->flops);
  fprintf(f, ",\"bytes\":%.17g", e->bytes);
  if (e->mem_delta_bytes != 0) fprintf(f, ",\"mem_delta_bytes\":%.17g", e->mem_delta_bytes);
  if (e->mem_transient_bytes != 0) fprintf(f, ",\"mem_transient_bytes\":%.17g", e->mem_transient_bytes);
  if (e->stream) fprintf(f, ",\"stream\":%d", e->stream);
  if (e->captured) fprintf(f, ",\"captured\":%d", e->graph_launch ? 2 : 1); /* 2: the graph's launch */
  if (after >= 0) fprintf(f, ",\"after\":%d", after);
  fputc('}', f);
}

static void write_program(FILE *f, const graph *g, const graph_program *p)
{
  fprintf(f,
          "{\"rank\":%d,\"mem_static_bytes\":%.17g,\"mem_params_bytes\":%.17g,\"mem_grads_bytes\":%.17g,"
          "\"mem_optimizer_bytes\":%.17g,\"mem_buffers_bytes\":%.17g",
          p->rank, p->mem_static_bytes, p->mem_params_bytes, p->mem_grads_bytes, p->mem_optimizer_bytes,
          p->mem_buffers_bytes);
  if (p->mirror_of >= 0) {
    fprintf(f, ",\"mirror_of\":%d,\"active_from\":%d,\"group_map\":[", p->mirror_of, p->active_from);
    if (p->group_map) {
      GHashTableIter it;
      gpointer k, v;
      gboolean first = TRUE;
      g_hash_table_iter_init(&it, p->group_map);
      while (g_hash_table_iter_next(&it, &k, &v)) {
        fprintf(f, "%s[%d,%d]", first ? "" : ",", GPOINTER_TO_INT(k), GPOINTER_TO_INT(v));
        first = FALSE;
      }
    }
    fputs("]}", f);
    return;
  }
  fputs(",\"events\":[\n", f);
  for (guint i = 0; i < p->events->len; i++) {
    write_event(f, g, &g_array_index(p->events, graph_event, i), graph_dep_of(p, (int)i));
    fputs(i + 1 < p->events->len ? ",\n" : "\n", f);
  }
  fputs("]}", f);
}

/* s as a JSON string, quoted and escaped: a meta key or a group label may hold a quote or a backslash. */
static void write_string(FILE *f, const char *s)
{
  cJSON *j = cJSON_CreateString(s);
  char *q = cJSON_PrintUnformatted(j);
  fputs(q, f);
  cJSON_free(q);
  cJSON_Delete(j);
}

/* The meta's known entries (graph_private.h META_KEYS, in its order), each once; absent where unknown (0 or ""). */
static void write_meta(FILE *f, const graph_meta *m)
{
  const char *sep = "";
  for (size_t i = 0; i < G_N_ELEMENTS(META_KEYS); i++) {
    const meta_key *k = &META_KEYS[i];
    const char *at = (const char *)m + k->off;
    gboolean text = meta_is_text(k);
    double v = text ? 0 : k->integer ? *(const int *)at : *(const double *)at;
    if (text ? !meta_text(m, k)[0] : !(v > 0)) continue;
    fprintf(f, "%s\"%s\":", sep, k->key);
    if (text) write_string(f, meta_text(m, k));
    else fprintf(f, "%.17g", v);
    sep = ",";
  }
}

gboolean graph_save(const graph *g, const char *path, GError **err)
{
  lsim_outfile out;
  if (!lsim_outfile_open(&out, path, err)) return FALSE;
  FILE *f = out.f;
  fprintf(f, "{\"format\":\"layoutsim-graph\",\"version\":%d,\"world_size\":%d,\n\"meta\":{", GRAPH_FORMAT_VERSION,
          g->world_size);
  write_meta(f, &g->meta);
  fputs("},\n\"groups\":[\n", f);
  for (guint i = 0; i < g->groups->len; i++) {
    const graph_group *gr = g_ptr_array_index(g->groups, i);
    fputs("{\"label\":", f);
    write_string(f, gr->label);
    fprintf(f, ",\"class\":\"%s\"", tc_name(gr->tclass));
    fputs(",\"ranks\":[", f);
    for (guint j = 0; j < gr->ranks->len; j++) fprintf(f, "%s%d", j ? "," : "", g_array_index(gr->ranks, int, j));
    fputs(i + 1 < g->groups->len ? "]},\n" : "]}\n", f);
  }
  fputs("],\n\"programs\":[\n", f);
  for (int r = 0; r < g->world_size; r++) {
    write_program(f, g, g_ptr_array_index(g->programs, r));
    fputs(r + 1 < g->world_size ? ",\n" : "\n", f);
  }
  fputs("]}\n", f);
  return lsim_outfile_commit(&out, err);
}
