/* pool -- see pool.h. Workers are forked by a zygote (zygote.h), never by
 * the caller, and before SimGrid is touched anywhere; each sends one
 * `prediction` back per job, and a family's server then takes the next job
 * on the same engine. A fast request is two jobs, the second started only
 * once the first fits in memory. */
#include "pool.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_progress.h"
#include "bound.h"
#include "platforms/plat_params.h"
#include "sim/replay.h"
#include "workloads/axes.h"
#include "workloads/memory.h"
#include "workloads/schedule.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

const char *predict_status_name(pred_status s) { return s == PRED_OK ? "ok" : s == PRED_OOM ? "oom" : "invalid"; }

const char *pred_how_name(pred_how h)
{
  static const char *const names[] = {"", "full", "fast", "memory"};
  return names[h];
}

static const char *const FIDELITY[] = {"auto", "full", "fast"};

const char *pool_fidelity_name(pool_fidelity f) { return FIDELITY[f]; }

gboolean pool_parse_fidelity(const char *s, pool_fidelity *out, GError **err)
{
  for (int i = 0; i < (int)G_N_ELEMENTS(FIDELITY); i++)
    if (!strcmp(s, FIDELITY[i])) {
      *out = (pool_fidelity)i;
      return TRUE;
    }
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--fidelity: invalid value '%s' (allowed: auto, full, fast)", s);
  return FALSE;
}

gboolean pool_fast_counts(pool_fidelity f, int pp, int m, int *m1, int *m2)
{
  layout l = layout_default();
  l.pp = pp;
  return pool_fast_counts_of(f, &l, m, m1, m2);
}

gboolean pool_fast_counts_of(pool_fidelity f, const layout *l, int m, int *m1, int *m2)
{
  /* the schedule says from which counts T(m) is affine (1F1B: from m = pp on every stage has its whole
   * shape and one more micro-batch adds one steady pair to every stage), or that it does not know */
  *m1 = *m2 = 0;
  if (!sched_affine_counts(l->schedule, l->pp, m1, m2)) return FALSE;
  /* ZeRO-2/3 and the overlaps run on the same counts: their communication stream's work per micro-batch (a
   * reduce-scatter after each backward, the gathers before each forward) is part of the steady pair, and the
   * overlapped bucket reductions and parameter gathers belong to the last micro-batch and the step's end, the
   * same events in every count (docs/sweep.md, "Overlaps and ZeRO-2/3 on the fast path"; tests/test_fast_path.c
   * holds it to 1e-9 of the full replay) */
  /* DualPipeV's all-to-all overlap (overlap_moe_ep_comm) too: it changes only the F&B pairs, and one more
   * micro-batch adds one round of pairs to step 4 on every rank, the same events as the rounds before it
   * (test_sweep holds it to 1e-9 of the full replay on an MoE at pp 2 and 4, with the overlap and without) */
  if (f == POOL_FULL) return FALSE;
  if (f == POOL_FAST) return m > *m2;
  /* auto: where its three runs replay fewer micro-batches than the step has (docs/sweep.md, "Where the line
   * bends": the fast path replays m1, m2 and the check's 2 m2) */
  return m > *m1 + 3 * *m2;
}

double pool_extrapolate(double t1, int m1, double t2, int m2, int m)
{
  return t1 + (t2 - t1) * (double)(m - m1) / (double)(m2 - m1);
}

gboolean pool_affine_holds(double t1, int m1, double t2, int m2, double t3, int m3)
{
  double e = pool_extrapolate(t1, m1, t2, m2, m3);
  return fabs(e - t3) <= POOL_AFFINE_TOL * fabs(t3);
}

gboolean pool_stages_within_slope(const double *w1, const double *w2, int stages, double t1, int m1, double t2,
                                  int m2)
{
  /* w: a stage's least time in the step (run_job): it never exceeds the step, so if it grows faster per
   * micro-batch than the line, the line must fall below it at some m: the step is not that line (docs/sweep.md,
   * "Where the line bends") */
  double slope = (t2 - t1) / (double)(m2 - m1);
  for (int s = 0; s < stages; s++)
    if ((w2[s] - w1[s]) / (double)(m2 - m1) > slope * (1 + POOL_STAGE_TOL)) return FALSE;
  return TRUE;
}

