/* test_comm -- every communication of a training step's transformer items against a closed form
 * written here, never copied from workloads/generate.c. For small layouts (tp 1-8, with and without
 * sequence parallelism, pp 1-2, with and without every-layer checkpointing, symmetric and fully
 * explicit graphs) each explicit rank's collectives and messages are tallied per micro-batch and per
 * layer and compared, as a multiset of (phase, collective, group, bytes), with what follows from:
 *
 * - Megatron's tensor parallelism (Shoeybi et al. 2019, sec. 3; Narayanan et al. 2021, sec. 2.3): a
 *   column-parallel linear is preceded by f (identity forward, all-reduce of its input gradient
 *   backward), a row-parallel linear is followed by g (all-reduce forward, identity backward). The
 *   papers' "2 all-reduces forward, 2 backward" is for a layer of 2 row- and 2 column-parallel
 *   linears; the study's code (Aleph-Alpha/scaling) has 2 row-parallel linears (attention `dense`,
 *   MLP `dense_out`) and 3 column-parallel ones, each with its own f: the fused `query_key_value`
 *   (attention_qkv_in_one defaults to true) and ParallelSwiGLUMLP's `dense_in` and `siglu_weight`
 *   (core/nn/mlp.py, core/nn/linear/column_parallel_linear.py). Hence 2 forward, 3 backward.
 * - Sequence parallelism (Korthikanti et al. 2022, sec. 4.2.2): g becomes a reduce-scatter along the
 *   sequence (backward: all-gather), f an all-gather (backward: reduce-scatter). In the study's code
 *   the gather sits in each RMSNorm, whose output feeds every column-parallel linear after it
 *   (core/nn/norm/rms_norm.py), so a layer has 2 all-gathers and 2 reduce-scatters each way.
 * - The vocabulary-parallel embedding all-reduces (sp: reduce-scatters) its masked lookup; the LM
 *   head is a column-parallel linear with parallel_output false, so its [b, s, V/t] outputs are
 *   all-gathered into the full logits (all_concat; backward: a local slice), and the loss is torch's
 *   cross_entropy on those full logits: no communication (there is no vocab-parallel cross-entropy,
 *   which would all-reduce a max, a target logit and a sum of exponentials per token instead).
 * - Every-layer checkpointing wraps each item (embedding, layers, final norm, head) in a
 *   non-reentrant checkpoint (core/nn/parallel_module/parallel_module.py): its forward, collectives
 *   included, runs again before its backward. The loss is outside.
 * - The pipeline (1F1B, one stage boundary at a time): per micro-batch a stage sends its output
 *   tuple forward and receives one gradient back; only the activations require a gradient, so the
 *   gradient message is the activations alone.
 *
 * Sizes: b micro-batch, s sequence, h hidden, V vocabulary, t = tp, T = b*s tokens, bf16 = 2 bytes.
 * A collective's bytes are its full, unsharded buffer S (a ring moves S/n per step: n-1 steps for
 * reduce-scatter and all-gather, 2(n-1) for all-reduce; docs/model.md, "Collectives"), so gathering
 * a [b, s, h] tensor sharded over t ranks is S = T*h*2, the same as all-reducing it.
 *
 * Disagreements with the study's code that the generator does not model yet are cases of their own
 * (`test_comm disagreements` runs them; they fail today and are not in the suite): the activation
 * message also carries loss_weights and the padded cumulative sequence lengths, and with sp every
 * norm weight's gradient is all-reduced on its own.
 *
 * Mutations of workloads/generate.c each case was seen to fail on (then reverted):
 *   tp layer case:  one MLP-input or the QKV backward all-reduce dropped; a forward all-reduce put in
 *                   the next layer
 *   sp layer case:  the forward all-gathers at half size; a backward reduce-scatter for an all-gather
 *   ends case:      the logits all-gather at 1/8 or over dp; the embedding's all-reduce dropped; the
 *                   head's backward all-reduce dropped; the head's recompute without its gather
 *   pipeline case:  one activation send dropped; the position ids left out; the sp gradient unsharded
 *   recompute case: the layers' recompute without tp collectives
 * (cli/tp.tesh sees all but the reduce-scatter-for-all-gather and the position ids.) */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"
