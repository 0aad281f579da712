/* replay -- see replay.h.
 *
 * Each rank's actor walks its program. Runs of consecutive compute events
 * become one execution of their summed duration (exact: a GPU runs one
 * kernel at a time and nothing else competes for the host), which keeps
 * the number of SimGrid activities low. Latency terms a collective owes
 * (collective.h) are carried as a pending delay and paid before the next
 * event. A mirror rank waits on a semaphore its source releases when it
 * reaches the mirror's active_from event.
 *
 * Streams (graph.h): a rank whose program uses streams 1, 2 runs each with an
 * actor on its host, a *lane* beside the compute stream's; each lane walks its
 * stream's events in program order and pays its own pending latencies. An
 * event with a dependency waits, after the latencies its lane owes, until its
 * lane's rank has marked the awaited event ended (the rank's list of waiting
 * lanes, each woken by a semaphore of its own: actors run one at a time and
 * switch only in SimGrid's calls, so no lock); an event someone waits for ends
 * its compute run and marks it. Compute
 * on both lanes shares the GPU host (SimGrid splits its speed). A streamed
 * rank's collectives are simulated unless no flow of its other lanes can meet
 * their links (setup_lone's streamed_alone): then a lone one is a sleep of its
 * flows' time alone, not joined to the compute around it (a flow is not slowed
 * by the GPU's other lane) -- unless no other lane can hold the GPU by then (no
 * compute, no SMs held: gpu_alone_to), when it joins the compute as a
 * non-streamed rank's.
 * Such a rank's stream made only of lone collectives that wait for stream 0
 * and are waited for by it (NeMo's tensor-parallel overlap) has no actor: lane
 * 0 times its events inline where it reaches them and waits for them inline
 * (setup_absorbed, run_absorbed; docs/sweep.md "Absorbed lanes"), the same
 * times with a fraction of the SimGrid activities.
 */
#include "replay.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/instr.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/config.h>
#include <xbt/asserts.h>
#include <xbt/log.h>

#include "collective.h"
#include "common/lsim_error.h"
#include "common/lsim_outfile.h"
#include "platforms/kernel_cost.h"
#include "straggler.h"
#include "platforms/topology.h"
#include "platforms/fabric.h"

XBT_LOG_NEW_DEFAULT_CATEGORY(layoutsim_replay, "layoutsim graph replay");

typedef struct rank_rt rank_rt;

/* One stream of a rank as an actor walks it. */
typedef struct lane {
  rank_rt *r;
  int s;           /* the stream */
  double pending_s;
  double host_s;   /* when the host has issued every event of the lane up to the current one (host_issue) */
  int cur;         /* event being executed, for deadlock reports; -1 once the lane finished */
  sg_sem_t wake;   /* lane 1 of a mirror: released with the mirror's own */
  sg_sem_t dep;    /* a streamed rank's lane: released when the event it waits for ended (wait_dep) */
  int want_s, want_i; /* while it waits: the stream and the event */
  double free_s;   /* a lane absorbed into lane 0 (rank_rt.absorbed): when its last event ended */
  sg_sem_t resume; /* a lane absorbed in part: released when lane 0 has passed rank_rt.gpu_alone_to */
} lane;

/* The engine's state for one run: the only mutable global of layoutsim. */
typedef struct engine {
  const graph *g;
  const gpu_profile *prof;
  const plat_params *pp;
  gboolean tracing;
  rank_rt *ranks;
  coll_group *groups; /* per group id */
  int *lone;          /* per group id: the position of its one member with an actor whose hops no other
                       * rank's traffic can meet (coll_alone_seconds computes them), or -1 */
  int *lone_absorbed; /* per group id: a lone group called on stream 0 and this stream, which its member must
                       * absorb (setup_absorbed; streamed_alone_two), or 0 */
  coll_tune tune;     /* how the groups' algorithms are chosen */
  double straggler;   /* compute's expected slowdown waiting for the slowest GPU (sim/straggler.h) */
  gboolean routes_known; /* the built platform (topo_route gives its routes), not a --platform-file */
  int *calls;         /* per group, collective and algorithm: calls (replay_result.coll_algos) */
} engine;

struct rank_rt {
  engine *eng;
  int rank;
  sg_host_t host;
  const graph_program *prog;
  const graph_event *ev;
  int n, first;
  int active; /* 0 while a mirror waits for its source */
  sg_sem_t wake;
  GPtrArray *mirrors; /* rank_rt* whose source is this rank, by active_from */
  guint next_mirror;
  lane lanes[GRAPH_STREAMS];
  int n_lanes, lanes_left; /* lanes with an actor; those not finished */
  double fin_s;            /* the latest end of a finished lane */
  /* streamed programs (graph_program_streamed), an explicit rank's own, a mirror's its source's; NULL
   * otherwise: per event the event it waits for (-1: none) and whether an event waits for it */
  int *dep;
  guint8 *wanted; /* per event: the streams (bits) of the events that wait for it */
  int gpu_alone_to; /* a streamed rank's: to this event of its program, no other lane than lane 0 holds the GPU
                     * (setup_absorbed); -1: none */
  guint8 absorbed;   /* streams (bits) whose events lane 0 runs inline, without an actor: setup_absorbed */
  /* with mirrors in the graph (else NULL): per event of the program (an explicit rank's own, a mirror's its
   * source's), a collective's ordinal among the program's calls on its group (coll_ordinals) */
  int *ord;
  /* a mirror: per group it runs (its own ids), the calls on it before its active_from (coll_ordinals) */
  int n_before;
  int *before_gid, *before_calls;
  int last_of[GRAPH_STREAMS]; /* per stream: its last event, -1: none */
  int done[GRAPH_STREAMS]; /* per stream: the latest waited-for event this rank has ended */
  GPtrArray *waiting; /* a streamed rank's: the lanes (its own, its mirrors') waiting for its events, in order */
  replay_rank *out;
  struct p2p_box { /* the point-to-point mailboxes this rank used: p2p_mailbox */
    int src, dst, grad;
    sg_mailbox_t mailbox;
  } p2p[8];
  int n_p2p;
  gboolean p2p_overflow; /* it used more than p2p holds */
};

static int payload;

static gboolean dormant(const engine *eng, const rank_rt *rt);

/* Whether lane 0 runs event i of r inline (setup_absorbed): an event of an absorbed stream up to gpu_alone_to (a
 * mirror's event before its active_from: as its source ran it). */
static gboolean absorbed_at(const rank_rt *r, int i)
{
  if (!r->absorbed) return FALSE;
  if (i < r->first && r->prog->mirror_of >= 0) r = &r->eng->ranks[r->prog->mirror_of];
  return (r->absorbed >> r->ev[i].stream & 1u) && i <= r->gpu_alone_to;
}

/* Whether a lane with an actor waits for event i of r: an absorbed stream's events up to gpu_alone_to wait
 * inline, those after it (absorbed in part) for events from gpu_alone_to on (setup_absorbed). */
static gboolean wanted_live(const rank_rt *r, int i)
{
  return r->wanted && ((r->wanted[i] & ~r->absorbed) || (i >= r->gpu_alone_to && (r->wanted[i] & r->absorbed)));
}

static int mirror_cmp(gconstpointer a, gconstpointer b)
{
  const rank_rt *x = *(rank_rt *const *)a, *y = *(rank_rt *const *)b;
  return x->prog->active_from - y->prog->active_from;
}

static void wake_mirrors(rank_rt *r, int index)
{
  while (r->mirrors && r->next_mirror < r->mirrors->len) {
    rank_rt *m = g_ptr_array_index(r->mirrors, r->next_mirror);
    if (m->prog->active_from > index) break;
    m->active = 1;
    sg_sem_release(m->wake);
    for (int s = 1; s < GRAPH_STREAMS; s++)
      if (m->lanes[s].wake) sg_sem_release(m->lanes[s].wake);
    r->next_mirror++;
  }
}

static void flush_pending(lane *l)
{
  if (l->pending_s > 0) sg_actor_sleep_for(l->pending_s);
  l->pending_s = 0;
}

/* The rank that ends event i of r's program: a mirror's source before its active_from. */
static rank_rt *ender_of(rank_rt *r, int i)
{
  return i < r->first && r->prog->mirror_of >= 0 ? &r->eng->ranks[r->prog->mirror_of] : r;
}

