/* option_table -- see option_table.h. The entries are in the order of the help text, section by
 * section; a setter is written here only for a value none of the generic kinds describes. */
#include "option_table.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/run_cost.h"
#include "cli/options.h"
#include "common/lsim_error.h"
#include "platforms/stack_set.h"
#include "sim/collective.h"
#include "traces/svg.h"
#include "workloads/partition.h"

/* Which commands an option applies to (an option a command would ignore is an error there). */
#define ANY_RUN (CMD_SIMULATE | CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE | CMD_SWEEP)
#define LAYOUT_OPT (CMD_SIMULATE | CMD_GRAPH | CMD_SWEEP)
#define TRACES (CMD_SIMULATE | CMD_REPLAY)
#define RANKED (CMD_SWEEP | CMD_MERGE)

#define F(member) offsetof(cli_opts, member)

/* What a sweep covers where a list option is left out. */
#define EVERY_VALID "every value valid for the model and the cluster"
#define ONE_VALUE "its one value (given or default)"

/* The enumerations as ints (the table stores every enum as an int). */
G_STATIC_ASSERT(sizeof(layout_ckpt) == sizeof(int) && sizeof(layout_attn) == sizeof(int) &&
                sizeof(layout_norm_kernel) == sizeof(int) && sizeof(layout_cp_comm) == sizeof(int) && sizeof(partition_method) == sizeof(int) &&
                sizeof(pool_fidelity) == sizeof(int));
#define AS_INT(fn, type)                                                                                             \
  static gboolean fn##_int(const char *s, int *out, GError **err)                                                   \
  {                                                                                                                  \
    type v;                                                                                                          \
    if (!fn(s, &v, err)) return FALSE;                                                                               \
    *out = (int)v;                                                                                                   \
    return TRUE;                                                                                                     \
  }
AS_INT(partition_parse_method, partition_method)
AS_INT(pool_parse_fidelity, pool_fidelity)

/* The commands --stack-set applies to: those that run one stack the command line resolves (not calibrate, which fits
 * one, nor sweep, whose stacks are a list). */
#define STACK_SET_CMDS (CMD_SIMULATE | CMD_GRAPH | CMD_REPLAY | CMD_PREDICT | CMD_VALIDATE)

/* --stack-set KEY=VALUE: one more key of the stack to override (platforms/stack_set.h). */
static gboolean set_stack_set(cli_opts *o, const char *arg, GError **err)
{
  return stack_setting_parse(o->stack_sets, arg, "--stack-set", err);
}

static gboolean set_format(cli_opts *o, const char *arg, GError **err)
{
  gboolean ranked = (o->command_bit & RANKED) != 0;
  if (strcmp(arg, "text") && strcmp(arg, "json") && !(ranked && !strcmp(arg, "csv")))
    return cli_bad_value(err, "format", arg, ranked ? "text, csv, json" : "text, json");
  o->format = arg;
  return TRUE;
}

/* --shard I/N: 1 <= I <= N. */
static gboolean set_shard(cli_opts *o, const char *arg, GError **err)
{
  int i, n, used = 0;
  if (sscanf(arg, "%d/%d%n", &i, &n, &used) == 2 && !arg[used] && g_ascii_isdigit(*arg) && n >= 1 && n <= 1000000 &&
      i >= 1 && i <= n) {
    o->shard_i = i;
    o->shard_n = n;
    return TRUE;
  }
  return cli_bad_value(err, "shard", arg, "I/N with 1 <= I <= N <= 1000000, e.g. 2/8");
}

static gboolean set_svg_window(cli_opts *o, const char *arg, GError **err)
{
  double start_s, end_s; /* START < the step's end is checked once the step is simulated */
  o->svg_window = arg;
  return trace_svg_window_parse(arg, -1, &start_s, &end_s, err);
}

static gboolean set_log(cli_opts *o, const char *arg, GError **err)
{
  static const char *const levels[] = {"trace", "debug", "verbose", "info", "warning", "error", "critical"};
  for (size_t i = 0; i < G_N_ELEMENTS(levels); i++)
    if (!strcmp(arg, levels[i])) {
      o->rq.replay.log_threshold = arg;
      return TRUE;
    }
  return cli_bad_value(err, "log", arg, "trace, debug, verbose, info, warning, error, critical");
}

/* --max-seconds S: a number of seconds above 0, at most a week. */
static gboolean set_max_seconds(cli_opts *o, const char *arg, GError **err)
{
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !isfinite(v) || v <= 0 || v > 604800)
    return cli_bad_value(err, "max-seconds", arg, "a number of seconds above 0, at most 604800 (a week)");
  o->max_seconds = v;
  return TRUE;
}

static gboolean set_max_memory(cli_opts *o, const char *arg, GError **err)
{
  return run_cost_parse_size(arg, &o->max_memory_bytes, err);
}

static gboolean set_prior_weight(cli_opts *o, const char *arg, GError **err)
{
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  gboolean underflow = errno == ERANGE && fabs(v) <= 1.0; /* a tiny positive weight: take strtod's 0 or denormal */
  if ((errno && !underflow) || end == arg || *end || !isfinite(v) || v < 0)
    return cli_bad_value(err, "prior-weight", arg, "a number >= 0");
  o->prior_weight = v + 0.0; /* -0 is 0 */
  o->prior_weight_set = TRUE;
  return TRUE;
}

static gboolean parse_moe_imbalance(const char *arg, double *out, GError **err)
{
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !isfinite(v) || v < 1 || v > 1024)
    return cli_bad_value(err, "moe-imbalance", arg, "a number from 1 (balanced) to 1024");
  *out = v;
  return TRUE;
}

static gboolean parse_moe_capacity_factor(const char *arg, double *out, GError **err)
{
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !isfinite(v) || !(v > 0) || v > 64)
    return cli_bad_value(err, "moe-capacity-factor", arg, "a number above 0 up to 64");
  *out = v;
  return TRUE;
}