#include <string.h>

#include "workloads/generate.h"
#include "workloads/partition.h"

#define BF16_BYTES 2.0
#define FP32_BYTES 4.0
#define INT32_BYTES 4.0
#define INT64_BYTES 8.0

/* Row- and column-parallel linears of one layer of the study's Llama (see the top comment). */
#define ROW_PARALLEL_PER_LAYER 2
#define COLUMN_PARALLEL_PER_LAYER 3
/* RMSNorms of one layer (input and post-attention): each gathers the sequence under sp. */
#define NORMS_PER_LAYER 2

/* Heads 8 so that tp 8 divides them; V not a small multiple of h, so that a logits buffer
 * cannot pass for an activation buffer. */
static model tiny(void)
{
  model m = {.name = "tiny", .layers = 8, .hidden = 256, .heads = 8, .kv_heads = 8, .ffn = 688, .vocab = 1000};
  return m;
}

enum { MICRO_BATCH = 2, SEQ = 128, DP = 2, MICRO_BATCHES = 3 };

static layout mk(int tp, int pp, gboolean sp, layout_ckpt ckpt)
{
  layout l = test_layout(tp * pp * DP, tp, pp, MICRO_BATCH, ckpt);
  l.global_batch = DP * MICRO_BATCH * MICRO_BATCHES;
  l.seq_len = SEQ;
  l.sp = sp;
  return l;
}

static graph *gen(const model *m, layout *l, gboolean symmetry)
{
  GError *err = NULL;
  ck_assert_msg(layout_validate(l, m, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(l->grad_accum, MICRO_BATCHES);
  gen_options o = gen_default_options();
  o.symmetry = symmetry;
  graph *g = gen_graph(m, l, &o, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  return g;
}

/* Rank coordinates as the study's topology.py numbers them: tp fastest, then dp, then pp. */
static int stage_of(const layout *l, int rank) { return rank / (l->dp * l->tp); }
static int ranks_per_stage(const layout *l) { return l->dp * l->tp; }

/* ---- the tally: a multiset of "phase collective group bytes" or "phase send|recv peer bytes" ---- */

typedef enum { COLLECTIVES, MESSAGES } tally_kind;
/* The phases of an item's own communication (the optimizer step's are not a micro-batch's). */
#define ITEM_PHASES ((1u << PH_FORWARD) | (1u << PH_BACKWARD) | (1u << PH_RECOMPUTE))

static GHashTable *multiset_new(void) { return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL); }

static void add(GHashTable *ms, char *key, int count)
{
  if (count <= 0) {
    g_free(key);
    return;
  }
  int had = GPOINTER_TO_INT(g_hash_table_lookup(ms, key));
  g_hash_table_replace(ms, key, GINT_TO_POINTER(had + count));
}

static void expect_coll(GHashTable *ms, graph_phase ph, graph_coll c, double bytes, int count)
{
  add(ms, g_strdup_printf("%s %s tp %.17g", graph_phase_name(ph), graph_coll_name(c), bytes), count);
}

static void expect_msg(GHashTable *ms, graph_phase ph, graph_kind k, int peer, double bytes)
{
  add(ms, g_strdup_printf("%s %s peer %d %.17g", graph_phase_name(ph), graph_kind_name(k), peer, bytes), 1);
}

/* What rank p executes for micro-batch mb in `layer` (-1: outside the transformer layers) in the
 * phases of `phases`. A collective must run on a group of the rank; a tp group is the rank's own. */
static GHashTable *tally(const graph *g, const layout *l, const graph_program *p, int mb, int layer, tally_kind w,
                         unsigned phases)
{
  GHashTable *ms = multiset_new();
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->micro_batch != mb || e->layer != layer || !(phases & (1u << e->phase))) continue;
    if (w == COLLECTIVES && e->kind == EV_COLLECTIVE) {
      const graph_group *gr = g_ptr_array_index(g->groups, e->peer);
      gboolean member = FALSE;
      for (guint k = 0; k < gr->ranks->len; k++) member |= g_array_index(gr->ranks, int, k) == p->rank;
      ck_assert_msg(member, "rank %d runs a collective of a group it is not in", p->rank);
      if (!strcmp(gr->label, "tp")) { /* the rank's tp group: the tp ranks of its stage and dp index */
        ck_assert_int_eq(gr->ranks->len, l->tp);
        for (int k = 0; k < l->tp; k++) ck_assert_int_eq(g_array_index(gr->ranks, int, k), p->rank / l->tp * l->tp + k);
      }
      add(ms, g_strdup_printf("%s %s %s %.17g", graph_phase_name(e->phase), graph_coll_name(e->variant), gr->label,
                              e->bytes), 1);
    } else if (w == MESSAGES && (e->kind == EV_SEND || e->kind == EV_RECV)) {
      add(ms, g_strdup_printf("%s %s peer %d %.17g", graph_phase_name(e->phase), graph_kind_name(e->kind), e->peer,
                              e->bytes), 1);
    }
  }
  return ms;
}

