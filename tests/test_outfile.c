/* test_outfile -- where common/lsim_outfile puts an output: a regular file
 * is replaced atomically (temporary file + rename, nothing left on abort); a
 * symbolic link is followed and stays a link; a FIFO or character device is
 * written directly and stays what it was; so is /dev/stdout's target (the
 * pipe or file behind /proc/self/fd/1).
 *
 * Nothing here can replace /dev/null or /dev/stdout, even when run as root
 * against a broken lsim_outfile: targets that must be written directly go
 * through write_direct, which aborts (removing the temporary file, renaming
 * nothing) if lsim_outfile chose a temporary file for them; /dev/stdout is
 * imitated by a private link to /proc/self/fd/1, its own target. Every test
 * forks (Check's default), so redirecting fd 1 stays inside the test.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "check_tmpdir.h"
#include "common/lsim_outfile.h"


/* Write `text` to `path` through lsim_outfile and commit. */
static void write_through(const char *path, const char *text)
{
  lsim_outfile tf;
  GError *err = NULL;
  if (!lsim_outfile_open(&tf, path, &err)) ck_abort_msg("open %s: %s", path, err->message);
  fputs(text, tf.f);
  if (!lsim_outfile_commit(&tf, &err)) ck_abort_msg("commit %s: %s", path, err->message);
}

/* Write `text` to a target that must be written directly (a FIFO, a device, our stdout): fail,
 * without renaming anything over it, if lsim_outfile would replace it. */
static void write_direct(const char *path, const char *text)
{
  lsim_outfile tf;
  GError *err = NULL;
  if (!lsim_outfile_open(&tf, path, &err)) ck_abort_msg("open %s: %s", path, err->message);
  if (tf.tmp_path) {
    g_autofree char *tmp = g_strdup(tf.tmp_path);
    lsim_outfile_abort(&tf);
    ck_abort_msg("%s would be replaced (written to the temporary file %s)", path, tmp);
  }
  fputs(text, tf.f);
  if (!lsim_outfile_commit(&tf, &err)) ck_abort_msg("commit %s: %s", path, err->message);
}

static char *contents(const char *path)
{
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "%s: cannot read", path);
  return text;
}

static int entries(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  while (g_dir_read_name(d)) n++;
  return n;
}

static mode_t lmode(const char *path)
{
  struct stat st;
  ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, g_strerror(errno));
  return st.st_mode;
}

START_TEST(test_regular_file_is_replaced_only_on_commit)
{
  g_autofree char *path = tmp_path("out.txt");
  ck_assert(g_file_set_contents(path, "old\n", -1, NULL));
  lsim_outfile tf;
  ck_assert(lsim_outfile_open(&tf, path, NULL));
  fputs("half", tf.f);
  lsim_outfile_abort(&tf);
  g_autofree char *kept = contents(path);
  ck_assert_str_eq(kept, "old\n");
  write_through(path, "new\n");
  g_autofree char *now = contents(path);
  ck_assert_str_eq(now, "new\n");
  ck_assert_int_eq(entries(tmpdir), 1); /* no temporary file left either way */
}
END_TEST

START_TEST(test_symlink_is_followed_and_its_target_replaced_atomically)
{
  /* link.txt -> sub/target.txt (relative, in another directory) */
  g_autofree char *sub = tmp_path("sub"), *target = g_build_filename(sub, "target.txt", NULL);
  g_autofree char *link = tmp_path("link.txt");
  ck_assert_int_eq(g_mkdir(sub, 0755), 0);
  ck_assert(g_file_set_contents(target, "old\n", -1, NULL));
  ck_assert_int_eq(symlink("sub/target.txt", link), 0);
  write_through(link, "new\n");
  ck_assert_msg(S_ISLNK(lmode(link)), "the link was replaced by a file");
  ck_assert(S_ISREG(lmode(target)));
  g_autofree char *now = contents(target);
  ck_assert_str_eq(now, "new\n");
  ck_assert_int_eq(entries(tmpdir), 2); /* sub and link.txt */
  ck_assert_int_eq(entries(sub), 1);    /* the temporary file went beside the target and was renamed */
  /* an abort leaves the target as it was, and nothing beside it */
  lsim_outfile tf;
  ck_assert(lsim_outfile_open(&tf, link, NULL));
  ck_assert_ptr_nonnull(strstr(tf.tmp_path, "sub/target.txt."));
  fputs("half", tf.f);
  lsim_outfile_abort(&tf);
  g_autofree char *kept = contents(target);
  ck_assert_str_eq(kept, "new\n");
  ck_assert_int_eq(entries(sub), 1);
}
END_TEST

