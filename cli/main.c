/* layoutsim -- command-line entry: subcommands simulate, graph, replay,
 * predict, validate, calibrate, sweep, merge, help. Every error from user input ends here as one line
 * on stderr and exit status 2; no output file is left half-written, and a run's outputs are
 * replaced all together or not at all.
 *
 * Owns: dispatch, help texts, output files. May not touch: simulation internals.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/predict.h"
#include "analysis/calibrate.h"
#include "analysis/calibrate_memory.h"
#include "analysis/footprint.h"
#include "analysis/export.h"
#include "analysis/report.h"
#include "traces/chrome.h"
#include "traces/csv_timeline.h"
#include "traces/paje.h"
#include "traces/svg.h"
#include "analysis/sweep.h"
#include "analysis/sweep_plot.h"
#include "analysis/sweep_report.h"
#include "analysis/validate.h"
#include "cli/options.h"
#include "common/lsim_error.h"
#include "common/lsim_input.h"
#include "common/lsim_json.h"
#include "common/lsim_outfile.h"
#include "platforms/profile.h"
#include "workloads/model.h"

#ifndef LSIM_VERSION
#error "LSIM_VERSION: meson passes the project's version"
#endif

static const char *const USAGE =
    "usage: layoutsim COMMAND [OPTIONS]\n"
    "\n"
    "Simulate one training step of a Llama model under a parallelization layout\n"
    "on a modelled GPU cluster (SimGrid; the machine is a hardware profile), and report\n"
    "step time, MFU, pipeline bubble, time breakdown, peak memory and energy.\n"
    "\n"
    "commands:\n"
    "  simulate [LAYOUT] [OUTPUT]   simulate one layout (default: llama-13b, 2k, 64 GPUs,\n"
    "                               tp1 pp1 mb1, flash2+rmsnorm)\n"
    "  graph [LAYOUT] -o G.json     write the task graph of a layout (docs/graph-format.md)\n"
    "  replay G.json [OUTPUT]       replay a task graph file\n"
    "  sweep [LAYOUT LISTS] [PLATFORM LISTS] [OUTPUT]\n"
    "                               search the layouts: every combination of the listed values\n"
    "                               (a layout option left out: every value valid for the model\n"
    "                               and cluster), crossed with the listed platform values;\n"
    "                               invalid layouts counted by reason, those that do not fit in\n"
    "                               memory reported but not replayed, the rest ranked by step\n"
    "                               time per platform point with the gap to the best and its\n"
    "                               main cause (docs/sweep.md)\n"
    "  merge SHARD.csv... [OUTPUT]  join the --shard outputs of one sweep into what the whole\n"
    "                               sweep writes\n"
    "  predict IN.csv -o OUT.csv [-j N]\n"
    "                               predict every row of a table of layouts (columns: model,\n"
    "                               seq_len, global_batch, vocab, gpus, checkpointing,\n"
    "                               attention_kernel, micro_batch, tp, pp, sp; optional, per\n"
    "                               row, an empty cell keeping the command's value: partition,\n"
    "                               model_file, profile, stack, ib_gbps, nvlink_gbps,\n"
    "                               nics_per_node, gpu_memory; schedule and virtual_stages,\n"
    "                               empty: 1f1b, 1); a sweep's CSV is such a table. Every\n"
    "                               prediction (here, in simulate and sweep) carries its error\n"
    "                               band, memory headroom and trust flags (docs/trust.md)\n"
    "  validate FILE.csv... [-j N] [--format text|json] [-o ROWS.csv] [--trust-out T.json]\n"
    "                               predict measured runs (the predict columns plus status and\n"
    "                               step_time_s) and report, per (model, seq_len, gpus): OOM-label\n"
    "                               accuracy, step-time MAPE and P90, Spearman, best layout;\n"
    "                               -o writes the per-row comparison (docs/calibration.md);\n"
    "                               --trust-out the trust table of the rows: what they cover and\n"
    "                               the error of each regime (analysis/trust/, docs/trust.md)\n"
    "  calibrate FILE.csv... -o STACK.json [--fit WHAT] [--max-evals N] [-j N] [--full]\n"
    "                               fit the free constants of the --stack (the prior) on the\n"
    "                               --profile to measured runs\n"
    "                               (timing: least squares on log step time, Levenberg-Marquardt\n"
    "                               with finite-difference derivatives, leaving out rows\n"
    "                               whose time_fit is no; memory:\n"
    "                               fragmentation from the ok/oom labels;\n"
    "                               docs/calibration.md) and write the fitted stack\n"
    "  help [COMMAND]               this text, or one command's entry and the options\n"
    "  --version                    the version: layoutsim " LSIM_VERSION "\n"
    "\n"
    "LAYOUT options:\n"
    "  --model NAME            llama-7b, llama-13b (default), llama-30b, llama-65b\n"
    "                          (and llama2-70b, llama3-8b, llama3-70b, llama3-405b, gpt3-175b,\n"
    "                          bloom-176b); aliases in any case: llama3.1-8b, llama3.1-70b,\n"
    "                          llama3.1-405b (= llama3-*), llama-3.1-70b, llama-2-70b, gpt-3-175b...\n"
    "  --model-file FILE       a model JSON file (keys: name, layers, hidden, heads, ffn, vocab);\n"
    "                          optional: kv_heads, norm, mlp, positions, max_positions, bias,\n"
    "                          tied_embeddings, embedding_norm, dropout, qkv_bias,\n"
    "                          attention_window, comment; or a HuggingFace config.json (Llama,\n"
    "                          Mistral, Qwen2: docs/model.md)\n"
    "                          predict, validate, calibrate: the model of every row\n"
    "  --vocab N               override the vocabulary size, 1..16777216 (default: the\n"
    "                          model's, 128000); a multiple of tp\n"
    "  --gpus N                GPUs, 1..16384 (default 64); dp = gpus / (tp * cp * pp)\n"
    "  --tp N                  tensor-parallel degree, 1 2 4 8 (default 1)\n"
    "  --pp N                  pipeline-parallel degree (default 1)\n"
    "  --cp N                  context-parallel degree (default 1): each rank holds seq-len/cp\n"
    "                          tokens, attention is TransformerEngine's ring (seq-len a\n"
    "                          multiple of 2*cp, a flash kernel); docs/model.md\n"
    "  --sp[=0|1]              Megatron sequence parallelism (default off; --sp 1, --sp=1 or\n"
    "                          --sp alone); refused at tp 1, where it changes nothing\n"
    "  --micro-batch N         sequences per micro-batch (default 1)\n"
    "  --global-batch N        sequences per step (default 4194304 / seq-len: 2048 at 2k); at\n"
    "                          most 8192 micro-batches per step (global-batch / (dp*micro-batch))\n"
    "  --seq-len N             tokens per sequence (default 2048)\n"
    "  --checkpointing MODE    none (default) | every_layer (or full) | selective (the attention core's\n"
    "                          score-sized tensors recomputed; no change with FlashAttention)\n"
    "                          | mlp (the MLP sub-block recomputed, its input kept); a sweep\n"
    "                          takes selective and mlp when listed\n"
    "  --attention-kernel K    torch | fused-softmax | flash1 | flash1-legacy | flash2 |\n"
    "                          flash2+rmsnorm (default)\n"
    "                          (flash2+rmsnorm is flash2 with --norm-kernel fused)\n"
    "  --norm-kernel K         stack (default: fused where the stack fuses norms or with\n"
    "                          flash2+rmsnorm, else torch) | torch (the study's RMSNorm) | fused\n"
    "  --zero N                ZeRO stage over data parallelism: 0 none | 1 optimizer states\n"
    "                          (default, the study's) | 2 and gradients | 3 and parameters,\n"
    "                          gathered per layer with prefetch (FSDP); docs/memory.md\n"
    "  --no-zero1              the same as --zero 0\n"
    "  --precision P           bf16 (default) | fp8 (Transformer Engine's linear layers in FP8,\n"
    "                          delayed scaling) | fp8-cs (current scaling) | mxfp8; attention,\n"
    "                          embedding and head stay bf16; a profile with FP8 tensor cores\n"
    "                          (peak_fp8_flops); a sweep takes a list; docs/precision.md\n"
    "  --overlap-grad-reduce   reduce each gradient bucket during the backward as it completes\n"
    "                          (the last micro-batch's; ZeRO-2/3: every one), overlapped with\n"
    "                          the rest of it; docs/schedules.md\n"
    "  --overlap-param-gather  ZeRO-1/2: the updated parameters' all-gather overlapped with the\n"
    "                          next step's forward, each layer waiting for its own bucket\n"
    "  --partition METHOD      auto (balanced, as the study code's example config, or uniform\n"
    "                          where balanced leaves a stage empty) | balanced | uniform (the\n"
    "                          study's library default) | layers (the layers split evenly:\n"
    "                          Megatron, DeepSpeed's type:transformer); default: the stack's\n"
    "                          (study: auto); docs/model.md\n"
    "  --schedule S            pipeline schedule: 1f1b (default: the study's, blocking sends) |\n"
    "                          gpipe | interleaved | zb-h1 (backward split into B and W); any case;\n"
    "                          docs/schedules.md\n"
    "  --virtual-stages V      model chunks per stage for --schedule interleaved (V >= 2; layers\n"
    "                          divisible by pp*V, micro-batches per step a multiple of pp)\n"
    "  sweep: --tp, --pp, --micro-batch, --sp, --checkpointing and --attention-kernel take a\n"
    "  comma-separated list (--tp 1,2,4 --sp 0,1), --pp, --micro-batch and --gpus also ranges\n"
    "  (--pp 1-16); left out, every value valid for the model and the cluster; --schedule and\n"
    "  --virtual-stages too (left out: 1f1b; interleaved without --virtual-stages: every V >= 2\n"
    "  dividing layers/pp); --cp too (left out: 1 only)\n"
    "\n"
    "PLATFORM options:\n"
    "  --profile NAME|FILE     hardware profile: the machine's datasheet figures (default\n"
    "                          a100-sxm4-80gb; h100-sxm5-80gb, h200-sxm-141gb, b200, b300,\n"
    "                          gb200-nvl72, gb300-nvl72; docs/profile.md)\n"
    "  --stack NAME|FILE       software stack: the training code's kernel and NCCL efficiencies,\n"
    "                          memory overheads and graph (default: the profile's, study on\n"
    "                          a100-sxm4-80gb, nemo on h100/h200; megatron-deepspeed; docs/stacks.md)\n"
    "  --gpu-memory GIB        memory per GPU for the OOM verdict (default: the profile's)\n"
    "  --ib-gbps X             InfiniBand bandwidth per NIC, Gbit/s (default: the profile's)\n"
    "  --nvlink-gbps X         NVLink bandwidth per GPU per direction, Gbit/s (default: the\n"
    "                          profile's)\n"
    "  --nics-per-node N       InfiniBand NICs per node (default: the profile's)\n"
    "  --fabric NAME           the network above the NICs: fat-tree, rail (NIC k of every node\n"
    "                          on rail leaf k; traffic between rails crosses the spine) or\n"
    "                          rail-pxn (the same, cross-rail data first over NVLink to the GPU\n"
    "                          on the destination's rail, as NCCL's PXN) (default: the\n"
    "                          profile's; fat-tree in the shipped ones; docs/model.md)\n"
    "  --leaf-nodes N          nodes under one leaf group of the fabric, whose traffic to other\n"
    "                          groups shares one uplink; rail: nodes of one stripe of rail leaves\n"
    "                          (default: the profile's; 0 in the shipped ones: one non-blocking\n"
    "                          fabric, or one stripe; docs/model.md)\n"
    "  --oversubscription R    a leaf's NIC bandwidth over its uplink's (default: the\n"
    "                          profile's, 1: non-blocking)\n"
    "  --nccl-algo ALGO        simulate, replay: the collective algorithm, auto (default: NCCL's\n"
    "                          tuner chooses ring, tree or nvls per call), ring, tree, nvls or hier\n"
    "                          where it fits the group, else ring (docs/collectives.md)\n"
    "  --platform-file FILE    simulate, replay: a SimGrid platform XML file of your own instead\n"
    "                          of the built cluster, with a host n<node>_g<gpu> for every rank\n"
    "                          (node = rank / gpus_per_node of the profile); every rank is\n"
    "                          simulated (docs/model.md)\n"
    "  sweep: --profile, --stack, --gpus, --ib-gbps, --nvlink-gbps, --nics-per-node,\n"
    "  --gpu-memory, --fabric, --leaf-nodes and --oversubscription take a comma-separated\n"
    "  list: the sweep covers their cross product\n"
    "\n"
    "OUTPUT options:\n"
    "  --format text|json      summary format (default text); sweep and merge: text|csv|json\n"
    "  --export TARGET         simulate: print the layout as megatron (an argument list), nemo (a\n"
    "                          NeMo 2 recipe override) or torchtitan (TOML) instead of simulating\n"
    "                          it (docs/export.md)\n"
    "  -o, --output FILE       write the summary to FILE (graph: the graph; predict: the table;\n"
    "                          validate: the per-row comparison; calibrate: the fitted stack;\n"
    "                          sweep, merge: the ranking; default: standard output)\n"
    "  --top K                 sweep, merge: the K best layouts of each platform point (default:\n"
    "                          text 10, CSV and JSON all)\n"
    "  --show-invalid          sweep, merge: list every invalid layout with its reason\n"
    "  --plot FILE.svg         sweep, merge: MFU and step time against the one swept platform\n"
    "                          axis, a line per layout among the five best\n"
    "  --paje FILE             Paje trace for pj_dump/pajeng and Vite: a state per GPU per\n"
    "                          event (forward, backward, recompute, tp-comm, pp-wait,\n"
    "                          dp-comm, optimizer, idle) tiling the step, every GPU, none of\n"
    "                          zero length; streamed from the simulated timeline (65B on\n"
    "                          128 GPUs: 230 MB, about 2 s, no extra memory)\n"
    "  --paje-links            also each link direction's bandwidth_used, derived from the\n"
    "                          step's transfers (65B on 128 GPUs: 429 MB; docs/timelines.md)\n"
    "  --paje-simgrid FILE     SimGrid's own Paje trace, recorded during the run: slow, and\n"
    "                          SimGrid holds about 40x the file in memory (default layout:\n"
    "                          93 MB file, 3.9 GB); with --paje-links, SimGrid's own link\n"
    "                          and host variables (inexact where transfers share a link)\n"
    "  --chrome-trace FILE     Chrome trace-event JSON for Perfetto / chrome://tracing: a\n"
    "                          process per node, a track per GPU stream, flow arrows for\n"
    "                          pipeline sends, a memory counter per GPU\n"
    "  --timeline-svg FILE     Gantt chart of the step: GPUs of a stage with the same\n"
    "                          intervals share a row labelled with their ranks (more than\n"
    "                          64 distinct timelines: a row per pipeline stage); runs of\n"
    "                          events narrower than a pixel as stacked shares of each\n"
    "                          pixel column's time\n"
    "  --svg-window START:END  --timeline-svg draws only seconds START to END of the step\n"
    "                          (0 <= START < END, START inside the step; END past the step\n"
    "                          is cut at its end), e.g. --svg-window 1.2:1.5\n"
    "  --memory-svg FILE       memory over the step, a curve per pipeline stage, peak marked\n"
    "  --timeline-csv FILE     one row per interval: rank,stream,kind,name,start_s,end_s,\n"
    "                          micro_batch,layer (idle gaps included)\n"
    "  --trace-ranks R         ranks in --chrome-trace and --timeline-csv: all, dp0 (data-\n"
    "                          parallel replica 0) or a list like 0-7,16 (default: all up\n"
    "                          to 64 GPUs, else dp0); --chrome-ranks is a synonym\n"
    "\n"
    "RUN options:\n"
    "  -j, --jobs N            predict, validate, calibrate, sweep: worker processes, 1..1024\n"
    "                          (default: cores; fewer run at once if the system runs out of\n"
    "                          processes); a progress bar on stderr when it is a terminal\n"
    "  --fidelity F            predict, validate, sweep: auto (default: the exact steady-state\n"
    "                          extrapolation where it holds and saves work, else a full\n"
    "                          replay), full (always replay the whole step) or fast (the\n"
    "                          extrapolation wherever m > pp + 1); each row says which was\n"
    "                          used. But with full, layouts that do not fit in memory are\n"
    "                          not replayed (their peak comes from the memory walk)\n"
    "  --shard I/N             sweep: run the I-th of N deterministic slices (--format csv);\n"
    "                          layoutsim merge joins them (docs/sweep.md: SLURM, GNU parallel)\n"
    "  --no-symmetry           simulate every rank explicitly (slower; same result; automatic\n"
    "                          where GPUs share NICs, docs/model.md)\n"
    "  --log LEVEL             SimGrid log threshold (default critical)\n"
    "\n"
    "CALIBRATE options:\n"
    "  --max-evals N           objective evaluations of the timing fit, at least 11 (default 60)\n"
    "  --full                  full simulations instead of the fast mode\n"
    "  --check-fast            compare fast mode with full simulations on the rows the timing\n"
    "                          fit uses; fit and write nothing\n"
    "  --prior-weight W        weight of the pull of each constant towards its value in the\n"
    "                          starting stack (default 0.001; 0: none; docs/calibration.md)\n"
    "  --fit WHAT              all (default), timing (the step-time constants), memory (the\n"
    "                          fragmentation constant, from the ok/oom labels) or fp8\n"
    "                          (fp8_gemm_efficiency alone, every bf16 constant held;\n"
    "                          docs/precision.md)\n"
    "\n"
    "Input files: regular files only (no FIFO or device), of at most 1 MiB (--model-file,\n"
    "a --profile or --stack file), 64 MiB (a predict, validate or calibrate table) or 1 GiB\n"
    "(a graph).\n"
    "\n"
    "Options: long options by their full names (--global-batch, not --glob); a value after\n"
    "a blank or '=' (--tp 2, --tp=2), a flag's optional value after '=' only (--sp=1).\n"
    "\n"
    "Memory: a run estimated to take more than 8 GiB (its graph, replay and traces, counted\n"
    "before anything is allocated: docs/model.md) is refused, naming the option to change.\n"
    "\n"
    "Exit status: 0 success, 2 bad input (one line on stderr names the field).\n";

/* the limits as USAGE states them */
G_STATIC_ASSERT(MODEL_MAX_VOCAB == 16777216);
G_STATIC_ASSERT(FOOTPRINT_BUDGET_GIB == 8); /* an integer: C's static assertions take no floating point (clang) */
G_STATIC_ASSERT(LSIM_INPUT_MAX_MODEL_BYTES == 1u << 20 && LSIM_INPUT_MAX_PROFILE_BYTES == 1u << 20 &&
                LSIM_INPUT_MAX_TABLE_BYTES == 64u << 20 && LSIM_INPUT_MAX_GRAPH_BYTES == 1u << 30);

