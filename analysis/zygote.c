/* zygote -- see zygote.h. A zygote waits on several things at once with
 * poll(): its job socket (a job: fork a worker, or hand it to its family's
 * zygote; end of file: the caller is done), a signalfd for SIGCHLD (a
 * child ended: reap it, and report it when it ended without reporting
 * itself) and, in a family zygote, a socket per server (a worker that runs
 * job after job: it says there when it is idle again). A family zygote runs
 * the same loop, forked by the zygote with a job socket of its own, and has
 * no families. A zygote exits once the caller is done and its last child
 * has ended. */
#include "zygote.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/lsim_error.h"

struct zygote {
  pid_t pid;
  int jobs_fd;    /* our end: we send jobs */
  int results_fd; /* our end: workers and the zygote send results */
  size_t result_bytes;
  guint64 next_tag;
};

/* How a result message says what happened. */
typedef enum { DONE_OK, DONE_EXITED, DONE_SIGNALED, DONE_NO_PROCESS } done_kind;

typedef struct result_head {
  guint64 tag;
  gint32 kind; /* done_kind */
  gint32 code; /* exit status, signal number or errno */
} result_head;

/* ---- in the zygote ---- */

typedef struct family {
  pid_t pid;
  int jobs_fd;   /* our end of its job socket; -1 once closed */
  GArray *tags;  /* guint64: every job given to it */
  guint64 used;  /* zygote_state.clock at its last job */
} family;

/* A family's worker that serves job after job (zygote.h, "Servers"). */
typedef struct server {
  pid_t pid;
  int fd;        /* our end of its socket: jobs to it, a byte back when it is idle; -1 once closed */
  guint64 tag;   /* the last job it was given (the one it runs, while busy) */
  gboolean busy;
} server;

typedef struct zygote_state {
  int jobs_fd, results_fd, sig_fd;
  sigset_t worker_mask; /* the signal mask a worker runs with: the caller's */
  zygote_ops ops;
  GHashTable *tag_of;   /* pid -> guint64 * tag of the workers running */
  GHashTable *families; /* key -> family *; NULL in a family zygote */
  GPtrArray *retired;   /* family *: evicted (their job socket closed), until they end */
  guint64 clock;        /* dispatches so far: a family's last use, for eviction */
  GArray *servers;      /* server: a family zygote's workers (NULL in the zygote) */
  gboolean open;        /* the caller may still send jobs */
} zygote_state;

static void send_failure(const zygote_state *zs, guint64 tag, done_kind kind, int code)
{
  result_head h = {.tag = tag, .kind = kind, .code = code};
  size_t n = sizeof h + zs->ops.result_bytes;
  g_autofree char *msg = g_malloc0(n);
  memcpy(msg, &h, sizeof h);
  (void)send(zs->results_fd, msg, n, MSG_NOSIGNAL); /* the caller gone: nobody to tell */
}

static void family_free(gpointer p)
{
  family *f = p;
  if (f->jobs_fd >= 0) close(f->jobs_fd);
  g_array_free(f->tags, TRUE);
  g_free(f);
}

/* The descriptors a child must not keep: its siblings' job sockets (a family zygote sees the end of
 * its jobs only once every copy of our end is closed). */
static void close_families(zygote_state *zs)
{
  for (guint i = 0; zs->servers && i < zs->servers->len; i++) {
    server *sv = &g_array_index(zs->servers, server, i);
    if (sv->fd >= 0) close(sv->fd);
    sv->fd = -1;
  }
  if (!zs->families) return;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, zs->families);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    family *f = v;
    if (f->jobs_fd >= 0) close(f->jobs_fd);
    f->jobs_fd = -1;
  }
}

/* A child ended. A worker's exit status 0 means it sent its result; anything else is reported for it. A
 * family zygote that did not exit cleanly is reported for every job it was given. */