START_TEST(test_dangling_symlink_creates_its_target)
{
  g_autofree char *link = tmp_path("link.txt"), *target = tmp_path("target.txt");
  ck_assert_int_eq(symlink("target.txt", link), 0);
  write_through(link, "new\n");
  ck_assert(S_ISLNK(lmode(link)));
  g_autofree char *now = contents(target);
  ck_assert_str_eq(now, "new\n");
}
END_TEST

START_TEST(test_symlink_loop_fails_naming_the_path)
{
  g_autofree char *a = tmp_path("a"), *b = tmp_path("b");
  ck_assert_int_eq(symlink("b", a), 0);
  ck_assert_int_eq(symlink("a", b), 0);
  lsim_outfile tf;
  GError *err = NULL;
  ck_assert(!lsim_outfile_open(&tf, a, &err));
  ck_assert_ptr_nonnull(strstr(err->message, a));
  g_error_free(err);
  ck_assert(S_ISLNK(lmode(a)) && S_ISLNK(lmode(b)));
  ck_assert_int_eq(entries(tmpdir), 2);
}
END_TEST

START_TEST(test_fifo_is_written_directly_and_stays_a_fifo)
{
  g_autofree char *fifo = tmp_path("ff");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  /* the check opens nothing: with no reader, an open for writing would wait for ever */
  ck_assert(lsim_outfile_check(fifo, NULL));
  /* a reader that does not wait, so that the writer's open returns; the text fits the pipe buffer */
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(rd, 0);
  write_direct(fifo, "through the fifo\n");
  char buf[64] = {0};
  ssize_t n = read(rd, buf, sizeof buf - 1);
  close(rd);
  ck_assert_int_eq(n, (ssize_t)strlen("through the fifo\n"));
  ck_assert_str_eq(buf, "through the fifo\n");
  ck_assert_msg(S_ISFIFO(lmode(fifo)), "the FIFO was replaced");
  ck_assert_int_eq(entries(tmpdir), 1);
}
END_TEST

START_TEST(test_character_device_is_written_directly_and_stays_a_device)
{
  g_autofree char *link = tmp_path("null-link");
  ck_assert_int_eq(symlink("/dev/null", link), 0);
  ck_assert(lsim_outfile_check("/dev/null", NULL));
  write_direct("/dev/null", "gone\n");
  write_direct(link, "gone\n");
  ck_assert_msg(S_ISCHR(lmode("/dev/null")), "/dev/null is no longer a character device");
  ck_assert(S_ISLNK(lmode(link)));
  ck_assert_int_eq(entries(tmpdir), 1);
}
END_TEST

/* The imitation of /dev/stdout: a link to /proc/self/fd/1, /dev/stdout's own target. */
static char *stdout_link(void)
{
  char *link = tmp_path("stdout");
  ck_assert_int_eq(symlink("/proc/self/fd/1", link), 0);
  return link;
}

START_TEST(test_stdout_on_a_pipe_is_written_directly)
{
  g_autofree char *link = stdout_link();
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  fflush(stdout);
  ck_assert_int_ge(dup2(p[1], STDOUT_FILENO), 0);
  close(p[1]);
  write_direct(link, "piped\n");
  ck_assert_int_ge(dup2(STDERR_FILENO, STDOUT_FILENO), 0); /* the write end closes: EOF for the reader */
  char buf[64] = {0};
  ssize_t n = read(p[0], buf, sizeof buf - 1);
  ck_assert_int_eq(n, 6);
  ck_assert_str_eq(buf, "piped\n");
  ck_assert(S_ISLNK(lmode(link)));
  ck_assert_int_eq(entries(tmpdir), 1);
}
END_TEST

START_TEST(test_stdout_on_an_appended_file_is_written_not_replaced)
{
  /* `-o /dev/stdout >> log`: the file the shell opened keeps what it had and gets the output after it */
  g_autofree char *link = stdout_link(), *log = tmp_path("log");
  ck_assert(g_file_set_contents(log, "before\n", -1, NULL));
  struct stat before, after;
  ck_assert_int_eq(stat(log, &before), 0);
  int fd = open(log, O_WRONLY | O_APPEND);
  ck_assert_int_ge(fd, 0);
  fflush(stdout);
  ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
  close(fd);
  write_direct(link, "output\n");
  ck_assert_int_eq(stat(log, &after), 0);
  ck_assert_msg(before.st_ino == after.st_ino, "the log was replaced, not written");
  g_autofree char *text = contents(log);
  ck_assert_str_eq(text, "before\noutput\n");
  ck_assert_int_eq(entries(tmpdir), 2);
}
END_TEST

