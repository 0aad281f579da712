/* lsim_outfile -- see lsim_outfile.h. */
#include "lsim_outfile.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lsim_error.h"

static void io_error(GError **err, const char *path, const char *why)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot write (%s)", path, why);
}

static void release(lsim_outfile *tf)
{
  g_clear_pointer(&tf->path, g_free);
  g_clear_pointer(&tf->tmp_path, g_free);
  tf->f = NULL;
}

gboolean lsim_outfile_open(lsim_outfile *tf, const char *path, GError **err)
{
  tf->f = NULL;
  tf->path = NULL;
  tf->tmp_path = NULL;
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    io_error(err, path, "is a directory");
    return FALSE;
  }
  char *tmp = g_strconcat(path, ".XXXXXX", NULL);
  int fd = g_mkstemp(tmp); /* mode 0600: give the file the mode a plain create would (0666 less the umask) */
  mode_t mask = umask(0);
  umask(mask);
  FILE *f = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    io_error(err, path, g_strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
    g_free(tmp);
    return FALSE;
  }
  tf->f = f;
  tf->path = g_strdup(path);
  tf->tmp_path = tmp;
  return TRUE;
}

gboolean lsim_outfile_commit(lsim_outfile *tf, GError **err)
{
  int code = ferror(tf->f) ? EIO : 0;
  if (fclose(tf->f) != 0 && !code) code = errno;
  if (!code && rename(tf->tmp_path, tf->path) != 0) code = errno;
  if (code) {
    unlink(tf->tmp_path);
    io_error(err, tf->path, g_strerror(code));
  }
  release(tf);
  return code == 0;
}

void lsim_outfile_abort(lsim_outfile *tf)
{
  if (!tf->f) return;
  fclose(tf->f);
  unlink(tf->tmp_path);
  release(tf);
}
