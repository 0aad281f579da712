/* test_graph -- the task graph generator against independent answers:
 * FLOP conservation (sum over ranks == a closed-form count of the step),
 * every send matched by a recv, the 1F1B order of the study's schedule
 * written out by hand, and the stage partition of the study's code. */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "traces/timeline.h"
#include "workloads/precision.h"
#include "workloads/generate.h"
#include "workloads/partition.h"
#include "workloads/ops.h"
#include "workloads/schedule.h"

static model tiny(void)
{
  model m = {.name = "tiny", .layers = 8, .hidden = 256, .heads = 4, .kv_heads = 4, .ffn = 688, .vocab = 1000};
  return m;
}

static layout mk(int gpus, int tp, int pp, int mb, int gb, int seq, layout_ckpt ck, gboolean sp)
{
  layout l = test_layout(gpus, tp, pp, mb, ck);
  l.global_batch = gb;
  l.seq_len = seq;
  l.sp = sp;
  return l;
}

/* Sum of the FLOPs every rank executes (a mirror executes its source's program). */
static double graph_flops(const graph *g)
{
  double f = 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    if (p->mirror_of >= 0) p = g_ptr_array_index(g->programs, p->mirror_of);
    for (guint i = 0; i < p->events->len; i++) f += g_array_index(p->events, graph_event, i).flops;
  }
  return f;
}

/* Independent count: per token, 6 x (matmul parameters of the layers and the output head)
 * + 12 L h s for attention; the input embedding (a lookup) and the norms run no matmul. */
static double expected_step_flops(const model *m, const layout *l)
{
  double h = m->hidden, f = m->ffn, s = l->seq_len, tokens = (double)l->global_batch * s;
  double layer_matmul = 4 * h * h + 3 * h * f;
  return tokens * (6 * (m->layers * layer_matmul + (double)m->vocab * h) + 12 * m->layers * h * s);
}

/* Every-layer checkpointing recomputes the forward of every item of a stage:
 * the layers (2 x matmul params + 4 h s per token) and the output head (2 V h). */
static double expected_recompute_flops(const model *m, const layout *l)
{
  double h = m->hidden, f = m->ffn, s = l->seq_len, tokens = (double)l->global_batch * s;
  return tokens * (m->layers * (2 * (4 * h * h + 3 * h * f) + 4 * h * s) + 2.0 * m->vocab * h);
}

static graph *gen(const model *m, layout *l, gboolean symmetry)
{
  GError *err = NULL;
  ck_assert_msg(layout_validate(l, m, &err), "%s", err ? err->message : "");
  gen_options o = gen_default_options();
  o.symmetry = symmetry;
  graph *g = gen_graph(m, l, &o, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  return g;
}

START_TEST(test_step_flops_sum_equals_closed_form_for_many_layouts)
{
  model m = tiny();
  layout ls[] = {mk(1, 1, 1, 1, 4, 128, CKPT_NONE, 0), mk(8, 2, 2, 1, 8, 128, CKPT_NONE, 0),
                 mk(16, 4, 4, 2, 16, 256, CKPT_NONE, 1), mk(8, 1, 8, 1, 16, 128, CKPT_NONE, 0),
                 mk(8, 2, 4, 1, 4, 128, CKPT_NONE, 1)};
  for (size_t i = 0; i < G_N_ELEMENTS(ls); i++) {
    for (int sym = 0; sym < 2; sym++) {
      g_autoptr(graph) g = gen(&m, &ls[i], sym);
      double want = expected_step_flops(&m, &ls[i]);
      ck_assert_msg(fabs(graph_flops(g) - want) <= 1e-9 * want, "layout %zu sym %d: %.6g vs %.6g", i, sym,
                    graph_flops(g), want);
    }
  }
}
END_TEST

/* The memory guard counts a graph's events before it exists (gen_stage_events): the count is the
 * length of every generated program, whatever the stage, degrees, sp, checkpointing and ZeRO-1, with the study's
 * code and with a gradient accumulation pass and pipeline tensors scattered over tp. */
START_TEST(test_counted_events_are_the_generated_programs_lengths)
{
  model m = tiny();
  model wide = {.name = "wide", .layers = 2, .hidden = 16384, .heads = 128, .kv_heads = 128, .ffn = 65536, .vocab = 64000};
  layout ls[] = {mk(1, 1, 1, 1, 4, 128, CKPT_NONE, 0), mk(8, 2, 2, 1, 8, 128, CKPT_NONE, 0),
                 mk(16, 4, 4, 2, 16, 256, CKPT_EVERY_LAYER, 1), mk(8, 1, 8, 1, 16, 128, CKPT_NONE, 0),
                 mk(8, 2, 4, 1, 4, 128, CKPT_EVERY_LAYER, 1), mk(4, 1, 1, 1, 4, 64, CKPT_NONE, 0),
                 mk(8, 1, 2, 1, 12, 64, CKPT_NONE, 0)};
  ls[5].zero = 0;
  for (size_t c = 0; c < 2 * G_N_ELEMENTS(ls); c++) { /* each layout with the study's code, then DeepSpeed's passes */
  size_t i = c % G_N_ELEMENTS(ls);
  gen_code code = gen_default_code();
  if (c >= G_N_ELEMENTS(ls)) {
    code.grad_accum_bytes = 18;
    code.pipe_scatter_gather = TRUE;
  }
  {
    const model *mm = i >= 5 ? &wide : &m; /* wide: more than one gradient bucket per stage */
    GError *err = NULL;
    ck_assert_msg(layout_validate(&ls[i], mm, &err), "%s", err ? err->message : "");
    gen_options o = gen_default_options();
    o.symmetry = FALSE;
    o.code = code;
    g_autoptr(graph) g = gen_graph(mm, &ls[i], &o, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    partition part;
    ck_assert(partition_make(&part, mm, ls[i].pp, ls[i].tp, PARTITION_AUTO, NULL));
    for (int r = 0; r < g->world_size; r++) {
      const graph_program *p = g_ptr_array_index(g->programs, r);
      gen_stage_size sz;
      gen_stage_events(mm, &ls[i], &code, &part, r / (ls[i].dp * ls[i].tp), &sz);
      ck_assert_msg(sz.events == p->events->len, "layout %zu rank %d: counted %.0f, generated %u", i, r, sz.events,
                    p->events->len);
      ck_assert(sz.bucket_events <= sz.step_events);
      if (i >= 5) ck_assert_msg(sz.bucket_events >= 6, "layout %zu: %.0f bucket events", i, sz.bucket_events);
    }
    partition_clear(&part);
  }
  }
}
END_TEST

START_TEST(test_every_layer_checkpointing_adds_exactly_one_forward)
{
  model m = tiny();
  layout a = mk(8, 2, 2, 1, 8, 128, CKPT_NONE, 0), b = mk(8, 2, 2, 1, 8, 128, CKPT_EVERY_LAYER, 0);
  g_autoptr(graph) ga = gen(&m, &a, TRUE);
  g_autoptr(graph) gb = gen(&m, &b, TRUE);
  double extra = graph_flops(gb) - graph_flops(ga), want = expected_recompute_flops(&m, &a);
  ck_assert_msg(fabs(extra - want) <= 1e-9 * want, "%.6g vs %.6g", extra, want);
}
END_TEST

START_TEST(test_every_send_has_its_recv)
{
  model m = tiny();
  layout l = mk(16, 2, 4, 1, 16, 128, CKPT_NONE, 0);
  g_autoptr(graph) g = gen(&m, &l, FALSE);
  GError *err = NULL;
  ck_assert_msg(graph_check(g, &err), "%s", err ? err->message : "");
  int sends = 0, recvs = 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      sends += e->kind == EV_SEND;
      recvs += e->kind == EV_RECV;
    }
  }
  /* per micro-batch, per stage boundary, per (dp, tp) chain: one activation and one gradient */
  int m_micro = 16 / (2 * 1), boundaries = 3, chains = 2 * 2;
  ck_assert_int_eq(sends, 2 * m_micro * boundaries * chains);
  ck_assert_int_eq(recvs, sends);
}
END_TEST

