/* test_layout_fields -- every layout switch (workloads/layout.h: a gboolean field of LAYOUT_FIELDS with `shows`
 * bits) reaches every place its bits name, read off the table itself so that a new entry is tested without
 * a line here: its option sets it (cli/option_table.c), predict's column sets it and only it and refuses
 * anything but 0 and 1, the generator writes " NAME=1" in the layout string and 1 in graph meta, a graph file
 * carries it through save and load, the report says it in JSON and in words; and none of them when off. Every
 * enumeration (layout_enum) likewise: its option and column parse its names, its layout-string entry. */
#include <check.h>
#include <string.h>

#include "analysis/predict.h"
#include "analysis/report.h"
#include "analysis/simulate.h"
#include "check_main.h"
#include "check_table.h"
#include "check_tmpdir.h"
#include "cli/option_table.h"
#include "cli/options.h"
#include "platforms/plat_file.h"
#include "sim_child.h"
#include "workloads/generate.h"
#include "workloads/layout.h"
#include "workloads/precision.h"
#include "workloads/schedule.h"

/* The switches of the table; at least the two known today (a table that lost its `shows` would test nothing). */
static const layout_field *switches(gsize *n, gsize *out_n)
{
  gsize nf;
  const layout_field *f = layout_fields(&nf);
  *n = nf;
  *out_n = 0;
  for (gsize i = 0; i < nf; i++) *out_n += f[i].shows != 0;
  ck_assert_uint_ge(*out_n, 2);
  return f;
}

static gboolean on(const layout *l, const layout_field *f) { return *(const gboolean *)((const char *)l + f->offset); }

/* Each switch is a gboolean with a CLI_V_BOOL option of its name in dashes storing into rq.l at its offset. */
START_TEST(test_every_switch_has_its_boolean_option_on_its_field)
{
  gsize nf, ns;
  const layout_field *f = switches(&nf, &ns);
  for (gsize i = 0; i < nf; i++) {
    if (!f[i].shows) continue;
    ck_assert_msg(f[i].type == LAYOUT_FIELD_INT && f[i].size == sizeof(gboolean), "%s is not a gboolean", f[i].name);
    ck_assert_msg(!(f[i].shows & LAYOUT_SHOW_REPORT) || (f[i].text && f[i].text[0]), "%s: no report text", f[i].name);
    g_autofree char *opt = g_strdelimit(g_strdup(f[i].name), "_", '-');
    const cli_option *o = cli_option_find(opt);
    ck_assert_msg(o != NULL, "switch %s has no option --%s", f[i].name, opt);
    ck_assert_int_eq(o->value, CLI_V_BOOL);
    ck_assert_msg(o->field == offsetof(cli_opts, rq.l) + f[i].offset, "--%s does not store into layout.%s", opt,
                  f[i].name);
  }
}
END_TEST

/* The switches known today keep where they show (docs/moe.md: the prediction tables' optional columns
 * overlap_moe_ep_comm and cuda_graph, graph meta cuda_graph, which the replay reads): an entry that lost a bit
 * would drop it silently everywhere the table is iterated. */
START_TEST(test_the_known_switches_show_where_documented)
{
  static const struct { const char *name; unsigned shows; } known[] = {
      {"overlap_moe_ep_comm", LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN},
      {"cuda_graph", LAYOUT_SHOW_STRING | LAYOUT_SHOW_REPORT | LAYOUT_SHOW_COLUMN | LAYOUT_SHOW_META}};
  gsize nf, ns;
  const layout_field *f = switches(&nf, &ns);
  for (gsize k = 0; k < G_N_ELEMENTS(known); k++) {
    const layout_field *hit = NULL;
    for (gsize i = 0; i < nf; i++)
      if (!strcmp(f[i].name, known[k].name)) hit = &f[i];
    ck_assert_msg(hit != NULL, "%s is not in LAYOUT_FIELDS", known[k].name);
    ck_assert_msg(hit->shows == known[k].shows, "%s shows %#x, not %#x", known[k].name, hit->shows, known[k].shows);
  }
  for (gsize i = 0; i < nf; i++) /* the replay reads graph_meta.cuda_graph (sim/replay.c) */
    if (!strcmp(f[i].name, "cuda_graph")) ck_assert_uint_eq(f[i].meta_offset, offsetof(graph_meta, cuda_graph));
}
END_TEST

