/* cmd_layout -- the commands of one layout: simulate (a layout simulated, its summary and traces),
 * graph (its task graph written) and replay (a task graph file simulated). Every output of a run is
 * replaced all together or not at all.
 *
 * Owns: those commands and the writing of their outputs. May not touch: simulation internals.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "analysis/footprint.h"
#include "analysis/run_cost.h"
#include "analysis/export.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/outputs.h"
#include "common/lsim_error.h"
#include "platforms/plat_file.h"
#include "platforms/stack_set.h"
#include "traces/chrome.h"
#include "traces/csv_timeline.h"
#include "traces/paje.h"
#include "traces/svg.h"

static void put_summary(FILE *f, const cli_opts *o, const sim_outcome *out, const sim_request *rq)
{
  if (!strcmp(o->format, "json")) {
    cJSON *j = report_json(out, rq, &o->rq.prof, o->trust);
    char *s = cJSON_Print(j);
    fprintf(f, "%s\n", s);
    cJSON_free(s);
    cJSON_Delete(j);
  } else {
    report_text(f, out, rq, &o->rq.prof, o->trust);
  }
}

/* Ranks traced in full by default: beyond this, one data-parallel replica. */
#define TRACE_ALL_RANKS_LIMIT 64

/* The profile's memory overheads as the traces' memory model, so that traced peaks are the reported peaks. */
static tl_mem_model trace_mem_model(const gpu_profile *p)
{
  double c = metrics_mem_overhead_bytes(p, 0);
  tl_mem_model mm = {.const_bytes = c, .act_factor = 1.0 + (metrics_mem_overhead_bytes(p, 1.0) - c)};
  return mm;
}

/* --paje-simgrid's trace as one of the run's outputs: opened in `set` before the replay, which SimGrid
 * writes by name as it goes (sim/replay.h), committed with the others. */
static gboolean hold_simgrid_trace(cli_opts *o, lsim_outset *set, GError **err)
{
  if (!o->rq.replay.simgrid_paje_path) return TRUE;
  const char *name = lsim_outset_open_named(set, o->rq.replay.simgrid_paje_path, err);
  if (!name) return FALSE;
  o->rq.replay.simgrid_paje_path = name;
  o->rq.replay.simgrid_paje_held = TRUE;
  return TRUE;
}

/* Every output of simulate and replay (the summary, each trace through lsim_outfile), all or none: each
 * is opened and written, and only once all are whole are they renamed over their targets together with
 * --paje-simgrid's trace already in `set` (lsim_outset). A summary on standard output is printed
 * between the two: once every file is whole, and if it cannot be written no file is replaced. The exit
 * status (an error is printed here, but for standard output's, which main's last flush reports). */
static int write_outputs(const cli_opts *o, const sim_outcome *out, const sim_request *rq, lsim_outset *set)
{
  GError *err = NULL;
  const timeline *tl = &out->tl;
  tl_mem_model mm = trace_mem_model(&o->rq.prof);
  tl_ranks sel = {0};
  g_autofree char *text = NULL; /* the summary for standard output */
  size_t text_len = 0;
  FILE *summary = NULL, *chrome = NULL, *csv = NULL, *svg = NULL, *mem_svg = NULL, *paje = NULL;
  double start_s, end_s; /* the window must start inside the step: checked before any file is opened */
  gboolean ok = (!o->svg_window || trace_svg_window_parse(o->svg_window, tl->step_time_s, &start_s, &end_s, &err)) &&
                (!(o->chrome_trace || o->timeline_csv) ||
                 tl_ranks_parse(tl, o->trace_ranks, TRACE_ALL_RANKS_LIMIT, &sel, &err)) &&
                cli_open_output(set, o->output, &summary, &err) && cli_open_output(set, o->chrome_trace, &chrome, &err) &&
                cli_open_output(set, o->timeline_csv, &csv, &err) && cli_open_output(set, o->timeline_svg, &svg, &err) &&
                cli_open_output(set, o->memory_svg, &mem_svg, &err) && cli_open_output(set, o->paje, &paje, &err);
  const gpu_profile *pr = &o->rq.prof;
  g_autofree char *whatifs = whatif_describe(pr, o->rq.capacity_gib);
  g_autofree char *platform = g_strdup_printf("%s, stack %s%s%s%s, %s", pr->name, pr->stack.name,
                                              pr->stack.set[0] ? " (set " : "", pr->stack.set,
                                              pr->stack.set[0] ? ")" : "", whatifs);
  if (ok) {
    trace_svg_info info = {.mfu = out->met->mfu, .max_gpu_rows = TRACE_ALL_RANKS_LIMIT, .window = o->svg_window,
                           .platform = platform};
    if (chrome) trace_chrome_put(tl, &sel, &mm, chrome);
    if (csv) trace_csv_put(tl, &sel, csv);
    if (svg) trace_svg_timeline_put(tl, &info, svg);
    if (mem_svg) trace_svg_memory_put(tl, &mm, out->met->mem_capacity_bytes, mem_svg);
    if (paje) trace_paje_put(tl, &out->plat, o->paje_links, paje);
    FILE *to_stdout = summary ? NULL : open_memstream(&text, &text_len);
    put_summary(summary ? summary : to_stdout, o, out, rq);
    if (to_stdout) fclose(to_stdout);
  }
  tl_ranks_clear(&sel);
  if (!ok || !lsim_outset_close(set, &err)) {
    lsim_outset_abort(set);
    return cli_fail(err);
  }
  if (text && (fwrite(text, 1, text_len, stdout) != text_len || fflush(stdout) != 0)) {
    lsim_outset_abort(set);
    return 2;
  }
  return lsim_outset_publish(set, &err) ? 0 : cli_fail(err);
}