static gboolean set_fit(cli_opts *o, const char *arg, GError **err)
{
  if (strcmp(arg, "all") && strcmp(arg, "timing") && strcmp(arg, "memory") && strcmp(arg, "fp8"))
    return cli_bad_value(err, "fit", arg, "all, timing, memory, fp8");
  o->calib_fit = arg;
  return TRUE;
}

/* --pipeline-layout: Megatron's layout string, checked against the model once it is known (layout.c) */
/* --cuda-graph-scope SCOPE: none, or Megatron-Core's scope names joined by '+' (layout.h layout_cg_scope). */
static gboolean set_cuda_graph_scope(cli_opts *o, const char *arg, GError **err)
{
  return layout_cg_scope_parse(arg, &o->rq.l.cuda_graph_scope, err);
}

static gboolean set_pipeline_layout(cli_opts *o, const char *arg, GError **err)
{
  if (strlen(arg) >= sizeof o->rq.l.pipeline_layout) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--pipeline-layout: a string of %zu characters (allowed: at most "
                "%zu; write repeats as (tt|)*N)", strlen(arg), sizeof o->rq.l.pipeline_layout - 1);
    return FALSE;
  }
  if (!arg[0]) return cli_bad_value(err, "pipeline-layout", arg, "a Megatron layout string such as Et|(tt|)*62,tL");
  g_strlcpy(o->rq.l.pipeline_layout, arg, sizeof o->rq.l.pipeline_layout);
  return TRUE;
}

/* --space default|full: what a sweep's axes left out cover (analysis/sweep.h) */
static gboolean set_space(cli_opts *o, const char *arg, GError **err)
{
  if (!strcmp(arg, "default")) o->space = SWEEP_SPACE_DEFAULT;
  else if (!strcmp(arg, "full")) o->space = SWEEP_SPACE_FULL;
  else return cli_bad_value(err, "space", arg, "default, full");
  return TRUE;
}

/* --nccl-algo: a what-if, the collective algorithm forced (sim/collective.h) */
static gboolean set_nccl_algo(cli_opts *o, const char *arg, GError **err)
{
  int a = coll_algo_parse(arg);
  if (a < 0 || a > COLL_ALGO_HIER) return cli_bad_value(err, "nccl-algo", arg, COLL_ALGO_ALLOWED);
  o->rq.replay.nccl_algo = a;
  return TRUE;
}