/* A mirror's sends and receives go where the explicit program of the same rank (--no-symmetry) sends and
 * receives: its own replica's neighbour stages, not its source's. */
START_TEST(test_mirror_peers_are_the_explicit_programs_peers)
{
  model m = tiny();
  layout ls[] = {mk(8, 1, 4, 1, 16, 128, CKPT_NONE, 0), mk(16, 2, 4, 1, 16, 128, CKPT_NONE, 0)};
  for (size_t li = 0; li < G_N_ELEMENTS(ls); li++) {
    g_autoptr(graph) sym = gen(&m, &ls[li], TRUE);
    g_autoptr(graph) expl = gen(&m, &ls[li], FALSE);
    int mirrors = 0, p2p = 0;
    for (int r = 0; r < sym->world_size; r++) {
      const graph_program *p = g_ptr_array_index(sym->programs, r), *x = g_ptr_array_index(expl->programs, r);
      int n, first;
      const graph_event *ev = graph_program_events(sym, p, &n, &first);
      ck_assert_int_eq(n, (int)x->events->len);
      mirrors += p->mirror_of >= 0;
      for (int i = 0; i < n; i++) {
        const graph_event *want = &g_array_index(x->events, graph_event, i);
        ck_assert_int_eq(ev[i].kind, want->kind);
        if (ev[i].kind != EV_SEND && ev[i].kind != EV_RECV) continue;
        p2p++;
        ck_assert_msg(graph_peer_for(sym, p, ev[i].peer) == want->peer, "layout %zu rank %d event %d: peer %d, want %d",
                      li, r, i, graph_peer_for(sym, p, ev[i].peer), want->peer);
      }
    }
    ck_assert_int_eq(mirrors, sym->world_size - 4); /* one explicit program per stage */
    /* send and recv, both ways, m = 16 / dp = 8 micro-batches, 3 stage boundaries, dp * tp chains */
    ck_assert_int_eq(p2p, 2 * 2 * 8 * 3 * (sym->world_size / 4));
  }
  /* a mirror whose group_map holds no group with its source and the peer has no counterpart */
  g_autoptr(graph) g = graph_new(4);
  graph_program_of(g, 0);
  graph_make_mirror(g, 1, 0, 0);
  ck_assert_int_eq(graph_peer_for(g, graph_program_of(g, 0), 2), 2);
  ck_assert_int_eq(graph_peer_for(g, graph_program_of(g, 1), 2), -1);
}
END_TEST

START_TEST(test_graph_check_rejects_an_unmatched_send)
{
  graph *g = graph_new(2);
  graph_event e = {.kind = EV_SEND, .op = GRAPH_OP_COMM, .peer = 1, .bytes = 10, .micro_batch = -1, .layer = -1};
  g_array_append_val(graph_program_of(g, 0)->events, e);
  graph_program_of(g, 1);
  GError *err = NULL;
  ck_assert(!graph_check(g, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "rank 0"));
  g_error_free(err);
  graph_free(g);
}
END_TEST

/* F = forward, B = backward, RA/SA = recv/send activation, RG/SG = recv/send gradient, O = optimizer. */
static char *order_string(int stage, int stages, int m)
{
  static const char *const K[] = {"RA", "SA", "RG", "SG", "F", "B", "O"};
  g_autoptr(GArray) a = sched_1f1b(stage, stages, m);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < a->len; i++) {
    const sched_instr *in = &g_array_index(a, sched_instr, i);
    if (in->kind == SCHED_OPTIMIZER) g_string_append_printf(s, "%sO", i ? " " : "");
    else g_string_append_printf(s, "%s%s%d", i ? " " : "", K[in->kind], in->micro_batch);
  }
  return g_string_free(s, FALSE);
}

START_TEST(test_1f1b_order_pp4_8_microbatches_by_hand)
{
  /* Worked out by hand from the study's schedule (steps 0..21, parity rule, deferred SendActivation). */
  const char *want[4] = {
      "F0 SA0 F1 SA1 F2 SA2 F3 SA3 RG0 B0 F4 SA4 RG1 B1 F5 SA5 RG2 B2 F6 SA6 RG3 B3 F7 SA7 RG4 B4 RG5 B5 RG6 B6 "
      "RG7 B7 O",
      "RA0 F0 SA0 RA1 F1 SA1 RA2 F2 SA2 RG0 B0 RA3 SG0 F3 SA3 RG1 B1 RA4 SG1 F4 SA4 RG2 B2 RA5 SG2 F5 SA5 RG3 B3 "
      "RA6 SG3 F6 SA6 RG4 B4 RA7 SG4 F7 SA7 RG5 B5 SG5 RG6 B6 SG6 RG7 B7 SG7 O",
      NULL,
      "RA0 F0 B0 RA1 SG0 F1 B1 RA2 SG1 F2 B2 RA3 SG2 F3 B3 RA4 SG3 F4 B4 RA5 SG4 F5 B5 RA6 SG5 F6 B6 RA7 SG6 F7 B7 "
      "SG7 O",
  };
  for (int s = 0; s < 4; s++) {
    g_autofree char *got = order_string(s, 4, 8);
    if (want[s]) ck_assert_str_eq(got, want[s]);
  }
  /* stage 2: every micro-batch forward before its backward, each exactly once; at most pp-2 = 2 in flight */
  g_autoptr(GArray) a = sched_1f1b(2, 4, 8);
  int fwd = 0, bwd = 0, in_flight = 0, max_in_flight = 0;
  for (guint i = 0; i < a->len; i++) {
    const sched_instr *in = &g_array_index(a, sched_instr, i);
    if (in->kind == SCHED_FORWARD) {
      ck_assert_int_eq(in->micro_batch, fwd++);
      in_flight++;
    }
    if (in->kind == SCHED_BACKWARD) {
      ck_assert_int_eq(in->micro_batch, bwd++);
      in_flight--;
    }
    max_in_flight = MAX(max_in_flight, in_flight);
  }
  ck_assert_int_eq(fwd, 8);
  ck_assert_int_eq(bwd, 8);
  ck_assert_int_eq(max_in_flight, 2);
}
END_TEST

/* Bounds of DeepSpeed's partition_balanced over [emb, L layers, norm, head] for Llama shapes
 * with a 128k vocabulary, as the reference implementation (Python, run on the study code's
 * algorithm; docs/model.md) gives them. */
static void check_balanced(const char *name, int pp, const int *want)
{
  model m;
  ck_assert(model_load_named(name, &m, NULL));
  m.vocab = 128000;
  partition p;
  ck_assert(partition_make(&p, &m, pp, 1, PARTITION_BALANCED, NULL));
  for (int s = 0; s <= pp; s++) ck_assert_msg(p.first_item[s] == want[s], "%s pp %d bound %d: %d, want %d", name, pp, s, p.first_item[s], want[s]);
  partition_clear(&p);
}