START_TEST(test_stdout_on_a_truncated_file_keeps_output_and_what_follows_in_order)
{
  /* `validate -o /dev/stdout > log`: the shell's descriptor has no O_APPEND; the output must go
   * through it (its offset), so what the command prints afterwards follows instead of overwriting
   * it from offset 0, and a writer that opens files by name (Paje) is refused: it would truncate. */
  g_autofree char *link = stdout_link(), *log = tmp_path("log");
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ck_assert_int_ge(fd, 0);
  fflush(stdout);
  ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
  close(fd);
  printf("before\n");
  write_direct(link, "output\n");
  printf("after\n");
  fflush(stdout);
  g_autofree char *text = contents(log);
  ck_assert_str_eq(text, "before\noutput\nafter\n");
  lsim_outfile tf;
  GError *err = NULL;
  ck_assert(!lsim_outfile_open_named(&tf, link, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "standard output or error"));
  g_error_free(err);
  g_autofree char *again = contents(log);
  ck_assert_str_eq(again, "before\noutput\nafter\n");
}
END_TEST

START_TEST(test_two_links_to_one_new_file_have_one_destination)
{
  g_autofree char *target = tmp_path("target"), *l1 = tmp_path("l1"), *l2 = tmp_path("l2");
  ck_assert_int_eq(symlink("target", l1), 0);
  ck_assert_int_eq(symlink(target, l2), 0);
  g_autofree char *d1 = lsim_outfile_destination(l1), *d2 = lsim_outfile_destination(l2);
  g_autofree char *dt = lsim_outfile_destination(target);
  ck_assert_str_eq(d1, d2);
  ck_assert_str_eq(d1, dt);
}
END_TEST

START_TEST(test_directory_and_missing_directory_fail_naming_the_path)
{
  g_autofree char *missing = tmp_path("missing/out.txt");
  const char *bad[] = {tmpdir, missing};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    lsim_outfile tf;
    GError *err = NULL;
    ck_assert(!lsim_outfile_check(bad[i], &err));
    ck_assert_ptr_nonnull(strstr(err->message, bad[i]));
    g_clear_error(&err);
    ck_assert(!lsim_outfile_open(&tf, bad[i], &err));
    ck_assert_ptr_nonnull(strstr(err->message, bad[i]));
    g_clear_error(&err);
  }
  ck_assert_int_eq(entries(tmpdir), 0);
}
END_TEST

/* Signals: run `body` in a child process whose signal dispositions are the defaults (so
 * lsim_outfile installs its handlers there); return its wait status. */
static int in_child(void (*body)(void))
{
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) signal(sigs[i], SIG_DFL);
    body();
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

/* The child died of `sig` (the handler re-raised it) and left `files` entries in the directory. */
static void expect_killed(void (*body)(void), int sig, int files)
{
  int status = in_child(body);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sig, "wait status %d, expected death by signal %d",
                status, sig);
  ck_assert_int_eq(entries(tmpdir), files);
}

/* The child ran to its end (its checks passed: exit 0) and committed exactly one file. */
static void expect_committed_one(void (*body)(void))
{
  int status = in_child(body);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "wait status %d, expected exit 0", status);
  ck_assert_int_eq(entries(tmpdir), 1);
}

static void open_or_exit(lsim_outfile *tf, const char *name)
{
  g_autofree char *path = tmp_path(name);
  if (!lsim_outfile_open(tf, path, NULL)) _exit(3);
  fputs("partial", tf->f);
  fflush(tf->f);
}

static void killed_while_writing(void)
{
  lsim_outfile tf;
  open_or_exit(&tf, "out.csv");
  raise(SIGTERM);
  _exit(4); /* not reached: the handler re-raises with the default action */
}

START_TEST(test_signal_removes_the_temporary_file_and_still_kills)
{
  expect_killed(killed_while_writing, SIGTERM, 0);
}
END_TEST

static void interrupted_after_one_commit(void)
{
  lsim_outfile done, open;
  open_or_exit(&done, "done.csv");
  if (!lsim_outfile_commit(&done, NULL)) _exit(3);
  open_or_exit(&open, "open.csv");
  raise(SIGINT);
  _exit(4);
}

START_TEST(test_signal_keeps_committed_files)
{
  expect_killed(interrupted_after_one_commit, SIGINT, 1);
  g_autofree char *done = tmp_path("done.csv");
  g_autofree char *text = contents(done);
  ck_assert_str_eq(text, "partial");
}
END_TEST

/* The parent holds a file; a forked worker (with a file of its own, or none, as predict's) dies of
 * SIGTERM; the parent's file must still be there to commit, and the worker's must be gone. */
