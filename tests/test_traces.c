/* test_traces -- the four views of a step (Paje, Chrome JSON, SVG, CSV)
 * agree with the timeline, with each other and with the reported metrics,
 * and the 1F1B bubble sits where theory puts it.
 *
 * Layout: llama-7b on 8 GPUs, pp 4, dp 2, micro-batch 1, global batch 16:
 * m = 16 / 2 = 8 micro-batches per replica; the flow-pairing test also runs
 * it with tp 2 (16 GPUs) and each with and without symmetry. Every test
 * forks (Check's default), so each runs its own SimGrid engine. The Paje
 * link tests add two four-node layouts (32 GPUs), each one simulation per
 * child process. The SVG tests add their own llama-7b layouts (svg_layout):
 * 32 GPUs pp 4 for shared rows, 64 GPUs for crowded labels, 64 checkpointed
 * micro-batches for sub-pixel layers.
 *
 * --paje is written from the timeline (traces/paje.c); --paje-simgrid by
 * SimGrid's own tracing during the run. The tests hold the first to the
 * second where SimGrid's is exact (containers, non-zero states, link bytes
 * where no two transfers share a link) and to formulas from the graph.
 *
 * The Paje and SVG cases check the files with pj_dump (Debian pajeng) and
 * xmllint (Debian libxml2-utils): `test_traces paje` and `test_traces svg`
 * run them alone, as their own meson tests (tests/meson.build), and exit 77
 * (meson: SKIP) when the tool is missing. CI installs both (tools/setup.sh).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/simulate.h"
#include "check_main.h"
#include "check_tmpdir.h"
#include "sim_child.h"
#include "traces/chrome.h"
#include "traces/csv_timeline.h"
#include "traces/paje.h"
#include "traces/svg.h"

#define PP 4
#define DP 2
#define GPUS 8
#define MICRO_BATCHES 8
#define GIB (1024.0 * 1024.0 * 1024.0)


/* Simulate the test layout with tensor-parallel degree `tp` (PP * DP * tp GPUs), mirrored replicas or
 * (`symmetry` FALSE) every rank explicit, the gradient buckets reduced beside the backward or not; `paje` may be
 * NULL. */
static void simulate_layout_overlap(sim_outcome *out, int tp, gboolean symmetry, const char *paje,
                                    gboolean overlap_grad_reduce)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.l = layout_default();
  rq.l.gpus = PP * DP * tp;
  rq.l.pp = PP;
  rq.l.tp = tp;
  rq.l.micro_batch = 1;
  rq.l.global_batch = DP * MICRO_BATCHES;
  rq.gen = gen_default_options();
  rq.gen.symmetry = symmetry;
  rq.gen.gpus_per_node = rq.prof.gpus_per_node;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l.overlap_grad_reduce = overlap_grad_reduce;
  rq.replay.simgrid_paje_path = paje;
  if (!sim_run_layout(&rq, out, &err)) ck_abort_msg("simulate: %s", err->message);
  ck_assert_int_eq(out->met->stages, PP);
}

static void simulate_layout(sim_outcome *out, int tp, gboolean symmetry, const char *paje)
{
  simulate_layout_overlap(out, tp, symmetry, paje, FALSE);
}

/* The test layout as the tests below assume it: tp 1, symmetric (the default). */
static void simulate(sim_outcome *out, const char *paje) { simulate_layout(out, 1, TRUE, paje); }

static tl_ranks all_ranks(const timeline *tl)
{
  tl_ranks sel;
  ck_assert(tl_ranks_parse(tl, "all", 0, &sel, NULL));
  ck_assert_int_eq(sel.n, GPUS);
  return sel;
}

static gboolean have(const char *tool)
{
  g_autofree char *p = g_find_program_in_path(tool);
  if (!p) fprintf(stderr, "SKIP: %s not found (tools/setup.sh installs it: Debian packages pajeng, libxml2-utils)\n", tool);
  return p != NULL;
}

static char *run_tool(char **argv, int *status)
{
  char *out = NULL;
  GError *err = NULL;
  if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                    status, &err))
    ck_abort_msg("%s: %s", argv[0], err->message);
  return out;
}

/* The category a trace names (workloads/category.h's table, which every writer reads). */
static int cat_index(const char *name)
{
  int c = tl_cat_from_name(name);
  if (c < 0) ck_abort_msg("unknown category '%s'", name);
  return c;
}

/* ---- Paje ------------------------------------------------------------- */

/* Simulate llama-7b on `gpus` GPUs with tp, pp and global batch as given, micro-batch 1; SimGrid's own
 * Paje trace (with its link variables if `simgrid_links`) to `simgrid_paje` unless NULL. */
static void simulate_any(sim_outcome *out, int gpus, int tp, int pp, int global_batch, gboolean symmetry,
                         const char *simgrid_paje, gboolean simgrid_links)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.l = layout_default();
  rq.l.gpus = gpus;
  rq.l.pp = pp;
  rq.l.tp = tp;
  rq.l.micro_batch = 1;
  rq.l.global_batch = global_batch;
  rq.gen = gen_default_options();
  rq.gen.symmetry = symmetry;
  rq.gen.gpus_per_node = rq.prof.gpus_per_node;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.replay.simgrid_paje_path = simgrid_paje;
  rq.replay.simgrid_paje_links = simgrid_links;
  if (!sim_run_layout(&rq, out, &err)) ck_abort_msg("simulate: %s", err->message);
}

/* pj_dump's lines of a trace (it must parse it). */
static GStrv pj_dump(const char *trace)
{
  char *argv[] = {"pj_dump", "-l", "9", (char *)trace, NULL};
  int status;
  char *dump = run_tool(argv, &status);
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "pj_dump failed on %s", trace);
  GStrv lines = g_strsplit(dump, "\n", -1);
  g_free(dump);
  return lines;
}

/* The fields of a pj_dump line of `kind` ("State", "Variable", "Container"), NULL for another kind. */
static GStrv fields_of(const char *line, const char *kind)
{
  size_t n = strlen(kind);
  if (strncmp(line, kind, n) || line[n] != ',') return NULL;
  GStrv f = g_strsplit(line, ",", -1);
  for (char **p = f; *p; p++) g_strstrip(*p);
  return f;
}

/* Rank of a GPU host name n<node>_g<gpu> (8 GPUs a node). */
static int host_rank(const char *name)
{
  int node, gpu;
  ck_assert_msg(sscanf(name, "n%d_g%d", &node, &gpu) == 2, "state on '%s', not a GPU host", name);
  return node * 8 + gpu;
}

/* Per GPU, the Paje states tile the step (their durations add up to it within 1 us) and agree with
 * the timeline category by category; `allow_zero`: whether a state may last 0 s (SimGrid's do). */
static void assert_states_tile_the_step(GStrv lines, const sim_outcome *out, gboolean allow_zero)
{
  int gpus = out->g->world_size;
  g_autofree double *total = g_new0(double, gpus);
  g_autofree double *per_cat = g_new0(double, gpus * TL_N);
  int states = 0, zero = 0;
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) f = fields_of(*l, "State");
    if (!f) continue;
    ck_assert_int_ge(g_strv_length(f), 8);
    int rank = host_rank(f[1]);
    ck_assert_int_lt(rank, gpus);
    double d = g_ascii_strtod(f[5], NULL);
    zero += d <= 0;
    total[rank] += d;
    per_cat[rank * TL_N + cat_index(f[7])] += d;
    states++;
  }
  ck_assert_int_gt(states, gpus);
  if (!allow_zero) ck_assert_msg(zero == 0, "%d of %d states last 0 s", zero, states);
  for (int r = 0; r < gpus; r++) {
    ck_assert_msg(fabs(total[r] - out->tl.step_time_s) < 1e-6, "rank %d: states sum to %.9f s, step %.9f s", r,
                  total[r], out->tl.step_time_s);
    double sec[TL_N];
    tl_rank_seconds(&out->tl, r, sec);
    for (int c = 0; c < TL_N; c++)
      ck_assert_msg(fabs(per_cat[r * TL_N + c] - sec[c]) < 1e-6, "rank %d %s: Paje %.9f s, timeline %.9f s", r,
                    tl_cat_name((tl_cat)c), per_cat[r * TL_N + c], sec[c]);
  }
}

/* SimGrid's own trace (--paje-simgrid): the test layout, symmetric; mirrors are traced as their source. */
START_TEST(test_paje_simgrid_state_durations_add_up_to_the_step_per_gpu_within_1us)
{
  g_autofree char *trace = tmp_path("t.trace");
  sim_outcome out = {0};
  simulate(&out, trace);
  g_auto(GStrv) lines = pj_dump(trace);
  assert_states_tile_the_step(lines, &out, TRUE);
  sim_outcome_clear(&out);
}
END_TEST

static const gboolean PAJE_SYMMETRY[] = {TRUE, FALSE};

/* --paje: the test layout, symmetric (mirrors' states from the timeline) and --no-symmetry. */
START_TEST(test_paje_states_tile_the_step_per_gpu_within_1us_with_no_zero_length_state)
{
  g_autofree char *trace = tmp_path("t.trace");
  sim_outcome out = {0};
  simulate_layout(&out, 1, PAJE_SYMMETRY[_i], NULL);
  GError *err = NULL;
  ck_assert_msg(trace_paje_write(&out.tl, &out.plat, FALSE, trace, &err), "%s", err ? err->message : "");
  g_auto(GStrv) lines = pj_dump(trace);
  assert_states_tile_the_step(lines, &out, FALSE);
  sim_outcome_clear(&out);
}
END_TEST

