/* lsim_outfile -- see lsim_outfile.h. */
#include "lsim_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lsim_error.h"

#define MAX_LINKS 40 /* symbolic links followed in a chain, as the kernel's limit */

typedef enum { VIA_TEMP, DIRECT, SHARED } write_mode;

static void io_error(GError **err, const char *path, const char *why)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot write (%s)", path, why);
}

static gboolean same_file(const struct stat *st, int fd)
{
  struct stat o;
  return fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* Follow `path` through symbolic links to the name that is not one (it may not exist). NULL
 * (error names `path`) on a loop or an unreadable link. */
static char *follow_links(const char *path, GError **err)
{
  char *cur = g_strdup(path);
  for (int hops = 0;; hops++) {
    struct stat ls;
    if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode)) return cur;
    char *target = hops < MAX_LINKS ? g_file_read_link(cur, NULL) : NULL;
    if (!target) {
      io_error(err, path, hops < MAX_LINKS ? "cannot read the symbolic link" : g_strerror(ELOOP));
      g_free(cur);
      return NULL;
    }
    if (!g_path_is_absolute(target)) { /* relative to the link's directory, as the kernel resolves it */
      g_autofree char *dir = g_path_get_dirname(cur);
      char *joined = g_build_filename(dir, target, NULL);
      g_free(target);
      target = joined;
    }
    g_free(cur);
    cur = target;
  }
}

/* How `path` is written; for VIA_TEMP, *dest is the name the temporary file replaces; for SHARED,
 * *std_fd is the standard stream (1 or 2) the file is. */
static gboolean plan(const char *path, write_mode *mode, char **dest, int *std_fd, GError **err)
{
  struct stat st;
  *dest = NULL;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      io_error(err, path, "is a directory");
      return FALSE;
    }
    if (S_ISBLK(st.st_mode)) {
      io_error(err, path, "is a block device");
      return FALSE;
    }
    if (!S_ISREG(st.st_mode)) {
      *mode = DIRECT;
      return TRUE;
    }
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
      if (same_file(&st, fd)) {
        *mode = SHARED;
        *std_fd = fd;
        return TRUE;
      }
  }
  *mode = VIA_TEMP;
  *dest = follow_links(path, err);
  return *dest != NULL;
}

/* Interrupted runs. A process killed between open and commit (Ctrl-C in a long calibrate, a
 * closed pipe, kill) would leave TARGET.XXXXXX behind. So the names of the temporary files not
 * yet committed sit in this table, the one piece of process-wide state outside the engine: a
 * signal handler can reach nothing else. On SIGINT, SIGTERM, SIGHUP or SIGPIPE the handler
 * removes them (unlink is async-signal-safe), restores the default action and raises the signal
 * again, so the process still dies of it (where the default action does not kill, as for the
 * first process of a container, it exits with 128 + the signal instead of carrying on without
 * its files); an exit() that comes before their commit removes them too. The signals are blocked
 * from the creation of a file until its name is in the table. Each entry records the process that
 * created it, and only that process removes it: a forked worker that dies leaves its parent's
 * files alone. A signal ignored when first looked at (nohup's SIGHUP, a background job's SIGINT)
 * stays ignored, and so does one ignored later. More than PENDING_MAX files open at once are
 * still removed on commit or abort, but not on a signal or exit. */
#define PENDING_MAX 16
static char pending_name[PENDING_MAX][PATH_MAX];
static volatile sig_atomic_t pending_pid[PENDING_MAX]; /* the creator; 0: the slot is free */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static gboolean ignored_at_start[G_N_ELEMENTS(cleanup_signals)];
static gboolean looked; /* ignored_at_start is set */

static void remove_pending(void)
{
  pid_t self = getpid();
  for (int i = 0; i < PENDING_MAX; i++)
    if (pending_pid[i] == self) unlink(pending_name[i]);
}

void lsim_outfile_remove_pending(void) { remove_pending(); }

static void remove_pending_and_die(int sig)
{
  remove_pending();
  signal(sig, SIG_DFL);
  sigset_t just;
  sigemptyset(&just);
  sigaddset(&just, sig);
  sigprocmask(SIG_UNBLOCK, &just, NULL); /* the handler runs with it blocked: deliver it now */
  raise(sig);
  _exit(128 + sig); /* the default action did not kill (pid 1 of a namespace): do not go on */
}

static void cleanup_mask(sigset_t *set)
{
  sigemptyset(set);
  for (size_t j = 0; j < G_N_ELEMENTS(cleanup_signals); j++) sigaddset(set, cleanup_signals[j]);
}

void lsim_outfile_guard_signals(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(cleanup_signals); i++) {
    struct sigaction cur, sa = {0};
    if (sigaction(cleanup_signals[i], NULL, &cur) != 0) continue;
    if (!looked) ignored_at_start[i] = cur.sa_handler == SIG_IGN;
    if (ignored_at_start[i]) {
      if (cur.sa_handler == SIG_IGN) continue;
      sa.sa_handler = SIG_IGN; /* a library replaced an ignore the caller had set */
    } else {
      if (cur.sa_handler == remove_pending_and_die || cur.sa_handler == SIG_IGN) continue;
      sa.sa_handler = remove_pending_and_die; /* the default, or a library's handler (SimGrid's exits) */
      sa.sa_flags = SA_RESTART;
    }
    cleanup_mask(&sa.sa_mask);
    sigaction(cleanup_signals[i], &sa, NULL);
  }
  if (!looked) atexit(remove_pending);
  looked = TRUE;
}