static void diff_into(GString *out, GHashTable *a, GHashTable *b, const char *a_name, const char *b_name)
{
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, a);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    int other = GPOINTER_TO_INT(g_hash_table_lookup(b, key));
    if (other != GPOINTER_TO_INT(val))
      g_string_append_printf(out, "\n  %s: %s %d, %s %d", (char *)key, a_name, GPOINTER_TO_INT(val), b_name, other);
  }
}

/* Same multiset, or a failure listing every difference under `where`. Frees both. */
static void assert_same(GHashTable *got, GHashTable *want, const char *where)
{
  g_autoptr(GString) d = g_string_new(NULL);
  diff_into(d, want, got, "expected", "got");
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, got);
  while (g_hash_table_iter_next(&it, &key, NULL))
    if (!g_hash_table_contains(want, key))
      g_string_append_printf(d, "\n  %s: expected 0, got %d", (char *)key, GPOINTER_TO_INT(g_hash_table_lookup(got, key)));
  ck_assert_msg(d->len == 0, "%s:%s", where, d->str);
  g_hash_table_destroy(got);
  g_hash_table_destroy(want);
}

/* ---- the closed forms ---- */

static double tokens(const layout *l) { return (double)l->micro_batch * l->seq_len; }
/* A [b, s, h] bf16 activation, whole (the buffer of every tp collective on it). */
static double act_full_bytes(const model *m, const layout *l) { return tokens(l) * m->hidden * BF16_BYTES; }
/* The activation a rank holds between tp regions: sharded along the sequence under sp. */
static double act_held_bytes(const model *m, const layout *l)
{
  return act_full_bytes(m, l) / (l->sp && l->tp > 1 ? l->tp : 1);
}

/* A transformer layer's forward (also its recompute) and its backward. */
static void expect_layer_forward(GHashTable *ms, const model *m, const layout *l, graph_phase ph)
{
  if (l->tp == 1) return; /* f and g are identities */
  double S = act_full_bytes(m, l);
  if (l->sp) {
    expect_coll(ms, ph, COLL_ALL_GATHER, S, NORMS_PER_LAYER);
    expect_coll(ms, ph, COLL_REDUCE_SCATTER, S, ROW_PARALLEL_PER_LAYER);
  } else {
    expect_coll(ms, ph, COLL_ALL_REDUCE, S, ROW_PARALLEL_PER_LAYER);
  }
}