static const char *const REQUIRED[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                       "attention_kernel", "micro_batch", "tp", "pp", "sp", "ep", "precision"};
/* a MoE layout on which every switch is valid: ep 8, pp 1, 1f1b (the all-to-all overlap's combined 1F1B), FP8 (the
 * FP8 primary weights') */
static const char *const ROW[] = {"qwen3-30b-a3b", "1024", "16", "151936", "8",  "none",
                                  "flash2",        "1",    "1",  "1",      "0",  "8", "fp8"};

/* A one-row table of the required columns and every switch's column, switch `which` set to `cell`, the rest empty. */
static csv_table *switch_row(const layout_field *f, gsize nf, gsize which, const char *cell)
{
  g_autoptr(GPtrArray) cols = g_ptr_array_new();
  GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
  for (gsize c = 0; c < G_N_ELEMENTS(REQUIRED); c++) {
    g_ptr_array_add(cols, (gpointer)REQUIRED[c]);
    g_ptr_array_add(row, g_strdup(ROW[c]));
  }
  for (gsize i = 0; i < nf; i++)
    if (f[i].shows & LAYOUT_SHOW_COLUMN) {
      g_ptr_array_add(cols, (gpointer)f[i].name);
      g_ptr_array_add(row, g_strdup(i == which ? cell : ""));
    }
  csv_table *t = csv_new((const char *const *)cols->pdata, cols->len);
  csv_append_row(t, row, 2);
  return t;
}

/* predict's configuration on the shipped H100 profile and the nemo stack, the GPU's memory as capacity */
static predict_cfg predict_cfg_h100_nemo(void)
{
  predict_cfg cfg = {.gen = gen_default_options()};
  GError *err = NULL;
  ck_assert_msg(profile_load_with_stack("h100-sxm5-80gb", "nemo", &cfg.prof, &err), "%s", err ? err->message : "");
  cfg.capacity_gib = cfg.prof.memory_gib;
  return cfg;
}

/* A switch's column is one of predict's columns; 1 in it turns on that switch and no other, 0 or empty leaves
 * every switch off, 2 is the row's error naming the column, the value and the allowed ones. */
START_TEST(test_every_switch_column_round_trips_through_predict)
{
  gsize nf, ns;
  const layout_field *f = switches(&nf, &ns);
  guint ncols;
  g_autofree const char **cols = predict_columns(&ncols);
  predict_cfg cfg = predict_cfg_h100_nemo();
  GError *err = NULL;
  for (gsize i = 0; i < nf; i++) {
    if (!(f[i].shows & LAYOUT_SHOW_COLUMN)) continue;
    gboolean listed = FALSE;
    for (guint c = 0; c < ncols; c++) listed |= !strcmp(cols[c], f[i].name);
    ck_assert_msg(listed, "%s is not among predict_columns", f[i].name);
    const char *cells[] = {"1", "0", ""};
    for (gsize v = 0; v < G_N_ELEMENTS(cells); v++) {
      g_autoptr(csv_table) t = switch_row(f, nf, i, cells[v]);
      sim_request rq;
      ck_assert_msg(predict_row_request(t, 0, &cfg, &rq, &err), "%s='%s': %s", f[i].name, cells[v],
                    err ? err->message : "");
      for (gsize j = 0; j < nf; j++)
        if (f[j].shows)
          ck_assert_msg(on(&rq.l, &f[j]) == (j == i && v == 0), "%s='%s' leaves %s %s", f[i].name, cells[v],
                        f[j].name, on(&rq.l, &f[j]) ? "on" : "off");
    }
    g_autoptr(csv_table) bad = switch_row(f, nf, i, "2");
    sim_request rq;
    ck_assert(!predict_row_request(bad, 0, &cfg, &rq, &err));
    g_autofree char *want = g_strdup_printf("%s: '2' is neither off nor on (allowed: 0, 1)", f[i].name);
    ck_assert_str_eq(err->message, want);
    g_clear_error(&err);
  }
}
END_TEST