prediction pool_combine(const prediction *p1, const prediction *p2, int m)
{
  prediction p = *p1; /* memory, status: the m1 run's (the peak is reached by then) */
  p.how = PRED_HOW_FAST;
  p.m = m;
  p.m1 = p1->m;
  p.m2 = p2->m;
  p.step_time_s = pool_extrapolate(p1->step_time_s, p1->m, p2->step_time_s, p2->m, m);
  /* a category's time is never below 0: one constant in m (idle 0 in both runs) extrapolates its two runs'
   * rounding, -8.9e-15 s far out, which merge then refuses as a negative time */
  for (int c = 0; c < TL_N; c++)
    p.seconds[c] = MAX(0.0, pool_extrapolate(p1->seconds[c], p1->m, p2->seconds[c], p2->m, m));
  /* power times the seconds of each kind of work, each affine in m, and the nodes' share of the step time */
  p.energy_j = pool_extrapolate(p1->energy_j, p1->m, p2->energy_j, p2->m, m);
  p.bubble_fraction = p.step_time_s > 0 ? p.seconds[TL_PP_WAIT] / p.step_time_s : 0;
  /* model FLOPs and tokens per step are linear in m */
  double scale = p.step_time_s > 0 ? p1->step_time_s / p.step_time_s * m / p1->m : 0;
  p.mfu = p1->mfu * scale;
  p.tokens_per_s = p1->tokens_per_s * scale;
  return p;
}

static void memory_of(prediction *p, const metrics *met, double capacity_gib)
{
  p->peak_gib = met->mem_peak_bytes / GIB;
  p->capacity_gib = capacity_gib;
  p->peak_stage = met->mem_peak_stage;
  p->fragmentation_limit = met->mem_fragmentation_limit;
  p->status = met->oom ? PRED_OOM : PRED_OK;
  if (met->oom)
    g_snprintf(p->error, sizeof p->error, "peak %.1f GiB on stage %d exceeds %.1f GiB", p->peak_gib,
               met->mem_peak_stage, capacity_gib);
}

static prediction invalid(GError *err)
{
  prediction p = {.status = PRED_INVALID};
  g_strlcpy(p.error, err->message, sizeof p.error);
  g_error_free(err);
  return p;
}

/* Whether rq (prepared) does not fit by its static memory alone, without a graph (docs/sweep.md, "Exact top-K"):
 * a stage's peak is static + dynamic + overhead(dynamic) (analysis/metrics.c), its static the generator's own
 * mem_static_bytes (workloads/generate.c sets each program's from it), its dynamic a walk's peak (never below 0)
 * and the overhead non-decreasing in it (fragmentation >= 0); so peak >= static + overhead(0), and where that is
 * above the capacity the walk's verdict is OOM whatever the activations. Then *p is that verdict with the peak
 * given as this lower bound (its error says "at least"). */
static gboolean static_oom(const sim_request *rq, prediction *p)
{
  if (rq->prof.stack.fragmentation < 0) return FALSE;
  partition part;
  if (!partition_make_for(&part, &rq->m, &rq->l, rq->gen.partition, NULL)) return FALSE;
  double worst = -1;
  int at = 0;
  for (int s = 0; s < rq->l.pp; s++) {
    double b = mem_static_bytes(&rq->m, &rq->l, &rq->gen.code, &part, s);
    if (b > worst) worst = b, at = s;
  }
  partition_clear(&part);
  double lower = worst + metrics_mem_overhead_bytes(&rq->prof, 0);
  if (!(lower > rq->capacity_gib * GIB)) return FALSE;
  p->status = PRED_OOM;
  p->peak_gib = lower / GIB;
  p->capacity_gib = rq->capacity_gib;
  p->peak_stage = at;
  p->fragmentation_limit = -G_MAXDOUBLE; /* no room even without activations */
  g_snprintf(p->error, sizeof p->error, "peak at least %.1f GiB on stage %d (its static memory and overheads, "
             "before any activation) exceeds %.1f GiB", p->peak_gib, at, rq->capacity_gib);
  return TRUE;
}

/* The memory verdict of rq at m micro-batches (0: its own count), from the graph at the count where the
 * schedule's peak is reached (1F1B: min(m, pp + 1)) (no SimGrid: the parent may call it). FALSE with *p invalid when the request fails.
 * With bound_s, a layout whose static memory alone does not fit is given static_oom's verdict without a graph. */
static gboolean memory_verdict(const sim_request *req, int m, prediction *p, double *bound_s)
{
  sim_request rq = *req;
  GError *err = NULL;
  if (!sim_request_prepare(&rq, &err)) goto fail;
  int own_m = rq.l.grad_accum; /* the step's micro-batches: what the bound is of */
  if (m > 0 && m != rq.l.grad_accum) {
    rq.l.global_batch = rq.l.dp * rq.l.micro_batch * m;
    if (!sim_request_prepare(&rq, &err)) goto fail;
  }
  *p = (prediction){.m = rq.l.grad_accum, .how = PRED_HOW_MEMORY};
  sim_request mrq = rq;
  int peak_m = sched_memory_micro_batches(rq.l.schedule, rq.l.pp, rq.l.grad_accum);
  mrq.l.global_batch = rq.l.dp * rq.l.micro_batch * MIN(rq.l.grad_accum, peak_m);
  if (!sim_request_prepare(&mrq, &err) || !sim_request_fits(&mrq, FALSE, &err)) goto fail;
  if (bound_s && static_oom(&mrq, p)) {
    *bound_s = 0;
    return TRUE;
  }
  graph *g = gen_graph(&mrq.m, &mrq.l, &mrq.gen, &err);
  if (!g) goto fail;
  metrics *mem = metrics_memory_only(g, &mrq.prof, mrq.capacity_gib);
  memory_of(p, mem, mrq.capacity_gib);
  metrics_free(mem);
  if (bound_s && p->status == PRED_OK) {
    plat_params pl = plat_params_of(&mrq.prof, mrq.l.gpus);
    *bound_s = bound_step(g, &mrq.prof, mrq.replay.platform_file ? NULL : &pl, &mrq.l, mrq.l.grad_accum, own_m).total_s;
  } else if (bound_s) *bound_s = 0;
  graph_free(g);
  return TRUE;
fail:
  *p = invalid(err);
  return FALSE;
}