static void expect_layer_backward(GHashTable *ms, const model *m, const layout *l)
{
  if (l->tp == 1) return;
  double S = act_full_bytes(m, l);
  if (l->sp) {
    expect_coll(ms, PH_BACKWARD, COLL_ALL_GATHER, S, ROW_PARALLEL_PER_LAYER);
    expect_coll(ms, PH_BACKWARD, COLL_REDUCE_SCATTER, S, NORMS_PER_LAYER);
  } else {
    expect_coll(ms, PH_BACKWARD, COLL_ALL_REDUCE, S, COLUMN_PARALLEL_PER_LAYER);
  }
}

/* Embedding (first stage): the masked lookups of the t vocabulary shards summed (sp: and scattered). */
static void expect_embedding_forward(GHashTable *ms, const model *m, const layout *l, graph_phase ph)
{
  if (l->tp == 1) return;
  expect_coll(ms, ph, l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, act_full_bytes(m, l), 1);
}

static void expect_embedding_backward(GHashTable *ms, const model *m, const layout *l)
{
  if (l->tp == 1 || !l->sp) return; /* an all-reduce's backward is the identity */
  expect_coll(ms, PH_BACKWARD, COLL_ALL_GATHER, act_full_bytes(m, l), 1);
}

/* Final norm and LM head (last stage): under sp the norm gathers the sequence; the head gathers
 * every rank's [b, s, V/t] logits into the full [b, s, V] bf16 logits. */
static void expect_head_forward(GHashTable *ms, const model *m, const layout *l, graph_phase ph)
{
  if (l->tp == 1) return;
  if (l->sp) expect_coll(ms, ph, COLL_ALL_GATHER, act_full_bytes(m, l), 1);
  expect_coll(ms, ph, COLL_ALL_GATHER, tokens(l) * m->vocab * BF16_BYTES, 1);
}

static void expect_head_backward(GHashTable *ms, const model *m, const layout *l)
{
  if (l->tp == 1) return;
  /* the logits gather's backward is a local slice; the head's f all-reduces its input gradient,
   * or under sp the final norm's gather reduce-scatters it */
  expect_coll(ms, PH_BACKWARD, l->sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, act_full_bytes(m, l), 1);
}

/* The activation message: the stage's output activations and the int64 position ids (the part of
 * the study's tuple the graph models, docs/memory.md "Pipe buffers"). */
static double act_message_bytes(const model *m, const layout *l)
{
  return act_held_bytes(m, l) + tokens(l) * INT64_BYTES;
}

/* ---- the checks, over every explicit rank, micro-batch and layer ---- */

typedef struct gen_case {
  int tp, pp;
  gboolean sp;
  layout_ckpt ckpt;
} gen_case;

static char *case_name(const gen_case *c, gboolean sym, int rank, int mb, int layer)
{
  return g_strdup_printf("tp %d pp %d sp %d ckpt %s sym %d, rank %d micro-batch %d layer %d", c->tp, c->pp, c->sp,
                         layout_ckpt_name(c->ckpt), sym, rank, mb, layer);
}

typedef void (*rank_check)(const graph *g, const model *m, const layout *l, const partition *part,
                           const graph_program *p, const gen_case *c, gboolean sym);

/* Run `check` on every explicit rank of every case, with symmetry and without. */
static void for_each_rank(const gen_case *cases, size_t n, rank_check check)
{
  model m = tiny();
  for (size_t i = 0; i < n; i++)
    for (int sym = 0; sym < 2; sym++) {
      layout l = mk(cases[i].tp, cases[i].pp, cases[i].sp, cases[i].ckpt);
      g_autoptr(graph) g = gen(&m, &l, sym);
      partition part;
      GError *err = NULL;
      ck_assert_msg(partition_make(&part, &m, l.pp, l.tp, gen_default_options().partition, &err), "%s",
                    err ? err->message : "");
      int explicit_ranks = 0;
      for (int r = 0; r < g->world_size; r++) {
        const graph_program *p = g_ptr_array_index(g->programs, r);
        if (p->mirror_of >= 0) continue;
        explicit_ranks++;
        check(g, &m, &l, &part, p, &cases[i], sym);
      }
      ck_assert_int_eq(explicit_ranks, sym ? l.pp : l.gpus);
      partition_clear(&part);
    }
}