static gint by_string(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "parent type name" of every container, sorted. */
static GPtrArray *containers_of(GStrv lines)
{
  GPtrArray *c = g_ptr_array_new_with_free_func(g_free);
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) f = fields_of(*l, "Container");
    if (f && g_strv_length(f) >= 7) g_ptr_array_add(c, g_strdup_printf("%s %s %s", f[1], f[2], f[6]));
  }
  g_ptr_array_sort(c, by_string);
  return c;
}

/* "host start end value" of every state that lasts, sorted. */
static GPtrArray *lasting_states_of(GStrv lines)
{
  GPtrArray *s = g_ptr_array_new_with_free_func(g_free);
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) f = fields_of(*l, "State");
    if (f && g_ascii_strtod(f[5], NULL) > 0) g_ptr_array_add(s, g_strdup_printf("%s %s %s %s", f[1], f[3], f[4], f[7]));
  }
  g_ptr_array_sort(s, by_string);
  return s;
}

static void assert_same_lines(GPtrArray *a, GPtrArray *b, const char *what)
{
  for (guint i = 0; i < MIN(a->len, b->len); i++)
    ck_assert_msg(!strcmp(a->pdata[i], b->pdata[i]), "%s %u: SimGrid '%s', --paje '%s'", what, i,
                  (char *)a->pdata[i], (char *)b->pdata[i]);
  ck_assert_msg(a->len == b->len, "%u %s in SimGrid's trace, %u in --paje's", a->len, what, b->len);
}

/* Two nodes (tp 2: 16 GPUs), so the core link is there too; symmetric, mirrors included. */
START_TEST(test_paje_has_simgrids_containers_and_its_states_but_the_zero_length_ones)
{
  g_autofree char *ours = tmp_path("ours.trace"), *theirs = tmp_path("simgrid.trace");
  sim_outcome out = {0};
  simulate_any(&out, PP * DP * 2, 2, PP, DP * MICRO_BATCHES, TRUE, theirs, FALSE);
  ck_assert(trace_paje_write(&out.tl, &out.plat, FALSE, ours, NULL));
  g_auto(GStrv) a = pj_dump(theirs);
  g_auto(GStrv) b = pj_dump(ours);
  g_autoptr(GPtrArray) ca = containers_of(a);
  g_autoptr(GPtrArray) cb = containers_of(b);
  ck_assert_int_gt(ca->len, 2 * (8 + 8 + 8 * 2 + 8 * 2 + 1)); /* per node: hosts, links, directions, switch */
  assert_same_lines(ca, cb, "containers");
  g_autoptr(GPtrArray) sa = lasting_states_of(a);
  g_autoptr(GPtrArray) sb = lasting_states_of(b);
  assert_same_lines(sa, sb, "states");
  sim_outcome_clear(&out);
}
END_TEST

/* Per link direction, the integral over the step of its bandwidth_used (bytes); and whether `t` lies in a
 * segment where it is above 0. */
static GHashTable *link_bytes(GStrv lines)
{
  GHashTable *bytes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) f = fields_of(*l, "Variable");
    if (!f || strcmp(f[2], "bandwidth_used")) continue;
    double *sum = g_hash_table_lookup(bytes, f[1]);
    if (!sum) g_hash_table_insert(bytes, g_strdup(f[1]), sum = g_new0(double, 1));
    *sum += g_ascii_strtod(f[5], NULL) * g_ascii_strtod(f[6], NULL);
  }
  return bytes;
}

static double bytes_on(GHashTable *bytes, const char *link)
{
  double *b = g_hash_table_lookup(bytes, link);
  return b ? *b : 0;
}

/* The test layout on one node: every transfer is on NVLink, one ring per collective. Rank r's link
 * nvl_0_r UP carries what r sends: each send's bytes, and for each collective over n members its
 * ring share, bytes / n * steps (steps = 2(n-1) for an all-reduce, n-1 otherwise); its DOWN
 * direction what r receives: each receive's bytes and the same ring share. Symmetric and not. */
START_TEST(test_paje_links_carry_what_each_gpu_sends_and_receives)
{
  g_autofree char *trace = tmp_path("t.trace");
  sim_outcome out = {0};
  simulate_layout(&out, 1, PAJE_SYMMETRY[_i], NULL);
  ck_assert(trace_paje_write(&out.tl, &out.plat, TRUE, trace, NULL));
  g_auto(GStrv) lines = pj_dump(trace);
  g_autoptr(GHashTable) bytes = link_bytes(lines);
  for (int r = 0; r < GPUS; r++) {
    const graph_program *p = g_ptr_array_index(out.g->programs, r);
    int n_ev, first;
    const graph_event *ev = graph_program_events(out.g, p, &n_ev, &first);
    double up = 0, down = 0;
    for (int i = 0; i < n_ev; i++) {
      if (ev[i].kind == EV_SEND) up += ev[i].bytes;
      else if (ev[i].kind == EV_RECV) down += ev[i].bytes;
      else if (ev[i].kind == EV_COLLECTIVE) {
        const graph_group *gr = g_ptr_array_index(out.g->groups, graph_group_for(p, ev[i].peer));
        int n = (int)gr->ranks->len, steps = ev[i].variant == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
        up += ev[i].bytes / n * steps;
        down += ev[i].bytes / n * steps;
      }
    }
    ck_assert(up > 0 && down > 0);
    char name[32];
    snprintf(name, sizeof name, "nvl_0_%d_UP", r);
    double got = bytes_on(bytes, name);
    ck_assert_msg(fabs(got - up) <= 1e-6 * up, "%s carries %.0f bytes, rank %d sends %.0f", name, got, r, up);
    snprintf(name, sizeof name, "nvl_0_%d_DOWN", r);
    got = bytes_on(bytes, name);
    ck_assert_msg(fabs(got - down) <= 1e-6 * down, "%s carries %.0f bytes, rank %d receives %.0f", name, got, r, down);
  }
  sim_outcome_clear(&out);
}
END_TEST

/* A run in a child process (one engine per process) writing its --paje trace with links, and SimGrid's
 * own with its link variables if simgrid_paje is not NULL. */
typedef struct paje_run {
  int gpus, tp, pp, global_batch;
  gboolean symmetry;
  const char *simgrid_paje, *paje;
} paje_run;

static void write_paje_run(void *arg, double res[SIM_CHILD_MAX])
{
  const paje_run *run = arg;
  sim_outcome out = {0};
  simulate_any(&out, run->gpus, run->tp, run->pp, run->global_batch, run->symmetry, run->simgrid_paje, TRUE);
  ck_assert(trace_paje_write(&out.tl, &out.plat, TRUE, run->paje, NULL));
  res[0] = out.tl.step_time_s;
  sim_outcome_clear(&out);
}

/* Per link direction, the bytes of `a` and `b` agree within rel (relative, or of 1 byte); every direction
 * with traffic in one has it in the other. Returns how many carry traffic. */
static int assert_same_link_bytes(GHashTable *a, GHashTable *b, double rel, const char *what_a, const char *what_b)
{
  int used = 0;
  GHashTable *both[] = {a, b};
  for (int i = 0; i < 2; i++) {
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, both[i]);
    while (g_hash_table_iter_next(&it, &key, &val)) {
      double x = bytes_on(a, key), y = bytes_on(b, key);
      ck_assert_msg(fabs(x - y) <= rel * MAX(MAX(x, y), 1.0), "%s: %s %.0f bytes, %s %.0f", (char *)key, what_a, x,
                    what_b, y);
      used += i == 0 && x > 0;
    }
  }
  return used;
}

/* Four nodes, a pipeline stage on each (llama-7b, 32 GPUs, tp 2, pp 4, dp 4): pipeline messages cross
 * InfiniBand and the core, tensor- and data-parallel rings stay on NVLink, and no link carries two
 * transfers at once. There SimGrid's own bandwidth_used, without symmetry (every transfer simulated),
 * integrates to the bytes the derived trace says on every link direction. (Where transfers share a
 * link, as the next test's rings do, SimGrid 3.32's own trace is not exact: docs/timelines.md.) The
 * symmetric run's derived trace, mirrors included, says the same. */
START_TEST(test_paje_links_carry_the_bytes_simgrid_measures_where_transfers_do_not_share_a_link)
{
  g_autofree char *simgrid = tmp_path("simgrid.trace"), *ours = tmp_path("ours.trace"), *sym = tmp_path("sym.trace");
  double unused[SIM_CHILD_MAX];
  paje_run runs[] = {{32, 2, 4, 32, FALSE, simgrid, ours}, {32, 2, 4, 32, TRUE, NULL, sym}};
  for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) sim_child_run(write_paje_run, &runs[i], unused);
  g_auto(GStrv) ls = pj_dump(simgrid), lo = pj_dump(ours), ly = pj_dump(sym);
  g_autoptr(GHashTable) measured = link_bytes(ls);
  g_autoptr(GHashTable) derived = link_bytes(lo);
  g_autoptr(GHashTable) derived_sym = link_bytes(ly);
  int used = assert_same_link_bytes(derived, measured, 1e-5, "derived", "SimGrid");
  ck_assert_int_ge(used, 2 * 32 + 1); /* every GPU's NVLink both ways and the core, at least */
  ck_assert(bytes_on(derived, "core") > 0 && bytes_on(derived, "nic_0_0_UP") > 0);
  assert_same_link_bytes(derived, derived_sym, 1e-9, "without symmetry", "with");
}
END_TEST

/* llama-7b on 32 GPUs, pp 2, dp 16: a stage on two nodes. A collective over n members with k on each
 * node runs k rings (NCCL channels), each carrying 1/k of every member's share, bytes / n * steps;
 * each ring leaves a node once, so every member's NIC carries share / k and its NVLink share * (k-1) / k
 * (a group inside one node: its NVLink carries all of it). Pipeline messages go from stage 0's nodes to
 * stage 1's, over the NICs. Symmetric and not. */
