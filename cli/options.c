/* options -- see options.h. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"
#include "sim/collective.h"
#include "traces/svg.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

enum {
  O_MODEL = 1000, O_MODEL_FILE, O_VOCAB, O_GPUS, O_TP, O_PP, O_SP, O_MB, O_GB, O_SEQ, O_CKPT, O_ATTN, O_NORMK, O_NO_ZERO1, O_ZERO, O_OGR, O_OPG,
  O_PARTITION, O_PROFILE, O_GPU_MEM, O_IB, O_NVLINK, O_NICS, O_NO_SYM, O_FORMAT, O_PAJE, O_CHROME, O_SVG, O_CSV, O_LOG,
  O_MEM_SVG, O_TRACE_RANKS, O_PAJE_LINKS, O_PAJE_SIMGRID, O_MAX_EVALS, O_FULL, O_CHECK_FAST, O_FIT, O_PRIOR,
  O_FIDELITY, O_TOP, O_SHOW_INVALID, O_PLOT, O_SHARD, O_SVG_WINDOW, O_TRUST_OUT, O_STACK, O_SCHEDULE, O_VSTAGES,
  O_LEAF, O_OVERSUB, O_PLATFORM_FILE, O_FABRIC, O_CP, O_PRECISION, O_NCCL_ALGO, O_EXPORT
};

static const struct option LONG[] = {
    {"model", required_argument, NULL, O_MODEL},
    {"model-file", required_argument, NULL, O_MODEL_FILE},
    {"vocab", required_argument, NULL, O_VOCAB},
    {"gpus", required_argument, NULL, O_GPUS},
    {"tp", required_argument, NULL, O_TP},
    {"pp", required_argument, NULL, O_PP},
    {"cp", required_argument, NULL, O_CP},
    {"precision", required_argument, NULL, O_PRECISION},
    {"sp", optional_argument, NULL, O_SP},
    {"micro-batch", required_argument, NULL, O_MB},
    {"global-batch", required_argument, NULL, O_GB},
    {"seq-len", required_argument, NULL, O_SEQ},
    {"checkpointing", required_argument, NULL, O_CKPT},
    {"attention-kernel", required_argument, NULL, O_ATTN},
    {"norm-kernel", required_argument, NULL, O_NORMK},
    {"no-zero1", no_argument, NULL, O_NO_ZERO1},
    {"zero", required_argument, NULL, O_ZERO},
    {"overlap-grad-reduce", no_argument, NULL, O_OGR},
    {"overlap-param-gather", no_argument, NULL, O_OPG},
    {"partition", required_argument, NULL, O_PARTITION},
    {"schedule", required_argument, NULL, O_SCHEDULE},
    {"virtual-stages", required_argument, NULL, O_VSTAGES},
    {"profile", required_argument, NULL, O_PROFILE},
    {"stack", required_argument, NULL, O_STACK},
    {"gpu-memory", required_argument, NULL, O_GPU_MEM},
    {"ib-gbps", required_argument, NULL, O_IB},
    {"nvlink-gbps", required_argument, NULL, O_NVLINK},
    {"nics-per-node", required_argument, NULL, O_NICS},
    {"fabric", required_argument, NULL, O_FABRIC},
    {"leaf-nodes", required_argument, NULL, O_LEAF},
    {"oversubscription", required_argument, NULL, O_OVERSUB},
    {"platform-file", required_argument, NULL, O_PLATFORM_FILE},
    {"no-symmetry", no_argument, NULL, O_NO_SYM},
    {"format", required_argument, NULL, O_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"jobs", required_argument, NULL, 'j'},
    {"paje", required_argument, NULL, O_PAJE},
    {"chrome-trace", required_argument, NULL, O_CHROME},
    {"timeline-svg", required_argument, NULL, O_SVG},
    {"svg-window", required_argument, NULL, O_SVG_WINDOW},
    {"timeline-csv", required_argument, NULL, O_CSV},
    {"log", required_argument, NULL, O_LOG},
    {"memory-svg", required_argument, NULL, O_MEM_SVG},
    {"trace-ranks", required_argument, NULL, O_TRACE_RANKS},
    {"chrome-ranks", required_argument, NULL, O_TRACE_RANKS},
    {"paje-links", no_argument, NULL, O_PAJE_LINKS},
    {"paje-simgrid", required_argument, NULL, O_PAJE_SIMGRID},
    {"max-evals", required_argument, NULL, O_MAX_EVALS},
    {"full", no_argument, NULL, O_FULL},
    {"check-fast", no_argument, NULL, O_CHECK_FAST},
    {"fit", required_argument, NULL, O_FIT},
    {"prior-weight", required_argument, NULL, O_PRIOR},
    {"fidelity", required_argument, NULL, O_FIDELITY},
    {"top", required_argument, NULL, O_TOP},
    {"show-invalid", no_argument, NULL, O_SHOW_INVALID},
    {"plot", required_argument, NULL, O_PLOT},
    {"shard", required_argument, NULL, O_SHARD},
    {"trust-out", required_argument, NULL, O_TRUST_OUT},
    {"nccl-algo", required_argument, NULL, O_NCCL_ALGO},
    {"export", required_argument, NULL, O_EXPORT},
    {NULL, 0, NULL, 0},
};

/* Which commands each option applies to (an option a command would ignore is an error there). */
#define ANY_RUN (CMD_SIMULATE | CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE | CMD_SWEEP)
#define LAYOUT_OPT (CMD_SIMULATE | CMD_GRAPH | CMD_SWEEP)
#define TRACES (CMD_SIMULATE | CMD_REPLAY)
#define RANKED (CMD_SWEEP | CMD_MERGE)
static const struct { int val; unsigned commands; } APPLIES[] = {
    {O_MODEL, LAYOUT_OPT}, {O_MODEL_FILE, LAYOUT_OPT | CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE},
    {O_VOCAB, LAYOUT_OPT}, {O_GPUS, LAYOUT_OPT}, {O_TP, LAYOUT_OPT}, {O_PP, LAYOUT_OPT}, {O_SP, LAYOUT_OPT},
    {O_MB, LAYOUT_OPT}, {O_GB, LAYOUT_OPT}, {O_SEQ, LAYOUT_OPT}, {O_CKPT, LAYOUT_OPT}, {O_ATTN, LAYOUT_OPT}, {O_NORMK, LAYOUT_OPT},
    {O_NO_ZERO1, LAYOUT_OPT}, {O_ZERO, LAYOUT_OPT}, {O_OGR, LAYOUT_OPT}, {O_OPG, LAYOUT_OPT},
    {O_PARTITION, ANY_RUN | CMD_GRAPH},
    {O_SCHEDULE, LAYOUT_OPT}, {O_VSTAGES, LAYOUT_OPT}, {O_CP, LAYOUT_OPT}, {O_PRECISION, LAYOUT_OPT},
    {O_PROFILE, ANY_RUN | CMD_GRAPH | CMD_REPLAY}, {O_STACK, ANY_RUN | CMD_GRAPH | CMD_REPLAY}, {O_NICS, ANY_RUN | CMD_GRAPH | CMD_REPLAY},
    {O_GPU_MEM, ANY_RUN | CMD_REPLAY}, {O_FABRIC, ANY_RUN | CMD_REPLAY}, {O_LEAF, ANY_RUN | CMD_REPLAY}, {O_OVERSUB, ANY_RUN | CMD_REPLAY},
    {O_PLATFORM_FILE, CMD_SIMULATE | CMD_REPLAY}, {O_IB, ANY_RUN | CMD_REPLAY}, {O_NVLINK, ANY_RUN | CMD_REPLAY},
    {O_NO_SYM, ANY_RUN | CMD_GRAPH}, {O_FORMAT, CMD_SIMULATE | CMD_REPLAY | CMD_VALIDATE | RANKED},
    {'o', CMD_ALL}, {'j', CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE | CMD_SWEEP},
    {O_PAJE, TRACES}, {O_PAJE_LINKS, TRACES}, {O_PAJE_SIMGRID, TRACES}, {O_CHROME, TRACES}, {O_SVG, TRACES},
    {O_SVG_WINDOW, TRACES}, {O_CSV, TRACES},
    {O_MEM_SVG, TRACES}, {O_TRACE_RANKS, TRACES}, {O_LOG, TRACES},
    {O_MAX_EVALS, CMD_CALIBRATE}, {O_FULL, CMD_CALIBRATE}, {O_CHECK_FAST, CMD_CALIBRATE}, {O_FIT, CMD_CALIBRATE},
    {O_PRIOR, CMD_CALIBRATE}, {O_FIDELITY, CMD_PREDICT | CMD_VALIDATE | CMD_SWEEP}, {O_TOP, RANKED},
    {O_SHOW_INVALID, RANKED}, {O_PLOT, RANKED}, {O_SHARD, CMD_SWEEP}, {O_TRUST_OUT, CMD_VALIDATE},
    {O_NCCL_ALGO, CMD_SIMULATE | CMD_REPLAY},
    {O_EXPORT, CMD_SIMULATE},
};