/* simulate --export TARGET: the layout, checked as a simulation checks it, as TARGET's configuration (analysis/export.h),
 * on standard output or -o; nothing is simulated. */
static int cmd_export(cli_opts *o)
{
  GError *err = NULL;
  export_target t;
  if (!export_parse_target(o->export_target, &t, &err) || !sim_request_prepare(&o->rq, &err)) return cli_fail(err);
  g_autoptr(GString) s = g_string_new(NULL);
  export_layout(&o->rq, t, s);
  if (!o->output) {
    fputs(s->str, stdout);
    return 0;
  }
  if (!cli_outputs_writable(o, &err) || !g_file_set_contents(o->output, s->str, (gssize)s->len, &err)) return cli_fail(err);
  return 0;
}

int cli_cmd_simulate(cli_opts *o)
{
  GError *err = NULL;
  if (cli_no_positional(o, "simulate")) return 2;
  if (!cli_resolve(o, TRUE, &err)) return cli_fail(err);
  if (o->export_target) return cmd_export(o);
  if (!tl_ranks_spec_check(o->trace_ranks, o->rq.l.gpus, &err) || !cli_outputs_writable(o, &err)) return cli_fail(err);
  run_cost_start(o->max_seconds, o->max_memory_bytes, TRUE);
  lsim_outset set;
  lsim_outset_init(&set);
  sim_outcome out = {0};
  if (!hold_simgrid_trace(o, &set, &err) || !sim_run_layout(&o->rq, &out, &err)) {
    lsim_outset_abort(&set);
    sim_outcome_clear(&out);
    return cli_fail(err);
  }
  int rc = write_outputs(o, &out, &o->rq, &set);
  sim_outcome_clear(&out);
  return rc;
}

int cli_cmd_graph(cli_opts *o)
{
  GError *err = NULL;
  if (cli_no_positional(o, "graph")) return 2;
  if (!o->output) return cli_fail_msg("graph: --output FILE is required (where to write the graph)");
  if (!cli_resolve(o, TRUE, &err) || !cli_outputs_writable(o, &err)) return cli_fail(err);
  if (!sim_request_prepare(&o->rq, &err) || !sim_request_fits(&o->rq, FALSE, &err)) return cli_fail(err);
  g_autoptr(graph) g = gen_graph(&o->rq.m, &o->rq.l, &o->rq.gen, &err);
  if (!g) return cli_fail(err);
  /* the platform it was generated for, which replay runs on unless told otherwise (docs/graph-format.md) */
  graph_meta_set_text(g, "profile", o->profile_name);
  graph_meta_set_text(g, "stack", o->stack_name);
  graph_meta_set_text(g, "stack_set", o->rq.prof.stack.set);
  if (!graph_save(g, o->output, &err)) return cli_fail(err);
  return 0;
}

/* One of the graph's platform entries (meta.profile, meta.stack) as the name replay runs on: a shipped one. A file's
 * path is not read on the graph's word (it names a file where and when the graph was made): the user gives it. */
static gboolean graph_platform_name(const char *gpath, const char *key, const char *value, char *(*path_of)(const char *),
                                    GError **err)
{
  if (plat_file_names_a_file(value)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: meta.%s: '%s' is a %s file, which replay does not read on "
                "the graph's word (allowed: --%s %s to replay on it, or --%s NAME)", gpath, key, value, key, key, value,
                key);
    return FALSE;
  }
  g_autofree char *path = path_of(value);
  g_autoptr(GError) unknown = NULL; /* "profile: unknown 'x' (allowed: the shipped ones...)", said of the entry */
  if (plat_file_check_shipped(key, value, path, &unknown)) return TRUE;
  const char *why = unknown->message;
  if (g_str_has_prefix(why, key) && g_str_has_prefix(why + strlen(key), ": ")) why += strlen(key) + 2;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: meta.%s: %s", gpath, key, why);
  return FALSE;
}

