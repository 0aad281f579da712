/* test_footprint -- the memory estimate of a simulation (analysis/footprint.h) against what the
 * simulation takes: the peak resident set (ru_maxrss) of a child process running `layoutsim
 * simulate` (the binary meson built, in $LAYOUTSIM), for layouts each dominated by another part of
 * the estimate (the micro-batches' events, data parallelism's mirrored ranks and the routes between
 * nodes, a deep pipeline, every rank simulated one by one, gradient buckets, SimGrid's Paje trace);
 * and the guard: requests over the budget are refused before anything is allocated, at once. The
 * estimate is made from the same command line, read by layoutsim's own option parser. */
#include <check.h>

#include "check_main.h"
#include "check_tmpdir.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/footprint.h"
#include "analysis/run_cost.h"
#include "cli/options.h"
#include "common/lsim_json.h"

#define MIB (1024.0 * 1024.0)

/* Under AddressSanitizer (tools/test.sh's sanitizer build) a process's resident set holds ASan's shadow
 * memory and redzones, and ASan reserves terabytes of address space as it starts: the peak RSS is not
 * the simulation's, and no address-space limit can hold. There the estimate is not held to the RSS, and
 * the refusals are checked without the limit (the plain build checks them under it). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* "COMMAND ARGS" split at blanks, a word @NAME standing for the file NAME of the test's directory. */
static char **command_line(const char *args)
{
  char **argv = g_strsplit(args, " ", -1);
  for (char **a = argv; *a; a++)
    if (**a == '@') {
      char *file = tmp_path(*a + 1);
      g_free(*a);
      *a = file;
    }
  return argv;
}

/* The estimate of what `layoutsim simulate ARGS` will take, as layoutsim reads ARGS. */
static void estimate(const char *args, footprint *fp)
{
  g_auto(GStrv) argv = command_line(args); /* argv[0] "simulate", as main hands it to cli_parse */
  cli_opts o;
  cli_opts_init(&o);
  GError *err = NULL;
  ck_assert_msg(cli_parse(&o, "simulate", CMD_SIMULATE, (int)g_strv_length(argv), argv, &err) &&
                    cli_resolve(&o, TRUE, &err) && sim_request_prepare(&o.rq, &err) &&
                    footprint_of_request(&o.rq, TRUE, fp, &err),
                "%s: %s", args, err ? err->message : "");
  cli_opts_clear(&o);
}

/* Run `layoutsim COMMAND ARGS` (standard output to /dev/null; standard error to `errors` unless NULL)
 * with at most `as_bytes` of address space (but under ASan) and 60 s; its exit status, peak RSS (bytes) and CPU time
 * (user + system: a wall clock on a shared, loaded machine measures the other processes too). */
static int run(const char *args, double as_bytes, double *rss_bytes, double *seconds, const char *errors)
{
  const char *bin = getenv("LAYOUTSIM");
  ck_assert_msg(bin != NULL, "LAYOUTSIM names the layoutsim binary (tests/meson.build sets it)");
  g_auto(GStrv) argv = command_line(args);
  g_autofree char **full = g_new0(char *, g_strv_length(argv) + 2);
  full[0] = "layoutsim";
  memcpy(full + 1, argv, sizeof(char *) * g_strv_length(argv));
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct rlimit as = {(rlim_t)as_bytes, (rlim_t)as_bytes};
    int null = open("/dev/null", O_WRONLY), e = errors ? open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    if ((!UNDER_ASAN && setrlimit(RLIMIT_AS, &as) != 0) || null < 0 || e < 0 || dup2(null, STDOUT_FILENO) < 0 ||
        dup2(e, STDERR_FILENO) < 0)
      _exit(127);
    alarm(60); /* kept across exec */
    unsetenv("MALLOC_PERTURB_"); /* meson test's: it would fill (so make resident) every actor's 8 MiB stack */
    execv(bin, full);
    _exit(127);
  }
  int status;
  struct rusage ru;
  ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
  *seconds = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  *rss_bytes = ru.ru_maxrss * 1024.0; /* Linux: kilobytes */
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A model file NAME of the test's directory. */
static void write_model(const char *name, int layers, int hidden, int heads, int ffn, int vocab)
{
  g_autofree char *path = tmp_path(name);
  g_autofree char *json = g_strdup_printf("{\"name\": \"%.*s\", \"layers\": %d, \"hidden\": %d, \"heads\": %d, "
                                          "\"ffn\": %d, \"vocab\": %d}", (int)(strchr(name, '.') - name), name,
                                          layers, hidden, heads, ffn, vocab);
  ck_assert(g_file_set_contents(path, json, -1, NULL));
}

