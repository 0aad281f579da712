/* options -- see options.h. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "platforms/stack_set.h"
#include "workloads/schedule.h"

/* getopt_long's val of the option of CLI_OPTIONS index i without a short name. */
#define LONG_VAL_BASE 1000

static unsigned applies_to(const cli_option *op) { return op ? op->commands : 0; }

/* The option of getopt_long's val c. */
static const cli_option *option_of_val(int c)
{
  if (c >= LONG_VAL_BASE && c < LONG_VAL_BASE + (int)CLI_N_OPTIONS) return &CLI_OPTIONS[c - LONG_VAL_BASE];
  return cli_option_find_short(c);
}

/* Whether `op` takes a list in `command`. */
static gboolean takes_list(const cli_option *op, unsigned command)
{
  return command == CMD_SWEEP && op->list != CLI_LIST_NONE;
}

/* getopt_long's array for `command`, generated from CLI_OPTIONS (aliases included), ended by a zero entry;
 * its "o:j:" in *shorts. */
static struct option *long_options(unsigned command, GString *shorts)
{
  struct option *longs = g_new0(struct option, 2 * CLI_N_OPTIONS + 1);
  size_t n = 0;
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    int has_arg = op->arg == CLI_ARG_NONE ? no_argument
                  : op->arg == CLI_ARG_REQUIRED ? required_argument
                                                : optional_argument; /* a list in sweep: joined to it (cli_parse) */
    int val = op->short_name ? op->short_name : LONG_VAL_BASE + (int)i;
    longs[n++] = (struct option){op->name, has_arg, NULL, val};
    if (op->alias) longs[n++] = (struct option){op->alias, has_arg, NULL, val};
    if (op->short_name) g_string_append_printf(shorts, "%c%s", op->short_name, has_arg == no_argument ? "" : ":");
  }
  return longs;
}

void cli_opts_init(cli_opts *o)
{
  memset(o, 0, sizeof *o);
  o->rq.l = layout_default();
  o->rq.gen = gen_default_options();
  o->model_name = "llama-13b";
  o->profile_name = "a100-sxm4-80gb";
  o->stack_name = STACK_DEFAULT;
  o->format = "text";
  o->jobs = (int)g_get_num_processors();
  o->shard_i = o->shard_n = 1;
  o->positional = g_ptr_array_new_with_free_func(g_free);
  o->trusts = trust_cache_new();
  o->stack_sets = g_array_new(FALSE, FALSE, sizeof(stack_setting));
}

void cli_opts_clear(cli_opts *o)
{
  g_ptr_array_free(o->positional, TRUE);
  g_hash_table_destroy(o->trusts);
  g_array_free(o->stack_sets, TRUE);
}

gboolean cli_bad_value(GError **err, const char *opt, const char *s, const char *allowed)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: invalid value '%s' (allowed: %s)", opt, s, allowed);
  return FALSE;
}

/* An integer in [lo, hi], strict as the CSV reader: no blank or sign (strtol would skip them). */
gboolean cli_parse_int_in(const char *opt, const char *s, long lo, long hi, int *out, GError **err)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || !g_ascii_isdigit(*s) || v < lo || v > hi) {
    g_autofree char *allowed = g_strdup_printf("an integer from %ld to %ld", lo, hi);
    return cli_bad_value(err, opt, s, allowed);
  }
  *out = (int)v;
  return TRUE;
}

gboolean cli_parse_positive_int(const char *opt, const char *s, int *out, GError **err)
{
  return cli_parse_int_in(opt, s, 1, CLI_INT_MAX, out, err);
}

gboolean cli_parse_bool(const char *opt, const char *s, gboolean *out, GError **err)
{
  if (!s || !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "on")) *out = TRUE;
  else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "off")) *out = FALSE;
  else return cli_bad_value(err, opt, s, "0, 1, true, false, on, off");
  return TRUE;
}

/* The layout enumeration an option without parse stores into (layout.h layout_enum): the field at its offset. */
static const layout_field *layout_enum_at(const cli_option *op)
{
  gsize at = offsetof(cli_opts, rq.l);
  const layout_field *f = op->field >= at ? layout_field_at(op->field - at) : NULL;
  g_assert(f && f->en); /* a CLI_V_ENUM without parse must store into an enumeration of LAYOUT_FIELDS */
  return f;
}