START_TEST(test_balanced_partition_matches_deepspeed_for_llama_with_128k_vocab)
{
  check_balanced("llama-13b", 2, (const int[]){0, 21, 43});        /* emb+20, 20+norm+head */
  check_balanced("llama-13b", 4, (const int[]){0, 10, 21, 32, 43}); /* emb+9, 11, 11, 9+norm+head */
  check_balanced("llama-30b", 8, (const int[]){0, 7, 15, 23, 31, 39, 47, 55, 63}); /* emb+6, 8x6, 6+norm+head */
  check_balanced("llama-65b", 4, (const int[]){0, 20, 41, 62, 83}); /* emb+19, 21, 21, 19+norm+head */
  check_balanced("llama-65b", 8, (const int[]){0, 10, 21, 32, 43, 54, 65, 76, 83}); /* emb+9, 11x6, 5+norm+head */
}
END_TEST

/* Where the first item alone outweighs a probed bottleneck (llama-13b's embedding over pp 32), DeepSpeed
 * reads weights[-1], Python's last element: the total (it read before the array, found by
 * tests/fuzz/fuzz_options.c under ASan). Its probe then fills 22 stages and leaves the other 10 empty, as the
 * reference implementation gives (that of test_balanced_partition_matches_deepspeed_for_llama_with_128k_vocab). */
START_TEST(test_balanced_partition_reads_deepspeeds_last_weight_where_the_first_item_is_too_heavy)
{
  model m;
  ck_assert(model_load_named("llama-13b", &m, NULL));
  partition p;
  GError *err = NULL;
  ck_assert(!partition_make(&p, &m, 32, 1, PARTITION_BALANCED, &err));
  ck_assert_str_eq(err->message, "pp: 32 stages leave stage 22 empty, without any item (llama-13b has 43 items, "
                                 "partition balanced)");
  g_error_free(err);
}
END_TEST

START_TEST(test_auto_partition_is_balanced_unless_a_stage_would_be_empty)
{
  model m;
  ck_assert(model_load_named("llama-65b", &m, NULL));
  partition p;
  /* pp 16: DeepSpeed's probe fills 14 stages of 6 layers and leaves 2 empty */
  ck_assert(!partition_make(&p, &m, 16, 8, PARTITION_BALANCED, NULL));
  ck_assert(partition_make(&p, &m, 16, 8, PARTITION_AUTO, NULL));
  ck_assert_int_eq(p.method, PARTITION_UNIFORM);
  ck_assert_int_eq(p.first_item[1], 6); /* 83 items: the first 3 stages take 6, the rest 5 */
  ck_assert_int_eq(p.first_item[16], 83);
  partition_clear(&p);
  ck_assert(partition_make(&p, &m, 4, 1, PARTITION_AUTO, NULL));
  ck_assert_int_eq(p.method, PARTITION_BALANCED);
  ck_assert_int_eq(p.first_item[1], 20);
  partition_clear(&p);
}
END_TEST

START_TEST(test_uniform_partition_counts_embedding_and_head_as_layers)
{
  /* The study's code (uniform): L+3 items, the first (L+3) % pp stages take one more. */
  model m = tiny();
  m.layers = 60;
  partition p;
  ck_assert(partition_make(&p, &m, 8, 1, PARTITION_UNIFORM, NULL));
  int want_layers[8] = {7, 8, 8, 8, 8, 8, 8, 5}; /* 63 items: 8,8,8,8,8,8,8,7 */
  for (int s = 0; s < 8; s++) {
    int first, count;
    partition_layers(&p, &m, s, &first, &count);
    ck_assert_int_eq(count, want_layers[s]);
  }
  ck_assert(partition_has_embedding(&p, 0));
  ck_assert(partition_has_head(&p, &m, 7) && partition_has_final_norm(&p, &m, 7));
  partition_clear(&p);
  m.layers = 40;
  ck_assert(partition_make(&p, &m, 2, 1, PARTITION_UNIFORM, NULL));
  int first, count;
  partition_layers(&p, &m, 0, &first, &count);
  ck_assert_int_eq(count, 21); /* 43 items: 22 + 21 -> emb+21, 19+norm+head */
  partition_clear(&p);
}
END_TEST

/* Load `json` from a temporary file; returns the error message (caller frees) or NULL if it loaded. */
static char *load_error(const char *json)
{
  g_autofree char *path = NULL; /* a unique name: concurrent test runs do not clobber each other */
  int fd = g_file_open_tmp("layoutsim-test-bad-graph-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, json, -1, NULL));
  GError *err = NULL;
  graph *g = graph_load(path, &err);
  unlink(path);
  graph_free(g);
  if (!err) return NULL;
  char *msg = g_str_has_prefix(err->message, path) ? g_strconcat("FILE", err->message + strlen(path), NULL)
                                                   : g_strdup(err->message); /* the file's name: FILE */
  g_error_free(err);
  return msg;
}

START_TEST(test_bad_graph_files_are_rejected_with_a_reason)
{
  const char *head = "{\"format\":\"layoutsim-graph\",\"version\":1,\"world_size\":2,";
  struct { const char *body, *needle; } cases[] = {
      /* a bad event in rank 0 while rank 1 has no program yet */
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\","
       "\"bytes\":-5}]}]}", "bytes"},
      {"\"groups\":[{\"ranks\":[1]}],\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"collective\","
       "\"collective\":\"all-reduce\",\"group\":0,\"phase\":\"dp\",\"bytes\":8}]}]}", "not a member"},
      {"\"groups\":[{\"ranks\":[0,0]}],\"programs\":[]}", "listed twice"},
      {"\"meta\":{\"pp\":\"3\"},\"programs\":[]}", "meta.pp"},
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\","
       "\"bytes\":1,\"mem_delta_bytes\":-1e9}]}]}", "frees more"},
      /* stage-wise readers index ranks as stage * ranks_per_stage + i */
      {"\"meta\":{\"pp\":\"2\",\"ranks_per_stage\":\"2\"},\"programs\":[]}", "must equal world_size (2)"},
      /* sizes beyond any real step (and beyond SimGrid's integral message sizes), or not finite */
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"send\",\"peer\":1,\"phase\":\"forward\","
       "\"bytes\":1e20}]}]}", "'bytes' must be from 0 to 1e18"},
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\","
       "\"flops\":1e999}]}]}", "'flops' must be from 0 to 1e24"},
      {"\"programs\":[]} trailing", "unexpected text after the value"},
      {"\"groups\":{\"a\":1},\"programs\":[]}", "'groups' must be an array"},
      {"\"groups\":[{\"ranks\":[0,\"x\"]}],\"programs\":[]}", "needs 'ranks', an array of integers"},
      {"\"groups\":[5],\"programs\":[]}", "group 0: needs 'ranks'"},
      {"\"groups\":[{\"ranks\":[0,1]},{\"ranks\":5}],\"programs\":[]}", "group 1: needs 'ranks'"},
      /* integers are never truncated */
      {"\"programs\":[{\"rank\":0.5,\"events\":[]}]}", "program field 'rank' must be an integer"},
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\","
       "\"m\":2.5,\"n\":1,\"k\":1,\"flops\":1}]}]}", "field 'm' must be an integer"},
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"send\",\"peer\":\"1\",\"phase\":\"forward\"}]}]}",
       "field 'peer' must be an integer"},
      /* an attention time needs its sequence length and head size (it once ran forever: a "deadlock") */
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"attention\",\"phase\":\"forward\","
       "\"variant\":5,\"m\":1,\"n\":0,\"k\":0,\"flops\":1e9}]}]}", "needs 'n' (sequence length) and 'k'"},
      /* a key given twice would be read from its first place: refused, naming where */
      {"\"world_size\":4,\"programs\":[]}", ": key 'world_size' appears more than once (each key may appear once)"},
      {"\"programs\":[{\"rank\":0,\"events\":[{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\","
       "\"bytes\":1},{\"kind\":\"compute\",\"op\":\"qkv\",\"phase\":\"forward\",\"bytes\":1,\"bytes\":2}]}]}",
       ": programs[0].events[1]: key 'bytes' appears more than once"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strconcat(head, cases[i].body, NULL);
    g_autofree char *msg = load_error(json);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_msg(strstr(msg, cases[i].needle) != NULL, "case %zu: %s", i, msg);
  }
}
END_TEST

