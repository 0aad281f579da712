/* test_zygote -- the fork server (analysis/zygote.h) on jobs whose answers
 * are known: each result comes back under its own tag, a worker that dies is
 * reported with its signal, the workers of a family start from what their
 * family's zygote prepared (once, in one process), a family zygote that
 * dies reports the jobs it was given, and no zygote or worker outlives the
 * process that started them, killed by SIGTERM or SIGKILL. */
#include <check.h>

#include "check_main.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/zygote.h"

/* A job: a number and a family letter ('-': none). */
typedef struct tjob {
  int k;
  char family;
} tjob;

/* A result: 3k + 1, what the worker's process had prepared, and who forked it. */
typedef struct tres {
  int answer;
  char prepared;     /* the family letter its prepare() saw; 0: none */
  int prepare_count; /* how many times prepare() ran in the process the worker was forked from */
  int parent;        /* getppid(): the zygote that forked it */
  int self;          /* getpid(): the worker */
  int served;        /* the jobs this worker's process has run, this one included */
} tres;

static int served; /* in a worker: the jobs it has run */

static char prepared_letter; /* set by prepare, in a family zygote only */
static int prepare_count;

/* A job of k 1000: it writes its process, its parent (a family zygote) and its grandparent (the zygote)
 * to this pipe, then sleeps a minute (it must be killed long before). */
static int report_fd = -1;

static pid_t parent_of(pid_t pid)
{
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", pid), *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return -1;
  const char *p = strrchr(text, ')'); /* "pid (name) state ppid ..." */
  char state;
  int ppid;
  return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? ppid : -1;
}