/* Layouts of different shapes (dp from 1 to 2048, pp from 1 to 80, 1 to 8192 micro-batches), each
 * with the part of the estimate it exercises most (beside the fixed process). */
static const struct {
  const char *what;
  footprint_part part;
  const char *args;
} SHAPES[] = {
    {"4096 micro-batches on 1 GPU", FP_EVENTS, "simulate --model llama-7b --gpus 1 --global-batch 4096 --seq-len 128"},
    {"dp 768 tp 8: 768 nodes (a star root: the ranks)", FP_RANKS,
     "simulate --model llama-7b --gpus 6144 --tp 8 --global-batch 768 --seq-len 128"},
    {"65b pp 80 tp 8, 256 micro-batches", FP_EVENTS,
     "simulate --model llama-65b --gpus 640 --tp 8 --pp 80 --global-batch 256"},
    {"2048 ranks one by one, 1 layer", FP_ACTORS,
     "simulate --model-file @small.json --gpus 2048 --global-batch 2048 --seq-len 128 --no-symmetry"},
    {"dp 2 of 8 huge layers: buckets", FP_BUCKETS,
     "simulate --model-file @buckets.json --gpus 2 --global-batch 2 --seq-len 8"},
    {"--paje-simgrid, 8 GPUs", FP_TRACE,
     "simulate --model llama-7b --gpus 8 --global-batch 128 --seq-len 128 --paje-simgrid @t.trace"},
    {"13b tp 2 pp 4 dp 16, 512 micro-batches", FP_EVENTS,
     "simulate --model llama-13b --gpus 128 --tp 2 --pp 4 --global-batch 8192"},
    {"issue 19: dp 1024, 8192 micro-batches", FP_EVENTS, "simulate --gpus 1024 --global-batch 8388608"},
};

START_TEST(test_estimate_is_within_a_factor_of_two_of_the_measured_peak_rss)
{
  write_model("small.json", 1, 512, 8, 1024, 1000);
  /* 8 enormous layers: 8 x 35,185 gradient buckets per GPU (3 events each), far more than a micro-batch's */
  write_model("buckets.json", 8, 1048576, 65536, 4194304, 1024);
  printf("%-40s %9s %9s %6s %7s  largest part but the process\n", "layout", "est. MiB", "RSS MiB", "ratio", "time s");
  for (size_t i = 0; i < G_N_ELEMENTS(SHAPES); i++) {
    footprint fp;
    estimate(SHAPES[i].args, &fp);
    double rss, seconds;
    ck_assert_int_eq(run(SHAPES[i].args, 64.0 * 1024 * MIB, &rss, &seconds, NULL), 0); /* 8 MiB stacks: mapped */
    double ratio = fp.total_bytes / rss;
    int big = FP_EVENTS;
    for (int p = FP_EVENTS; p < FP_N; p++)
      if (fp.bytes[p] > fp.bytes[big]) big = p;
    printf("%-40s %9.1f %9.1f %6.2f %7.2f  %s, %.1f MiB\n", SHAPES[i].what, fp.total_bytes / MIB, rss / MIB, ratio,
           seconds, footprint_part_name((footprint_part)big), fp.bytes[big] / MIB);
    fflush(stdout);
    ck_assert_msg(big == (int)SHAPES[i].part, "%s: its largest part is %s", SHAPES[i].what,
                  footprint_part_name((footprint_part)big));
    ck_assert_msg(ratio >= 0.5 && ratio <= 2.0, "%s: estimate %.1f MiB, measured %.1f MiB", SHAPES[i].what,
                  fp.total_bytes / MIB, rss / MIB);
  }
}
END_TEST


/* The time estimate counts the platform: every GPU, mirrored or not, is a SimGrid host with its links and routes.
 * A mirrored run of 262,144 GPUs (llama-7b tp 8, one micro-batch a replica, 12 explicit events) took 6.4 s of CPU
 * (user + system, /usr/bin/time, 2 shared cores under load); without the GPUs' term it was estimated at 0.3 s. */
START_TEST(test_time_estimate_of_a_huge_mirrored_cluster_is_within_a_factor_of_two)
{
  footprint fp;
  estimate("simulate --model llama-7b --gpus 262144 --tp 8 --global-batch 32768", &fp);
  double measured_s = 6.4, est = run_cost_seconds(&fp);
  ck_assert_msg(est >= measured_s / 2 && est <= measured_s * 2, "estimated %.2f s, measured %.1f s of CPU", est,
                measured_s);
}
END_TEST

/* `layoutsim replay G.json` peaks while it reads the file, its text and JSON tree beside the graph it
 * builds: lsim_json_parse_bytes against the peak RSS, and the replay's own estimate below it. */