/* The bound of req for exact top-K (docs/sweep.md, "Memory last"): unless work_only, where its static memory alone
 * does not fit, that verdict (*p OOM, how memory, *bound_s 0); else *p PRED_OK with how none (the verdict not yet
 * known: pool_verdict) and in *bound_s its bound (work_only: bound_step_work's), from its graph at one
 * micro-batch, the fewest any of its micro-batch sums need (bound.h), where the schedule takes one (else at the
 * memory verdict's count). FALSE with *p invalid when it fails. */
static gboolean bound_first(const sim_request *req, prediction *p, double *bound_s, gboolean work_only)
{
  sim_request rq = *req;
  GError *err = NULL;
  *bound_s = 0;
  if (!sim_request_prepare(&rq, &err)) goto fail;
  int own_m = rq.l.grad_accum;
  *p = (prediction){.m = own_m, .how = PRED_HOW_MEMORY};
  sim_request mrq = rq;
  int peak_m = MIN(own_m, sched_memory_micro_batches(rq.l.schedule, rq.l.pp, own_m));
  mrq.l.global_batch = rq.l.dp * rq.l.micro_batch * peak_m;
  if (!sim_request_prepare(&mrq, &err) || !sim_request_fits(&mrq, FALSE, &err)) goto fail;
  if (!work_only && static_oom(&mrq, p)) return TRUE; /* work_only: a class's, whose members' memory differs */
  sim_request brq = rq;
  brq.l.global_batch = rq.l.dp * rq.l.micro_batch;
  GError *one = NULL;
  if (peak_m > 1 && (!sim_request_prepare(&brq, &one) || !sim_request_fits(&brq, FALSE, &one))) brq = mrq;
  g_clear_error(&one);
  graph *g = gen_graph(&brq.m, &brq.l, &brq.gen, &err);
  if (!g) goto fail;
  plat_params pl = plat_params_of(&brq.prof, brq.l.gpus);
  *bound_s = (work_only ? bound_step_work : bound_step)(g, &brq.prof, brq.replay.platform_file ? NULL : &pl, &brq.l,
                                                         brq.l.grad_accum, own_m).total_s;
  graph_free(g);
  *p = (prediction){.status = PRED_OK, .how = PRED_HOW_NONE, .m = own_m};
  return TRUE;
fail:
  *p = invalid(err);
  return FALSE;
}

/* What a worker sends back for a job: its prediction, and for the fast path's stage check each stage's least time
 * in the step (stage_least_times); stages 0 where the layout has more than POOL_STAGES_MAX (the check then
 * refuses the line). */
#define POOL_STAGES_MAX 512
typedef struct job_result {
  prediction p;
  int stages;
  double least_s[POOL_STAGES_MAX];
} job_result;

/* Each stage's least time in the step (docs/sweep.md, "Where the line bends"), into least[stages]: of each of its
 * explicit ranks (a mirror runs its source's events), the time until it finished less its pipeline waits (its
 * work: compute, its own stage's collectives, the host's gaps between its kernels), plus the least time its
 * pipeline messages take, which are part of those waits: a rendezvous send or receive on stream 0 (1F1B's: not
 * eager, not a layer's message such as cp's ring) blocks its rank until the transfer has ended (sim/replay.c
 * run_comm: sg_mailbox_put/get), and a transfer moves at most at its route's slowest link's bandwidth (CM02, no
 * factors: platforms/cluster.cpp): between NVLink domains a NIC's ib_bytes_per_s, inside one NVLink's. No message
 * floor with a platform file (its links are not plat's). The least over the stage's explicit ranks. */