/* Before event i of lane l: wait (after the latencies the lane owes) until the event it depends on ended. */
static void wait_dep(lane *l, int i)
{
  rank_rt *r = l->r;
  int d = r->dep ? r->dep[i] : -1;
  if (d < 0 || absorbed_at(r, i)) return; /* an absorbed event's: inline (run_absorbed) */
  rank_rt *o = ender_of(r, d);
  if (absorbed_at(r, d)) { /* timed already (lane 0 reached it first): its end */
    flush_pending(l);
    double now = simgrid_get_clock();
    if (o->out->end_s[d] > now) sg_actor_sleep_for(o->out->end_s[d] - now);
    return;
  }
  int t = r->ev[d].stream;
  if (o->done[t] >= d) return;
  flush_pending(l);
  if (o->done[t] >= d) return;
  /* actors run one at a time and switch only in SimGrid's calls: a list and a semaphore, no lock */
  l->want_s = t;
  l->want_i = d;
  g_ptr_array_add(o->waiting, l);
  sg_sem_acquire(l->dep);
}

/* After event i of lane l: mark it ended if some event waits for it. */
static void mark_ended(lane *l, int i)
{
  rank_rt *r = l->r;
  if (!wanted_live(r, i)) return;
  flush_pending(l);
  r->done[l->s] = i;
  for (guint k = 0; k < r->waiting->len;) { /* wake, in the order they began to wait, those whose event ended */
    lane *w = g_ptr_array_index(r->waiting, k);
    if (r->done[w->want_s] < w->want_i) {
      k++;
      continue;
    }
    g_ptr_array_remove_index(r->waiting, k);
    sg_sem_release(w->dep);
  }
}

/* SimGrid's Paje state of an event (--paje-simgrid): its category, by the timeline's rule (workloads/category.h);
 * tests/test_traces.c checks that SimGrid's trace and the timeline agree per category. */
static const char *trace_state(const graph *g, const graph_event *e) { return tl_cat_name(tl_category(g, e)); }

/* Set the GPU state of r's host and of every mirror of r still passive: a
 * passive mirror does exactly what its source does (graph.h), so its trace
 * is the source's until it becomes active and sets its own states. States
 * are set, not pushed, so that with "idle" between events they tile the
 * step: per host the state durations add up to the step time. */
static void trace_set(rank_rt *r, const char *value)
{
  if (!r->eng->tracing) return;
  TRACE_host_set_state(sg_host_get_name(r->host), "gpu", value);
  if (!r->mirrors) return;
  for (guint k = r->next_mirror; k < r->mirrors->len; k++) {
    rank_rt *m = g_ptr_array_index(r->mirrors, k);
    TRACE_host_set_state(sg_host_get_name(m->host), "gpu", value);
  }
}

static void trace_push(rank_rt *r, const graph_event *e) { trace_set(r, trace_state(r->eng->g, e)); }

static void trace_pop(rank_rt *r) { trace_set(r, "idle"); }

/* Whether event i of r is a collective r runs alone on links nobody else uses (engine.lone, which
 * leaves out traced runs and ranks with a communication stream): its time needs no simulation, so it
 * joins the compute around it in one execution. */
static gboolean lone_member(const rank_rt *r, int i);

static gboolean lone_collective(const rank_rt *r, int i)
{
  const graph_event *e = &r->ev[i];
  /* a streamed rank's on stream 0 joins the compute where no other lane holds the GPU (the execution is then
   * alone on the host, so its seconds are exact); elsewhere run_comm sleeps it */
  if (e->kind != EV_COLLECTIVE || (r->dep && (e->stream != 0 || i > r->gpu_alone_to))) return FALSE;
  return lone_member(r, i);
}

/* Whether r is the lone member (engine.lone) of the group of its collective event i. */
static gboolean lone_member(const rank_rt *r, int i)
{
  const graph_event *e = &r->ev[i];
  int gid = graph_group_for(r->prog, e->peer), pos = r->eng->lone[gid];
  if (pos < 0) return FALSE;
  const graph_group *gr = g_ptr_array_index(r->eng->g->groups, gid);
  return g_array_index(gr->ranks, int, pos) == r->rank;
}

/* Last index (exclusive) of the run of compute events (and lone collectives) of lane l from i that no
 * mirror activation splits, nor an event of another stream, one that waits or one waited for. */
static int compute_run_end(lane *l, int i)
{
  rank_rt *r = l->r;
  int stop = r->n;
  if (r->mirrors && r->next_mirror < r->mirrors->len)
    stop = ((rank_rt *)g_ptr_array_index(r->mirrors, r->next_mirror))->prog->active_from;
  int j = i;
  while (j < r->n && (r->ev[j].kind == EV_COMPUTE || lone_collective(r, j) || absorbed_at(r, j)) && (j == i || j < stop) &&
         (!r->dep || j == i ||
          ((r->ev[j].stream == l->s || (l->s == 0 && absorbed_at(r, j))) &&
           (r->dep[j] < 0 || (absorbed_at(r, r->dep[j]) && j <= r->gpu_alone_to)) &&
           !wanted_live(r, j - 1))))
    j++;
  if (r->eng->tracing) return i + 1; /* one state per event in traces */
  return j;
}

/* The seconds of event k of a run: a kernel's cost, or a lone collective's whole time. */
/* The algorithm of collective event e of group gid, counted once per call when `count`. */
static coll_algo algo_of(engine *eng, int gid, const graph_event *e, gboolean count)
{
  coll_algo a = coll_choose(&eng->groups[gid], (graph_coll)e->variant, e->bytes);
  if (count) eng->calls[((gsize)gid * COLL_N + e->variant) * COLL_ALGO_N + a]++;
  return a;
}

static double run_event_seconds(rank_rt *r, int k)
{
  const graph_event *e = &r->ev[k];
  if (e->kind == EV_COMPUTE) return kcost_seconds_in(r->eng->prof, e, r->eng->g->meta.cuda_graph) * r->eng->straggler;
  int gid = graph_group_for(r->prog, e->peer);
  return coll_alone_seconds(algo_of(r->eng, gid, e, TRUE), (graph_coll)e->variant, &r->eng->groups[gid],
                            r->eng->lone[gid], e->bytes, r->eng->prof->stack.nccl_step_latency_s);
}

/* The host issues the GPU's work in program order, host_dispatch_s per kernel launch, and runs ahead of the
 * GPU while the kernels take longer than their dispatch: a kernel starts once the GPU is free and the host
 * has issued it (l->host_s, the time the host has issued everything of the lane up to here: a stream's
 * events are issued in its own order). */
/* Whether the host issues the kernels one by one; a captured CUDA graph is launched once for the step. */
static gboolean host_dispatched(const engine *eng) { return eng->prof->stack.host_dispatch_s > 0 && !eng->g->meta.cuda_graph; }

/* With launch_blocking (CUDA_LAUNCH_BLOCKING=1) a launch returns when its work has ended, so the host issues the
 * next kernel only after the GPU's current time `now`: each of an event's launches costs its dispatch in series
 * with the GPU, the event e.launches x host_dispatch_s on top of its own time. A partial CUDA graph's kernels are
 * not issued one by one: its first event issues the graph's one launch (graph_event_launches_issued). */
static double host_issue(lane *l, const graph_event *e, double now)
{
  const stack_profile *st = &l->r->eng->prof->stack;
  if (st->launch_blocking && l->host_s < now) l->host_s = now;
  l->host_s += (e->kind == EV_COMPUTE ? graph_event_launches_issued(e) : 1) * st->host_dispatch_s;
  return l->host_s;
}

/* Lone collective e of r (engine.lone), group gid: the wait for its flows alone, and in *owed what coll_run returns
 * after them (coll_alone_wait_seconds), its algorithm counted once. */
static double lone_wait(rank_rt *r, const graph_event *e, int gid, double *owed)
{
  engine *eng = r->eng;
  return coll_alone_wait_seconds(algo_of(eng, gid, e, TRUE), (graph_coll)e->variant, &eng->groups[gid], eng->lone[gid],
                                 e->bytes, eng->prof->stack.nccl_step_latency_s, owed);
}

/* Absorbed event x of r (setup_absorbed): a lone collective of a stream without an actor, timed as that stream's
 * lane would run it (lane_main, run_comm): from the later of its stream's last end and its dependency's end (an
 * event of stream 0, already timed), after the host has issued it, for its flows' time alone and the latency it
 * owes. Nothing else can meet its links (engine.lone) and it holds no SM, so no simulation is needed. */
