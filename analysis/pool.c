/* pool -- see pool.h. Workers are forked before SimGrid is touched in the
 * parent; each writes one fixed-size `prediction` (smaller than PIPE_BUF,
 * so the write is atomic) to its pipe and exits. A fast request is two jobs,
 * the second started only once the first fits in memory. */
#include "pool.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "common/lsim_progress.h"
#include "workloads/schedule.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
G_STATIC_ASSERT(sizeof(prediction) < 4096); /* PIPE_BUF on Linux: one atomic write */

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
  if (!sched_get(l->schedule)->affine_counts(l->pp, l->virtual_stages, m1, m2)) return FALSE;
  /* the streams of ZeRO-2/3 and the overlaps (docs/schedules.md, "Overlap") are not shown affine: replayed whole */
  if (l->zero >= 2 || l->overlap_grad_reduce || l->overlap_param_gather) return FALSE;
  if (f == POOL_FULL) return FALSE;
  if (f == POOL_FAST) return m > *m2;
  return m > 2 * *m2; /* auto: gain at least 2x over simulating m micro-batches once */
}

double pool_extrapolate(double t1, int m1, double t2, int m2, int m)
{
  return t1 + (t2 - t1) * (double)(m - m1) / (double)(m2 - m1);
}

prediction pool_combine(const prediction *p1, const prediction *p2, int m)
{
  prediction p = *p1; /* memory, status: the m1 run's (the peak is reached by then) */
  p.how = PRED_HOW_FAST;
  p.m = m;
  p.m1 = p1->m;
  p.m2 = p2->m;
  p.step_time_s = pool_extrapolate(p1->step_time_s, p1->m, p2->step_time_s, p2->m, m);
  for (int c = 0; c < TL_N; c++) p.seconds[c] = pool_extrapolate(p1->seconds[c], p1->m, p2->seconds[c], p2->m, m);
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

/* The memory verdict of rq at m micro-batches (0: its own count), from the graph at the count where the
 * schedule's peak is reached (1F1B: min(m, pp + 1)) (no SimGrid: the parent may call it). FALSE with *p invalid when the request fails. */
static gboolean memory_verdict(const sim_request *req, int m, prediction *p)
{
  sim_request rq = *req;
  GError *err = NULL;
  if (!sim_request_prepare(&rq, &err)) goto fail;
  if (m > 0 && m != rq.l.grad_accum) {
    rq.l.global_batch = rq.l.dp * rq.l.micro_batch * m;
    if (!sim_request_prepare(&rq, &err)) goto fail;
  }
  *p = (prediction){.m = rq.l.grad_accum, .how = PRED_HOW_MEMORY};
  sim_request mrq = rq;
  int peak_m = sched_get(rq.l.schedule)->memory_micro_batches(rq.l.pp, rq.l.virtual_stages, rq.l.grad_accum);
  mrq.l.global_batch = rq.l.dp * rq.l.micro_batch * MIN(rq.l.grad_accum, peak_m);
  if (!sim_request_prepare(&mrq, &err) || !sim_request_fits(&mrq, FALSE, &err)) goto fail;
  graph *g = gen_graph(&mrq.m, &mrq.l, &mrq.gen, &err);
  if (!g) goto fail;
  metrics *mem = metrics_memory_only(g, &mrq.prof, mrq.capacity_gib);
  memory_of(p, mem, mrq.capacity_gib);
  metrics_free(mem);
  graph_free(g);
  return TRUE;
fail:
  *p = invalid(err);
  return FALSE;
}

/* Runs in the worker: the replay of rq at m micro-batches (0: its own count). */
static prediction run_job(const sim_request *req, int m)
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
  prediction p = {.m = rq.l.grad_accum, .how = PRED_HOW_FULL}; /* the memory verdict is the replay's own */
  memory_of(&p, met, rq.capacity_gib);
  p.step_time_s = met->step_time_s;
  p.tokens_per_s = met->tokens_per_s;
  p.mfu = met->mfu;
  p.bubble_fraction = met->bubble_fraction;
  p.energy_j = met->energy_j;
  memcpy(p.seconds, met->seconds, sizeof p.seconds);
  /* not freed: the worker exits as soon as the prediction is written, and the kernel takes the
   * whole address space back at once (freeing the graph and the replay's arrays piece by piece
   * took about 15% of bench/sweep.sh: 39 s -> 33-35 s) */
  return p;
}

/* What the memory verdict depends on: the model, the layout, the generator and the profile's memory
 * (not its links or kernels), so that a platform sweep over bandwidths walks each layout once.
 * Caller frees. */