/* Create the temporary file for `dest` (g_mkstemp on dest.XXXXXX) and enter it in the table with the
 * cleanup signals blocked in between; *tmp is the name (freed by the caller). */
static int create_pending(const char *dest, char **tmp)
{
  lsim_outfile_guard_signals();
  sigset_t block, old;
  cleanup_mask(&block);
  sigprocmask(SIG_BLOCK, &block, &old);
  *tmp = g_strconcat(dest, ".XXXXXX", NULL);
  int fd = g_mkstemp(*tmp);
  if (fd >= 0 && strlen(*tmp) < PATH_MAX)
    for (int i = 0; i < PENDING_MAX; i++)
      if (!pending_pid[i]) {
        strcpy(pending_name[i], *tmp);
        atomic_signal_fence(memory_order_release); /* the name is whole before the slot is taken */
        pending_pid[i] = getpid();
        break;
      }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return fd;
}

static void pending_remove(const char *tmp)
{
  pid_t self = getpid();
  for (int i = 0; i < PENDING_MAX; i++)
    if (pending_pid[i] == self && !strcmp(pending_name[i], tmp)) {
      pending_pid[i] = 0;
      return;
    }
}

/* What an output stream writes to: its descriptor, and the first error a write or the close met.
 * ferror() keeps no errno, and the writes of a large output fail while the stream's buffer fills,
 * long before the commit (with fdopen a full disk was then reported as "Input/output error", while
 * a small output, failing at fclose, told the reason). */
struct lsim_outfile_sink {
  int fd;
  int first_errno; /* 0: none yet */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
  struct lsim_outfile_sink *s = cookie;
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(s->fd, buf + done, n - done);
    if (w > 0) done += (size_t)w;
    else if (w < 0 && errno == EINTR) continue;
    else {
      if (!s->first_errno) s->first_errno = w < 0 ? errno : EIO;
      break; /* fewer bytes than asked: the stream sets its error flag */
    }
  }
  return (ssize_t)done;
}

static int sink_close(void *cookie)
{
  struct lsim_outfile_sink *s = cookie;
  int rc = close(s->fd);
  if (rc != 0 && !s->first_errno) s->first_errno = errno;
  return rc;
}

/* A stream writing to fd through a sink (tf->sink); NULL (errno set, fd left open) on failure. */
static FILE *stream_on(lsim_outfile *tf, int fd)
{
  struct lsim_outfile_sink *s = g_new0(struct lsim_outfile_sink, 1);
  s->fd = fd;
  FILE *f = fopencookie(s, "w", (cookie_io_functions_t){.write = sink_write, .close = sink_close});
  if (!f) {
    int e = errno;
    g_free(s);
    errno = e;
    return NULL;
  }
  tf->sink = s;
  return f;
}

static void release(lsim_outfile *tf)
{
  if (tf->tmp_path) pending_remove(tf->tmp_path);
  g_clear_pointer(&tf->sink, g_free);
  g_clear_pointer(&tf->path, g_free);
  g_clear_pointer(&tf->dest, g_free);
  g_clear_pointer(&tf->tmp_path, g_free);
  tf->f = NULL;
}

gboolean lsim_outfile_open(lsim_outfile *tf, const char *path, GError **err)
{
  *tf = (lsim_outfile){0};
  write_mode mode;
  char *dest;
  int std_fd;
  if (!plan(path, &mode, &dest, &std_fd, err)) return FALSE;
  if (mode == SHARED) { /* our own stdout or stderr: write through its open file, at its offset */
    fflush(NULL);
    int fd = dup(std_fd);
    FILE *f = fd >= 0 ? stream_on(tf, fd) : NULL;
    if (!f) {
      io_error(err, path, g_strerror(errno));
      if (fd >= 0) close(fd);
      return FALSE;
    }
    tf->f = f;
    tf->path = g_strdup(path);
    tf->shared = TRUE;
    return TRUE;
  }
  if (mode != VIA_TEMP) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666); /* as fopen(path, "w") */
    FILE *f = fd >= 0 ? stream_on(tf, fd) : NULL;
    if (!f) {
      io_error(err, path, g_strerror(errno));
      if (fd >= 0) close(fd);
      return FALSE;
    }
    tf->f = f;
    tf->path = g_strdup(path);
    return TRUE;
  }
  char *tmp;
  int fd = create_pending(dest, &tmp); /* mode 0600: give it the mode a plain create would (0666 less the umask) */
  mode_t mask = umask(0);
  umask(mask);
  FILE *f = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? stream_on(tf, fd) : NULL;
  if (!f) {
    io_error(err, path, g_strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
      pending_remove(tmp);
    }
    g_free(tmp);
    g_free(dest);
    return FALSE;
  }
  tf->f = f;
  tf->path = g_strdup(path);
  tf->dest = dest;
  tf->tmp_path = tmp;
  return TRUE;
}

