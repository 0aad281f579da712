/* test_timelines_read -- a step's views say what a reader needs, against answers written out here:
 *  - the Gantt chart's boxes and the Chrome trace's slices name each pass's micro-batch and model chunk: on an
 *    interleaved layout (llama-7b, 32 layers, pp 2, 2 chunks per stage, layers split evenly) chunk c of stage s
 *    is virtual stage c * pp + s and runs layers 8v..8v+7, and each stage runs every (micro-batch, chunk) pair
 *    forward once and backward once;
 *  - context parallelism's ring messages are cp-comm, not tp-comm (traffic_class.c's table);
 *  - the default trace's ranks (above the all-ranks limit: data-parallel replica 0) hold every partner the
 *    shown ranks talk to but their data-parallel replicas: tp, cp and pp peers (Megatron's rank order
 *    t + tp (c + cp (d + dp s)): d = 0).
 * Every test forks (Check's default), so each runs its own SimGrid engine. */
#include <check.h>
#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "analysis/simulate.h"
#include "check_main.h"
#include "check_tmpdir.h"
#include "traces/chrome.h"
#include "traces/svg.h"
#include "workloads/schedule.h"

#define LAYERS 32 /* llama-7b */
#define PP 2
#define CHUNKS 2
#define MICRO_BATCHES 4
#define PER_VSTAGE (LAYERS / (PP * CHUNKS))

static void simulate(sim_outcome *out, layout l, partition_method part)
{
  sim_request rq = {0};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert_int_eq(rq.m.layers, LAYERS);
  ck_assert(profile_load_with_stack("a100-sxm4-80gb", "study", &rq.prof, &err));
  rq.l = l;
  rq.gen = gen_default_options();
  rq.gen.partition = part;
  rq.gen.gpus_per_node = rq.prof.gpus_per_node;
  rq.capacity_gib = rq.prof.memory_gib;
  if (!sim_run_layout(&rq, out, &err)) ck_abort_msg("simulate: %s", err->message);
}

/* llama-7b on 4 GPUs, pp 2, dp 2, interleaved with 2 chunks per stage, 4 micro-batches per replica. */
static void simulate_interleaved(sim_outcome *out)
{
  layout l = layout_default();
  l.gpus = PP * 2;
  l.pp = PP;
  l.micro_batch = 1;
  l.global_batch = 2 * MICRO_BATCHES;
  ck_assert(sched_parse("interleaved", &l.schedule, NULL));
  l.virtual_stages = CHUNKS;
  simulate(out, l, PARTITION_LAYERS);
}

/* Every pass box of the chart's row of `rank`: "forward"/"backward", micro-batch, chunk, virtual stage, layers. */
typedef struct pass_box {
  char what[16];
  int mb, chunk, vstage, layer0, layer1;
} pass_box;

static GArray *row_passes(const char *svg, int rank)
{
  g_autofree char *head = g_strdup_printf("<g class=\"row\" data-rank=\"%d\"", rank);
  const char *row = strstr(svg, head);
  ck_assert_msg(row, "no row for rank %d", rank);
  const char *end = strstr(row, "</g>\n<g class=\"row\"");
  g_autofree char *text = g_strndup(row, end ? (gsize)(end - row) : strlen(row));
  g_autoptr(GRegex) re = g_regex_new("class=\"pass\" data-mb=\"(\\d+)\" data-chunk=\"(-?\\d+)\"[^>]*><title>(forward|"
                                     "backward) micro-batch (\\d+), chunk (\\d+) \\(virtual stage (\\d+)\\), layers (\\d+)-(\\d+):",
                                     0, 0, NULL);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(pass_box));
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match(re, text, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
    pass_box p = {0};
    g_autofree char *what = g_match_info_fetch(m, 3);
    g_strlcpy(p.what, what, sizeof p.what);
    int *v[] = {&p.mb, &p.chunk, &p.vstage, &p.layer0, &p.layer1};
    for (int i = 0; i < 5; i++) {
      g_autofree char *s = g_match_info_fetch(m, 4 + i);
      *v[i] = atoi(s);
    }
    g_autofree char *mb = g_match_info_fetch(m, 1), *chunk = g_match_info_fetch(m, 2);
    ck_assert_int_eq(atoi(mb), p.mb);
    ck_assert_int_eq(atoi(chunk), p.chunk);
    g_array_append_val(out, p);
  }
  return out;
}