START_TEST(test_paje_links_split_each_ring_between_nvlink_and_nic_as_nccl_channels_do)
{
  g_autofree char *trace = tmp_path("t.trace");
  double step[SIM_CHILD_MAX];
  paje_run run = {32, 1, 2, 32, PAJE_SYMMETRY[_i], NULL, trace};
  sim_child_run(write_paje_run, &run, step);
  g_auto(GStrv) lines = pj_dump(trace);
  g_autoptr(GHashTable) bytes = link_bytes(lines);
  sim_outcome out = {0}; /* the graph, to count the bytes (the replay's own engine, in this process) */
  simulate_any(&out, 32, 1, 2, 32, PAJE_SYMMETRY[_i], NULL, FALSE);
  ck_assert(fabs(out.tl.step_time_s - step[0]) < 1e-12);
  for (int r = 0; r < 32; r++) {
    const graph_program *p = g_ptr_array_index(out.g->programs, r);
    int n_ev, first;
    const graph_event *ev = graph_program_events(out.g, p, &n_ev, &first);
    double nic_up = 0, nic_down = 0, nvl = 0;
    for (int i = 0; i < n_ev; i++) {
      if (ev[i].kind == EV_SEND) nic_up += ev[i].bytes;
      else if (ev[i].kind == EV_RECV) nic_down += ev[i].bytes;
      if (ev[i].kind != EV_COLLECTIVE) continue;
      const graph_group *gr = g_ptr_array_index(out.g->groups, graph_group_for(p, ev[i].peer));
      int n = (int)gr->ranks->len, k = 0, steps = ev[i].variant == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
      for (int j = 0; j < n; j++) k += g_array_index(gr->ranks, int, j) / 8 == r / 8;
      double share = ev[i].bytes / n * steps;
      if (k == n) { /* inside the node */
        nvl += share;
        continue;
      }
      nic_up += share / k;
      nic_down += share / k;
      nvl += share * (k - 1) / k;
    }
    ck_assert(nic_up > 0 && nic_down > 0 && nvl > 0);
    const char *dirs[] = {"nic_%d_%d_UP", "nic_%d_%d_DOWN", "nvl_%d_%d_UP", "nvl_%d_%d_DOWN"};
    double expect[] = {nic_up, nic_down, nvl, nvl};
    for (int d = 0; d < 4; d++) {
      char name[32];
      snprintf(name, sizeof name, dirs[d], r / 8, r % 8);
      double got = bytes_on(bytes, name);
      ck_assert_msg(fabs(got - expect[d]) <= 1e-6 * expect[d], "%s: %.0f bytes, expected %.0f (rank %d)", name, got,
                    expect[d], r);
    }
  }
  sim_outcome_clear(&out);
}
END_TEST

/* ---- Chrome ----------------------------------------------------------- */

static cJSON *load_json(const char *path)
{
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  cJSON *j = cJSON_Parse(text);
  ck_assert_msg(j != NULL, "%s does not parse as JSON", path);
  return j;
}

static double num(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  ck_assert_msg(cJSON_IsNumber(v), "event without numeric '%s'", key);
  return v->valuedouble;
}

/* Simulate the test layout, write its Chrome trace of every rank to path and parse it back. */
static cJSON *simulate_chrome(sim_outcome *out, const char *path)
{
  simulate(out, NULL);
  tl_ranks sel = all_ranks(&out->tl);
  tl_mem_model mm = {0, 1};
  ck_assert(trace_chrome_write(&out->tl, &sel, &mm, path, NULL));
  tl_ranks_clear(&sel);
  return load_json(path);
}

START_TEST(test_chrome_json_parses_and_every_slice_lies_within_the_step)
{
  g_autofree char *path = tmp_path("t.json");
  sim_outcome out = {0};
  cJSON *j = simulate_chrome(&out, path);
  const cJSON *evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
  ck_assert(cJSON_IsArray(evs));
  double step_us = out.tl.step_time_s * 1e6;
  int slices = 0, flow_s = 0, flow_f = 0;
  double peak_gib[GPUS] = {0};
  const cJSON *e;
  cJSON_ArrayForEach(e, evs)
  {
    const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
    if (!strcmp(ph, "X")) {
      double ts = num(e, "ts"), dur = num(e, "dur");
      num(e, "pid");
      num(e, "tid");
      ck_assert(ts >= 0 && dur >= 0);
      ck_assert_msg(ts + dur <= step_us + 5e-4, "slice ends at %.3f us, after the step (%.3f us)", ts + dur, step_us);
      slices++;
    } else if (!strcmp(ph, "s")) flow_s++;
    else if (!strcmp(ph, "f")) flow_f++;
    else if (!strcmp(ph, "C")) {
      int pid = (int)num(e, "pid");
      const char *name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
      int gpu;
      ck_assert_int_eq(sscanf(name, "GPU %d memory", &gpu), 1);
      double gib = num(cJSON_GetObjectItemCaseSensitive(e, "args"), "GiB");
      peak_gib[pid * 8 + gpu] = MAX(peak_gib[pid * 8 + gpu], gib);
    }
  }
  ck_assert_int_gt(slices, GPUS);
  /* one arrow per pipeline message: each replica sends (pp-1)*m activations forward and as many gradients back */
  int messages = DP * 2 * (PP - 1) * MICRO_BATCHES;
  ck_assert_int_eq(flow_s, messages);
  ck_assert_int_eq(flow_f, messages);
  /* the memory counter (graph only: {0, 1}) peaks at the reported peak without the profile's overheads */
  for (int r = 0; r < GPUS; r++) {
    const stage_metrics *sm = &out.met->stage[tl_stage_of(&out.tl, r)];
    double expect_gib = (sm->mem_peak_bytes - sm->mem_overhead_bytes) / GIB;
    ck_assert_msg(fabs(peak_gib[r] - expect_gib) < 1e-5, "rank %d: counter peak %.6f GiB, metrics %.6f GiB", r,
                  peak_gib[r], expect_gib);
  }
  cJSON_Delete(j);
  sim_outcome_clear(&out);
}
END_TEST

/* Blocks (the compute-track parent slices) named "<phase> mb <i>" on `rank`. */
static int count_blocks(const cJSON *evs, int rank, const char *phase, double *first_start, double *last_end)
{
  int n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, evs)
  {
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring, "X") ||
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "block")) || (int)num(args, "rank") != rank ||
        strcmp(cJSON_GetObjectItemCaseSensitive(e, "cat")->valuestring, phase))
      continue;
    double ts = num(e, "ts"), end = ts + num(e, "dur");
    if (n == 0 || ts < *first_start) *first_start = ts;
    if (n == 0 || end > *last_end) *last_end = end;
    n++;
  }
  return n;
}

START_TEST(test_pp4_forward_and_backward_blocks_per_stage_equal_micro_batches_and_bubble_sits_where_1f1b_puts_it)
{
  g_autofree char *path = tmp_path("t.json");
  sim_outcome out = {0};
  cJSON *j = simulate_chrome(&out, path);
  const cJSON *evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
  double fwd_start[PP], bwd_end[PP];
  for (int s = 0; s < PP; s++) {
    int rank = s * DP; /* tp 1: rank = stage * dp + replica */
    double a, b, c, d;
    ck_assert_int_eq(count_blocks(evs, rank, "forward", &a, &b), MICRO_BATCHES);
    ck_assert_int_eq(count_blocks(evs, rank, "backward", &c, &d), MICRO_BATCHES);
    fwd_start[s] = a;
    bwd_end[s] = d;
  }
  /* warm-up: stage s starts its first forward after stage s-1 started its own (idle grows with the stage index);
   * cool-down: stage s finishes its last backward before stage s-1 does (idle at the end grows with the index) */
  for (int s = 1; s < PP; s++) {
    ck_assert_msg(fwd_start[s] > fwd_start[s - 1], "stage %d starts at %.1f us, stage %d at %.1f us", s, fwd_start[s],
                  s - 1, fwd_start[s - 1]);
    ck_assert_msg(bwd_end[s] < bwd_end[s - 1], "stage %d ends backward at %.1f us, stage %d at %.1f us", s,
                  bwd_end[s], s - 1, bwd_end[s - 1]);
  }
  cJSON_Delete(j);
  sim_outcome_clear(&out);
}
END_TEST

/* A pipeline slice ("send mb3 to 5", "recv mb3 from 4") or a flow event ("s" start, "f" end) of the
 * Chrome trace, times in ns as the writer rounded them. */
typedef struct p2p_slice {
  int rank, micro_batch, peer;
  long long t0_ns, t1_ns;
  gboolean flowed; /* a flow event was found on it */
} p2p_slice;

typedef struct flow_mark {
  double id;
  int rank;
  long long ts_ns;
  gboolean activations; /* "activations" (forward, to the next stage) or "gradients" (to the previous) */
} flow_mark;

static long long us_to_ns(double us) { return llround(us * 1e3); }

static const char *str(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  ck_assert_msg(cJSON_IsString(v), "event without string '%s'", key);
  return v->valuestring;
}

/* The slice of `a` on `rank` at key time `ns` (a send's start, a receive's last nanosecond), marked as
 * flowed; it must not have been already. NULL when there is none. */
static const p2p_slice *claim_slice_at(GArray *a, int rank, long long ns, gboolean by_end)
{
  for (guint i = 0; i < a->len; i++) {
    p2p_slice *p = &g_array_index(a, p2p_slice, i);
    long long key = by_end ? MAX(p->t0_ns, p->t1_ns - 1) : p->t0_ns;
    if (p->rank != rank || key != ns) continue;
    ck_assert_msg(!p->flowed, "rank %d: two flow %s on one slice (mb%d)", rank, by_end ? "ends" : "starts",
                  p->micro_batch);
    p->flowed = TRUE;
    return p;
  }
  return NULL;
}