const cli_option CLI_OPTIONS[] = {
    /* LAYOUT */
    {.name = "model", .arg = CLI_ARG_REQUIRED, .metavar = "NAME", .commands = LAYOUT_OPT, .value = CLI_V_STRING,
     .field = F(model_name), .given_field = F(model_set), .example = "llama-7b", .section = CLI_SEC_LAYOUT,
     .help = "llama-7b, llama-13b (default), llama-30b, llama-65b\n"
             "(and llama2-70b, llama3-8b, llama3-70b, llama3-405b, gpt3-175b,\n"
             "bloom-176b; mixtral-8x7b, mixtral-8x22b, deepseek-v3,\n"
             "qwen3-30b-a3b, qwen3-235b-a22b, gpt-oss-120b: mixtures of experts,\n"
             "--ep; deepseek-v3 with MLA and MTP: docs/moe.md); aliases in any\n"
             "case: llama3.1-8b, llama3.1-70b,\n"
             "llama3.1-405b (= llama3-*), llama-3.1-70b, llama-2-70b, gpt-3-175b..."},
    {.name = "model-file", .arg = CLI_ARG_REQUIRED, .metavar = "FILE",
     .commands = LAYOUT_OPT | CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE, .value = CLI_V_STRING,
     .field = F(model_file), .example = "m.json", .section = CLI_SEC_LAYOUT,
     .help = "a model JSON file (keys: name, layers, hidden, heads, ffn, vocab);\n"
             "optional: kv_heads, norm, mlp, positions, max_positions, bias,\n"
             "tied_embeddings, embedding_norm, dropout, qkv_bias,\n"
             "attention_window, comment, head_dim, qk_norm; experts (MoE),\n"
             "kv_lora_rank (MLA), mtp_layers and theirs; or a HuggingFace\n"
             "config.json (Llama, Mistral, Qwen2, Qwen3, Mixtral, Qwen3-MoE,\n"
             "DeepSeek-V3, GPT-OSS: docs/model.md)\n"
             "predict, validate, calibrate: the model of every row"},
    {.name = "vocab", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = MODEL_MAX_VOCAB, .field = F(vocab), .example = "32000", .section = CLI_SEC_LAYOUT, /* a model file's limit */
     .help = "override the vocabulary size, 1..16777216 (default: the\n"
             "model's, 128000); a multiple of tp"},
    {.name = "gpus", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = LAYOUT_MAX_GPUS, .field = F(rq.l.gpus), .list = CLI_LIST_GPUS, .ranges = TRUE, .left_out = ONE_VALUE,
     .example = "8", .section = CLI_SEC_LAYOUT, .help = "GPUs, 1..1048576 (default 64; what a run may take is its\nmemory estimate's: docs/model.md); dp = gpus / (tp * cp * pp)"},
    /* which tp a model and a node allow, layout_validate and sim_request_prepare say */
    {.name = "tp", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = LAYOUT_MAX_GPUS, .field = F(rq.l.tp), .list = CLI_LIST_LAYOUT, .axis = AX_TP, .ranges = TRUE,
     .left_out = EVERY_VALID, .example = "2", .section = CLI_SEC_LAYOUT,
     .help = "tensor-parallel degree (default 1): 1 2 4 8 on an 8-GPU board, up to\n"
             "the NVLink domain (72 on gb200-nvl72); docs/topology.md"},
    {.name = "pp", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = CLI_INT_MAX, .field = F(rq.l.pp), .list = CLI_LIST_LAYOUT, .axis = AX_PP, .ranges = TRUE,
     .left_out = EVERY_VALID, .example = "2", .section = CLI_SEC_LAYOUT, .help = "pipeline-parallel degree (default 1)"},
    /* which cp divide the GPUs: layout_validate */
    {.name = "cp", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = LAYOUT_MAX_GPUS, .field = F(rq.l.cp), .list = CLI_LIST_LAYOUT, .axis = AX_CP, .ranges = TRUE,
     .left_out = "1 only (and powers of two up to 8 with --space full)", .example = "2", .section = CLI_SEC_LAYOUT,
     .help = "context-parallel degree (default 1): each rank holds seq-len/cp\n"
             "tokens, attention is TransformerEngine's ring (seq-len a\n"
             "multiple of 2*cp, a flash kernel) or its all-to-all\n"
             "(--cp-comm-type a2a); docs/model.md"},
    {.name = "cp-comm-type", .arg = CLI_ARG_REQUIRED, .metavar = "T", .commands = LAYOUT_OPT, .value = CLI_V_ENUM,
     .field = F(rq.l.cp_comm), .example = "a2a", .section = CLI_SEC_LAYOUT,
     .help = "p2p (default: TransformerEngine's ring) | a2a (its all-to-all:\n"
             "q, k, v and the output all-to-all'd over the cp group, one kernel\n"
             "on heads/cp heads; tp*cp dividing the heads); no effect at cp 1;\n"
             "Megatron's --cp-comm-type; docs/context.md"},
    /* which ep and etp fold onto the ranks: layout_validate (docs/moe.md) */
    {.name = "ep", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = LAYOUT_MAX_GPUS, .field = F(rq.l.ep), .list = CLI_LIST_FOLDED, .axis = AXIS_EP, .ranges = TRUE,
     .left_out = ONE_VALUE, .example = "8", .section = CLI_SEC_LAYOUT,
     .help = "expert-parallel degree (default 1): a model with experts, ep divides\n"
             "them and etp*ep divides tp*cp*dp (Megatron's folding); docs/moe.md"},
    {.name = "etp", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = LAYOUT_MAX_GPUS, .field = F(rq.l.etp), .list = CLI_LIST_FOLDED, .axis = AXIS_ETP, .ranges = TRUE,
     .left_out = ONE_VALUE, .example = "2", .section = CLI_SEC_LAYOUT,
     .help = "expert tensor-parallel degree (default 1): each expert split over etp\n"
             "ranks; docs/moe.md"},
    {.name = "moe-imbalance", .arg = CLI_ARG_REQUIRED, .metavar = "F", .commands = LAYOUT_OPT, .value = CLI_V_REAL,
     .parse_real = parse_moe_imbalance, .field = F(rq.l.moe_imbalance), .list = CLI_LIST_IMBALANCE,
     .left_out = ONE_VALUE, .example = "1.5", .section = CLI_SEC_LAYOUT,
     .help = "max-over-mean tokens per expert, 1..1024 (default 1: balanced, as\n"
             "an auxiliary-loss-balanced router); scales the slowest EP rank's\n"
             "expert GEMMs and the all-to-all's largest message; docs/moe.md"},
    {.name = "moe-capacity-factor", .arg = CLI_ARG_REQUIRED, .metavar = "C", .commands = LAYOUT_OPT,
     .value = CLI_V_REAL, .parse_real = parse_moe_capacity_factor, .field = F(rq.l.moe_capacity_factor),
     .list = CLI_LIST_NONE, .left_out = ONE_VALUE, .example = "1.0", .section = CLI_SEC_LAYOUT,
     .help = "tokens an expert takes at most over its balanced share, (0, 64]\n"
             "(default: the model's capacity_factor, else dropless); the\n"
             "slowest EP rank's load is min(imbalance, C), the rest dropped\n"
             "(Megatron's --moe-expert-capacity-factor); docs/moe.md"},
    {.name = "sp", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = LAYOUT_OPT, .value = CLI_V_BOOL,
     .field = F(rq.l.sp), .list = CLI_LIST_LAYOUT, .axis = AX_SP, .left_out = EVERY_VALID, .example = "1",
     .section = CLI_SEC_LAYOUT,
     .help = "Megatron sequence parallelism (default off; --sp 1, --sp=1 or\n"
             "--sp alone); refused at tp 1, where it changes nothing"},
    {.name = "micro-batch", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT,
     .lo = 1, .hi = CLI_INT_MAX, .field = F(rq.l.micro_batch), .list = CLI_LIST_LAYOUT, .axis = AX_MB, .ranges = TRUE,
     .left_out = EVERY_VALID, .example = "2", .section = CLI_SEC_LAYOUT, .help = "sequences per micro-batch (default 1)"},
    {.name = "global-batch", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT,
     .lo = 1, .hi = CLI_INT_MAX, .field = F(rq.l.global_batch), .given_field = F(global_batch_set), .example = "64",
     .section = CLI_SEC_LAYOUT,
     .help = "sequences per step (default 4194304 / seq-len: 2048 at 2k); at\n"
             "most 8192 micro-batches per step (global-batch / (dp*micro-batch))"},
    {.name = "seq-len", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 1,
     .hi = CLI_INT_MAX, .field = F(rq.l.seq_len), .example = "1024", .section = CLI_SEC_LAYOUT,
     .help = "tokens per sequence (default 2048)"},
    {.name = "checkpointing", .arg = CLI_ARG_REQUIRED, .metavar = "MODE", .commands = LAYOUT_OPT,
     .value = CLI_V_ENUM, .field = F(rq.l.ckpt), .list = CLI_LIST_LAYOUT,
     .axis = AX_CKPT, .left_out = "none and every_layer (and selective and mlp with --space full)",
     .example = "every_layer", .section = CLI_SEC_LAYOUT,
     .help = "none (default) | every_layer (or full) | selective (the attention core's\n"
             "score-sized tensors recomputed; no change with FlashAttention)\n"
             "| mla_up_proj (MLA's up-projections and rope recomputed, the latents\n"
             "kept: Megatron's --recompute-modules mla_up_proj; docs/moe.md)\n"
             "| mlp (the MLP sub-block recomputed, its input kept); a sweep\n"
             "takes selective and mlp when listed or with --space full"},
    {.name = "attention-kernel", .arg = CLI_ARG_REQUIRED, .metavar = "K", .commands = LAYOUT_OPT,
     .value = CLI_V_ENUM, .field = F(rq.l.attn), .list = CLI_LIST_LAYOUT,
     .axis = AX_ATTN, .left_out = "the profile's kernels, else its stack's (every kernel with --space full)",
     .example = "flash2", .section = CLI_SEC_LAYOUT,
     .help = "torch | fused-softmax | flash1 | flash1-legacy | flash2 |\n"
             "flash2+rmsnorm (default)\n"
             "(flash2+rmsnorm is flash2 with --norm-kernel fused)"},
    {.name = "norm-kernel", .arg = CLI_ARG_REQUIRED, .metavar = "K", .commands = LAYOUT_OPT, .value = CLI_V_ENUM,
     .field = F(rq.l.norm_kernel), .example = "torch",
     .section = CLI_SEC_LAYOUT,
     .help = "stack (default: fused where the stack fuses norms or with\n"
             "flash2+rmsnorm, else torch) | torch (the study's RMSNorm) | fused"},
    {.name = "zero", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = LAYOUT_OPT, .value = CLI_V_INT, .lo = 0,
     .hi = LAYOUT_MAX_ZERO, .field = F(rq.l.zero), .list = CLI_LIST_LAYOUT, .axis = AX_ZERO, .ranges = TRUE,
     .left_out = "its one value (given or default; 0 to 3 with --space full)", .example = "2", .section = CLI_SEC_LAYOUT,
     .help = "ZeRO stage over data parallelism: 0 none | 1 optimizer states\n"
             "(the distributed optimizer) | 2 and gradients | 3 and parameters,\n"
             "gathered per layer with prefetch (FSDP); default: the stack's\n"
             "(study, nemo 1; megatron-deepspeed 0); docs/memory.md"},
    {.name = "no-zero1", .same_as = "zero", .arg = CLI_ARG_NONE, .commands = LAYOUT_OPT, .value = CLI_V_FLAG,
     .field = F(rq.l.zero), .flag_value = 0, .section = CLI_SEC_LAYOUT, .help = "the same as --zero 0"},
    {.name = "precision", .arg = CLI_ARG_REQUIRED, .metavar = "P", .commands = LAYOUT_OPT, .value = CLI_V_ENUM,
     .field = F(rq.l.precision), .list = CLI_LIST_LAYOUT, .axis = AX_PREC,
     .left_out = "bf16 only (and fp8, fp8-cs where the profile has FP8 with --space full)", .example = "bf16", .section = CLI_SEC_LAYOUT,
     .help = "bf16 (default) | fp8 (Transformer Engine's linear layers in FP8,\n"
             "delayed scaling) | fp8-cs (current scaling) | mxfp8; attention,\n"
             "embedding and head stay bf16; a profile with FP8 tensor cores\n"
             "(peak_fp8_flops); a sweep takes a list; docs/precision.md"},
    {.name = "overlap-grad-reduce", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = LAYOUT_OPT,
     .value = CLI_V_BOOL, .field = F(rq.l.overlap_grad_reduce), .list = CLI_LIST_LAYOUT, .axis = AX_OGR,
     .left_out = "its one value (given or the stack's; off and on with --space full)", .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "reduce each gradient bucket during the backward as it completes\n"
             "(the last micro-batch's of each chunk; ZeRO-2/3: every one),\n"
             "overlapped with the rest of it (alone: on); default: the stack's\n"
             "(nemo: on; study, megatron-deepspeed: off); docs/schedules.md"},
    {.name = "overlap-param-gather", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = LAYOUT_OPT,
     .value = CLI_V_BOOL, .field = F(rq.l.overlap_param_gather), .list = CLI_LIST_LAYOUT, .axis = AX_OPG,
     .left_out = "its one value (given or the stack's; off and on with --space full)", .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "ZeRO-1/2: the updated parameters' all-gather overlapped with the\n"
             "next step's forward, each layer waiting for its own bucket\n"
             "(alone: on); default: the stack's (nemo: on; study,\n"
             "megatron-deepspeed: off)"},
    {.name = "overlap-moe-ep-comm", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_BOOL, .field = F(rq.l.overlap_moe_ep_comm), .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "MoE with ep >= 2 and --schedule dualpipev, or 1f1b at pp 1\n"
             "(Megatron's combined 1F1B): each F&B pair's all-to-alls on\n"
             "the communication stream beside the other micro-batch's\n"
             "compute (Megatron's --overlap-moe-expert-parallel-comm,\n"
             "DualPipe's overlap; alone: on; default off)"},
    {.name = "moe-flex-dispatcher", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_BOOL, .field = F(rq.l.moe_flex_dispatcher), .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "MoE: Megatron's flex token dispatcher (DeepEP, HybridEP):\n"
             "each token sent once per destination NVLink domain over\n"
             "the network, then once per destination GPU over NVLink,\n"
             "not once per expert (alone: on; default off, the alltoall\n"
             "dispatcher); docs/moe.md"},
    {.name = "fp8-param-gather", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_BOOL, .field = F(rq.l.fp8_param_gather), .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "with --precision fp8, fp8-cs or mxfp8: FP8 primary weights\n"
             "(Megatron's --fp8-param-gather, Transformer Engine's\n"
             "fp8_param): the linear layers' weights kept in FP8 only,\n"
             "2 bytes a parameter less than a bf16 weight beside its FP8\n"
             "copy (alone: on; default off); docs/precision.md"},
    {.name = "cuda-graph", .arg = CLI_ARG_OPTIONAL, .metavar = "[=0|1]", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_BOOL, .field = F(rq.l.cuda_graph), .example = "1", .section = CLI_SEC_LAYOUT,
     .help = "the whole step captured as one CUDA graph (Megatron's\n"
             "cuda_graph_impl full_iteration): no per-kernel launch gap\n"
             "or host dispatch (alone: on; default off); docs/moe.md"},
    {.name = "cuda-graph-scope", .arg = CLI_ARG_REQUIRED, .metavar = "SCOPE", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_CUSTOM, .set = set_cuda_graph_scope, .example = "attn+moe_router+moe_preprocess",
     .section = CLI_SEC_LAYOUT,
     .help = "the parts of each layer captured as CUDA graphs by Transformer\n"
             "Engine (Megatron's --cuda-graph-scope, cuda_graph_impl\n"
             "transformer_engine), joined by '+': full (the whole layer),\n"
             "attn, mlp (a dense layer's), moe (drop-and-pad), moe_router,\n"
             "moe_preprocess (with moe_router), mamba; full_iteration is\n"
             "--cuda-graph; their kernels pay no launch gap or host dispatch\n"
             "but one launch per layer pass (default none); docs/moe.md"},
    {.name = "partition", .arg = CLI_ARG_REQUIRED, .metavar = "METHOD", .commands = ANY_RUN | CMD_GRAPH,
     .value = CLI_V_ENUM, .parse = partition_parse_method_int, .field = F(rq.gen.partition),
     .given_field = F(partition_set), .example = "uniform", .section = CLI_SEC_LAYOUT,
     .help = "auto (balanced, as the study code's example config, or uniform\n"
             "where balanced leaves a stage empty) | balanced | uniform (the\n"
             "study's library default) | layers (the layers split evenly:\n"
             "Megatron, DeepSpeed's type:transformer); default: the stack's\n"
             "(study: auto); docs/model.md"},
    {.name = "pipeline-layout", .arg = CLI_ARG_REQUIRED, .metavar = "STRING", .commands = CMD_SIMULATE | CMD_GRAPH,
     .value = CLI_V_CUSTOM, .set = set_pipeline_layout, .example = "Et|(tt|)*62,tL", .section = CLI_SEC_LAYOUT,
     .help = "which (virtual) stage holds which layers, as Megatron-Core's\n"
             "--pipeline-model-parallel-layout: stages split by |, E embedding,\n"
             "t layer, L loss, X*N and (...)*N repeat; pp*V stages in the\n"
             "model's order (chunk c of stage s the (c*pp+s)-th; dualpipev:\n"
             "stage s holds the s-th and (2pp-1-s)-th); e.g. 126 layers on pp\n"
             "16, V 4: 'Et|(tt|)*62,tL' (instead of --partition;\n"
             "docs/schedules.md)"},
    {.name = "schedule", .arg = CLI_ARG_REQUIRED, .metavar = "S", .commands = LAYOUT_OPT, .value = CLI_V_ENUM,
     .field = F(rq.l.schedule), .list = CLI_LIST_LAYOUT, .axis = AX_SCHED, .left_out = "1f1b (every schedule with --space full)",
     .example = "gpipe", .section = CLI_SEC_LAYOUT,
     .help = "pipeline schedule: 1f1b (default: the study's, blocking sends) |\n"
             "gpipe | interleaved | zb-h1 (backward split into B and W) |\n"
             "dualpipev (DeepSeek's V: 2 chunks per stage, loss on stage 0);\n"
             "interleaved and zb-h1 need pp 2 or more; any case;\n"
             "docs/schedules.md"},
    {.name = "virtual-stages", .arg = CLI_ARG_REQUIRED, .metavar = "V", .commands = LAYOUT_OPT, .value = CLI_V_INT,
     .lo = 1, .hi = 1024, .field = F(rq.l.virtual_stages), .list = CLI_LIST_LAYOUT, .axis = AX_VS, .ranges = TRUE,
     .left_out = "1, and with interleaved every V >= 2 dividing layers/pp", .example = "2",
     .section = CLI_SEC_LAYOUT,
     .help = "model chunks per stage for --schedule interleaved (V >= 2; layers\n"
             "divisible by pp*V, micro-batches per step a multiple of pp) and\n"
             "dualpipev (V 2, its default; micro-batches per step at least 2*pp)"},

    /* PLATFORM */
    {.name = "profile", .arg = CLI_ARG_REQUIRED, .metavar = "NAME|FILE", .commands = ANY_RUN | CMD_GRAPH | CMD_REPLAY,
     .value = CLI_V_STRING, .field = F(profile_name), .list = CLI_LIST_PROFILES, .left_out = ONE_VALUE,
     .example = "h100-sxm5-80gb", .section = CLI_SEC_PLATFORM,
     .help = "hardware profile: the machine's datasheet figures (default\n"
             "a100-sxm4-80gb; replay: the graph's, a note where --profile\n"
             "differs; a100-jean-zay, h100-sxm5-80gb, h200-sxm-141gb, b200,\n"
             "b300, gb200-nvl72, gb300-nvl72; docs/profile.md)"},
    {.name = "stack", .arg = CLI_ARG_REQUIRED, .metavar = "NAME|FILE", .commands = ANY_RUN | CMD_GRAPH | CMD_REPLAY,
     .value = CLI_V_STRING, .field = F(stack_name), .given_field = F(stack_set), .list = CLI_LIST_STACKS, .left_out = ONE_VALUE,
     .example = "megatron-deepspeed", .section = CLI_SEC_PLATFORM,
     .help = "software stack: the training code's kernel and NCCL efficiencies,\n"
             "memory overheads and graph (default: the profile's, study on\n"
             "a100-sxm4-80gb, nemo on h100/h200 and Blackwell; replay: the\n"
             "graph's, with its --stack-set keys; predict, validate,\n"
             "calibrate: study for a row without a stack cell, whatever its\n"
             "profile or --profile; megatron-deepspeed; docs/stacks.md,\n"
             "docs/profile.md)"},
    {.name = "stack-set", .arg = CLI_ARG_REQUIRED, .metavar = "KEY=VALUE", .commands = STACK_SET_CMDS,
     .value = CLI_V_CUSTOM, .set = set_stack_set, .repeatable = TRUE, .example = "tp_comm_overlap=0",
     .section = CLI_SEC_PLATFORM,
     .help = "override one numeric key of the stack, inside its range (e.g.\n"
             "tp_comm_overlap=0, grad_reduce_bytes=4); repeatable, each key\n"
             "once; predict, validate: on every row's stack, before a row's\n"
             "own stack_set cell (KEY=VALUE;KEY=VALUE); the outputs say which\n"
             "keys were set (docs/stacks.md, \"Overriding keys\")"},
    {.name = "gpu-memory", .arg = CLI_ARG_REQUIRED, .metavar = "GIB", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_GPU_MEMORY, .list = CLI_LIST_WHATIF, .left_out = ONE_VALUE,
     .example = "40", .section = CLI_SEC_PLATFORM,
     .help = "memory per GPU for the OOM verdict (default: the profile's)"},
    {.name = "ib-gbps", .arg = CLI_ARG_REQUIRED, .metavar = "X", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_IB_GBPS, .list = CLI_LIST_WHATIF, .left_out = ONE_VALUE, .example = "100",
     .section = CLI_SEC_PLATFORM, .help = "InfiniBand bandwidth per NIC, Gbit/s (default: the profile's)"},
    {.name = "nvlink-gbps", .arg = CLI_ARG_REQUIRED, .metavar = "X", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_NVLINK_GBPS, .list = CLI_LIST_WHATIF, .left_out = ONE_VALUE,
     .example = "1200", .section = CLI_SEC_PLATFORM,
     .help = "NVLink bandwidth per GPU per direction, Gbit/s (default: the\n"
             "profile's)"},
    {.name = "nics-per-node", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = ANY_RUN | CMD_GRAPH | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_NICS_PER_NODE, .list = CLI_LIST_WHATIF, .ranges = TRUE,
     .left_out = ONE_VALUE, .example = "4", .section = CLI_SEC_PLATFORM,
     .help = "InfiniBand NICs per node (default: the profile's)"},
    {.name = "fabric", .arg = CLI_ARG_REQUIRED, .metavar = "NAME", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_FABRIC, .list = CLI_LIST_WHATIF, .left_out = ONE_VALUE, .example = "rail",
     .section = CLI_SEC_PLATFORM,
     .help = "the network above the NICs: fat-tree, rail (NIC k of every node\n"
             "on rail leaf k; traffic between rails crosses the spine) or\n"
             "rail-pxn (the same, cross-rail data first over NVLink to the GPU\n"
             "on the destination's rail, as NCCL's PXN) (default: the\n"
             "profile's; fat-tree in the shipped ones; docs/model.md)"},
    {.name = "leaf-nodes", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_LEAF_NODES, .list = CLI_LIST_WHATIF, .ranges = TRUE,
     .left_out = ONE_VALUE, .example = "4", .section = CLI_SEC_PLATFORM,
     .help = "nodes under one leaf group of the fabric, whose traffic to other\n"
             "groups shares one uplink; rail: nodes of one stripe of rail leaves\n"
             "(default: the profile's; 0 in the shipped ones: one non-blocking\n"
             "fabric, or one stripe; docs/model.md)"},
    {.name = "oversubscription", .arg = CLI_ARG_REQUIRED, .metavar = "R", .commands = ANY_RUN | CMD_REPLAY,
     .value = CLI_V_WHATIF, .axis = WHATIF_OVERSUBSCRIPTION, .list = CLI_LIST_WHATIF, .left_out = ONE_VALUE,
     .example = "2", .section = CLI_SEC_PLATFORM,
     .help = "a leaf's NIC bandwidth over its uplink's (default: the\n"
             "profile's, 1: non-blocking)"},
    {.name = "nccl-algo", .arg = CLI_ARG_REQUIRED, .metavar = "ALGO", .commands = CMD_SIMULATE | CMD_REPLAY,
     .value = CLI_V_CUSTOM, .set = set_nccl_algo, .example = "ring", .section = CLI_SEC_PLATFORM,
     .help = "simulate, replay: the collective algorithm, auto (default: NCCL's\n"
             "tuner chooses ring, tree or nvls per call), ring, tree, nvls or hier\n"
             "where it fits the group, else ring (docs/collectives.md)"},
    {.name = "platform-file", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = CMD_SIMULATE | CMD_REPLAY,
     .value = CLI_V_STRING, .field = F(rq.replay.platform_file), .example = "p.xml", .section = CLI_SEC_PLATFORM,
     .help = "simulate, replay: a SimGrid platform XML file of your own instead\n"
             "of the built cluster, with a host n<node>_g<gpu> for every rank\n"
             "(node = rank / gpus_per_node of the profile); every rank is\n"
             "simulated (docs/model.md)"},

    /* OUTPUT */
    {.name = "format", .arg = CLI_ARG_REQUIRED, .metavar = "text|json",
     .commands = CMD_SIMULATE | CMD_REPLAY | CMD_VALIDATE | RANKED, .value = CLI_V_CUSTOM, .set = set_format,
     .example = "json", .section = CLI_SEC_OUTPUT,
     .help = "summary format (default text); sweep and merge: text|csv|json"},
    {.name = "export", .arg = CLI_ARG_REQUIRED, .metavar = "TARGET", .commands = CMD_SIMULATE | RANKED,
     .value = CLI_V_STRING, .field = F(export_target), .example = "megatron", .section = CLI_SEC_OUTPUT,
     .help = "simulate: print the layout as megatron (an argument list), nemo (a\n"
             "NeMo 2 recipe override) or torchtitan (TOML) instead of simulating\n"
             "it; sweep, merge: after the ranking, the layout to prefer (with\n"
             "--top K: the K best) as TARGET (docs/export.md)"},
    {.name = "output", .short_name = 'o', .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = CMD_ALL,
     .value = CLI_V_STRING, .field = F(output), .example = "out.txt", .section = CLI_SEC_OUTPUT,
     .help = "write the summary to FILE (graph: the graph; predict: the table;\n"
             "validate: the per-row comparison; calibrate: the fitted stack;\n"
             "sweep, merge: the ranking; default: standard output)"},
    {.name = "top", .arg = CLI_ARG_REQUIRED, .metavar = "K", .commands = RANKED, .value = CLI_V_INT, .lo = 1,
     .hi = CLI_INT_MAX, .field = F(top), .example = "5", .section = CLI_SEC_OUTPUT,
     .help = "sweep, merge: the K best layouts of each platform point (default:\n"
             "text 10, CSV and JSON all)"},
    {.name = "show-invalid", .arg = CLI_ARG_NONE, .commands = RANKED, .value = CLI_V_FLAG, .field = F(show_invalid),
     .flag_value = TRUE, .section = CLI_SEC_OUTPUT,
     .help = "sweep, merge: list every invalid layout with its reason"},
    {.name = "plot", .arg = CLI_ARG_REQUIRED, .metavar = "FILE.svg", .commands = RANKED, .value = CLI_V_STRING,
     .field = F(plot), .example = "p.svg", .section = CLI_SEC_OUTPUT,
     .help = "sweep, merge: MFU and step time against the one swept platform\n"
             "axis, a line per layout among the five best"},
    {.name = "trust-out", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = CMD_VALIDATE,
     .value = CLI_V_STRING, .field = F(trust_out), .example = "t.json", .section = CLI_SEC_OUTPUT,
     .help = "validate: the trust table of the rows, what they cover and the\n"
             "error of each regime (docs/trust.md)"},
    {.name = "paje", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(paje), .example = "t.paje", .section = CLI_SEC_OUTPUT,
     .help = "Paje trace for pj_dump/pajeng and Vite: a state per GPU per\n"
             "event (forward, backward, recompute, tp-comm, pp-wait,\n"
             "dp-comm, optimizer, idle) tiling the step, every GPU, none of\n"
             "zero length; streamed from the simulated timeline (65B on\n"
             "128 GPUs: 230 MB, about 2 s, no extra memory)"},
    {.name = "paje-links", .arg = CLI_ARG_NONE, .commands = TRACES, .value = CLI_V_FLAG, .field = F(paje_links),
     .flag_value = TRUE, .section = CLI_SEC_OUTPUT,
     .help = "also each link direction's bandwidth_used, derived from the\n"
             "step's transfers (65B on 128 GPUs: 429 MB; docs/timelines.md)"},
    {.name = "paje-simgrid", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(rq.replay.simgrid_paje_path), .example = "s.paje", .section = CLI_SEC_OUTPUT,
     .help = "SimGrid's own Paje trace, recorded during the run: slow, and\n"
             "SimGrid holds about 40x the file in memory (default layout:\n"
             "93 MB file, 3.9 GB); with --paje-links, SimGrid's own link\n"
             "and host variables (inexact where transfers share a link)"},
    {.name = "chrome-trace", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(chrome_trace), .example = "c.json", .section = CLI_SEC_OUTPUT,
     .help = "Chrome trace-event JSON for Perfetto / chrome://tracing: a\n"
             "process per node, a track per GPU stream, flow arrows for\n"
             "pipeline sends, a memory counter per GPU"},
    {.name = "timeline-svg", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(timeline_svg), .example = "t.svg", .section = CLI_SEC_OUTPUT,
     .help = "Gantt chart of the step: GPUs of a stage with the same\n"
             "intervals share a row labelled with their ranks (more than\n"
             "64 distinct timelines: a row per pipeline stage); runs of\n"
             "events narrower than a pixel as stacked shares of each\n"
             "pixel column's time"},
    {.name = "svg-window", .arg = CLI_ARG_REQUIRED, .metavar = "START:END", .commands = TRACES,
     .value = CLI_V_CUSTOM, .set = set_svg_window, .example = "0.1:0.2", .section = CLI_SEC_OUTPUT,
     .help = "--timeline-svg draws only seconds START to END of the step\n"
             "(0 <= START < END, START inside the step; END past the step\n"
             "is cut at its end), e.g. --svg-window 1.2:1.5"},
    {.name = "memory-svg", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(memory_svg), .example = "m.svg", .section = CLI_SEC_OUTPUT,
     .help = "memory over the step, a curve per pipeline stage, peak marked"},
    {.name = "timeline-csv", .arg = CLI_ARG_REQUIRED, .metavar = "FILE", .commands = TRACES, .value = CLI_V_STRING,
     .field = F(timeline_csv), .example = "t.csv", .section = CLI_SEC_OUTPUT,
     .help = "one row per interval: rank,stream,kind,name,start_s,end_s,\n"
             "micro_batch,layer (idle gaps included)"},
    {.name = "trace-ranks", .alias = "chrome-ranks", .arg = CLI_ARG_REQUIRED, .metavar = "R", .commands = TRACES,
     .value = CLI_V_STRING, .field = F(trace_ranks), .example = "0-1", .section = CLI_SEC_OUTPUT,
     .help = "ranks in --chrome-trace and --timeline-csv: all, dp0 (data-\n"
             "parallel replica 0) or a list like 0-7,16 (default: all up\n"
             "to 64 GPUs, else dp0); --chrome-ranks is a synonym"},

    /* RUN */
    {.name = "jobs", .short_name = 'j', .arg = CLI_ARG_REQUIRED, .metavar = "N",
     .commands = CMD_PREDICT | CMD_VALIDATE | CMD_CALIBRATE | CMD_SWEEP, .value = CLI_V_INT, .lo = 1, .hi = 1024,
     .field = F(jobs), .example = "2", .section = CLI_SEC_RUN,
     .help = "predict, validate, calibrate, sweep: worker processes, 1..1024\n"
             "(default: cores; fewer run at once if the system runs out of\n"
             "processes); a progress bar on stderr when it is a terminal"},
    {.name = "fidelity", .arg = CLI_ARG_REQUIRED, .metavar = "F", .commands = CMD_PREDICT | CMD_VALIDATE | CMD_SWEEP,
     .value = CLI_V_ENUM, .parse = pool_parse_fidelity_int, .field = F(fidelity), .example = "full",
     .section = CLI_SEC_RUN,
     .help = "predict, validate, sweep: auto (default: the exact steady-state\n"
             "extrapolation where it holds and saves work, else a full\n"
             "replay), full (always replay the whole step) or fast (the\n"
             "extrapolation wherever m > pp + 1); each row says which was\n"
             "used. But with full, layouts that do not fit in memory are\n"
             "not replayed (their peak comes from the memory walk)"},
    {.name = "shard", .arg = CLI_ARG_REQUIRED, .metavar = "I/N", .commands = CMD_SWEEP, .value = CLI_V_CUSTOM,
     .set = set_shard, .example = "1/2", .section = CLI_SEC_RUN,
     .help = "sweep: run the I-th of N deterministic slices (--format csv);\n"
             "layoutsim merge joins them (docs/sweep.md: SLURM, GNU parallel)"},
    {.name = "space", .arg = CLI_ARG_REQUIRED, .metavar = "S", .commands = CMD_SWEEP, .value = CLI_V_CUSTOM,
     .set = set_space, .example = "full", .section = CLI_SEC_RUN,
     .help = "sweep: what an axis left out covers: default (as each option says)\n"
             "or full (every valid value of every axis: zero 0-3, both overlaps,\n"
             "every schedule and virtual stages, cp up to 8, checkpointing but\n"
             "mla_up_proj, fp8 and fp8-cs where the profile has FP8; docs/sweep.md)"},
    {.name = "exhaustive", .arg = CLI_ARG_NONE, .commands = CMD_SWEEP, .value = CLI_V_FLAG, .field = F(exhaustive),
     .flag_value = TRUE, .section = CLI_SEC_RUN,
     .help = "sweep: replay every layout that fits (default with --top K or the\n"
             "text format: layouts whose lower bound on the step time exceeds\n"
             "the K-th best replayed are neither replayed nor checked for\n"
             "memory; the top K is the same; docs/sweep.md, \"Exact top-K\")"},
    {.name = "max-seconds", .arg = CLI_ARG_REQUIRED, .metavar = "S", .commands = CMD_SIMULATE | CMD_REPLAY | CMD_SWEEP,
     .value = CLI_V_CUSTOM, .set = set_max_seconds, .example = "600", .section = CLI_SEC_RUN,
     .help = "simulate, replay, sweep: stop the run after S seconds (exit\n"
             "status 2, one line, no output written); a run estimated above\n"
             "30 s says so on stderr first (docs/hardening.md)"},
    {.name = "max-memory", .arg = CLI_ARG_REQUIRED, .metavar = "SIZE", .commands = CMD_SIMULATE | CMD_REPLAY | CMD_SWEEP,
     .value = CLI_V_CUSTOM, .set = set_max_memory, .example = "4G", .section = CLI_SEC_RUN,
     .help = "simulate, replay, sweep: the memory budget of one simulation\n"
             "(default 8G; K, M, G, T): one estimated above it is refused\n"
             "before it starts (a sweep's layout: invalid), and the run is\n"
             "stopped (exit status 2) if its resident set passes it"},
    {.name = "no-symmetry", .arg = CLI_ARG_NONE, .commands = ANY_RUN | CMD_GRAPH, .value = CLI_V_FLAG,
     .field = F(rq.gen.symmetry), .flag_value = FALSE, .section = CLI_SEC_RUN,
     .help = "simulate every rank explicitly (slower; same result; automatic\n"
             "where GPUs share NICs, docs/model.md)"},
    {.name = "log", .arg = CLI_ARG_REQUIRED, .metavar = "LEVEL", .commands = TRACES, .value = CLI_V_CUSTOM,
     .set = set_log, .example = "info", .section = CLI_SEC_RUN, .help = "SimGrid log threshold (default critical)"},

    /* CALIBRATE */
    {.name = "max-evals", .arg = CLI_ARG_REQUIRED, .metavar = "N", .commands = CMD_CALIBRATE, .value = CLI_V_INT,
     .lo = 1, .hi = 1000000, .field = F(max_evals), .example = "20", .section = CLI_SEC_CALIBRATE, /* >= 11: cmd_calibrate */
     .help = "objective evaluations of the timing fit, at least 11 (default 60)"},
    {.name = "full", .arg = CLI_ARG_NONE, .commands = CMD_CALIBRATE, .value = CLI_V_FLAG, .field = F(calib_full),
     .flag_value = TRUE, .section = CLI_SEC_CALIBRATE, .help = "full simulations instead of the fast mode"},
    {.name = "check-fast", .arg = CLI_ARG_NONE, .commands = CMD_CALIBRATE, .value = CLI_V_FLAG,
     .field = F(calib_check_fast), .flag_value = TRUE, .section = CLI_SEC_CALIBRATE,
     .help = "compare fast mode with full simulations on the rows the timing\n"
             "fit uses; fit and write nothing"},
    {.name = "prior-weight", .arg = CLI_ARG_REQUIRED, .metavar = "W", .commands = CMD_CALIBRATE,
     .value = CLI_V_CUSTOM, .set = set_prior_weight, .example = "0.01", .section = CLI_SEC_CALIBRATE,
     .help = "weight of the pull of each constant towards its value in the\n"
             "starting stack (default 0.001; 0: none; docs/calibration.md)"},
    {.name = "fit", .arg = CLI_ARG_REQUIRED, .metavar = "WHAT", .commands = CMD_CALIBRATE, .value = CLI_V_CUSTOM,
     .set = set_fit, .example = "timing", .section = CLI_SEC_CALIBRATE,
     .help = "all (default), timing (the step-time constants), memory (the\n"
             "fragmentation constant, from the ok/oom labels) or fp8\n"
             "(fp8_gemm_efficiency alone, every bf16 constant held;\n"
             "docs/precision.md)"},
};
const size_t CLI_N_OPTIONS = G_N_ELEMENTS(CLI_OPTIONS);
G_STATIC_ASSERT(G_N_ELEMENTS(CLI_OPTIONS) <= CLI_MAX_OPTIONS);

const cli_option *cli_option_find(const char *long_name)
{
  for (size_t i = 0; i < CLI_N_OPTIONS; i++)
    if (!strcmp(CLI_OPTIONS[i].name, long_name) || !g_strcmp0(CLI_OPTIONS[i].alias, long_name)) return &CLI_OPTIONS[i];
  return NULL;
}

const cli_option *cli_option_find_short(int c)
{
  for (size_t i = 0; i < CLI_N_OPTIONS; i++)
    if (c && CLI_OPTIONS[i].short_name == c) return &CLI_OPTIONS[i];
  return NULL;
}

const char *cli_section_title(cli_section s)
{
  static const char *const T[CLI_SEC_N] = {"LAYOUT options:", "PLATFORM options:", "OUTPUT options:", "RUN options:",
                                           "CALIBRATE options:"};
  return T[s];
}