START_TEST(test_reading_a_graph_file_is_estimated_within_a_factor_of_two)
{
  double rss, seconds;
  const char *write = "graph --model llama-7b --gpus 1 --global-batch 256 --seq-len 128 -o @g.json";
  ck_assert_int_eq(run(write, 16.0 * 1024 * MIB, &rss, &seconds, NULL), 0);
  g_autofree char *path = tmp_path("g.json"), *text = NULL;
  gsize len;
  ck_assert(g_file_get_contents(path, &text, &len, NULL));
  g_autoptr(graph) g = graph_load(path, NULL);
  ck_assert(g != NULL);
  gpu_profile prof;
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &prof, NULL));
  footprint fp;
  footprint_of_graph(g, &prof, NULL, &fp);
  double reading = fp.bytes[FP_PROCESS] + len + lsim_json_parse_bytes(text, len) + fp.events * sizeof(graph_event);
  double want = MAX(reading, fp.total_bytes);
  ck_assert_int_eq(run("replay @g.json", 16.0 * 1024 * MIB, &rss, &seconds, NULL), 0);
  printf("%-40s %9.1f %9.1f %6.2f %7.2f  reading it, %.1f MiB; replaying it %.1f MiB\n", "replay of a graph file",
         want / MIB, rss / MIB, want / rss, seconds, reading / MIB, fp.total_bytes / MIB);
  ck_assert_msg(reading > fp.total_bytes && want / rss >= 0.5 && want / rss <= 2.0,
                "estimate %.1f MiB, measured %.1f MiB", want / MIB, rss / MIB);
}
END_TEST

/* The reproductions of requests inside every documented limit that exhausted memory, and the
 * other parts that grow: refused at once (under a 3.8 GiB address space, the ulimit -v 4000000),
 * exit status 2, one line naming the option to change; no output left behind. */
START_TEST(test_requests_over_the_budget_are_refused_at_once_naming_the_option)
{
  /* 1024 layers of 2^20 wide: 1.44e8 events of gradient buckets on 8 GPUs (issue 19) */
  write_model("huge.json", 1024, 1048576, 65536, 4194304, 16777216);
  static const char *const cases[][2] = {
      {"simulate --model-file @huge.json --gpus 8 --global-batch 8", "model: 'huge' would take about "},
      {"graph --model-file @huge.json --gpus 8 --global-batch 8 -o @g.json", "model: 'huge' would take about "},
      {"simulate --model llama-7b --gpus 64 --global-batch 524288 --no-symmetry",
       "global_batch: 524288 would take about "},
      {"simulate --gpus 1024 --global-batch 8388608 --paje-simgrid @t.trace", "--paje-simgrid: "},
      {"replay @wide.json", "/wide.json: reading its 250000094 bytes would take about "},
  };
  /* a graph file of 125 million group members: 250 MB of text, 10 GB of JSON tree */
  g_autofree char *wide = tmp_path("wide.json");
  FILE *f = fopen(wide, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"format\":\"layoutsim-graph\",\"world_size\":1,\"groups\":[{\"label\":\"dp\",\"ranks\":[0", f);
  for (int i = 1; i < 125000000; i++) fputs(",0", f);
  fputs("]}],\"programs\":[]}\n", f);
  ck_assert_int_eq(fclose(f), 0);
  g_autofree char *errors = tmp_path("stderr");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double rss, seconds;
    int rc = run(cases[i][0], 4000000.0 * 1024, &rss, &seconds, errors);
    g_autofree char *msg = NULL;
    ck_assert(g_file_get_contents(errors, &msg, NULL, NULL));
    ck_assert_msg(rc == 2, "%s: exit status %d (%s)", cases[i][0], rc, msg);
    /* at once: before the request's memory is allocated (its peak resident set stays under 1 GiB (wide.json is
     * read once to be counted, 250 MB), where going ahead would take gigabytes, and without parsing the file (counting wide.json's 250 MB
     * takes about 0.3 s, building its JSON tree would not finish under the 3.8 GiB limit); the time bound
     * is loose, CPU time on a shared 2-core machine being noisy too (ASan: 2 to 3 times slower) */
    ck_assert_msg(rss < 1024.0 * MIB, "%s: refused at a peak of %.0f MiB", cases[i][0], rss / MIB);
    ck_assert_msg(seconds < (UNDER_ASAN ? 20.0 : 8.0), "%s: refused after %.2f s", cases[i][0], seconds);
    gboolean one_line = strchr(msg, '\n') == msg + strlen(msg) - 1;
    gboolean named = g_str_has_prefix(msg, "layoutsim: ") && strstr(msg, cases[i][1]) && strstr(msg, "(allowed: ");
    ck_assert_msg(named && one_line, "%s: %s", cases[i][0], msg);
  }
  g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
  for (const char *name; (name = g_dir_read_name(dir));)
    ck_assert_msg(!g_str_has_prefix(name, "t.trace") && !g_str_has_prefix(name, "g.json"), "%s left behind", name);
}
END_TEST