/* The options that take a list in sweep, in the order of cli_opts.lists. */
static const int LISTS[] = {O_TP, O_PP, O_SP, O_CKPT, O_ATTN, O_MB, O_IB, O_NVLINK, O_NICS, O_GPU_MEM, O_GPUS, O_PROFILE,
                            O_STACK, O_SCHEDULE, O_VSTAGES, O_LEAF, O_OVERSUB, O_FABRIC, O_CP, O_PRECISION};

/* The options that set a what-if (whatif.h), by axis. */
static const int WHATIF_OPTIONS[WHATIF_N] = {O_IB, O_NVLINK, O_NICS, O_GPU_MEM, O_FABRIC, O_LEAF, O_OVERSUB};

/* The what-if axis an option sets, or -1. */
static int whatif_of_option(int val)
{
  for (int a = 0; a < WHATIF_N; a++)
    if (WHATIF_OPTIONS[a] == val) return a;
  return -1;
}
G_STATIC_ASSERT(G_N_ELEMENTS(LISTS) == G_N_ELEMENTS(((cli_opts *)0)->lists));

static int list_slot(int val)
{
  for (size_t i = 0; i < G_N_ELEMENTS(LISTS); i++)
    if (LISTS[i] == val) return (int)i;
  return -1;
}

static unsigned applies_to(int val)
{
  for (size_t i = 0; i < G_N_ELEMENTS(APPLIES); i++)
    if (APPLIES[i].val == val) return APPLIES[i].commands;
  return 0;
}

