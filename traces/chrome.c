/* chrome -- see chrome.h.
 *
 * Layout: pid = node, tid = local GPU * TL_STREAM_N + stream. A send and its
 * receive are matched as the graph matches them (the k-th send from a to b
 * is received by b's k-th receive from a), so a flow id is (a, b, k), with a
 * and b the ranks the timeline says (a mirror's own peers, not its
 * source's). The flow starts inside the send slice and ends on the
 * receive's last nanosecond, where the data has arrived.
 */
#include "chrome.h"

#include <math.h>
#include <stdio.h>

#include "common/lsim_outfile.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef long long ns_t;

static ns_t to_ns(double s) { return llround(s * 1e9); }

typedef struct chrome_w {
  const timeline *tl;
  const tl_mem_model *mm;
  FILE *f;
  const gboolean *selected; /* [world] */
  int rank, pid, local;
  unsigned streams_used;    /* bit per tl_stream */
  GHashTable *sent, *received; /* peer -> count of sends to / receives from it */
  double act_bytes;
  tl_chunks chunks; /* the rank's model chunks (interleaved schedules) */
  /* the (phase, micro-batch, chunk) block being collected on the compute track */
  gboolean block_open;
  int block_phase, block_mb, block_chunk;
  ns_t block_start, block_end;
  gboolean first; /* no event written yet: no comma before the next */
} chrome_w;

/* Start a new element of the traceEvents array. */
static FILE *next_event(chrome_w *w)
{
  if (!w->first) fputs(",\n", w->f);
  w->first = FALSE;
  return w->f;
}

static void put_us(FILE *f, ns_t ns) { fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000); }

static int tid_of(const chrome_w *w, tl_stream s) { return w->local * TL_STREAM_N + (int)s; }

static void slice(chrome_w *w, const char *name, const char *cat, tl_stream s, ns_t t0, ns_t t1, const char *args)
{
  fprintf(next_event(w), "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":", name, cat, w->pid,
          tid_of(w, s));
  put_us(w->f, t0);
  fputs(",\"dur\":", w->f);
  put_us(w->f, t1 - t0);
  fprintf(w->f, ",\"args\":{%s}}", args);
  w->streams_used |= 1u << s;
}

/* The virtual stage of chunk c of the rank's stage (chunk * pp + stage); -1 for none. */
static int virtual_stage(const chrome_w *w, int chunk)
{
  return chunk < 0 ? -1 : chunk * tl_stages(w->tl) + tl_stage_of(w->tl, w->rank);
}

static void flush_block(chrome_w *w)
{
  if (!w->block_open) return;
  w->block_open = FALSE;
  const char *ph = graph_phase_name((graph_phase)w->block_phase);
  char name[48], args[128];
  gboolean chunked = w->chunks.n > 1 && w->block_chunk >= 0;
  if (w->block_mb >= 0 && chunked) snprintf(name, sizeof name, "%s mb %d c%d", ph, w->block_mb, w->block_chunk);
  else if (w->block_mb >= 0) snprintf(name, sizeof name, "%s mb %d", ph, w->block_mb);
  else snprintf(name, sizeof name, "%s", ph);
  snprintf(args, sizeof args, "\"rank\":%d,\"micro_batch\":%d,\"chunk\":%d,\"virtual_stage\":%d,\"block\":true", w->rank,
           w->block_mb, w->block_chunk, virtual_stage(w, w->block_chunk));
  slice(w, name, ph, TL_STREAM_COMPUTE, w->block_start, w->block_end, args);
}

/* The track an interval is drawn on: its category's, but a kernel off the compute stream (graph.h: the gradient
 * bucket's copy-back on stream 1 under --overlap-grad-reduce, workloads/grad_sync.c, the only one) beside the
 * data-parallel collectives it follows: drawn on the compute track it would overlap the kernels running there, which
 * a Chrome trace's thread cannot show (its slices must nest). */
static tl_stream track_of(const tl_interval *iv)
{
  return iv->ev->kind == EV_COMPUTE && iv->ev->stream != 0 ? TL_STREAM_DP : tl_stream_of(iv->cat);
}