static void stage_least_times(const sim_outcome *o, const sim_request *rq, int stages, double *least)
{
  for (int s = 0; s < stages; s++) least[s] = -1;
  const graph *g = o->g;
  const plat_params *pl = &o->plat;
  int dom = pl->gpus_per_domain > 0 ? pl->gpus_per_domain : pl->gpus_per_node;
  for (guint r = 0; r < g->programs->len; r++) {
    const graph_program *prog = g_ptr_array_index(g->programs, r);
    if (!prog->events || prog->rank >= o->res->world_size) continue;
    int s = tl_stage_of(&o->tl, prog->rank);
    if (s < 0 || s >= stages) continue;
    double floor = 0;
    gboolean eager = FALSE;
    for (guint i = 0; i < prog->events->len && !rq->replay.platform_file; i++) {
      const graph_event *e = &g_array_index(prog->events, graph_event, i);
      if ((e->kind != EV_SEND && e->kind != EV_RECV) || (e->variant & GRAPH_P2P_LAYER) || e->stream != 0) continue;
      if (e->variant & GRAPH_P2P_EAGER) eager = TRUE; /* an eager schedule: its receives may find the data there */
      gboolean inside = dom > 0 && e->peer / dom == prog->rank / dom;
      double bw = inside ? MAX(pl->nvlink_bytes_per_s, pl->ib_bytes_per_s) : pl->ib_bytes_per_s;
      if (bw > 0 && e->peer >= 0) floor += e->bytes / bw;
    }
    if (eager) floor = 0;
    double t = o->res->ranks[prog->rank].finish_s - o->met->rank_seconds[(gsize)prog->rank * TL_N + TL_PP_WAIT] + floor;
    if (least[s] < 0 || t < least[s]) least[s] = t;
  }
  for (int s = 0; s < stages; s++) least[s] = MAX(least[s], 0);
}

/* Runs in the worker: the replay of rq at m micro-batches (0: its own count). */
static prediction run_job(const sim_request *req, int m, job_result *r)
{
  sim_request rq = *req;
  GError *err = NULL;
  if (!sim_request_prepare(&rq, &err)) return invalid(err);
  if (m > 0 && m != rq.l.grad_accum) rq.l.global_batch = rq.l.dp * rq.l.micro_batch * m;
  sim_outcome o = {0};
  if (!sim_run_layout(&rq, &o, &err)) {
    sim_outcome_clear(&o);
    return invalid(err);
  }
  const metrics *met = o.met;
  r->stages = met->stages <= POOL_STAGES_MAX ? met->stages : 0;
  stage_least_times(&o, &rq, r->stages, r->least_s);
  prediction p = {.m = rq.l.grad_accum, .how = PRED_HOW_FULL}; /* the memory verdict is the replay's own */
  memory_of(&p, met, rq.capacity_gib);
  p.step_time_s = met->step_time_s;
  p.tokens_per_s = met->tokens_per_s;
  p.mfu = met->mfu;
  p.bubble_fraction = met->bubble_fraction;
  p.energy_j = met->energy_j;
  memcpy(p.seconds, met->seconds, sizeof p.seconds);
  /* a server (zygote.h) runs the next job in this process: its heap is reused. A worker that exits after
   * this job does not free: the kernel takes the whole address space back at once (freeing piece by piece
   * took about 15% of bench/sweep.sh when every replay was a process) */
  if (replay_reusable()) sim_outcome_clear(&o);
  return p;
}

/* What the memory verdict depends on: the model, the layout, the generator and the profile's memory
 * (not its links or kernels), so that a platform sweep over bandwidths walks each layout once.
 * `symmetry` is the one the request's graph is generated with, as sim_request_prepare decides it (off
 * for shared NICs or uplinks, a platform file, a layout whose mirrors would not hold). The layout's part and the
 * stack's come from their own tables (layout.c's fields with the axes, stack.c's keys tagged for the memory):
 * a field added there is in the key without an edit here. Caller frees. */
char *pool_memory_key(const sim_request *rq, gboolean symmetry)
{
  const model *m = &rq->m;
  const gpu_profile *p = &rq->prof;
  g_autofree char *arch = model_arch_string(m);
  GString *k = g_string_new(NULL);
  g_string_append_printf(k, "%s %d %d %d %d %d %s|", m->name, m->layers, m->hidden, m->heads, m->ffn, m->vocab, arch);
  layout_memory_key(&rq->l, k);
  g_string_append_c(k, '|');
  stack_memory_key(&p->stack, k);
  g_string_append_printf(k, "|partition=%d symmetry=%d gpus_per_node=%d capacity=%.17g memory=%.17g",
                         rq->gen.partition, symmetry, p->gpus_per_node, rq->capacity_gib, p->memory_gib);
  return g_string_free(k, FALSE);
}

typedef struct job {
  guint req;
  int m;     /* micro-batches to simulate (0: the request's own) */
  int stage; /* 0: the only or the first run; 1: the fast path's second; 2: its check at 2 m2; 3: the full run
              * that replaces a fast path whose check failed */
} job;

/* A job as the zygote carries it: the request's bytes, then the strings its replay options point to
 * (their offsets after the struct; -1: NULL), so that the worker's copy points into the message. */
typedef struct packed_job {
  int m;
  int paje_at, log_at, platform_at;
  sim_request rq;
  char strings[];
} packed_job;