static void run_absorbed(rank_rt *r, int x)
{
  const graph_event *e = &r->ev[x];
  engine *eng = r->eng;
  lane *v = &r->lanes[e->stream];
  double now = v->free_s;
  int d = r->dep[x];
  if (d >= 0) now = MAX(now, ender_of(r, d)->out->end_s[d]);
  if (host_dispatched(eng)) {
    double wait = host_issue(v, e, now) - now;
    if (wait > 0) now += wait;
  }
  double owed, wait = lone_wait(r, e, graph_group_for(r->prog, e->peer), &owed);
  r->out->start_s[x] = now;
  v->free_s = now + MAX(wait, 0) + owed;
  r->out->end_s[x] = v->free_s;
  if (eng->prof->stack.launch_blocking && v->host_s < v->free_s) v->host_s = v->free_s;
}

static int run_compute(lane *l, int i)
{
  rank_rt *r = l->r;
  int j = compute_run_end(l, i);
  gboolean traced = r->eng->tracing && l->s == 0; /* SimGrid's trace draws stream 0 */
  if (r->eng->tracing) flush_pending(l); /* the state must start where the event starts */
  double t = simgrid_get_clock() + l->pending_s, total = l->pending_s;
  for (int k = i; k < j; k++) {
    if (absorbed_at(r, k)) { /* on its own stream, beside this one: its times only */
      run_absorbed(r, k);
      continue;
    }
    int dk = r->dep ? r->dep[k] : -1;
    if (dk >= 0 && absorbed_at(r, dk)) { /* the GPU waits for an absorbed event, as wait_dep would */
      double end = ender_of(r, dk)->out->end_s[dk];
      if (end > t) {
        total += end - t;
        t = end;
      }
    }
    double d = run_event_seconds(r, k), wait = host_dispatched(r->eng) ? host_issue(l, &r->ev[k], t) - t : 0;
    if (wait > 0) { /* the GPU waits for the host */
      t += wait;
      total += wait;
    }
    r->out->start_s[k] = t;
    t += d;
    total += d;
    r->out->end_s[k] = t;
  }
  l->pending_s = 0;
  double t0 = simgrid_get_clock();
  if (traced) {
    trace_push(r, &r->ev[i]);
    sg_actor_execute(total * sg_host_get_speed(r->host));
    trace_pop(r);
  } else if (total > 0) {
    sg_actor_execute(total * sg_host_get_speed(r->host)); /* the kernel model's seconds, on any host's speed */
  }
  /* slower than its seconds where a flex all-to-all held SMs beside it (run_comm): its events' times stretched
   * evenly over the time it took */
  double took = simgrid_get_clock() - t0;
  if (total > 0 && took > total * (1 + 1e-12))
    for (int k = i; k < j; k++) {
      r->out->start_s[k] = t0 + (r->out->start_s[k] - t0) * took / total;
      r->out->end_s[k] = t0 + (r->out->end_s[k] - t0) * took / total;
    }
  return j;
}

/* The FIFO of messages from src to dst: one per channel (graph.h, GRAPH_P2P_GRAD_CHANNEL). r keeps the
 * few it uses (a pipeline rank talks to its two neighbours), so that a message costs no name to format
 * and look up: the same mailbox either way. */
static sg_mailbox_t p2p_mailbox(rank_rt *r, int src, int dst, const graph_event *e)
{
  int grad = (e->variant & GRAPH_P2P_GRAD_CHANNEL) != 0;
  for (int k = 0; k < r->n_p2p; k++)
    if (r->p2p[k].src == src && r->p2p[k].dst == dst && r->p2p[k].grad == grad) return r->p2p[k].mailbox;
  char name[48];
  snprintf(name, sizeof name, grad ? "p%d.%d.g" : "p%d.%d", src, dst);
  sg_mailbox_t mb = sg_mailbox_by_name(name);
  if (r->n_p2p < (int)G_N_ELEMENTS(r->p2p))
    r->p2p[r->n_p2p++] = (struct p2p_box){.src = src, .dst = dst, .grad = grad, .mailbox = mb};
  else
    r->p2p_overflow = TRUE;
  return mb;
}

/* Whether rank rt is passive in the call of ordinal `ordinal` on group gid (its own id). */
static gboolean passive_in(const rank_rt *rt, int gid, int ordinal)
{
  for (int k = 0; k < rt->n_before; k++)
    if (rt->before_gid[k] == gid) return ordinal < rt->before_calls[k];
  return FALSE;
}

/* A pipeline send between nodes at the stack's p2p_bw_efficiency_ib instead of the collectives' efficiency, which the
 * links carry (plat_params): its bytes scaled by their ratio (1 within a node or with the key at 0). */
static double p2p_slowdown(const rank_rt *r, const graph_event *e)
{
  const stack_profile *st = &r->eng->prof->stack;
  if (st->p2p_bw_efficiency_ib <= 0 || topo_host_of(r->eng->pp, r->rank) == topo_host_of(r->eng->pp, e->peer)) return 1;
  return st->nccl_bw_efficiency_ib / st->p2p_bw_efficiency_ib;
}

static void run_comm(lane *l, int i)
{
  rank_rt *r = l->r;
  const graph_event *e = &r->ev[i];
  if (host_dispatched(r->eng)) { /* issued by the host like a kernel */
    double now = simgrid_get_clock() + l->pending_s, wait = host_issue(l, e, now) - now;
    if (wait > 0) l->pending_s += wait;
  }
  flush_pending(l);
  r->out->start_s[i] = simgrid_get_clock();
  if (l->s == 0) trace_push(r, e);
  if (e->kind == EV_SEND && (e->variant & GRAPH_P2P_EAGER)) /* an isend: the receiver waits for the data */
    sg_comm_detach(sg_mailbox_put_init(p2p_mailbox(r, r->rank, e->peer, e), &payload, (long)e->bytes), NULL);
  else if (e->kind == EV_SEND) sg_mailbox_put(p2p_mailbox(r, r->rank, e->peer, e), &payload, (long)(e->bytes * p2p_slowdown(r, e)));
  else if (e->kind == EV_RECV) sg_mailbox_get(p2p_mailbox(r, e->peer, r->rank, e));
  else {
    int gid = graph_group_for(r->prog, e->peer);
    const graph_group *gr = g_ptr_array_index(r->eng->g->groups, gid);
    /* the flex dispatcher's kernels on a communication stream hold their SMs from the compute beside them: an
     * execution on the rank's host bounded at their share, for as long as the all-to-all runs (SimGrid shares the
     * host max-min: the compute gets the rest while it runs) */
    sg_exec_t held = NULL;
    if (l->s != 0 && r->eng->groups[gid].flex_sm_share > 0) {
      held = sg_actor_exec_init(1e30);
      sg_exec_set_host(held, r->host);
      sg_exec_set_bound(held, r->eng->groups[gid].flex_sm_share * sg_host_get_speed(r->host));
      sg_exec_start(held);
    }
    int me = -1;
    for (guint k = 0; k < gr->ranks->len; k++)
      if (g_array_index(gr->ranks, int, k) == r->rank) me = (int)k;
    xbt_assert(me >= 0, "rank %d runs a collective of group %d it is not a member of", r->rank, gid);
    /* A member is passive for this call iff it is a mirror that has not reached its active part, whichever
     * explicit program it mirrors: the call's ordinal among the group's calls (the same on every member,
     * whatever its program's indices) against the calls the mirror leaves to its source (coll_ordinals). */
    if (r->eng->lone[gid] == me) { /* a streamed rank's lone collective (setup_lone): coll_run's flows alone, slept */
      double owed, wait = lone_wait(r, e, gid, &owed);
      if (wait > 0) sg_actor_sleep_for(wait);
      l->pending_s += owed;
    } else {
      g_autofree int *active = g_new(int, gr->ranks->len);
      int ordinal = r->ord ? r->ord[i] : 0;
      for (guint k = 0; k < gr->ranks->len; k++)
        active[k] = !passive_in(&r->eng->ranks[g_array_index(gr->ranks, int, k)], gid, ordinal);
      int first_active = 0;
      while (!active[first_active]) first_active++;
      coll_algo a = algo_of(r->eng, gid, e, first_active == me);
      l->pending_s += coll_run(a, (graph_coll)e->variant, &r->eng->groups[gid], active, me, e->bytes,
                               r->eng->prof->stack.nccl_step_latency_s);
    }
    if (r->eng->tracing || held) flush_pending(l);
    if (held) sg_exec_cancel(held);
  }
  if (l->s == 0) trace_pop(r);
  r->out->end_s[i] = simgrid_get_clock() + l->pending_s;
  /* a pipeline send or receive returns to the host when it completes (DeepSpeed's engine, Megatron's p2p); a
   * layer's message (GRAPH_P2P_LAYER) is ordered on the stream, as a collective, and the host runs ahead */
  if (((e->kind == EV_SEND || e->kind == EV_RECV) && !(e->variant & GRAPH_P2P_LAYER)) || r->eng->prof->stack.launch_blocking)
    if (l->host_s < r->out->end_s[i]) l->host_s = r->out->end_s[i]; /* launch_blocking: every call returns at its end */
}

