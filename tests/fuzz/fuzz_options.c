/* fuzz_options -- libFuzzer harness of option parsing (cli/options.c cli_parse, its checks of long
 * names and of combinations) and of what a command does with the options before it runs anything:
 * cli_resolve (model, profile, what-ifs, --vocab, the default global batch), layout validation and
 * the memory guard for simulate and graph (sim_request_prepare, sim_request_fits), --trace-ranks,
 * and sweep's lists (cli_sweep_spec).
 *
 * The input is a command line, one argument per line: the first line names the command (an
 * unknown one: the input is ignored), the others are its arguments as the shell would pass them.
 * Owns: that each of these calls keeps the error contract (fuzz_common.h), and that a layout
 * accepted for simulate or graph is consistent (dp * tp * pp = gpus, whole micro-batches). Seeds:
 * tests/fuzz/corpus/options/.
 */
#include <string.h>

#include "cli/commands.h"
#include "fuzz_common.h"
#include "traces/timeline.h"

/* At most this many arguments: getopt's cost grows with them, not the code it reaches. */
#define FUZZ_MAX_ARGS 64

/* What the command does with parsed options before it simulates: FALSE with err when it refuses them. */
static gboolean resolve(cli_opts *o, unsigned bit, GError **err)
{
  if (bit == CMD_SWEEP) {
    sweep_spec s;
    gboolean ok = cli_sweep_spec(o, &s, err);
    cli_sweep_spec_clear(&s);
    return ok;
  }
  if (bit == CMD_MERGE) return TRUE; /* it reads no model or profile */
  gboolean layout = bit == CMD_SIMULATE || bit == CMD_GRAPH;
  if (!cli_resolve(o, layout, err)) return FALSE;
  if (!layout) return TRUE;
  sim_request *rq = &o->rq;
  if (!tl_ranks_spec_check(o->trace_ranks, rq->l.gpus, err) || !sim_request_prepare(rq, err)) return FALSE;
  fuzz_require(rq->l.dp >= 1 && rq->l.dp * rq->l.tp * rq->l.pp == rq->l.gpus &&
               rq->l.grad_accum * rq->l.dp * rq->l.micro_batch == rq->l.global_batch, "an invalid layout was accepted");
  return sim_request_fits(rq, bit == CMD_SIMULATE, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup((const char *)data, size); /* up to a NUL byte: argv's strings end there */
  g_auto(GStrv) lines = g_strsplit(text, "\n", FUZZ_MAX_ARGS + 1);
  const cli_command *c = lines[0] ? cli_command_find(lines[0]) : NULL; /* layoutsim's command table */
  if (!c) return 0;
  int argc = (int)g_strv_length(lines);
  g_autofree char **argv = g_new0(char *, argc + 1); /* getopt_long permutes argv: a copy of the pointers */
  memcpy(argv, lines, argc * sizeof *argv);
  cli_opts o;
  cli_opts_init(&o);
  GError *err = NULL;
  gboolean ok = cli_parse(&o, c->name, c->bit, argc, argv, &err);
  fuzz_check_result(ok, err);
  g_clear_error(&err);
  if (ok) {
    ok = resolve(&o, c->bit, &err);
    fuzz_check_result(ok, err);
    g_clear_error(&err);
  }
  cli_opts_clear(&o);
  return 0;
}