static int pack_string(GByteArray *b, const char *s)
{
  if (!s) return -1;
  int at = (int)(b->len - sizeof(packed_job));
  g_byte_array_append(b, (const guint8 *)s, (guint)strlen(s) + 1);
  return at;
}

static GByteArray *pack_job(const sim_request *rq, int m)
{
  GByteArray *b = g_byte_array_sized_new(sizeof(packed_job));
  packed_job head = {.m = m, .rq = *rq};
  g_byte_array_append(b, (const guint8 *)&head, sizeof head);
  int paje = pack_string(b, rq->replay.simgrid_paje_path), log = pack_string(b, rq->replay.log_threshold),
      platform = pack_string(b, rq->replay.platform_file);
  packed_job *pj = (packed_job *)b->data;
  pj->paje_at = paje;
  pj->log_at = log;
  pj->platform_at = platform;
  return b;
}

static void unpack_job(const packed_job *pj, sim_request *rq);

/* The memory a server keeps resident above which it exits after its job rather than hold it for the next. */
#define POOL_SERVER_KEEP_BYTES ((guint64)1 << 30)

/* This process's resident memory (0: unknown). Not malloc's heap size: SimGrid's actor stacks (8 MiB each,
 * a few pages of them touched) make the heap far larger than what is resident. */
static guint64 resident_bytes(void)
{
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, pages = 0;
  if (f && fscanf(f, "%llu %llu", &size, &pages) != 2) pages = 0;
  if (f) fclose(f);
  return (guint64)pages * (guint64)sysconf(_SC_PAGESIZE);
}

/* Runs in the worker (zygote_ops.run): the replay of the packed request at its m. TRUE when the process may
 * replay another: its prepared engine ended clean (replay_reusable) and it keeps less than a GiB resident. */
static gboolean run_packed(const void *bytes, size_t n, void *result, size_t result_bytes)
{
  g_assert(n >= sizeof(packed_job) && result_bytes == sizeof(job_result));
  const packed_job *pj = bytes;
  sim_request rq;
  unpack_job(pj, &rq);
  job_result *r = result; /* zeroed */
  r->p = run_job(&rq, pj->m, r);
  return replay_reusable() && resident_bytes() < POOL_SERVER_KEEP_BYTES;
}

static void unpack_job(const packed_job *pj, sim_request *rq)
{
  *rq = pj->rq;
  rq->replay.simgrid_paje_path = pj->paje_at < 0 ? NULL : pj->strings + pj->paje_at;
  rq->replay.log_threshold = pj->log_at < 0 ? NULL : pj->strings + pj->log_at;
  rq->replay.platform_file = pj->platform_at < 0 ? NULL : pj->strings + pj->platform_at;
}

/* A job's family (zygote.h): the platform it replays on, when it can be built before the job runs (not
 * with SimGrid's own trace or a platform file, which the replay sets up itself). */
static gboolean packed_family(const void *bytes, size_t n, char *key, size_t key_len)
{
  const packed_job *pj = bytes;
  if (n < sizeof *pj || pj->paje_at >= 0 || pj->platform_at >= 0 || pj->rq.l.gpus <= 0) return FALSE;
  plat_params pp = plat_params_of(&pj->rq.prof, pj->rq.l.gpus);
  char plat[PLAT_KEY_LEN];
  plat_key(&pp, plat, sizeof plat);
  return g_snprintf(key, key_len, "%s|%s", plat, pj->log_at < 0 ? "" : pj->strings + pj->log_at) < (gint)key_len;
}

/* In a family's zygote: SimGrid's engine and the family's platform, built once for all its workers. */
static void packed_prepare(const void *bytes, size_t n)
{
  sim_request rq;
  unpack_job(bytes, &rq);
  plat_params pp = plat_params_of(&rq.prof, rq.l.gpus);
  /* its servers run replay after replay (zygote.h): malloc keeps what they free, so that each replay reuses
   * the pages the ones before faulted in rather than returning them to the kernel (no trimming, no mmap
   * below glibc's largest threshold; a process has one arena: SimGrid's actors are not threads) */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  replay_prepare(&pp, &rq.replay); /* FALSE: nothing prepared, each worker builds its own */
}

zygote *pool_zygote_start(GError **err)
{
  zygote_ops ops = {.run = run_packed, .result_bytes = sizeof(job_result), .family = packed_family,
                    .prepare = packed_prepare};
  return zygote_start(&ops, err);
}

static void set_not_simulated(prediction *p)
{
  memset(p, 0, sizeof *p);
  p->status = PRED_INVALID; /* until a worker reports: never a zero taken for a prediction */
  g_strlcpy(p->error, "internal error: not simulated", sizeof p->error);
}