/* The first event of lane l's stream from i on (r->n: none). */
static int lane_next(const lane *l, int i)
{
  const rank_rt *r = l->r;
  if (!r->dep) return i; /* one stream */
  /* lane 0 also takes the absorbed events; a lane absorbed in part only those after them */
  while (i < r->n && (r->ev[i].stream == l->s ? l->s != 0 && absorbed_at(r, i) : !(l->s == 0 && absorbed_at(r, i)))) i++;
  return i;
}

static void lane_main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  lane *l = sg_actor_self_get_data();
  rank_rt *r = l->r;
  if (!r->active) sg_sem_acquire(l->s == 0 ? r->wake : l->wake);
  if (l->s == 0)
    for (int s = 1; s < GRAPH_STREAMS; s++) r->lanes[s].free_s = simgrid_get_clock(); /* absorbed lanes start too */
  else if (r->absorbed >> l->s & 1u) { /* absorbed in part: on from where lane 0 left its events */
    sg_sem_acquire(l->resume);
    if (l->free_s > simgrid_get_clock()) sg_actor_sleep_for(l->free_s - simgrid_get_clock());
  }
  gboolean handed = FALSE; /* lane 0: the lanes absorbed in part resumed */
  int i = lane_next(l, r->first);
  while (i < r->n) {
    if (r->mirrors && l->s == 0) { /* stream 0 wakes the mirrors, as their source's program reaches them */
      if (r->next_mirror < r->mirrors->len &&
          ((rank_rt *)g_ptr_array_index(r->mirrors, r->next_mirror))->prog->active_from <= i) {
        flush_pending(l);
        wake_mirrors(r, i);
      }
    }
    l->cur = i;
    wait_dep(l, i);
    int last = i;
    if (r->ev[i].kind == EV_COMPUTE || lone_collective(r, i) || absorbed_at(r, i)) {
      int j = run_compute(l, i);
      last = j - 1;
      i = j;
    } else {
      run_comm(l, i++);
    }
    mark_ended(l, last);
    if (l->s == 0 && !handed && last >= r->gpu_alone_to) {
      handed = TRUE;
      flush_pending(l);
      for (int s = 1; s < GRAPH_STREAMS; s++)
        if (r->lanes[s].resume) sg_sem_release(r->lanes[s].resume);
    }
    i = lane_next(l, i);
  }
  flush_pending(l);
  if (l->s == 0 && !handed)
    for (int s = 1; s < GRAPH_STREAMS; s++)
      if (r->lanes[s].resume) sg_sem_release(r->lanes[s].resume);
  if (l->s == 0) {
    wake_mirrors(r, r->n);
    double late = 0; /* the absorbed lanes end as their actors would have */
    for (int s = 1; s < GRAPH_STREAMS; s++)
      if ((r->absorbed >> s & 1u) && !r->lanes[s].resume) late = MAX(late, r->lanes[s].free_s);
    if (late > simgrid_get_clock()) sg_actor_sleep_for(late - simgrid_get_clock());
  }
  l->cur = -1;
  r->fin_s = MAX(r->fin_s, simgrid_get_clock());
  if (--r->lanes_left == 0) r->out->finish_s = r->fin_s;
}

/* replay_prepare's engine: the process's one, already created and holding the platform pp. */
static struct {
  gboolean done;
  plat_params pp;
  char log[32];
  int runs;          /* replay_run calls that reached simgrid_run on it */
  gboolean unclean;  /* the last run may have left actors, activities or messages behind */
} prepared;

/* SimGrid's simulated clock, simgrid::kernel::EngineImpl::now_ (a static member libsimgrid exports; 3.32
 * has no call to set it). A prepared engine's next run starts it from 0 again, as a fresh process's does:
 * the run's arithmetic (now + duration, remaining work over rate) is then the same to the last bit, and
 * its times are relative to the step's start (docs/sweep.md, "Speed"). Every action of the last run has
 * ended when simgrid_run returns (it runs until no event is left), so no date of it remains. */
extern double replay_simgrid_now __asm__("_ZN7simgrid6kernel10EngineImpl4now_E");

gboolean replay_reusable(void) { return prepared.done && !prepared.unclean; }

static const char *log_of(const replay_options *o) { return o && o->log_threshold ? o->log_threshold : "critical"; }

static void init_simgrid(const replay_options *o, const char *paje_file)
{
  int argc = 1;
  char *argv[] = {"layoutsim", NULL};
  lsim_outfile_guard_signals(); /* first look: what the caller ignores stays ignored */
  simgrid_init(&argc, argv);
  lsim_outfile_guard_signals(); /* SimGrid's SIGINT handler exits without the cleanup */
  g_autofree char *thres = g_strdup_printf("root.thres:%s", log_of(o));
  xbt_log_control_set(thres);
  /* a deadlock is reported by replay_run as one line of ours; SimGrid's own report would be a second */
  xbt_log_control_set("ker_engine.app:file:/dev/null ker_engine.add:0");
  plat_configure();
  if (paje_file) {
    sg_cfg_set_boolean("tracing", "yes");
    sg_cfg_set_boolean("tracing/platform", "yes");
    sg_cfg_set_string("tracing/filename", paje_file);
    sg_cfg_set_int("tracing/precision", 9); /* ns: state durations must sum to the step time within 1e-6 s */
    if (o->simgrid_paje_links) sg_cfg_set_boolean("tracing/uncategorized", "yes"); /* link bandwidth_used variables */
  }
}

gboolean replay_prepare(const plat_params *pp, const replay_options *o)
{
  if (prepared.done || (o && (o->simgrid_paje_path || o->platform_file)) || strlen(log_of(o)) >= sizeof prepared.log)
    return FALSE;
  init_simgrid(o, NULL);
  plat_build(pp);
  prepared.done = TRUE;
  prepared.pp = *pp;
  g_strlcpy(prepared.log, log_of(o), sizeof prepared.log);
  return TRUE;
}

static void declare_trace_states(void)
{
  TRACE_host_state_declare("gpu");
  for (int c = 0; c < TL_N; c++)
    TRACE_host_state_declare_value("gpu", tl_cat_name((tl_cat)c), tl_cat_info_of((tl_cat)c)->paje_colour);
}

/* rank_rt.ord of every explicit program (shared with its mirrors) and each mirror's calls before its
 * active_from (rank_rt.before_*), where the graph has mirrors. A group's members call its collectives in the
 * same order, so a call's ordinal names it on every member whatever the index of its event in each program
 * (the explicit programs of a mirrored group, one per cp index, need not have the same indices). */