static void child_ended(zygote_state *zs, pid_t pid, int status)
{
  gboolean clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  done_kind kind = WIFSIGNALED(status) ? DONE_SIGNALED : DONE_EXITED;
  int code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
  guint64 *tag = g_hash_table_lookup(zs->tag_of, GINT_TO_POINTER(pid));
  if (tag) {
    if (!clean) send_failure(zs, *tag, kind, code);
    g_hash_table_remove(zs->tag_of, GINT_TO_POINTER(pid));
    return;
  }
  for (guint i = 0; zs->servers && i < zs->servers->len; i++) {
    server *sv = &g_array_index(zs->servers, server, i);
    if (sv->pid != pid) continue;
    /* a server exits cleanly only once it sent its last job's result; otherwise that job is reported, whether
     * it was still busy or had said idle just before sending its result (the caller ignores a job it has) */
    if (!clean) send_failure(zs, sv->tag, kind, code);
    if (sv->fd >= 0) close(sv->fd);
    g_array_remove_index_fast(zs->servers, i);
    return;
  }
  if (!zs->families) return;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, zs->families);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    family *f = v;
    if (f->pid != pid) continue;
    for (guint i = 0; !clean && i < f->tags->len; i++) send_failure(zs, g_array_index(f->tags, guint64, i), kind, code);
    g_hash_table_iter_remove(&it);
    return;
  }
  for (guint j = 0; j < zs->retired->len; j++) {
    family *f = g_ptr_array_index(zs->retired, j);
    if (f->pid != pid) continue;
    for (guint i = 0; !clean && i < f->tags->len; i++) send_failure(zs, g_array_index(f->tags, guint64, i), kind, code);
    g_ptr_array_remove_index_fast(zs->retired, j); /* frees it */
    return;
  }
}

static void reap(zygote_state *zs, int options)
{
  int status;
  for (pid_t pid; (pid = waitpid(-1, &status, options)) > 0;) {
    child_ended(zs, pid, status);
    if (options == 0) return; /* blocking: one is enough */
  }
}

/* In a child just forked: die with the parent (SIGKILL when it ends, however it ends, SIGKILL included:
 * no zygote or worker runs on for minutes after a `kill` of the sweep). The parent may have died
 * between the fork and the prctl: then the child is already an orphan, and goes now. */
static void die_with_parent(pid_t parent)
{
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(9);
}

static guint children(const zygote_state *zs)
{
  return g_hash_table_size(zs->tag_of) + (zs->families ? g_hash_table_size(zs->families) + zs->retired->len : 0) +
         (zs->servers ? zs->servers->len : 0);
}

/* In a worker or a server just forked: the caller's signal mask (the zygote blocks SIGCHLD), none of the zygote's
 * descriptors but the results socket (its signalfd, its job socket, its siblings'), and its result message (a
 * result_head, then the result's bytes), *n bytes, zeroed. */
static char *child_prologue(zygote_state *zs, size_t *n)
{
  sigprocmask(SIG_SETMASK, &zs->worker_mask, NULL);
  close(zs->sig_fd);
  close(zs->jobs_fd);
  close_families(zs);
  *n = sizeof(result_head) + zs->ops.result_bytes;
  return g_malloc0(*n);
}

G_GNUC_NORETURN static void worker_main(zygote_state *zs, guint64 tag, const void *job, size_t job_bytes)
{
  size_t n;
  char *msg = child_prologue(zs, &n);
  result_head h = {.tag = tag, .kind = DONE_OK};
  memcpy(msg, &h, sizeof h);
  (void)zs->ops.run(job, job_bytes, msg + sizeof h, zs->ops.result_bytes); /* it exits after one job */
  ssize_t sent = send(zs->results_fd, msg, n, MSG_NOSIGNAL);
  _exit(sent == (ssize_t)n ? 0 : 1); /* not freed: the kernel takes the whole address space back at once */
}

/* A server: runs its first job, then each job the family zygote sends on fd, until run says the process
 * may not run another (it exits once that job's result is sent) or fd ends (the family is done). After
 * each job it sends a byte on fd (idle), then the result. Exit status 0 only once the last job's result is sent. */
