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
 * Owns: the zygote process, its workers, the two sockets.
 * May not touch: what a job does.
 */
#ifndef ZYGOTE_H
#define ZYGOTE_H

#include <glib.h>
#include <stddef.h>

/* Runs in a worker: fill result (result_bytes, zeroed) from the job's bytes. The worker exits after it. */
typedef void (*zygote_fn)(const void *job, size_t job_bytes, void *result, size_t result_bytes);

typedef struct zygote zygote;

/* The largest job zygote_submit takes. */
#define ZYGOTE_MAX_JOB_BYTES (64 * 1024)

/* Fork the zygote now (its memory is the caller's at this moment). NULL with err when the system
 * refuses a socket or a process. */
zygote *zygote_start(zygote_fn run, size_t result_bytes, GError **err);
/* Send a job, named by tag: the zygote forks a worker for it at once. FALSE (errno set) when the
 * zygote is gone or the job is larger than ZYGOTE_MAX_JOB_BYTES. */
gboolean zygote_submit(zygote *z, guint64 tag, const void *job, size_t job_bytes);
/* Wait for the next job to finish: TRUE with its tag and either its result (*failed NULL) or, when no
 * result came (the worker died, or no process could be started), *failed set to why (static or in
 * why[why_len]). FALSE when the zygote is gone (every job not reported is lost). */
gboolean zygote_collect(zygote *z, guint64 *tag, void *result, const char **failed, char *why, size_t why_len);
/* Close the job socket, wait for the zygote (which waits for its workers) and free z. NULL: nothing. */
void zygote_stop(zygote *z);

#endif