static const flow_mark *flow_with_id(GArray *a, double id)
{
  for (guint i = 0; i < a->len; i++)
    if (g_array_index(a, flow_mark, i).id == id) return &g_array_index(a, flow_mark, i);
  return NULL;
}

static void assert_ids_unique(GArray *a, const char *what)
{
  for (guint i = 0; i < a->len; i++)
    for (guint j = i + 1; j < a->len; j++)
      ck_assert_msg(g_array_index(a, flow_mark, i).id != g_array_index(a, flow_mark, j).id,
                    "two flow %s share id %.0f (ranks %d and %d)", what, g_array_index(a, flow_mark, i).id,
                    g_array_index(a, flow_mark, i).rank, g_array_index(a, flow_mark, j).rank);
}

/* tp and symmetry of each run of the flow test */
static const struct {
  int tp;
  gboolean symmetry;
} FLOW_RUNS[] = {{1, TRUE}, {1, FALSE}, {2, TRUE}, {2, FALSE}};

/* Rank by rank: every pipeline send has one flow start, whose id has exactly one flow end, on the rank
 * the send goes to (the same replica and tensor-parallel rank, next stage for activations, previous
 * for gradients: rank = stage * dp * tp + replica * tp + tp_rank), at the end of that rank's receive of
 * the same micro-batch from the sender; both slices name that peer. Mirrored ranks included. */
START_TEST(test_chrome_every_pipeline_send_flows_to_its_receive_on_the_peer_rank_with_a_unique_id)
{
  int tp = FLOW_RUNS[_i].tp, gpus = PP * DP * tp, per_stage = DP * tp;
  g_autofree char *path = tmp_path("t.json");
  sim_outcome out = {0};
  simulate_layout(&out, tp, FLOW_RUNS[_i].symmetry, NULL);
  tl_ranks sel;
  ck_assert(tl_ranks_parse(&out.tl, "all", 0, &sel, NULL));
  ck_assert_int_eq(sel.n, gpus);
  tl_mem_model mm = {0, 1};
  ck_assert(trace_chrome_write(&out.tl, &sel, &mm, path, NULL));
  tl_ranks_clear(&sel);
  cJSON *j = load_json(path);
  int gpn = tl_gpus_per_node(&out.tl);
  g_autoptr(GArray) sends = g_array_new(FALSE, FALSE, sizeof(p2p_slice));
  g_autoptr(GArray) recvs = g_array_new(FALSE, FALSE, sizeof(p2p_slice));
  g_autoptr(GArray) starts = g_array_new(FALSE, FALSE, sizeof(flow_mark));
  g_autoptr(GArray) ends = g_array_new(FALSE, FALSE, sizeof(flow_mark));
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
  {
    const char *ph = str(e, "ph");
    if (!strcmp(ph, "X")) {
      const char *name = str(e, "name");
      p2p_slice p = {.rank = (int)num(cJSON_GetObjectItemCaseSensitive(e, "args"), "rank")};
      p.t0_ns = us_to_ns(num(e, "ts"));
      p.t1_ns = p.t0_ns + us_to_ns(num(e, "dur"));
      if (!strncmp(name, "send ", 5)) {
        ck_assert_msg(sscanf(name, "send mb%d to %d", &p.micro_batch, &p.peer) == 2, "rank %d: slice '%s'", p.rank,
                      name);
        g_array_append_val(sends, p);
      } else if (!strncmp(name, "recv ", 5)) {
        ck_assert_msg(sscanf(name, "recv mb%d from %d", &p.micro_batch, &p.peer) == 2, "rank %d: slice '%s'", p.rank,
                      name);
        g_array_append_val(recvs, p);
      }
    } else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
      int tid = (int)num(e, "tid");
      ck_assert_int_eq(tid % TL_STREAM_N, TL_STREAM_PP);
      flow_mark f = {.id = num(e, "id"), .rank = (int)num(e, "pid") * gpn + tid / TL_STREAM_N,
                     .ts_ns = us_to_ns(num(e, "ts")), .activations = !strcmp(str(e, "name"), "activations")};
      g_array_append_val(!strcmp(ph, "s") ? starts : ends, f);
    }
  }
  assert_ids_unique(starts, "starts");
  assert_ids_unique(ends, "ends");
  g_autofree int *sends_of = g_new0(int, gpus);
  for (guint i = 0; i < starts->len; i++) {
    const flow_mark *s = &g_array_index(starts, flow_mark, i);
    int to = s->rank + (s->activations ? per_stage : -per_stage);
    ck_assert_msg(to >= 0 && to < gpus, "rank %d sends %s off the pipeline", s->rank,
                  s->activations ? "activations" : "gradients");
    const p2p_slice *send = claim_slice_at(sends, s->rank, s->ts_ns, FALSE);
    ck_assert_msg(send != NULL, "rank %d: flow start at %lld ns in no send slice", s->rank, s->ts_ns);
    const flow_mark *f = flow_with_id(ends, s->id);
    ck_assert_msg(f != NULL, "rank %d: send mb%d (flow %.0f) has no flow end; it should end on rank %d", s->rank,
                  send->micro_batch, s->id, to);
    ck_assert_msg(f->rank == to, "rank %d: send mb%d (flow %.0f) ends on rank %d, should on rank %d", s->rank,
                  send->micro_batch, s->id, f->rank, to);
    ck_assert_msg(send->peer == to, "rank %d: slice 'send mb%d to %d', should be to %d", s->rank, send->micro_batch,
                  send->peer, to);
    const p2p_slice *recv = claim_slice_at(recvs, to, f->ts_ns, TRUE);
    ck_assert_msg(recv != NULL, "rank %d: flow end at %lld ns ends no receive slice", to, f->ts_ns);
    ck_assert_msg(recv->peer == s->rank && recv->micro_batch == send->micro_batch,
                  "rank %d: 'send mb%d' ends in 'recv mb%d from %d' on rank %d", s->rank, send->micro_batch,
                  recv->micro_batch, recv->peer, to);
    ck_assert(f->ts_ns >= s->ts_ns);
    sends_of[s->rank]++;
  }
  /* each flow claimed a slice of its own: as many as slices means every send and receive has its flow;
   * stage s sends m activations (s < pp - 1) and m gradients (s > 0) */
  ck_assert_int_eq(starts->len, sends->len);
  ck_assert_int_eq(ends->len, recvs->len);
  ck_assert_int_eq(ends->len, starts->len);
  for (int r = 0; r < gpus; r++) {
    int stage = r / per_stage;
    ck_assert_int_eq(sends_of[r], MICRO_BATCHES * ((stage < PP - 1) + (stage > 0)));
  }
  cJSON_Delete(j);
  sim_outcome_clear(&out);
}
END_TEST

/* ---- SVG -------------------------------------------------------------- */

static int xpath_count(const char *file, const char *expr)
{
  char *argv[] = {"xmllint", "--xpath", (char *)expr, (char *)file, NULL};
  int status;
  g_autofree char *outp = run_tool(argv, &status);
  return atoi(outp);
}

/* The lines xmllint prints for an XPath that selects several nodes: text nodes as they are, attributes
 * as their values (it prints ` name="value"`). */
static GStrv xpath_lines(const char *file, const char *expr)
{
  char *argv[] = {"xmllint", "--xpath", (char *)expr, (char *)file, NULL};
  int status;
  g_autofree char *outp = run_tool(argv, &status);
  g_auto(GStrv) lines = g_strsplit(outp, "\n", -1);
  GPtrArray *keep = g_ptr_array_new();
  for (char **l = lines; *l; l++) {
    char *v = g_strstrip(*l), *q = strstr(v, "=\"");
    if (!*v) continue;
    if (q && v[strlen(v) - 1] == '"') v = g_strndup(q + 2, strlen(q + 2) - 1);
    else v = g_strdup(v);
    g_ptr_array_add(keep, v);
  }
  g_ptr_array_add(keep, NULL);
  return (GStrv)g_ptr_array_free(keep, FALSE);
}


/* A Chrome trace's thread draws its slices as a stack: each must lie inside the one it starts in, or start after
 * it ends (Perfetto reports the others as overlapping and misdraws them). With --overlap-grad-reduce a bucket's
 * copy-back runs on the communication stream beside the backward's kernels (docs/schedules.md, "Overlap"):
 * it is drawn on the dp-comm track, and the compute track's blocks gather the compute stream only. */
typedef struct track_slice {
  int pid, tid;
  long long t0_ns, t1_ns;
  const char *name;
} track_slice;

static int by_track_then_start_outer_first(const void *pa, const void *pb)
{
  const track_slice *a = pa, *b = pb;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->t0_ns != b->t0_ns) return a->t0_ns < b->t0_ns ? -1 : 1;
  return a->t1_ns > b->t1_ns ? -1 : a->t1_ns < b->t1_ns; /* the longer (the parent) first */
}

