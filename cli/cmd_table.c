/* cmd_table -- the commands over tables of layouts: predict (every row predicted), validate (measured
 * rows compared with their predictions) and calibrate (a stack's free constants fitted to them).
 *
 * Owns: those commands. May not touch: how a row is predicted or a constant fitted (analysis/).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "analysis/calibrate.h"
#include "analysis/calibrate_memory.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/outputs.h"
#include "common/lsim_error.h"

/* What predict, validate and calibrate simulate each row with: the resolved profile, memory and options. */
static predict_cfg predict_cfg_of(const cli_opts *o, const char *progress)
{
  predict_cfg cfg = {.prof = o->rq.prof, .profile_arg = o->profile_name, .stack_arg = o->stack_name,
                     .partition_set = o->partition_set, .trusts = o->trusts, .whatif = o->whatif, .stack_sets = o->stack_sets, .capacity_gib = o->rq.capacity_gib, .gen = o->rq.gen,
                     .pool = {.jobs = o->jobs, .fidelity = o->fidelity, .prune_oom = o->fidelity != POOL_FULL,
                              .progress = progress}};
  return cfg;
}

/* --model-file for every row of a table: loaded once (into *m), FALSE with err when it does not load. */
static gboolean table_model_file(const cli_opts *o, predict_cfg *cfg, model *m, GError **err)
{
  if (!o->model_file) return TRUE;
  if (!model_load_file(o->model_file, m, err)) return FALSE;
  cfg->model_file = m;
  return TRUE;
}

int cli_cmd_predict(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len != 1) return cli_fail_msg("predict: expects exactly one input table (layoutsim predict IN.csv -o OUT.csv)");
  if (!o->output) return cli_fail_msg("predict: --output FILE is required (where to write the table)");
  if (!cli_resolve(o, FALSE, &err) || !cli_outputs_writable(o, &err)) return cli_fail(err);
  predict_cfg cfg = predict_cfg_of(o, "predict");
  model mf;
  guint invalid = 0;
  if (!table_model_file(o, &cfg, &mf, &err) || !predict_file(o->positional->pdata[0], o->output, &cfg, &invalid, &err))
    return cli_fail(err);
  if (invalid) { /* the table is written; say that some rows are not predicted, and where their reasons are */
    g_autofree char *msg = g_strdup_printf("predict: %u row%s invalid, not predicted: pred_status 'invalid', the reason "
                                           "in pred_error", invalid, invalid == 1 ? "" : "s");
    cli_say(msg);
  }
  return 0;
}