void pool_run(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out)
{
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(job)); /* jobs not started, in order */
  g_autofree prediction *first = g_new0(prediction, n ? n : 1);      /* the fast path's m1 run */
  g_autofree prediction *second = g_new0(prediction, n ? n : 1);     /* its m2 run, while its check runs */
  g_autofree double **first_least = g_new0(double *, n ? n : 1);     /* its m1 run's stages' least times */
  g_autofree int *fast_m = g_new0(int, n ? n : 1);                   /* m2 of the fast path; 0: not fast */
  g_autofree int *own_m = g_new0(int, n ? n : 1);                    /* the request's micro-batches */
  g_autofree gboolean *sym = g_new0(gboolean, n ? n : 1);            /* the symmetry its graph will have */
  long total = 0, done = 0;
  for (guint i = 0; i < n; i++) {
    if (!rqs[i]) continue;
    set_not_simulated(&out[i]);
    total++;
    job jb = {.req = i};
    int m1, m2;
    sim_request rq = *rqs[i];
    GError *err = NULL;
    gboolean valid = sim_request_prepare(&rq, &err);
    own_m[i] = valid ? rq.l.grad_accum : 0;
    sym[i] = rq.gen.symmetry;
    if (valid && !cfg->memory_only && pool_fast_counts_of(cfg->fidelity, &rq.l, rq.l.grad_accum, &m1, &m2)) {
      fast_m[i] = m2;
      jb.m = m1;
    }
    g_clear_error(&err);
    g_array_append_val(queue, jb);
  }
  /* the memory verdicts generate a graph each, here, one after the other: keep what malloc frees (no
   * trimming, no mmap of large blocks, which returns them to the kernel at free) and each graph reuses
   * the pages of the one before instead of faulting fresh ones in (bench/sweep.sh: 689,000 page faults
   * in this process -> 10,000, 1.8 s of CPU). The zygote is forked first: a worker's malloc keeps its
   * defaults (large blocks mapped, so a growing array is remapped rather than copied). */
  GError *zerr = NULL;
  zygote *own = cfg->zygote || cfg->memory_only ? NULL : pool_zygote_start(&zerr), *z = cfg->zygote ? cfg->zygote : own;
  if (cfg->prune_oom || cfg->memory_only) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's largest */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  }
  lsim_progress bar;
  lsim_progress_start(&bar, cfg->progress, total);
  g_autoptr(GHashTable) verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  int jobs = MAX(1, cfg->jobs);
  g_autofree job *running_job = g_new0(job, jobs); /* by slot */
  g_autofree guint64 *tag_of = g_new0(guint64, jobs); /* the slot's job's tag in the zygote */
  g_autofree gboolean *busy = g_new0(gboolean, jobs);
  int running = 0;
  guint next = 0;
  while (next < queue->len || running > 0) {
    while (next < queue->len && running < jobs) {
      const job *jb = &g_array_index(queue, job, next);
      if (jb->stage == 0 && (cfg->memory_only || cfg->prune_oom)) { /* the verdict first, here: no process */
        prediction p;
        g_autofree char *key = pool_memory_key(rqs[jb->req], sym[jb->req]);
        const prediction *known = g_hash_table_lookup(verdicts, key);
        gboolean ok = known ? known->status != PRED_INVALID : memory_verdict(rqs[jb->req], jb->m, &p, NULL);
        if (known) p = *known;
        else g_hash_table_insert(verdicts, g_steal_pointer(&key), g_memdup2(&p, sizeof p));
        if (!ok || cfg->memory_only || p.status == PRED_OOM) {
          if (p.status != PRED_INVALID) p.m = own_m[jb->req];
          out[jb->req] = p;
          next++;
          lsim_progress_update(&bar, ++done);
          continue;
        }
      }
      if (jb->stage == 0 && cfg->admit && !cfg->admit(cfg->ctx, jb->req)) { /* left out by the caller: not replayed */
        next++;
        lsim_progress_update(&bar, ++done);
        continue;
      }
      GError *err = z ? NULL : g_error_copy(zerr);
      int slot = 0;
      while (busy[slot]) slot++;
      g_autoptr(GByteArray) packed = z ? pack_job(rqs[jb->req], jb->m) : NULL;
      if (z && zygote_submit(z, packed->data, packed->len, &tag_of[slot])) {
        busy[slot] = TRUE;
        running_job[slot] = *jb;
        next++;
        running++;
        continue;
      }
      if (z) g_set_error(&err, LSIM_ERROR, LSIM_ERROR_IO, "cannot start a simulation process (%s)", g_strerror(errno));
      g_snprintf(out[jb->req].error, sizeof out[jb->req].error, "internal error: %s", err->message);
      g_error_free(err);
      next++;
      lsim_progress_update(&bar, ++done);
    }
    if (running == 0) break;
    guint64 tag;
    static job_result r; /* 4 KiB: not on the stack */
    const char *failed;
    char why[200];
    if (!zygote_collect(z, &tag, &r, &failed, why, sizeof why)) break; /* the zygote is gone: "not simulated" */
    prediction p = r.p;
    int slot = 0;
    while (slot < jobs && !(busy[slot] && tag_of[slot] == tag)) slot++;
    if (slot == jobs) continue; /* reported twice (zygote.h): no longer waited for */
    job jb = running_job[slot];
    busy[slot] = FALSE;
    running--;
    if (failed) {
      memset(&p, 0, sizeof p);
      p.status = PRED_INVALID;
      g_snprintf(p.error, sizeof p.error, "internal error: %s", failed);
    }
    if (fast_m[jb.req] && jb.stage == 0 && p.status != PRED_INVALID) {
      first[jb.req] = p; /* replayed at m1: now m2 */
      first_least[jb.req] = g_memdup2(r.least_s, sizeof(double) * (size_t)MAX(1, r.stages));
      job second = {.req = jb.req, .m = fast_m[jb.req], .stage = 1};
      g_array_append_val(queue, second);
      continue;
    }
    /* the checks (docs/sweep.md, "Where the line bends"): no stage's least time may grow faster than the line
     * (else it must bend), and a third run at 2 m2 must lie on it; else the step is replayed in full */
    if (fast_m[jb.req] && jb.stage == 1 && p.status != PRED_INVALID) {
      const prediction *a = &first[jb.req];
      gboolean ok = r.stages > 0 && pool_stages_within_slope(first_least[jb.req], r.least_s, r.stages,
                                                             a->step_time_s, a->m, p.step_time_s, p.m);
      g_clear_pointer(&first_least[jb.req], g_free);
      if (!ok) {
        job full = {.req = jb.req, .m = 0, .stage = 3};
        g_array_append_val(queue, full);
        continue;
      }
    }
    if (fast_m[jb.req] && jb.stage == 1 && p.status != PRED_INVALID && 2 * p.m < own_m[jb.req]) {
      second[jb.req] = p;
      job check = {.req = jb.req, .m = 2 * p.m, .stage = 2};
      g_array_append_val(queue, check);
      continue;
    }
    if (fast_m[jb.req] && jb.stage == 2 && p.status != PRED_INVALID) {
      const prediction *a = &first[jb.req], *b = &second[jb.req];
      if (!pool_affine_holds(a->step_time_s, a->m, b->step_time_s, b->m, p.step_time_s, p.m)) {
        job full = {.req = jb.req, .m = 0, .stage = 3};
        g_array_append_val(queue, full);
        continue;
      }
      p = pool_combine(a, b, own_m[jb.req]);
    }
    if (fast_m[jb.req] && jb.stage == 1 && p.status != PRED_INVALID) p = pool_combine(&first[jb.req], &p, own_m[jb.req]);
    if (p.status != PRED_INVALID) p.m = own_m[jb.req];
    out[jb.req] = p;
    if (cfg->finished) cfg->finished(cfg->ctx, jb.req, &p);
    lsim_progress_update(&bar, ++done);
  }
  zygote_stop(own);
  g_clear_error(&zerr);
  for (guint i = 0; i < n; i++) g_free(first_least[i]); /* a second run that failed left its first's */
  lsim_progress_finish(&bar);
}