static char *memory_key(const sim_request *rq)
{
  const model *m = &rq->m;
  const layout *l = &rq->l;
  const gpu_profile *p = &rq->prof;
  const stack_profile *st = &p->stack;
  g_autofree char *arch = model_arch_string(m);
  return g_strdup_printf("%s %d %d %d %d %d %s|%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d|%d %d %d|%d %.17g %.17g %.17g %.17g "
                         "%.17g|%g %g %g %g",
                         m->name, m->layers, m->hidden, m->heads, m->ffn, m->vocab, arch, l->gpus, l->tp, l->pp, l->cp, l->sp,
                         l->micro_batch, l->global_batch, l->seq_len, l->ckpt, l->attn, l->norm_kernel, l->zero, l->overlap_grad_reduce, l->overlap_param_gather,
                         l->schedule, l->virtual_stages, rq->gen.partition,
                         rq->gen.symmetry, p->nics_per_node < p->gpus_per_node, p->gpus_per_node, p->stack.cuda_context_gib,
                         p->stack.nccl_buffers_gib, p->stack.fragmentation, rq->capacity_gib, p->memory_gib,
                         st->mlp_in_gemms, st->fused_norm, st->grad_reduce_bytes, st->fused_softmax_batches);
}

typedef struct job {
  guint req;
  int m;     /* micro-batches to simulate (0: the request's own) */
  int stage; /* 0: the only or the first run; 1: the fast path's second */
} job;

typedef struct worker {
  pid_t pid;
  int fd;
  job jb;
} worker;

/* Fork a process that runs one job and writes its prediction into a pipe. FALSE (errno kept,
 * nothing left open) when the system refuses a pipe or a process: too many -j for its limits. */
static gboolean start_worker(worker *w, const sim_request *rq, const job *jb)
{
  int fds[2];
  if (pipe(fds) != 0) return FALSE;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    errno = e;
    return FALSE;
  }
  if (pid == 0) {
    close(fds[0]);
    prediction p = run_job(rq, jb->m);
    ssize_t n = write(fds[1], &p, sizeof p);
    _exit(n == (ssize_t)sizeof p ? 0 : 1);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->jb = *jb;
  return TRUE;
}

static prediction finish_worker(worker *w, int status)
{
  prediction p;
  ssize_t n = read(w->fd, &p, sizeof p);
  close(w->fd);
  if (n == (ssize_t)sizeof p) return p;
  memset(&p, 0, sizeof p);
  p.status = PRED_INVALID;
  if (WIFSIGNALED(status))
    g_snprintf(p.error, sizeof p.error, "internal error: simulation died (signal %d)", WTERMSIG(status));
  else g_snprintf(p.error, sizeof p.error, "internal error: simulation exited with status %d", WEXITSTATUS(status));
  return p;
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
  g_autofree int *fast_m = g_new0(int, n ? n : 1);                   /* m2 of the fast path; 0: not fast */
  g_autofree int *own_m = g_new0(int, n ? n : 1);                    /* the request's micro-batches */
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
    if (valid && !cfg->memory_only && pool_fast_counts_of(cfg->fidelity, &rq.l, rq.l.grad_accum, &m1, &m2)) {
      fast_m[i] = m2;
      jb.m = m1;
    }
    g_clear_error(&err);
    g_array_append_val(queue, jb);
  }
  lsim_progress bar;
  lsim_progress_start(&bar, cfg->progress, total);
  g_autoptr(GHashTable) verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  int jobs = MAX(1, cfg->jobs);
  g_autofree worker *ws = g_new0(worker, jobs);
  int running = 0;
  guint next = 0;
  while (next < queue->len || running > 0) {
    while (next < queue->len && running < jobs) {
      const job *jb = &g_array_index(queue, job, next);
      if (jb->stage == 0 && (cfg->memory_only || cfg->prune_oom)) { /* the verdict first, here: no process */
        prediction p;
        g_autofree char *key = memory_key(rqs[jb->req]);
        const prediction *known = g_hash_table_lookup(verdicts, key);
        gboolean ok = known ? known->status != PRED_INVALID : memory_verdict(rqs[jb->req], jb->m, &p);
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
      int slot = 0;
      while (ws[slot].pid) slot++;
      if (start_worker(&ws[slot], rqs[jb->req], jb)) {
        next++;
        running++;
        continue;
      }
      if (running > 0) break; /* out of processes or descriptors: wait for one to finish, then retry */
      g_snprintf(out[jb->req].error, sizeof out[jb->req].error,
                 "internal error: cannot start a simulation process (%s)", g_strerror(errno));
      next++;
      lsim_progress_update(&bar, ++done);
    }
    if (running == 0) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) { /* no child to wait for: the requests still running keep "not simulated" */
      for (int i = 0; i < jobs; i++)
        if (ws[i].pid) close(ws[i].fd);
      break;
    }
    for (int i = 0; i < jobs; i++) {
      if (ws[i].pid != pid) continue;
      job jb = ws[i].jb;
      prediction p = finish_worker(&ws[i], status);
      ws[i].pid = 0;
      running--;
      if (fast_m[jb.req] && jb.stage == 0 && p.status != PRED_INVALID) {
        first[jb.req] = p; /* replayed at m1: now m2 */
        job second = {.req = jb.req, .m = fast_m[jb.req], .stage = 1};
        g_array_append_val(queue, second);
        continue;
      }
      if (fast_m[jb.req] && jb.stage == 1 && p.status != PRED_INVALID) p = pool_combine(&first[jb.req], &p, own_m[jb.req]);
      if (p.status != PRED_INVALID) p.m = own_m[jb.req];
      out[jb.req] = p;
      lsim_progress_update(&bar, ++done);
    }
  }
  lsim_progress_finish(&bar);
}