/* One line on stderr, "layoutsim: MSG", whatever the values quoted in msg hold. */
static void say(const char *msg)
{
  g_autofree char *line = lsim_one_line(msg);
  fprintf(stderr, "layoutsim: %s\n", line);
}

static int fail(GError *err)
{
  say(err->message);
  g_error_free(err);
  return 2;
}

static int fail_msg(const char *msg)
{
  say(msg);
  return 2;
}

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

/* Whether output `path` would replace a file the command reads: its positional files (graph,
 * tables), --model-file and a --profile or --stack file. predict IN -o IN, filling in its columns in place,
 * is the one exception. */
static gboolean is_an_input(const cli_opts *o, const char *path, gboolean is_output_option)
{
  gboolean predict_in_place = is_output_option && o->positional->len == 1 && o->command_bit == CMD_PREDICT;
  for (guint i = 0; i < o->positional->len; i++)
    if (!predict_in_place && lsim_outfile_same_target(o->positional->pdata[i], path)) return TRUE;
  /* the model and profile files, also where a name stands for a shipped one (every built-in model:
   * the rows of a table may name any of them) */
  g_auto(GStrv) models = model_builtin_paths();
  g_autofree char *profile = profile_path(o->profile_name);
  g_autofree char *stack = stack_path(o->stack_name);
  g_autoptr(GPtrArray) files = g_ptr_array_new();
  g_ptr_array_add(files, (gpointer)o->model_file);
  g_ptr_array_add(files, profile);
  g_ptr_array_add(files, stack);
  g_ptr_array_add(files, (gpointer)o->rq.replay.platform_file);
  for (char **m = models; *m; m++) g_ptr_array_add(files, *m);
  for (guint i = 0; i < files->len; i++) {
    const char *f = files->pdata[i];
    if (f && g_file_test(f, G_FILE_TEST_EXISTS) && lsim_outfile_same_target(f, path)) return TRUE;
  }
  return FALSE;
}