/* Read file NAME of the test's directory (stderr captures); "" when absent. */
static char *slurp(const char *path)
{
  char *text = NULL;
  return g_file_get_contents(path, &text, NULL, NULL) ? text : g_strdup("");
}

/* Whether the test's directory holds a file whose name starts with one of `prefixes` (an output, or
 * its temporary file NAME.XXXXXX). */
static gboolean left_behind(const char *const *prefixes)
{
  g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
  for (const char *name; (name = g_dir_read_name(dir));)
    for (const char *const *p = prefixes; *p; p++)
      if (g_str_has_prefix(name, *p)) return TRUE;
  return FALSE;
}

/* A sweep of 10^9 layouts and more is refused from its count alone (analysis/sweep.c counts per axis):
 * within a second (0.5 to 0.9 s on this shared machine, most of it the process starting; bound loose)
 * and 100 MB, where counting by enumeration took 10 s to minutes. */
START_TEST(test_a_sweep_of_a_billion_layouts_is_refused_in_a_second_under_100_mb)
{
  static const char *const cases[] = {
      "sweep --model llama-7b --gpus 1-64 --micro-batch 1-100000",
      "sweep --model llama-7b --gpus 8 --tp 1-1000 --pp 1-1000 --micro-batch 1-1000",
      "sweep --model llama-7b --gpus 8 --micro-batch 1-100000 --ib-gbps 100,200,400,800 --nvlink-gbps 300,600,900,1800 "
      "--nics-per-node 1,2,4,8",
  };
  g_autofree char *errors = tmp_path("stderr");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double rss, seconds;
    int rc = run(cases[i], 4000000.0 * 1024, &rss, &seconds, errors);
    g_autofree char *msg = slurp(errors);
    printf("%-80s %.2f s, %.1f MiB\n", cases[i], seconds, rss / MIB);
    ck_assert_msg(rc == 2 && strstr(msg, " layouts to enumerate (allowed: ") && strstr(msg, "fewer values of --"),
                  "%s: exit status %d: %s", cases[i], rc, msg);
    ck_assert_msg(rss < 100 * MIB, "%s: refused at a peak of %.0f MiB", cases[i], rss / MIB);
    ck_assert_msg(seconds < (UNDER_ASAN ? 15.0 : 4.0), "%s: refused after %.2f s", cases[i], seconds);
  }
}
END_TEST

/* --max-seconds and --max-memory stop a run that passes them (analysis/run_cost.h): exit status 2, the
 * last line of standard error saying which limit and what was estimated, no output replaced and no
 * temporary file; soon after the limit (the watchdog looks every 20 ms; loose bounds, the machine is
 * shared). The simulation estimated at about 38 s of CPU says so first. */
START_TEST(test_limits_stop_a_run_cleanly_with_nothing_written)
{
  static const struct {
    const char *args, *line;
    double within_s;
  } cases[] = {
      {"simulate --model llama-7b --gpus 64 --global-batch 65536 --no-symmetry --max-seconds 1 -o @s.txt "
       "--chrome-trace @c.json",
       "layoutsim: --max-seconds: 1: the run was stopped unfinished after ", 8},
      /* a sweep of about 9 s (the sweep of --gpus 8 alone now takes 1.7 s: replays reuse their servers) */
      {"sweep --model llama-7b --gpus 16 --micro-batch 1-300 -j 2 --max-seconds 1.5 -o @s.txt",
       "layoutsim: --max-seconds: 1.5: the run was stopped unfinished after ", 8},
      {"sweep --model llama-7b --gpus 8 --micro-batch 1-400 -j 2 --max-memory 60M -o @s.txt",
       "layoutsim: --max-memory: 60 MiB: the run was stopped unfinished at ", 20},
  };
  static const char *const outputs[] = {"s.txt", "c.json", NULL};
  g_autofree char *errors = tmp_path("stderr");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double rss, seconds;
    int rc = run(cases[i].args, 16.0 * 1024 * MIB, &rss, &seconds, errors);
    g_autofree char *msg = slurp(errors);
    printf("%.60s... %.2f s, %.1f MiB: %s", cases[i].args, seconds, rss / MIB, msg);
    const char *last = g_strrstr_len(msg, (gssize)strlen(msg) - 1, "\n");
    last = last ? last + 1 : msg;
    ck_assert_msg(rc == 2 && g_str_has_prefix(last, cases[i].line) && strstr(last, "nothing written (allowed: a larger --"),
                  "%s: exit status %d: %s", cases[i].args, rc, msg);
    ck_assert_msg(seconds < cases[i].within_s, "%s: stopped after %.2f s", cases[i].args, seconds);
    ck_assert_msg(!left_behind(outputs), "%s: an output or its temporary file left behind", cases[i].args);
  }
  /* the estimate, said before the run */
  run(cases[0].args, 16.0 * 1024 * MIB, &(double){0}, &(double){0}, errors);
  g_autofree char *msg = slurp(errors);
  ck_assert_msg(g_str_has_prefix(msg, "layoutsim: this run will take about ") && strstr(msg, "4.67e+07 events on 64 "),
                "%s", msg);
}
END_TEST