/* A field of the wrong JSON type is an error naming it, never read as absent, as 0 or (an object for
 * an array) member by member: "meta" as an array once crashed the loader. */
START_TEST(test_graph_fields_of_the_wrong_json_type_are_refused_naming_them)
{
  const char *head = "{\"format\":\"layoutsim-graph\",\"world_size\":2,";
  const char *send = "{\"kind\":\"send\",\"peer\":1,\"phase\":\"forward\",\"bytes\":8";
  const char *recv = "{\"rank\":1,\"events\":[{\"kind\":\"recv\",\"peer\":0,\"phase\":\"forward\",\"bytes\":8}]}";
  g_autofree char *send_op = g_strdup_printf("\"programs\":[{\"rank\":0,\"events\":[%s,\"op\":5}]},%s]}", send, recv);
  g_autofree char *send_bytes =
      g_strdup_printf("\"programs\":[{\"rank\":0,\"events\":[%s,\"mem_delta_bytes\":\"8\"}]},%s]}", send, recv);
  struct { const char *body, *want; } cases[] = {
      {"\"meta\":[\"x\"]}", "'meta' must be an object (got an array)"},
      {"\"meta\":{\"pp\":2}}", "meta.pp must be a string (got a number; allowed: e.g. \"pp\": \"2\" in version 1 to 3)"},
      {"\"programs\":{\"a\":{\"rank\":0,\"events\":[]}}}", "'programs' must be an array of programs (got an object)"},
      {"\"programs\":5}", "'programs' must be an array of programs (got a number)"},
      {"\"groups\":[{\"label\":5,\"ranks\":[0,1]}]}", "group 0: 'label' must be a string (got a number)"},
      {"\"groups\":[{\"ranks\":[0]},{\"ranks\":[1]}],\"programs\":[{\"rank\":0,\"events\":[]},"
       "{\"rank\":1,\"mirror_of\":0,\"group_map\":{\"x\":[0,1]}}]}",
       "rank 1: 'group_map' must be an array of [from, to] pairs (got an object)"},
      {"\"programs\":[{\"rank\":0,\"mem_params_bytes\":\"1e9\",\"events\":[]}]}",
       "rank 0: field 'mem_params_bytes' must be a number (got a string)"},
      {send_bytes, "rank 0 event 0: field 'mem_delta_bytes' must be a number (got a string)"},
      {send_op, "rank 0 event 0: field 'op' must be a string naming an operator class (see docs/graph-format.md; "
                "got a number)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strconcat(head, cases[i].body, NULL);
    g_autofree char *msg = load_error(json);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_msg(g_str_has_prefix(msg, "FILE: "), "case %zu: %s", i, msg);
    ck_assert_str_eq(msg + strlen("FILE: "), cases[i].want);
  }
}
END_TEST

/* An integer meta entry is read with atoi/atol by the stage-wise readers, so it must be plain digits:
 * "1e1" passed as pp 10 and was read as pp 1; "3e10" was cast to int before its range was checked
 * (undefined behaviour, reported by -fsanitize=float-cast-overflow). */
/* What graph_save writes loads back: a meta text and a group label holding a quote or a backslash were
 * written unescaped, a file that was not JSON or read another label (found by tests/fuzz/fuzz_graph.c's
 * round trip). */
/* Save g to a temporary file and load it back. */
static graph *round_trip(const graph *g)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  GError *err = NULL;
  ck_assert_msg(graph_save(g, path, &err), "%s", err ? err->message : "");
  graph *back = graph_load(path, &err);
  unlink(path);
  ck_assert_msg(back != NULL, "%s", err ? err->message : "");
  return back;
}

/* Under --precision fp8 the linear layers' GEMMs run in FP8 as Transformer Engine's HYBRID recipe has them
 * (E4M3 forward, E5M2 backward), the head's logits GEMM and the attention core stay bf16, each linear layer
 * has its cast pass; every event's dtype and every group's class come back from the JSON file unchanged. */
START_TEST(test_fp8_graph_types_linear_gemms_and_round_trips_dtypes_and_classes)
{
  model m = tiny();
  layout l = mk(4, 2, 2, 1, 8, 128, CKPT_NONE, FALSE);
  l.precision = PREC_FP8;
  g_autoptr(graph) g = gen(&m, &l, FALSE);
  int casts = 0, fp8 = 0;
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r);
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      const char *op = graph_op_name(g, e->op);
      gboolean linear = !strcmp(op, "qkv") || !strcmp(op, "attn_out") || !strcmp(op, "mlp_up") || !strcmp(op, "mlp_down");
      graph_dtype want = linear ? (e->phase == PH_BACKWARD ? DT_FP8_E5M2 : DT_FP8_E4M3) : DT_BF16;
      ck_assert_msg(e->dtype == want, "rank %d event %u (%s, %s): dtype %s", r, i, op, graph_phase_name(e->phase),
                    graph_dtype_name(e->dtype));
      casts += !strcmp(op, "fp8_cast");
      fp8 += graph_dtype_is_fp8(e->dtype);
    }
  }
  ck_assert_int_gt(casts, 0);
  ck_assert_int_gt(fp8, 0);
  int pair[] = {0, 1}; /* a class its label does not name: only the file's 'class' brings it back */
  graph_add_group_class(g, pair, 2, "grad-norm", TC_PP);
  g_autoptr(graph) back = round_trip(g);
  for (int r = 0; r < g->world_size; r++) {
    const graph_program *p = g_ptr_array_index(g->programs, r), *q = g_ptr_array_index(back->programs, r);
    ck_assert_int_eq(p->events->len, q->events->len);
    for (guint i = 0; i < p->events->len; i++)
      ck_assert_int_eq(g_array_index(p->events, graph_event, i).dtype, g_array_index(q->events, graph_event, i).dtype);
  }
  ck_assert_int_eq(g->groups->len, back->groups->len);
  for (guint i = 0; i < g->groups->len; i++)
    ck_assert_int_eq(((graph_group *)g->groups->pdata[i])->tclass, ((graph_group *)back->groups->pdata[i])->tclass);
  ck_assert_int_eq(((graph_group *)back->groups->pdata[back->groups->len - 1])->tclass, TC_PP);
  ck_assert_str_eq(back->meta.precision, "fp8");
  ck_assert_int_eq(back->meta.pp, 2);
}
END_TEST

/* Graph format 5 names an attention event's efficiency class: every class comes back from the file by name (the
 * generator's, one layout per attention kernel, and each class of the table), and a version 4 file's numeric
 * variant 0, 1, 2 is read as scores, flash1, flash2. */