static void coll_ordinals(engine *eng)
{
  const graph *g = eng->g;
  int w = g->world_size, ng = (int)g->groups->len;
  gboolean mirrored = FALSE;
  for (int r = 0; r < w && !mirrored; r++) mirrored = eng->ranks[r].prog->mirror_of >= 0;
  if (!mirrored || ng == 0) return;
  g_autofree int *count = g_new0(int, ng);
  g_autoptr(GArray) used = g_array_new(FALSE, FALSE, sizeof(int)); /* groups with a count, to reset */
  for (int r = 0; r < w; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of >= 0) continue;
    rt->ord = g_new(int, MAX(rt->n, 1));
    for (int i = 0; i < rt->n; i++) {
      const graph_event *e = &rt->ev[i];
      rt->ord[i] = -1;
      if (e->kind != EV_COLLECTIVE) continue;
      if (count[e->peer] == 0) g_array_append_val(used, e->peer);
      rt->ord[i] = count[e->peer]++;
    }
    for (guint k = 0; k < used->len; k++) count[g_array_index(used, int, k)] = 0;
    g_array_set_size(used, 0);
    /* its mirrors, by active_from: the calls per group before it, counted once per distinct active_from */
    int upto = 0;
    for (guint m = 0; rt->mirrors && m < rt->mirrors->len; m++) {
      rank_rt *mr = g_ptr_array_index(rt->mirrors, m);
      int from = MIN(mr->prog->active_from, rt->n);
      for (; upto < from; upto++) {
        const graph_event *e = &rt->ev[upto];
        if (e->kind != EV_COLLECTIVE) continue;
        if (count[e->peer] == 0) g_array_append_val(used, e->peer);
        count[e->peer]++;
      }
      mr->n_before = (int)used->len;
      mr->before_gid = g_new(int, MAX(mr->n_before, 1));
      mr->before_calls = g_new(int, MAX(mr->n_before, 1));
      for (int k = 0; k < mr->n_before; k++) {
        int sg = g_array_index(used, int, k);
        mr->before_gid[k] = graph_group_for(mr->prog, sg);
        mr->before_calls[k] = count[sg];
      }
    }
    for (guint k = 0; k < used->len; k++) count[g_array_index(used, int, k)] = 0;
    g_array_set_size(used, 0);
  }
  for (int r = 0; r < w; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of >= 0) rt->ord = eng->ranks[rt->prog->mirror_of].ord;
  }
}

static void setup_ranks(engine *eng, replay_result *res)
{
  const graph *g = eng->g;
  eng->ranks = g_new0(rank_rt, g->world_size);
  for (int r = 0; r < g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    rt->eng = eng;
    rt->rank = r;
    rt->host = plat_host(eng->pp, r);
    rt->prog = g_ptr_array_index(g->programs, r);
    rt->ev = graph_program_events(g, rt->prog, &rt->n, &rt->first);
    rt->active = rt->prog->mirror_of < 0;
    rt->out = &res->ranks[r];
    rt->out->n_events = rt->n;
    rt->out->first = rt->first;
    rt->out->finish_s = -1;
    for (int s = 0; s < GRAPH_STREAMS; s++) {
      rt->lanes[s] = (lane){.r = rt, .s = s, .cur = rt->first};
      rt->done[s] = -1;
      rt->last_of[s] = -1;
    }
    rt->fin_s = 0;
    /* the times of the events a rank runs itself (a mirror: from its active_from, none when it stays
     * passive; before that the timeline reads its source's) */
    int len = rt->first < rt->n ? rt->n : 1;
    rt->out->start_s = g_new(double, len);
    rt->out->end_s = g_new(double, len);
    for (int i = rt->first < rt->n ? rt->first : 0; i < len; i++) rt->out->start_s[i] = rt->out->end_s[i] = NAN;
  }
  /* streamed programs: each event's dependency and whether one waits for it, shared with the mirrors */
  for (int r = 0; r < g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of >= 0 || !graph_program_streamed(rt->prog)) continue;
    rt->dep = g_new(int, MAX(rt->n, 1));
    rt->wanted = g_new0(guint8, MAX(rt->n, 1));
    for (int i = 0; i < rt->n; i++) {
      rt->dep[i] = graph_dep_of(rt->prog, i);
      if (rt->dep[i] >= 0) rt->wanted[rt->dep[i]] |= (guint8)(1u << rt->ev[i].stream);
      rt->last_of[rt->ev[i].stream] = i;
    }
  }
  for (int r = 0; r < g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r], *src = rt->prog->mirror_of >= 0 ? &eng->ranks[rt->prog->mirror_of] : rt;
    rt->dep = src->dep;
    rt->wanted = src->wanted;
    if (src != rt) memcpy(rt->last_of, src->last_of, sizeof rt->last_of);
    if (rt->dep) {
      rt->waiting = g_ptr_array_new();
      for (int s = 0; s < GRAPH_STREAMS; s++) rt->lanes[s].dep = sg_sem_init(0);
    }
    /* a lane per stream up to the last the rank runs events of itself (a lane with none ends at once) */
    rt->n_lanes = 1;
    for (int s = 1; s < GRAPH_STREAMS; s++)
      if (rt->last_of[s] >= rt->first) rt->n_lanes = s + 1;
    rt->lanes_left = rt->n_lanes;
  }
  for (int r = 0; r < g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of < 0) continue;
    rt->wake = sg_sem_init(0);
    for (int s = 1; s < rt->n_lanes; s++) rt->lanes[s].wake = sg_sem_init(0);
    rank_rt *src = &eng->ranks[rt->prog->mirror_of];
    if (!src->mirrors) src->mirrors = g_ptr_array_new();
    g_ptr_array_add(src->mirrors, rt);
  }
  for (int r = 0; r < g->world_size; r++)
    if (eng->ranks[r].mirrors) g_ptr_array_sort(eng->ranks[r].mirrors, mirror_cmp);
  coll_ordinals(eng);
}

/* The NVLink domain of a rank: today its node. */
static int domain_of(const engine *eng, int rank) { return topo_domain_of(eng->pp, rank); }

/* What NCCL's tuner sees of the machine (platforms/nccl_tune.h), and what --nccl-algo forces. */
static void setup_tune(engine *eng, const replay_options *o)
{
  eng->tune.forced = o ? (coll_algo)o->nccl_algo : COLL_ALGO_AUTO;
  eng->tune.comm = (nccl_tune_comm){.compcap = nccl_tune_compcap(eng->prof->name),
                                    .nvls = eng->prof->nvls,
                                    .nvlink_bytes_per_s = eng->pp->nvlink_bytes_per_s};
  eng->tune.gpus_per_node = eng->pp->gpus_per_node;
  eng->tune.nics_per_node = eng->pp->nics_per_node;
  eng->tune.nic_bytes_per_s = eng->pp->ib_bytes_per_s;
  eng->tune.latency_tuned = eng->prof->stack.nccl_latency_tuned;
  /* every rank is joined by the step's blocking collectives: the job waits for its slowest GPU */
  eng->straggler = straggler_slowdown(eng->prof->stack.straggler_sigma, eng->g->world_size);
  eng->calls = g_new0(int, MAX(eng->g->groups->len, 1) * COLL_N * COLL_ALGO_N);
}

static gint key_cmp(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* replay_result.coll_algos from engine.calls: "label collective algorithm" summed over groups, sorted. */
static char *algos_summary(const engine *eng)
{
  g_autoptr(GHashTable) algos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint gi = 0; gi < eng->g->groups->len; gi++)
    for (int c = 0; c < COLL_N; c++)
      for (int a = 0; a < COLL_ALGO_N; a++) {
        int k = eng->calls[((gsize)gi * COLL_N + c) * COLL_ALGO_N + a];
        if (!k) continue;
        const graph_group *gr = g_ptr_array_index(eng->g->groups, gi);
        char *key = g_strdup_printf("%s %s %s", gr->label, graph_coll_name((graph_coll)c), coll_algo_name((coll_algo)a));
        g_hash_table_insert(algos, key, GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(algos, key)) + k));
      }
  guint n = 0;
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array(algos, &n);
  qsort(keys, n, sizeof *keys, key_cmp);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s x %d", i ? ", " : "", (char *)keys[i], GPOINTER_TO_INT(g_hash_table_lookup(algos, keys[i])));
  return g_string_free(s, FALSE);
}

/* The inbox of member k of group gi: SimGrid's mailbox "g<gi>.<k>", the same object for the name every time in
 * a process, so a process that replays again and again (a server, replay_prepare) remembers it rather than
 * formatting and looking up every member's name every run (a few percent of a server's time, docs/sweep.md). */
static sg_mailbox_t group_inbox(guint gi, guint k)
{
  static GPtrArray *by_group; /* GPtrArray of sg_mailbox_t per group id */
  if (!by_group) by_group = g_ptr_array_new();
  while (by_group->len <= gi) g_ptr_array_add(by_group, g_ptr_array_new());
  GPtrArray *inboxes = g_ptr_array_index(by_group, gi);
  while (inboxes->len <= k) {
    char name[48];
    snprintf(name, sizeof name, "g%u.%u", gi, inboxes->len);
    g_ptr_array_add(inboxes, sg_mailbox_by_name(name));
  }
  return g_ptr_array_index(inboxes, k);
}

