/* test_options -- cli_parse as a function called more than once in a process (the tests and the fuzz
 * harness call it so; layoutsim once): each call reads its own argv only, whatever the one before
 * left behind. And the option table (cli/option_table.c) against what it generates: every option
 * parses on each command it applies to and is refused on the others, is refused when given twice,
 * appears in the help of exactly its commands, and help sweep names every option that takes a list;
 * and against the sweep (analysis/sweep.h): each of its axes is filled by exactly one option. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "check_shipped.h"
#include "cli/help.h"
#include "cli/options.h"

/* cli_parse of `line` (blank-separated, the command first) for simulate; its error message or NULL. */
static char *parse(const char *line, cli_opts *o)
{
  g_auto(GStrv) argv = g_strsplit(line, " ", -1);
  GError *err = NULL;
  cli_opts_init(o);
  gboolean ok = cli_parse(o, "simulate", CMD_SIMULATE, (int)g_strv_length(argv), argv, &err);
  char *msg = ok ? NULL : g_strdup(err->message);
  g_clear_error(&err);
  return msg;
}

/* An unknown short option in a cluster stops the parse with getopt inside the cluster: the next parse
 * resumed there, in the earlier (freed) argv, and took its 'j' for -j. */
START_TEST(test_a_parse_after_an_error_inside_an_option_cluster_reads_only_its_own_arguments)
{
  cli_opts o;
  g_autofree char *first = parse("simulate -qjx", &o);
  ck_assert_str_eq(first, "-q: unknown option (allowed: the options of layoutsim help simulate)");
  cli_opts_clear(&o);
  g_autofree char *second = parse("simulate --tp 2", &o);
  ck_assert_msg(second == NULL, "%s", second);
  ck_assert_int_eq(o.rq.l.tp, 2);
  cli_opts_clear(&o);
}
END_TEST

static const struct { const char *name; unsigned bit; } COMMANDS[] = {
    {"simulate", CMD_SIMULATE}, {"graph", CMD_GRAPH},         {"replay", CMD_REPLAY}, {"predict", CMD_PREDICT},
    {"validate", CMD_VALIDATE}, {"calibrate", CMD_CALIBRATE}, {"sweep", CMD_SWEEP},   {"merge", CMD_MERGE}};

/* cli_parse of argv (NULL-ended, the command first) for command k; its error message or NULL. */
static char *parse_argv(size_t k, GPtrArray *args, cli_opts *o)
{
  g_ptr_array_insert(args, 0, (gpointer)COMMANDS[k].name);
  g_ptr_array_add(args, NULL);
  GError *err = NULL;
  cli_opts_init(o);
  gboolean ok = cli_parse(o, COMMANDS[k].name, COMMANDS[k].bit, (int)args->len - 1, (char **)args->pdata, &err);
  char *msg = ok ? NULL : g_strdup(err->message);
  g_clear_error(&err);
  return msg;
}

/* "--name VALUE" of option op with its example value (a flag alone; an optional value after '='). */
static void add_option(GPtrArray *args, const cli_option *op, gboolean as_list)
{
  if (op->arg == CLI_ARG_NONE) g_ptr_array_add(args, g_strconcat("--", op->name, NULL));
  else if (op->arg == CLI_ARG_OPTIONAL && !as_list) g_ptr_array_add(args, g_strconcat("--", op->name, "=", op->example, NULL));
  else {
    g_ptr_array_add(args, g_strconcat("--", op->name, NULL));
    g_ptr_array_add(args, g_strdup(op->example));
  }
}

/* The options some options need beside them (--paje-links: a Paje trace), for the commands that take them. */
static void add_companions(GPtrArray *args, const cli_option *op, unsigned bit)
{
  static const char *const C[] = {"--paje", "p.paje", "--chrome-trace", "c.json", "--timeline-svg", "t.svg"};
  if (!(bit & (CMD_SIMULATE | CMD_REPLAY))) return;
  for (size_t i = 0; i < G_N_ELEMENTS(C); i += 2)
    if (strcmp(C[i] + 2, op->name)) {
      g_ptr_array_add(args, g_strdup(C[i]));
      g_ptr_array_add(args, g_strdup(C[i + 1]));
    }
}

static size_t index_of(const cli_option *op) { return (size_t)(op - CLI_OPTIONS); }

/* Every option, on every command it applies to, parses its example value into the place the table
 * names (the value read back as the option's own kind says it should be). */
