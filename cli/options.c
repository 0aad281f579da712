/* options -- see options.h. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsim_error.h"

enum {
  O_MODEL = 1000, O_MODEL_FILE, O_VOCAB, O_GPUS, O_TP, O_PP, O_SP, O_MB, O_GB, O_SEQ, O_CKPT, O_ATTN, O_NO_ZERO1,
  O_PARTITION, O_PROFILE, O_GPU_MEM, O_IB, O_NVLINK, O_NICS, O_NO_SYM, O_FORMAT, O_PAJE, O_CHROME, O_SVG, O_CSV, O_LOG,
  O_MEM_SVG, O_TRACE_RANKS, O_PAJE_LINKS, O_PAJE_SIMGRID, O_MAX_EVALS, O_FULL, O_CHECK_FAST, O_FIT, O_PRIOR
};

static const struct option LONG[] = {
    {"model", required_argument, NULL, O_MODEL},
    {"model-file", required_argument, NULL, O_MODEL_FILE},
    {"vocab", required_argument, NULL, O_VOCAB},
    {"gpus", required_argument, NULL, O_GPUS},
    {"tp", required_argument, NULL, O_TP},
    {"pp", required_argument, NULL, O_PP},
    {"sp", optional_argument, NULL, O_SP},
    {"micro-batch", required_argument, NULL, O_MB},
    {"global-batch", required_argument, NULL, O_GB},
    {"seq-len", required_argument, NULL, O_SEQ},
    {"checkpointing", required_argument, NULL, O_CKPT},
    {"attention-kernel", required_argument, NULL, O_ATTN},
    {"no-zero1", no_argument, NULL, O_NO_ZERO1},
    {"partition", required_argument, NULL, O_PARTITION},
    {"profile", required_argument, NULL, O_PROFILE},
    {"gpu-memory", required_argument, NULL, O_GPU_MEM},
    {"ib-gbps", required_argument, NULL, O_IB},
    {"nvlink-gbps", required_argument, NULL, O_NVLINK},
    {"nics-per-node", required_argument, NULL, O_NICS},
    {"no-symmetry", no_argument, NULL, O_NO_SYM},
    {"format", required_argument, NULL, O_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"jobs", required_argument, NULL, 'j'},
    {"paje", required_argument, NULL, O_PAJE},
    {"chrome-trace", required_argument, NULL, O_CHROME},
    {"timeline-svg", required_argument, NULL, O_SVG},
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
    {NULL, 0, NULL, 0},
};

/* Which commands each option applies to (an option a command would ignore is an error there). */
#define ANY_RUN (CMD_SIMULATE | CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE)
#define TRACES (CMD_SIMULATE | CMD_REPLAY)
static const struct { int val; unsigned commands; } APPLIES[] = {
    {O_MODEL, CMD_SIMULATE | CMD_GRAPH}, {O_MODEL_FILE, CMD_SIMULATE | CMD_GRAPH}, {O_VOCAB, CMD_SIMULATE | CMD_GRAPH},
    {O_GPUS, CMD_SIMULATE | CMD_GRAPH}, {O_TP, CMD_SIMULATE | CMD_GRAPH}, {O_PP, CMD_SIMULATE | CMD_GRAPH},
    {O_SP, CMD_SIMULATE | CMD_GRAPH}, {O_MB, CMD_SIMULATE | CMD_GRAPH}, {O_GB, CMD_SIMULATE | CMD_GRAPH},
    {O_SEQ, CMD_SIMULATE | CMD_GRAPH}, {O_CKPT, CMD_SIMULATE | CMD_GRAPH}, {O_ATTN, CMD_SIMULATE | CMD_GRAPH},
    {O_NO_ZERO1, CMD_SIMULATE | CMD_GRAPH}, {O_PARTITION, ANY_RUN | CMD_GRAPH},
    {O_PROFILE, ANY_RUN | CMD_GRAPH | CMD_REPLAY}, {O_NICS, ANY_RUN | CMD_GRAPH | CMD_REPLAY},
    {O_GPU_MEM, ANY_RUN | CMD_REPLAY}, {O_IB, ANY_RUN | CMD_REPLAY}, {O_NVLINK, ANY_RUN | CMD_REPLAY},
    {O_NO_SYM, ANY_RUN | CMD_GRAPH}, {O_FORMAT, CMD_SIMULATE | CMD_REPLAY | CMD_VALIDATE},
    {'o', CMD_ALL}, {'j', CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE},
    {O_PAJE, TRACES}, {O_PAJE_LINKS, TRACES}, {O_PAJE_SIMGRID, TRACES}, {O_CHROME, TRACES}, {O_SVG, TRACES}, {O_CSV, TRACES},
    {O_MEM_SVG, TRACES}, {O_TRACE_RANKS, TRACES}, {O_LOG, TRACES},
    {O_MAX_EVALS, CMD_CALIBRATE}, {O_FULL, CMD_CALIBRATE}, {O_CHECK_FAST, CMD_CALIBRATE}, {O_FIT, CMD_CALIBRATE},
    {O_PRIOR, CMD_CALIBRATE},
};

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
  o->format = "text";
  o->jobs = (int)g_get_num_processors();
  o->positional = g_ptr_array_new();
}

