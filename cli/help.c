/* help -- see help.h. Column layout: commands' entries at column 31, options' at column 26, the notes
 * wrapped at HELP_WIDTH. */
#include "help.h"

#include <string.h>

#include "analysis/footprint.h"
#include "common/lsim_input.h"
#include "workloads/model.h"

#ifndef LSIM_VERSION
#error "LSIM_VERSION: meson passes the project's version"
#endif

#define HELP_WIDTH 92
#define COMMAND_COLUMN 31
#define OPTION_COLUMN 26

static const char *const HEAD =
    "usage: layoutsim COMMAND [OPTIONS]\n"
    "\n"
    "Simulate one training step of a Llama model under a parallelization layout\n"
    "on a modelled GPU cluster (SimGrid; the machine is a hardware profile), and report\n"
    "step time, MFU, pipeline bubble, time breakdown, peak memory and energy.\n"
    "\n"
    "commands:\n";

static const char *const HELP_ENTRY = "this text, or one command's entry and the options";

/* The paragraphs after the options. */
static const char *const NOTES =
    "Input files: regular files only (no FIFO or device), of at most 1 MiB (--model-file,\n"
    "a --profile or --stack file), 64 MiB (a predict, validate or calibrate table) or 1 GiB\n"
    "(a graph).\n"
    "\n"
    "Options: long options by their full names (--global-batch, not --glob), each given at most\n"
    "once; a value after a blank or '=' (--tp 2, --tp=2), a flag's optional value after '=' only\n"
    "(--sp=1).\n"
    "\n"
    "Memory: a run estimated to take more than 8 GiB (its graph, replay and traces, counted\n"
    "before anything is allocated: docs/model.md) is refused, naming the option to change.\n"
    "\n"
    "Exit status: 0 success, 2 bad input (one line on stderr names the field).\n";

/* the limits as the help states them */
G_STATIC_ASSERT(MODEL_MAX_VOCAB == 16777216);
G_STATIC_ASSERT(FOOTPRINT_BUDGET_GIB == 8); /* an integer: C's static assertions take no floating point (clang) */
G_STATIC_ASSERT(LSIM_INPUT_MAX_MODEL_BYTES == 1u << 20 && LSIM_INPUT_MAX_PROFILE_BYTES == 1u << 20 &&
                LSIM_INPUT_MAX_TABLE_BYTES == 64u << 20 && LSIM_INPUT_MAX_GRAPH_BYTES == 1u << 30);

/* "  LABEL" padded to `column`, then the text's lines, the later ones indented to `column`; a label
 * too long for its column on a line of its own. */
static void entry(GString *out, const char *label, const char *text, int column)
{
  g_string_append_printf(out, "  %s", label);
  int used = 2 + (int)strlen(label);
  if (used + 2 > column) {
    g_string_append_c(out, '\n');
    used = 0;
  }
  g_string_append_printf(out, "%*s", column - used, "");
  for (const char *p = text; *p; p++) {
    g_string_append_c(out, *p);
    if (*p == '\n') g_string_append_printf(out, "%*s", column, "");
  }
  g_string_append_c(out, '\n');
}

/* "-o, --output FILE", "--sp[=0|1]", "--model NAME". */
static char *option_label(const cli_option *op)
{
  GString *s = g_string_new(NULL);
  if (op->short_name) g_string_append_printf(s, "-%c, ", op->short_name);
  g_string_append_printf(s, "--%s", op->name);
  if (op->arg == CLI_ARG_REQUIRED) g_string_append_printf(s, " %s", op->metavar);
  else if (op->arg == CLI_ARG_OPTIONAL) g_string_append(s, op->metavar);
  return g_string_free(s, FALSE);
}

/* The words of `text` as lines of at most HELP_WIDTH, each indented by two blanks. */
static void wrap(GString *out, const char *text)
{
  g_auto(GStrv) words = g_strsplit(text, " ", -1);
  int col = 0;
  for (char **w = words; *w; w++) {
    int len = (int)strlen(*w);
    if (col > 0 && col + 1 + len > HELP_WIDTH) {
      g_string_append_c(out, '\n');
      col = 0;
    }
    if (col == 0) col = (int)(g_string_append(out, "  "), 2);
    else col += (int)(g_string_append_c(out, ' '), 1);
    g_string_append(out, *w);
    col += len;
  }
  g_string_append_c(out, '\n');
}