static void parent_of_a_dying_worker_with(gboolean worker_has_a_file)
{
  lsim_outfile tf;
  open_or_exit(&tf, "parent.csv");
  pid_t worker = fork();
  if (worker == 0) {
    lsim_outfile mine;
    if (worker_has_a_file) open_or_exit(&mine, "worker.csv");
    raise(SIGTERM);
    _exit(4);
  }
  int status;
  if (worker < 0 || waitpid(worker, &status, 0) != worker || !WIFSIGNALED(status)) _exit(5);
  if (access(tf.tmp_path, F_OK) != 0) _exit(6);
  _exit(lsim_outfile_commit(&tf, NULL) ? 0 : 7); /* one file in all: the parent's */
}

static void parent_of_a_dying_worker(void) { parent_of_a_dying_worker_with(FALSE); }

START_TEST(test_a_dying_forked_worker_leaves_the_parents_file)
{
  expect_committed_one(parent_of_a_dying_worker);
}
END_TEST

/* Open a file, take `sig` (which must not kill), commit: exit 0 if all went through. */
static void survive_and_commit(int sig)
{
  lsim_outfile tf;
  open_or_exit(&tf, "out.csv");
  raise(sig);
  _exit(lsim_outfile_commit(&tf, NULL) ? 0 : 7);
}

static void ignoring_sighup(void)
{
  signal(SIGHUP, SIG_IGN); /* as under nohup */
  survive_and_commit(SIGHUP);
}

START_TEST(test_an_ignored_signal_stays_ignored)
{
  expect_committed_one(ignoring_sighup);
}
END_TEST

/* SimGrid's simgrid_init replaces SIGINT's handler with one that exits without our cleanup;
 * lsim_outfile_guard_signals puts ours back. */
static void exits_without_cleanup(int sig)
{
  (void)sig;
  _exit(9);
}

static void guarded_after_a_library_handler(void)
{
  lsim_outfile tf;
  open_or_exit(&tf, "out.csv");
  signal(SIGINT, exits_without_cleanup);
  lsim_outfile_guard_signals();
  raise(SIGINT);
  _exit(4);
}

START_TEST(test_guard_replaces_a_library_handler)
{
  expect_killed(guarded_after_a_library_handler, SIGINT, 0);
}
END_TEST

static void exits_before_commit(void)
{
  lsim_outfile tf;
  open_or_exit(&tf, "out.csv");
  exit(1); /* what SimGrid's handler does, where it is still installed */
}

START_TEST(test_exit_before_commit_removes_the_file)
{
  int status = in_child(exits_before_commit);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  ck_assert_int_eq(entries(tmpdir), 0);
}
END_TEST

static void ignoring_sigint_across_a_library_handler(void)
{
  signal(SIGINT, SIG_IGN); /* a background job's SIGINT */
  lsim_outfile_guard_signals();
  signal(SIGINT, exits_without_cleanup);
  lsim_outfile_guard_signals();
  survive_and_commit(SIGINT);
}

START_TEST(test_a_signal_ignored_at_first_stays_ignored_after_a_library_handler)
{
  expect_committed_one(ignoring_sigint_across_a_library_handler);
}
END_TEST

/* Each file belongs to the process that made it: a forked child with a file of its own that dies
 * takes only its own file with it. */
static void parent_of_a_worker_with_its_own_file(void) { parent_of_a_dying_worker_with(TRUE); }

START_TEST(test_a_dying_worker_removes_only_its_own_file)
{
  expect_committed_one(parent_of_a_worker_with_its_own_file);
}
END_TEST

/* A signal ignored after the handlers are in place (a closed pipe a program wants to see as EPIPE)
 * stays ignored when the next file is opened. */
static void ignoring_sigpipe_later(void)
{
  lsim_outfile first;
  open_or_exit(&first, "first.csv");
  lsim_outfile_abort(&first);
  signal(SIGPIPE, SIG_IGN);
  survive_and_commit(SIGPIPE);
}

START_TEST(test_a_signal_ignored_later_stays_ignored)
{
  expect_committed_one(ignoring_sigpipe_later);
}
END_TEST

/* A write error is reported with its reason whether it happens while the stream's buffer fills (a large
 * output) or at the close (a small one): with fdopen the first said "Input/output error" (ferror keeps
 * no errno), the second "No space left on device". */
