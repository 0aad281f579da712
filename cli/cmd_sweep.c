/* cmd_sweep -- the commands of layout search: sweep (every combination of the listed values,
 * ranked) and merge (the shards of one sweep joined), and their ranked output with its --plot.
 *
 * Owns: those commands. May not touch: the search and the ranking (analysis/sweep*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export.h"
#include "analysis/predict.h"
#include "analysis/run_cost.h"
#include "analysis/sweep.h"
#include "analysis/sweep_plot.h"
#include "analysis/sweep_report.h"
#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/outputs.h"
#include "common/lsim_error.h"

/* --export TARGET after a text ranking: the layout to prefer at each platform point (the `preferred` column), or
 * with --top K each of the K best, as TARGET's configuration (analysis/export.h), each rebuilt from its row as
 * predict reads a row (its model, profile, stack and every layout column). */
static gboolean append_exports(const cli_opts *o, const csv_table *ranked, GString *text, GError **err)
{
  export_target target;
  if (!export_parse_target(o->export_target, &target, err)) return FALSE;
  predict_cfg cfg = {.gen = gen_default_options(), .capacity_gib = o->rq.capacity_gib, .prof = o->rq.prof};
  int rank_c = csv_column(ranked, "rank"), pref_c = csv_column(ranked, "preferred"), lab_c = csv_column(ranked, "layout");
  model mf;
  if (o->model_file) {
    if (!model_load_file(o->model_file, &mf, err)) return FALSE;
    cfg.model_file = &mf;
  }
  for (guint r = 0; r < ranked->rows->len; r++) {
    const char *rank = csv_cell(ranked, r, rank_c);
    gboolean pick = o->top > 0 ? *rank && atoi(rank) <= o->top : !strcmp(csv_cell(ranked, r, pref_c), "1");
    if (!pick) continue;
    sim_request rq = {0};
    if (!predict_row_request(ranked, r, &cfg, &rq, err)) return FALSE;
    g_string_append_printf(text, "\n# rank %s%s: %s\n", rank, !strcmp(csv_cell(ranked, r, pref_c), "1") ? " (preferred)" : "",
                           csv_cell(ranked, r, lab_c));
    export_layout(&rq, target, text);
  }
  return TRUE;
}

/* A ranked rendering to -o or standard output, and the --plot picture: both or neither (lsim_outset; the
 * rendering on standard output printed once the picture is whole, and the picture kept only if it
 * could be). */
/* --export before any work: a known target, after a text ranking. */
static gboolean export_usable(const cli_opts *o, GError **err)
{
  export_target target;
  if (!o->export_target) return TRUE;
  if (!export_parse_target(o->export_target, &target, err)) return FALSE;
  if (strcmp(o->format, "text")) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--export: follows the ranking in text (allowed: --format text "
                "with --export)");
    return FALSE;
  }
  return TRUE;
}

static int write_ranked(const cli_opts *o, const csv_table *canonical)
{
  GError *err = NULL;
  /* a shard writes every row of its slice for merge (with --top its own K best replayed, the rest pruned) */
  sweep_view v = {.top = o->shard_n > 1 ? 0 : o->top, .show_invalid = o->show_invalid};
  if (!sweep_parse_format(o->format, &v.format, &err)) return cli_fail(err);
  g_autoptr(csv_table) ranked = sweep_rank(canonical);
  g_autoptr(GString) text = g_string_new(NULL);
  sweep_render(ranked, &v, text);
  if (o->export_target && !append_exports(o, ranked, text, &err)) return cli_fail(err);
  lsim_outset set;
  lsim_outset_init(&set);
  FILE *plot, *out;
  gboolean ok = cli_open_output(&set, o->plot, &plot, &err) && cli_open_output(&set, o->output, &out, &err) &&
                (!plot || sweep_plot_put(ranked, plot, &err));
  if (ok && out) fwrite(text->str, 1, text->len, out);
  if (!ok || !lsim_outset_close(&set, &err)) {
    lsim_outset_abort(&set);
    return cli_fail(err);
  }
  if (!out && (fwrite(text->str, 1, text->len, stdout) != text->len || fflush(stdout) != 0)) {
    lsim_outset_abort(&set);
    return 2; /* main's last flush says why */
  }
  return lsim_outset_publish(&set, &err) ? 0 : cli_fail(err);
}