static void setup_groups(engine *eng)
{
  const graph *g = eng->g;
  eng->groups = g_new0(coll_group, g->groups->len);
  for (guint gi = 0; gi < g->groups->len; gi++) {
    const graph_group *gr = g_ptr_array_index(g->groups, gi);
    coll_member *ms = g_new0(coll_member, gr->ranks->len);
    for (guint k = 0; k < gr->ranks->len; k++) {
      int rank = g_array_index(gr->ranks, int, k);
      ms[k].inbox = group_inbox(gi, k);
      ms[k].host = eng->ranks[rank].host;
      ms[k].node = domain_of(eng, rank); /* channels cross between NVLink domains */
      ms[k].streamed = eng->ranks[rank].dep != NULL;
    }
    eng->groups[gi].tune = &eng->tune;
    eng->groups[gi].members = ms;
    eng->groups[gi].n = (int)gr->ranks->len;
    if (gr->tclass == TC_EP) { /* Megatron's flex dispatcher: the routing its all-to-alls deduplicate by */
      eng->groups[gi].flex_experts = g->meta.flex_experts;
      eng->groups[gi].flex_top_k = g->meta.flex_top_k;
      const stack_profile *st = &eng->prof->stack;
      if (st->flex_nvlink_efficiency > 0) eng->groups[gi].flex_nvlink_scale = st->nccl_bw_efficiency_nvlink / st->flex_nvlink_efficiency;
      if (st->flex_ib_efficiency > 0) eng->groups[gi].flex_ib_scale = st->nccl_bw_efficiency_ib / st->flex_ib_efficiency;
      if (st->flex_sms > 0 && eng->prof->sm_count > 0 && g->meta.flex_top_k > 0)
        eng->groups[gi].flex_sm_share = st->flex_sms / eng->prof->sm_count;
    }
    coll_group_init(&eng->groups[gi]);
  }
}

/* A mirror that stays passive to the end of the step (active_from at or past its source's last
 * event): it would only wait and finish with its source, so without SimGrid's own trace (whose
 * states it draws) it gets no actor, and takes its source's finish after the run. */
static gboolean dormant(const engine *eng, const rank_rt *rt)
{
  return !eng->tracing && rt->prog->mirror_of >= 0 && rt->prog->active_from >= rt->n;
}

/* Whether route a -> b crosses the NVLink link of a rank in `members` (a set of ranks). */
static gboolean route_meets(const engine *eng, int a, int b, GHashTable *members)
{
  topo_hop h[TOPO_MAX_HOPS];
  int n = topo_route(eng->pp, a, b, h);
  for (int k = 0; k < n; k++)
    if (h[k].kind == TOPO_LINK_NVL && g_hash_table_contains(members, GINT_TO_POINTER(h[k].index))) return TRUE;
  return FALSE;
}

/* The members of group gi (a set of ranks) where a streamed rank may take its calls alone: on the built
 * platform without PXN (where a flow between domains crosses no NVLink link), every member in rank's NVLink
 * domain; NULL otherwise. */
static GHashTable *members_in_domain(const engine *eng, int gi, int rank)
{
  const graph_group *gr = g_ptr_array_index(eng->g->groups, gi);
  if (!eng->routes_known || eng->pp->fabric == FABRIC_RAIL_PXN) return NULL;
  GHashTable *members = g_hash_table_new(g_direct_hash, g_direct_equal);
  int dom = topo_domain_of(eng->pp, rank);
  for (guint k = 0; k < gr->ranks->len; k++) {
    int m = g_array_index(gr->ranks, int, k);
    if (topo_domain_of(eng->pp, m) != dom) {
      g_hash_table_destroy(members);
      return NULL;
    }
    g_hash_table_add(members, GINT_TO_POINTER(m));
  }
  return members;
}

/* Whether a flow of a group in `groups` (ids), between any member with an actor and any member, either way,
 * crosses the NVLink link of a rank in `members`. */
static gboolean groups_meet(const engine *eng, GHashTable *groups, GHashTable *members)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, groups);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const graph_group *h = g_ptr_array_index(eng->g->groups, GPOINTER_TO_INT(key));
    for (guint x = 0; x < h->ranks->len; x++) {
      int a = g_array_index(h->ranks, int, x);
      if (dormant(eng, &eng->ranks[a])) continue;
      for (guint y = 0; y < h->ranks->len; y++) {
        int b = g_array_index(h->ranks, int, y);
        if (a != b && (route_meets(eng, a, b, members) || route_meets(eng, b, a, members))) return TRUE;
      }
    }
  }
  return FALSE;
}

/* Whether group gi, whose one member with an actor is `rank`, a rank with a communication stream, can take
 * its collectives alone (engine.lone) as a rank without one does: on the built platform without PXN (where a
 * flow between domains crosses no NVLink link), every member in rank's NVLink domain (so its flows cross only
 * the members' NVLink links, all alike: what a passive predecessor sends the rank takes as long as what the
 * rank sends), the group's calls on one stream of the rank, and no flow of its other streams crossing a
 * member's NVLink link: not its messages there, nor any flow of a group it calls there, between any member
 * with an actor and any member, either way. The rank's own stream runs one event at a time, and the flows of
 * other ranks cannot reach the members' links (the group is clean, setup_lone). */
static gboolean streamed_alone(const engine *eng, int gi, int rank)
{
  g_autoptr(GHashTable) members = members_in_domain(eng, gi, rank);
  if (!members) return FALSE;
  const rank_rt *rt = &eng->ranks[rank];
  g_autoptr(GHashTable) others = g_hash_table_new(g_direct_hash, g_direct_equal); /* groups on other streams */
  int stream = -1;
  for (int i = 0; i < rt->n; i++) {
    const graph_event *e = &rt->ev[i];
    if (e->kind == EV_COLLECTIVE && graph_group_for(rt->prog, e->peer) == gi) {
      if (stream >= 0 && e->stream != stream) return FALSE;
      stream = e->stream;
    }
  }
  for (int i = 0; i < rt->n; i++) {
    const graph_event *e = &rt->ev[i];
    if (e->stream == stream) continue;
    if (e->kind == EV_COLLECTIVE) g_hash_table_add(others, GINT_TO_POINTER(graph_group_for(rt->prog, e->peer)));
    else if ((e->kind == EV_SEND || e->kind == EV_RECV) &&
             (route_meets(eng, rank, e->peer, members) || route_meets(eng, e->peer, rank, members)))
      return FALSE;
  }
  return !groups_meet(eng, others, members);
}

/* Whether group gi, whose one member with an actor is `rank`, called on stream 0 and on one other stream
 * (returned in *stream), can be lone once that stream is absorbed into lane 0 (setup_absorbed): on the built
 * platform without PXN, every member in rank's NVLink domain; no flow of the rank on any stream but the group's
 * own calls crossing a member's NVLink link; and the calls of the two streams never at once, by program order:
 * a stream-0 call starts after every earlier call of the other stream has ended (stream 0 has waited for each
 * of them by then) and before every later one starts (each depends on stream 0 at or after it). Lane 0 times
 * all of them (lone_collective, run_absorbed), so their flows meet nobody's, each other's included. */