START_TEST(test_svg_boxes_name_each_micro_batch_and_chunk_of_an_interleaved_stage)
{
  sim_outcome out = {0};
  simulate_interleaved(&out);
  g_autofree char *path = tmp_path("t.svg");
  GError *err = NULL;
  ck_assert(trace_svg_timeline(&out.tl, &(trace_svg_info){.mfu = -1}, path, &err));
  g_autofree char *svg = NULL;
  ck_assert(g_file_get_contents(path, &svg, NULL, NULL));
  ck_assert_ptr_nonnull(strstr(svg, "in a box: its micro-batch and model chunk"));
  for (int s = 0; s < PP; s++) {
    int rank = s * 2; /* replica 0 of stage s: rank = d + dp s */
    g_autoptr(GArray) passes = row_passes(svg, rank);
    int seen[2][MICRO_BATCHES][CHUNKS] = {{{0}}};
    for (guint i = 0; i < passes->len; i++) {
      const pass_box *p = &g_array_index(passes, pass_box, i);
      int v = p->chunk * PP + s;
      ck_assert_int_lt(p->mb, MICRO_BATCHES);
      ck_assert_int_lt(p->chunk, CHUNKS);
      ck_assert_int_eq(p->vstage, v);
      ck_assert_int_eq(p->layer0, v * PER_VSTAGE);
      ck_assert_int_eq(p->layer1, v * PER_VSTAGE + PER_VSTAGE - 1);
      seen[strcmp(p->what, "forward") != 0][p->mb][p->chunk]++;
    }
    for (int k = 0; k < 2; k++)
      for (int mb = 0; mb < MICRO_BATCHES; mb++)
        for (int c = 0; c < CHUNKS; c++)
          ck_assert_msg(seen[k][mb][c] == 1, "stage %d: %s of micro-batch %d chunk %d drawn %d times", s,
                        k ? "backward" : "forward", mb, c, seen[k][mb][c]);
  }
  /* the labels inside the boxes that are wide enough: "3 c1" */
  g_autoptr(GRegex) label = g_regex_new("<text class=\"mb\"[^>]*>(\\d+) c(\\d+)</text>", 0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  int labels = 0;
  for (g_regex_match(label, svg, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) labels++;
  ck_assert_int_gt(labels, 0);
  sim_outcome_clear(&out);
}
END_TEST

START_TEST(test_chrome_slices_carry_micro_batch_chunk_and_virtual_stage)
{
  sim_outcome out = {0};
  simulate_interleaved(&out);
  g_autofree char *path = tmp_path("t.json");
  tl_ranks sel;
  ck_assert(tl_ranks_parse(&out.tl, "all", 0, &sel, NULL));
  tl_mem_model mm = {0, 1};
  ck_assert(trace_chrome_write(&out.tl, &sel, &mm, path, NULL));
  tl_ranks_clear(&sel);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  cJSON *j = cJSON_Parse(text);
  ck_assert_ptr_nonnull(j);
  int blocks[PP] = {0}, layered = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents"))
  {
    cJSON *args = cJSON_GetObjectItem(e, "args");
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph")), "X")) continue;
    int rank = cJSON_GetObjectItem(args, "rank")->valueint, stage = rank / 2;
    int chunk = cJSON_GetObjectItem(args, "chunk")->valueint;
    int vstage = cJSON_GetObjectItem(args, "virtual_stage")->valueint;
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
    cJSON *layer = cJSON_GetObjectItem(args, "layer");
    if (cJSON_IsTrue(cJSON_GetObjectItem(args, "block"))) {
      int mb = cJSON_GetObjectItem(args, "micro_batch")->valueint;
      if (mb < 0) continue; /* the optimizer's */
      ck_assert_int_eq(vstage, chunk * PP + stage);
      g_autofree char *want = g_strdup_printf("%s mb %d c%d", cJSON_GetStringValue(cJSON_GetObjectItem(e, "cat")), mb, chunk);
      ck_assert_str_eq(name, want);
      blocks[stage]++;
    } else if (layer && layer->valueint >= 0 && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "cat")), "tp-comm")) {
      int v = layer->valueint / PER_VSTAGE; /* the layer's virtual stage, from the even split */
      ck_assert_int_eq(vstage, v);
      ck_assert_int_eq(chunk, v / PP);
      ck_assert_int_eq(v % PP, stage);
      layered++;
    }
  }
  for (int s = 0; s < PP; s++) /* 2 replicas x (forward + backward) x micro-batches x chunks */
    ck_assert_int_eq(blocks[s], 2 * 2 * MICRO_BATCHES * CHUNKS);
  ck_assert_int_gt(layered, 0);
  cJSON_Delete(j);
  sim_outcome_clear(&out);
}
END_TEST

/* tp 2, cp 2, pp 2, dp 2 on 16 GPUs, llama-7b at 4k with FlashAttention-2 (cp's ring needs a flash kernel). */
static layout cp_layout(int tp)
{
  layout l = layout_default();
  l.tp = tp;
  l.cp = 2;
  l.pp = PP;
  l.gpus = tp * 2 * PP * 2;
  l.seq_len = 4096;
  l.micro_batch = 1;
  l.global_batch = 2 * 2;
  l.attn = ATTN_FLASH2_RMSNORM;
  return l;
}

typedef struct cat_sum {
  const graph *g;
  double ring_s, cp_s;
  int ring, ring_as_cp;
} cat_sum;

static gboolean sum_ring(const tl_interval *iv, gpointer data)
{
  cat_sum *c = data;
  if (iv->cat == TL_CP_COMM) c->cp_s += iv->end_s - iv->start_s;
  if (!iv->ev || (iv->ev->kind != EV_SEND && iv->ev->kind != EV_RECV) || !(iv->ev->variant & GRAPH_P2P_LAYER)) return TRUE;
  c->ring++;
  c->ring_as_cp += iv->cat == TL_CP_COMM;
  c->ring_s += iv->end_s - iv->start_s;
  return TRUE;
}