/* One value of `op` (an element of its list in sweep) as an int (enums, booleans) or, a what-if, a
 * double: the check of the value's type and range the table declares. */
static gboolean parse_value(const cli_option *op, const char *s, int *iv, double *dv, GError **err)
{
  gboolean b;
  switch (op->value) {
  case CLI_V_INT: return cli_parse_int_in(op->name, s, op->lo, op->hi, iv, err);
  case CLI_V_ENUM: /* without parse: an enumeration of the layout's field table (layout.h layout_enum) */
    return op->parse ? op->parse(s, iv, err) : layout_enum_parse(layout_enum_at(op), s, iv, err);
  case CLI_V_BOOL:
    if (!cli_parse_bool(op->name, s, &b, err)) return FALSE;
    *iv = b;
    return TRUE;
  case CLI_V_WHATIF: {
    g_autofree char *field = g_strconcat("--", op->name, NULL);
    return whatif_parse(op->axis, field, s, dv, err);
  }
  case CLI_V_REAL: return op->parse_real(s, dv, err);
  default: return TRUE; /* a string, a flag: no check */
  }
}

static void *field_of(cli_opts *o, size_t offset) { return (char *)o + offset; }

/* Store the value of one option (its argument checked as the table says). */
static gboolean set_option(cli_opts *o, const cli_option *op, const char *arg, GError **err)
{
  int iv = 0;
  double dv = 0;
  if (op->value == CLI_V_CUSTOM) return op->set(o, arg, err);
  if (!parse_value(op, arg, &iv, &dv, err)) return FALSE;
  if (op->given_field) *(gboolean *)field_of(o, op->given_field) = TRUE;
  switch (op->value) {
  case CLI_V_FLAG: *(int *)field_of(o, op->field) = op->flag_value; break;
  case CLI_V_STRING: *(const char **)field_of(o, op->field) = arg; break;
  case CLI_V_WHATIF: o->whatif.v[op->axis] = dv; break;
  case CLI_V_REAL: *(double *)field_of(o, op->field) = dv; break;
  default: *(int *)field_of(o, op->field) = iv; break; /* int, enum, bool */
  }
  return TRUE;
}

/* The index of the option an option is another spelling of (--no-zero1: --zero), or its own. */
static size_t canonical_index(const cli_option *op)
{
  const cli_option *same = op->same_as ? cli_option_find(op->same_as) : NULL;
  return (size_t)((same ? same : op) - CLI_OPTIONS);
}

/* One option as getopt_long read it: refused when given before (under any of its names), kept raw
 * when it is a sweep's list (cli_sweep_spec reads it), else checked and stored. */
static gboolean one_option(cli_opts *o, const cli_option *op, const char *shown, const char *arg, GError **err)
{
  size_t i = canonical_index(op);
  if (o->given[i] && !op->repeatable) {
    const cli_option *first = &CLI_OPTIONS[i];
    g_autoptr(GString) names = g_string_new(NULL); /* every name of the option, where it has more than one */
    for (size_t k = 0; k < CLI_N_OPTIONS; k++)
      if (canonical_index(&CLI_OPTIONS[k]) == i) {
        g_string_append_printf(names, "%s--%s", names->len ? ", " : "", CLI_OPTIONS[k].name);
        if (CLI_OPTIONS[k].alias) g_string_append_printf(names, ", --%s", CLI_OPTIONS[k].alias);
      }
    if (first == op && !op->alias)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: given more than once (allowed: each option once)", shown);
    else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: given more than once, as one of %s (allowed: each option "
                  "once, by one of its names)", shown, names->str);
    return FALSE;
  }
  /* a spelling of another option without a value (--no-zero1) gives that option its value (--zero 0) */
  o->given[i] = arg ? arg : op->same_as && op->value == CLI_V_FLAG ? g_intern_string(op->flag_value ? "1" : "0") : "";
  if (takes_list(op, o->command_bit)) return TRUE;
  return set_option(o, op, arg, err);
}

/* Options that only mean something together with another. */
static gboolean check_combinations(const cli_opts *o, GError **err)
{
  const char *msg = NULL;
  if (o->model_file && o->model_set) msg = "--model-file: given together with --model (allowed: one of the two)";
  else if (o->paje_links && !o->paje && !o->rq.replay.simgrid_paje_path)
    msg = "--paje-links: needs --paje FILE or --paje-simgrid FILE";
  else if (o->trace_ranks && !o->chrome_trace && !o->timeline_csv)
    msg = "--trace-ranks: needs --chrome-trace FILE or --timeline-csv FILE";
  else if (o->svg_window && !o->timeline_svg) msg = "--svg-window: needs --timeline-svg FILE";
  if (msg) g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, msg);
  return msg == NULL;
}