/* Every output file must be writable, named once and not an input, before anything is simulated,
 * so that a bad path fails fast and no file is left behind or silently overwritten. */
static gboolean outputs_writable(const cli_opts *o, GError **err)
{
  const char *paths[] = {o->output, o->chrome_trace, o->timeline_svg, o->memory_svg, o->timeline_csv, o->paje,
                         o->rq.replay.simgrid_paje_path, o->trust_out};
  static const char *const names[] = {"-o", "--chrome-trace", "--timeline-svg", "--memory-svg", "--timeline-csv",
                                      "--paje", "--paje-simgrid", "--trust-out"};
  G_STATIC_ASSERT(G_N_ELEMENTS(names) == G_N_ELEMENTS(paths));
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    if (!paths[i]) continue;
    for (size_t k = 0; k < i; k++) {
      if (paths[k] && lsim_outfile_same_target(paths[k], paths[i])) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: named for two outputs (allowed: one file per output)",
                    paths[i]);
        return FALSE;
      }
    }
    if (is_an_input(o, paths[i], i == 0)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is one of this command's input files or a shipped "
                  "model file (allowed: a different file)", names[i], paths[i]);
      return FALSE;
    }
    if (!lsim_outfile_check(paths[i], err)) return FALSE;
  }
  return TRUE;
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