G_GNUC_NORETURN static void server_main(zygote_state *zs, int fd, const char *first, size_t first_bytes)
{
  size_t n;
  char *msg = child_prologue(zs, &n);
  char *buf = g_malloc(sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES);
  memcpy(buf, first, first_bytes);
  ssize_t got = (ssize_t)first_bytes;
  for (;;) {
    result_head h = {.kind = DONE_OK};
    memcpy(&h.tag, buf, sizeof h.tag);
    memset(msg, 0, n);
    memcpy(msg, &h, sizeof h);
    gboolean again = zs->ops.run(buf + sizeof h.tag, (size_t)got - sizeof h.tag, msg + sizeof h, zs->ops.result_bytes);
    /* idle before the result: the caller's next job, sent once it has the result, then always finds this server
     * idle (the family zygote reads servers first); a death between the two is reported for this job anyway */
    char idle = 1;
    if (again && send(fd, &idle, 1, MSG_NOSIGNAL) != 1) again = FALSE; /* the family zygote is gone */
    if (send(zs->results_fd, msg, n, MSG_NOSIGNAL) != (ssize_t)n) _exit(1);
    if (!again) _exit(0);
    while ((got = recv(fd, buf, sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES, 0)) < 0 && errno == EINTR) {}
    if (got < (ssize_t)sizeof(guint64)) _exit(0); /* end of file: no more jobs */
  }
}

/* In a family zygote: a job (msg: tag then job) to an idle server, or to a server forked for it. */
static void serve(zygote_state *zs, const char *msg, size_t n)
{
  guint64 tag;
  memcpy(&tag, msg, sizeof tag);
  for (guint i = 0; i < zs->servers->len; i++) {
    server *sv = &g_array_index(zs->servers, server, i);
    if (sv->busy || sv->fd < 0) continue;
    if (send(sv->fd, msg, n, MSG_NOSIGNAL) == (ssize_t)n) {
      sv->busy = TRUE;
      sv->tag = tag;
      return;
    }
    close(sv->fd); /* it is gone (its end is reaped): another takes the job */
    sv->fd = -1;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    send_failure(zs, tag, DONE_NO_PROCESS, errno);
    return;
  }
  pid_t self = getpid();
  for (;;) {
    pid_t pid = fork();
    if (pid == 0) {
      die_with_parent(self);
      close(fds[0]);
      server_main(zs, fds[1], msg, n);
    }
    if (pid > 0) {
      close(fds[1]);
      server sv = {.pid = pid, .fd = fds[0], .tag = tag, .busy = TRUE};
      g_array_append_val(zs->servers, sv);
      return;
    }
    if ((errno == EAGAIN || errno == ENOMEM) && children(zs) > 0) { /* as spawn: wait for a child, retry */
      reap(zs, 0);
      continue;
    }
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    send_failure(zs, tag, DONE_NO_PROCESS, e);
    return;
  }
}

/* A server said it is idle (or its socket ended: it is exiting, and its end is reaped). Once the caller is
 * done, an idle server is told to exit (its socket closed). */
static void server_readable(zygote_state *zs, guint i)
{
  server *sv = &g_array_index(zs->servers, server, i);
  char idle;
  ssize_t got;
  while ((got = recv(sv->fd, &idle, 1, 0)) < 0 && errno == EINTR) {}
  if (got == 1) sv->busy = FALSE;
  if (got != 1 || !zs->open) {
    close(sv->fd);
    sv->fd = -1;
  }
}

static void spawn(zygote_state *zs, guint64 tag, const void *job, size_t job_bytes)
{
  pid_t self = getpid();
  for (;;) {
    pid_t pid = fork();
    if (pid == 0) {
      die_with_parent(self);
      worker_main(zs, tag, job, job_bytes);
    }
    if (pid > 0) {
      g_hash_table_insert(zs->tag_of, GINT_TO_POINTER(pid), g_memdup2(&tag, sizeof tag));
      return;
    }
    /* out of processes (too many -j for the system's limits): wait for a child to end, then retry */
    if ((errno == EAGAIN || errno == ENOMEM) && children(zs) > 0) {
      reap(zs, 0);
      continue;
    }
    send_failure(zs, tag, DONE_NO_PROCESS, errno);
    return;
  }
}

G_GNUC_NORETURN static void zygote_main(zygote_state *zs);

/* The zygote of the family of job (key): forked now, it prepares and then serves the family's jobs.
 * NULL when there are too many families or the system refuses: the job is then forked from here. */