/* "--a, --b and --c" of the options of `sec` for which keep() holds. */
static char *name_list(cli_section sec, gboolean (*keep)(const cli_option *, const char *), const char *arg)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < CLI_N_OPTIONS; i++)
    if (CLI_OPTIONS[i].section == sec && keep(&CLI_OPTIONS[i], arg))
      g_ptr_array_add(names, g_strconcat("--", CLI_OPTIONS[i].name, NULL));
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 == names->len ? " and " : ", ", (char *)names->pdata[i]);
  return g_string_free(s, FALSE);
}

static gboolean is_list(const cli_option *op, const char *arg) { return (void)arg, op->list != CLI_LIST_NONE; }
static gboolean is_range_list(const cli_option *op, const char *arg) { return is_list(op, arg) && op->ranges; }
static gboolean left_out_is(const cli_option *op, const char *text)
{
  return is_list(op, NULL) && !g_strcmp0(op->left_out, text);
}

/* The section's options that take a list in sweep, which also ranges, and what each covers left out
 * (those that cover the same named together); nothing where none does. */
static void list_note(GString *out, cli_section sec)
{
  g_autofree char *lists = name_list(sec, is_list, NULL);
  if (!*lists) return;
  g_autoptr(GString) note = g_string_new(NULL);
  g_string_append_printf(note, "sweep: %s take a comma-separated list (1,2,4), the sweep covering their cross product",
                         lists);
  g_autofree char *ranges = name_list(sec, is_range_list, NULL);
  if (*ranges) g_string_append_printf(note, "; %s also ranges LO-HI (1-16)", ranges);
  g_string_append(note, "; left out,");
  g_autoptr(GHashTable) done = g_hash_table_new(g_str_hash, g_str_equal);
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    if (op->section != sec || !is_list(op, NULL) || !g_hash_table_add(done, (gpointer)op->left_out)) continue;
    g_autofree char *names = name_list(sec, left_out_is, op->left_out);
    g_string_append_printf(note, "%s %s: %s", g_hash_table_size(done) > 1 ? ";" : "", names, op->left_out);
  }
  wrap(out, note->str);
}

void cli_help_options(GString *out, unsigned command)
{
  for (int sec = 0; sec < CLI_SEC_N; sec++) {
    g_autoptr(GString) body = g_string_new(NULL);
    for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
      const cli_option *op = &CLI_OPTIONS[i];
      if ((int)op->section != sec || !(op->commands & command)) continue;
      g_autofree char *label = option_label(op);
      entry(body, label, op->help, OPTION_COLUMN);
    }
    if (!body->len) continue;
    if (command & CMD_SWEEP) list_note(body, (cli_section)sec);
    g_string_append_printf(out, "\n%s\n%s", cli_section_title((cli_section)sec), body->str);
  }
}

static void usage_line(GString *out) { g_string_append_len(out, HEAD, strchr(HEAD, '\n') - HEAD + 1); }

void cli_help_all(GString *out)
{
  g_string_append(out, HEAD);
  for (size_t i = 0; i < CLI_N_COMMANDS; i++)
    entry(out, CLI_COMMANDS[i].synopsis, CLI_COMMANDS[i].help, COMMAND_COLUMN);
  entry(out, "help [COMMAND]", HELP_ENTRY, COMMAND_COLUMN);
  entry(out, "--version", "the version: layoutsim " LSIM_VERSION, COMMAND_COLUMN);
  cli_help_options(out, CMD_ALL);
  g_string_append_printf(out, "\n%s", NOTES);
}

void cli_help_command(GString *out, const cli_command *c)
{
  usage_line(out);
  g_string_append_c(out, '\n');
  if (c) entry(out, c->synopsis, c->help, COMMAND_COLUMN);
  else entry(out, "help [COMMAND]", HELP_ENTRY, COMMAND_COLUMN);
  cli_help_options(out, c ? c->bit : CMD_ALL);
  g_string_append_printf(out, "\n%s", NOTES);
}