/* A FILE of `set` for `path`, or NULL when the option was not given; FALSE when it cannot be opened. */
static gboolean open_output(lsim_outset *set, const char *path, FILE **f, GError **err)
{
  *f = NULL;
  return !path || (*f = lsim_outset_open(set, path, err)) != NULL;
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
                open_output(set, o->output, &summary, &err) && open_output(set, o->chrome_trace, &chrome, &err) &&
                open_output(set, o->timeline_csv, &csv, &err) && open_output(set, o->timeline_svg, &svg, &err) &&
                open_output(set, o->memory_svg, &mem_svg, &err) && open_output(set, o->paje, &paje, &err);
  const gpu_profile *pr = &o->rq.prof;
  g_autofree char *whatifs = whatif_describe(pr, o->rq.capacity_gib);
  g_autofree char *platform = g_strdup_printf("%s, stack %s, %s", pr->name, pr->stack.name, whatifs);
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
    return fail(err);
  }
  if (text && (fwrite(text, 1, text_len, stdout) != text_len || fflush(stdout) != 0)) {
    lsim_outset_abort(set);
    return 2;
  }
  return lsim_outset_publish(set, &err) ? 0 : fail(err);
}

static int no_positional(const cli_opts *o, const char *cmd)
{
  if (o->positional->len == 0) return 0;
  g_autofree char *arg = lsim_one_line(o->positional->pdata[0]);
  fprintf(stderr, "layoutsim %s: unexpected argument '%s' (see layoutsim help)\n", cmd, arg);
  return 2;
}