static family *family_start(zygote_state *zs, const char *key, const void *job, size_t job_bytes)
{
  if (g_hash_table_size(zs->families) >= ZYGOTE_MAX_FAMILIES) { /* the least recently used one retires */
    GHashTableIter it;
    gpointer k, v, lru_key = NULL;
    guint64 oldest = G_MAXUINT64;
    g_hash_table_iter_init(&it, zs->families);
    while (g_hash_table_iter_next(&it, &k, &v))
      if (((family *)v)->used < oldest) {
        oldest = ((family *)v)->used;
        lru_key = k;
      }
    family *old = NULL;
    g_hash_table_steal_extended(zs->families, lru_key, NULL, (gpointer *)&old);
    g_free(lru_key);
    if (old->jobs_fd >= 0) close(old->jobs_fd); /* it finishes the jobs it has and ends, its servers too */
    old->jobs_fd = -1;
    g_ptr_array_add(zs->retired, old);
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return NULL;
  pid_t self = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    die_with_parent(self);
    close(fds[0]);
    close(zs->sig_fd);
    close(zs->jobs_fd);
    close_families(zs);
    zygote_state fz = {.jobs_fd = fds[1], .results_fd = zs->results_fd, .worker_mask = zs->worker_mask, .ops = zs->ops,
                       .servers = g_array_new(FALSE, FALSE, sizeof(server))};
    fz.ops.prepare(job, job_bytes);
    zygote_main(&fz);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return NULL;
  }
  family *f = g_new0(family, 1);
  *f = (family){.pid = pid, .jobs_fd = fds[0], .tags = g_array_new(FALSE, FALSE, sizeof(guint64))};
  g_hash_table_insert(zs->families, g_strdup(key), f);
  return f;
}

/* A job: to its family's zygote when it has one, else a worker forked here. */
static void dispatch(zygote_state *zs, const char *msg, size_t n)
{
  guint64 tag;
  memcpy(&tag, msg, sizeof tag);
  const char *job = msg + sizeof tag;
  size_t job_bytes = n - sizeof tag;
  char key[512];
  if (zs->servers) { /* a family zygote: its servers run every job */
    serve(zs, msg, n);
    return;
  }
  if (zs->families && zs->ops.family && zs->ops.family(job, job_bytes, key, sizeof key)) {
    family *f = g_hash_table_lookup(zs->families, key);
    if (!f || f->jobs_fd < 0) f = family_start(zs, key, job, job_bytes);
    if (f && send(f->jobs_fd, msg, n, MSG_NOSIGNAL) == (ssize_t)n) {
      g_array_append_val(f->tags, tag);
      f->used = ++zs->clock;
      return;
    }
  }
  spawn(zs, tag, job, job_bytes);
}

G_GNUC_NORETURN static void zygote_main(zygote_state *zs)
{
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL); /* a family zygote: blocked already */
  zs->sig_fd = signalfd(-1, &chld, SFD_CLOEXEC);
  if (zs->sig_fd < 0) _exit(3); /* its jobs are reported as failed, or the caller reads "the zygote is gone" */
  zs->tag_of = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  char *buf = g_malloc(sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES);
  zs->open = TRUE;
  GArray *polled = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
  while (zs->open || children(zs) > 0) {
    g_array_set_size(polled, 2);
    struct pollfd *p = (struct pollfd *)polled->data;
    p[0] = (struct pollfd){.fd = zs->sig_fd, .events = POLLIN};
    p[1] = (struct pollfd){.fd = zs->open ? zs->jobs_fd : -1, .events = POLLIN};
    guint ns = zs->servers ? zs->servers->len : 0;
    for (guint i = 0; i < ns; i++) {
      struct pollfd q = {.fd = g_array_index(zs->servers, server, i).fd, .events = POLLIN};
      g_array_append_val(polled, q);
    }
    p = (struct pollfd *)polled->data;
    if (poll(p, 2 + ns, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(3);
    }
    /* idle servers first (a server's byte is sent before its result, so before the caller's next job), then
     * jobs, then ended children (a server's end may be reaped, and its array compacted: last) */
    for (guint i = ns; i-- > 0;)
      if (p[2 + i].revents && p[2 + i].fd >= 0 && p[2 + i].fd == g_array_index(zs->servers, server, i).fd)
        server_readable(zs, i);
    if (zs->open && p[1].revents) {
      ssize_t n = recv(zs->jobs_fd, buf, sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < (ssize_t)sizeof(guint64)) { /* end of file (the caller is done), or it is gone */
        zs->open = FALSE;
        /* they finish their jobs and exit: the families, and the idle servers (a busy one once idle) */
        for (guint i = 0; zs->servers && i < zs->servers->len; i++) {
          server *sv = &g_array_index(zs->servers, server, i);
          if (!sv->busy && sv->fd >= 0) {
            close(sv->fd);
            sv->fd = -1;
          }
        }
        if (zs->families) close_families(zs);
      } else {
        dispatch(zs, buf, (size_t)n);
      }
    }
    if (p[0].revents) {
      struct signalfd_siginfo si;
      while (read(zs->sig_fd, &si, sizeof si) < 0 && errno == EINTR) {}
      reap(zs, WNOHANG);
    }
  }
  _exit(0);
}