START_TEST(test_every_option_parses_its_example_on_each_command_it_applies_to)
{
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    ck_assert_msg(op->arg == CLI_ARG_NONE || op->example, "--%s: no example value", op->name);
    for (size_t k = 0; k < G_N_ELEMENTS(COMMANDS); k++) {
      if (!(op->commands & COMMANDS[k].bit)) continue;
      g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
      gboolean as_list = COMMANDS[k].bit == CMD_SWEEP && op->list != CLI_LIST_NONE;
      add_option(args, op, as_list);
      add_companions(args, op, COMMANDS[k].bit);
      g_autoptr(GPtrArray) argv = g_ptr_array_new();
      for (guint a = 0; a < args->len; a++) g_ptr_array_add(argv, args->pdata[a]);
      cli_opts o;
      g_autofree char *msg = parse_argv(k, argv, &o);
      ck_assert_msg(msg == NULL, "%s --%s: %s", COMMANDS[k].name, op->name, msg);
      const char *ex = op->example;
      const char *given = o.given[op->same_as ? index_of(cli_option_find(op->same_as)) : i];
      ck_assert_msg(given != NULL, "%s --%s: not recorded as given", COMMANDS[k].name, op->name);
      if (as_list) ck_assert_str_eq(given, ex); /* the raw list, for cli_sweep_spec */
      else if (op->value == CLI_V_INT) ck_assert_int_eq(*(int *)((char *)&o + op->field), atoi(ex));
      else if (op->value == CLI_V_STRING) ck_assert_str_eq(*(const char **)((char *)&o + op->field), ex);
      else if (op->value == CLI_V_FLAG) ck_assert_int_eq(*(int *)((char *)&o + op->field), op->flag_value);
      else if (op->value == CLI_V_BOOL) ck_assert_int_eq(*(int *)((char *)&o + op->field), TRUE); /* "1" */
      else if (op->value == CLI_V_WHATIF && op->axis != WHATIF_FABRIC)
        ck_assert_double_eq(o.whatif.v[op->axis], strtod(ex, NULL));
      cli_opts_clear(&o);
    }
  }
}
END_TEST

/* On a command it does not apply to, an option is an error naming it and the command. */
START_TEST(test_every_option_is_refused_on_a_command_it_does_not_apply_to)
{
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    for (size_t k = 0; k < G_N_ELEMENTS(COMMANDS); k++) {
      if (op->commands & COMMANDS[k].bit) continue;
      g_autoptr(GPtrArray) argv = g_ptr_array_new();
      g_autofree char *name = g_strconcat("--", op->name, NULL);
      g_ptr_array_add(argv, name);
      if (op->arg == CLI_ARG_REQUIRED) g_ptr_array_add(argv, "x");
      cli_opts o;
      g_autofree char *msg = parse_argv(k, argv, &o);
      g_autofree char *want = g_strdup_printf("--%s: does not apply to %s (see layoutsim help %s)", op->name,
                                              COMMANDS[k].name, COMMANDS[k].name);
      ck_assert_msg(msg && !strcmp(msg, want), "%s --%s: got %s", COMMANDS[k].name, op->name, msg);
      cli_opts_clear(&o);
    }
  }
}
END_TEST

/* An option given twice is refused (as a repeated key of a JSON file), under the same name, a synonym
 * or another spelling: --tp 8 --tp 4 kept the last before. */
START_TEST(test_an_option_given_twice_is_refused_by_any_of_its_names)
{
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    if (op->repeatable) continue; /* --stack-set: each value one more key (its own test: test_stack_set) */
    size_t k = 0;
    while (!(op->commands & COMMANDS[k].bit)) k++;
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
    add_option(args, op, FALSE);
    add_option(args, op, FALSE);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    for (guint a = 0; a < args->len; a++) g_ptr_array_add(argv, args->pdata[a]);
    cli_opts o;
    g_autofree char *msg = parse_argv(k, argv, &o);
    g_autofree char *want = g_strdup_printf("--%s: given more than once (allowed: each option once)", op->name);
    if (op->alias || op->same_as) { /* named with its other names */
      g_autofree char *prefix = g_strdup_printf("--%s: given more than once, as one of --", op->name);
      ck_assert_msg(msg && g_str_has_prefix(msg, prefix), "--%s twice: got %s", op->name, msg);
    } else {
      ck_assert_msg(msg && !strcmp(msg, want), "--%s twice: got %s", op->name, msg);
    }
    cli_opts_clear(&o);
  }
  struct { size_t k; const char *line[4]; } pairs[] = {
      {0, {"--trace-ranks", "0", "--chrome-ranks", "1"}}, {0, {"--zero", "1", "--no-zero1", NULL}},
      {3, {"-j", "2", "--jobs", "3"}}};
  for (size_t p = 0; p < G_N_ELEMENTS(pairs); p++) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    for (int a = 0; a < 4 && pairs[p].line[a]; a++) g_ptr_array_add(argv, (gpointer)pairs[p].line[a]);
    cli_opts o;
    g_autofree char *msg = parse_argv(pairs[p].k, argv, &o);
    ck_assert_msg(msg && strstr(msg, "given more than once"), "%s %s: got %s", pairs[p].line[0], pairs[p].line[2], msg);
    cli_opts_clear(&o);
  }
}
END_TEST