/* simulate --export TARGET: the layout, checked as a simulation checks it, as TARGET's configuration (analysis/export.h),
 * on standard output or -o; nothing is simulated. */
static int cmd_export(cli_opts *o)
{
  GError *err = NULL;
  export_target t;
  if (!export_parse_target(o->export_target, &t, &err) || !sim_request_prepare(&o->rq, &err)) return fail(err);
  g_autoptr(GString) s = g_string_new(NULL);
  export_layout(&o->rq, t, s);
  if (!o->output) {
    fputs(s->str, stdout);
    return 0;
  }
  if (!outputs_writable(o, &err) || !g_file_set_contents(o->output, s->str, (gssize)s->len, &err)) return fail(err);
  return 0;
}

static int cmd_simulate(cli_opts *o)
{
  GError *err = NULL;
  if (no_positional(o, "simulate")) return 2;
  if (!cli_resolve(o, TRUE, &err)) return fail(err);
  if (o->export_target) return cmd_export(o);
  if (!tl_ranks_spec_check(o->trace_ranks, o->rq.l.gpus, &err) || !outputs_writable(o, &err)) return fail(err);
  lsim_outset set;
  lsim_outset_init(&set);
  sim_outcome out = {0};
  if (!hold_simgrid_trace(o, &set, &err) || !sim_run_layout(&o->rq, &out, &err)) {
    lsim_outset_abort(&set);
    sim_outcome_clear(&out);
    return fail(err);
  }
  int rc = write_outputs(o, &out, &o->rq, &set);
  sim_outcome_clear(&out);
  return rc;
}

static int cmd_graph(cli_opts *o)
{
  GError *err = NULL;
  if (no_positional(o, "graph")) return 2;
  if (!o->output) return fail_msg("graph: --output FILE is required (where to write the graph)");
  if (!cli_resolve(o, TRUE, &err) || !outputs_writable(o, &err)) return fail(err);
  if (!sim_request_prepare(&o->rq, &err) || !sim_request_fits(&o->rq, FALSE, &err)) return fail(err);
  g_autoptr(graph) g = gen_graph(&o->rq.m, &o->rq.l, &o->rq.gen, &err);
  if (!g || !graph_save(g, o->output, &err)) return fail(err);
  return 0;
}

static int cmd_replay(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len != 1) return fail_msg("replay: expects exactly one graph file (layoutsim replay G.json)");
  if (!cli_resolve(o, FALSE, &err)) return fail(err);
  graph *g = graph_load_within(o->positional->pdata[0], FOOTPRINT_BUDGET_BYTES, &err);
  if (!g) return fail(err);
  if (!tl_ranks_spec_check(o->trace_ranks, g->world_size, &err) || !outputs_writable(o, &err)) {
    graph_free(g);
    return fail(err);
  }
  lsim_outset set;
  lsim_outset_init(&set);
  sim_outcome out = {0};
  if (!hold_simgrid_trace(o, &set, &err) ||
      !sim_run_graph(g, &o->rq.prof, o->rq.capacity_gib, &o->rq.replay, &out, &err)) {
    lsim_outset_abort(&set);
    graph_free(g);
    return fail(err);
  }
  int rc = write_outputs(o, &out, NULL, &set);
  sim_outcome_clear(&out);
  return rc;
}