START_TEST(test_attention_classes_round_trip_by_name_and_version_4_variants_convert)
{
  static const struct { layout_attn a; int cls; } kernels[] = {
      {ATTN_TORCH, GRAPH_ATTN_SCORES}, {ATTN_FUSED_SOFTMAX, GRAPH_ATTN_SCORES}, {ATTN_FLASH1, GRAPH_ATTN_FLASH1},
      {ATTN_FLASH1_LEGACY, GRAPH_ATTN_FLASH1}, {ATTN_FLASH2, GRAPH_ATTN_FLASH2}, {ATTN_FLASH2_RMSNORM, GRAPH_ATTN_FLASH2}};
  model m = tiny();
  for (size_t k = 0; k < G_N_ELEMENTS(kernels); k++) {
    layout l = mk(2, 1, 2, 1, 4, 128, CKPT_NONE, FALSE);
    l.attn = kernels[k].a;
    g_autoptr(graph) g = gen(&m, &l, FALSE);
    g_autoptr(graph) back = round_trip(g);
    int n = 0;
    for (int r = 0; r < g->world_size; r++) {
      const graph_program *p = g_ptr_array_index(g->programs, r), *q = g_ptr_array_index(back->programs, r);
      for (guint i = 0; i < p->events->len; i++) {
        const graph_event *e = &g_array_index(p->events, graph_event, i), *f = &g_array_index(q->events, graph_event, i);
        if (e->cost != COST_ATTENTION) continue;
        n++;
        ck_assert_int_eq(e->variant, kernels[k].cls);
        ck_assert_int_eq(f->variant, kernels[k].cls);
      }
    }
    ck_assert_int_gt(n, 0);
  }
  for (int c = 0; c < GRAPH_ATTN_N; c++) {
    ck_assert_int_eq(graph_attn_from_name(graph_attn_name(c)), c);
    g_autofree char *v4 = g_strdup_printf(
        "{\"format\":\"layoutsim-graph\",\"version\":4,\"world_size\":1,\"programs\":[{\"rank\":0,\"events\":[{"
        "\"kind\":\"compute\",\"op\":\"a\",\"cost\":\"attention\",\"variant\":%d,\"phase\":\"forward\",\"m\":1,"
        "\"n\":128,\"k\":64,\"flops\":1e9}]}]}", c);
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
    close(fd);
    ck_assert(g_file_set_contents(path, v4, -1, NULL));
    GError *err = NULL;
    g_autoptr(graph) g = graph_load(path, &err);
    unlink(path);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    ck_assert_int_eq(g_array_index(((graph_program *)g->programs->pdata[0])->events, graph_event, 0).variant, c);
    g_autoptr(graph) back = round_trip(g);
    ck_assert_int_eq(g_array_index(((graph_program *)back->programs->pdata[0])->events, graph_event, 0).variant, c);
  }
  ck_assert_str_eq(graph_attn_name(GRAPH_ATTN_SCORES), "scores");
  ck_assert_str_eq(graph_attn_name(GRAPH_ATTN_FLASH1), "flash1");
  ck_assert_str_eq(graph_attn_name(GRAPH_ATTN_FLASH2), "flash2");
}
END_TEST

/* Version 4 is written; 1 to 3 are converted (every event bf16, a group's class the one its label names,
 * meta numbers read from text), their files may not carry version 4's fields; a newer version is refused,
 * saying what to do. */
