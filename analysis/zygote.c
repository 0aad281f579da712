/* zygote -- see zygote.h. The zygote itself waits on two things at once
 * with poll(): the job socket (a job: fork a worker; end of file: the caller
 * is done) and a signalfd for SIGCHLD (a worker ended: reap it, and report it
 * when it ended without reporting itself). It exits once the caller is done
 * and its last worker has ended. */
#include "zygote.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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
};

/* How a result message says what happened. */
typedef enum { DONE_OK, DONE_EXITED, DONE_SIGNALED, DONE_NO_PROCESS } done_kind;

typedef struct result_head {
  guint64 tag;
  gint32 kind; /* done_kind */
  gint32 code; /* exit status, signal number or errno */
} result_head;

/* ---- in the zygote ---- */

typedef struct zygote_state {
  int jobs_fd, results_fd, sig_fd;
  sigset_t worker_mask; /* the signal mask a worker runs with: the caller's */
  zygote_fn run;
  size_t result_bytes;
  GHashTable *tag_of; /* pid -> guint64 * tag of the workers running */
} zygote_state;

static void send_failure(const zygote_state *zs, guint64 tag, done_kind kind, int code)
{
  result_head h = {.tag = tag, .kind = kind, .code = code};
  size_t n = sizeof h + zs->result_bytes;
  g_autofree char *msg = g_malloc0(n);
  memcpy(msg, &h, sizeof h);
  (void)send(zs->results_fd, msg, n, MSG_NOSIGNAL); /* the caller gone: nobody to tell */
}

/* A worker ended: exit status 0 means it sent its result; anything else is reported for it. */
static void worker_ended(zygote_state *zs, pid_t pid, int status)
{
  guint64 *tag = g_hash_table_lookup(zs->tag_of, GINT_TO_POINTER(pid));
  if (!tag) return;
  if (WIFSIGNALED(status)) send_failure(zs, *tag, DONE_SIGNALED, WTERMSIG(status));
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) send_failure(zs, *tag, DONE_EXITED, WEXITSTATUS(status));
  g_hash_table_remove(zs->tag_of, GINT_TO_POINTER(pid));
}

static void reap(zygote_state *zs, int options)
{
  int status;
  for (pid_t pid; (pid = waitpid(-1, &status, options)) > 0;) {
    worker_ended(zs, pid, status);
    if (options == 0) return; /* blocking: one is enough */
  }
}

G_GNUC_NORETURN static void worker_main(zygote_state *zs, guint64 tag, const void *job, size_t job_bytes)
{
  sigprocmask(SIG_SETMASK, &zs->worker_mask, NULL);
  close(zs->sig_fd);
  close(zs->jobs_fd);
  size_t n = sizeof(result_head) + zs->result_bytes;
  char *msg = g_malloc0(n);
  result_head h = {.tag = tag, .kind = DONE_OK};
  memcpy(msg, &h, sizeof h);
  zs->run(job, job_bytes, msg + sizeof h, zs->result_bytes);
  ssize_t sent = send(zs->results_fd, msg, n, MSG_NOSIGNAL);
  _exit(sent == (ssize_t)n ? 0 : 1); /* not freed: the kernel takes the whole address space back at once */
}

static void spawn(zygote_state *zs, guint64 tag, const void *job, size_t job_bytes)
{
  for (;;) {
    pid_t pid = fork();
    if (pid == 0) worker_main(zs, tag, job, job_bytes);
    if (pid > 0) {
      g_hash_table_insert(zs->tag_of, GINT_TO_POINTER(pid), g_memdup2(&tag, sizeof tag));
      return;
    }
    /* out of processes (too many -j for the system's limits): wait for a worker to end, then retry */
    if ((errno == EAGAIN || errno == ENOMEM) && g_hash_table_size(zs->tag_of) > 0) {
      reap(zs, 0);
      continue;
    }
    send_failure(zs, tag, DONE_NO_PROCESS, errno);
    return;
  }
}

G_GNUC_NORETURN static void zygote_main(zygote_state *zs)
{
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &zs->worker_mask);
  zs->sig_fd = signalfd(-1, &chld, SFD_CLOEXEC);
  if (zs->sig_fd < 0) _exit(3); /* the caller reads end of file: "the zygote is gone" */
  zs->tag_of = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  char *buf = g_malloc(sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES);
  gboolean open = TRUE;
  while (open || g_hash_table_size(zs->tag_of) > 0) {
    struct pollfd p[2] = {{.fd = zs->sig_fd, .events = POLLIN}, {.fd = open ? zs->jobs_fd : -1, .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(3);
    }
    if (p[0].revents) {
      struct signalfd_siginfo si;
      while (read(zs->sig_fd, &si, sizeof si) < 0 && errno == EINTR) {}
      reap(zs, WNOHANG);
    }
    if (open && p[1].revents) {
      ssize_t n = recv(zs->jobs_fd, buf, sizeof(guint64) + ZYGOTE_MAX_JOB_BYTES, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < (ssize_t)sizeof(guint64)) { /* end of file (the caller is done), or it is gone */
        open = FALSE;
        continue;
      }
      guint64 tag;
      memcpy(&tag, buf, sizeof tag);
      spawn(zs, tag, buf + sizeof tag, (size_t)n - sizeof tag);
    }
  }
  _exit(0);
}

/* ---- in the caller ---- */

zygote *zygote_start(zygote_fn run, size_t result_bytes, GError **err)
{
  int jobs[2], results[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, jobs) != 0) goto no_socket;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, results) != 0) {
    close(jobs[0]);
    close(jobs[1]);
    goto no_socket;
  }
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid == 0) {
    close(jobs[0]);
    close(results[0]);
    zygote_state zs = {.jobs_fd = jobs[1], .results_fd = results[1], .run = run, .result_bytes = result_bytes};
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
  *z = (zygote){.pid = pid, .jobs_fd = jobs[0], .results_fd = results[0], .result_bytes = result_bytes};
  return z;
no_socket:
  e = errno;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "cannot start a simulation process (no socket: %s)", g_strerror(e));
  return NULL;
}

gboolean zygote_submit(zygote *z, guint64 tag, const void *job, size_t job_bytes)
{
  if (job_bytes > ZYGOTE_MAX_JOB_BYTES) {
    errno = EMSGSIZE;
    return FALSE;
  }
  g_autofree char *msg = g_malloc(sizeof tag + job_bytes);
  memcpy(msg, &tag, sizeof tag);
  memcpy(msg + sizeof tag, job, job_bytes);
  ssize_t n;
  while ((n = send(z->jobs_fd, msg, sizeof tag + job_bytes, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
  return n == (ssize_t)(sizeof tag + job_bytes);
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