/* A block gathers the compute stream's kernels only (a side stream's would stretch it over its neighbours). */
static void track_block(chrome_w *w, const graph_event *e, ns_t t0, ns_t t1)
{
  if (e->kind != EV_COMPUTE || e->stream != 0) return;
  int chunk = tl_chunk_of(&w->chunks, e);
  if (w->block_open && (w->block_phase != e->phase || w->block_mb != e->micro_batch ||
                        (chunk >= 0 && w->block_chunk >= 0 && chunk != w->block_chunk)))
    flush_block(w);
  if (!w->block_open) {
    w->block_open = TRUE;
    w->block_phase = e->phase;
    w->block_mb = e->micro_batch;
    w->block_chunk = -1;
    w->block_start = t0;
  }
  if (chunk >= 0) w->block_chunk = chunk; /* the embedding and the head: their layers' chunk */
  w->block_end = t1;
}

static int bump(GHashTable *counts, int peer)
{
  int k = GPOINTER_TO_INT(g_hash_table_lookup(counts, GINT_TO_POINTER(peer)));
  g_hash_table_insert(counts, GINT_TO_POINTER(peer), GINT_TO_POINTER(k + 1));
  return k;
}

/* Flow id of the k-th message from src to dst: exact in a double up to 2^53. */
static long long flow_id(const chrome_w *w, int src, int dst, int k)
{
  return (((long long)src * w->tl->g->world_size + dst) << 20) + k;
}

static void flow(chrome_w *w, const tl_interval *iv, ns_t t0, ns_t t1)
{
  const graph_event *e = iv->ev;
  gboolean send = e->kind == EV_SEND;
  if (iv->peer < 0) return; /* a mirror whose graph does not say where it sends */
  int k = bump(send ? w->sent : w->received, iv->peer);
  if (!w->selected[iv->peer]) return;
  long long id = send ? flow_id(w, w->rank, iv->peer, k) : flow_id(w, iv->peer, w->rank, k);
  ns_t t = send ? t0 : MAX(t0, t1 - 1);
  fprintf(next_event(w), "{\"ph\":\"%s\",%s\"name\":\"%s\",\"cat\":\"pp\",\"id\":%lld,\"pid\":%d,\"tid\":%d,\"ts\":",
          send ? "s" : "f", send ? "" : "\"bp\":\"e\",", e->phase == PH_FORWARD ? "activations" : "gradients", id,
          w->pid, tid_of(w, TL_STREAM_PP));
  put_us(w->f, t);
  fputs("}", w->f);
}

static void counter(chrome_w *w, ns_t t, double dynamic_bytes)
{
  fprintf(next_event(w), "{\"ph\":\"C\",\"name\":\"GPU %d memory\",\"pid\":%d,\"ts\":", w->local, w->pid);
  put_us(w->f, t);
  fprintf(w->f, ",\"args\":{\"GiB\":%.6f}}", tl_mem_bytes(w->tl, w->rank, w->mm, dynamic_bytes) / GIB);
}

static void event_name(const tl_interval *iv, const timeline *tl, char *buf, size_t n)
{
  const graph_event *e = iv->ev;
  GString *s = g_string_new(tl_event_op_name(tl->g, e));
  if (e->kind == EV_COLLECTIVE) {
    const graph_group *gr = g_ptr_array_index(tl->g->groups, iv->peer);
    g_string_append_printf(s, " %s", gr->label);
  }
  if (e->layer >= 0) g_string_append_printf(s, " L%d", e->layer);
  if (e->micro_batch >= 0) g_string_append_printf(s, " mb%d", e->micro_batch);
  if (e->kind == EV_SEND || e->kind == EV_RECV) {
    g_string_append(s, e->kind == EV_SEND ? " to " : " from ");
    if (iv->peer >= 0) g_string_append_printf(s, "%d", iv->peer);
    else g_string_append_c(s, '?');
  }
  g_strlcpy(buf, s->str, n);
  g_string_free(s, TRUE);
}

