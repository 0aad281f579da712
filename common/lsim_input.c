/* lsim_input -- see lsim_input.h. */
#include "lsim_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lsim_error.h"

static const struct {
  const char *what;
  gsize max_bytes;
} KINDS[LSIM_INPUT_N] = {
    [LSIM_INPUT_MODEL] = {"a model JSON file", LSIM_INPUT_MAX_MODEL_BYTES},
    [LSIM_INPUT_PROFILE] = {"a profile JSON file", LSIM_INPUT_MAX_PROFILE_BYTES},
    [LSIM_INPUT_PLATFORM] = {"a SimGrid platform XML file", LSIM_INPUT_MAX_PLATFORM_BYTES},
    [LSIM_INPUT_GRAPH] = {"a task graph JSON file", LSIM_INPUT_MAX_GRAPH_BYTES},
    [LSIM_INPUT_TABLE] = {"a CSV table", LSIM_INPUT_MAX_TABLE_BYTES},
};

gsize lsim_input_max_bytes(lsim_input_kind kind) { return KINDS[kind].max_bytes; }

static const char *file_type(mode_t m)
{
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* "(allowed: a model JSON file, a regular file of at most 1 MiB)" */
static char *allowed(lsim_input_kind kind)
{
  gsize max = KINDS[kind].max_bytes;
  return max % (1u << 30) == 0 ? g_strdup_printf("(allowed: %s, a regular file of at most %zu GiB)", KINDS[kind].what, max >> 30)
                               : g_strdup_printf("(allowed: %s, a regular file of at most %zu MiB)", KINDS[kind].what, max >> 20);
}

static gboolean refuse(GError **err, const char *path, lsim_input_kind kind, const char *why)
{
  g_autofree char *a = allowed(kind);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: %s %s", path, why, a);
  return FALSE;
}

gboolean lsim_input_read(const char *path, lsim_input_kind kind, char **text, gsize *len, GError **err)
{
  *text = NULL;
  *len = 0;
  /* O_NONBLOCK: opening a FIFO without a writer would wait for one; on a regular file it changes nothing */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot read (%s)", path, g_strerror(errno));
    if (fd >= 0) close(fd);
    return FALSE;
  }
  gsize max = KINDS[kind].max_bytes;
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    g_autofree char *why = g_strdup_printf("is %s, not a regular file", file_type(st.st_mode));
    return refuse(err, path, kind, why);
  }
  if ((gsize)st.st_size > max) {
    close(fd);
    g_autofree char *why = g_strdup_printf("is %jd bytes long", (intmax_t)st.st_size);
    return refuse(err, path, kind, why);
  }
  /* then the size as read, not as stat'ed: the file may grow, and /proc files say 0 */
  gsize cap = MIN((gsize)MAX(st.st_size, 0) + 1, max + 1), n = 0;
  char *buf = g_malloc(cap + 1);
  for (;;) {
    if (n == cap) {
      if (cap > max) break; /* read one byte past the cap: too large */
      cap = MIN(2 * cap, max + 1);
      buf = g_realloc(buf, cap + 1);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      g_free(buf);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot read (%s)", path, g_strerror(e));
      return FALSE;
    }
    if (r == 0) break;
    n += (gsize)r;
  }
  close(fd);
  if (n > max) {
    g_free(buf);
    g_autofree char *why = g_strdup_printf("is more than %zu bytes long", max);
    return refuse(err, path, kind, why);
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return TRUE;
}