/* Edit distance of a and b (optimal string alignment: an insertion, a deletion, a substitution or a
 * swap of two neighbours each count 1), for "did you mean". */
static int edit_distance(const char *a, const char *b)
{
  int n = (int)strlen(a), m = (int)strlen(b);
  g_autofree int *d = g_new(int, (gsize)(n + 1) * (m + 1));
#define D(i, j) d[(i) * (m + 1) + (j)]
  for (int i = 0; i <= n; i++) D(i, 0) = i;
  for (int j = 0; j <= m; j++) D(0, j) = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      int v = MIN(D(i - 1, j) + 1, D(i, j - 1) + 1);
      v = MIN(v, D(i - 1, j - 1) + (a[i - 1] != b[j - 1]));
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = MIN(v, D(i - 2, j - 2) + 1);
      D(i, j) = v;
    }
  int r = D(n, m);
#undef D
  return r;
}

/* The options of `longs` the name is a prefix of, those that apply to `command` (all when none does),
 * as "--a, --b"; NULL when none. */
static char *expansions(const struct option *longs, const char *name, size_t len, unsigned command)
{
  GString *out = NULL;
  for (int pass = 0; pass < 2 && !out; pass++)
    for (const struct option *l = longs; l->name; l++) {
      if (strncmp(l->name, name, len) || (pass == 0 && !(applies_to(option_of_val(l->val)) & command))) continue;
      if (!out) out = g_string_new(NULL);
      g_string_append_printf(out, "%s--%s", out->len ? ", " : "", l->name);
    }
  return out ? g_string_free(out, FALSE) : NULL;
}

/* The option of `longs` nearest to name (edit distance at most a third of its length, at least 2), one
 * that applies to `command` first; NULL when none is near. */
static const char *nearest(const struct option *longs, const char *name, unsigned command)
{
  const char *best = NULL;
  int best_d = MAX(2, (int)strlen(name) / 3) + 1, best_applies = 0;
  for (const struct option *l = longs; l->name; l++) {
    int d = edit_distance(name, l->name), applies = (applies_to(option_of_val(l->val)) & command) != 0;
    if (d < best_d || (d == best_d && applies > best_applies)) {
      best = l->name;
      best_d = d;
      best_applies = applies;
    }
  }
  return best;
}

static gboolean is_bool_word(const char *s)
{
  static const char *const W[] = {"0", "1", "true", "false", "on", "off"};
  for (size_t i = 0; i < G_N_ELEMENTS(W); i++)
    if (!strcmp(s, W[i])) return TRUE;
  return FALSE;
}

/* The long options of argv as written, before getopt_long reads them: it would take a unique prefix
 * for the option (--glob for --global-batch, and a later option beginning so would change what it
 * means), so only full names are allowed; a name that is no option gets the nearest one; a flag's
 * optional value goes after '=' (--sp 1 would make 1 an argument). */
static gboolean check_long_names(const struct option *longs, const char *command_name, unsigned command, int argc,
                                 char **argv, GError **err)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) return TRUE; /* the rest are arguments */
    if (a[0] == '-' && a[1] && !a[2] && cli_option_find_short(a[1]) && cli_option_find_short(a[1])->arg != CLI_ARG_NONE &&
        i + 1 < argc)
      i++; /* a short option's value, whatever it is */
    if (strncmp(a, "--", 2)) continue;
    const char *name = a + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *l = longs;
    while (l->name && (strlen(l->name) != len || strncmp(l->name, name, len))) l++;
    g_autofree char *shown = g_strndup(a, len + 2);
    if (l->name) {
      if (l->has_arg == no_argument && eq) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: takes no value, got '%s' (allowed: %s alone)", shown,
                    eq + 1, shown);
        return FALSE;
      }
      if (l->has_arg == optional_argument && !eq && i + 1 < argc && is_bool_word(argv[i + 1]) &&
          (applies_to(option_of_val(l->val)) & command)) {
        gboolean on = FALSE;
        cli_parse_bool(l->name, argv[i + 1], &on, NULL);
        g_autofree char *plain = on ? g_strdup_printf("%s alone", shown) : g_strdup_printf("no %s", shown);
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: its value goes after '=': '%s %s' makes '%s' an "
                    "argument (allowed: %s=%s, or %s)", shown, shown, argv[i + 1], argv[i + 1], shown, argv[i + 1],
                    plain);
        return FALSE;
      }
      if (l->has_arg == required_argument && !eq) i++; /* its value, which may begin with "--" */
      continue;
    }
    g_autofree char *typed = g_strndup(name, len);
    g_autofree char *full = len ? expansions(longs, name, len, command) : NULL;
    const char *near = full ? NULL : nearest(longs, typed, command);
    if (full)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: an abbreviation, which layoutsim does not take (allowed: "
                  "the full name%s: %s)", shown, strchr(full, ',') ? ", one of" : "", full);
    else if (near)
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: unknown option; did you mean --%s? (allowed: the options "
                  "of layoutsim help %s)", shown, near, command_name);
    else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: unknown option (allowed: the options of layoutsim help %s)",
                  shown, command_name);
    return FALSE;
  }
  return TRUE;
}