static char *verdict_key(const sim_request *req, int m);

void pool_verdicts(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out, double *bound_s)
{
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* as pool_run's verdicts: each graph reuses the pages of the one before */
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  /* a verdict and its bound depend on the memory key, on the kernels' costs (the profile and stack) and, the
   * bound's communication term, on the links (the platform: what-if points differ there) */
  g_autoptr(GHashTable) known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < n; i++) {
    bound_s[i] = 0;
    if (!rqs[i]) continue;
    sim_request rq = *rqs[i];
    GError *err = NULL;
    int m = 0, m1, m2;
    gboolean valid = sim_request_prepare(&rq, &err); /* as pool_run: the verdict at the first replay's count */
    g_clear_error(&err);
    if (valid && pool_fast_counts_of(cfg->fidelity, &rq.l, rq.l.grad_accum, &m1, &m2)) m = m1;
    char *key = verdict_key(rqs[i], m);
    double *hit = g_hash_table_lookup(known, key);
    prediction p;
    double b = 0;
    if (hit) {
      memcpy(&p, hit + 1, sizeof p);
      b = hit[0];
      g_free(key);
    } else {
      memory_verdict(rqs[i], m, &p, &b);
      double *v = g_malloc(sizeof(double) + sizeof p);
      v[0] = b;
      memcpy(v + 1, &p, sizeof p);
      g_hash_table_insert(known, key, v);
    }
    if (p.status != PRED_INVALID && valid) p.m = rq.l.grad_accum;
    out[i] = p;
    bound_s[i] = b;
  }
}

/* The key of what a verdict and a bound depend on: the memory key, the kernels' costs (the profile and stack), the
 * micro-batch count m the verdict is taken at and, the bound's communication term, the links (the platform:
 * what-if points differ there). Caller frees. */
