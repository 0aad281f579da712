/* footprint -- see footprint.h.
 *
 * The byte costs below were measured on Debian 12 (glibc 2.36, SimGrid 3.32) with /usr/bin/time's
 * maximum RSS of `layoutsim simulate`, each part varied alone (docs/model.md has the runs). */
#include "footprint.h"

#include <math.h>

#include "common/lsim_error.h"
#include "platforms/cluster.h"
#include "platforms/fabric.h"
#include "platforms/plat_params.h"
#include "workloads/axes.h"
#include "workloads/partition.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* The process before any graph: libraries, SimGrid's engine, model and profile (a 1-GPU, 1-micro-batch
 * simulation peaks at 35 MB). */
#define PROCESS_BYTES 36e6
/* An event in its program (graph_event), and the replay's start and end time of it (replay_rank). */
#define EVENT_GRAPH_BYTES ((double)sizeof(graph_event))
#define EVENT_REPLAY_BYTES (2.0 * sizeof(double))
/* A rank's program in the graph (with a mirror's group map). */
#define RANK_GRAPH_BYTES 500.0
/* A rank in the replay: engine state, semaphore, mailboxes of its groups, its SimGrid host and links, its
 * metrics (tp 8 on 512 to 8192 GPUs: 6.5 KB per GPU, of which its program and its share of the routes
 * inside its node 1.5 KB). */
#define RANK_REPLAY_BYTES 5000.0
/* One route of the SimGrid platform, inside a node or between two nodes (measured between nodes:
 * 103 bytes per ordered pair). */
#define ROUTE_BYTES 105.0
/* A rank that runs an actor: its context and the part of its stack it touches (--no-symmetry against
 * symmetry, 256 to 1024 ranks: 27 to 33 KB each beyond their events). */
#define ACTOR_BYTES 30000.0
/* One state change SimGrid's Paje tracer records (it holds them until the end of the run): 1.0 KB,
 * 15% more with --paje-links' link variables. */
#define TRACE_STATE_BYTES 1000.0
#define TRACE_LINKS_FACTOR 1.15
/* Memory mappings an actor takes (its stack and guard page: SimGrid aborts a little above 32,000 actors at
 * Linux's default vm.max_map_count of 65530), and those the process keeps for itself. */
#define ACTOR_MAPS 2.0
#define ACTOR_MAPS_SPARE 1000.0

static const char *const PART_NAMES[FP_N] = {"the process",      "the micro-batches' events",
                                             "the optimizer step's events", "the ranks",
                                             "the ranks' actors", "the routes between nodes",
                                             "SimGrid's Paje trace"};

const char *footprint_part_name(footprint_part p) { return PART_NAMES[p]; }

static void finish(footprint *fp)
{
  fp->total_bytes = 0;
  for (int p = 0; p < FP_N; p++) fp->total_bytes += fp->bytes[p];
}

/* The parts every estimate shares: the process, the ranks and the platform, the actors, the trace. */
static void platform_parts(footprint *fp, const gpu_profile *prof, gboolean replay, double all_events,
                           const replay_options *ro)
{
  int gpn = prof->gpus_per_node;
  fp->nodes = ceil(fp->ranks / gpn);
  fp->bytes[FP_PROCESS] = PROCESS_BYTES;
  fp->bytes[FP_RANKS] = fp->ranks * RANK_GRAPH_BYTES;
  if (!replay) return;
  /* the fat-tree platform's zones are the NVLink domains (docs/topology.md): full routes inside each */
  int gpd = profile_gpus_per_domain(prof);
  double zones = ceil(fp->ranks / gpd), routes_in_zone = (double)gpd * (gpd - 1) + 2.0 * gpd;
  fp->bytes[FP_RANKS] += fp->ranks * RANK_REPLAY_BYTES + zones * routes_in_zone * ROUTE_BYTES;
  /* between the domains: a route per pair in a full root zone; a star root (no leaf uplinks) holds two per
   * domain, and a rail fabric computes them (platforms/cluster.h plat_root_is_star) */
  plat_params pp = plat_params_of(prof, (int)MIN(fp->ranks, (double)G_MAXINT));
  gboolean star = plat_routes_computed(&pp) || plat_root_is_star(&pp);
  fp->bytes[FP_ROUTES] = zones <= 1 ? 0 : star ? 2 * zones * ROUTE_BYTES : zones * (zones - 1) * ROUTE_BYTES;
  fp->bytes[FP_ACTORS] = fp->actors * ACTOR_BYTES;
  if (ro && ro->simgrid_paje_path) { /* a state when each event starts and one when it ends, on every GPU */
    fp->trace_states = 2 * all_events;
    fp->bytes[FP_TRACE] = fp->trace_states * TRACE_STATE_BYTES * (ro->simgrid_paje_links ? TRACE_LINKS_FACTOR : 1);
  }
}

