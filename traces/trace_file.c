/* trace_file -- see trace_file.h. */
#include "trace_file.h"

#include <errno.h>
#include <unistd.h>

#include "common/lsim_error.h"

static void io_error(GError **err, const char *path, int code)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_IO, "%s: cannot write (%s)", path, g_strerror(code));
}

gboolean trace_file_open(trace_file *tf, const char *path, GError **err)
{
  tf->path = g_strdup(path);
  tf->tmp_path = g_strdup_printf("%s.tmp%ld", path, (long)getpid());
  tf->f = fopen(tf->tmp_path, "w");
  if (tf->f) return TRUE;
  io_error(err, path, errno);
  g_clear_pointer(&tf->path, g_free);
  g_clear_pointer(&tf->tmp_path, g_free);
  return FALSE;
}

static void release(trace_file *tf)
{
  g_clear_pointer(&tf->path, g_free);
  g_clear_pointer(&tf->tmp_path, g_free);
  tf->f = NULL;
}

gboolean trace_file_commit(trace_file *tf, GError **err)
{
  int code = ferror(tf->f) ? EIO : 0;
  if (fclose(tf->f) != 0 && !code) code = errno;
  if (!code && rename(tf->tmp_path, tf->path) != 0) code = errno;
  if (code) {
    unlink(tf->tmp_path);
    io_error(err, tf->path, code);
  }
  release(tf);
  return code == 0;
}

void trace_file_abort(trace_file *tf)
{
  if (!tf->f) return;
  fclose(tf->f);
  unlink(tf->tmp_path);
  release(tf);
}