/* The platform replay runs a graph on (docs/graph-format.md, "The platform"): the profile, stack and stack keys the
 * graph says it was generated for, where the command gives none; one the command gives where it does, with a note
 * where it differs from the graph's. A graph without them (an older layoutsim's, or one written by hand) replays on
 * the defaults, as it always did, with a note saying so. The notes (lines) go to `notes`, printed on standard error
 * once the replay has succeeded (a refusal stays one line). */
static gboolean replay_platform(cli_opts *o, const graph *g, const char *gpath, GString *notes, GError **err)
{
  const graph_meta *gm = &g->meta;
  gboolean profile_given = o->given[cli_option_find("profile") - CLI_OPTIONS] != NULL;
  if (!*gm->profile) {
    if (!profile_given)
      g_string_append_printf(notes, "layoutsim: note: %s does not say which profile it was generated for (no "
                             "meta.profile: a graph of an older layoutsim, or written by hand): replaying on %s, the "
                             "default (--profile NAME to choose)\n", gpath, o->profile_name);
  } else if (!profile_given) {
    if (!graph_platform_name(gpath, "profile", gm->profile, profile_path, err)) return FALSE;
    o->profile_name = g_intern_string(gm->profile);
  } else if (strcmp(o->profile_name, gm->profile)) {
    g_string_append_printf(notes, "layoutsim: note: replaying on --profile %s, not %s, the profile %s was generated "
                           "for%s%s%s\n", o->profile_name, gm->profile, gpath, o->stack_set || !*gm->stack ? "" : " (with its stack, ",
            o->stack_set ? "" : gm->stack, o->stack_set || !*gm->stack ? "" : "; --stack NAME for another)");
  }
  if (!*gm->stack) return TRUE; /* the profile's default stack, as before */
  if (!o->stack_set) {
    if (!graph_platform_name(gpath, "stack", gm->stack, stack_path, err)) return FALSE;
    o->stack_name = g_intern_string(gm->stack);
    o->stack_set = TRUE;
  } else if (strcmp(o->stack_name, gm->stack)) {
    g_string_append_printf(notes, "layoutsim: note: replaying with --stack %s, not %s, the stack %s was generated "
                           "with%s%s%s\n", o->stack_name, gm->stack, gpath, *gm->stack_set ? " (nor its keys set, " : "", gm->stack_set,
            *gm->stack_set ? ")" : "");
    return TRUE;
  }
  /* the graph's stack: its keys set too, unless the command sets its own */
  g_autofree char *given = stack_settings_describe(o->stack_sets);
  if (o->stack_sets->len == 0) {
    g_autofree char *field = g_strdup_printf("%s: meta.stack_set", gpath);
    return stack_settings_parse_list(o->stack_sets, gm->stack_set, field, err);
  }
  if (strcmp(given, gm->stack_set))
    g_string_append_printf(notes, "layoutsim: note: replaying with --stack-set %s, not the keys %s was generated with "
                           "(%s)\n", given, gpath, *gm->stack_set ? gm->stack_set : "none");
  return TRUE;
}

int cli_cmd_replay(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len != 1) return cli_fail_msg("replay: expects exactly one graph file (layoutsim replay G.json)");
  run_cost_start(o->max_seconds, o->max_memory_bytes, TRUE);
  const char *gpath = o->positional->pdata[0];
  graph *g = graph_load_within(gpath, run_cost_budget_bytes(), &err);
  if (!g) return cli_fail(err);
  /* the platform: the graph's, unless the command names another */
  g_autoptr(GString) notes = g_string_new(NULL);
  if (!replay_platform(o, g, gpath, notes, &err) || !cli_resolve(o, FALSE, &err)) {
    graph_free(g);
    return cli_fail(err);
  }
  if (!tl_ranks_spec_check(o->trace_ranks, g->world_size, &err) || !cli_outputs_writable(o, &err)) {
    graph_free(g);
    return cli_fail(err);
  }
  lsim_outset set;
  lsim_outset_init(&set);
  sim_outcome out = {0};
  if (!hold_simgrid_trace(o, &set, &err) ||
      !sim_run_graph(g, &o->rq.prof, o->rq.capacity_gib, &o->rq.replay, &out, &err)) {
    lsim_outset_abort(&set);
    graph_free(g);
    return cli_fail(err);
  }
  int rc = write_outputs(o, &out, NULL, &set);
  sim_outcome_clear(&out);
  if (rc == 0) fputs(notes->str, stderr);
  return rc;
}