int cli_cmd_validate(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return cli_fail_msg("validate: expects one or more measured tables (layoutsim validate FILE.csv...)");
  if (!cli_resolve(o, FALSE, &err) || !cli_outputs_writable(o, &err)) return cli_fail(err);
  predict_cfg cfg = predict_cfg_of(o, "validate");
  model mf;
  if (!table_model_file(o, &cfg, &mf, &err)) return cli_fail(err);
  /* --trust-out: the thresholds and margins a table keeps come from the stack's own table, else the
   * default stack's, and the rows of a stack without a table are flagged by it */
  trust_table prior;
  if (o->trust_out) {
    const trust_table *p = o->trust;
    if (!p && !trust_lookup(o->trusts, STACK_DEFAULT, &p, &err)) return cli_fail(err);
    if (!p)
      return cli_fail_msg("validate: --trust-out: no trust table of the stack '" STACK_DEFAULT "' to take the margins "
                      "from (allowed: LAYOUTSIM_DATA set to the layoutsim source tree)");
    prior = *p;
    g_strlcpy(prior.name, o->rq.prof.stack.name, sizeof prior.name);
    cfg.trust_fallback = &prior;
  }
  g_autoptr(GArray) rows =
      val_predict_files((const char *const *)o->positional->pdata, (int)o->positional->len, &cfg, &err);
  if (!rows) return cli_fail(err);
  const val_row *rv = (const val_row *)rows->data;
  guint usable = 0; /* rows that could not be predicted are left out of every statistic */
  for (guint i = 0; i < rows->len; i++) {
    if (rv[i].invalid[0]) {
      g_autofree char *msg = g_strdup_printf("validate: %s (row left out)", rv[i].invalid);
      cli_say(msg);
    }
    else usable += rv[i].meas != MEAS_OTHER;
  }
  if (usable == 0)
    return cli_fail_msg("validate: no row could be compared (allowed: tables with at least one valid row measured ok or "
                    "oom; the messages above say why a row was left out, and rows measured error or unavailable "
                    "carry neither a time nor a memory label)");
  g_autoptr(GArray) stats = val_summarize(rv, (int)rows->len);
  /* the per-row table and the report on standard output, both or neither (as write_outputs) */
  lsim_outset set;
  lsim_outset_init(&set);
  FILE *table, *trust_f;
  if (!cli_open_output(&set, o->output, &table, &err) || !cli_open_output(&set, o->trust_out, &trust_f, &err)) {
    lsim_outset_abort(&set);
    return cli_fail(err);
  }
  if (table) val_put_rows(table, rv, (int)rows->len);
  if (trust_f) {
    trust_table tt;
    g_autoptr(GString) files = g_string_new(NULL);
    for (guint i = 0; i < o->positional->len; i++)
      g_string_append_printf(files, "%s%s", i ? " " : "", (const char *)o->positional->pdata[i]);
    g_autofree char *comment = g_strdup_printf("Written by layoutsim validate %s --profile %s --stack %s --trust-out: how "
                                               "far to trust a prediction (docs/trust.md)", files->str, o->profile_name,
                                               o->stack_name);
    if (!val_trust_table(rv, (int)rows->len, &prior, &o->rq.prof, comment, &tt, &err)) {
      lsim_outset_abort(&set);
      return cli_fail(err);
    }
    trust_put(&tt, trust_f);
  }
  if (!lsim_outset_close(&set, &err)) return cli_fail(err);
  if (!strcmp(o->format, "json")) {
    cJSON *j = val_json(stats, rv);
    char *s = cJSON_Print(j);
    printf("%s\n", s);
    cJSON_free(s);
    cJSON_Delete(j);
  } else {
    if (strcmp(o->profile_name, o->rq.prof.name)) /* a profile file: say which, its name may be its origin's */
      printf("profile %s (%s)\n", o->rq.prof.name, o->profile_name);
    else
      printf("profile %s\n", o->rq.prof.name);
    const char *set = o->rq.prof.stack.set; /* --stack-set's keys, said where given */
    if (strcmp(o->stack_name, o->rq.prof.stack.name)) /* a stack file (or a prior) */
      printf("stack %s (%s)%s%s%s\n", o->rq.prof.stack.name, o->stack_name, *set ? " (set " : "", set, *set ? ")" : "");
    else
      printf("stack %s%s%s%s\n", o->rq.prof.stack.name, *set ? " (set " : "", set, *set ? ")" : "");
    const gpu_profile *p = &o->rq.prof; /* what every row was computed with, but where a row sets its own */
    g_autofree char *whatifs = whatif_describe(p, o->rq.capacity_gib);
    printf("platform: %s (a row's own columns override them)\n", whatifs);
    val_print_text(stdout, stats, rv);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    lsim_outset_abort(&set);
    return 2; /* main's last flush says why */
  }
  return lsim_outset_publish(&set, &err) ? 0 : cli_fail(err);
}