gboolean cli_option_applies(const char *long_name, unsigned command)
{
  for (const struct option *l = LONG; l->name; l++)
    if (!strcmp(l->name, long_name)) return (applies_to(l->val) & command) != 0;
  return TRUE; /* not an option of this table: no opinion */
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
}

void cli_opts_clear(cli_opts *o)
{
  g_ptr_array_free(o->positional, TRUE);
  g_hash_table_destroy(o->trusts);
}

static gboolean bad(GError **err, const char *opt, const char *s, const char *allowed)
{
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: invalid value '%s' (allowed: %s)", opt, s, allowed);
  return FALSE;
}

/* An integer in [lo, hi], strict as the CSV reader: no blank or sign (strtol would skip them). */
static gboolean parse_int_in(const char *opt, const char *s, long lo, long hi, int *out, GError **err)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || !g_ascii_isdigit(*s) || v < lo || v > hi) {
    g_autofree char *allowed = g_strdup_printf("an integer from %ld to %ld", lo, hi);
    return bad(err, opt, s, allowed);
  }
  *out = (int)v;
  return TRUE;
}

gboolean cli_parse_positive_int(const char *opt, const char *s, int *out, GError **err)
{
  return parse_int_in(opt, s, 1, 1000000000, out, err);
}

static gboolean parse_bool(const char *opt, const char *s, gboolean *out, GError **err)
{
  if (!s || !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "on")) *out = TRUE;
  else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "off")) *out = FALSE;
  else return bad(err, opt, s, "0, 1, true, false, on, off");
  return TRUE;
}

/* --shard I/N: 1 <= I <= N. */
static gboolean parse_shard(cli_opts *o, const char *arg, GError **err)
{
  int i, n, used = 0;
  if (sscanf(arg, "%d/%d%n", &i, &n, &used) == 2 && !arg[used] && g_ascii_isdigit(*arg) && n >= 1 && n <= 1000000 &&
      i >= 1 && i <= n) {
    o->shard_i = i;
    o->shard_n = n;
    return TRUE;
  }
  return bad(err, "shard", arg, "I/N with 1 <= I <= N, e.g. 2/8");
}