static gboolean write_interval(const tl_interval *iv, gpointer data)
{
  chrome_w *w = data;
  const graph_event *e = iv->ev;
  ns_t t0 = to_ns(iv->start_s), t1 = to_ns(iv->end_s);
  char name[96], args[224];
  event_name(iv, w->tl, name, sizeof name);
  int chunk = tl_chunk_of(&w->chunks, e);
  snprintf(args, sizeof args,
           "\"rank\":%d,\"event\":%d,\"micro_batch\":%d,\"layer\":%d,\"chunk\":%d,\"virtual_stage\":%d,\"gflop\":%.6g,"
           "\"mbytes\":%.6g",
           w->rank, iv->index, e->micro_batch, e->layer, chunk, virtual_stage(w, chunk), e->flops / 1e9, e->bytes / 1e6);
  track_block(w, e, t0, t1);
  slice(w, name, tl_cat_name(iv->cat), track_of(iv), t0, t1, args);
  if (e->kind == EV_SEND || e->kind == EV_RECV) flow(w, iv, t0, t1);
  double during, after;
  if (tl_mem_step(e, &w->act_bytes, &during, &after)) {
    counter(w, t0, during);
    counter(w, t1, after);
  }
  return TRUE;
}

static void metadata(chrome_w *w, const char *what, int pid, int tid, const char *name, int sort)
{
  fprintf(next_event(w), "{\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", what, pid, tid,
          name);
  fprintf(next_event(w), "{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}", what,
          pid, tid, sort);
}

static void write_rank(chrome_w *w, int rank, int *last_pid)
{
  int gpn = tl_gpus_per_node(w->tl);
  w->rank = rank;
  w->pid = rank / gpn;
  w->local = rank % gpn;
  w->streams_used = 0;
  w->act_bytes = 0;
  w->block_open = FALSE;
  g_hash_table_remove_all(w->sent);
  g_hash_table_remove_all(w->received);
  if (w->pid != *last_pid) {
    char name[32];
    snprintf(name, sizeof name, "node %d", w->pid);
    metadata(w, "process", w->pid, 0, name, w->pid);
    *last_pid = w->pid;
  }
  counter(w, 0, 0);
  tl_chunks_init(&w->chunks, w->tl, rank);
  tl_foreach(w->tl, rank, write_interval, w);
  flush_block(w);
  tl_chunks_clear(&w->chunks);
  counter(w, to_ns(w->tl->step_time_s), w->act_bytes);
  for (int s = 0; s < TL_STREAM_N; s++) {
    if (!(w->streams_used & (1u << s))) continue;
    char name[64];
    snprintf(name, sizeof name, "GPU %d (rank %d, stage %d) %s", w->local, rank, tl_stage_of(w->tl, rank),
             tl_stream_name((tl_stream)s));
    metadata(w, "thread", w->pid, tid_of(w, (tl_stream)s), name, tid_of(w, (tl_stream)s));
  }
}

/* A JSON string literal (model names come from user files). */
static void put_json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void header(const timeline *tl, const tl_ranks *sel, FILE *f)
{
  const char *model = tl->g->meta.model[0] ? tl->g->meta.model : NULL;
  const char *layout = tl->g->meta.layout[0] ? tl->g->meta.layout : NULL;
  fputs("{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"layoutsim\",\"model\":", f);
  put_json_string(f, model ? model : "unknown");
  fputs(",\"layout\":", f);
  put_json_string(f, layout ? layout : "graph file");
  fprintf(f, ",\"step_time_s\":%.9f,\"gpus\":%d,\"ranks_traced\":%d},\n\"traceEvents\":[\n", tl->step_time_s,
          tl->g->world_size, sel->n);
}

void trace_chrome_put(const timeline *tl, const tl_ranks *sel, const tl_mem_model *mm, FILE *f)
{
  g_autofree gboolean *selected = g_new0(gboolean, tl->g->world_size);
  for (int i = 0; i < sel->n; i++) selected[sel->rank[i]] = TRUE;
  chrome_w w = {.tl = tl, .mm = mm, .f = f, .selected = selected, .first = TRUE};
  w.sent = g_hash_table_new(g_direct_hash, g_direct_equal);
  w.received = g_hash_table_new(g_direct_hash, g_direct_equal);
  header(tl, sel, f);
  int last_pid = -1;
  for (int i = 0; i < sel->n; i++) write_rank(&w, sel->rank[i], &last_pid);
  fputs("\n]}\n", f);
  g_hash_table_destroy(w.sent);
  g_hash_table_destroy(w.received);
}

gboolean trace_chrome_write(const timeline *tl, const tl_ranks *sel, const tl_mem_model *mm, const char *path,
                            GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_chrome_put(tl, sel, mm, tf.f);
  return lsim_outfile_commit(&tf, err);
}