/* The help of a command, as layoutsim help COMMAND prints it. */
static char *help_of(size_t k)
{
  GString *out = g_string_new(NULL);
  cli_help_command(out, cli_command_find(COMMANDS[k].name));
  return g_string_free(out, FALSE);
}

/* Each option has its line ("  --name ARG   text") in the help of exactly the commands it applies to. */
START_TEST(test_every_option_is_in_the_help_of_exactly_the_commands_it_applies_to)
{
  for (size_t k = 0; k < G_N_ELEMENTS(COMMANDS); k++) {
    g_autofree char *help = help_of(k);
    for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
      const cli_option *op = &CLI_OPTIONS[i];
      g_autofree char *line = op->short_name ? g_strdup_printf("\n  -%c, --%s", op->short_name, op->name)
                                             : g_strdup_printf("\n  --%s", op->name);
      const char *at = strstr(help, line);
      while (at && at[strlen(line)] != ' ' && at[strlen(line)] != '[') at = strstr(at + 1, line); /* not --paje-links for --paje */
      gboolean applies = (op->commands & COMMANDS[k].bit) != 0;
      ck_assert_msg((at != NULL) == applies, "help %s: --%s %s", COMMANDS[k].name, op->name,
                    applies ? "missing" : "shown, but it does not apply");
    }
  }
}
END_TEST

/* The notes of a help text that say which options take a list ("  sweep: ... take a comma-separated
 * list ..."), their lines joined. */
static char *list_notes(const char *help)
{
  GString *notes = g_string_new(NULL);
  for (const char *p = strstr(help, "\n  sweep: "); p; p = strstr(p + 1, "\n  sweep: ")) {
    const char *end = strstr(p + 1, "\n\n");
    g_autofree char *note = g_strndup(p + 1, end ? (gsize)(end - p - 1) : strlen(p + 1));
    g_auto(GStrv) lines = g_strsplit(note, "\n  ", -1);
    g_autofree char *joined = g_strjoinv(" ", lines);
    g_string_append_printf(notes, "%s|", joined);
  }
  return g_string_free(notes, FALSE);
}

/* Whether the note part `part` names --name as an option (not a longer one it begins). */
static gboolean names(const char *part, const char *name)
{
  g_autofree char *n = g_strconcat("--", name, NULL);
  for (const char *p = strstr(part, n); p; p = strstr(p + 1, n))
    if (strchr(",; :", p[strlen(n)])) return TRUE;
  return FALSE;
}

/* help sweep names, in its notes, every option that takes a list and only those, and which take a
 * range; the other commands' help has no such note (their options take one value). */
START_TEST(test_help_sweep_names_every_option_that_takes_a_list)
{
  size_t sweep = 6;
  ck_assert_str_eq(COMMANDS[sweep].name, "sweep");
  g_autofree char *help = help_of(sweep);
  g_autofree char *notes = list_notes(help);
  g_auto(GStrv) each = g_strsplit(notes, "|", -1);
  g_autoptr(GString) lists = g_string_new(NULL), ranges = g_string_new(NULL);
  for (char **n = each; *n && **n; n++) {
    const char *take = strstr(*n, " take a comma-separated list"), *also = strstr(*n, " also ranges");
    ck_assert_msg(take != NULL, "%s", *n);
    g_string_append_len(lists, *n, take - *n);
    g_string_append(lists, ",");
    if (also) {
      const char *from = also;
      while (from > *n && *from != ';') from--;
      g_string_append_len(ranges, from, also - from);
      g_string_append(ranges, ",");
    }
  }
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    ck_assert_msg(names(lists->str, op->name) == (op->list != CLI_LIST_NONE), "help sweep: --%s %s", op->name,
                  op->list != CLI_LIST_NONE ? "takes a list, not said" : "said to take a list");
    ck_assert_msg(names(ranges->str, op->name) == (op->list != CLI_LIST_NONE && op->ranges), "help sweep: ranges of --%s",
                  op->name);
  }
  for (size_t k = 0; k < G_N_ELEMENTS(COMMANDS); k++) {
    if (k == sweep) continue;
    g_autofree char *other = help_of(k);
    ck_assert_msg(!strstr(other, "comma-separated list"), "help %s: a note of sweep's lists", COMMANDS[k].name);
  }
}
END_TEST