/* The memory budget is --max-memory's: a request estimated above it is refused before it starts,
 * naming the option to change and the limit, at once; and a table row (predict, validate) whose graph
 * would exceed the budget is refused by name in its row, not run (its worker would need 28 GiB). */
START_TEST(test_the_budget_guards_simulate_and_every_table_row)
{
  g_autofree char *errors = tmp_path("stderr");
  double rss, seconds;
  int rc = run("simulate --model llama-7b --gpus 64 --global-batch 4096 --no-symmetry --max-memory 100M", 4000000.0 * 1024,
               &rss, &seconds, errors);
  g_autofree char *msg = slurp(errors);
  ck_assert_msg(rc == 2 && g_str_has_prefix(msg, "layoutsim: global_batch: 4096 would take about ") &&
                    strstr(msg, "more than the budget of 100 MiB (--max-memory)") && strstr(msg, "(allowed: at most about "),
                "exit status %d: %s", rc, msg);
  ck_assert_msg(rss < 100 * MIB && seconds < (UNDER_ASAN ? 15.0 : 4.0), "refused after %.2f s at %.0f MiB", seconds,
                rss / MIB);
  g_autofree char *table = tmp_path("t.csv");
  ck_assert(g_file_set_contents(table,
                                "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp,"
                                "status,step_time_s\n"
                                "llama-7b,2048,524288,32000,64,none,flash2,1,1,1,0,ok,5000\n"
                                "llama-7b,2048,64,32000,64,none,flash2,1,1,1,0,ok,1\n", -1, NULL));
  rc = run("predict @t.csv --no-symmetry --fidelity full -j 1 -o @p.csv", 4000000.0 * 1024, &rss, &seconds, errors);
  ck_assert_int_eq(rc, 0);
  g_autofree char *pred = tmp_path("p.csv"), *out = slurp(pred);
  ck_assert_msg(strstr(out, ",invalid,") && strstr(out, "\"global_batch: 524288 would take about 27.8 GiB of memory, "
                                                        "more than the budget of 8 GiB"), "%s", out);
  ck_assert_msg(rss < 400 * MIB && seconds < (UNDER_ASAN ? 60.0 : 30.0), "predicted in %.2f s at %.0f MiB", seconds,
                rss / MIB);
  rc = run("validate @t.csv --no-symmetry --fidelity full -j 1", 4000000.0 * 1024, &rss, &seconds, errors);
  g_autofree char *said = slurp(errors);
  ck_assert_msg(rc == 0 && strstr(said, "t.csv line 2: global_batch: 524288 would take about 27.8 GiB of memory") &&
                    strstr(said, "(row left out)"), "exit status %d: %s", rc, said);
  ck_assert_msg(rss < 400 * MIB, "validated at %.0f MiB", rss / MIB);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("footprint");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  if (!UNDER_ASAN) {
    tcase_add_test(tc, test_estimate_is_within_a_factor_of_two_of_the_measured_peak_rss);
    tcase_add_test(tc, test_reading_a_graph_file_is_estimated_within_a_factor_of_two);
  }
  tcase_add_test(tc, test_time_estimate_of_a_huge_mirrored_cluster_is_within_a_factor_of_two);
  tcase_add_test(tc, test_requests_over_the_budget_are_refused_at_once_naming_the_option);
  tcase_add_test(tc, test_a_sweep_of_a_billion_layouts_is_refused_in_a_second_under_100_mb);
  tcase_add_test(tc, test_limits_stop_a_run_cleanly_with_nothing_written);
  tcase_add_test(tc, test_the_budget_guards_simulate_and_every_table_row);
  suite_add_tcase(s, tc);
  return check_run(s);
}