gboolean lsim_outfile_open_named(lsim_outfile *tf, const char *path, GError **err)
{
  if (!lsim_outfile_open(tf, path, err)) return FALSE;
  if (!tf->shared) return TRUE;
  lsim_outfile_abort(tf);
  io_error(err, path, "it is this command's standard output or error, which a file written by name would "
                      "truncate; allowed: another file, or a pipe");
  return FALSE;
}

const char *lsim_outfile_write_path(const lsim_outfile *tf) { return tf->tmp_path ? tf->tmp_path : tf->path; }

char *lsim_outfile_destination(const char *path)
{
  char *dest = follow_links(path, NULL);
  char *canon = g_canonicalize_filename(dest ? dest : path, NULL);
  g_free(dest);
  return canon;
}

gboolean lsim_outfile_same_target(const char *a, const char *b)
{
  g_autofree char *da = lsim_outfile_destination(a), *db = lsim_outfile_destination(b);
  if (!strcmp(da, db)) return TRUE;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

gboolean lsim_outfile_close(lsim_outfile *tf, GError **err)
{
  int code = ferror(tf->f) ? EIO : 0;
  if (fclose(tf->f) != 0 && !code) code = errno;
  tf->f = NULL;
  if (code && tf->sink->first_errno) code = tf->sink->first_errno; /* the reason, not the flag */
  if (!code) return TRUE;
  if (tf->tmp_path) unlink(tf->tmp_path);
  io_error(err, tf->path, g_strerror(code));
  release(tf);
  return FALSE;
}

gboolean lsim_outfile_publish(lsim_outfile *tf, GError **err)
{
  int code = tf->tmp_path && rename(tf->tmp_path, tf->dest) != 0 ? errno : 0;
  if (code) {
    unlink(tf->tmp_path);
    io_error(err, tf->path, g_strerror(code));
  }
  release(tf);
  return code == 0;
}

gboolean lsim_outfile_commit(lsim_outfile *tf, GError **err)
{
  return lsim_outfile_close(tf, err) && lsim_outfile_publish(tf, err);
}

void lsim_outfile_abort(lsim_outfile *tf)
{
  if (!tf->path) return; /* never opened, or already committed or aborted */
  if (tf->f) fclose(tf->f);
  if (tf->tmp_path) unlink(tf->tmp_path);
  release(tf);
}

void lsim_outset_init(lsim_outset *set) { set->files = g_ptr_array_new(); }

FILE *lsim_outset_open(lsim_outset *set, const char *path, GError **err)
{
  lsim_outfile *tf = g_new0(lsim_outfile, 1);
  if (!lsim_outfile_open(tf, path, err)) {
    g_free(tf);
    return NULL;
  }
  g_ptr_array_add(set->files, tf);
  return tf->f;
}

const char *lsim_outset_open_named(lsim_outset *set, const char *path, GError **err)
{
  lsim_outfile *tf = g_new0(lsim_outfile, 1);
  if (!lsim_outfile_open_named(tf, path, err)) {
    g_free(tf);
    return NULL;
  }
  g_ptr_array_add(set->files, tf);
  return lsim_outfile_write_path(tf);
}

static void outset_clear(lsim_outset *set)
{
  for (guint i = 0; i < set->files->len; i++) {
    lsim_outfile_abort(set->files->pdata[i]); /* nothing left of a committed one */
    g_free(set->files->pdata[i]);
  }
  g_ptr_array_free(set->files, TRUE);
  set->files = NULL;
}

gboolean lsim_outset_close(lsim_outset *set, GError **err)
{
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < set->files->len; i++) ok = lsim_outfile_close(set->files->pdata[i], err);
  if (!ok) outset_clear(set);
  return ok;
}

gboolean lsim_outset_publish(lsim_outset *set, GError **err)
{
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < set->files->len; i++) ok = lsim_outfile_publish(set->files->pdata[i], err);
  outset_clear(set);
  return ok;
}

gboolean lsim_outset_commit(lsim_outset *set, GError **err)
{
  /* every file whole first; then the renames, none of which can fail for want of space */
  return lsim_outset_close(set, err) && lsim_outset_publish(set, err);
}

void lsim_outset_abort(lsim_outset *set)
{
  if (set->files) outset_clear(set);
}

gboolean lsim_outfile_check(const char *path, GError **err)
{
  write_mode mode;
  g_autofree char *dest = NULL;
  int std_fd;
  if (!plan(path, &mode, &dest, &std_fd, err)) return FALSE;
  if (mode != VIA_TEMP) {
    if (access(path, W_OK) == 0) return TRUE;
    io_error(err, path, g_strerror(errno));
    return FALSE;
  }
  lsim_outfile probe;
  if (!lsim_outfile_open(&probe, path, err)) return FALSE;
  lsim_outfile_abort(&probe);
  return TRUE;
}