/* Every axis of the sweep (analysis/sweep.h: its layout axes, what-ifs, GPU counts, profiles and stacks)
 * is filled by exactly one option's list, and cli_sweep_spec puts each option's list there. */
START_TEST(test_each_sweep_axis_takes_the_list_of_exactly_one_option)
{
  int layout[AX_N] = {0}, whatif[WHATIF_N] = {0}, folded[AXIS_N] = {0}, gpus = 0, profiles = 0, stacks = 0, imbalance = 0;
  for (size_t i = 0; i < CLI_N_OPTIONS; i++) {
    const cli_option *op = &CLI_OPTIONS[i];
    switch (op->list) {
    case CLI_LIST_LAYOUT: layout[op->axis]++; break;
    case CLI_LIST_WHATIF: whatif[op->axis]++; break;
    case CLI_LIST_FOLDED: folded[op->axis]++; break;
    case CLI_LIST_IMBALANCE: imbalance++; break;
    case CLI_LIST_GPUS: gpus++; break;
    case CLI_LIST_PROFILES: profiles++; break;
    case CLI_LIST_STACKS: stacks++; break;
    default: break;
    }
    if (op->value == CLI_V_WHATIF) /* the what-if's messages name the option by whatif_option's name */
      ck_assert_str_eq(op->name, whatif_option(op->axis));
    if (op->list == CLI_LIST_NONE) continue;
    ck_assert_msg(op->left_out != NULL, "--%s: what a sweep covers without it is not said", op->name);
    /* --name A,B reaches its place in the spec as two values */
    g_autofree char *two = op->value == CLI_V_INT ? g_strdup_printf("%s,%ld", op->example, op->lo)
                           : op->value == CLI_V_BOOL ? g_strdup("0,1")
                           : op->value == CLI_V_WHATIF && op->axis != WHATIF_FABRIC ? g_strdup_printf("%s,%s0", op->example, op->example)
                           : op->value == CLI_V_REAL ? g_strdup_printf("%s,2", op->example)
                           : op->list == CLI_LIST_PROFILES ? g_strdup("a100-sxm4-80gb,h100-sxm5-80gb")
                           : op->list == CLI_LIST_STACKS ? g_strdup("study,megatron-deepspeed")
                           : op->axis == AX_CKPT && op->list == CLI_LIST_LAYOUT ? g_strdup("none,every_layer")
                           : op->axis == AX_ATTN && op->list == CLI_LIST_LAYOUT ? g_strdup("flash2,torch")
                           : op->axis == AX_SCHED && op->list == CLI_LIST_LAYOUT ? g_strdup("1f1b,gpipe")
                           : op->axis == AX_PREC && op->list == CLI_LIST_LAYOUT ? g_strdup("bf16,fp8")
                                                                                   : g_strdup("fat-tree,rail");
    g_autofree char *name = g_strconcat("--", op->name, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, name);
    g_ptr_array_add(argv, two);
    cli_opts o;
    g_autofree char *msg = parse_argv(6, argv, &o);
    ck_assert_msg(msg == NULL, "sweep --%s %s: %s", op->name, two, msg);
    sweep_spec s;
    GError *err = NULL;
    ck_assert_msg(cli_sweep_spec(&o, &s, &err), "sweep --%s %s: %s", op->name, two, err ? err->message : "");
    guint len = op->list == CLI_LIST_LAYOUT ? s.layout[op->axis]->len
                : op->list == CLI_LIST_WHATIF ? s.whatif[op->axis]->len
                : op->list == CLI_LIST_FOLDED ? s.folded[op->axis]->len
                : op->list == CLI_LIST_IMBALANCE ? s.moe_imbalance->len
                : op->list == CLI_LIST_GPUS ? s.gpus->len
                : op->list == CLI_LIST_PROFILES ? s.profiles->len
                                                : s.stacks->len;
    ck_assert_msg(len == 2, "sweep --%s %s: %u values", op->name, two, len);
    cli_sweep_spec_clear(&s);
    cli_opts_clear(&o);
    /* every element is checked, not the first only: "EXAMPLE,x" is refused naming the option */
    if (op->list == CLI_LIST_PROFILES || op->list == CLI_LIST_STACKS) continue; /* names, read by the sweep */
    g_autofree char *bad = g_strconcat(op->example, ",x", NULL);
    g_autoptr(GPtrArray) argv2 = g_ptr_array_new();
    g_ptr_array_add(argv2, name);
    g_ptr_array_add(argv2, bad);
    g_autofree char *msg2 = parse_argv(6, argv2, &o);
    ck_assert_msg(msg2 == NULL, "%s", msg2);
    ck_assert_msg(!cli_sweep_spec(&o, &s, &err) && strstr(err->message, "'x'"), "sweep --%s %s: accepted", op->name, bad);
    g_clear_error(&err);
    cli_sweep_spec_clear(&s);
    cli_opts_clear(&o);
    /* an integer list takes ranges: LO-(LO+1) is two values */
    ck_assert_msg(op->value != CLI_V_INT || op->ranges, "--%s: an integer list without ranges", op->name);
  }
  for (int a = 0; a < AX_N; a++) ck_assert_msg(layout[a] == 1, "layout axis %d: %d options", a, layout[a]);
  for (int a = 0; a < WHATIF_N; a++) ck_assert_msg(whatif[a] == 1, "what-if %s: %d options", whatif_option(a), whatif[a]);
  for (int a = 0; a < AXIS_N; a++) /* the folded axes of the axes table (ep, etp) each from one option */
    ck_assert_msg(folded[a] == (axis_get(a)->folded && axis_get(a)->listable), "axis %s: %d options",
                  axis_get(a)->name, folded[a]);
  ck_assert_int_eq(imbalance, 1);
  ck_assert_int_eq(gpus, 1);
  ck_assert_int_eq(profiles, 1);
  ck_assert_int_eq(stacks, 1);
}
END_TEST