gboolean cli_parse(cli_opts *o, const char *command_name, unsigned command, int argc, char **argv, GError **err)
{
  o->command_bit = command;
  optind = 0; /* glibc: all of getopt's state anew (with 1, a short-option cluster cut short by an error,
               * "-qxyz", was resumed in the next call, from the earlier argv) */
  opterr = 0;
  int c, idx = -1;
  g_autoptr(GString) shorts = g_string_new(":"); /* ':' first: a missing value is ':' */
  g_autofree struct option *longs = long_options(command, shorts);
  /* --sp 1 as sweep's --sp 0,1 writes it: the value of a flag with an optional one (--sp, the overlaps) joined to
   * it (--sp=1) before getopt reads argv; in sweep its list (--sp 0,1: any word not an option), and alone there
   * it is on (--sp=1) */
  static GPtrArray *kept; /* getopt's optarg points into argv, and the options keep it: every copy lives on */
  if (!kept) kept = g_ptr_array_new();
  GPtrArray *joined = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(kept, joined);
  for (int i = 0; i < argc; i++) {
    const cli_option *op = i > 0 && g_str_has_prefix(argv[i], "--") ? cli_option_find(argv[i] + 2) : NULL;
    gboolean optional = op && op->arg == CLI_ARG_OPTIONAL && op->value == CLI_V_BOOL && (op->commands & command);
    gboolean list = optional && takes_list(op, command);
    gboolean next = optional && i + 1 < argc &&
                    (list ? argv[i + 1][0] != '-' && strcmp(argv[i + 1], "") : is_bool_word(argv[i + 1]));
    g_ptr_array_add(joined, next ? g_strconcat(argv[i], "=", argv[i + 1], NULL)
                            : list ? g_strconcat(argv[i], "=1", NULL) : g_strdup(argv[i]));
    i += next;
  }
  argc = (int)joined->len;
  g_ptr_array_add(joined, NULL);
  argv = (char **)joined->pdata;
  if (!check_long_names(longs, command_name, command, argc, argv, err)) return FALSE;
  while ((c = getopt_long(argc, argv, shorts->str, longs, &idx)) != -1) {
    const char *what = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    if (c == ':') {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: needs a value (see layoutsim help %s)", what,
                  command_name);
      return FALSE;
    }
    const cli_option *op = option_of_val(c);
    if (!op) { /* a long option's name was checked above: an unknown short one, perhaps inside "-qjx" */
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "-%c: unknown option (allowed: the options of layoutsim help %s)",
                  optopt, command_name);
      return FALSE;
    }
    /* the name as given: a long one (or its alias), else the short one */
    g_autofree char *shown = idx >= 0 && longs[idx].val == c ? g_strconcat("--", longs[idx].name, NULL)
                                                             : g_strdup_printf("-%c", c);
    if (!(op->commands & command)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: does not apply to %s (see layoutsim help %s)",
                  idx >= 0 && longs[idx].val == c ? longs[idx].name : op->name, command_name, command_name);
      return FALSE;
    }
    idx = -1;
    if (!one_option(o, op, shown, optarg, err)) return FALSE;
  }
  for (int i = optind; i < argc; i++) g_ptr_array_add(o->positional, g_strdup(argv[i])); /* argv is the joined copy */
  o->rq.replay.simgrid_paje_links = o->paje_links && o->rq.replay.simgrid_paje_path;
  return check_combinations(o, err);
}