/* What predict, validate and calibrate simulate each row with: the resolved profile, memory and options. */
static predict_cfg predict_cfg_of(const cli_opts *o, const char *progress)
{
  predict_cfg cfg = {.prof = o->rq.prof, .profile_arg = o->profile_name, .stack_arg = o->stack_name,
                     .partition_set = o->partition_set, .trusts = o->trusts, .whatif = o->whatif, .capacity_gib = o->rq.capacity_gib, .gen = o->rq.gen,
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

static int cmd_predict(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len != 1) return fail_msg("predict: expects exactly one input table (layoutsim predict IN.csv -o OUT.csv)");
  if (!o->output) return fail_msg("predict: --output FILE is required (where to write the table)");
  if (!cli_resolve(o, FALSE, &err) || !outputs_writable(o, &err)) return fail(err);
  predict_cfg cfg = predict_cfg_of(o, "predict");
  model mf;
  if (!table_model_file(o, &cfg, &mf, &err) || !predict_file(o->positional->pdata[0], o->output, &cfg, &err))
    return fail(err);
  return 0;
}

static int cmd_validate(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return fail_msg("validate: expects one or more measured tables (layoutsim validate FILE.csv...)");
  if (!cli_resolve(o, FALSE, &err) || !outputs_writable(o, &err)) return fail(err);
  predict_cfg cfg = predict_cfg_of(o, "validate");
  model mf;
  if (!table_model_file(o, &cfg, &mf, &err)) return fail(err);
  /* --trust-out: the thresholds and margins a table keeps come from the stack's own table, else the
   * default stack's, and the rows of a stack without a table are flagged by it */
  trust_table prior;
  if (o->trust_out) {
    const trust_table *p = o->trust;
    if (!p && !trust_lookup(o->trusts, STACK_DEFAULT, &p, &err)) return fail(err);
    if (!p)
      return fail_msg("validate: --trust-out: no trust table of the stack '" STACK_DEFAULT "' to take the margins "
                      "from (allowed: LAYOUTSIM_DATA set to the layoutsim source tree)");
    prior = *p;
    g_strlcpy(prior.name, o->rq.prof.stack.name, sizeof prior.name);
    cfg.trust_fallback = &prior;
  }
  g_autoptr(GArray) rows =
      val_predict_files((const char *const *)o->positional->pdata, (int)o->positional->len, &cfg, &err);
  if (!rows) return fail(err);
  const val_row *rv = (const val_row *)rows->data;
  guint usable = 0; /* rows that could not be predicted are left out of every statistic */
  for (guint i = 0; i < rows->len; i++) {
    if (rv[i].invalid[0]) {
      g_autofree char *msg = g_strdup_printf("validate: %s (row left out)", rv[i].invalid);
      say(msg);
    }
    else usable += rv[i].meas != MEAS_OTHER;
  }
  if (usable == 0)
    return fail_msg("validate: no row could be compared (allowed: tables with at least one valid row measured ok or "
                    "oom; the messages above say why a row was left out, and rows measured error or unavailable "
                    "carry neither a time nor a memory label)");
  g_autoptr(GArray) stats = val_summarize(rv, (int)rows->len);
  /* the per-row table and the report on standard output, both or neither (as write_outputs) */
  lsim_outset set;
  lsim_outset_init(&set);
  FILE *table, *trust_f;
  if (!open_output(&set, o->output, &table, &err) || !open_output(&set, o->trust_out, &trust_f, &err)) {
    lsim_outset_abort(&set);
    return fail(err);
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
      return fail(err);
    }
    trust_put(&tt, trust_f);
  }
  if (!lsim_outset_close(&set, &err)) return fail(err);
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
    if (strcmp(o->stack_name, o->rq.prof.stack.name)) /* a stack file (or a prior) */
      printf("stack %s (%s)\n", o->rq.prof.stack.name, o->stack_name);
    else
      printf("stack %s\n", o->rq.prof.stack.name);
    const gpu_profile *p = &o->rq.prof; /* what every row was computed with, but where a row sets its own */
    g_autofree char *whatifs = whatif_describe(p, o->rq.capacity_gib);
    printf("platform: %s (a row's own columns override them)\n", whatifs);
    val_print_text(stdout, stats, rv);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    lsim_outset_abort(&set);
    return 2; /* main's last flush says why */
  }
  return lsim_outset_publish(&set, &err) ? 0 : fail(err);
}