static gboolean holds_layer(const partition *part, const model *m, int stage, int layer)
{
  int first, count;
  partition_layers(part, m, stage, &first, &count);
  return layer >= first && layer < first + count;
}

/* Every layer of the model, on its stage and off it, every micro-batch (and none: -1). */
static void check_layers(const graph *g, const model *m, const layout *l, const partition *part,
                         const graph_program *p, const gen_case *c, gboolean sym, unsigned phases)
{
  int stage = stage_of(l, p->rank);
  for (int layer = 0; layer < m->layers; layer++)
    for (int mb = -1; mb < MICRO_BATCHES; mb++) {
      GHashTable *want = multiset_new();
      if (mb >= 0 && holds_layer(part, m, stage, layer)) {
        if (phases & (1u << PH_FORWARD)) expect_layer_forward(want, m, l, PH_FORWARD);
        if (phases & (1u << PH_BACKWARD)) expect_layer_backward(want, m, l);
        if ((phases & (1u << PH_RECOMPUTE)) && l->ckpt == CKPT_EVERY_LAYER) expect_layer_forward(want, m, l, PH_RECOMPUTE);
      }
      g_autofree char *where = case_name(c, sym, p->rank, mb, layer);
      assert_same(tally(g, l, p, mb, layer, COLLECTIVES, phases), want, where);
    }
}

static void check_layer_fwd_bwd(const graph *g, const model *m, const layout *l, const partition *part,
                                const graph_program *p, const gen_case *c, gboolean sym)
{
  check_layers(g, m, l, part, p, c, sym, (1u << PH_FORWARD) | (1u << PH_BACKWARD));
}

static void check_layer_recompute(const graph *g, const model *m, const layout *l, const partition *part,
                                  const graph_program *p, const gen_case *c, gboolean sym)
{
  check_layers(g, m, l, part, p, c, sym, 1u << PH_RECOMPUTE);
}

/* The collectives outside the layers within each micro-batch: embedding and head. */
static void check_ends(const graph *g, const model *m, const layout *l, const partition *part,
                       const graph_program *p, const gen_case *c, gboolean sym)
{
  (void)part;
  int stage = stage_of(l, p->rank);
  gboolean ckpt = l->ckpt == CKPT_EVERY_LAYER;
  for (int mb = 0; mb < MICRO_BATCHES; mb++) {
    GHashTable *want = multiset_new();
    if (stage == 0) {
      expect_embedding_forward(want, m, l, PH_FORWARD);
      expect_embedding_backward(want, m, l);
      if (ckpt) expect_embedding_forward(want, m, l, PH_RECOMPUTE);
    }
    if (stage == l->pp - 1) {
      expect_head_forward(want, m, l, PH_FORWARD);
      expect_head_backward(want, m, l);
      if (ckpt) expect_head_forward(want, m, l, PH_RECOMPUTE);
    }
    g_autofree char *where = case_name(c, sym, p->rank, mb, -1);
    assert_same(tally(g, l, p, mb, -1, COLLECTIVES, ITEM_PHASES), want, where);
  }
}

/* Per micro-batch and stage boundary: the activation message forward, its gradient back, between
 * the ranks of the same (dp, tp) coordinates on adjacent stages. Nothing else is sent. */