/* The model of --model or --model-file, with --vocab. */
static gboolean resolve_model(const cli_opts *o, model *m, GError **err)
{
  /* the --model-file hint belongs to the command line: a table row cannot name a file */
  if (!o->model_file && !model_is_builtin(o->model_name)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: unknown '%s' (allowed: %s, or --model-file FILE)",
                o->model_name, model_builtin_names());
    return FALSE;
  }
  gboolean ok = o->model_file ? model_load_file(o->model_file, m, err) : model_load_named(o->model_name, m, err);
  if (ok && o->vocab > 0) m->vocab = o->vocab;
  return ok;
}

/* Which of the ZeRO stage and the overlaps the command line gave (STACK_GIVEN_* bits; else the stack's). */
static unsigned cli_layout_given(const cli_opts *o)
{
  static const struct { const char *name; unsigned bit; } opts[] = {{"zero", STACK_GIVEN_ZERO},
      {"overlap-grad-reduce", STACK_GIVEN_OVERLAP_GRAD_REDUCE}, {"overlap-param-gather", STACK_GIVEN_OVERLAP_PARAM_GATHER}};
  unsigned given = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(opts); i++)
    if (o->given[cli_option_find(opts[i].name) - CLI_OPTIONS]) given |= opts[i].bit;
  return given;
}

/* The chunks a schedule implies where --virtual-stages is left out (DualPipeV's 2: sched_def.default_chunks); a given
 * one it does not take is refused here, naming the option. A sweep's lists are its own (cli_sweep_spec). */
static gboolean resolve_chunks(cli_opts *o, GError **err)
{
  const sched_def *d = sched_get(o->rq.l.schedule);
  if ((o->command_bit & CMD_SWEEP) || !d->default_chunks) return TRUE;
  if (!o->given[cli_option_find("virtual-stages") - CLI_OPTIONS]) {
    o->rq.l.virtual_stages = d->default_chunks;
    return TRUE;
  }
  if (o->rq.l.virtual_stages == d->default_chunks) return TRUE;
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--virtual-stages: %d with --schedule %s (allowed: %d, or "
              "--virtual-stages left out, which is %d)", o->rq.l.virtual_stages, d->name, d->default_chunks,
              d->default_chunks);
  return FALSE;
}

gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err)
{
  sim_request *rq = &o->rq;
  if (!resolve_chunks(o, err)) return FALSE;
  /* no --stack: the profile's default (docs/profile.md); predict, validate, calibrate keep the study's for their rows */
  gboolean by_profile = !o->stack_set && (o->command_bit & (CMD_SIMULATE | CMD_GRAPH | CMD_REPLAY));
  if (!profile_load_with_stack(o->profile_name, by_profile ? NULL : o->stack_name, &rq->prof, err)) return FALSE;
  if (by_profile) o->stack_name = g_intern_string(rq->prof.stack.name);
  stack_settings_apply(o->stack_sets, &rq->prof.stack); /* before what follows from its keys: the layout defaults */
  if (o->partition_set && rq->l.pipeline_layout[0]) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--partition: %s with --pipeline-layout, which places the "
                "layers itself (allowed: one of the two)", partition_method_name(rq->gen.partition));
    return FALSE;
  }
  if (!o->partition_set) rq->gen.partition = rq->prof.stack.partition;
  stack_layout_defaults(&rq->prof.stack, &rq->l, cli_layout_given(o));
  /* the commands that say how far to trust a prediction (trust.h): the table of the stack, if it has one */
  if ((o->command_bit & (CMD_SIMULATE | CMD_PREDICT | CMD_VALIDATE)) &&
      !trust_lookup(o->trusts, rq->prof.stack.name, &o->trust, err))
    return FALSE;
  rq->capacity_gib = rq->prof.memory_gib;
  if (!whatif_apply(&o->whatif, &rq->prof, &rq->capacity_gib, err)) return FALSE;
  if (!needs_model) return TRUE;
  if (!resolve_model(o, &rq->m, err)) return FALSE;
  if (rq->l.sp && rq->l.tp == 1) { /* as sweep counts it: the layout of sp off, not one of its own */
    g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--sp: on at tp 1 changes nothing (sequence parallelism "
                        "splits the sequence of the norm and residual regions over the tensor-parallel ranks, and tp 1 "
                        "has one) (allowed at tp 1: no --sp, or --sp=0; or --sp with --tp 2, 4 or 8)");
    return FALSE;
  }
  /* the study's global batch: about 4.2M tokens per step (2048 sequences at 2k, 512 at 8k) */
  if (o->global_batch_set) return TRUE;
  rq->l.global_batch = MAX(1, 4194304 / rq->l.seq_len);
  /* a default the layout cannot divide: say where the number came from */
  layout probe = rq->l;
  g_autoptr(GError) bad = NULL;
  if (!layout_validate(&probe, &rq->m, &bad) && g_str_has_prefix(bad->message, "global_batch:")) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s; --global-batch was not given, and its default is 4194304 "
                "tokens / seq_len %d = %d sequences (set --global-batch)", bad->message, rq->l.seq_len,
                rq->l.global_batch);
    return FALSE;
  }
  return TRUE;
}