static int cmd_calibrate(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return fail_msg("calibrate: expects one or more measured tables (layoutsim calibrate FILE.csv... -o STACK.json)");
  if (!o->output && !o->calib_check_fast)
    return fail_msg("calibrate: --output FILE is required (where to write the fitted stack)");
  if (o->calib_fit && o->calib_check_fast)
    return fail_msg("calibrate: --check-fast compares the timing simulations and fits nothing; it takes no --fit");
  if (o->calib_fit && !strcmp(o->calib_fit, "memory") && (o->max_evals > 0 || o->calib_full || o->prior_weight_set))
    return fail_msg("calibrate: --max-evals, --full and --prior-weight apply to the timing fit, not to --fit memory (its prior weight is fixed: docs/memory.md)");
  if (o->calib_check_fast && (o->output || o->max_evals > 0 || o->calib_full || o->prior_weight_set))
    return fail_msg("calibrate: --check-fast compares fast mode with full simulations and writes no profile; it takes no -o, --max-evals, --full or --prior-weight");
  if (o->max_evals > 0 && o->max_evals < calib_min_evals()) {
    g_autofree char *msg = g_strdup_printf("--max-evals: invalid value '%d' (allowed: an integer >= %d: the start, one "
                                           "evaluation per free constant and one trial step)",
                                           o->max_evals, calib_min_evals());
    return fail_msg(msg);
  }
  if (!cli_resolve(o, FALSE, &err) || !outputs_writable(o, &err)) return fail(err);
  model mf;
  calib_cfg cc = {.pred = predict_cfg_of(o, NULL),
                  .max_evals = o->max_evals > 0 ? o->max_evals : 60, .fast = !o->calib_full, .log = stderr,
                  .prior_weight = o->prior_weight_set ? o->prior_weight : CALIB_PRIOR_WEIGHT};
  cc.pred.no_profile_column = TRUE;
  cc.pred.trusts = NULL; /* the fit reads times and verdicts, not bands: no row assessed at every evaluation */
  cc.pred.pool.prune_oom = FALSE; /* the timing fit uses every row measured ok, predicted to fit or not */
  cc.pred.pool.fidelity = cc.fast ? POOL_AUTO : POOL_FULL;
  if (!table_model_file(o, &cc.pred, &mf, &err)) return fail(err);
  if (o->calib_check_fast) {
    if (!calib_check_fast((const char *const *)o->positional->pdata, (int)o->positional->len, &cc, stdout, &err))
      return fail(err);
    return 0;
  }
  const char *fit = o->calib_fit ? o->calib_fit : "all";
  const char *const *paths = (const char *const *)o->positional->pdata;
  gpu_profile fitted = cc.pred.prof;
  if (!calib_check_tables(paths, (int)o->positional->len, &cc.pred, strcmp(fit, "memory") != 0, &err))
    return fail(err); /* every row, before any fit prints or runs */
  cc.fp8 = !strcmp(fit, "fp8");
  if (strcmp(fit, "timing") && !cc.fp8) {
    calmem_fit mf;
    if (!calmem_run(paths, (int)o->positional->len, &cc.pred, stderr, &mf, &err)) return fail(err);
    fitted.stack.fragmentation = mf.fragmentation;
  }
  if (strcmp(fit, "memory")) {
    cc.pred.prof = fitted;
    if (!calib_run(paths, (int)o->positional->len, &cc, &fitted, &err)) return fail(err);
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
  if (!stack_save(&fitted.stack, o->output, &err)) return fail(err);
  return 0;
}

/* A ranked rendering to -o or standard output, and the --plot picture: both or neither (lsim_outset; the
 * rendering on standard output printed once the picture is whole, and the picture kept only if it
 * could be). */
static int write_ranked(const cli_opts *o, const csv_table *canonical)
{
  GError *err = NULL;
  sweep_view v = {.top = o->top, .show_invalid = o->show_invalid};
  if (!sweep_parse_format(o->format, &v.format, &err)) return fail(err);
  g_autoptr(csv_table) ranked = sweep_rank(canonical);
  g_autoptr(GString) text = g_string_new(NULL);
  sweep_render(ranked, &v, text);
  lsim_outset set;
  lsim_outset_init(&set);
  FILE *plot, *out;
  gboolean ok = open_output(&set, o->plot, &plot, &err) && open_output(&set, o->output, &out, &err) &&
                (!plot || sweep_plot_put(ranked, plot, &err));
  if (ok && out) fwrite(text->str, 1, text->len, out);
  if (!ok || !lsim_outset_close(&set, &err)) {
    lsim_outset_abort(&set);
    return fail(err);
  }
  if (!out && (fwrite(text->str, 1, text->len, stdout) != text->len || fflush(stdout) != 0)) {
    lsim_outset_abort(&set);
    return 2; /* main's last flush says why */
  }
  return lsim_outset_publish(&set, &err) ? 0 : fail(err);
}

/* The outputs of sweep and merge: -o and --plot, checked before any work. */
static gboolean ranked_outputs_writable(const cli_opts *o, GError **err)
{
  const char *paths[] = {o->output, o->plot};
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    if (!paths[i]) continue;
    if (i == 1 && paths[0] && lsim_outfile_same_target(paths[0], paths[1])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: named for two outputs (allowed: one file per output)",
                  paths[1]);
      return FALSE;
    }
    if (is_an_input(o, paths[i], FALSE)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is one of this command's input files or a shipped "
                  "model file (allowed: a different file)", i ? "--plot" : "-o", paths[i]);
      return FALSE;
    }
    if (!lsim_outfile_check(paths[i], err)) return FALSE;
  }
  return TRUE;
}

static int cmd_sweep(cli_opts *o)
{
  GError *err = NULL;
  if (no_positional(o, "sweep")) return 2;
  if (o->shard_n > 1 && strcmp(o->format, "csv"))
    return fail_msg("--shard: a shard's output is the CSV that merge reads (allowed: --format csv with --shard)");
  if (o->shard_n > 1 && o->top > 0)
    return fail_msg("--top: a shard keeps every layout for merge to rank (allowed: --top on layoutsim merge of the shards)");
  if (o->shard_n > 1 && o->plot)
    return fail_msg("--plot: a shard holds part of the sweep (allowed: --plot on layoutsim merge of the shards)");
  sweep_spec spec;
  if (!cli_sweep_spec(o, &spec, &err) || !ranked_outputs_writable(o, &err)) {
    cli_sweep_spec_clear(&spec);
    return fail(err);
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
      return fail_msg(msg);
    }
  }
  g_autoptr(csv_table) t = sweep_run(&spec, &err);
  cli_sweep_spec_clear(&spec);
  if (!t) return fail(err);
  return write_ranked(o, t);
}

static int cmd_merge(cli_opts *o)
{
  GError *err = NULL;
  if (o->positional->len < 1) return fail_msg("merge: expects the shard tables of one sweep (layoutsim merge S1.csv S2.csv ...)");
  if (!ranked_outputs_writable(o, &err)) return fail(err);
  g_autoptr(csv_table) t = sweep_merge((const char *const *)o->positional->pdata, (int)o->positional->len, &err);
  if (!t) return fail(err);
  return write_ranked(o, t);
}