/* --tp's largest value is one: simulate's and the sweep's list's (they were 16384 and 1024). */
START_TEST(test_the_tp_maximum_is_the_same_for_one_value_and_a_list)
{
  const cli_option *tp = cli_option_find("tp");
  g_autofree char *max = g_strdup_printf("%ld", tp->hi), *over = g_strdup_printf("%ld", tp->hi + 1);
  const char *values[] = {max, over};
  for (int v = 0; v < 2; v++) {
    g_autoptr(GPtrArray) a1 = g_ptr_array_new(), a2 = g_ptr_array_new();
    g_ptr_array_add(a1, "--tp");
    g_ptr_array_add(a1, (gpointer)values[v]);
    g_ptr_array_add(a2, "--tp");
    g_ptr_array_add(a2, (gpointer)values[v]);
    cli_opts one, list;
    g_autofree char *m1 = parse_argv(0, a1, &one), *m2 = parse_argv(6, a2, &list);
    ck_assert_msg(m2 == NULL, "%s", m2);
    sweep_spec s;
    GError *err = NULL;
    gboolean ok = cli_sweep_spec(&list, &s, &err);
    cli_sweep_spec_clear(&s);
    ck_assert_int_eq(m1 == NULL, ok);
    if (!ok) ck_assert_str_eq(m1, err->message);
    g_clear_error(&err);
    cli_opts_clear(&one);
    cli_opts_clear(&list);
  }
}
END_TEST

/* --moe-capacity-factor takes one value in sweep: cli_sweep_spec makes it every layout's, as the model's own
 * capacity_factor (docs/moe.md); on a model without experts it is refused naming the field. */
START_TEST(test_sweep_capacity_factor_reaches_every_layout)
{
  static const char *const ok[] = {"--model", "qwen3-30b-a3b", "--moe-capacity-factor", "1.25"};
  static const char *const dense[] = {"--moe-capacity-factor", "1"};
  for (int c = 0; c < 2; c++) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    for (guint i = 0; i < (c ? G_N_ELEMENTS(dense) : G_N_ELEMENTS(ok)); i++)
      g_ptr_array_add(argv, (gpointer)(c ? dense[i] : ok[i]));
    cli_opts o;
    g_autofree char *msg = parse_argv(6, argv, &o);
    ck_assert_msg(msg == NULL, "%s", msg);
    sweep_spec s;
    GError *err = NULL;
    gboolean done = cli_sweep_spec(&o, &s, &err);
    if (!c) {
      ck_assert(done);
      ck_assert_double_eq(s.m.moe.capacity_factor, 1.25);
      cli_sweep_spec_clear(&s);
    } else {
      ck_assert(!done);
      ck_assert_str_eq(err->message, "moe_capacity_factor: 1 on llama-13b, a model without experts (allowed: 0)");
      g_error_free(err);
    }
    cli_opts_clear(&o);
  }
}
END_TEST