/* Most values a list may hold, its ranges' included. */
#define LIST_MAX_VALUES 100001

/* The elements of a list value "a,b,c"; where `ranges`, "lo-hi" stands for every integer from lo to hi.
 * Each value once, checked in a hash table: comparing every pair took minutes for --tp 1-32128. */
static GPtrArray *list_items(const char *opt, const char *s, gboolean ranges, long lo_min, GError **err)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  for (char **p = parts; *p; p++) {
    const char *dash = ranges ? strchr(*p, '-') : NULL;
    int lo, hi;
    if (dash && dash != *p) {
      g_autofree char *a = g_strndup(*p, (gsize)(dash - *p));
      if (!cli_parse_int_in(opt, a, lo_min, CLI_INT_MAX, &lo, err) || !cli_parse_positive_int(opt, dash + 1, &hi, err) ||
          hi < lo || hi - lo >= LIST_MAX_VALUES) {
        g_clear_error(err);
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: invalid range '%s' (allowed: LO-HI, %ld <= LO <= HI, "
                    "at most %d values)", opt, *p, lo_min, LIST_MAX_VALUES);
        return NULL;
      }
      for (int v = lo; v <= hi && out->len <= LIST_MAX_VALUES; v++) g_ptr_array_add(out, g_strdup_printf("%d", v));
    } else {
      g_ptr_array_add(out, g_strdup(*p));
    }
    if (out->len > LIST_MAX_VALUES) {
      g_autofree char *shown = lsim_quote(s, 40);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: %s holds more than %d values (allowed: at most %d values "
                  "in all)", opt, shown, LIST_MAX_VALUES, LIST_MAX_VALUES);
      return NULL;
    }
  }
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < out->len; i++)
    if (!g_hash_table_add(seen, out->pdata[i])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: '%s' is listed twice in '%s' (allowed: each value once)",
                  opt, (char *)out->pdata[i], s);
      return NULL;
    }
  return g_steal_pointer(&out);
}

void cli_sweep_spec_clear(sweep_spec *s)
{
  for (int a = 0; a < AX_N; a++)
    if (s->layout[a]) g_array_unref(s->layout[a]);
  for (int a = 0; a < WHATIF_N; a++)
    if (s->whatif[a]) g_array_unref(s->whatif[a]);
  for (int a = 0; a < AXIS_N; a++)
    if (s->folded[a]) g_array_unref(s->folded[a]);
  if (s->moe_imbalance) g_array_unref(s->moe_imbalance);
  if (s->gpus) g_array_unref(s->gpus);
  if (s->profiles) g_ptr_array_unref(s->profiles);
  if (s->stacks) g_ptr_array_unref(s->stacks);
  memset(s, 0, sizeof *s);
}

