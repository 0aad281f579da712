/* sim_child -- run one SimGrid simulation in a child process (the engine is
 * a per-process singleton) and bring back a few numbers through a pipe. */
#ifndef SIM_CHILD_H
#define SIM_CHILD_H

#include <check.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIM_CHILD_MAX 16

typedef void (*sim_child_fn)(void *arg, double out[SIM_CHILD_MAX]);

/* Returns the child's out[] in `out`; fails the test if the child dies. */
static inline void sim_child_run(sim_child_fn fn, void *arg, double out[SIM_CHILD_MAX])
{
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    double res[SIM_CHILD_MAX] = {0};
    fn(arg, res);
    ssize_t n = write(fds[1], res, sizeof res);
    _exit(n == (ssize_t)sizeof res ? 0 : 1);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], out, sizeof(double) * SIM_CHILD_MAX);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  ck_assert_msg(n == (ssize_t)(sizeof(double) * SIM_CHILD_MAX) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "simulation child failed");
}

#endif
