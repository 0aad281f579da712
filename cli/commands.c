/* commands -- see commands.h. The entries in the order of the help text. */
#include "commands.h"

#include <string.h>

const cli_command CLI_COMMANDS[] = {
    {"simulate", CMD_SIMULATE, "simulate [LAYOUT] [OUTPUT]",
     "simulate one layout (default: llama-13b, 2k, 64 GPUs,\n"
     "tp1 pp1 mb1, flash2+rmsnorm)",
     cli_cmd_simulate},
    {"graph", CMD_GRAPH, "graph [LAYOUT] -o G.json", "write the task graph of a layout (docs/graph-format.md)",
     cli_cmd_graph},
    {"replay", CMD_REPLAY, "replay G.json [OUTPUT]", "replay a task graph file", cli_cmd_replay},
    {"sweep", CMD_SWEEP, "sweep [LAYOUT LISTS] [PLATFORM LISTS] [OUTPUT]",
     "search the layouts: every combination of the listed values\n"
     "(a layout option left out: every value valid for the model\n"
     "and cluster), crossed with the listed platform values;\n"
     "invalid layouts counted by reason, those that do not fit in\n"
     "memory reported but not replayed, the rest ranked by step\n"
     "time per platform point with the gap to the best and its\n"
     "main cause; with --top K (text: 10) replayed in order of a\n"
     "lower bound on the step time, those whose bound exceeds the\n"
     "K-th best not replayed, the top K exact (--exhaustive: all;\n"
     "docs/sweep.md)",
     cli_cmd_sweep},
    {"merge", CMD_MERGE, "merge SHARD.csv... [OUTPUT]",
     "join the --shard outputs of one sweep into what the whole\n"
     "sweep writes",
     cli_cmd_merge},
    {"predict", CMD_PREDICT, "predict IN.csv -o OUT.csv [-j N]",
     "predict every row of a table of layouts (columns: model,\n"
     "seq_len, global_batch, vocab, gpus, checkpointing,\n"
     "attention_kernel, micro_batch, tp, pp, sp; optional, per\n"
     "row, an empty cell keeping the command's value: partition,\n"
     "model_file, profile, stack, stack_set (KEY=VALUE;...: keys\n"
     "of the stack overridden, after --stack-set's), ib_gbps,\n"
     "nvlink_gbps, nics_per_node, gpu_memory; schedule and\n"
     "virtual_stages, empty: 1f1b, 1); a sweep's CSV is such a\n"
     "table. Every prediction (here, in simulate and sweep)\n"
     "carries its error band, memory headroom and trust flags\n"
     "(docs/trust.md)",
     cli_cmd_predict},
    {"validate", CMD_VALIDATE, "validate FILE.csv... [-j N] [--format text|json] [-o ROWS.csv] [--trust-out T.json]",
     "predict measured runs (the predict columns plus status and\n"
     "step_time_s) and report, per (model, seq_len, gpus): OOM-label\n"
     "accuracy, step-time MAPE and P90, Spearman, best layout;\n"
     "-o writes the per-row comparison (docs/calibration.md);\n"
     "--trust-out the trust table of the rows: what they cover and\n"
     "the error of each regime (analysis/trust/, docs/trust.md)",
     cli_cmd_validate},
    {"calibrate", CMD_CALIBRATE, "calibrate FILE.csv... -o STACK.json [--fit WHAT] [--max-evals N] [-j N] [--full]",
     "fit the free constants of the --stack (the prior) on the\n"
     "--profile to measured runs\n"
     "(timing: least squares on log step time, Levenberg-Marquardt\n"
     "with finite-difference derivatives, leaving out rows\n"
     "whose time_fit is no; memory:\n"
     "fragmentation from the ok/oom labels;\n"
     "docs/calibration.md) and write the fitted stack",
     cli_cmd_calibrate},
};
const size_t CLI_N_COMMANDS = G_N_ELEMENTS(CLI_COMMANDS);

const cli_command *cli_command_find(const char *name)
{
  for (size_t i = 0; i < CLI_N_COMMANDS; i++)
    if (!strcmp(name, CLI_COMMANDS[i].name)) return &CLI_COMMANDS[i];
  return NULL;
}

char *cli_command_names(void)
{
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < CLI_N_COMMANDS; i++) g_string_append_printf(names, "%s, ", CLI_COMMANDS[i].name);
  g_string_append(names, "help");
  return g_string_free(names, FALSE);
}