START_TEST(test_old_graph_versions_are_converted_and_newer_refused)
{
  const char *v3 = "{\"format\":\"layoutsim-graph\",\"version\":3,\"world_size\":2,\"meta\":{\"pp\":\"2\","
                   "\"ranks_per_stage\":\"1\",\"tokens_per_step\":\"4096\",\"free\":\"x\"},\"groups\":[{\"label\":\"pp\","
                   "\"ranks\":[0,1]},{\"label\":\"mine\",\"ranks\":[0,1]}],\"programs\":[{\"rank\":0,\"events\":[{\"kind\":"
                   "\"compute\",\"op\":\"x\",\"cost\":\"gemm\",\"phase\":\"forward\",\"m\":8,\"n\":8,\"k\":8,\"flops\":1024}]}]}";
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
  close(fd);
  ck_assert(g_file_set_contents(path, v3, -1, NULL));
  GError *err = NULL;
  g_autoptr(graph) g = graph_load(path, &err);
  unlink(path);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  ck_assert_int_eq(((graph_group *)g->groups->pdata[0])->tclass, TC_PP);
  ck_assert_int_eq(((graph_group *)g->groups->pdata[1])->tclass, TC_OTHER);
  ck_assert_int_eq(g_array_index(((graph_program *)g->programs->pdata[0])->events, graph_event, 0).dtype, DT_BF16);
  ck_assert_int_eq(g->meta.pp, 2);
  ck_assert_double_eq(g->meta.tokens_per_step, 4096);
  struct { const char *json, *want; } cases[] = {
      {"{\"format\":\"layoutsim-graph\",\"version\":6,\"world_size\":1}",
       "FILE: graph format version 6: this layoutsim reads version 5 (and converts 1 to 4); regenerate it with "
       "`layoutsim graph` (docs/graph-format.md)"},
      {"{\"format\":\"layoutsim-graph\",\"version\":3,\"world_size\":1,\"programs\":[{\"rank\":0,\"events\":[{\"kind\":"
       "\"compute\",\"op\":\"x\",\"cost\":\"gemm\",\"phase\":\"forward\",\"dtype\":\"fp8_e4m3\"}]}]}",
       "FILE: rank 0 event 0: field 'dtype' needs graph format version 4 (allowed in version 3: none, every event bf16)"},
      {"{\"format\":\"layoutsim-graph\",\"version\":4,\"world_size\":1,\"programs\":[{\"rank\":0,\"events\":[{\"kind\":"
       "\"compute\",\"op\":\"x\",\"cost\":\"gemm\",\"phase\":\"forward\",\"dtype\":\"fp4\"}]}]}",
       "FILE: rank 0 event 0: field 'dtype' is \"fp4\" (allowed: bf16, fp16, fp8_e4m3, fp8_e5m2, mxfp8, fp32)"},
      {"{\"format\":\"layoutsim-graph\",\"version\":4,\"world_size\":2,\"groups\":[{\"label\":\"a\",\"class\":\"xp\","
       "\"ranks\":[0,1]}]}", "FILE: group 0: 'class' is \"xp\" (allowed: other, tp, cp, dp, dp-cp, pp, ep)"},
      {"{\"format\":\"layoutsim-graph\",\"version\":4,\"world_size\":2,\"meta\":{\"pp\":\"2\"}}",
       "FILE: meta.pp must be a number (got a string)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *msg = load_error(cases[i].json);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_str_eq(msg, cases[i].want);
  }
}
END_TEST

/* How the breakdown counts a collective is its group's class in the one table (traffic_class.c), never its
 * label: a group labelled "grad-norm" of class pp is pipeline wait, one labelled "pp" of class dp is
 * gradient communication in the dp phase, a layer's (tp-comm) in the forward. */
START_TEST(test_class_table_decides_the_timeline_category_of_a_collective)
{
  g_autoptr(graph) g = graph_new(2);
  int ranks[] = {0, 1};
  int pipe = graph_add_group_class(g, ranks, 2, "grad-norm", TC_PP);
  int dp = graph_add_group_class(g, ranks, 2, "pp", TC_DP);
  graph_event e = {.kind = EV_COLLECTIVE, .phase = PH_DP, .peer = pipe};
  ck_assert_int_eq(tl_category(g, &e), TL_PP_WAIT);
  e.peer = dp;
  ck_assert_int_eq(tl_category(g, &e), TL_DP_COMM);
  e.phase = PH_FORWARD;
  ck_assert_int_eq(tl_category(g, &e), TL_TP_COMM);
  /* and the generator's pipeline group: labelled and classed pp */
  int named = graph_add_group(g, ranks, 2, "pp");
  ck_assert_int_eq(((graph_group *)g_ptr_array_index(g->groups, named))->tclass, TC_PP);
  ck_assert_int_eq(tc_info_of(TC_PP)->count, TC_COUNT_PIPELINE);
}
END_TEST

START_TEST(test_saved_graph_keeps_quotes_and_backslashes_of_meta_texts_and_labels)
{
  g_autoptr(graph) g = graph_new(1);
  g_strlcpy(g->meta.model, "c\\d\"", sizeof g->meta.model);
  int rank0 = 0;
  graph_add_group(g, &rank0, 1, "x\"\\y");
  graph_program_of(g, 0);
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  GError *err = NULL;
  ck_assert(graph_save(g, path, &err));
  g_autoptr(graph) back = graph_load(path, &err);
  unlink(path);
  ck_assert_msg(back != NULL, "%s", err ? err->message : "");
  ck_assert_str_eq(back->meta.model, "c\\d\"");
  ck_assert_str_eq(((graph_group *)g_ptr_array_index(back->groups, 0))->label, "x\"\\y");
}
END_TEST

/* The layout string of a graph's meta is the whole layout, however long: a 128-layer model's pipeline layout
 * (131 bytes of its own) takes it past the 255 bytes it was once cut at (a char[256]). It is written whole, and
 * read back whole, and a hand-written one of 4096 bytes loads. */
START_TEST(test_meta_layout_longer_than_255_bytes_is_kept_whole)
{
  model m = tiny();
  m.layers = 128;
  layout l = mk(4, 1, 2, 1, 8, 128, CKPT_NONE, 0);
  g_autoptr(GString) spec = g_string_new("E"); /* E t*64 | t*64 L: each stage half of the layers */
  for (int i = 0; i < 128; i++) g_string_append(spec, i == 64 ? "|t" : "t");
  g_string_append_c(spec, 'L');
  ck_assert_int_lt(spec->len, sizeof l.pipeline_layout);
  g_strlcpy(l.pipeline_layout, spec->str, sizeof l.pipeline_layout);
  g_autoptr(graph) g = gen(&m, &l, TRUE);
  g_autofree char *tail = g_strdup_printf(" pipeline_layout='%s'", spec->str);
  ck_assert_msg(strlen(g->meta.layout) > 255, "%zu bytes: %s", strlen(g->meta.layout), g->meta.layout);
  ck_assert_msg(g_str_has_prefix(g->meta.layout, "gpus=4 tp=1 pp=2 dp=2 "), "%s", g->meta.layout);
  ck_assert_msg(g_str_has_suffix(g->meta.layout, tail), "cut: %s", g->meta.layout);
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("layoutsim-test-graph-XXXXXX.json", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  GError *err = NULL;
  ck_assert(graph_save(g, path, &err));
  g_autoptr(graph) back = graph_load(path, &err);
  unlink(path);
  ck_assert_msg(back != NULL, "%s", err ? err->message : "");
  ck_assert_str_eq(back->meta.layout, g->meta.layout);
  /* by hand: 4096 bytes of layout */
  g_autofree char *long_text = g_strnfill(4096, 'x');
  g_autofree char *json = g_strdup_printf("{\"format\":\"layoutsim-graph\",\"world_size\":1,\"meta\":{\"layout\":\"%s\"},"
                                          "\"programs\":[{\"rank\":0,\"events\":[]}]}", long_text);
  g_autofree char *msg = load_error(json);
  ck_assert_msg(msg == NULL, "%s", msg);
}
END_TEST

START_TEST(test_meta_integers_are_plain_digits_in_range)
{
  const char *head = "{\"format\":\"layoutsim-graph\",\"world_size\":10,\"meta\":";
  struct { const char *meta, *want; } cases[] = {
      {"{\"pp\":\"1e1\"}}", "FILE: meta.pp: '1e1' (allowed: an integer from 1 to 10)"},
      {"{\"pp\":\"3e10\"}}", "FILE: meta.pp: '3e10' (allowed: an integer from 1 to 10)"},
      {"{\"ranks_per_stage\":\"5.0\"}}", "FILE: meta.ranks_per_stage: '5.0' (allowed: an integer from 1 to 10)"},
      {"{\"gpus_per_node\":\"99999999999\"}}", "FILE: meta.gpus_per_node: '99999999999' (allowed: an integer from 1 to 4096)"},
      {"{\"pp\":\"5\",\"ranks_per_stage\":\"2\",\"tokens_per_step\":\"4e6\"}}", NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strconcat(head, cases[i].meta, NULL);
    g_autofree char *msg = load_error(json);
    if (!cases[i].want) {
      ck_assert_msg(msg == NULL, "case %zu: %s", i, msg);
      continue;
    }
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_str_eq(msg, cases[i].want);
  }
}
END_TEST

/* The graph's descriptive text reaches the SVG and Chrome traces (meta.model, meta.layout) or decides how
 * a collective is traced (a group's label, 15 bytes at most): printable UTF-8, never cut. */
START_TEST(test_graph_text_reaching_the_traces_is_printable_utf8)
{
  const char *head = "{\"format\":\"layoutsim-graph\",\"world_size\":2,";
  struct { const char *body, *want; } cases[] = {
      {"\"meta\":{\"model\":\"m\\u001b[31m\"}}",
       "meta.model: \"m\\x1B[31m\" holds a control or format character (allowed: printable UTF-8 text, 1 to 63 bytes)"},
      {"\"meta\":{\"layout\":\"tp\xc3\"}}", "meta.layout: \"tp\\xC3\" is not valid UTF-8 (allowed: printable UTF-8 text, not empty)"},
      {"\"groups\":[{\"label\":\"pipeline-parallel\",\"ranks\":[0,1]}]}",
       "group 0: label: \"pipeline-parallel\" is 17 bytes long (allowed: printable UTF-8 text, 1 to 15 bytes)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *json = g_strconcat(head, cases[i].body, NULL);
    g_autofree char *msg = load_error(json);
    ck_assert_msg(msg != NULL, "case %zu loaded", i);
    ck_assert_msg(g_str_has_prefix(msg, "FILE: "), "case %zu: %s", i, msg);
    ck_assert_str_eq(msg + strlen("FILE: "), cases[i].want);
  }
}
END_TEST

START_TEST(test_layout_validation_names_field_and_allowed_values)
{
  model m = tiny();
  layout l = mk(10, 4, 1, 1, 8, 128, CKPT_NONE, 0);
  GError *err = NULL;
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "gpus: 10 is not a multiple of tp*pp = 4"));
  g_clear_error(&err);
  l = mk(16, 8, 1, 1, 8, 128, CKPT_NONE, 0); /* 4 heads */
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "tp: 8 does not divide the 4 attention heads of tiny (allowed: 1, 2, 4)");
  g_clear_error(&err);
  m.vocab = 250; /* the study's code asserts vocab % tp == 0 (VocabParallelEmbedding) */
  l = mk(16, 4, 1, 1, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "vocab: 250 is not a multiple of tp=4; the embedding and the output head split the "
                                 "vocabulary evenly over tp, and this stack's code does not pad it (allowed: multiples of 4, "
                                 "e.g. --vocab 252, or a stack that pads, --stack nemo or megatron-deepspeed: docs/model.md)");
  g_clear_error(&err);
  l = mk(16, 2, 1, 1, 8, 128, CKPT_NONE, 0);
  ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
  m = tiny();
  l = mk(8, 1, 9, 1, 8, 128, CKPT_NONE, 0); /* 8 layers */
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "pp: 9 exceeds the 8 layers of tiny (allowed: 1..8)");
  g_clear_error(&err);
  /* Inputs whose int products overflowed (tp*pp wrapping to 0 trapped in %, dp*micro_batch wrapping
   * to a small number let an impossible layout through) fail on the field instead. */
  l = mk(8, 65536, 65536, 1, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "tp: 65536"));
  g_clear_error(&err);
  l = mk(LAYOUT_MAX_GPUS, 1, 1, 65536, 8, 1, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "global_batch: 8 is not a multiple of dp*micro_batch = 1048576*65536"));
  g_clear_error(&err);
  l = mk(16, 8, 8, 1, 8, 128, CKPT_NONE, 0); /* tp * pp above the GPUs (it once wrapped in int) */
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "tp: 8 does not divide the 4 attention heads of tiny (allowed: 1, 2, 4)");
  g_clear_error(&err);
  l = mk(16, 4, 8, 1, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "pp: 8 is more than gpus/tp = 4 (allowed: 1..4)");
  g_clear_error(&err);
  l = mk(LAYOUT_MAX_GPUS + 1, 1, 1, 1, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "gpus: 1048577 is more than the simulator can run (allowed: 1..1048576"));
  g_clear_error(&err);
  l = mk(8, 1, 1, (LAYOUT_MAX_MICRO_BATCH_TOKENS / 128) + 1, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "micro_batch: 131073 sequences of 128 tokens"));
  g_clear_error(&err);
  l = mk(8, 1, 1, 3, 8, 128, CKPT_NONE, 0);
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "global_batch"));
  g_clear_error(&err);
  l = mk(1, 1, 1, 1, 2 * LAYOUT_MAX_MICRO_BATCHES, 128, CKPT_NONE, 0); /* the graph would not fit in memory */
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "global_batch: 16384 gives 16384 micro-batches"));
  g_clear_error(&err);
}
END_TEST