static char *verdict_key(const sim_request *req, int m)
{
  sim_request rq = *req;
  GError *err = NULL;
  sim_request_prepare(&rq, &err); /* as pool_run: the request's symmetry */
  g_clear_error(&err);
  g_autofree char *mkey = pool_memory_key(req, rq.gen.symmetry);
  char pkey[PLAT_KEY_LEN] = "file";
  if (!req->replay.platform_file) {
    plat_params pl = plat_params_of(&req->prof, req->l.gpus);
    plat_key(&pl, pkey, sizeof pkey);
  }
  return g_strdup_printf("%s|%s|%s|%s|%.17g|%.17g|%d|%s", mkey, req->prof.name, req->prof.stack.name, req->prof.stack.set,
                         req->prof.peak_flops, req->prof.peak_fp8_flops, m, pkey);
}

/* A request's class for bound_step_work: its verdict_key with ZeRO and both overlaps at one value (the
 * micro-batches' work is the same for each of them: bound.h). Caller frees. */
static char *work_key(const sim_request *req)
{
  sim_request c = *req;
  c.l.zero = 0;
  c.l.overlap_grad_reduce = c.l.overlap_param_gather = FALSE;
  return verdict_key(&c, -1);
}

/* Look key up in `known` (double bound, then its prediction); else compute it with bound_first and keep it. */
static double bound_cached(GHashTable *known, char *key, const sim_request *req, prediction *p, gboolean work_only)
{
  double *hit = g_hash_table_lookup(known, key);
  double b = 0;
  if (hit) {
    memcpy(p, hit + 1, sizeof *p);
    g_free(key);
    return hit[0];
  }
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* as pool_verdicts */
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  bound_first(req, p, &b, work_only);
  double *v = g_malloc(sizeof(double) + sizeof *p);
  v[0] = b;
  memcpy(v + 1, p, sizeof *p);
  g_hash_table_insert(known, key, v);
  return b;
}

void pool_bounds(sim_request *const *rqs, guint n, const pool_cfg *cfg, prediction *out, double *bound_s)
{
  (void)cfg;
  g_autoptr(GHashTable) known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < n; i++) {
    bound_s[i] = 0;
    if (!rqs[i]) continue;
    /* the static pre-check and validity are the layout's own; the bound its class's */
    prediction own;
    double b = 0;
    sim_request rq = *rqs[i];
    GError *err = NULL;
    if (!sim_request_prepare(&rq, &err)) {
      out[i] = invalid(err);
      continue;
    }
    int peak_m = MIN(rq.l.grad_accum, sched_memory_micro_batches(rq.l.schedule, rq.l.pp, rq.l.grad_accum));
    sim_request mrq = rq;
    mrq.l.global_batch = rq.l.dp * rq.l.micro_batch * peak_m;
    if (!sim_request_prepare(&mrq, &err) || !sim_request_fits(&mrq, FALSE, &err)) {
      out[i] = invalid(err);
      continue;
    }
    own = (prediction){.m = rq.l.grad_accum, .how = PRED_HOW_MEMORY};
    if (static_oom(&mrq, &own)) {
      out[i] = own;
      continue;
    }
    b = bound_cached(known, work_key(rqs[i]), rqs[i], &own, TRUE);
    if (own.status != PRED_OK) bound_first(rqs[i], &own, &b, TRUE); /* the class's first failed: its own */
    if (own.status == PRED_OK) own = (prediction){.status = PRED_OK, .how = PRED_HOW_NONE, .m = rq.l.grad_accum};
    out[i] = own;
    bound_s[i] = own.status == PRED_OK ? b : 0;
  }
}

double pool_bound(const sim_request *rq, GHashTable *cache)
{
  prediction p;
  return bound_cached(cache, verdict_key(rq, -1), rq, &p, FALSE);
}

prediction pool_verdict(const sim_request *req, const pool_cfg *cfg, GHashTable *cache)
{
  sim_request rq = *req;
  GError *err = NULL;
  int m = 0, m1, m2;
  gboolean valid = sim_request_prepare(&rq, &err); /* as pool_verdicts: the verdict at the first replay's count */
  g_clear_error(&err);
  if (valid && pool_fast_counts_of(cfg->fidelity, &rq.l, rq.l.grad_accum, &m1, &m2)) m = m1;
  char *key = verdict_key(req, m);
  prediction *hit = cache ? g_hash_table_lookup(cache, key) : NULL;
  prediction p;
  if (hit) {
    p = *hit;
    g_free(key);
  } else {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    memory_verdict(req, m, &p, NULL);
    if (cache) g_hash_table_insert(cache, key, g_memdup2(&p, sizeof p));
    else g_free(key);
  }
  if (p.status != PRED_INVALID && valid) p.m = rq.l.grad_accum;
  return p;
}
