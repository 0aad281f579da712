/* zygote -- a fork server: one small process, forked before its caller's
 * memory grows, that forks a worker process per job on request. The pool
 * (pool.h) runs every simulation through one; it knows nothing of
 * simulations: a job is bytes in, a fixed-size result out.
 *
 * Why: SimGrid's engine is a per-process singleton, so every replay is a
 * process of its own, and fork() costs in proportion to the memory of the
 * process that forks: the kernel copies its page tables, and every page
 * that parent or child then writes is copied (copy-on-write), the child's
 * malloc included, which walks free lists spread over the parent's heap.
 * A sweep's parent holds its whole table, its requests and its memory
 * verdicts (60 MiB for bench/sweep.sh) and forked some 3,500 workers:
 * about a third of the sweep's CPU time was the kernel's. Forked from the
 * zygote (a few MiB: the libraries and what was loaded before it), a
 * worker starts from a small, compact heap (docs/sweep.md, "Speed").
 *
 * Protocol: jobs go to the zygote over one SOCK_SEQPACKET socket pair (a
 * job is one message), results come back over another, written by each
 * worker itself (one message each: sends on it are atomic, so workers
 * never interleave). A worker that dies before it reports is reported by
 * the zygote, with how it died. Sockets, not pipes: a send to a zygote that
 * has died fails (MSG_NOSIGNAL) instead of killing the caller by SIGPIPE.
 *
 * Lifetime: the zygote, a family zygote and a worker each die with the process that forked it
 * (PR_SET_PDEATHSIG, SIGKILL): killing the caller, even by SIGKILL, leaves no process running
 * (tests/test_zygote.c kills it by SIGTERM and SIGKILL).
 *
 * Families (zygote_ops.family): work common to many jobs done once, in a
 * zygote of their own forked by the first, before their workers are forked
 * from it. The pool's family is the platform: its zygote creates SimGrid's
 * engine and builds the cluster (sim/replay.h, replay_prepare), about 4 ms
 * of the 17 ms a worker took; each worker then only replays on it.
 *
 * Servers: a family's workers are not forked per job. A family zygote hands
 * each job to an idle worker of its own (a server), forking one only when
 * none is idle (so about as many as the caller runs at once), and a server
 * runs job after job in one process: SimGrid's engine and platform, its heap
 * and the pages it faulted in serve every replay (fork, copy-on-write and
 * fresh page faults per job were most of a sweep's kernel time on some
 * kernels: docs/sweep.md, "Speed"). Isolation stays per job where it
 * matters: a server that dies (a crash, the kernel's OOM killer) is reported
 * for the job it was running, as a worker was, and the next job gets another
 * server; a server whose run says it may not go on (the replay failed and may
 * have left the engine unclean) exits after sending its result. At most
 * ZYGOTE_MAX_FAMILIES families are alive: a new one retires the least
 * recently used (it finishes its jobs, its servers exit).
 *
 * Owns: the zygote processes, their workers, the sockets.
 * May not touch: what a job does.
 */
#ifndef ZYGOTE_H
#define ZYGOTE_H

#include <glib.h>
#include <stddef.h>

/* What the zygote does with a job. */
typedef struct zygote_ops {
  /* In a worker: fill result (result_bytes, zeroed) from the job's bytes. TRUE: this process may run
   * another job (a family's server then waits for the next); FALSE: it exits once the result is sent.
   * A worker forked for a job of no family exits after it whatever run says. */
  gboolean (*run)(const void *job, size_t job_bytes, void *result, size_t result_bytes);
  size_t result_bytes;
  /* Optional (NULL: every worker is forked from the zygote itself). A job's family: TRUE with its key
   * (NUL-terminated, at most key_len bytes) when it has one. The first job of a family forks a family
   * zygote that runs prepare(job) once and then forks the family's workers, each starting from what
   * prepare did (the pool: SimGrid's engine with the job's platform built), and each serving many of the
   * family's jobs in turn (servers, above). At most ZYGOTE_MAX_FAMILIES at a time: a new one retires the
   * least recently used. */
  gboolean (*family)(const void *job, size_t job_bytes, char *key, size_t key_len);
  void (*prepare)(const void *job, size_t job_bytes);
} zygote_ops;

typedef struct zygote zygote;

/* The largest job zygote_submit takes; the most families alive at once. */
#define ZYGOTE_MAX_JOB_BYTES (64 * 1024)
#define ZYGOTE_MAX_FAMILIES 16

/* Fork the zygote now (its memory is the caller's at this moment). NULL with err when the system
 * refuses a socket or a process. */
zygote *zygote_start(const zygote_ops *ops, GError **err);
/* Send a job: the zygote forks a worker for it at once. TRUE with *tag, the job's name in
 * zygote_collect (unique over z's life); FALSE (errno set) when the zygote is gone or the job is larger
 * than ZYGOTE_MAX_JOB_BYTES. */
gboolean zygote_submit(zygote *z, const void *job, size_t job_bytes, guint64 *tag);
/* Wait for the next job to finish: TRUE with its tag and either its result (*failed NULL) or, when no
 * result came (the worker died, or no process could be started), *failed set to why (static or in
 * why[why_len]). FALSE when the zygote is gone (every job not reported is lost). */
gboolean zygote_collect(zygote *z, guint64 *tag, void *result, const char **failed, char *why, size_t why_len);
/* A family zygote that dies reports every tag it was given as failed, finished or not (it cannot know
 * which): the caller ignores a tag it no longer waits for. */
/* Close the job socket, wait for the zygote (which waits for its workers) and free z. NULL: nothing. */
void zygote_stop(zygote *z);

#endif