static gboolean streamed_alone_two(const engine *eng, int gi, int rank, int *stream)
{
  g_autoptr(GHashTable) members = members_in_domain(eng, gi, rank);
  if (!members) return FALSE;
  const rank_rt *rt = &eng->ranks[rank];
  if (!rt->dep) return FALSE;
  int other = -1;
  for (int i = rt->first; i < rt->n; i++) {
    const graph_event *e = &rt->ev[i];
    if (e->kind != EV_COLLECTIVE || graph_group_for(rt->prog, e->peer) != gi || e->stream == 0) continue;
    if (other >= 0 && e->stream != other) return FALSE;
    other = e->stream;
  }
  if (other < 0) return FALSE;
  /* the order: per call of the other stream, whether stream 0 has waited for it yet */
  g_autofree guint8 *waited = g_new0(guint8, MAX(rt->n, 1));
  int unwaited = 0, last0 = -1, calls0 = 0;
  g_autoptr(GHashTable) others = g_hash_table_new(g_direct_hash, g_direct_equal); /* the rank's other groups */
  for (int i = rt->first; i < rt->n; i++) {
    const graph_event *e = &rt->ev[i];
    int d = rt->dep[i];
    gboolean mine = e->kind == EV_COLLECTIVE && graph_group_for(rt->prog, e->peer) == gi;
    if (e->stream == 0 && d >= rt->first && !waited[d] && rt->ev[d].stream == other && rt->ev[d].kind == EV_COLLECTIVE &&
        graph_group_for(rt->prog, rt->ev[d].peer) == gi) {
      waited[d] = 1;
      unwaited--;
    }
    if (mine && e->stream == 0) {
      if (unwaited) return FALSE;
      last0 = i;
      calls0++;
    } else if (mine) {
      if (last0 >= 0 && (d < last0 || rt->ev[d].stream != 0)) return FALSE;
      unwaited++;
    } else if (e->kind == EV_COLLECTIVE) {
      g_hash_table_add(others, GINT_TO_POINTER(graph_group_for(rt->prog, e->peer)));
    } else if ((e->kind == EV_SEND || e->kind == EV_RECV) &&
               (route_meets(eng, rank, e->peer, members) || route_meets(eng, e->peer, rank, members))) {
      return FALSE;
    }
  }
  if (!calls0) return FALSE;
  if (groups_meet(eng, others, members)) return FALSE;
  *stream = other;
  return TRUE;
}

/* engine.lone: a group whose members but one are dormant mirrors, each reached by no other rank with
 * an actor through any group (so only that member's own hops, one collective at a time, ever cross
 * their links: a member's actor is sequential, pipeline messages go between ranks with actors, and
 * with a NIC per GPU and a non-blocking core the member's links are its own). */
static void setup_lone(engine *eng)
{
  const graph *g = eng->g;
  int ng = (int)g->groups->len, w = g->world_size;
  eng->lone = g_new(int, ng > 0 ? ng : 1);
  eng->lone_absorbed = g_new0(int, ng > 0 ? ng : 1);
  g_autofree int *owner = g_new(int, w > 0 ? w : 1); /* the one active rank that reaches a dormant one; -2: several */
  for (int r = 0; r < w; r++) owner[r] = -1;
  for (int gi = 0; gi < ng; gi++) {
    const graph_group *gr = g_ptr_array_index(g->groups, gi);
    int active = 0, who = -1;
    for (guint k = 0; k < gr->ranks->len; k++)
      if (!dormant(eng, &eng->ranks[g_array_index(gr->ranks, int, k)])) {
        active++;
        who = g_array_index(gr->ranks, int, k);
      }
    eng->lone[gi] = -1;
    for (guint k = 0; k < gr->ranks->len; k++) {
      int h = g_array_index(gr->ranks, int, k);
      if (h == who || !dormant(eng, &eng->ranks[h]) || active == 0) continue;
      owner[h] = active > 1 || (owner[h] >= 0 && owner[h] != who) ? -2 : who;
    }
  }
  for (int gi = 0; gi < ng; gi++) {
    const graph_group *gr = g_ptr_array_index(g->groups, gi);
    int pos = -1, active = 0;
    gboolean clean = TRUE;
    for (guint k = 0; k < gr->ranks->len; k++) {
      int h = g_array_index(gr->ranks, int, k);
      if (!dormant(eng, &eng->ranks[h])) {
        active++;
        pos = (int)k;
      } else if (owner[h] == -2) {
        clean = FALSE;
      }
    }
    /* a rank with a communication stream (dep) runs its collectives in the simulation where its other lanes'
     * flows may meet theirs */
    gboolean streamed = pos >= 0 && eng->ranks[g_array_index(gr->ranks, int, pos)].dep;
    eng->lone[gi] = active == 1 && clean && (!streamed || streamed_alone(eng, gi, g_array_index(gr->ranks, int, pos))) &&
                    !eng->tracing && gr->ranks->len > 1 ? pos : -1;
    int two = 0;
    if (eng->lone[gi] < 0 && active == 1 && clean && streamed && !eng->tracing && gr->ranks->len > 1 &&
        streamed_alone_two(eng, gi, g_array_index(gr->ranks, int, pos), &two)) {
      eng->lone[gi] = pos; /* if its member absorbs the other stream (setup_absorbed) */
      eng->lone_absorbed[gi] = two;
    }
  }
}

/* rank_rt.gpu_alone_to and .absorbed, after setup_lone. Up to gpu_alone_to no lane of a streamed rank but lane 0
 * holds the GPU (a compute event, or an all-to-all holding SMs: run_comm's flex; the distributed optimizer's step
 * on stream 1 comes after the last backward), so lane 0's runs there execute alone on the host and may hold more
 * than kernels: its lone collectives on stream 0 join the compute (lone_collective); and a stream whose every
 * event the rank runs is a lone collective up to there, depending on nothing or on an earlier event of stream 0
 * and waited for by stream 0 only, up to there too (NeMo's tensor-parallel overlap: an all-gather beside each
 * GEMM), runs inline in lane 0 without an actor of its own: its events' times are its lane's, computed where lane
 * 0 reaches them (run_absorbed), and lane 0 waits for them inline. The same times, fewer SimGrid activities
 * (docs/sweep.md, "Absorbed lanes"). A mirror absorbs only what its source does (an absorbed event before its
 * active_from is timed by the source). */
static void absorb_pass(engine *eng)
{
  for (int r = 0; r < eng->g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    rt->gpu_alone_to = -1;
    rt->absorbed = 0;
    if (!rt->dep || dormant(eng, rt) || eng->tracing) continue;
    /* gpu_alone_to: the least, over the events of other streams that hold the GPU, of the last stream-0 event
     * their stream has waited for by then (they start after its end, and a run of lane 0 ends at an event another
     * lane waits for, so no run up to it meets them) */
    int to = rt->n - 1, after[GRAPH_STREAMS];
    for (int s = 0; s < GRAPH_STREAMS; s++) after[s] = -1;
    for (int i = rt->first; i < rt->n; i++) {
      const graph_event *e = &rt->ev[i];
      if (e->stream == 0) continue;
      int d = rt->dep[i];
      if (d >= 0 && rt->ev[d].stream == 0) after[e->stream] = MAX(after[e->stream], d);
      if (e->kind == EV_COMPUTE ||
          (e->kind == EV_COLLECTIVE && eng->groups[graph_group_for(rt->prog, e->peer)].flex_sm_share > 0))
        to = MIN(to, after[e->stream]);
    }
    rt->gpu_alone_to = to;
    /* a stream absorbed up to `to` (in part where it has events after it, which its actor runs, each depending
     * on nothing or on an event from `to` on: it resumes once lane 0 has passed `to`, at its last absorbed end) */
    for (int s = 1; s < GRAPH_STREAMS; s++) {
      gboolean ok = rt->last_of[s] >= rt->first, some = FALSE;
      for (int i = rt->first; i < rt->n && ok; i++) {
        const graph_event *e = &rt->ev[i];
        int d = rt->dep[i];
        if (e->stream == s && i <= to) {
          ok = e->kind == EV_COLLECTIVE && lone_member(rt, i) && (d < 0 || (d < i && rt->ev[d].stream == 0)) &&
               !(rt->wanted[i] & ~1u);
          some = TRUE;
        } else if (e->stream == s) {
          ok = d < 0 || d >= to;
        }
      }
      if (ok && some) rt->absorbed |= (guint8)(1u << s);
    }
  }
  /* a source and its running mirrors absorb the same streams: a mirror's event may wait for one of its source's
   * before its active_from, which the source then timed inline, or its lane marked ended */
  for (int r = 0; r < eng->g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of >= 0 && !dormant(eng, rt)) eng->ranks[rt->prog->mirror_of].absorbed &= rt->absorbed;
  }
  for (int r = 0; r < eng->g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (rt->prog->mirror_of >= 0) rt->absorbed &= eng->ranks[rt->prog->mirror_of].absorbed;
  }
}

/* absorb_pass until the groups lone only with a stream absorbed (streamed_alone_two) have it: one that has not
 * is no longer lone, which may keep a stream of another group from being absorbed. */