/* ---- in the caller ---- */

zygote *zygote_start(const zygote_ops *ops, GError **err)
{
  int jobs[2], results[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, jobs) != 0) goto no_socket;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, results) != 0) {
    close(jobs[0]);
    close(jobs[1]);
    goto no_socket;
  }
  fflush(NULL); /* nothing buffered is written twice */
  pid_t self = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    die_with_parent(self);
    close(jobs[0]);
    close(results[0]);
    zygote_state zs = {.jobs_fd = jobs[1], .results_fd = results[1], .ops = *ops};
    sigprocmask(SIG_SETMASK, NULL, &zs.worker_mask);
    if (ops->family && ops->prepare) {
      zs.families = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, family_free);
      zs.retired = g_ptr_array_new_with_free_func(family_free);
    }
    zygote_main(&zs);
  }
  int e = errno;
  close(jobs[1]);
  close(results[1]);
  if (pid < 0) {
    close(jobs[0]);
    close(results[0]);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "cannot start a simulation process (%s)", g_strerror(e));
    return NULL;
  }
  zygote *z = g_new0(zygote, 1);
  *z = (zygote){.pid = pid, .jobs_fd = jobs[0], .results_fd = results[0], .result_bytes = ops->result_bytes};
  return z;
no_socket:
  e = errno;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "cannot start a simulation process (no socket: %s)", g_strerror(e));
  return NULL;
}

gboolean zygote_submit(zygote *z, const void *job, size_t job_bytes, guint64 *tag_out)
{
  guint64 tag = z->next_tag;
  if (job_bytes > ZYGOTE_MAX_JOB_BYTES) {
    errno = EMSGSIZE;
    return FALSE;
  }
  g_autofree char *msg = g_malloc(sizeof tag + job_bytes);
  memcpy(msg, &tag, sizeof tag);
  memcpy(msg + sizeof tag, job, job_bytes);
  ssize_t n;
  while ((n = send(z->jobs_fd, msg, sizeof tag + job_bytes, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
  if (n != (ssize_t)(sizeof tag + job_bytes)) return FALSE;
  *tag_out = z->next_tag++;
  return TRUE;
}

gboolean zygote_collect(zygote *z, guint64 *tag, void *result, const char **failed, char *why, size_t why_len)
{
  size_t n = sizeof(result_head) + z->result_bytes;
  g_autofree char *msg = g_malloc(n);
  ssize_t got;
  while ((got = recv(z->results_fd, msg, n, 0)) < 0 && errno == EINTR) {}
  if (got != (ssize_t)n) return FALSE; /* end of file: the zygote and every worker are gone */
  result_head h;
  memcpy(&h, msg, sizeof h);
  *tag = h.tag;
  *failed = NULL;
  memcpy(result, msg + sizeof h, z->result_bytes);
  if (h.kind == DONE_SIGNALED) g_snprintf(why, why_len, "simulation died (signal %d)", h.code);
  else if (h.kind == DONE_EXITED) g_snprintf(why, why_len, "simulation exited with status %d", h.code);
  else if (h.kind == DONE_NO_PROCESS) g_snprintf(why, why_len, "cannot start a simulation process (%s)", g_strerror(h.code));
  if (h.kind != DONE_OK) *failed = why;
  return TRUE;
}

void zygote_stop(zygote *z)
{
  if (!z) return;
  close(z->results_fd); /* first: a worker still sending fails at once instead of waiting for a reader */
  close(z->jobs_fd);    /* the zygote sees end of file, waits for its workers and exits */
  int status;
  while (waitpid(z->pid, &status, 0) < 0 && errno == EINTR) {}
  g_free(z);
}