/* A small dense layout on one GPU, validated, then switch `which` turned on (-1: none). */
static layout one_gpu(model *m, const layout_field *f, int which)
{
  *m = (model){.layers = 2, .hidden = 512, .heads = 8, .kv_heads = 8, .ffn = 2048, .vocab = 1024};
  g_strlcpy(m->name, "dense-2", sizeof m->name);
  layout l = layout_default();
  l.gpus = 1;
  l.seq_len = 256;
  l.global_batch = 2;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, m, &err), "%s", err ? err->message : "");
  if (which >= 0) *(gboolean *)((char *)&l + f[which].offset) = TRUE;
  return l;
}

static int meta_int(const graph_meta *gm, const layout_field *f) { return *(const int *)((const char *)gm + f->meta_offset); }

/* On, a switch is " NAME=1" in the layout string (LAYOUT_SHOW_STRING) and 1 in graph meta (LAYOUT_SHOW_META),
 * and a graph file saved and loaded keeps both; off (every switch), neither. */
START_TEST(test_every_switch_reaches_the_graph_and_its_file)
{
  gsize nf, ns;
  const layout_field *f = switches(&nf, &ns);
  gen_options o = gen_default_options();
  for (int which = -1; which < (int)nf; which++) {
    if (which >= 0 && !(f[which].shows & (LAYOUT_SHOW_STRING | LAYOUT_SHOW_META))) continue;
    model m;
    layout l = one_gpu(&m, f, which);
    GError *err = NULL;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    g_autofree char *path = tmp_path("g.json");
    ck_assert_msg(graph_save(g, path, &err), "%s", err ? err->message : "");
    g_autoptr(graph) back = graph_load(path, &err);
    ck_assert_msg(back != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(back->meta.layout, g->meta.layout);
    for (gsize j = 0; j < nf; j++) {
      if (!f[j].shows) continue;
      gboolean want = (int)j == which;
      g_autofree char *said = g_strdup_printf(" %s=1", f[j].name);
      gboolean in_string = strstr(g->meta.layout, said) != NULL;
      ck_assert_msg(in_string == (want && (f[j].shows & LAYOUT_SHOW_STRING)), "layout string '%s' with %s %s",
                    g->meta.layout, f[j].name, want ? "on" : "off");
      if (!(f[j].shows & LAYOUT_SHOW_META)) continue;
      ck_assert_msg(meta_int(&g->meta, &f[j]) == want, "meta.%s %d with it %s", f[j].name, meta_int(&g->meta, &f[j]),
                    want ? "on" : "off");
      ck_assert_msg(meta_int(&back->meta, &f[j]) == want, "meta.%s %d after save and load", f[j].name,
                    meta_int(&back->meta, &f[j]));
    }
  }
}
END_TEST

/* out[0]: with every switch off, 10 for each switch the report says; out[1 + k]: with the k-th switch of bit
 * LAYOUT_SHOW_REPORT on, 1 if the JSON says "NAME":true, + 2 if the text says ", TEXT", + 10 for any other one said;
 * the last: with every switch on, 100 for each said in both. */
static void reports(void *arg, double out[SIM_CHILD_MAX])
{
  (void)arg;
  gsize nf;
  const layout_field *f = layout_fields(&nf);
  sim_request rq = {.gen = gen_default_options()};
  if (!profile_load_with_stack("h100-sxm5-80gb", "nemo", &rq.prof, NULL)) return;
  rq.capacity_gib = rq.prof.memory_gib;
  rq.l = one_gpu(&rq.m, f, -1);
  sim_outcome o = {0};
  if (!sim_run_layout(&rq, &o, NULL)) return;
  int slot = 0;
  for (int which = -1; which <= (int)nf; which++) { /* nf: every switch on at once */
    if ((which >= 0 && which < (int)nf && !(f[which].shows & LAYOUT_SHOW_REPORT)) || slot == SIM_CHILD_MAX) continue;
    sim_request r = rq;
    for (gsize k = 0; k < nf; k++)
      if (f[k].shows && ((int)k == which || which == (int)nf)) *(gboolean *)((char *)&r.l + f[k].offset) = TRUE;
    cJSON *j = report_json(&o, &r, &r.prof, NULL);
    char *json = cJSON_PrintUnformatted(j);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    report_text(mem, &o, &r, &r.prof, NULL);
    fclose(mem);
    double said = 0;
    for (gsize k = 0; k < nf; k++) {
      if (!(f[k].shows & LAYOUT_SHOW_REPORT)) continue;
      g_autofree char *key = g_strdup_printf("\"%s\":true", f[k].name);
      g_autofree char *words = g_strdup_printf(", %s", f[k].text);
      gboolean in_json = strstr(json, key) != NULL, in_text = strstr(text, words) != NULL;
      if ((int)k == which) said += in_json + 2 * in_text;   /* 3: both */
      else if (which == (int)nf) said += 100 * (in_json && in_text); /* all on: 100 each said in both */
      else said += 10 * (in_json + in_text);                /* another switch said: >= 10 */
    }
    out[slot++] = said;
    cJSON_free(json);
    cJSON_Delete(j);
    free(text);
  }
  sim_outcome_clear(&o);
}

/* The report says each switch on, in its JSON ("NAME": true) and in its text (", TEXT"), and no other one; with
 * every switch off, none. */
START_TEST(test_every_switch_is_said_by_the_report_when_on_only)
{
  gsize nf, ns;
  const layout_field *f = switches(&nf, &ns);
  gsize reported = 0;
  for (gsize i = 0; i < nf; i++) reported += (f[i].shows & LAYOUT_SHOW_REPORT) != 0;
  ck_assert_uint_lt(reported + 1, SIM_CHILD_MAX); /* one slot each, the all-off and the all-on ones */
  double out[SIM_CHILD_MAX] = {0};
  sim_child_run(reports, NULL, out);
  ck_assert_msg(out[0] == 0, "a switch said with all off (%g)", out[0]);
  int slot = 1;
  for (gsize i = 0; i < nf; i++)
    if (f[i].shows & LAYOUT_SHOW_REPORT) {
      ck_assert_msg(out[slot] == 3, "%s on: %g (3: said in JSON and text, no other switch)", f[i].name, out[slot]);
      slot++;
    }
  ck_assert_msg(out[slot] == 100.0 * reported, "every switch on: %g (100 for each of the %zu said)", out[slot],
                (size_t)reported);
}
END_TEST

/* A one-row table of the required columns (ROW) and col, which is cell (a required column replaced, another added). */
static csv_table *row_with(const char *col, const char *cell)
{
  const char *hdr[G_N_ELEMENTS(REQUIRED) + 1], *cells[G_N_ELEMENTS(REQUIRED) + 1];
  gsize n = 0;
  for (gsize c = 0; c < G_N_ELEMENTS(REQUIRED); c++)
    if (strcmp(REQUIRED[c], col)) {
      hdr[n] = REQUIRED[c];
      cells[n++] = ROW[c];
    }
  hdr[n] = col;
  cells[n++] = cell;
  return check_one_row(hdr, n, cells);
}

/* Whether help names `name` as a word of its own: not inside another name (flash1 in flash1-legacy). */
static gboolean names_word(const char *help, const char *name)
{
  gsize len = strlen(name);
  for (const char *at = strstr(help, name); at; at = strstr(at + 1, name)) {
    gboolean starts = at == help || strchr(" \n|(", at[-1]), ends = !at[len] || strchr(" \n|),;:", at[len]);
    if (starts && ends) return TRUE;
  }
  return FALSE;
}

/* Each enumeration (layout.h layout_enum; at least cp_comm, norm_kernel, checkpointing, attention_kernel, schedule
 * and precision) has a CLI_V_ENUM option of its key in dashes storing into its field, whose help names every value,
 * which takes every name i as value i (in any case where the entry says so, else only as written), each alias as
 * its value, and refuses another with one line naming the key, the value and every name, each shown alias after its
 * value's; its key is a predict column refusing a bad cell with the same line, and with LAYOUT_SHOW_COLUMN setting it
 * the same way (empty: 0); with LAYOUT_SHOW_STRING the layout string says " KEY=NAME" for a value other than 0 where
 * the layout means it (said), nothing for 0. */
static void parse_option(const char *opt, const char *name, gboolean ok, const layout_field *f, int want)
{
  g_autofree char *arg = g_strdup_printf("--%s=%s", opt, name);
  char *argv[] = {"simulate", arg, NULL};
  cli_opts co;
  GError *err = NULL;
  cli_opts_init(&co);
  gboolean parsed = cli_parse(&co, "simulate", CMD_SIMULATE, 2, argv, &err);
  ck_assert_msg(parsed == ok, "%s: %s", arg, err ? err->message : "taken");
  if (ok) ck_assert_int_eq(layout_enum_value(&co.rq.l, f), want);
  g_clear_error(&err);
  cli_opts_clear(&co);
}

START_TEST(test_every_enumeration_parses_from_its_option_and_column_and_is_said_in_the_layout_string)
{
  gsize nf, nenums = 0;
  const layout_field *f = layout_fields(&nf);
  guint ncols;
  g_autofree const char **cols = predict_columns(&ncols);
  predict_cfg cfg = predict_cfg_h100_nemo();
  GError *err = NULL;
  for (gsize i = 0; i < nf; i++) {
    if (!f[i].en) continue;
    nenums++;
    ck_assert_msg(f[i].type == LAYOUT_FIELD_INT && f[i].size == sizeof(int) && !f[i].shows, "%s", f[i].name);
    ck_assert_ptr_eq(layout_enum_field(f[i].en->key), &f[i]);
    g_autofree char *opt = g_strdelimit(g_strdup(f[i].en->key), "_", '-');
    const cli_option *o = cli_option_find(opt);
    ck_assert_msg(o != NULL && o->value == CLI_V_ENUM && !o->parse, "enumeration %s has no CLI_V_ENUM option --%s "
                  "parsed by the table", f[i].name, opt);
    ck_assert_msg(o->field == offsetof(cli_opts, rq.l) + f[i].offset, "--%s does not store into layout.%s", opt,
                  f[i].name);
    int n = layout_enum_count(&f[i]);
    ck_assert_int_ge(n, 2);
    g_autoptr(GString) allowed = g_string_new(NULL);
    for (int v = 0; v < n; v++) {
      const char *name = layout_enum_name(&f[i], v);
      ck_assert_msg(names_word(o->help, name), "--%s's help does not name %s", opt, name);
      g_string_append_printf(allowed, "%s%s", v ? ", " : "", name);
      for (const layout_enum_alias *a = f[i].en->aliases; a && a->name; a++)
        if (a->value == v && a->shown) g_string_append_printf(allowed, " (or %s)", a->name);
      parse_option(opt, name, TRUE, &f[i], v);
      g_autofree char *upper = g_ascii_strup(name, -1);
      if (strcmp(upper, name)) parse_option(opt, upper, f[i].en->any_case, &f[i], v);
      layout l = layout_default();
      l.cp = 2; /* where cp_comm is said */
      *(int *)((char *)&l + f[i].offset) = v;
      g_autoptr(GString) str = g_string_new(NULL);
      layout_enums_string(&l, str);
      g_autofree char *entry = g_strdup_printf(" %s=%s", f[i].en->key, name);
      gboolean want = v != 0 && (f[i].en->shows & LAYOUT_SHOW_STRING) && layout_enum_said(&l, &f[i]);
      ck_assert_msg((strstr(str->str, entry) != NULL) == want, "layout string '%s' with %s", str->str, entry + 1);
    }
    if (o->list != CLI_LIST_NONE) { /* a sweep axis: what it covers left out, as its table entry says */
      int dflt = f[i].en->sweep_default > 0 ? layout_enum_sweep_count(&f[i], FALSE) : 0;
      int full = layout_enum_sweep_count(&f[i], TRUE);
      ck_assert_msg(o->left_out && full >= dflt, "--%s: no left_out, or full space %d below default %d", opt, full, dflt);
      for (int v = 0; v < n; v++) /* named exactly the values it covers, unless "every" says it */
        if (f[i].en->sweep_full != LAYOUT_SWEEP_ALL)
          ck_assert_msg(names_word(o->left_out, layout_enum_name(&f[i], v)) == (v < full), "--%s's left_out '%s' "
                        "and %s (covered: %d)", opt, o->left_out, layout_enum_name(&f[i], v), v < full);
        else if (v < dflt)
          ck_assert_msg(names_word(o->left_out, layout_enum_name(&f[i], v)), "--%s's left_out '%s' lacks %s", opt,
                        o->left_out, layout_enum_name(&f[i], v));
      if (f[i].en->sweep_full == LAYOUT_SWEEP_ALL)
        ck_assert_msg(strstr(o->left_out, "every"), "--%s's left_out '%s' says not every value", opt, o->left_out);
    }
    for (const layout_enum_alias *a = f[i].en->aliases; a && a->name; a++) {
      parse_option(opt, a->name, TRUE, &f[i], a->value);
      if (a->shown) ck_assert_msg(names_word(o->help, a->name), "--%s's help does not name %s", opt, a->name);
    }
    g_autofree char *bad = g_strdup_printf("--%s=no-such-%s", opt, f[i].name);
    char *argv[] = {"simulate", bad, NULL};
    cli_opts co;
    cli_opts_init(&co);
    ck_assert(!cli_parse(&co, "simulate", CMD_SIMULATE, 2, argv, &err));
    g_autofree char *want = g_strdup_printf("%s: unknown 'no-such-%s' (allowed: %s)", f[i].en->key, f[i].name, allowed->str);
    ck_assert_msg(strstr(err->message, want), "'%s' is not '%s'", err->message, want);
    g_clear_error(&err);
    cli_opts_clear(&co);
    gboolean listed = FALSE;
    for (guint c = 0; c < ncols; c++) listed |= !strcmp(cols[c], f[i].en->key);
    ck_assert_msg(listed, "%s is not among predict_columns", f[i].en->key);
    g_autofree char *cell = g_strdup_printf("no-such-%s", f[i].name);
    g_autoptr(csv_table) bt = row_with(f[i].en->key, cell);
    sim_request brq;
    ck_assert(!predict_row_request(bt, 0, &cfg, &brq, &err));
    g_autofree char *cell_want = g_strdup_printf("%s: unknown '%s' (allowed: %s)", f[i].en->key, cell, allowed->str);
    ck_assert_msg(!strcmp(err->message, cell_want), "column %s: '%s' is not '%s'", f[i].en->key, err->message,
                  cell_want);
    g_clear_error(&err);
    if (!(f[i].en->shows & LAYOUT_SHOW_COLUMN)) continue;
    for (int v = -1; v < n; v++) { /* -1: the cell empty */
      g_autoptr(csv_table) t = row_with(f[i].en->key, v < 0 ? "" : layout_enum_name(&f[i], v));
      sim_request rq;
      ck_assert_msg(predict_row_request(t, 0, &cfg, &rq, &err), "%s: %s", f[i].en->key, err ? err->message : "");
      ck_assert_int_eq(layout_enum_value(&rq.l, &f[i]), v < 0 ? 0 : v);
    }
  }
  ck_assert_uint_ge(nenums, 6);
}
END_TEST

/* The enumerations' spellings known today (docs/options.md, issue 27's papercut: --schedule 1F1B, --checkpointing
 * FULL as Megatron writes them), against the value each names: an entry that lost its case rule or an alias would
 * refuse them, one that gained a case rule would take FLASH2 or FP8, which nobody writes. */
START_TEST(test_the_known_enumerations_keep_their_spellings)
{
  static const struct { const char *key, *name; int want; } ok[] = {
      {"checkpointing", "none", CKPT_NONE},          {"checkpointing", "0", CKPT_NONE},
      {"checkpointing", "False", CKPT_NONE},         {"checkpointing", "every_layer", CKPT_EVERY_LAYER},
      {"checkpointing", "every-layer", CKPT_EVERY_LAYER}, {"checkpointing", "FULL", CKPT_EVERY_LAYER},
      {"checkpointing", "Selective", CKPT_SELECTIVE}, {"checkpointing", "mla_up_proj", CKPT_MLA_UP_PROJ},
      {"attention_kernel", "flash2+rmsnorm", ATTN_FLASH2_RMSNORM}, {"schedule", "1F1B", 0},
      {"precision", "fp8-cs", PREC_FP8_CS},          {"norm_kernel", "fused", NORMK_FUSED}};
  static const struct { const char *key, *name; } refused[] = {
      {"attention_kernel", "FLASH2"}, {"precision", "FP8"}, {"checkpointing", "true"}, {"cp_comm_type", "P2P"}};
  for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
    int v = -1;
    GError *err = NULL;
    ck_assert_msg(layout_enum_parse(layout_enum_field(ok[i].key), ok[i].name, &v, &err), "%s %s: %s", ok[i].key,
                  ok[i].name, err ? err->message : "");
    ck_assert_msg(v == ok[i].want, "%s %s: %d, not %d", ok[i].key, ok[i].name, v, ok[i].want);
  }
  int zb = -1, v;
  ck_assert(sched_parse("zb-h1", &zb, NULL) && layout_enum_parse(layout_enum_field("schedule"), "ZB-H1", &v, NULL));
  ck_assert_int_eq(v, zb); /* the schedules' names are their modules' (sched_zbh1.c) */
  for (gsize i = 0; i < G_N_ELEMENTS(refused); i++)
    ck_assert_msg(!layout_enum_parse(layout_enum_field(refused[i].key), refused[i].name, &v, NULL), "%s %s taken",
                  refused[i].key, refused[i].name);
  /* what a sweep without a list covers (docs/sweep.md): checkpointing none and every_layer, with --space full
   * selective and mlp too; the attention kernels every one in the full space; 1f1b, every schedule; bf16, fp8 and
   * fp8-cs */
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("checkpointing"), FALSE), 2);
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("checkpointing"), TRUE), 4);
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("attention_kernel"), TRUE), ATTN_N_KERNELS);
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("schedule"), FALSE), 1);
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("schedule"), TRUE), sched_count());
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("precision"), FALSE), 1);
  ck_assert_int_eq(layout_enum_sweep_count(layout_enum_field("precision"), TRUE), 3);
}
END_TEST