START_TEST(test_chrome_slices_of_each_track_nest_with_the_gradient_reduction_overlapped)
{
  g_autofree char *path = tmp_path("t.json");
  sim_outcome out = {0};
  simulate_layout_overlap(&out, 1, TRUE, NULL, TRUE);
  tl_ranks sel = all_ranks(&out.tl);
  tl_mem_model mm = {0, 1};
  ck_assert(trace_chrome_write(&out.tl, &sel, &mm, path, NULL));
  tl_ranks_clear(&sel);
  cJSON *j = load_json(path);
  g_autoptr(GArray) sl = g_array_new(FALSE, FALSE, sizeof(track_slice));
  int copy_backs_on_dp = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
  {
    if (strcmp(str(e, "ph"), "X")) continue;
    track_slice t = {.pid = (int)num(e, "pid"), .tid = (int)num(e, "tid"), .name = str(e, "name")};
    t.t0_ns = us_to_ns(num(e, "ts"));
    t.t1_ns = t.t0_ns + us_to_ns(num(e, "dur"));
    g_array_append_val(sl, t);
    copy_backs_on_dp += t.tid % TL_STREAM_N == TL_STREAM_DP && !strcmp(str(e, "cat"), "optimizer");
  }
  ck_assert_msg(copy_backs_on_dp > 0, "no bucket copy-back on a dp-comm track: the overlap is not exercised");
  g_array_sort(sl, by_track_then_start_outer_first);
  const track_slice *open[64];
  int depth = 0;
  for (guint i = 0; i < sl->len; i++) {
    const track_slice *t = &g_array_index(sl, track_slice, i);
    const track_slice *prev = i > 0 ? &g_array_index(sl, track_slice, i - 1) : NULL;
    if (prev && (t->pid != prev->pid || t->tid != prev->tid)) depth = 0; /* a new track */
    while (depth > 0 && open[depth - 1]->t1_ns <= t->t0_ns + 1) depth--; /* ended before it starts (1 ns rounding) */
    ck_assert_msg(depth == 0 || t->t1_ns <= open[depth - 1]->t1_ns + 1,
                  "node %d track %d: '%s' [%lld, %lld] ns starts inside '%s' [%lld, %lld] ns and ends after it", t->pid,
                  t->tid, t->name, t->t0_ns, t->t1_ns, open[depth - 1]->name, open[depth - 1]->t0_ns,
                  open[depth - 1]->t1_ns);
    ck_assert_int_lt(depth, (int)G_N_ELEMENTS(open));
    open[depth++] = t;
  }
  cJSON_Delete(j);
  sim_outcome_clear(&out);
}
END_TEST

/* The test layout's 8 GPUs have 4 distinct timelines, one per stage: 4 rows, each with one forward bar
 * per micro-batch; allowed only 3 rows, the chart falls back to one row per stage, its first rank. */
START_TEST(test_svg_is_well_formed_xml_with_a_row_per_stage_and_one_forward_bar_per_micro_batch)
{
  g_autofree char *path = tmp_path("t.svg"), *stages_path = tmp_path("s.svg"), *mem = tmp_path("m.svg");
  sim_outcome out = {0};
  simulate(&out, NULL);
  trace_svg_info info = {.mfu = out.met->mfu, .max_gpu_rows = 64};
  ck_assert(trace_svg_timeline(&out.tl, &info, path, NULL));
  info.max_gpu_rows = PP - 1;
  ck_assert(trace_svg_timeline(&out.tl, &info, stages_path, NULL));
  tl_mem_model mm = {0, 1};
  ck_assert(trace_svg_memory(&out.tl, &mm, 80 * GIB, mem, NULL));
  char *argv[] = {"xmllint", "--noout", path, stages_path, mem, NULL};
  int status;
  g_free(run_tool(argv, &status));
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "xmllint rejects the SVG");
  ck_assert_int_eq(xpath_count(path, "count(//*[local-name()='g'][@class='row'])"), PP);
  ck_assert_int_eq(xpath_count(stages_path, "count(//*[local-name()='g'][@class='row'])"), PP);
  for (int s = 0; s < PP; s++) {
    int first = s * DP; /* rank = stage * dp + replica */
    g_autofree char *q = g_strdup_printf(
        "count(//*[local-name()='g'][@data-rank='%d']/*[local-name()='rect'][@class='forward'])", first);
    ck_assert_int_eq(xpath_count(path, q), MICRO_BATCHES);
    ck_assert_int_eq(xpath_count(stages_path, q), MICRO_BATCHES);
  }
  g_auto(GStrv) labels = xpath_lines(stages_path, "//*[local-name()='text'][@class='label']/text()");
  ck_assert_int_eq(g_strv_length(labels), PP);
  ck_assert_str_eq(labels[1], "stage 1: rank 2 of ranks 2-3");
  ck_assert_int_eq(xpath_count(mem, "count(//*[local-name()='g'][@class='stage'])"), PP);
  sim_outcome_clear(&out);
}
END_TEST

/* A llama-7b layout for the SVG tests, micro-batch 1. */
typedef struct svg_layout {
  int gpus, tp, pp, global_batch;
  gboolean symmetry;
  layout_ckpt ckpt;
} svg_layout;

static void simulate_svg_layout(sim_outcome *out, const svg_layout *sl)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.l = layout_default();
  rq.l.gpus = sl->gpus;
  rq.l.tp = sl->tp;
  rq.l.pp = sl->pp;
  rq.l.micro_batch = 1;
  rq.l.global_batch = sl->global_batch;
  rq.l.ckpt = sl->ckpt;
  rq.gen = gen_default_options();
  rq.gen.symmetry = sl->symmetry;
  rq.gen.gpus_per_node = rq.prof.gpus_per_node;
  rq.capacity_gib = rq.prof.memory_gib;
  if (!sim_run_layout(&rq, out, &err)) ck_abort_msg("simulate: %s", err->message);
}

static void svg_write(const sim_outcome *out, const trace_svg_info *info, const char *path)
{
  GError *err = NULL;
  if (!trace_svg_timeline(&out->tl, info, path, &err)) ck_abort_msg("svg: %s", err->message);
  char *argv[] = {"xmllint", "--noout", (char *)path, NULL};
  int status;
  g_free(run_tool(argv, &status));
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "xmllint rejects %s", path);
}

#define ROWS_XPATH "//*[local-name()='g'][@class='row']"
#define LABELS_XPATH "//*[local-name()='text'][@class='label']/text()"

/* 32 GPUs, pp 4, dp 8: the 8 GPUs of a stage are mirrored replicas (symmetric run) or, simulated one by
 * one (--no-symmetry), happen to get the same times: either way a stage is one row, "stage s: ranks
 * 8s-(8s+7)". */
START_TEST(test_svg_gpus_of_a_stage_with_the_same_intervals_share_one_row_labelled_with_their_ranks)
{
  const gboolean symmetry = _i == 0;
  const svg_layout sl = {.gpus = 32, .tp = 1, .pp = 4, .global_batch = 16, .symmetry = symmetry};
  const int per_stage = sl.gpus / sl.pp;
  g_autofree char *path = tmp_path("rows.svg");
  sim_outcome out = {0};
  simulate_svg_layout(&out, &sl);
  svg_write(&out, &(trace_svg_info){.mfu = -1}, path);
  ck_assert_int_eq(xpath_count(path, "count(" ROWS_XPATH ")"), sl.pp);
  g_auto(GStrv) labels = xpath_lines(path, LABELS_XPATH);
  g_auto(GStrv) ranks = xpath_lines(path, ROWS_XPATH "/@data-ranks");
  ck_assert_int_eq(g_strv_length(labels), sl.pp);
  ck_assert_int_eq(g_strv_length(ranks), sl.pp);
  for (int s = 0; s < sl.pp; s++) {
    g_autofree char *list = g_strdup_printf("%d-%d", s * per_stage, (s + 1) * per_stage - 1);
    g_autofree char *label = g_strdup_printf("stage %d: ranks %s", s, list);
    ck_assert_str_eq(labels[s], label);
    ck_assert_str_eq(ranks[s], list);
  }
  sim_outcome_clear(&out);
}
END_TEST

/* Rows are shared by checking, not by assuming: one rank's event ending one ulp later is a row of its own,
 * and the rest of its stage still share theirs. */
START_TEST(test_svg_a_rank_whose_times_differ_by_one_ulp_gets_a_row_of_its_own)
{
  const svg_layout sl = {.gpus = 32, .tp = 1, .pp = 4, .global_batch = 16, .symmetry = FALSE};
  const int odd = 9; /* stage 1, node 1, GPU 1 */
  g_autofree char *path = tmp_path("odd.svg");
  sim_outcome out = {0};
  simulate_svg_layout(&out, &sl);
  replay_rank *rr = &out.res->ranks[odd];
  int e = rr->first;
  while (isnan(rr->start_s[e])) e++;
  rr->end_s[e] = nextafter(rr->end_s[e], INFINITY);
  svg_write(&out, &(trace_svg_info){.mfu = -1}, path);
  ck_assert_int_eq(xpath_count(path, "count(" ROWS_XPATH ")"), sl.pp + 1);
  g_auto(GStrv) labels = xpath_lines(path, LABELS_XPATH);
  const char *expect[] = {"stage 0: ranks 0-7", "stage 1: ranks 8,10-15", "stage 1: rank 9 (n1 g1)",
                          "stage 2: ranks 16-23", "stage 3: ranks 24-31"};
  ck_assert_int_eq(g_strv_length(labels), G_N_ELEMENTS(expect));
  for (size_t i = 0; i < G_N_ELEMENTS(expect); i++) ck_assert_str_eq(labels[i], expect[i]);
  sim_outcome_clear(&out);
}
END_TEST

/* The legend names exactly the categories some GPU spends at least 1 ns in (tl_rank_seconds), in the
 * timeline's order: none that does not occur (no recompute without checkpointing, no tp-comm at tp 1). */
static const svg_layout LEGEND_RUNS[] = {
    {.gpus = 8, .tp = 1, .pp = 4, .global_batch = 16, .symmetry = TRUE},
    {.gpus = 16, .tp = 2, .pp = 4, .global_batch = 16, .symmetry = TRUE, .ckpt = CKPT_EVERY_LAYER},
};