/* --schedule dualpipev alone runs the V's two chunks (DualPipeV holds exactly 2 per rank: sched_def.default_chunks);
 * a --virtual-stages other than 2 with it is refused naming the option; interleaved implies nothing (V stays 1). */
START_TEST(test_dualpipev_alone_implies_two_virtual_stages_and_refuses_another)
{
  struct { const char *line; int chunks; const char *msg; } cases[] = {
      {"simulate --pp 4 --schedule dualpipev", 2, NULL},
      {"simulate --pp 4 --schedule dualpipev --virtual-stages 2", 2, NULL},
      {"simulate --pp 4 --schedule interleaved", 1, NULL},
      {"simulate --pp 4", 1, NULL},
      {"simulate --pp 4 --schedule dualpipev --virtual-stages 1", 0,
       "--virtual-stages: 1 with --schedule dualpipev (allowed: 2, or --virtual-stages left out, which is 2)"},
      {"simulate --pp 4 --schedule dualpipev --virtual-stages 4", 0,
       "--virtual-stages: 4 with --schedule dualpipev (allowed: 2, or --virtual-stages left out, which is 2)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cli_opts o;
    g_autofree char *msg = parse(cases[i].line, &o);
    ck_assert_msg(msg == NULL, "%s: %s", cases[i].line, msg);
    GError *err = NULL;
    gboolean ok = cli_resolve(&o, FALSE, &err);
    if (cases[i].msg) {
      ck_assert_msg(!ok, "%s: accepted", cases[i].line);
      ck_assert_str_eq(err->message, cases[i].msg);
      g_error_free(err);
    } else {
      ck_assert_msg(ok, "%s: %s", cases[i].line, err ? err->message : "");
      ck_assert_int_eq(o.rq.l.virtual_stages, cases[i].chunks);
    }
    cli_opts_clear(&o);
  }
}
END_TEST

/* --profile's help names the shipped profiles (cli/option_table.c, its text a golden of tests/cli/help.tesh): its
 * words with a digit in them are exactly the files of platforms/profiles, so a profile added or removed there
 * without its help fails here. */
START_TEST(test_the_profile_help_names_exactly_the_shipped_profiles)
{
  const cli_option *op = cli_option_find("profile");
  ck_assert_ptr_nonnull(op);
  g_autoptr(GPtrArray) shipped = check_shipped_profiles();
  g_autoptr(GPtrArray) named = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) words = g_strsplit_set(op->help, " ,;()\n", -1);
  for (char **w = words; *w; w++)
    if (strpbrk(*w, "0123456789") && !strchr(*w, '/')) g_ptr_array_add(named, g_strdup(*w));
  g_ptr_array_sort(named, check_shipped_cmp);
  ck_assert_uint_eq(named->len, shipped->len);
  for (guint i = 0; i < shipped->len; i++)
    ck_assert_str_eq(named->pdata[i], shipped->pdata[i]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("parse");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_a_parse_after_an_error_inside_an_option_cluster_reads_only_its_own_arguments);
  tcase_add_test(tc, test_every_option_parses_its_example_on_each_command_it_applies_to);
  tcase_add_test(tc, test_every_option_is_refused_on_a_command_it_does_not_apply_to);
  tcase_add_test(tc, test_an_option_given_twice_is_refused_by_any_of_its_names);
  tcase_add_test(tc, test_every_option_is_in_the_help_of_exactly_the_commands_it_applies_to);
  tcase_add_test(tc, test_help_sweep_names_every_option_that_takes_a_list);
  tcase_add_test(tc, test_each_sweep_axis_takes_the_list_of_exactly_one_option);
  tcase_add_test(tc, test_the_tp_maximum_is_the_same_for_one_value_and_a_list);
  tcase_add_test(tc, test_sweep_capacity_factor_reaches_every_layout);
  tcase_add_test(tc, test_dualpipev_alone_implies_two_virtual_stages_and_refuses_another);
  tcase_add_test(tc, test_the_profile_help_names_exactly_the_shipped_profiles);
  suite_add_tcase(s, tc);
  return check_run(s);
}