static void setup_absorbed(engine *eng)
{
  gboolean changed = TRUE;
  while (changed) {
    absorb_pass(eng);
    changed = FALSE;
    for (guint gi = 0; gi < eng->g->groups->len; gi++) {
      if (!eng->lone_absorbed[gi] || eng->lone[gi] < 0) continue;
      const graph_group *gr = g_ptr_array_index(eng->g->groups, gi);
      const rank_rt *rt = &eng->ranks[g_array_index(gr->ranks, int, eng->lone[gi])];
      if (rt->absorbed >> eng->lone_absorbed[gi] & 1u) continue;
      eng->lone[gi] = -1;
      eng->lone_absorbed[gi] = 0;
      changed = TRUE;
    }
  }
  for (int r = 0; r < eng->g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    for (int s = 1; s < rt->n_lanes; s++) {
      if (!(rt->absorbed >> s & 1u)) continue;
      if (rt->last_of[s] <= rt->gpu_alone_to) rt->lanes_left--; /* no actor */
      else rt->lanes[s].resume = sg_sem_init(0);
    }
  }
}

static void start_actors(engine *eng)
{
  for (int r = 0; r < eng->g->world_size; r++) {
    rank_rt *rt = &eng->ranks[r];
    if (dormant(eng, rt)) continue;
    for (int s = 0; s < rt->n_lanes; s++) {
      if ((rt->absorbed >> s & 1u) && !rt->lanes[s].resume) continue; /* run inline by lane 0 (setup_absorbed) */
      char name[32];
      snprintf(name, sizeof name, s ? "rank%d.s%d" : "rank%d", r, s);
      sg_actor_t a = sg_actor_init(name, rt->host);
      sg_actor_set_data(a, &rt->lanes[s]);
      sg_actor_start_(a, lane_main, 0, NULL);
    }
  }
}

/* Whether the run left a message in a mailbox (an eager send nobody received), which the next run on the
 * engine would take for its own: only the point-to-point ones can (a collective waits for its every
 * transfer); a rank that used more mailboxes than it remembers counts as leaving one. */
static gboolean left_messages(const engine *eng)
{
  for (int r = 0; r < eng->g->world_size; r++) {
    const rank_rt *rt = &eng->ranks[r];
    if (rt->p2p_overflow) return TRUE;
    for (int k = 0; k < rt->n_p2p; k++)
      if (sg_mailbox_listen(sg_mailbox_get_name(rt->p2p[k].mailbox))) return TRUE;
  }
  return FALSE;
}

static void engine_clear(engine *eng)
{
  for (guint gi = 0; gi < eng->g->groups->len; gi++) coll_group_clear(&eng->groups[gi]);
  g_free(eng->groups);
  g_free(eng->lone);
  g_free(eng->lone_absorbed);
  g_free(eng->calls);
  for (int r = 0; r < eng->g->world_size; r++) {
    if (eng->ranks[r].mirrors) g_ptr_array_free(eng->ranks[r].mirrors, TRUE);
    rank_rt *rt = &eng->ranks[r];
    if (rt->wake) sg_sem_destroy(rt->wake);
    for (int s = 1; s < GRAPH_STREAMS; s++)
      if (rt->lanes[s].wake) sg_sem_destroy(rt->lanes[s].wake);
    if (rt->waiting) g_ptr_array_free(rt->waiting, TRUE);
    for (int s = 0; s < GRAPH_STREAMS; s++) {
      if (rt->lanes[s].dep) sg_sem_destroy(rt->lanes[s].dep);
      if (rt->lanes[s].resume) sg_sem_destroy(rt->lanes[s].resume);
    }
    if (rt->prog->mirror_of < 0) {
      g_free(rt->dep);
      g_free(rt->wanted);
      g_free(rt->ord);
    }
    g_free(rt->before_gid);
    g_free(rt->before_calls);
  }
  g_free(eng->ranks);
}

/* The error of a run in which some rank never finished. It names the first unfinished rank that
 * is blocked in an event of its own: a passive mirror waits for its source, in no event (its `cur`
 * is its active_from, which may be its source's event count: no event there to name), and one of
 * the ranks it waits for is itself blocked in an event. */
static void deadlock_error(const engine *eng, const replay_result *res, GError **err)
{
  static const char *const HINT = "check that sends, receives and collectives match across ranks";
  for (int r = 0; r < eng->g->world_size; r++) {
    const rank_rt *rt = &eng->ranks[r];
    int cur = rt->lanes[0].cur;
    for (int s = 1; cur < 0 && s < rt->n_lanes; s++) cur = rt->lanes[s].cur;
    if (res->ranks[r].finish_s >= 0 || !rt->active || cur < 0 || cur >= rt->n) continue;
    const graph_event *e = &rt->ev[cur];
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "graph deadlocks: rank %d never finishes event %d (%s %s, "
                "peer/group %d); %s", r, cur, graph_kind_name((graph_kind)e->kind), graph_op_name(eng->g, e->op),
                e->peer, HINT);
    return;
  }
  for (int r = 0; r < eng->g->world_size; r++) /* not reached: a mirror's source is explicit, so active */
    if (res->ranks[r].finish_s < 0) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "graph deadlocks: rank %d never finishes; %s", r, HINT);
      return;
    }
}

replay_result *replay_run(const graph *g, const gpu_profile *prof, const plat_params *pp, const replay_options *o,
                          GError **err)
{
  if (g->world_size > pp->nodes * pp->gpus_per_node) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "gpus: the graph needs %d GPUs, the platform has %d",
                g->world_size, pp->nodes * pp->gpus_per_node);
    return NULL;
  }
  gboolean tracing = o && o->simgrid_paje_path;
  /* SimGrid writes the trace by name as the run goes: to lsim_outfile's temporary file, renamed once
   * the run succeeded (SimGrid's open file follows the rename), or straight into a FIFO or device.
   * Opening it here fails with one line rather than inside SimGrid. A caller that holds it as one of
   * its outputs has opened it, and renames it with them. */
  lsim_outfile paje = {0};
  gboolean own_paje = tracing && !o->simgrid_paje_held;
  if (own_paje && !lsim_outfile_open_named(&paje, o->simgrid_paje_path, err)) return NULL;
  const char *paje_file = own_paje ? lsim_outfile_write_path(&paje) : tracing ? o->simgrid_paje_path : NULL;
  if (prepared.done) { /* replay_prepare built it: it must be this run's platform */
    if (tracing || (o && o->platform_file) || !plat_same(&prepared.pp, pp) || strcmp(prepared.log, log_of(o)) != 0 ||
        prepared.unclean) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "internal error: the prepared platform is not this replay's");
      return NULL;
    }
    if (prepared.runs++ > 0) replay_simgrid_now = 0; /* run again from 0, as a fresh engine */
  } else {
    init_simgrid(o, paje_file);
    if (o && o->platform_file) simgrid_load_platform(o->platform_file);
    else plat_build(pp);
  }
  if (tracing) declare_trace_states();
  replay_result *res = g_new0(replay_result, 1);
  res->world_size = g->world_size;
  res->ranks = g_new0(replay_rank, g->world_size);
  engine eng = {.g = g, .prof = prof, .pp = pp, .tracing = tracing, .routes_known = !(o && o->platform_file)};
  setup_ranks(&eng, res);
  setup_tune(&eng, o);
  setup_groups(&eng);
  setup_lone(&eng);
  setup_absorbed(&eng);
  start_actors(&eng);
  prepared.unclean = TRUE; /* until the run is seen to end clean */
  simgrid_run();
  for (int r = 0; r < g->world_size; r++)
    if (dormant(&eng, &eng.ranks[r])) res->ranks[r].finish_s = res->ranks[eng.ranks[r].prog->mirror_of].finish_s;
  for (int r = 0; r < g->world_size; r++) {
    if (res->ranks[r].finish_s < 0) {
      deadlock_error(&eng, res, err);
      engine_clear(&eng);
      replay_result_free(res);
      lsim_outfile_abort(&paje);
      return NULL;
    }
    res->step_time_s = MAX(res->step_time_s, res->ranks[r].finish_s);
  }
  res->coll_algos = algos_summary(&eng);
  prepared.unclean = left_messages(&eng);
  engine_clear(&eng);
  if (own_paje && !lsim_outfile_commit(&paje, err)) {
    replay_result_free(res);
    return NULL;
  }
  return res;
}

void replay_result_free(replay_result *r)
{
  if (!r) return;
  for (int i = 0; i < r->world_size; i++) {
    g_free(r->ranks[i].start_s);
    g_free(r->ranks[i].end_s);
  }
  g_free(r->ranks);
  g_free(r->coll_algos);
  g_free(r);
}