START_TEST(test_svg_legend_lists_exactly_the_categories_that_occur)
{
  const svg_layout *sl = &LEGEND_RUNS[_i];
  g_autofree char *path = tmp_path("legend.svg");
  sim_outcome out = {0};
  simulate_svg_layout(&out, sl);
  svg_write(&out, &(trace_svg_info){.mfu = -1}, path);
  double total[TL_N] = {0};
  for (int r = 0; r < sl->gpus; r++) {
    double sec[TL_N];
    tl_rank_seconds(&out.tl, r, sec);
    for (int c = 0; c < TL_N; c++) total[c] += sec[c];
  }
  GString *expect = g_string_new(NULL), *got = g_string_new(NULL);
  for (int c = 0; c < TL_N; c++)
    if (total[c] >= 1e-9) g_string_append_printf(expect, "%s ", tl_cat_name((tl_cat)c));
  g_auto(GStrv) cats = xpath_lines(path, "//*[local-name()='g'][@class='legend-item']/@data-cat");
  for (char **c = cats; *c; c++) g_string_append_printf(got, "%s ", *c);
  ck_assert_str_eq(got->str, expect->str);
  /* the runs differ where they should: checkpointing adds recompute, tp 2 tensor-parallel collectives */
  ck_assert((total[TL_RECOMPUTE] > 0) == (sl->ckpt != CKPT_NONE));
  ck_assert((total[TL_TP_COMM] > 0) == (sl->tp > 1));
  g_string_free(expect, TRUE);
  g_string_free(got, TRUE);
  sim_outcome_clear(&out);
}
END_TEST

/* The plot's geometry as the chart states it on its root: x = plot_x + (t - t0) / (t1 - t0) * plot_w. */
typedef struct svg_plot {
  double x, w, t0_s, t1_s;
} svg_plot;

static svg_plot svg_plot_of(const char *path)
{
  svg_plot p;
  const char *attr[] = {"data-plot-x", "data-plot-w", "data-t0-s", "data-t1-s"};
  double *v[] = {&p.x, &p.w, &p.t0_s, &p.t1_s};
  for (int i = 0; i < 4; i++) {
    g_autofree char *q = g_strdup_printf("/*[local-name()='svg']/@%s", attr[i]);
    g_auto(GStrv) l = xpath_lines(path, q);
    ck_assert_msg(l[0] != NULL, "%s: no %s", path, attr[i]);
    *v[i] = g_ascii_strtod(l[0], NULL);
  }
  return p;
}

typedef struct svg_rect {
  int cat;
  double x, y, w, h;
  gboolean mix; /* a share of a stacked column (inside a g.mix), not a bar */
} svg_rect;