static void check_messages(const graph *g, const model *m, const layout *l, const partition *part,
                           const graph_program *p, const gen_case *c, gboolean sym)
{
  (void)part;
  int stage = stage_of(l, p->rank), next = p->rank + ranks_per_stage(l), prev = p->rank - ranks_per_stage(l);
  double act = act_message_bytes(m, l), grad = act_held_bytes(m, l);
  for (int mb = -1; mb < MICRO_BATCHES; mb++) {
    GHashTable *want = multiset_new();
    if (mb >= 0 && stage < l->pp - 1) {
      expect_msg(want, PH_FORWARD, EV_SEND, next, act);
      expect_msg(want, PH_BACKWARD, EV_RECV, next, grad);
    }
    if (mb >= 0 && stage > 0) {
      expect_msg(want, PH_FORWARD, EV_RECV, prev, act);
      expect_msg(want, PH_BACKWARD, EV_SEND, prev, grad);
    }
    g_autofree char *where = case_name(c, sym, p->rank, mb, -1);
    assert_same(tally(g, l, p, mb, -1, MESSAGES, ~0u), want, where);
    for (int layer = 0; layer < m->layers; layer++) /* no message inside a layer */
      assert_same(tally(g, l, p, mb, layer, MESSAGES, ~0u), multiset_new(), where);
  }
}

/* tp 1, 2, 4, 8 x pp 1, 2 x no checkpointing, every layer; with the given sp. */
static size_t grid(gen_case *out, gboolean sp)
{
  static const int tps[] = {1, 2, 4, 8}, pps[] = {1, 2};
  static const layout_ckpt ckpts[] = {CKPT_NONE, CKPT_EVERY_LAYER};
  size_t n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(tps); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(pps); j++)
      for (size_t k = 0; k < G_N_ELEMENTS(ckpts); k++) out[n++] = (gen_case){tps[i], pps[j], sp, ckpts[k]};
  return n;
}

/* The grid with sp and without. */
static size_t grid_both_sp(gen_case *out)
{
  size_t n = grid(out, FALSE);
  return n + grid(out + n, TRUE);
}

/* Checkpointing adds a recompute; it changes neither forward nor backward. */
START_TEST(test_tp_layer_all_reduces_are_two_forward_three_backward_of_b_s_h_bf16)
{
  gen_case cs[16];
  for_each_rank(cs, grid(cs, FALSE), check_layer_fwd_bwd);
}
END_TEST

START_TEST(test_sp_layer_has_two_all_gather_reduce_scatter_pairs_each_way_of_b_s_h_bf16)
{
  gen_case cs[16];
  for_each_rank(cs, grid(cs, TRUE), check_layer_fwd_bwd);
}
END_TEST

START_TEST(test_embedding_reduces_b_s_h_and_head_gathers_full_b_s_V_bf16_logits_loss_is_local)
{
  gen_case cs[32];
  for_each_rank(cs, grid_both_sp(cs), check_ends);
}
END_TEST

START_TEST(test_pipeline_sends_one_activation_and_one_gradient_per_micro_batch_per_boundary)
{
  gen_case cs[32];
  for_each_rank(cs, grid_both_sp(cs), check_messages);
}
END_TEST

START_TEST(test_every_layer_recompute_repeats_each_layer_forward_collectives_and_none_without)
{
  gen_case cs[32];
  for_each_rank(cs, grid_both_sp(cs), check_layer_recompute);
}
END_TEST

/* ---- known disagreements with the study's code: run by `test_comm disagreements`, not in the suite ---- */

/* The study's stage output is TransformerLayerIO.as_tuple() (transformer/model/layers/base.py): every
 * tensor of it that is set goes in its own send (core/nn/parallel_module/communicator.py). In training
 * these are the activations, position_ids (int64), cumulative_seq_lengths (int32, one entry per
 * document start plus one: at least b+1), cumulative_seq_lengths_padded (int32, padded to b*(s+1)
 * entries: transformer/data/text_dataset_batch.py) and loss_weights (fp32, one per token), then the
 * pickled field names. The message is at least the sum of the tensors. */
static double act_tuple_min_bytes(const model *m, const layout *l)
{
  double b = l->micro_batch, s = l->seq_len;
  return act_held_bytes(m, l) + b * s * INT64_BYTES + (b + 1) * INT32_BYTES + b * (s + 1) * INT32_BYTES +
         b * s * FP32_BYTES;
}