/* At tp 1 a cp 2 layout has no tensor-parallel traffic: every second of its ring is cp-comm, none tp-comm; the
 * breakdown (the stage table, the JSON, the sweep's t_cp_comm_s) reads the same seconds. */
START_TEST(test_cp_ring_messages_are_cp_comm_not_tp_comm)
{
  sim_outcome out = {0};
  simulate(&out, cp_layout(1), PARTITION_AUTO);
  ck_assert_str_eq(tl_cat_name(TL_CP_COMM), "cp-comm");
  cat_sum c = {.g = out.g};
  for (int r = 0; r < out.g->world_size; r++) tl_foreach(&out.tl, r, sum_ring, &c);
  ck_assert_int_gt(c.ring, 0);
  ck_assert_int_eq(c.ring_as_cp, c.ring);
  ck_assert_double_eq_tol(c.cp_s, c.ring_s, 1e-12);
  ck_assert_double_eq_tol(out.met->seconds[TL_TP_COMM], 0, 1e-12);
  ck_assert(out.met->seconds[TL_CP_COMM] > 0);
  sim_outcome_clear(&out);
}
END_TEST

static gboolean has(const tl_ranks *sel, int rank)
{
  for (int i = 0; i < sel->n; i++)
    if (sel->rank[i] == rank) return TRUE;
  return FALSE;
}

typedef struct partners {
  const timeline *tl;
  const tl_ranks *sel;
  int rank, checked;
} partners;

static gboolean partner_shown(const tl_interval *iv, gpointer data)
{
  partners *p = data;
  if (!iv->ev) return TRUE;
  if (iv->ev->kind == EV_SEND || iv->ev->kind == EV_RECV) {
    ck_assert_msg(has(p->sel, iv->peer), "rank %d talks to rank %d, not in the trace", p->rank, iv->peer);
    p->checked++;
  } else if (iv->ev->kind == EV_COLLECTIVE) {
    const graph_group *gr = g_ptr_array_index(p->tl->g->groups, iv->peer);
    if (gr->tclass == TC_DP || gr->tclass == TC_DP_CP) return TRUE; /* the replicas the trace leaves out */
    for (guint k = 0; k < gr->ranks->len; k++)
      ck_assert_msg(has(p->sel, g_array_index(gr->ranks, int, k)), "rank %d's %s group holds rank %d, not in the trace",
                    p->rank, gr->label, g_array_index(gr->ranks, int, k));
    p->checked++;
  }
  return TRUE;
}

/* The default above the all-ranks limit is data-parallel replica 0: with Megatron's order rank = t + tp (c + cp (d
 * + dp s)), the ranks with d = 0 -- tp and cp peers and both stages; every send, receive and collective but the
 * data-parallel ones of a shown rank has all its partners shown. */
START_TEST(test_default_trace_ranks_hold_every_partner_of_the_shown_ranks)
{
  const int tp = 2, cp = 2, dp = 2;
  sim_outcome out = {0};
  simulate(&out, cp_layout(tp), PARTITION_AUTO);
  tl_ranks sel;
  ck_assert(tl_ranks_parse(&out.tl, NULL, 0, &sel, NULL)); /* over the limit: the default's replica 0 */
  g_autoptr(GArray) want = g_array_new(FALSE, FALSE, sizeof(int));
  for (int s = 0; s < PP; s++)
    for (int c = 0; c < cp; c++)
      for (int t = 0; t < tp; t++) {
        int r = t + tp * (c + cp * (0 + dp * s));
        g_array_append_val(want, r);
      }
  ck_assert_int_eq(sel.n, (int)want->len);
  for (guint i = 0; i < want->len; i++) ck_assert_int_eq(sel.rank[i], g_array_index(want, int, i));
  partners p = {.tl = &out.tl, .sel = &sel};
  for (int i = 0; i < sel.n; i++) {
    p.rank = sel.rank[i];
    tl_foreach(&out.tl, p.rank, partner_shown, &p);
  }
  ck_assert_int_gt(p.checked, 0);
  /* "dp0" spelt out is the same selection */
  tl_ranks named;
  ck_assert(tl_ranks_parse(&out.tl, "dp0", 1 << 20, &named, NULL));
  ck_assert_int_eq(named.n, sel.n);
  for (int i = 0; i < sel.n; i++) ck_assert_int_eq(named.rank[i], sel.rank[i]);
  tl_ranks_clear(&named);
  tl_ranks_clear(&sel);
  sim_outcome_clear(&out);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("timelines_read");
  TCase *tc = tcase_create("views");
  tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
  tcase_add_test(tc, test_svg_boxes_name_each_micro_batch_and_chunk_of_an_interleaved_stage);
  tcase_add_test(tc, test_chrome_slices_carry_micro_batch_chunk_and_virtual_stage);
  tcase_add_test(tc, test_cp_ring_messages_are_cp_comm_not_tp_comm);
  tcase_add_test(tc, test_default_trace_ranks_hold_every_partner_of_the_shown_ranks);
  suite_add_tcase(s, tc);
  return check_run(s);
}