void cli_opts_clear(cli_opts *o) { g_ptr_array_free(o->positional, TRUE); }

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

/* A number in [lo, hi]: the platform overrides obey the ranges the profile file obeys (platforms/profile.c). */
static gboolean parse_double_in(const char *opt, const char *s, double lo, double hi, double *out, GError **err)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) {
    g_autofree char *allowed = g_strdup_printf("a number from %g to %g", lo, hi);
    return bad(err, opt, s, allowed);
  }
  *out = v;
  return TRUE;
}

static gboolean parse_bool(const char *opt, const char *s, gboolean *out, GError **err)
{
  if (!s || !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "on")) *out = TRUE;
  else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "off")) *out = FALSE;
  else return bad(err, opt, s, "0, 1, true, false, on, off");
  return TRUE;
}

static gboolean one_option(cli_opts *o, int c, const char *arg, GError **err)
{
  layout *l = &o->rq.l;
  switch (c) {
  case O_MODEL: o->model_name = arg; o->model_set = TRUE; return TRUE;
  case O_MODEL_FILE: o->model_file = arg; return TRUE;
  case O_VOCAB: return cli_parse_positive_int("vocab", arg, &o->vocab, err);
  case O_GPUS: return parse_int_in("gpus", arg, 1, LAYOUT_MAX_GPUS, &l->gpus, err);
  case O_TP: /* one 8-GPU node at most; which of these a model allows, layout_validate says */
    if (strcmp(arg, "1") && strcmp(arg, "2") && strcmp(arg, "4") && strcmp(arg, "8"))
      return bad(err, "tp", arg, "1, 2, 4 or 8");
    l->tp = atoi(arg);
    return TRUE;
  case O_PP: return cli_parse_positive_int("pp", arg, &l->pp, err);
  case O_SP: return parse_bool("sp", arg, &l->sp, err);
  case O_MB: return cli_parse_positive_int("micro-batch", arg, &l->micro_batch, err);
  case O_GB: o->global_batch_set = TRUE; return cli_parse_positive_int("global-batch", arg, &l->global_batch, err);
  case O_SEQ: return cli_parse_positive_int("seq-len", arg, &l->seq_len, err);
  case O_CKPT: return layout_parse_ckpt(arg, &l->ckpt, err);
  case O_ATTN: return layout_parse_attn(arg, &l->attn, err);
  case O_NO_ZERO1: l->zero1 = FALSE; return TRUE;
  case O_PARTITION: return partition_parse_method(arg, &o->rq.gen.partition, err);
  case O_PROFILE: o->profile_name = arg; return TRUE;
  /* the profile's ranges: memory 0.1..1e5 GiB, link bandwidths 1e6..1e14 B/s (0.008..8e5 Gbit/s) */
  case O_GPU_MEM: return parse_double_in("gpu-memory", arg, 0.1, 1e5, &o->gpu_memory_gib, err);
  case O_IB: return parse_double_in("ib-gbps", arg, 0.008, 8e5, &o->ib_gbps, err);
  case O_NVLINK: return parse_double_in("nvlink-gbps", arg, 0.008, 8e5, &o->nvlink_gbps, err);
  case O_NICS: return cli_parse_positive_int("nics-per-node", arg, &o->nics_per_node, err);
  case O_NO_SYM: o->rq.gen.symmetry = FALSE; return TRUE;
  case O_FORMAT:
    if (strcmp(arg, "text") && strcmp(arg, "json")) return bad(err, "format", arg, "text, json");
    o->format = arg;
    return TRUE;
  case 'o': o->output = arg; return TRUE;
  case 'j':
    return parse_int_in("jobs", arg, 1, 1024, &o->jobs, err);
  case O_PAJE: o->paje = arg; return TRUE;
  case O_PAJE_SIMGRID: o->rq.replay.simgrid_paje_path = arg; return TRUE;
  case O_CHROME: o->chrome_trace = arg; return TRUE;
  case O_SVG: o->timeline_svg = arg; return TRUE;
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
    if (strcmp(arg, "all") && strcmp(arg, "timing") && strcmp(arg, "memory")) return bad(err, "fit", arg, "all, timing, memory");
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
  if (msg) g_set_error_literal(err, LSIM_ERROR, LSIM_ERROR_INVALID, msg);
  return msg == NULL;
}

gboolean cli_parse(cli_opts *o, const char *command_name, unsigned command, int argc, char **argv, GError **err)
{
  o->command_bit = command;
  optind = 1;
  opterr = 0;
  int c, idx = -1;
  while ((c = getopt_long(argc, argv, ":o:j:", LONG, &idx)) != -1) { /* ':' first: a missing value is ':' */
    const char *what = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    if (c == ':') {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: needs a value (see layoutsim help %s)", what,
                  command_name);
      return FALSE;
    }
    if (c == '?') {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                  "%s: unknown or ambiguous option, or a value given to a flag (allowed: the options of layoutsim help "
                  "%s)", what, command_name);
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
  for (int i = optind; i < argc; i++) g_ptr_array_add(o->positional, argv[i]);
  o->rq.replay.simgrid_paje_links = o->paje_links && o->rq.replay.simgrid_paje_path;
  return check_combinations(o, err);
}

void cli_apply_platform_overrides(const cli_opts *o, gpu_profile *p)
{
  if (o->ib_gbps > 0) p->ib_bytes_per_s = o->ib_gbps * 1e9 / 8;
  if (o->nvlink_gbps > 0) p->nvlink_bytes_per_s = o->nvlink_gbps * 1e9 / 8;
  if (o->nics_per_node > 0) p->nics_per_node = o->nics_per_node;
}

gboolean cli_resolve(cli_opts *o, gboolean needs_model, GError **err)
{
  sim_request *rq = &o->rq;
  if (!profile_load_named(o->profile_name, &rq->prof, err)) return FALSE;
  cli_apply_platform_overrides(o, &rq->prof);
  int node = rq->prof.gpus_per_node;
  if (node % rq->prof.nics_per_node != 0 || rq->prof.nics_per_node > node) {
    g_autoptr(GString) allowed = g_string_new("1");
    for (int d = 2; d <= node; d++)
      if (node % d == 0) g_string_append_printf(allowed, ", %d", d);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "--nics-per-node: %d does not divide the %d GPUs of a node (allowed: %s)", rq->prof.nics_per_node, node,
                allowed->str);
    return FALSE;
  }
  rq->capacity_gib = o->gpu_memory_gib > 0 ? o->gpu_memory_gib : rq->prof.memory_gib;
  if (!needs_model) return TRUE;
  /* the --model-file hint belongs to the command line: a table row cannot name a file */
  if (!o->model_file && !model_is_builtin(o->model_name)) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "model: unknown '%s' (allowed: %s, or --model-file FILE)",
                o->model_name, model_builtin_names());
    return FALSE;
  }
  gboolean ok = o->model_file ? model_load_file(o->model_file, &rq->m, err) : model_load_named(o->model_name, &rq->m, err);
  if (!ok) return FALSE;
  if (o->vocab > 0) rq->m.vocab = o->vocab;
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