/* Alive: a process that exists and is not a zombie (a zombie has ended; its reaper may be slow). */
static gboolean alive(pid_t pid)
{
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", pid), *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return FALSE;
  const char *p = strrchr(text, ')');
  return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static gboolean run(const void *job, size_t n, void *result, size_t result_bytes)
{
  const tjob *j = job;
  if (j->k == 1000) {
    int who[3] = {getpid(), getppid(), parent_of(getppid())};
    ck_assert(write(report_fd, who, sizeof who) == sizeof who);
    sleep(60);
  }
  ck_assert_uint_eq(n, sizeof *j);
  ck_assert_uint_eq(result_bytes, sizeof(tres));
  if (j->k < 0) abort(); /* a worker that dies: SIGABRT */
  tres r = {.answer = 3 * j->k + 1, .prepared = prepared_letter, .prepare_count = prepare_count, .parent = getppid(),
            .self = getpid(), .served = ++served};
  memcpy(result, &r, sizeof r);
  return j->k != 2000; /* a job after which its process may not run another */
}

static gboolean family(const void *job, size_t n, char *key, size_t key_len)
{
  const tjob *j = job;
  if (j->family == '-') return FALSE;
  g_snprintf(key, key_len, "family %c", j->family);
  return TRUE;
}

static void prepare(const void *job, size_t n)
{
  const tjob *j = job;
  if (j->family == 'X') { /* a family zygote that dies, once its first job is in its socket (sent right after the fork) */
    g_usleep(200000);
    abort();
  }
  prepared_letter = j->family;
  prepare_count++;
}

static zygote *start(void)
{
  zygote_ops ops = {.run = run, .result_bytes = sizeof(tres), .family = family, .prepare = prepare};
  GError *err = NULL;
  zygote *z = zygote_start(&ops, &err);
  ck_assert_msg(z, "%s", err ? err->message : "");
  return z;
}

/* Submit n jobs, collect n results into res[] by job index; failed[i] the reason or NULL. */
static void run_all(zygote *z, const tjob *jobs, int n, tres *res, char (*failed)[200])
{
  g_autofree guint64 *tags = g_new(guint64, n);
  for (int i = 0; i < n; i++) ck_assert(zygote_submit(z, &jobs[i], sizeof jobs[i], &tags[i]));
  for (int got = 0; got < n; got++) {
    guint64 tag;
    tres r;
    const char *why;
    char buf[200];
    ck_assert_msg(zygote_collect(z, &tag, &r, &why, buf, sizeof buf), "the zygote is gone after %d results", got);
    int i = 0;
    while (i < n && tags[i] != tag) i++;
    ck_assert_msg(i < n, "a result under tag %llu, which no job has", (unsigned long long)tag);
    res[i] = r;
    g_strlcpy(failed[i], why ? why : "", sizeof failed[i]);
  }
}

START_TEST(test_every_job_comes_back_with_its_own_result)
{
  zygote *z = start();
  enum { N = 24 };
  tjob jobs[N];
  for (int i = 0; i < N; i++) jobs[i] = (tjob){.k = 100 + 7 * i, .family = '-'};
  tres res[N];
  char failed[N][200];
  run_all(z, jobs, N, res, failed);
  for (int i = 0; i < N; i++) {
    ck_assert_str_eq(failed[i], "");
    ck_assert_int_eq(res[i].answer, 3 * (100 + 7 * i) + 1);
    ck_assert_int_eq(res[i].prepared, 0); /* no family: forked from the zygote itself, nothing prepared */
    ck_assert_int_ne(res[i].parent, getpid()); /* never forked by the caller */
  }
  zygote_stop(z);
}
END_TEST

START_TEST(test_a_worker_that_dies_is_reported_with_its_signal)
{
  zygote *z = start();
  tjob jobs[3] = {{1, '-'}, {-1, '-'}, {2, '-'}};
  tres res[3];
  char failed[3][200];
  run_all(z, jobs, 3, res, failed);
  ck_assert_str_eq(failed[0], "");
  ck_assert_str_eq(failed[2], "");
  ck_assert_int_eq(res[0].answer, 4);
  ck_assert_int_eq(res[2].answer, 7);
  g_autofree char *want = g_strdup_printf("simulation died (signal %d)", SIGABRT);
  ck_assert_str_eq(failed[1], want);
  zygote_stop(z);
}
END_TEST

START_TEST(test_family_workers_start_from_what_their_zygote_prepared_once)
{
  zygote *z = start();
  enum { N = 9 };
  tjob jobs[N];
  for (int i = 0; i < N; i++) jobs[i] = (tjob){.k = i, .family = i % 3 == 0 ? 'A' : i % 3 == 1 ? 'B' : '-'};
  tres res[N];
  char failed[N][200];
  run_all(z, jobs, N, res, failed);
  for (int i = 0; i < N; i++) {
    ck_assert_str_eq(failed[i], "");
    ck_assert_int_eq(res[i].answer, 3 * i + 1);
    if (jobs[i].family == '-') {
      ck_assert_int_eq(res[i].prepared, 0);
      ck_assert_int_eq(res[i].prepare_count, 0);
      continue;
    }
    ck_assert_int_eq(res[i].prepared, jobs[i].family);
    ck_assert_int_eq(res[i].prepare_count, 1); /* once in its family's zygote, not once per job */
    /* every worker of a family has the same parent, the family's zygote; the other family has another */
    ck_assert_int_eq(res[i].parent, res[jobs[i].family == 'A' ? 0 : 1].parent);
  }
  ck_assert_int_ne(res[0].parent, res[1].parent);
  ck_assert_int_ne(res[0].parent, res[2].parent); /* not the zygote that forks the jobs of no family */
  zygote_stop(z);
}
END_TEST

/* A family's jobs one after the other: each runs in the same server process as the one before, job after job,
 * except after a server that died (a crash: reported with its signal, the next job gets a new server) or one
 * whose run said it may not go on (it exits after sending its result). */
START_TEST(test_a_family_server_runs_job_after_job_and_a_crash_is_reported_and_replaced)
{
  zygote *z = start();
  enum { N = 8 };
  tjob jobs[N] = {{1, 'A'}, {2, 'A'}, {-1, 'A'}, {3, 'A'}, {4, 'A'}, {2000, 'A'}, {5, 'A'}, {6, 'A'}};
  tres res[N];
  char failed[N][200];
  for (int i = 0; i < N; i++) run_all(z, &jobs[i], 1, &res[i], &failed[i]); /* in turn: one server is idle */
  g_autofree char *want = g_strdup_printf("simulation died (signal %d)", SIGABRT);
  ck_assert_str_eq(failed[2], want);
  for (int i = 0; i < N; i++) {
    if (i == 2) continue;
    ck_assert_str_eq(failed[i], "");
    ck_assert_int_eq(res[i].answer, 3 * jobs[i].k + 1);
    ck_assert_int_eq(res[i].prepare_count, 1);
    ck_assert_int_eq(res[i].parent, res[0].parent); /* every server of the family: forked by its zygote */
  }
  /* the first server: jobs 0, 1 (then it died in job 2); the second: 3, 4, 5 (then it retired); the third: 6, 7 */
  static const int server_of[N] = {0, 0, -1, 1, 1, 1, 2, 2}, nth[N] = {1, 2, 0, 1, 2, 3, 1, 2};
  for (int i = 0; i < N; i++) {
    if (i == 2) continue;
    ck_assert_msg(res[i].served == nth[i], "job %d: the %dth job of its process, not the %dth", i, res[i].served, nth[i]);
    for (int j = 0; j < i; j++)
      if (j != 2) ck_assert_int_eq(res[i].self == res[j].self, server_of[i] == server_of[j]);
  }
  zygote_stop(z);
}
END_TEST

START_TEST(test_a_family_zygote_that_dies_reports_its_jobs)
{
  zygote *z = start();
  tjob jobs[3] = {{1, 'X'}, {3, 'A'}, {4, '-'}};
  tres res[3];
  char failed[3][200];
  run_all(z, jobs, 3, res, failed);
  g_autofree char *want = g_strdup_printf("simulation died (signal %d)", SIGABRT);
  ck_assert_str_eq(failed[0], want); /* its zygote died in prepare: the job is reported, not lost */
  ck_assert_str_eq(failed[1], "");
  ck_assert_str_eq(failed[2], "");
  ck_assert_int_eq(res[1].answer, 10);
  ck_assert_int_eq(res[2].answer, 13);
  zygote_stop(z);
}
END_TEST

/* ZYGOTE_MAX_FAMILIES families are kept; one more retires the least recently used, not the oldest: families a, b, c,
 * ... (the limit) are used in turn, then a again (b is now the least recently used), then one more family: b's zygote
 * and its server end, while a and c go on in the processes they had (the same family zygote, the same server), and b,
 * used again, gets a new family zygote. Jobs in turn, so that each family has one server. */
START_TEST(test_the_least_recently_used_family_retires_past_the_limit)
{
  G_STATIC_ASSERT(ZYGOTE_MAX_FAMILIES < 25); /* a letter each, not 'X' */
  zygote *z = start();
  enum { F = ZYGOTE_MAX_FAMILIES, N = F + 5 };
  tjob jobs[N];
  for (int i = 0; i < F; i++) jobs[i] = (tjob){.k = i, .family = (char)('a' + i)};
  jobs[F] = (tjob){.k = F, .family = 'a'};         /* a: most recently used; b: least */
  jobs[F + 1] = (tjob){.k = F + 1, .family = 'a' + F}; /* one family too many: b retires */
  jobs[F + 2] = (tjob){.k = F + 2, .family = 'a'};
  jobs[F + 3] = (tjob){.k = F + 3, .family = 'c'};
  jobs[F + 4] = (tjob){.k = F + 4, .family = 'b'};
  tres res[N];
  char failed[N][200];
  for (int i = 0; i < N; i++) {
    run_all(z, &jobs[i], 1, &res[i], &failed[i]);
    ck_assert_str_eq(failed[i], "");
    ck_assert_int_eq(res[i].answer, 3 * jobs[i].k + 1);
    ck_assert_int_eq(res[i].prepared, jobs[i].family);
    ck_assert_int_eq(res[i].prepare_count, 1);
    if (i == F + 1) { /* b's family zygote and its server end once it retired (its server was idle) */
      for (int t = 0; t < 200 && (alive(res[1].parent) || alive(res[1].self)); t++) g_usleep(10000);
      ck_assert_msg(!alive(res[1].parent), "the retired family b's zygote %d is still running", res[1].parent);
      ck_assert_msg(!alive(res[1].self), "the retired family b's server %d is still running", res[1].self);
    }
  }
  for (int i = 0; i < F; i++)
    for (int j = 0; j < i; j++) ck_assert_int_ne(res[i].parent, res[j].parent); /* a family zygote each */
  for (int i = 0; i < F; i++) ck_assert_int_ne(res[F + 1].parent, res[i].parent);
  /* a, used last before the new family, kept: the same zygote and server for its three jobs; c too */
  ck_assert_int_eq(res[F].parent, res[0].parent);
  ck_assert_int_eq(res[F + 2].parent, res[0].parent);
  ck_assert_int_eq(res[F + 2].self, res[0].self);
  ck_assert_int_eq(res[F + 2].served, 3);
  ck_assert_int_eq(res[F + 3].parent, res[2].parent);
  ck_assert_int_eq(res[F + 3].self, res[2].self);
  /* b, retired, starts again in a new family zygote (and retires the least recently used one) */
  ck_assert_int_ne(res[F + 4].parent, res[1].parent);
  ck_assert_int_eq(res[F + 4].served, 1);
  zygote_stop(z);
}
END_TEST

/* A process starts a zygote and a job that sleeps in a family's worker; the process is killed by sig: the
 * worker, its family zygote and the zygote must be gone within 2 s (they would sleep a minute). */
static void parent_killed_by(int sig)
{
  int fds[2];
  ck_assert(pipe(fds) == 0);
  pid_t parent = fork();
  ck_assert(parent >= 0);
  if (parent == 0) {
    setpgid(0, 0); /* a group of its own, with the default action of sig (not Check's) */
    signal(sig, SIG_DFL);
    close(fds[0]);
    report_fd = fds[1];
    zygote *z = start();
    tjob j = {1000, 'A'};
    guint64 tag;
    if (!zygote_submit(z, &j, sizeof j, &tag)) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  int who[3];
  ck_assert_int_eq(read(fds[0], who, sizeof who), sizeof who);
  close(fds[0]);
  ck_assert(alive(who[0]) && alive(who[1]) && alive(who[2]));
  ck_assert_int_eq(parent_of(who[2]), parent); /* worker <- family zygote <- zygote <- the killed process */
  kill(parent, sig);
  int status;
  ck_assert_int_eq(waitpid(parent, &status, 0), parent);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig);
  for (int i = 0; i < 200 && (alive(who[0]) || alive(who[1]) || alive(who[2])); i++) g_usleep(10000);
  ck_assert_msg(!alive(who[2]), "the zygote %d outlived its parent (signal %d)", who[2], sig);
  ck_assert_msg(!alive(who[1]), "the family zygote %d outlived its parent (signal %d)", who[1], sig);
  ck_assert_msg(!alive(who[0]), "the worker %d outlived its parent (signal %d)", who[0], sig);
}

START_TEST(test_no_process_outlives_a_parent_killed_by_sigterm) { parent_killed_by(SIGTERM); }
END_TEST

START_TEST(test_no_process_outlives_a_parent_killed_by_sigkill) { parent_killed_by(SIGKILL); }
END_TEST

int main(void)
{
  Suite *s = suite_create("zygote");
  TCase *tc = tcase_create("jobs");
  tcase_set_timeout(tc, 30); /* a result never reported would hang collect: fail, do not wait for ever */
  tcase_add_test(tc, test_every_job_comes_back_with_its_own_result);
  tcase_add_test(tc, test_a_worker_that_dies_is_reported_with_its_signal);
  tcase_add_test(tc, test_family_workers_start_from_what_their_zygote_prepared_once);
  tcase_add_test(tc, test_a_family_zygote_that_dies_reports_its_jobs);
  tcase_add_test(tc, test_a_family_server_runs_job_after_job_and_a_crash_is_reported_and_replaced);
  tcase_add_test(tc, test_the_least_recently_used_family_retires_past_the_limit);
  tcase_add_test(tc, test_no_process_outlives_a_parent_killed_by_sigterm);
  tcase_add_test(tc, test_no_process_outlives_a_parent_killed_by_sigkill);
  suite_add_tcase(s, tc);
  return check_run_forked(s);
}