START_TEST(test_a_full_device_says_no_space_left_for_a_large_and_a_small_output)
{
  const gsize sizes[] = {10, 4 << 20};
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_autofree char *text = g_malloc(sizes[i] + 1);
    memset(text, 'x', sizes[i]);
    text[sizes[i]] = '\0';
    lsim_outfile tf;
    GError *err = NULL;
    ck_assert(lsim_outfile_open(&tf, "/dev/full", &err));
    fputs(text, tf.f);
    ck_assert(!lsim_outfile_commit(&tf, &err));
    g_autofree char *want = g_strdup_printf("/dev/full: cannot write (%s)", g_strerror(ENOSPC));
    ck_assert_str_eq(err->message, want);
    g_error_free(err);
  }
}
END_TEST

/* A run's outputs commit together: when one of them fails (a device that is full), no other replaces
 * its target, and no temporary file stays; when all can be written, all are. */
START_TEST(test_a_set_of_outputs_commits_all_or_none)
{
  g_autofree char *a = tmp_path("a.txt"), *b = tmp_path("b.txt");
  write_through(a, "old a");
  GError *err = NULL;
  lsim_outset set;
  lsim_outset_init(&set);
  FILE *fa = lsim_outset_open(&set, a, &err), *fb = lsim_outset_open(&set, b, &err);
  FILE *full = lsim_outset_open(&set, "/dev/full", &err);
  ck_assert(fa && fb && full);
  fputs("new a", fa);
  fputs("new b", fb);
  fputs("nowhere", full);
  ck_assert(!lsim_outset_commit(&set, &err));
  ck_assert_str_eq(err->message, "/dev/full: cannot write (No space left on device)");
  g_clear_error(&err);
  g_autofree char *kept = contents(a);
  ck_assert_str_eq(kept, "old a");
  ck_assert(!g_file_test(b, G_FILE_TEST_EXISTS));
  ck_assert_int_eq(entries(tmpdir), 1); /* a.txt alone: no temporary file */
  lsim_outset_abort(&set); /* after a commit: nothing to do */

  lsim_outset_init(&set); /* aborted before its commit: the same */
  fputs("new a", lsim_outset_open(&set, a, NULL));
  lsim_outset_abort(&set);
  ck_assert_int_eq(entries(tmpdir), 1);

  lsim_outset_init(&set);
  fputs("new a", lsim_outset_open(&set, a, NULL));
  fputs("new b", lsim_outset_open(&set, b, NULL));
  ck_assert(lsim_outset_commit(&set, &err));
  g_autofree char *ta = contents(a), *tb = contents(b);
  ck_assert_str_eq(ta, "new a");
  ck_assert_str_eq(tb, "new b");
  ck_assert_int_eq(entries(tmpdir), 2);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("outfile");
  TCase *tc = tcase_create("targets");
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  tcase_add_test(tc, test_regular_file_is_replaced_only_on_commit);
  tcase_add_test(tc, test_symlink_is_followed_and_its_target_replaced_atomically);
  tcase_add_test(tc, test_dangling_symlink_creates_its_target);
  tcase_add_test(tc, test_symlink_loop_fails_naming_the_path);
  tcase_add_test(tc, test_fifo_is_written_directly_and_stays_a_fifo);
  tcase_add_test(tc, test_character_device_is_written_directly_and_stays_a_device);
  tcase_add_test(tc, test_stdout_on_a_pipe_is_written_directly);
  tcase_add_test(tc, test_stdout_on_an_appended_file_is_written_not_replaced);
  tcase_add_test(tc, test_stdout_on_a_truncated_file_keeps_output_and_what_follows_in_order);
  tcase_add_test(tc, test_two_links_to_one_new_file_have_one_destination);
  tcase_add_test(tc, test_directory_and_missing_directory_fail_naming_the_path);
  tcase_add_test(tc, test_signal_removes_the_temporary_file_and_still_kills);
  tcase_add_test(tc, test_signal_keeps_committed_files);
  tcase_add_test(tc, test_a_dying_forked_worker_leaves_the_parents_file);
  tcase_add_test(tc, test_an_ignored_signal_stays_ignored);
  tcase_add_test(tc, test_guard_replaces_a_library_handler);
  tcase_add_test(tc, test_exit_before_commit_removes_the_file);
  tcase_add_test(tc, test_a_signal_ignored_at_first_stays_ignored_after_a_library_handler);
  tcase_add_test(tc, test_a_dying_worker_removes_only_its_own_file);
  tcase_add_test(tc, test_a_signal_ignored_later_stays_ignored);
  tcase_add_test(tc, test_a_full_device_says_no_space_left_for_a_large_and_a_small_output);
  tcase_add_test(tc, test_a_set_of_outputs_commits_all_or_none);
  suite_add_tcase(s, tc);
  return check_run_forked(s);
}