static void check_tuple(const graph *g, const model *m, const layout *l, const partition *part,
                        const graph_program *p, const gen_case *c, gboolean sym)
{
  (void)g;
  (void)part;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if ((e->kind != EV_SEND && e->kind != EV_RECV) || e->phase != PH_FORWARD) continue;
    g_autofree char *where = case_name(c, sym, p->rank, e->micro_batch, e->layer);
    ck_assert_msg(e->bytes >= act_tuple_min_bytes(m, l), "%s: activation %s of %.17g bytes, the tuple is at least %.17g",
                  where, graph_kind_name(e->kind), e->bytes, act_tuple_min_bytes(m, l));
  }
}

START_TEST(test_activation_message_is_at_least_the_whole_layer_io_tuple)
{
  gen_case cs[32];
  for_each_rank(cs, grid_both_sp(cs), check_tuple);
}
END_TEST

/* With sp every tp rank sees 1/t of the tokens, so the norm weights' gradients differ: the study's
 * Optimizer.allreduce_sequence_parallel_gradients (core/optimizer/optimizer.py) all-reduces, over tp,
 * p.grad (bf16, h elements) of every parameter whose name contains "norm", one call per parameter:
 * 2 per layer of the stage, plus the final norm's. (The 4-byte gradient-norm all-reduce is not a
 * layer's and is left out.) */
static void check_norm_grads(const graph *g, const model *m, const layout *l, const partition *part,
                             const graph_program *p, const gen_case *c, gboolean sym)
{
  int stage = stage_of(l, p->rank), first, count;
  partition_layers(part, m, stage, &first, &count);
  GHashTable *want = multiset_new();
  if (l->sp && l->tp > 1)
    expect_coll(want, PH_DP, COLL_ALL_REDUCE, m->hidden * BF16_BYTES,
                NORMS_PER_LAYER * count + partition_has_final_norm(part, m, stage));
  GHashTable *got = multiset_new();
  for (guint i = 0; i < p->events->len; i++) { /* the step-end tp collectives of more than a scalar */
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->kind != EV_COLLECTIVE || (e->phase != PH_DP && e->phase != PH_OPTIMIZER) || e->bytes <= FP32_BYTES) continue;
    if (!strcmp(((const graph_group *)g_ptr_array_index(g->groups, e->peer))->label, "tp"))
      expect_coll(got, e->phase, e->variant, e->bytes, 1);
  }
  g_autofree char *where = case_name(c, sym, p->rank, -1, -1);
  assert_same(got, want, where);
}

START_TEST(test_sp_all_reduces_each_norm_weight_gradient_over_tp_on_its_own)
{
  gen_case cs[32];
  for_each_rank(cs, grid_both_sp(cs), check_norm_grads);
}
END_TEST

int main(int argc, char **argv)
{
  const char *only = argc > 1 ? argv[1] : "";
  Suite *s = suite_create("comm");
  if (!*only) {
    TCase *tc = tcase_create("closed forms");
    tcase_add_test(tc, test_tp_layer_all_reduces_are_two_forward_three_backward_of_b_s_h_bf16);
    tcase_add_test(tc, test_sp_layer_has_two_all_gather_reduce_scatter_pairs_each_way_of_b_s_h_bf16);
    tcase_add_test(tc, test_embedding_reduces_b_s_h_and_head_gathers_full_b_s_V_bf16_logits_loss_is_local);
    tcase_add_test(tc, test_pipeline_sends_one_activation_and_one_gradient_per_micro_batch_per_boundary);
    tcase_add_test(tc, test_every_layer_recompute_repeats_each_layer_forward_collectives_and_none_without);
    suite_add_tcase(s, tc);
  } else if (!strcmp(only, "disagreements")) {
    TCase *tc = tcase_create("disagreements");
    tcase_add_test(tc, test_activation_message_is_at_least_the_whole_layer_io_tuple);
    tcase_add_test(tc, test_sp_all_reduces_each_norm_weight_gradient_over_tp_on_its_own);
    suite_add_tcase(s, tc);
  }
  return check_run(s);
}