gboolean footprint_of_request(const sim_request *rq, gboolean replay, footprint *out, GError **err)
{
  const layout *l = &rq->l;
  *out = (footprint){.of_request = TRUE, .l = *l, .symmetric = rq->gen.symmetry, .ranks = l->gpus,
                     .micro_batches = l->grad_accum};
  g_strlcpy(out->model, rq->m.name, sizeof out->model);
  partition part;
  if (!partition_make_chunked(&part, &rq->m, l->pp, l->virtual_stages, l->tp, rq->gen.partition, err)) return FALSE;
  gboolean tracing = replay && rq->replay.simgrid_paje_path;
  /* symmetry: one explicit program per stage and coordinates along the axes not mirrored (the cp index;
   * generate.c, axes.h) */
  unsigned stage_axes = axis_mask_stage();
  double per_stage = (double)axis_product(l, AXIS_ALL & ~stage_axes);
  double explicit_per_stage = rq->gen.symmetry ? (double)axis_product(l, AXIS_ALL & ~stage_axes & ~axis_mask_mirrored())
                                               : per_stage;
  double event_bytes = EVENT_GRAPH_BYTES + (replay ? EVENT_REPLAY_BYTES : 0), all_events = 0;
  for (int s = 0; s < l->pp; s++) {
    gen_stage_size sz;
    gen_stage_events(&rq->m, l, &rq->gen.code, &part, s, &sz);
    out->events += sz.events * explicit_per_stage;
    out->bucket_events += sz.bucket_events * explicit_per_stage;
    out->bytes[FP_EVENTS] += (sz.events - sz.bucket_events) * explicit_per_stage * event_bytes;
    out->bytes[FP_BUCKETS] += sz.bucket_events * explicit_per_stage * event_bytes;
    all_events += sz.events * per_stage;
    double mirrors = per_stage - explicit_per_stage;
    gboolean mirrors_run = gen_mirrors_active_in_step(&rq->gen, l) || tracing; /* a mirror with an actor */
    out->actors += explicit_per_stage + (mirrors_run ? mirrors : 0);
    if (replay && gen_mirrors_active_in_step(&rq->gen, l)) /* the times of the step it runs itself */
      out->bytes[FP_BUCKETS] += mirrors * sz.step_events * EVENT_REPLAY_BYTES;
  }
  partition_clear(&part);
  out->explicit_ranks = explicit_per_stage * l->pp;
  if (!replay) out->actors = 0;
  platform_parts(out, &rq->prof, replay, all_events, &rq->replay);
  finish(out);
  return TRUE;
}

void footprint_of_graph(const graph *g, const gpu_profile *prof, const replay_options *ro, footprint *out)
{
  *out = (footprint){.ranks = g->world_size};
  gboolean tracing = ro && ro->simgrid_paje_path;
  double all_events = 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    int n, first;
    graph_program_events(g, p, &n, &first);
    all_events += n;
    if (p->mirror_of >= 0) { /* its own times from active_from on; an actor unless it stays passive */
      out->symmetric = TRUE;
      out->bytes[FP_EVENTS] += (double)MAX(n - first, 0) * EVENT_REPLAY_BYTES;
      out->actors += tracing || first < n;
      continue;
    }
    out->explicit_ranks++;
    out->actors++;
    out->events += n;
    out->bytes[FP_EVENTS] += n * (EVENT_GRAPH_BYTES + EVENT_REPLAY_BYTES);
  }
  platform_parts(out, prof, TRUE, all_events, ro);
  finish(out);
}

static const char *plural(double n, const char *one, const char *many) { return n == 1 ? one : many; }