/* The rectangles of the row drawing `rank`: its bars and the shares of its stacked columns. */
static GArray *row_rects(const char *path, int rank)
{
  g_autofree char *q = g_strdup_printf("//*[local-name()='g'][@class='row'][@data-rank='%d']", rank);
  char *argv[] = {"xmllint", "--xpath", q, (char *)path, NULL};
  int status;
  g_autofree char *xml = run_tool(argv, &status);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(svg_rect));
  g_autoptr(GRegex) re = g_regex_new("(<g class=\"mix\">)|<rect class=\"([a-z-]+)\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" "
                                     "width=\"([-0-9.]+)\" height=\"([-0-9.]+)\"|(</g>)",
                                     0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  gboolean in_mix = FALSE;
  for (g_regex_match(re, xml, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
    g_autofree char *open = g_match_info_fetch(m, 1), *close = g_match_info_fetch(m, 7);
    if (open && *open) in_mix = TRUE;
    else if (close && *close) in_mix = FALSE;
    else {
      g_autofree char *c = g_match_info_fetch(m, 2), *x = g_match_info_fetch(m, 3), *y = g_match_info_fetch(m, 4),
                      *w = g_match_info_fetch(m, 5), *h = g_match_info_fetch(m, 6);
      svg_rect r = {cat_index(c), g_ascii_strtod(x, NULL), g_ascii_strtod(y, NULL), g_ascii_strtod(w, NULL),
                    g_ascii_strtod(h, NULL), in_mix};
      g_array_append_val(out, r);
    }
  }
  return out;
}

typedef struct span_s {
  double start_s, end_s;
} span_s;

/* Maximal runs of adjacent forward intervals of a rank. */
static GArray *forward_runs(const timeline *tl, int rank)
{
  GArray *runs = g_array_new(FALSE, FALSE, sizeof(span_s));
  tl_cursor c;
  tl_cursor_init(&c, tl, rank, TRUE);
  tl_interval iv;
  gboolean in_run = FALSE;
  while (tl_cursor_next(&c, &iv)) {
    if (iv.cat != TL_FORWARD) in_run = FALSE;
    else if (in_run) g_array_index(runs, span_s, runs->len - 1).end_s = iv.end_s;
    else {
      span_s r = {iv.start_s, iv.end_s};
      g_array_append_val(runs, r);
      in_run = TRUE;
    }
  }
  tl_cursor_clear(&c);
  return runs;
}

/* A window from the middle of stage 0's second forward run to the middle of its fourth: that row shows
 * three forward bars (the first and last cut), not the whole step's eight; every rectangle of every row
 * lies inside the plot, and each row's rectangles tile it. */
START_TEST(test_svg_window_draws_only_the_intervals_inside_it)
{
  g_autofree char *path = tmp_path("window.svg");
  sim_outcome out = {0};
  simulate(&out, NULL);
  g_autoptr(GArray) runs = forward_runs(&out.tl, 0);
  ck_assert_int_eq(runs->len, MICRO_BATCHES);
  span_s f1 = g_array_index(runs, span_s, 1), f3 = g_array_index(runs, span_s, 3);
  double w0 = (f1.start_s + f1.end_s) / 2, w1 = (f3.start_s + f3.end_s) / 2;
  g_autofree char *window = g_strdup_printf("%.9f:%.9f", w0, w1);
  svg_write(&out, &(trace_svg_info){.mfu = -1, .window = window}, path);
  svg_plot p = svg_plot_of(path);
  ck_assert_double_eq_tol(p.t0_s, w0, 1e-9);
  ck_assert_double_eq_tol(p.t1_s, w1, 1e-9);
  const char *forward_bars = "count(//*[local-name()='g'][@data-rank='0']/*[local-name()='rect'][@class='forward'])";
  ck_assert_int_eq(xpath_count(path, forward_bars), 3);
  for (int s = 0; s < PP; s++) {
    g_autoptr(GArray) rects = row_rects(path, s * DP);
    ck_assert_uint_gt(rects->len, 0);
    double covered = 0;
    for (guint i = 0; i < rects->len; i++) {
      const svg_rect *r = &g_array_index(rects, svg_rect, i);
      ck_assert_msg(r->x >= p.x - 0.01 && r->x + r->w <= p.x + p.w + 0.01, "stage %d: rect %.2f+%.2f outside the plot "
                    "%.0f+%.0f", s, r->x, r->w, p.x, p.w);
      if (!r->mix || r->y == g_array_index(rects, svg_rect, 0).y) covered += r->w; /* a stacked column once */
    }
    ck_assert_msg(fabs(covered - p.w) < 0.05 * rects->len, "stage %d: the rectangles cover %.2f px of %.0f", s,
                  covered, p.w);
  }
  sim_outcome_clear(&out);
}
END_TEST

/* Seconds of each category in pixel column k of a rank's row (the timeline cut to the column). */
static void column_seconds(const timeline *tl, int rank, const svg_plot *p, int k, double out[TL_N])
{
  double s_per_px = (p->t1_s - p->t0_s) / p->w, c0 = p->t0_s + k * s_per_px, c1 = c0 + s_per_px;
  for (int c = 0; c < TL_N; c++) out[c] = 0;
  tl_cursor cur;
  tl_cursor_init(&cur, tl, rank, TRUE);
  tl_interval iv;
  while (tl_cursor_next(&cur, &iv) && iv.start_s < c1) out[iv.cat] += MAX(0.0, MIN(iv.end_s, c1) - MAX(iv.start_s, c0));
  tl_cursor_clear(&cur);
}

/* Checkpointed, 64 micro-batches: a layer's recompute and backward are each narrower than a pixel.
 * In every pixel column of every row, each category's share of the drawn area is its share of the
 * column's time, within one step of the stack (1 / floor(bar height)) and the 0.01 px the coordinates
 * are written to; and there are columns that show both recompute and backward. */
START_TEST(test_svg_sub_pixel_runs_are_drawn_as_each_columns_shares_of_time)
{
  const svg_layout sl = {.gpus = 8, .tp = 1, .pp = 4, .global_batch = 128, .symmetry = TRUE,
                         .ckpt = CKPT_EVERY_LAYER};
  g_autofree char *path = tmp_path("mix.svg");
  sim_outcome out = {0};
  simulate_svg_layout(&out, &sl);
  svg_write(&out, &(trace_svg_info){.mfu = -1}, path);
  svg_plot p = svg_plot_of(path);
  int both = 0;
  for (int s = 0; s < sl.pp; s++) {
    int rank = s * (sl.gpus / sl.pp);
    g_autoptr(GArray) rects = row_rects(path, rank);
    double h = 0;
    for (guint i = 0; i < rects->len; i++)
      if (!g_array_index(rects, svg_rect, i).mix) h = MAX(h, g_array_index(rects, svg_rect, i).h);
    ck_assert(h > 0);
    double tol = 1.0 / floor(h) + 0.02;
    double (*area)[TL_N] = g_malloc0(sizeof(double[TL_N]) * (size_t)p.w);
    for (guint i = 0; i < rects->len; i++) {
      const svg_rect *r = &g_array_index(rects, svg_rect, i);
      for (int k = MAX(0, (int)floor(r->x - p.x)); k < p.w && p.x + k < r->x + r->w; k++)
        area[k][r->cat] += (MIN(p.x + k + 1, r->x + r->w) - MAX(p.x + k, r->x)) * r->h / h;
    }
    for (int k = 0; k < p.w; k++) {
      double sec[TL_N], total = 0, drawn = 0;
      column_seconds(&out.tl, rank, &p, k, sec);
      for (int c = 0; c < TL_N; c++) {
        total += sec[c];
        drawn += area[k][c];
      }
      ck_assert_msg(fabs(drawn - 1) < 0.02, "stage %d column %d: drawn over %.3f of the column", s, k, drawn);
      for (int c = 0; c < TL_N; c++)
        ck_assert_msg(fabs(area[k][c] / drawn - sec[c] / total) <= tol,
                      "stage %d column %d: %s drawn %.3f of the column, %.3f of its time", s, k, tl_cat_name((tl_cat)c),
                      area[k][c] / drawn, sec[c] / total);
      both += area[k][TL_RECOMPUTE] > 0.1 && area[k][TL_BACKWARD] > 0.1;
    }
    g_free(area);
  }
  ck_assert_msg(both > 100, "only %d columns show both recompute and backward", both);
  sim_outcome_clear(&out);
}
END_TEST

/* A text element of the chart: its box as drawn, at most as wide as DejaVu Sans (sans-serif here, wider
 * than Arial or Helvetica) sets it, each character's advance rounded up to its class: 0.34 em for a
 * space and . , : ; ' |, 0.42 for - ( ) [ ] /, 0.64 for a digit or lower-case letter, 0.8 for upper
 * case, a full em for m, w, M, W, % and anything else; 10 % more in bold; from 0.8 em above the
 * baseline to 0.25 below. What this checks is where the chart puts its texts, not the font. */
typedef struct text_box {
  double x0, y0, x1, y1;
  char *text;
} text_box;

static double em_of(const char *s)
{
  double em = 0;
  for (const char *c = s; *c; c = g_utf8_next_char(c)) {
    gunichar u = g_utf8_get_char(c);
    gboolean ascii = u > 0 && u < 128;
    em += ascii && strchr(" .,:;'|", (int)u)        ? 0.34
          : ascii && strchr("-()[]/", (int)u)       ? 0.42
          : ascii && strchr("mwMW%", (int)u)        ? 1.0
          : ascii && (g_ascii_isdigit(u) || g_ascii_islower(u)) ? 0.64
          : ascii && g_ascii_isupper(u)             ? 0.8
                                                    : 1.0;
  }
  return em;
}

static GArray *text_boxes(const char *path)
{
  char *argv[] = {"xmllint", "--xpath", "//*[local-name()='text']", (char *)path, NULL};
  int status;
  g_autofree char *xml = run_tool(argv, &status);
  g_autoptr(GRegex) re = g_regex_new("<text([^>]*)>([^<]*)", 0, 0, NULL);
  g_autoptr(GRegex) attr = g_regex_new("([a-z-]+)=\"([^\"]*)\"", 0, 0, NULL);
  g_autoptr(GRegex) entity = g_regex_new("&[^;]+;", 0, 0, NULL);
  GArray *boxes = g_array_new(FALSE, FALSE, sizeof(text_box));
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match(re, xml, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
    g_autofree char *attrs = g_match_info_fetch(m, 1), *raw = g_match_info_fetch(m, 2);
    double x = 0, y = 0, size = 11;
    gboolean bold = FALSE;
    const char *anchor = "start";
    g_autofree char *anchor_s = NULL;
    g_autoptr(GMatchInfo) a = NULL;
    for (g_regex_match(attr, attrs, 0, &a); g_match_info_matches(a); g_match_info_next(a, NULL)) {
      g_autofree char *k = g_match_info_fetch(a, 1), *v = g_match_info_fetch(a, 2);
      if (!strcmp(k, "x")) x = g_ascii_strtod(v, NULL);
      else if (!strcmp(k, "y")) y = g_ascii_strtod(v, NULL);
      else if (!strcmp(k, "text-anchor")) anchor = anchor_s = g_strdup(v);
      else if (!strcmp(k, "class") && !strcmp(v, "title")) size = 15, bold = TRUE;
    }
    char *text = g_regex_replace_literal(entity, raw, -1, 0, "W", 0, NULL); /* an entity: one wide character */
    double w = em_of(text) * size * (bold ? 1.1 : 1.0);
    double x0 = !strcmp(anchor, "end") ? x - w : !strcmp(anchor, "middle") ? x - w / 2 : x;
    text_box b = {x0, y - 0.8 * size, x0 + w, y + 0.25 * size, text};
    if (*text) g_array_append_val(boxes, b);
    else g_free(text);
  }
  return boxes;
}

/* 64 GPUs simulated one by one, each rank's first event made to end r ns later: 64 distinct timelines,
 * 64 rows of 10 px, too close for a label each; or (pp 1) the odd ranks' so: two rows whose lists of 32
 * ranks are too long to show whole. No two texts of the chart overlap, and all lie inside it. */
START_TEST(test_svg_no_two_labels_overlap_however_many_rows_and_however_long_their_lists)
{
  const gboolean odd_only = _i == 1;
  const svg_layout sl = {.gpus = 64, .tp = 1, .pp = odd_only ? 1 : 4, .global_batch = odd_only ? 64 : 16,
                         .symmetry = FALSE};
  g_autofree char *path = tmp_path("crowd.svg");
  sim_outcome out = {0};
  simulate_svg_layout(&out, &sl);
  for (int r = 0; r < sl.gpus; r++) {
    if (odd_only && r % 2 == 0) continue;
    replay_rank *rr = &out.res->ranks[r];
    int e = rr->first;
    while (isnan(rr->start_s[e])) e++;
    rr->end_s[e] += (odd_only ? 1 : r) * 1e-9;
  }
  svg_write(&out, &(trace_svg_info){.mfu = -1}, path);
  ck_assert_int_eq(xpath_count(path, "count(" ROWS_XPATH ")"), odd_only ? 2 : sl.gpus);
  double width = xpath_count(path, "string(/*[local-name()='svg']/@width)");
  double height = xpath_count(path, "string(/*[local-name()='svg']/@height)");
  g_autoptr(GArray) boxes = text_boxes(path);
  int labels = xpath_count(path, "count(//*[local-name()='text'][@class='label'])");
  ck_assert_int_ge(labels, odd_only ? 2 : sl.pp);
  for (int st = 0; st < sl.pp; st++) { /* each stage's first row is labelled */
    g_autofree char *q = g_strdup_printf("count(//*[local-name()='g'][@data-rank='%d']/*[local-name()='text'][@class="
                                         "'label'])", st * (sl.gpus / sl.pp));
    ck_assert_int_eq(xpath_count(path, q), 1);
  }
  for (guint i = 0; i < boxes->len; i++) {
    const text_box *a = &g_array_index(boxes, text_box, i);
    ck_assert_msg(a->x0 >= 0 && a->x1 <= width && a->y0 >= 0 && a->y1 <= height,
                  "'%s' (%.1f,%.1f)-(%.1f,%.1f) leaves the picture, %.0f x %.0f", a->text, a->x0, a->y0, a->x1, a->y1,
                  width, height);
    for (guint k = i + 1; k < boxes->len; k++) {
      const text_box *b = &g_array_index(boxes, text_box, k);
      gboolean overlap = a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
      ck_assert_msg(!overlap, "'%s' and '%s' overlap", a->text, b->text);
    }
  }
  for (guint i = 0; i < boxes->len; i++) g_free(g_array_index(boxes, text_box, i).text);
  sim_outcome_clear(&out);
}
END_TEST

/* ---- CSV -------------------------------------------------------------- */

START_TEST(test_csv_rows_tile_the_step_and_pp_wait_share_is_the_reported_bubble_fraction)
{
  g_autofree char *path = tmp_path("t.csv");
  sim_outcome out = {0};
  simulate(&out, NULL);
  tl_ranks sel = all_ranks(&out.tl);
  ck_assert(trace_csv_write(&out.tl, &sel, path, NULL));
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  ck_assert_str_eq(lines[0], "rank,stream,kind,name,start_s,end_s,micro_batch,layer");
  double last_end[GPUS], pp_wait[GPUS] = {0};
  for (int r = 0; r < GPUS; r++) last_end[r] = 0;
  for (char **l = lines + 1; *l && **l; l++) {
    g_auto(GStrv) f = g_strsplit(*l, ",", -1);
    ck_assert_int_eq(g_strv_length(f), 8);
    int r = atoi(f[0]);
    double t0 = g_ascii_strtod(f[4], NULL), t1 = g_ascii_strtod(f[5], NULL);
    ck_assert_msg(fabs(t0 - last_end[r]) < 2e-9, "rank %d: gap or overlap at %.9f s", r, t0);
    last_end[r] = t1;
    if (!strcmp(f[2], "pp-wait")) pp_wait[r] += t1 - t0;
  }
  double step = out.tl.step_time_s, mean = 0;
  for (int r = 0; r < GPUS; r++) {
    ck_assert_msg(fabs(last_end[r] - step) < 1e-9, "rank %d rows end at %.9f s, step %.9f s", r, last_end[r], step);
    mean += pp_wait[r] / step / GPUS;
  }
  ck_assert_msg(fabs(mean - out.met->bubble_fraction) < 1e-6, "CSV pp-wait share %.7f, reported bubble %.7f", mean,
                out.met->bubble_fraction);
  /* 1F1B with equal stages idles (pp-1)/(m+pp-1) of the pipelined part; the step also holds the gradient
   * all-reduce and optimizer, and the stages are not equal, so allow a few points around 3/11 */
  double theory = (PP - 1.0) / (MICRO_BATCHES + PP - 1.0);
  ck_assert_msg(fabs(out.met->bubble_fraction - theory) < 0.05, "bubble %.3f, 1F1B theory %.3f",
                out.met->bubble_fraction, theory);
  tl_ranks_clear(&sel);
  sim_outcome_clear(&out);
}
END_TEST

/* ---- selection and errors (no simulation) ----------------------------- */

static graph *test_graph(void)
{
  model m;
  ck_assert(model_load_named("llama-7b", &m, NULL));
  layout l = layout_default();
  l.gpus = GPUS;
  l.pp = PP;
  l.global_batch = DP * MICRO_BATCHES;
  ck_assert(layout_validate(&l, &m, NULL));
  return gen_graph(&m, &l, &(gen_options){.partition = PARTITION_UNIFORM, .symmetry = TRUE, .gpus_per_node = 8}, NULL);
}

START_TEST(test_trace_ranks_dp0_lists_and_bad_values)
{
  g_autoptr(graph) g = test_graph();
  timeline tl = {.g = g};
  tl_ranks sel;
  ck_assert(tl_ranks_parse(&tl, "dp0", 0, &sel, NULL));
  int expect_dp0[PP] = {0, 2, 4, 6}; /* rank = stage * dp + replica */
  ck_assert_int_eq(sel.n, PP);
  for (int i = 0; i < PP; i++) ck_assert_int_eq(sel.rank[i], expect_dp0[i]);
  tl_ranks_clear(&sel);
  ck_assert(tl_ranks_parse(&tl, NULL, 4, &sel, NULL)); /* default above the limit: dp0 */
  ck_assert_int_eq(sel.n, PP);
  tl_ranks_clear(&sel);
  ck_assert(tl_ranks_parse(&tl, "5,0-2", 64, &sel, NULL)); /* in any order, sorted */
  ck_assert_int_eq(sel.n, 4);
  ck_assert_int_eq(sel.rank[3], 5);
  tl_ranks_clear(&sel);
  /* a rank named twice is refused (issue 30), as a value listed twice in a sweep's list */
  const char *twice[] = {"5,0-2,1", "0,0"};
  for (size_t i = 0; i < G_N_ELEMENTS(twice); i++) {
    GError *err = NULL;
    ck_assert_msg(!tl_ranks_parse(&tl, twice[i], 64, &sel, &err), "'%s' accepted", twice[i]);
    ck_assert_ptr_nonnull(strstr(err->message, "is listed twice"));
    g_clear_error(&err);
    ck_assert(!tl_ranks_spec_check(twice[i], 8, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "is listed twice"));
    g_clear_error(&err);
  }
  const char *bad[] = {"8", "3-1", "x", "", "1,,2", "-1"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *err = NULL;
    ck_assert_msg(!tl_ranks_parse(&tl, bad[i], 64, &sel, &err), "'%s' accepted", bad[i]);
    ck_assert_ptr_nonnull(strstr(err->message, "--trace-ranks"));
    g_error_free(err);
  }
}
END_TEST

/* HFU is below MFU without recompute, and the text summary says why in one line: MFU's 6N holds the
 * input embedding (6Vh per token) and the norm weights (6(2L+1)h), which no kernel executes; attention
 * is counted alike in both. The share it names is the gap: HFU = MFU (1 - share). */
START_TEST(test_text_summary_says_why_hfu_is_below_mfu_and_the_share_it_names_is_the_gap)
{
  sim_outcome out = {0};
  simulate(&out, NULL);
  model m;
  ck_assert(model_load_named("llama-7b", &m, NULL));
  double h = m.hidden, share = (6 * m.vocab * h + 6 * (2.0 * m.layers + 1) * h) / model_flops_per_token(&m, 2048);
  ck_assert_msg(fabs(out.met->hfu - out.met->mfu * (1 - share)) < 1e-9, "HFU %.6f, MFU %.6f, share %.6f", out.met->hfu,
                out.met->mfu, share);
  sim_request rq = {.m = m, .l = layout_default()};
  rq.l.seq_len = 2048;
  g_autofree char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  report_text(f, &out, &rq, &(gpu_profile){.name = "test"}, NULL);
  fclose(f);
  g_autofree char *want = g_strdup_printf("\n  (HFU < MFU: MFU's 6N counts the embedding lookup and the norm weights, "
                                          "%.1f%% of its FLOPs here, which no kernel executes)\n", 100 * share);
  const char *note = strstr(text, want), *hfu = strstr(text, "\nHFU ");
  ck_assert_msg(note && hfu && note == strchr(hfu + 1, '\n'), "%s", text); /* the line after HFU's */
  sim_outcome_clear(&out);
}
END_TEST

START_TEST(test_unwritable_output_fails_with_the_path_and_leaves_no_file)
{
  g_autoptr(graph) g = test_graph();
  replay_result res = {.world_size = 0, .step_time_s = 1.0};
  timeline tl = {.g = g, .res = &res, .step_time_s = 1.0};
  tl_ranks sel = {0, NULL};
  g_autofree char *dir = tmp_path("missing");
  g_autofree char *path = g_build_filename(dir, "t.csv", NULL);
  GError *err = NULL;
  ck_assert(!trace_csv_write(&tl, &sel, path, &err));
  ck_assert_ptr_nonnull(strstr(err->message, path));
  g_error_free(err);
  ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
  /* a successful write leaves exactly the target, no temporary file */
  g_autofree char *ok = tmp_path("ok.csv");
  ck_assert(trace_csv_write(&tl, &sel, ok, NULL));
  g_autoptr(GDir) d = g_dir_open(tmpdir, 0, NULL);
  int files = 0;
  while (g_dir_read_name(d)) files++;
  ck_assert_int_eq(files, 1);
}
END_TEST

/* A test case of `tests`, with the temporary-directory fixture. */
static TCase *views_case(const char *name, const TTest *const *tests, size_t n)
{
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  for (size_t i = 0; i < n; i++) tcase_add_test(tc, tests[i]);
  return tc;
}

/* No argument: the cases that need no external tool. "paje", "svg": the case checked with pj_dump,
 * with xmllint; exit status 77 (meson: SKIP) when that tool is missing. */
int main(int argc, char **argv)
{
  const TTest *const views[] = {
      test_chrome_json_parses_and_every_slice_lies_within_the_step,
      test_pp4_forward_and_backward_blocks_per_stage_equal_micro_batches_and_bubble_sits_where_1f1b_puts_it,
      test_chrome_slices_of_each_track_nest_with_the_gradient_reduction_overlapped,
      test_csv_rows_tile_the_step_and_pp_wait_share_is_the_reported_bubble_fraction,
      test_trace_ranks_dp0_lists_and_bad_values,
      test_unwritable_output_fails_with_the_path_and_leaves_no_file,
      test_text_summary_says_why_hfu_is_below_mfu_and_the_share_it_names_is_the_gap};
  const TTest *const paje[] = {test_paje_simgrid_state_durations_add_up_to_the_step_per_gpu_within_1us,
                               test_paje_has_simgrids_containers_and_its_states_but_the_zero_length_ones,
                               test_paje_links_carry_the_bytes_simgrid_measures_where_transfers_do_not_share_a_link};
  const TTest *const svg[] = {test_svg_is_well_formed_xml_with_a_row_per_stage_and_one_forward_bar_per_micro_batch,
                              test_svg_a_rank_whose_times_differ_by_one_ulp_gets_a_row_of_its_own,
                              test_svg_window_draws_only_the_intervals_inside_it,
                              test_svg_sub_pixel_runs_are_drawn_as_each_columns_shares_of_time};
  const char *only = argc > 1 ? argv[1] : "";
  Suite *s = suite_create("traces");
  if (!*only) {
    TCase *tc = views_case("views", views, G_N_ELEMENTS(views));
    tcase_add_loop_test(tc, test_chrome_every_pipeline_send_flows_to_its_receive_on_the_peer_rank_with_a_unique_id, 0,
                        G_N_ELEMENTS(FLOW_RUNS));
    suite_add_tcase(s, tc);
  } else if (!strcmp(only, "paje")) {
    if (!have("pj_dump")) return 77;
    TCase *tc = views_case("paje", paje, G_N_ELEMENTS(paje));
    tcase_add_loop_test(tc, test_paje_states_tile_the_step_per_gpu_within_1us_with_no_zero_length_state, 0,
                        G_N_ELEMENTS(PAJE_SYMMETRY));
    tcase_add_loop_test(tc, test_paje_links_carry_what_each_gpu_sends_and_receives, 0, G_N_ELEMENTS(PAJE_SYMMETRY));
    tcase_add_loop_test(tc, test_paje_links_split_each_ring_between_nvlink_and_nic_as_nccl_channels_do, 0,
                        G_N_ELEMENTS(PAJE_SYMMETRY));
    suite_add_tcase(s, tc);
  } else if (!strcmp(only, "svg")) {
    if (!have("xmllint")) return 77;
    TCase *tc = views_case("svg", svg, G_N_ELEMENTS(svg));
    tcase_add_loop_test(tc, test_svg_gpus_of_a_stage_with_the_same_intervals_share_one_row_labelled_with_their_ranks,
                        0, 2);
    tcase_add_loop_test(tc, test_svg_legend_lists_exactly_the_categories_that_occur, 0, G_N_ELEMENTS(LEGEND_RUNS));
    tcase_add_loop_test(tc, test_svg_no_two_labels_overlap_however_many_rows_and_however_long_their_lists, 0, 2);
    suite_add_tcase(s, tc);
  } else {
    fprintf(stderr, "test_traces: unknown case '%s' (allowed: paje, svg, or none for the rest)\n", only);
    return 2;
  }
  return check_run(s);
}