/* The stack's code shape (gen_code): the study's MLP input projection is two GEMMs, each followed in
 * backward by a tensor-parallel all-reduce of its input gradient (3 per layer with QKV's); Megatron's
 * fused one has 2. The forward keeps its 2 either way, the MLP's FLOPs stay the same, and with
 * fused_norm every norm is one kernel; the gradient all-reduce moves grad_reduce_bytes per parameter. */
START_TEST(test_stack_code_sets_backward_tp_all_reduces_and_fusion)
{
  model m = tiny();
  double grad_bytes_of[2];
  for (int fused = 0; fused <= 1; fused++) {
    layout l = mk(4, 2, 1, 1, 4, 64, CKPT_NONE, FALSE); /* dp 2, 2 micro-batches */
    l.attn = ATTN_FLASH2;
    GError *err = NULL;
    ck_assert(layout_validate(&l, &m, &err));
    gen_options o = gen_default_options();
    o.code.mlp_in_gemms = fused ? 1 : 2;
    o.code.fused_norm = fused;
    o.code.grad_reduce_bytes = fused ? 2 : 4;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    const graph_program *p = g_ptr_array_index(g->programs, 0);
    int fwd_ar = 0, bwd_ar = 0, norms = 0, norm_launches = 0, up_launches = 0;
    double up_flops = 0, grad_bytes = 0;
    for (guint i = 0; i < p->events->len; i++) {
      const graph_event *e = &g_array_index(p->events, graph_event, i);
      const graph_group *gr = e->kind == EV_COLLECTIVE ? g_ptr_array_index(g->groups, e->peer) : NULL;
      if (gr && !strcmp(gr->label, "tp") && e->variant == COLL_ALL_REDUCE && e->layer >= 0)
        *(e->phase == PH_BACKWARD ? &bwd_ar : &fwd_ar) += 1;
      if (gr && !strcmp(gr->label, "dp") && e->variant == COLL_ALL_REDUCE) grad_bytes += e->bytes;
      if (!strcmp(graph_op_name(g, e->op), "norm") && e->layer >= 0 && e->phase == PH_FORWARD) {
        norms++;
        norm_launches += e->launches;
      }
      if (!strcmp(graph_op_name(g, e->op), "mlp_up") && e->phase == PH_FORWARD) {
        up_flops += e->flops;
        up_launches += e->launches;
      }
    }
    int layer_mbs = m.layers * l.grad_accum;
    ck_assert_int_eq(fwd_ar, 2 * layer_mbs);
    ck_assert_int_eq(bwd_ar, (fused ? 2 : 3) * layer_mbs);
    ck_assert_int_eq(up_launches, (fused ? 1 : 2) * layer_mbs);
    ck_assert_double_eq_tol(up_flops, 2.0 * 2 * l.micro_batch * l.seq_len * m.hidden * (m.ffn / 2.0) * layer_mbs, 1);
    ck_assert_int_eq(norm_launches, norms * (fused ? 1 : OPS_NORM_TORCH_KERNELS)); /* flash2+rmsnorm is not set */
    ck_assert_double_gt(grad_bytes, 0);
    grad_bytes_of[fused] = grad_bytes;
  }
  ck_assert_double_eq_tol(grad_bytes_of[1] / grad_bytes_of[0], 2.0 / 4.0, 1e-12); /* fp16 against fp32 */
}
END_TEST

/* The code's gradient accumulation pass (gen_code grad_accum_bytes; DeepSpeed's BF16_Optimizer.update_hp_grads:
 * the bf16 gradient cast to fp32, 2 read + 4 written, then added into the fp32 buffer, 4 + 4 read + 4 written: 18
 * bytes a parameter) runs after every micro-batch's backward on every stage, over the parameters the rank holds.
 * tiny (8 layers: attention 4h^2, SwiGLU MLP 3 h ffn, two norms h each; embedding and head vocab x h, the final
 * norm h) at pp 2 and 4 micro-batches: 4 x 18 x every parameter of the model, split over the two stages, and one
 * pass per micro-batch and stage; 0 adds none. */
START_TEST(test_grad_accum_pass_moves_its_bytes_per_parameter_every_micro_batch)
{
  model m = tiny();
  double h = m.hidden, params = m.layers * (4 * h * h + 3 * h * m.ffn + 2 * h) + 2 * m.vocab * h + h;
  double bytes_of[2] = {0, 0};
  int passes_of[2] = {0, 0};
  for (int on = 0; on <= 1; on++) {
    layout l = mk(2, 1, 2, 1, 4, 64, CKPT_NONE, FALSE); /* dp 1, 4 micro-batches */
    l.attn = ATTN_FLASH2;
    GError *err = NULL;
    ck_assert(layout_validate(&l, &m, &err));
    gen_options o = gen_default_options();
    o.symmetry = FALSE;
    o.code.grad_accum_bytes = on ? 18 : 0;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    for (int r = 0; r < g->world_size; r++) {
      const graph_program *p = g_ptr_array_index(g->programs, r);
      for (guint i = 0; i < p->events->len; i++) {
        const graph_event *e = &g_array_index(p->events, graph_event, i);
        if (e->kind != EV_COMPUTE || e->phase != PH_BACKWARD || strcmp(graph_op_name(g, e->op), "optimizer")) continue;
        bytes_of[on] += e->bytes;
        passes_of[on]++;
      }
    }
  }
  ck_assert_int_eq(passes_of[0], 0);
  ck_assert_int_eq(passes_of[1], 2 * 4);
  ck_assert_double_eq_tol(bytes_of[1] - bytes_of[0], 4 * 18 * params, 1e-6 * params);
}
END_TEST