static gboolean one_option(cli_opts *o, int c, const char *arg, GError **err)
{
  layout *l = &o->rq.l;
  if (o->command_bit == CMD_SWEEP && list_slot(c) >= 0) { /* a list: cli_sweep_spec reads it */
    o->lists[list_slot(c)] = arg;
    return TRUE;
  }
  int wa = whatif_of_option(c); /* the profile's ranges (platforms/whatif.c) */
  if (wa >= 0) {
    g_autofree char *field = g_strconcat("--", whatif_option(wa), NULL);
    return whatif_parse(wa, field, arg, &o->whatif.v[wa], err);
  }
  switch (c) {
  case O_MODEL: o->model_name = arg; o->model_set = TRUE; return TRUE;
  case O_MODEL_FILE: o->model_file = arg; return TRUE;
  case O_EXPORT: o->export_target = arg; return TRUE;
  case O_VOCAB: return parse_int_in("vocab", arg, 1, MODEL_MAX_VOCAB, &o->vocab, err); /* a model file's limit */
  case O_GPUS: return parse_int_in("gpus", arg, 1, LAYOUT_MAX_GPUS, &l->gpus, err);
  case O_TP: /* which of these a model and a node allow, layout_validate and sim_request_prepare say */
    return parse_int_in("tp", arg, 1, LAYOUT_MAX_GPUS, &l->tp, err);
  case O_PP: return cli_parse_positive_int("pp", arg, &l->pp, err);
  case O_CP: return parse_int_in("cp", arg, 1, LAYOUT_MAX_GPUS, &l->cp, err); /* which divide the GPUs: layout_validate */
  case O_SP: return parse_bool("sp", arg, &l->sp, err);
  case O_MB: return cli_parse_positive_int("micro-batch", arg, &l->micro_batch, err);
  case O_GB: o->global_batch_set = TRUE; return cli_parse_positive_int("global-batch", arg, &l->global_batch, err);
  case O_SEQ: return cli_parse_positive_int("seq-len", arg, &l->seq_len, err);
  case O_CKPT: return layout_parse_ckpt(arg, &l->ckpt, err);
  case O_ATTN: return layout_parse_attn(arg, &l->attn, err);
  case O_NORMK: return layout_parse_norm_kernel(arg, &l->norm_kernel, err);
  case O_NO_ZERO1: l->zero = 0; return TRUE; /* the older name of --zero 0 */
  case O_ZERO: return parse_int_in("zero", arg, 0, LAYOUT_MAX_ZERO, &l->zero, err);
  case O_PRECISION: { /* which GPUs take FP8: sim_request_prepare (the profile's peak_fp8_flops) */
    precision pr;
    if (!precision_parse("precision", arg, &pr, err)) return FALSE;
    l->precision = pr;
    return TRUE;
  }
  case O_OGR: l->overlap_grad_reduce = TRUE; return TRUE;
  case O_OPG: l->overlap_param_gather = TRUE; return TRUE;
  case O_PARTITION: o->partition_set = TRUE; return partition_parse_method(arg, &o->rq.gen.partition, err);
  case O_SCHEDULE: return sched_parse(arg, &l->schedule, err);
  case O_VSTAGES: return parse_int_in("virtual-stages", arg, 1, 1024, &l->virtual_stages, err);
  case O_PROFILE: o->profile_name = arg; return TRUE;
  case O_STACK: o->stack_name = arg; o->stack_set = TRUE; return TRUE;
  case O_PLATFORM_FILE: o->rq.replay.platform_file = arg; return TRUE;

  case O_NO_SYM: o->rq.gen.symmetry = FALSE; return TRUE;
  case O_FORMAT: {
    gboolean ranked = (o->command_bit & RANKED) != 0;
    if (strcmp(arg, "text") && strcmp(arg, "json") && !(ranked && !strcmp(arg, "csv")))
      return bad(err, "format", arg, ranked ? "text, csv, json" : "text, json");
    o->format = arg;
    return TRUE;
  }
  case O_FIDELITY: return pool_parse_fidelity(arg, &o->fidelity, err);
  case O_TOP: return cli_parse_positive_int("top", arg, &o->top, err);
  case O_SHOW_INVALID: o->show_invalid = TRUE; return TRUE;
  case O_PLOT: o->plot = arg; return TRUE;
  case O_SHARD: return parse_shard(o, arg, err);
  case O_TRUST_OUT: o->trust_out = arg; return TRUE;
  case 'o': o->output = arg; return TRUE;
  case 'j':
    return parse_int_in("jobs", arg, 1, 1024, &o->jobs, err);
  case O_PAJE: o->paje = arg; return TRUE;
  case O_PAJE_SIMGRID: o->rq.replay.simgrid_paje_path = arg; return TRUE;
  case O_NCCL_ALGO: { /* a what-if: the collective algorithm forced (sim/collective.h) */
    int a = coll_algo_parse(arg);
    if (a < 0 || a > COLL_ALGO_HIER) return bad(err, "nccl-algo", arg, COLL_ALGO_ALLOWED);
    o->rq.replay.nccl_algo = a;
    return TRUE;
  }
  case O_CHROME: o->chrome_trace = arg; return TRUE;
  case O_SVG: o->timeline_svg = arg; return TRUE;
  case O_SVG_WINDOW: { /* START < the step's end is checked once the step is simulated */
    double start_s, end_s;
    o->svg_window = arg;
    return trace_svg_window_parse(arg, -1, &start_s, &end_s, err);
  }
  case O_CSV: o->timeline_csv = arg; return TRUE;
  case O_LOG: {
    static const char *const levels[] = {"trace", "debug", "verbose", "info", "warning", "error", "critical"};
    for (size_t i = 0; i < G_N_ELEMENTS(levels); i++)
      if (!strcmp(arg, levels[i])) {
        o->rq.replay.log_threshold = arg;
        return TRUE;
      }
    return bad(err, "log", arg, "trace, debug, verbose, info, warning, error, critical");
  }
  case O_MEM_SVG: o->memory_svg = arg; return TRUE;
  case O_TRACE_RANKS: o->trace_ranks = arg; return TRUE;
  case O_PAJE_LINKS: o->paje_links = TRUE; return TRUE;
  case O_MAX_EVALS: return parse_int_in("max-evals", arg, 1, 1000000, &o->max_evals, err); /* >= 11: cmd_calibrate */
  case O_FULL: o->calib_full = TRUE; return TRUE;
  case O_CHECK_FAST: o->calib_check_fast = TRUE; return TRUE;
  case O_PRIOR: {
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    gboolean underflow = errno == ERANGE && fabs(v) <= 1.0; /* a tiny positive weight: take strtod's 0 or denormal */
    if ((errno && !underflow) || end == arg || *end || !isfinite(v) || v < 0) return bad(err, "prior-weight", arg, "a number >= 0");
    o->prior_weight = v + 0.0; /* -0 is 0 */
    o->prior_weight_set = TRUE;
    return TRUE;
  }
  case O_FIT:
    if (strcmp(arg, "all") && strcmp(arg, "timing") && strcmp(arg, "memory") && strcmp(arg, "fp8"))
      return bad(err, "fit", arg, "all, timing, memory, fp8");
    o->calib_fit = arg;
    return TRUE;
  default: return FALSE;
  }
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
      if (strncmp(l->name, name, len) || (pass == 0 && !(applies_to(l->val) & command))) continue;
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
    int d = edit_distance(name, l->name), applies = (applies_to(l->val) & command) != 0;
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
    if ((!strcmp(a, "-o") || !strcmp(a, "-j")) && i + 1 < argc) i++; /* their value, whatever it is */
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
          (applies_to(l->val) & command)) {
        gboolean on = FALSE;
        parse_bool(l->name, argv[i + 1], &on, NULL);
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
  struct option longs[G_N_ELEMENTS(LONG)];
  memcpy(longs, LONG, sizeof LONG);
  for (struct option *l = longs; l->name; l++) /* sweep: --sp takes a list (--sp 0,1) */
    if (l->val == O_SP && command == CMD_SWEEP) l->has_arg = required_argument;
  /* --sp 1 as sweep's --sp 0,1 writes it: the value joined to the flag (--sp=1) before getopt reads argv */
  static GPtrArray *kept; /* getopt's optarg points into argv, and the options keep it: every copy lives on */
  if (!kept) kept = g_ptr_array_new();
  GPtrArray *joined = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(kept, joined);
  for (int i = 0; i < argc; i++) {
    gboolean sp = command != CMD_SWEEP && !strcmp(argv[i], "--sp") && i + 1 < argc && is_bool_word(argv[i + 1]);
    g_ptr_array_add(joined, sp ? g_strconcat(argv[i], "=", argv[i + 1], NULL) : g_strdup(argv[i]));
    i += sp;
  }
  argc = (int)joined->len;
  g_ptr_array_add(joined, NULL);
  argv = (char **)joined->pdata;
  if (!check_long_names(longs, command_name, command, argc, argv, err)) return FALSE;
  while ((c = getopt_long(argc, argv, ":o:j:", longs, &idx)) != -1) { /* ':' first: a missing value is ':' */
    const char *what = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    if (c == ':') {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: needs a value (see layoutsim help %s)", what,
                  command_name);
      return FALSE;
    }
    if (c == '?') { /* a long option's name was checked above: an unknown short one, perhaps inside "-qjx" */
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "-%c: unknown option (allowed: the options of layoutsim help %s)",
                  optopt, command_name);
      return FALSE;
    }
    if (!(applies_to(c) & command)) {
      const char *name = idx >= 0 && LONG[idx].val == c ? LONG[idx].name : c == 'o' ? "output" : "jobs";
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: does not apply to %s (see layoutsim help %s)", name,
                  command_name, command_name);
      return FALSE;
    }
    idx = -1;
    if (!one_option(o, c, optarg, err)) return FALSE;
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

gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err)
{
  sim_request *rq = &o->rq;
  /* no --stack: the profile's default (docs/profile.md); predict, validate, calibrate keep the study's for their rows */
  gboolean by_profile = !o->stack_set && (o->command_bit & (CMD_SIMULATE | CMD_GRAPH | CMD_REPLAY));
  if (!profile_load_with_stack(o->profile_name, by_profile ? NULL : o->stack_name, &rq->prof, err)) return FALSE;
  if (by_profile) o->stack_name = g_intern_string(rq->prof.stack.name);
  if (!o->partition_set) rq->gen.partition = rq->prof.stack.partition;
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
static GPtrArray *list_items(const char *opt, const char *s, gboolean ranges, GError **err)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  for (char **p = parts; *p; p++) {
    const char *dash = ranges ? strchr(*p, '-') : NULL;
    int lo, hi;
    if (dash && dash != *p) {
      g_autofree char *a = g_strndup(*p, (gsize)(dash - *p));
      if (!cli_parse_positive_int(opt, a, &lo, err) || !cli_parse_positive_int(opt, dash + 1, &hi, err) || hi < lo ||
          hi - lo >= LIST_MAX_VALUES) {
        g_clear_error(err);
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--%s: invalid range '%s' (allowed: LO-HI, 1 <= LO <= HI, "
                    "at most %d values)", opt, *p, LIST_MAX_VALUES);
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

/* One element of the list of LISTS[slot] as an int (enums as ints) or a double. */
static gboolean list_element(int slot, const char *s, int *iv, double *dv, GError **err)
{
  gboolean b;
  layout_ckpt ck;
  layout_attn at;
  int wa = whatif_of_option(LISTS[slot]);
  if (wa >= 0) {
    g_autofree char *field = g_strconcat("--", whatif_option(wa), NULL);
    return whatif_parse(wa, field, s, dv, err);
  }
  switch (LISTS[slot]) {
  case O_TP: return parse_int_in("tp", s, 1, 1024, iv, err); /* which of them a model allows: counted as invalid */
  case O_PP: return cli_parse_positive_int("pp", s, iv, err);
  case O_SCHEDULE: return sched_parse(s, iv, err);
  case O_VSTAGES: return parse_int_in("virtual-stages", s, 1, 1024, iv, err);
  case O_CP: return parse_int_in("cp", s, 1, LAYOUT_MAX_GPUS, iv, err);
  case O_MB: return cli_parse_positive_int("micro-batch", s, iv, err);
  case O_GPUS: return parse_int_in("gpus", s, 1, LAYOUT_MAX_GPUS, iv, err);
  case O_SP:
    if (!parse_bool("sp", s, &b, err)) return FALSE;
    *iv = b;
    return TRUE;
  case O_CKPT:
    if (!layout_parse_ckpt(s, &ck, err)) return FALSE;
    *iv = ck;
    return TRUE;
  case O_ATTN:
    if (!layout_parse_attn(s, &at, err)) return FALSE;
    *iv = at;
    return TRUE;
  case O_PRECISION: {
    precision pr;
    if (!precision_parse("precision", s, &pr, err)) return FALSE;
    *iv = pr;
    return TRUE;
  }
  default: return FALSE; /* every list option is one of the above or a what-if */
  }
}

static const char *slot_option(int slot)
{
  for (const struct option *l = LONG; l->name; l++)
    if (l->val == LISTS[slot]) return l->name;
  return "?";
}

void cli_sweep_spec_clear(sweep_spec *s)
{
  for (int a = 0; a < AX_N; a++)
    if (s->layout[a]) g_array_unref(s->layout[a]);
  for (int a = 0; a < WHATIF_N; a++)
    if (s->whatif[a]) g_array_unref(s->whatif[a]);
  if (s->gpus) g_array_unref(s->gpus);
  if (s->profiles) g_ptr_array_unref(s->profiles);
  if (s->stacks) g_ptr_array_unref(s->stacks);
  memset(s, 0, sizeof *s);
}

gboolean cli_sweep_spec(cli_opts *o, sweep_spec *s, GError **err)
{
  memset(s, 0, sizeof *s);
  if (!resolve_model(o, &s->m, err)) return FALSE;
  s->trusts = o->trusts;
  s->model_file = o->model_file;
  s->seq_len = o->rq.l.seq_len;
  s->global_batch = o->global_batch_set ? o->rq.l.global_batch : 0;
  s->zero = o->rq.l.zero;
  s->overlap_grad_reduce = o->rq.l.overlap_grad_reduce;
  s->overlap_param_gather = o->rq.l.overlap_param_gather;
  s->gen = o->rq.gen;
  s->shard_i = o->shard_i;
  s->shard_n = o->shard_n;
  s->pool = (pool_cfg){.jobs = o->jobs, .fidelity = o->fidelity, .prune_oom = o->fidelity != POOL_FULL,
                       .progress = "sweep"};
  s->profiles = g_ptr_array_new_with_free_func(g_free);
  s->stacks = g_ptr_array_new_with_free_func(g_free);
  s->partition_set = o->partition_set;
  s->gpus = g_array_new(FALSE, FALSE, sizeof(int));
  for (int slot = 0; slot < (int)G_N_ELEMENTS(LISTS); slot++) {
    const char *v = o->lists[slot];
    if (!v) continue;
    int val = LISTS[slot];
    gboolean ints = val == O_TP || val == O_PP || val == O_MB || val == O_GPUS || val == O_NICS || val == O_VSTAGES ||
                    val == O_LEAF || val == O_CP;
    g_autoptr(GPtrArray) items = list_items(slot_option(slot), v, ints, err);
    if (!items) return FALSE;
    if (val == O_PROFILE || val == O_STACK) {
      for (guint i = 0; i < items->len; i++)
        g_ptr_array_add(val == O_PROFILE ? s->profiles : s->stacks, g_strdup(items->pdata[i]));
      continue;
    }
    int wa = whatif_of_option(val);
    gboolean is_whatif = wa >= 0;
    GArray *arr = g_array_new(FALSE, FALSE, is_whatif ? sizeof(double) : sizeof(int));
    for (guint i = 0; i < items->len; i++) {
      int iv = 0;
      double dv = 0;
      if (!list_element(slot, items->pdata[i], &iv, &dv, err)) {
        g_array_unref(arr);
        return FALSE;
      }
      if (is_whatif) g_array_append_val(arr, dv);
      else g_array_append_val(arr, iv);
    }
    if (is_whatif) s->whatif[wa] = arr;
    else if (val == O_SCHEDULE) s->layout[AX_SCHED] = arr;
    else if (val == O_VSTAGES) s->layout[AX_VS] = arr;
    else if (val == O_CP) s->layout[AX_CP] = arr;
    else if (val == O_PRECISION) s->layout[AX_PREC] = arr;
    else if (val == O_GPUS) {
      g_array_unref(s->gpus);
      s->gpus = arr;
    } else s->layout[slot] = arr; /* LISTS' first six are the layout axes in sweep_layout_axis order */
  }
  G_STATIC_ASSERT(AX_TP == 0 && AX_PP == 1 && AX_SP == 2 && AX_CKPT == 3 && AX_ATTN == 4 && AX_MB == 5);
  /* single values: --what-ifs and --gpus as simulate takes them */
  for (int a = 0; a < WHATIF_N; a++)
    if (!s->whatif[a] && o->whatif.v[a] != 0) {
      s->whatif[a] = g_array_new(FALSE, FALSE, sizeof(double));
      g_array_append_val(s->whatif[a], o->whatif.v[a]);
    }
  if (s->gpus->len == 0) g_array_append_val(s->gpus, o->rq.l.gpus);
  if (s->profiles->len == 0) g_ptr_array_add(s->profiles, g_strdup(o->profile_name));
  if (s->stacks->len == 0) g_ptr_array_add(s->stacks, o->stack_set ? g_strdup(o->stack_name) : NULL); /* NULL: each
                                                                                  * profile's default_stack */
  return TRUE;
}