/* What the largest part counts and how to shrink it: "FIELD: VALUE", what it counts, the allowed values. */
static void explain(const footprint *fp, footprint_part big, double budget_bytes, char **head, char **detail,
                    char **allowed)
{
  const layout *l = &fp->l;
  const char *sym = fp->symmetric ? "" : "; or symmetry: without --no-symmetry, one NIC per GPU";
  g_autofree char *ranks = g_strdup_printf("%.0f explicitly simulated %s", fp->explicit_ranks,
                                           plural(fp->explicit_ranks, "rank", "ranks"));
  switch (big) {
  case FP_EVENTS: {
    if (!fp->of_request) break;
    /* the micro-batches' events grow linearly with them: the most that fit beside the other parts */
    double per = fp->bytes[FP_EVENTS] / MAX(fp->micro_batches, 1);
    double room = budget_bytes - (fp->total_bytes - fp->bytes[FP_EVENTS]);
    int most = room > per ? (int)floor(room / per) : 0;
    *head = g_strdup_printf("global_batch: %d", l->global_batch);
    *detail = g_strdup_printf("%.0f micro-batches of %d %s per data-parallel rank, on %s: %.3g events",
                              fp->micro_batches, l->micro_batch, plural(l->micro_batch, "sequence", "sequences"), ranks,
                              fp->events);
    *allowed = most > 0 ? g_strdup_printf("at most about %d micro-batches here, --global-batch %d; or a larger "
                                          "--micro-batch%s", most, most * l->dp * l->micro_batch, sym)
                        : g_strdup_printf("fewer micro-batches, a smaller --global-batch or a larger --micro-batch%s",
                                          sym);
    return;
  }
  case FP_BUCKETS:
    if (!fp->of_request) break;
    *head = g_strdup_printf("model: '%s'", fp->model);
    *detail = g_strdup_printf("%.3g on %s: a gradient all-reduce per 5e8 parameters a GPU holds", fp->bucket_events,
                              ranks);
    *allowed = g_strdup_printf("fewer parameters per GPU: a smaller model, or a larger --tp%s", sym);
    return;
  case FP_ACTORS:
    *head = g_strdup_printf("gpus: %.0f", fp->ranks);
    *detail = g_strdup_printf("%.0f simulated one by one", fp->actors);
    *allowed = g_strdup_printf("fewer --gpus%s", fp->symmetric ? "" : ", or symmetry: without --no-symmetry, one "
                               "NIC per GPU");
    return;
  case FP_TRACE:
    *head = g_strdup("--paje-simgrid: this run's trace");
    *detail = g_strdup_printf("%.3g state changes, held in memory until the end of the run", fp->trace_states);
    *allowed = g_strdup("--paje, written from the timeline without extra memory; or a smaller layout");
    return;
  default:
    break;
  }
  if (!fp->of_request) { /* a graph file */
    *head = g_strdup_printf("graph: %.0f ranks", fp->ranks);
    *detail = g_strdup_printf("%.3g events on %s", fp->events, ranks);
    *allowed = g_strdup("a graph of fewer ranks or events");
    return;
  }
  *head = g_strdup_printf("gpus: %.0f", fp->ranks); /* the ranks, the routes */
  *detail = g_strdup_printf("%.0f nodes", fp->nodes);
  *allowed = g_strdup("fewer --gpus");
}

double footprint_max_actors(void)
{
  double maps = 65530; /* Linux's default */
  g_autofree char *text = NULL;
  if (g_file_get_contents("/proc/sys/vm/max_map_count", &text, NULL, NULL) && g_ascii_strtod(text, NULL) > 0)
    maps = g_ascii_strtod(text, NULL);
  return floor((maps - ACTOR_MAPS_SPARE) / ACTOR_MAPS);
}

gboolean footprint_check(const footprint *fp, double budget_bytes, GError **err)
{
  double most = footprint_max_actors();
  if (fp->actors > most) {
    g_autofree char *head = NULL, *detail = NULL, *allowed = NULL;
    explain(fp, FP_ACTORS, budget_bytes, &head, &detail, &allowed);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s would run %.0f SimGrid actors, more than the %.0f this system's "
                "vm.max_map_count allows (%s) (allowed: %s)", head, fp->actors, most, detail, allowed);
    return FALSE;
  }
  if (fp->total_bytes <= budget_bytes) return TRUE;
  footprint_part big = FP_EVENTS;
  for (int p = FP_EVENTS; p < FP_N; p++)
    if (fp->bytes[p] > fp->bytes[big]) big = (footprint_part)p;
  g_autofree char *head = NULL, *detail = NULL, *allowed = NULL;
  explain(fp, big, budget_bytes, &head, &detail, &allowed);
  g_autofree char *total = footprint_format_bytes(fp->total_bytes, FALSE),
                  *budget = footprint_format_bytes(budget_bytes, TRUE), *part = footprint_format_bytes(fp->bytes[big], FALSE);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
              "%s would take about %s of memory, more than the budget of %s%s; %s of it are %s (%s) (allowed: %s)",
              head, total, budget, budget_bytes != FOOTPRINT_BUDGET_BYTES ? " (--max-memory)" : "", part,
              footprint_part_name(big), detail, allowed);
  return FALSE;
}

char *footprint_format_bytes(double bytes, gboolean exact)
{
  double unit = bytes >= GIB ? GIB : 1024.0 * 1024;
  const char *name = bytes >= GIB ? "GiB" : "MiB";
  return g_strdup_printf(exact && fmod(bytes, unit) == 0 ? "%.0f %s" : "%.1f %s", bytes / unit, name);
}