/* The CUDA graph scope, a set of names (layout.h layout_cg_scope), not an enumeration: each of Megatron-Core's names
 * parses to its bit and back, in any order and with '+' or ','; its name lists the members in Megatron's order; the
 * predict column sets it ('+'-joined; empty: none) and a bad cell is the row's one-line error. */
START_TEST(test_the_cuda_graph_scope_parses_names_and_its_column)
{
  static const char *const names[] = {"full", "attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba", "full_iteration"};
  char buf[LAYOUT_CG_SCOPE_NAME_MAX];
  GError *err = NULL;
  int v = -1;
  for (int i = 0; i < CG_SCOPE_N; i++) {
    ck_assert(layout_cg_scope_parse(names[i], &v, &err));
    ck_assert_int_eq(v, 1 << i);
    ck_assert_str_eq(layout_cg_scope_name(v, buf), names[i]);
  }
  ck_assert(layout_cg_scope_parse("moe_preprocess,attn+moe_router", &v, &err));
  ck_assert_int_eq(v, CG_SCOPE_ATTN | CG_SCOPE_MOE_ROUTER | CG_SCOPE_MOE_PREPROCESS);
  ck_assert_str_eq(layout_cg_scope_name(v, buf), "attn+moe_router+moe_preprocess");
  ck_assert(layout_cg_scope_parse("none", &v, &err) && v == 0);
  ck_assert_str_eq(layout_cg_scope_name(0, buf), "none");
  ck_assert_str_eq(layout_cg_scope_name((1 << CG_SCOPE_N) - 1, buf),
                   "full+attn+mlp+moe+moe_router+moe_preprocess+mamba+full_iteration");
  predict_cfg cfg = predict_cfg_h100_nemo();
  const char *cells[] = {"attn+moe_router+moe_preprocess", "", "moe_router"};
  int want[] = {CG_SCOPE_ATTN | CG_SCOPE_MOE_ROUTER | CG_SCOPE_MOE_PREPROCESS, 0, CG_SCOPE_MOE_ROUTER};
  for (gsize c = 0; c <= G_N_ELEMENTS(cells); c++) {
    g_autoptr(GPtrArray) cols = g_ptr_array_new();
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    for (gsize k = 0; k < G_N_ELEMENTS(REQUIRED); k++) {
      g_ptr_array_add(cols, (gpointer)REQUIRED[k]);
      g_ptr_array_add(row, g_strdup(ROW[k]));
    }
    g_ptr_array_add(cols, (gpointer) "cuda_graph_scope");
    g_ptr_array_add(row, g_strdup(c < G_N_ELEMENTS(cells) ? cells[c] : "attention"));
    g_autoptr(csv_table) t = csv_new((const char *const *)cols->pdata, cols->len);
    csv_append_row(t, row, 2);
    sim_request rq;
    if (c == G_N_ELEMENTS(cells)) {
      ck_assert(!predict_row_request(t, 0, &cfg, &rq, &err));
      ck_assert_str_eq(err->message, "cuda_graph_scope: unknown 'attention' (allowed: none, or one or more of full, "
                       "attn, mlp, moe, moe_router, moe_preprocess, mamba, full_iteration joined by '+')");
      g_clear_error(&err);
      continue;
    }
    ck_assert_msg(predict_row_request(t, 0, &cfg, &rq, &err), "%s", err ? err->message : "");
    ck_assert_int_eq(rq.l.cuda_graph_scope, want[c]);
  }
}
END_TEST

static Suite *layout_fields_suite(void)
{
  Suite *s = suite_create("layout_fields");
  TCase *tc = tcase_create("switches");
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  tcase_add_test(tc, test_the_known_switches_show_where_documented);
  tcase_add_test(tc, test_every_switch_has_its_boolean_option_on_its_field);
  tcase_add_test(tc, test_every_switch_column_round_trips_through_predict);
  tcase_add_test(tc, test_every_switch_reaches_the_graph_and_its_file);
  tcase_add_test(tc, test_every_switch_is_said_by_the_report_when_on_only);
  tcase_add_test(tc, test_every_enumeration_parses_from_its_option_and_column_and_is_said_in_the_layout_string);
  tcase_add_test(tc, test_the_known_enumerations_keep_their_spellings);
  tcase_add_test(tc, test_the_cuda_graph_scope_parses_names_and_its_column);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(layout_fields_suite()); }