gboolean cli_sweep_spec(cli_opts *o, sweep_spec *s, GError **err)
{
  memset(s, 0, sizeof *s);
  if (!resolve_model(o, &s->m, err)) return FALSE;
  if (o->rq.l.moe_capacity_factor > 0) { /* one value: every layout's, as the model's own would be (docs/moe.md) */
    if (!model_has_experts(&s->m)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "moe_capacity_factor: %g on %s, a model without experts "
                  "(allowed: 0)", o->rq.l.moe_capacity_factor, s->m.name);
      return FALSE;
    }
    s->m.moe.capacity_factor = o->rq.l.moe_capacity_factor;
  }
  s->trusts = o->trusts;
  s->model_file = o->model_file;
  s->seq_len = o->rq.l.seq_len;
  s->global_batch = o->global_batch_set ? o->rq.l.global_batch : 0;
  s->zero = o->rq.l.zero;
  s->overlap_grad_reduce = o->rq.l.overlap_grad_reduce;
  s->overlap_param_gather = o->rq.l.overlap_param_gather;
  s->space = (sweep_space)o->space;
  /* exact top-K (docs/sweep.md): the K of --top, or the text's 10; CSV and JSON without --top rank every layout */
  s->top = o->exhaustive ? 0 : o->top > 0 ? o->top : strcmp(o->format, "text") ? 0 : 10;
  s->layout_given = cli_layout_given(o);
  s->gen = o->rq.gen;
  s->shard_i = o->shard_i;
  s->shard_n = o->shard_n;
  s->pool = (pool_cfg){.jobs = o->jobs, .fidelity = o->fidelity, .prune_oom = o->fidelity != POOL_FULL,
                       .progress = "sweep"};
  s->profiles = g_ptr_array_new_with_free_func(g_free);
  s->stacks = g_ptr_array_new_with_free_func(g_free);
  s->partition_set = o->partition_set;
  s->gpus = g_array_new(FALSE, FALSE, sizeof(int));
  for (size_t k = 0; k < CLI_N_OPTIONS; k++) { /* the lists, as the table says where each goes */
    const cli_option *op = &CLI_OPTIONS[k];
    const char *v = o->given[k];
    if (!v || op->list == CLI_LIST_NONE) continue;
    g_autoptr(GPtrArray) items = list_items(op->name, v, op->ranges, op->value == CLI_V_INT ? MAX(0, op->lo) : 1, err);
    if (!items) return FALSE;
    if (op->list == CLI_LIST_PROFILES || op->list == CLI_LIST_STACKS) {
      for (guint i = 0; i < items->len; i++)
        g_ptr_array_add(op->list == CLI_LIST_PROFILES ? s->profiles : s->stacks, g_strdup(items->pdata[i]));
      continue;
    }
    gboolean doubles = op->value == CLI_V_WHATIF || op->value == CLI_V_REAL;
    GArray *arr = g_array_new(FALSE, FALSE, doubles ? sizeof(double) : sizeof(int));
    for (guint i = 0; i < items->len; i++) {
      int iv = 0;
      double dv = 0;
      if (!parse_value(op, items->pdata[i], &iv, &dv, err)) {
        g_array_unref(arr);
        return FALSE;
      }
      if (doubles) g_array_append_val(arr, dv);
      else g_array_append_val(arr, iv);
    }
    GArray **to = op->list == CLI_LIST_WHATIF ? &s->whatif[op->axis]
                  : op->list == CLI_LIST_LAYOUT ? &s->layout[op->axis]
                  : op->list == CLI_LIST_FOLDED ? &s->folded[op->axis]
                  : op->list == CLI_LIST_IMBALANCE ? &s->moe_imbalance
                                                : &s->gpus;
    if (*to) g_array_unref(*to);
    *to = arr;
  }
  /* single values: --what-ifs and --gpus as simulate takes them */
  for (int a = 0; a < WHATIF_N; a++)
    if (!s->whatif[a] && o->whatif.v[a] != 0) {
      s->whatif[a] = g_array_new(FALSE, FALSE, sizeof(double));
      g_array_append_val(s->whatif[a], o->whatif.v[a]);
    }
  for (int a = 0; a < AXIS_N; a++) /* a folded axis not listed: its one value (axes.h; docs/moe.md) */
    if (axis_get(a)->folded && !s->folded[a]) {
      int v = axis_size(&o->rq.l, a);
      s->folded[a] = g_array_new(FALSE, FALSE, sizeof(int));
      g_array_append_val(s->folded[a], v);
    }
  if (!s->moe_imbalance) {
    s->moe_imbalance = g_array_new(FALSE, FALSE, sizeof(double));
    g_array_append_val(s->moe_imbalance, o->rq.l.moe_imbalance);
  }
  if (s->gpus->len == 0) g_array_append_val(s->gpus, o->rq.l.gpus);
  if (s->profiles->len == 0) g_ptr_array_add(s->profiles, g_strdup(o->profile_name));
  if (s->stacks->len == 0) /* NULL: each profile's default_stack */
    g_ptr_array_add(s->stacks, o->stack_set ? g_strdup(o->stack_name) : NULL);
  return TRUE;
}