typedef struct command {
  const char *name;
  unsigned bit; /* CMD_*: which options apply (cli/options.c) */
  int (*run)(cli_opts *);
} command;

static const command COMMANDS[] = {
    {"simulate", CMD_SIMULATE, cmd_simulate}, {"graph", CMD_GRAPH, cmd_graph},
    {"replay", CMD_REPLAY, cmd_replay},       {"predict", CMD_PREDICT, cmd_predict},
    {"validate", CMD_VALIDATE, cmd_validate}, {"calibrate", CMD_CALIBRATE, cmd_calibrate},
    {"sweep", CMD_SWEEP, cmd_sweep},          {"merge", CMD_MERGE, cmd_merge}};

/* "simulate, graph, ..., help": the allowed values of COMMAND, for error messages. Caller frees. */
static char *command_names(void)
{
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++) g_string_append_printf(names, "%s, ", COMMANDS[i].name);
  g_string_append(names, "help");
  return g_string_free(names, FALSE);
}

/* The long name of the option an option line of USAGE describes ("  -o, --output FILE" -> "output"). */
static char *option_name(const char *line)
{
  const char *s = strstr(line, "--");
  if (!s) return g_strdup("");
  s += 2;
  size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
  return g_strndup(s, n);
}

/* One blank-line-separated section of USAGE's options part: an "... options:" section keeps only
 * the options (with their continuation lines) that apply to `command`, and is left out when none
 * does; any other section (the exit status) is printed as it is. */
static void print_section(char **lines, unsigned command)
{
  gboolean is_options = g_str_has_suffix(lines[0], "options:"), keep = TRUE;
  g_autoptr(GString) out = g_string_new(NULL);
  int kept = 0;
  for (char **l = lines + 1; *l; l++) {
    if (is_options && !strncmp(*l, "  -", 3)) {
      g_autofree char *name = option_name(*l);
      keep = cli_option_applies(name, command);
      kept += keep;
    }
    if (keep) g_string_append_printf(out, "%s\n", *l);
  }
  if (!is_options || kept) printf("\n%s\n%s", lines[0], out->str);
}

/* The options part of USAGE, filtered for one command. */
static void print_options_for(const char *options, unsigned command)
{
  g_auto(GStrv) sections = g_strsplit(options, "\n\n", -1);
  for (char **sec = sections; *sec; sec++) {
    g_auto(GStrv) lines = g_strsplit(g_strstrip(*sec), "\n", -1);
    if (lines[0] && *lines[0]) print_section(lines, command);
  }
}

/* help for one command: the usage line, the command's entry of the command list, the options that
 * apply to it. */
static int help_command(const char *name)
{
  unsigned bit = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
    if (!strcmp(name, COMMANDS[i].name)) bit = COMMANDS[i].bit;
  if (!bit && strcmp(name, "help")) {
    g_autofree char *allowed = command_names();
    g_autofree char *msg = g_strdup_printf("help: unknown command '%s' (allowed: %s)", name, allowed);
    return fail_msg(msg);
  }
  g_autofree char *key = g_strdup_printf("\n  %s ", name);
  const char *entry = strstr(USAGE, key), *options = strstr(USAGE, "\nLAYOUT options:");
  fwrite(USAGE, 1, (size_t)(strchr(USAGE, '\n') - USAGE + 1), stdout); /* the usage line */
  if (entry) {
    const char *end = entry + 1;
    do end = strchr(end, '\n') + 1; /* the entry's lines: until the next one not indented past the name column */
    while (!strncmp(end, "                               ", 31));
    fputc('\n', stdout);
    fwrite(entry + 1, 1, (size_t)(end - entry - 1), stdout);
  }
  if (bit) print_options_for(options, bit);
  else fputs(options, stdout); /* help help: every option */
  return 0;
}

/* A report that could not be written (a full disk, a closed pipe) is a failure, not a success. */
static int stdout_flushed(int rc)
{
  if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
  fprintf(stderr, "layoutsim: cannot write standard output (%s)\n", g_strerror(errno));
  return rc ? rc : 2;
}

int main(int argc, char **argv)
{
  if (argc >= 3 && !strcmp(argv[1], "help")) return stdout_flushed(help_command(argv[2]));
  if (argc < 2) { /* no command is bad input */
    g_autofree char *allowed = command_names();
    fprintf(stderr, "layoutsim: no command (allowed: %s; layoutsim help explains them)\n", allowed);
    return 2;
  }
  if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(USAGE, stdout);
    return stdout_flushed(0);
  }
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--version")) {
      printf("layoutsim %s\n", LSIM_VERSION);
      return stdout_flushed(0);
    }
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return stdout_flushed(help_command(argv[1]));
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++) {
    if (strcmp(argv[1], COMMANDS[i].name)) continue;
    cli_opts o;
    cli_opts_init(&o);
    GError *err = NULL;
    int rc = cli_parse(&o, COMMANDS[i].name, COMMANDS[i].bit, argc - 1, argv + 1, &err) ? COMMANDS[i].run(&o) : fail(err);
    cli_opts_clear(&o);
    return stdout_flushed(rc);
  }
  g_autofree char *allowed = command_names();
  g_autofree char *msg = g_strdup_printf("unknown command '%s' (allowed: %s)", argv[1], allowed);
  return fail_msg(msg);
}