/* Pipeline tensors scattered over tp (gen_code pipe_scatter_gather; DeepSpeed's PartitionedTensor, Megatron-LM
 * 2021's --scatter-gather-tensors-in-pipeline): at tp 2 without sp each rank sends half of what it sent before, and
 * every received activation or gradient is all-gathered over tp, whole (b s h bf16): 4 micro-batches at pp 2, tp 2
 * give 4 ranks x 4 receives (beside the study head's logits gathers). With sp the tensors are already the rank's
 * shard: nothing changes. */
START_TEST(test_pipe_scatter_gather_sends_1_over_tp_and_gathers_each_received_tensor)
{
  model m = tiny();
  for (int sp = 0; sp <= 1; sp++) {
    double sent[2] = {0, 0}, gathered[2] = {0, 0};
    int gathers[2] = {0, 0};
    for (int on = 0; on <= 1; on++) {
      layout l = mk(4, 2, 2, 1, 4, 64, CKPT_NONE, sp); /* dp 1, 4 micro-batches */
      l.attn = ATTN_FLASH2;
      GError *err = NULL;
      ck_assert(layout_validate(&l, &m, &err));
      gen_options o = gen_default_options();
      o.symmetry = FALSE;
      o.code.pipe_scatter_gather = on;
      g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
      ck_assert_msg(g != NULL, "%s", err ? err->message : "");
      for (int r = 0; r < g->world_size; r++) {
        const graph_program *p = g_ptr_array_index(g->programs, r);
        for (guint i = 0; i < p->events->len; i++) {
          const graph_event *e = &g_array_index(p->events, graph_event, i);
          const graph_group *gr = e->kind == EV_COLLECTIVE ? g_ptr_array_index(g->groups, e->peer) : NULL;
          if (e->kind == EV_SEND) sent[on] += e->bytes;
          if (gr && !strcmp(gr->label, "tp") && e->variant == COLL_ALL_GATHER && e->layer < 0) {
            gathers[on]++;
            gathered[on] += e->bytes;
          }
        }
      }
    }
    if (sp) { /* sp's own all-gathers (embedding, head) alike in both */
      ck_assert_int_eq(gathers[1], gathers[0]);
      ck_assert_double_eq(sent[1], sent[0]);
      continue;
    }
    /* the study's head gathers its logits over tp in both: the difference is the pipeline's */
    ck_assert_double_eq_tol(sent[1], sent[0] / 2, 1e-9 * sent[0]);
    ck_assert_int_eq(gathers[1] - gathers[0], 4 * 4);
    ck_assert_double_eq_tol((gathered[1] - gathered[0]) / (4 * 4), 1.0 * 64 * m.hidden * 2, 1e-9);
  }
}
END_TEST

/* Megatron's FusedScaleMaskSoftmax (fused_softmax_batches 4) runs its causal kernel only where micro-batch x
 * heads/tp is a multiple of 4: tiny's 4 heads at tp 2 and micro-batch 1 give 2, so the forward is torch's softmax
 * (7 kernels, 32 bytes per score element); at micro-batch 2 (4) the fused kernel on the baddbmm output as it is
 * (3 kernels, 8 bytes). The study's code (0) takes its fused kernel (4 kernels, 13 bytes) at either. */
START_TEST(test_megatron_fused_softmax_falls_back_to_torch_off_multiples_of_4)
{
  model m = tiny();
  const struct { int rule, mb, launches; double bytes_per_el; } cases[] = {
      {4, 1, 7, 32}, {4, 2, 3, 8}, {0, 1, 4, 13}, {0, 2, 4, 13}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    layout l = mk(2, 2, 1, cases[i].mb, 2 * cases[i].mb, 64, CKPT_NONE, FALSE);
    l.attn = ATTN_FUSED_SOFTMAX;
    GError *err = NULL;
    ck_assert(layout_validate(&l, &m, &err));
    gen_options o = gen_default_options();
    o.code.fused_softmax_batches = cases[i].rule;
    g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
    ck_assert_msg(g != NULL, "%s", err ? err->message : "");
    const graph_program *p = g_ptr_array_index(g->programs, 0);
    double T = (double)l.micro_batch * l.seq_len, qkvo = T * 4 * m.hidden / l.tp * 2;
    double scores = (double)l.micro_batch * m.heads / l.tp * l.seq_len * l.seq_len;
    int seen = 0;
    for (guint k = 0; k < p->events->len; k++) {
      const graph_event *e = &g_array_index(p->events, graph_event, k);
      if (strcmp(graph_op_name(g, e->op), "attention") || e->phase != PH_FORWARD) continue;
      ck_assert_int_eq(e->launches, cases[i].launches);
      ck_assert_double_eq_tol(e->bytes, qkvo + scores * cases[i].bytes_per_el, 1e-6 * e->bytes);
      seen++;
    }
    ck_assert_int_eq(seen, m.layers * l.grad_accum);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("graph");
  TCase *tc = tcase_create("generator");
  tcase_add_test(tc, test_step_flops_sum_equals_closed_form_for_many_layouts);
  tcase_add_test(tc, test_every_layer_checkpointing_adds_exactly_one_forward);
  tcase_add_test(tc, test_counted_events_are_the_generated_programs_lengths);
  tcase_add_test(tc, test_every_send_has_its_recv);
  tcase_add_test(tc, test_fp8_graph_types_linear_gemms_and_round_trips_dtypes_and_classes);
  tcase_add_test(tc, test_old_graph_versions_are_converted_and_newer_refused);
  tcase_add_test(tc, test_attention_classes_round_trip_by_name_and_version_4_variants_convert);
  tcase_add_test(tc, test_class_table_decides_the_timeline_category_of_a_collective);
  tcase_add_test(tc, test_mirror_peers_are_the_explicit_programs_peers);
  tcase_add_test(tc, test_graph_check_rejects_an_unmatched_send);
  tcase_add_test(tc, test_1f1b_order_pp4_8_microbatches_by_hand);
  tcase_add_test(tc, test_uniform_partition_counts_embedding_and_head_as_layers);
  tcase_add_test(tc, test_balanced_partition_matches_deepspeed_for_llama_with_128k_vocab);
  tcase_add_test(tc, test_balanced_partition_reads_deepspeeds_last_weight_where_the_first_item_is_too_heavy);
  tcase_add_test(tc, test_auto_partition_is_balanced_unless_a_stage_would_be_empty);
  tcase_add_test(tc, test_layout_validation_names_field_and_allowed_values);
  tcase_add_test(tc, test_bad_graph_files_are_rejected_with_a_reason);
  tcase_add_test(tc, test_graph_fields_of_the_wrong_json_type_are_refused_naming_them);
  tcase_add_test(tc, test_saved_graph_keeps_quotes_and_backslashes_of_meta_texts_and_labels);
  tcase_add_test(tc, test_meta_integers_are_plain_digits_in_range);
  tcase_add_test(tc, test_graph_text_reaching_the_traces_is_printable_utf8);
  tcase_add_test(tc, test_meta_layout_longer_than_255_bytes_is_kept_whole);
  tcase_add_test(tc, test_stack_code_sets_backward_tp_all_reduces_and_fusion);
  tcase_add_test(tc, test_megatron_fused_softmax_falls_back_to_torch_off_multiples_of_4);
  tcase_add_test(tc, test_grad_accum_pass_moves_its_bytes_per_parameter_every_micro_batch);
  tcase_add_test(tc, test_pipe_scatter_gather_sends_1_over_tp_and_gathers_each_received_tensor);
  suite_add_tcase(s, tc);
  return check_run(s);
}
