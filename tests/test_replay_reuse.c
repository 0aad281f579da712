/* test_replay_reuse -- one process's prepared engine replays layout after layout (the pool's servers,
 * analysis/zygote.h; sim/replay.h) and each gives exactly what a fresh process gives: the step time and every
 * breakdown category to the last bit, in sequence, with a layout that does not fit in memory (replayed, its
 * verdict OOM) and an invalid one (refused before the engine) between them, and the first layout again at the
 * end. The expected values are the same replays each in a process of its own, forked before anything was
 * prepared, that prepares the platform and replays once (what every replay was before the servers). */
#include <check.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "platforms/plat_params.h"
#include "sim/replay.h"
#include "test_layout.h"
#include "workloads/schedule.h"

enum { N_CASES = 7, N_VALUES = 1 + TL_N };

/* The cases: 16 H100 (one platform: one engine), llama-7b at seq 512. */
static sim_request request(int i)
{
  sim_request rq = {.gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(model_load_named("llama-7b", &rq.m, &err), "%s", err ? err->message : "");
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", "nemo", &rq.prof, &err));
  rq.capacity_gib = 1000;
  static const struct { int tp, pp, zero, ogr, vs; double capacity_gib; } c[N_CASES] = {
      {2, 2, 1, 0, 1, 1000}, /* 1F1B */
      {1, 4, 3, 1, 1, 1000}, /* ZeRO-3 with the overlapped gradient reduction: a communication stream */
      {2, 4, 1, 0, 1, 1},    /* does not fit in 1 GiB: replayed, reported OOM */
      {3, 1, 1, 0, 1, 1000}, /* tp 3 does not divide the heads: invalid, no replay */
      {2, 2, 1, 0, 2, 1000}, /* interleaved, 2 virtual stages */
      {1, 2, 0, 0, 1, 1000}, /* ZeRO 0 */
      {2, 2, 1, 0, 1, 1000}, /* the first again */
  };
  int tp = c[i].tp, pp = c[i].pp;
  int dp = 16 / (tp * pp);
  rq.l = test_layout(16, tp, pp, 1, CKPT_NONE);
  rq.l.seq_len = 512;
  rq.l.global_batch = MAX(dp, 1) * 8;
  rq.l.zero = c[i].zero;
  rq.l.overlap_grad_reduce = c[i].ogr;
  if (c[i].vs > 1) {
    ck_assert(sched_parse("interleaved", &rq.l.schedule, NULL));
    rq.l.virtual_stages = c[i].vs;
  }
  rq.capacity_gib = c[i].capacity_gib;
  return rq;
}

/* Replay case i on this process's engine: its step time and breakdown into v; FALSE when it is refused. */
static gboolean replay_case(int i, double *v, gboolean *oom)
{
  sim_request rq = request(i);
  sim_outcome o = {0};
  GError *err = NULL;
  gboolean ok = sim_run_layout(&rq, &o, &err);
  if (ok) {
    v[0] = o.met->step_time_s;
    memcpy(v + 1, o.met->seconds, sizeof o.met->seconds);
    *oom = o.met->oom;
  }
  g_clear_error(&err);
  sim_outcome_clear(&o);
  return ok;
}

static void prepare(void)
{
  sim_request rq = request(0);
  plat_params pp = plat_params_of(&rq.prof, rq.l.gpus);
  ck_assert(replay_prepare(&pp, &rq.replay));
}

START_TEST(test_a_reused_engine_replays_each_layout_as_a_fresh_process_does)
{
  /* fresh: each case in a process of its own that prepares the engine and replays once */
  double fresh[N_CASES][N_VALUES];
  gboolean fresh_ok[N_CASES];
  for (int i = 0; i < N_CASES; i++) {
    int fd[2];
    ck_assert(pipe(fd) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
      close(fd[0]);
      prepare();
      double v[N_VALUES] = {0};
      gboolean oom = FALSE;
      gboolean ok = replay_case(i, v, &oom);
      ck_assert(write(fd[1], &ok, sizeof ok) == sizeof ok && write(fd[1], v, sizeof v) == sizeof v);
      _exit(0);
    }
    close(fd[1]);
    ck_assert(read(fd[0], &fresh_ok[i], sizeof fresh_ok[i]) == sizeof fresh_ok[i]);
    ck_assert(read(fd[0], fresh[i], sizeof fresh[i]) == sizeof fresh[i]);
    close(fd[0]);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  /* reused: every case in turn on this process's one engine */
  prepare();
  for (int i = 0; i < N_CASES; i++) {
    double v[N_VALUES] = {0};
    gboolean oom = FALSE;
    gboolean ok = replay_case(i, v, &oom);
    ck_assert_int_eq(ok, fresh_ok[i]);
    ck_assert_msg(ok == (i != 3), "case %d: replayed %d", i, ok);
    if (i == 2) ck_assert_msg(oom, "case 2 fits: not the out-of-memory case it stands for");
    if (i != 2 && ok) ck_assert_msg(!oom, "case %d does not fit", i);
    ck_assert_msg(replay_reusable(), "case %d left the engine unclean", i);
    if (!ok) continue;
    ck_assert_msg(v[0] > 0, "case %d: step time %g", i, v[0]);
    for (int k = 0; k < N_VALUES; k++)
      ck_assert_msg(memcmp(&v[k], &fresh[i][k], sizeof v[k]) == 0, "case %d value %d: reused %a (%.17g), fresh %a (%.17g)",
                    i, k, v[k], v[k], fresh[i][k], fresh[i][k]);
  }
  ck_assert(memcmp(fresh[0], fresh[N_CASES - 1], sizeof fresh[0]) == 0); /* the same layout, the same replay */
  ck_assert(memcmp(fresh[0], fresh[4], sizeof fresh[0]) != 0);            /* and the cases differ */
}
END_TEST

int main(void)
{
  Suite *s = suite_create("replay_reuse");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_a_reused_engine_replays_each_layout_as_a_fresh_process_does);
  suite_add_tcase(s, tc);
  return check_run_forked(s); /* it prepares SimGrid's engine: a process of its own */
}