int cli_cmd_sweep(cli_opts *o)
{
  GError *err = NULL;
  if (cli_no_positional(o, "sweep")) return 2;
  if (o->shard_n > 1 && strcmp(o->format, "csv"))
    return cli_fail_msg("--shard: a shard's output is the CSV that merge reads (allowed: --format csv with --shard)");
  if (o->shard_n > 1 && o->plot)
    return cli_fail_msg("--plot: a shard holds part of the sweep (allowed: --plot on layoutsim merge of the shards)");
  if (!export_usable(o, &err)) return cli_fail(err);
  sweep_spec spec;
  if (!cli_sweep_spec(o, &spec, &err) || !cli_ranked_outputs_writable(o, &err)) {
    cli_sweep_spec_clear(&spec);
    return cli_fail(err);
  }
  if (o->plot) { /* before the work: the picture needs exactly one swept platform axis */
    int swept = spec.gpus->len > 1; /* the fabric is a name, not an x axis */
    for (int a = 0; a < WHATIF_N; a++) swept += a != WHATIF_FABRIC && spec.whatif[a] && spec.whatif[a]->len > 1;
    gboolean fabrics = spec.whatif[WHATIF_FABRIC] && spec.whatif[WHATIF_FABRIC]->len > 1;
    if (swept != 1 || spec.profiles->len > 1 || spec.stacks->len > 1 || fabrics) {
      cli_sweep_spec_clear(&spec);
      GString *axes = g_string_new(NULL);
      for (int a = 0; a < WHATIF_N; a++)
        if (a != WHATIF_FABRIC) g_string_append_printf(axes, "--%s, ", whatif_option(a));
      g_autofree char *msg = g_strdup_printf("--plot: needs exactly one swept platform axis (allowed: a list for one of "
                                             "%s--gpus, and one profile, stack and fabric)", axes->str);
      g_string_free(axes, TRUE);
      return cli_fail_msg(msg);
    }
  }
  run_cost_start(o->max_seconds, o->max_memory_bytes, FALSE); /* before the workers' zygote: they inherit the budget */
  g_autoptr(csv_table) t = sweep_run(&spec, &err);
  cli_sweep_spec_clear(&spec);
  if (!t) return cli_fail(err);
  if (o->shard_n == 1) { /* every layout the lists make refused: the lists are bad input, not an empty ranking */
    int st = csv_column(t, "status"), er = csv_column(t, "error");
    guint n = t->rows->len, bad = 0;
    while (st >= 0 && bad < n && !strcmp(csv_cell(t, bad, st), "invalid")) bad++;
    if (n > 0 && bad == n) {
      const char *why = er >= 0 ? csv_cell(t, 0, er) : "(no reason recorded)";
      g_autofree char *msg = n == 1 ? g_strdup_printf("sweep: its one layout is invalid: %s", why)
                                    : g_strdup_printf("sweep: none of the %u layouts is valid, e.g. %s", n, why);
      return cli_fail_msg(msg);
    }
  }
  return write_ranked(o, t);
}

int cli_cmd_merge(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return cli_fail_msg("merge: expects the shard tables of one sweep (layoutsim merge S1.csv S2.csv ...)");
  if (!export_usable(o, &err) || !cli_ranked_outputs_writable(o, &err)) return cli_fail(err);
  g_autoptr(csv_table) t = sweep_merge((const char *const *)o->positional->pdata, (int)o->positional->len, &err);
  if (!t) return cli_fail(err);
  return write_ranked(o, t);
}