int cli_cmd_calibrate(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return cli_fail_msg("calibrate: expects one or more measured tables (layoutsim calibrate FILE.csv... -o STACK.json)");
  if (!o->output && !o->calib_check_fast)
    return cli_fail_msg("calibrate: --output FILE is required (where to write the fitted stack)");
  if (o->calib_fit && o->calib_check_fast)
    return cli_fail_msg("calibrate: --check-fast compares the timing simulations and fits nothing; it takes no --fit");
  if (o->calib_fit && !strcmp(o->calib_fit, "memory") && (o->max_evals > 0 || o->calib_full || o->prior_weight_set))
    return cli_fail_msg("calibrate: --max-evals, --full and --prior-weight apply to the timing fit, not to --fit memory (its prior weight is fixed: docs/memory.md)");
  if (o->calib_check_fast && (o->output || o->max_evals > 0 || o->calib_full || o->prior_weight_set))
    return cli_fail_msg("calibrate: --check-fast compares fast mode with full simulations and writes no profile; it takes no -o, --max-evals, --full or --prior-weight");
  if (o->max_evals > 0 && o->max_evals < calib_min_evals()) {
    g_autofree char *msg = g_strdup_printf("--max-evals: invalid value '%d' (allowed: an integer >= %d: the start, one "
                                           "evaluation per free constant and one trial step)",
                                           o->max_evals, calib_min_evals());
    return cli_fail_msg(msg);
  }
  if (!cli_resolve(o, FALSE, &err) || !cli_outputs_writable(o, &err)) return cli_fail(err);
  model mf;
  calib_cfg cc = {.pred = predict_cfg_of(o, NULL),
                  .max_evals = o->max_evals > 0 ? o->max_evals : 60, .fast = !o->calib_full, .log = stderr,
                  .prior_weight = o->prior_weight_set ? o->prior_weight : CALIB_PRIOR_WEIGHT};
  cc.pred.no_profile_column = TRUE;
  cc.pred.trusts = NULL; /* the fit reads times and verdicts, not bands: no row assessed at every evaluation */
  cc.pred.pool.prune_oom = FALSE; /* the timing fit uses every row measured ok, predicted to fit or not */
  cc.pred.pool.fidelity = cc.fast ? POOL_AUTO : POOL_FULL;
  if (!table_model_file(o, &cc.pred, &mf, &err)) return cli_fail(err);
  if (o->calib_check_fast) {
    if (!calib_check_fast((const char *const *)o->positional->pdata, (int)o->positional->len, &cc, stdout, &err))
      return cli_fail(err);
    return 0;
  }
  const char *fit = o->calib_fit ? o->calib_fit : "all";
  const char *const *paths = (const char *const *)o->positional->pdata;
  gpu_profile fitted = cc.pred.prof;
  if (!calib_check_tables(paths, (int)o->positional->len, &cc.pred, strcmp(fit, "memory") != 0, &err))
    return cli_fail(err); /* every row, before any fit prints or runs */
  cc.fp8 = !strcmp(fit, "fp8");
  if (strcmp(fit, "timing") && !cc.fp8) {
    calmem_fit mf;
    if (!calmem_run(paths, (int)o->positional->len, &cc.pred, stderr, &mf, &err)) return cli_fail(err);
    fitted.stack.fragmentation = mf.fragmentation;
  }
  if (strcmp(fit, "memory")) {
    cc.pred.prof = fitted;
    if (!calib_run(paths, (int)o->positional->len, &cc, &fitted, &err)) return cli_fail(err);
  }
  GString *files = g_string_new(NULL);
  for (guint i = 0; i < o->positional->len; i++) {
    g_autofree char *base = g_path_get_basename(o->positional->pdata[i]);
    g_string_append_printf(files, "%s%s", i ? " " : "", base);
  }
  g_autofree char *how = strcmp(fit, "memory")
                             ? g_strdup_printf("--fit %s, %s mode, %d evaluations max, prior weight %g", fit,
                                               cc.fast ? "fast" : "full", cc.max_evals, cc.prior_weight)
                             : g_strdup("--fit memory");
  g_snprintf(fitted.stack.comment, sizeof fitted.stack.comment,
             "Fitted by layoutsim calibrate (%s) from %s on profile '%s', starting at stack '%s'; docs/stacks.md and "
             "docs/calibration.md.", how, files->str, o->profile_name, o->stack_name);
  g_string_free(files, TRUE);
  if (!stack_save(&fitted.stack, o->output, &err)) return cli_fail(err);
  return 0;
}
