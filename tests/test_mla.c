/* test_mla -- multi-head latent attention and multi-token prediction as operators (docs/moe.md, "MLA" and "MTP";
 * workloads/block.c mla_attention, block_mtp_entry; workloads/layer_pass.c): the FLOPs of one MLA layer's forward,
 * the parameters its GEMMs imply, the extra FLOPs of DeepSeek-V3's MTP module, and where the parameters sit.
 *
 * Expected values are computed by hand from DeepSeek-V3's config.json (hidden h 7168, 128 heads, q_lora_rank 1536,
 * kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, vocab 129280, 256 routed experts of
 * 2048, top 8, one shared expert of 2048): per token, a GEMM of k -> n costs 2 k n FLOPs forward,
 *   q down     2 * 7168 * 1536           =  22,020,096
 *   kv down    2 * 7168 * (512 + 64)     =   8,257,536
 *   q up       2 * 1536 * 128 * (128+64) =  75,497,472
 *   kv up      2 * 512 * 128 * (128+128) =  33,554,432
 *   out        2 * 128*128 * 7168        = 234,881,024
 *   attention  2 * s * 128 * (192 + 128) = 335,544,320 at s = 4096 (QK^T over d_qk 192, PV over d_v 128; the
 *              model FLOPs, no causal halving, as every attention here)
 *   one MLA layer: 709,754,880 per token at s = 4096.
 * Parameters: down 7168 * (1536 + 512 + 64) = 15,138,816 (replicated over tp), q up 1536 * 24576 = 37,748,736, kv up
 * 512 * 32768 = 16,777,216, out 16384 * 7168 = 117,440,512 (split over tp); + the latent norms 1536 + 512:
 * 187,107,328 (DeepSeek-V3's attention, 61 layers of it in 671 B).
 * MTP module forward per token: eh_proj 2 * 14336 * 7168 = 205,520,896, its layer (MoE, built like the last:
 * attention 709,754,880, router 2 * 7168 * 256 = 3,670,016, 8 routed experts 8 * 6 * 7168 * 2048 = 704,643,072,
 * the shared one 6 * 7168 * 2048 = 88,080,384), the shared head 2 * 7168 * 129280 = 1,853,358,080: 3,565,027,328.
 */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "test_layout.h"

#include "workloads/block.h"
#include "workloads/precision.h"
#include "workloads/generate.h"
#include "workloads/memory.h"
#include "workloads/model_params.h"
#include "workloads/partition.h"
#include "workloads/pipeline_layout.h"
#include "workloads/schedule.h"

#define MLA_PER_TOKEN_4K 709754880.0
#define MLA_ATTENTION_PARAMS 187107328.0
#define MTP_PER_TOKEN_4K 3565027328.0

static model dsv3(void)
{
  model m;
  GError *err = NULL;
  ck_assert_msg(model_load_named("deepseek-v3", &m, &err), "%s", err ? err->message : "");
  return m;
}

static gboolean mla_label(int op)
{
  return op == BL_Q_DOWN || op == BL_KV_DOWN || op == BL_Q_UP || op == BL_KV_UP || op == BL_ATTENTION ||
         op == BL_ATTN_OUT;
}

static layout lay(int gpus, int tp, gboolean sp)
{
  layout l = test_layout(gpus, tp, 1, 1, CKPT_NONE);
  l.sp = sp;
  l.seq_len = 4096;
  l.global_batch = gpus / tp;
  return l;
}

/* FLOPs forward of the table's MLA operators, as the emitter turns them into events (emit.c: 2 m n k count). */
static double table_mla_flops(const block *b, double T)
{
  double f = 0;
  for (int i = 0; i < b->n; i++) {
    const block_op *o = &b->op[i];
    if (!mla_label(o->label)) continue;
    if (o->kind == BLOCK_ATTENTION) f += o->flops;
    else if (o->kind == BLOCK_GEMM) f += 2.0 * (o->rows > 0 ? o->rows : T) * o->n * o->k * o->count;
  }
  return f;
}

static double table_mla_gemm_params(const block *b)
{
  double p = 0;
  for (int i = 0; i < b->n; i++)
    if (b->op[i].kind == BLOCK_GEMM && mla_label(b->op[i].label)) p += b->op[i].n * b->op[i].k * b->op[i].count;
  return p;
}

static graph *generate(const model *m, layout *l)
{
  GError *err = NULL;
  ck_assert_msg(layout_validate(l, m, &err), "%s", err ? err->message : "");
  gen_options o = gen_default_options();
  graph *g = gen_graph(m, l, &o, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  return g;
}

/* Forward FLOPs of rank 0's events: of layer `layer` with MLA labels (layer >= 0), or all of them (layer -1). */
static double graph_forward_flops(const graph *g, int layer)
{
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  double f = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->phase != PH_FORWARD || e->kind != EV_COMPUTE) continue;
    if (layer < 0 || (e->layer == layer && mla_label(e->op))) f += e->flops;
  }
  return f;
}

START_TEST(mla_layer_forward_flops_match_the_closed_form)
{
  model m = dsv3();
  block_code c = {.fused_norm = TRUE, .mlp_in_gemms = 1, .sp_saves_shard = TRUE};
  block b;
  layout l = lay(1, 1, FALSE);
  block_moe_layer(&m, &l, &c, &b);
  ck_assert_double_eq_tol(table_mla_flops(&b, 4096), 4096 * MLA_PER_TOKEN_4K, 1e-6 * 4096 * MLA_PER_TOKEN_4K);
  /* the emitted events of layer 5 (an MoE layer) on one GPU carry the same */
  graph *g = generate(&m, &l);
  ck_assert_double_eq_tol(graph_forward_flops(g, 5), 4096 * MLA_PER_TOKEN_4K, 1e-6 * 4096 * MLA_PER_TOKEN_4K);
  graph_free(g);
  /* tp 8 with sp: every operator on 1/8 (the replicated down-projections on the rank's T/8 tokens) */
  l = lay(8, 8, TRUE);
  block_moe_layer(&m, &l, &c, &b);
  ck_assert_double_eq_tol(table_mla_flops(&b, 4096), 4096 * MLA_PER_TOKEN_4K / 8, 1e-6 * 4096 * MLA_PER_TOKEN_4K);
  /* tp 8 without sp: the replicated down-projections on all T tokens on every rank */
  l = lay(8, 8, FALSE);
  block_moe_layer(&m, &l, &c, &b);
  double down = 22020096.0 + 8257536.0;
  ck_assert_double_eq_tol(table_mla_flops(&b, 4096), 4096 * (down + (MLA_PER_TOKEN_4K - down) / 8),
                          1e-6 * 4096 * MLA_PER_TOKEN_4K);
}
END_TEST

START_TEST(mla_gemm_shapes_carry_the_dims_and_the_precision)
{
  model m = dsv3();
  block_code c = {.fused_norm = TRUE, .mlp_in_gemms = 1, .sp_saves_shard = TRUE};
  block b;
  layout l = lay(8, 8, TRUE);
  l.precision = PREC_MXFP8;
  block_layer(&m, &l, &c, &b);
  /* label, n, k, rows (0: the T tokens) at tp 8, sp: the down-projections on T/8 = 512 rows */
  const struct { int label; double n, k, rows; } want[] = {
      {BL_Q_DOWN, 1536, 7168, 512}, {BL_KV_DOWN, 576, 7168, 512}, {BL_Q_UP, 16 * 192, 1536, 0},
      {BL_KV_UP, 16 * 256, 512, 0}, {BL_ATTN_OUT, 7168, 16 * 128, 0}};
  int found = 0;
  for (int i = 0; i < b.n; i++)
    for (size_t w = 0; w < G_N_ELEMENTS(want); w++)
      if (b.op[i].kind == BLOCK_GEMM && (int)b.op[i].label == want[w].label) {
        ck_assert_double_eq(b.op[i].n, want[w].n);
        ck_assert_double_eq(b.op[i].k, want[w].k);
        ck_assert_double_eq(b.op[i].rows, want[w].rows);
        ck_assert_int_ne(b.op[i].dtype[0], DT_BF16); /* an FP8 linear layer */
        found++;
      }
  ck_assert_int_eq(found, 5);
  for (int i = 0; i < b.n; i++)
    if (b.op[i].kind == BLOCK_ATTENTION) {
      ck_assert_int_eq(b.op[i].attn_m, 16);  /* 128 heads / tp 8 */
      ck_assert_int_eq(b.op[i].attn_k, 160); /* (192 + 128) / 2 */
    }
}
END_TEST

START_TEST(mla_gemms_imply_the_model_parameter_count)
{
  model m = dsv3();
  block_code c = {.fused_norm = TRUE, .mlp_in_gemms = 1, .sp_saves_shard = TRUE};
  block b;
  layout l = lay(1, 1, FALSE);
  block_layer(&m, &l, &c, &b);
  double latent_norms = 1536 + 512;
  ck_assert_double_eq(table_mla_gemm_params(&b) + latent_norms, MLA_ATTENTION_PARAMS);
  ck_assert_double_eq(model_attention_params(&m), MLA_ATTENTION_PARAMS);
  ck_assert_double_eq(block_layer_params(&m, 1), model_layer_params_at(&m, 0, FALSE)); /* a dense layer */
  /* tp 8: the down-projections replicated, the rest split */
  l = lay(8, 8, TRUE);
  block_layer(&m, &l, &c, &b);
  ck_assert_double_eq(table_mla_gemm_params(&b), 15138816.0 + (37748736.0 + 16777216.0 + 117440512.0) / 8);
}
END_TEST

/* Every parameter placed once: at pp 1 the stage holds the model (MTP module included), at pp 4 with a layout
 * string the last stage adds the embedding's copy MTP reads; the experts at ep 64 sum to all of them. */
START_TEST(stage_parameters_add_up_to_the_model_with_its_mtp_module)
{
  model m = dsv3();
  layout l = lay(1, 1, FALSE);
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
  partition p;
  ck_assert(partition_make_for(&p, &m, &l, PARTITION_AUTO, NULL));
  double total = mem_stage_params(&m, &l, &p, 0) + mem_stage_expert_params(&m, &l, &p, 0);
  ck_assert_double_eq_tol(total, model_params(&m), 1e-9 * model_params(&m));
  partition_clear(&p);
  l = test_layout(256, 1, 4, 1, CKPT_NONE);
  l.seq_len = 4096;
  l.global_batch = 1024;
  l.ep = 64;
  ck_assert(sched_parse("interleaved", &l.schedule, NULL));
  l.virtual_stages = 4;
  g_strlcpy(l.pipeline_layout, "Et*4|(tttt|)*14,tmL", sizeof l.pipeline_layout);
  ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
  ck_assert(partition_make_for(&p, &m, &l, PARTITION_AUTO, NULL));
  double dense = 0, experts = 0;
  for (int s = 0; s < 4; s++) {
    dense += mem_stage_params(&m, &l, &p, s);
    experts += mem_stage_expert_params(&m, &l, &p, s) * 64;
  }
  double expert_total = (58 + 1) * 256 * 3.0 * 7168 * 2048; /* 58 MoE layers and the MTP module's */
  ck_assert_double_eq_tol(experts, expert_total, 1e-9 * expert_total);
  ck_assert_double_eq_tol(dense + experts, model_params(&m) + 129280.0 * 7168, 1e-9 * model_params(&m));
  partition_clear(&p);
}
END_TEST

START_TEST(mtp_module_adds_its_closed_form_flops)
{
  model m = dsv3(), none = dsv3();
  none.mtp_layers = 0;
  layout l = lay(1, 1, FALSE);
  graph *g = generate(&m, &l), *g0 = generate(&none, &l);
  double extra = graph_forward_flops(g, -1) - graph_forward_flops(g0, -1);
  ck_assert_double_eq_tol(extra, 4096 * MTP_PER_TOKEN_4K, 1e-6 * 4096 * MTP_PER_TOKEN_4K);
  graph_free(g);
  graph_free(g0);
}
END_TEST

/* Forward bytes kept by rank 0's events of layer `layer`, and the recompute events of its backward. */
static void layer_kept(const graph *g, int layer, double *forward, double *recompute, int *recompute_events)
{
  const graph_program *p = g_ptr_array_index(g->programs, 0);
  *forward = *recompute = 0;
  *recompute_events = 0;
  for (guint i = 0; i < p->events->len; i++) {
    const graph_event *e = &g_array_index(p->events, graph_event, i);
    if (e->layer != layer || e->micro_batch != 0) continue;
    if (e->phase == PH_FORWARD) *forward += e->mem_delta_bytes;
    if (e->phase == PH_RECOMPUTE) {
      *recompute += e->mem_delta_bytes;
      *recompute_events += e->kind == EV_COMPUTE;
    }
  }
}

/* mla_up_proj drops q, k, v (128 heads x (192 + 192 + 128) bf16 a token: 536,870,912 bytes at T 4096) and the
 * up-projections' normalised inputs (1536 + 512 bf16 a token: 16,777,216) at the forward, and its recompute runs
 * the two latent norms, the two up-projections and the rope again (5 kernels) and brings them back. */
START_TEST(mla_up_proj_drops_q_k_v_and_recomputes_them)
{
  model m = dsv3();
  layout l = lay(1, 1, FALSE);
  graph *g = generate(&m, &l);
  l.ckpt = CKPT_MLA_UP_PROJ;
  graph *gr = generate(&m, &l);
  double fwd, rec, fwd_r, rec_r;
  int n, n_r;
  layer_kept(g, 5, &fwd, &rec, &n);
  layer_kept(gr, 5, &fwd_r, &rec_r, &n_r);
  ck_assert_double_eq(fwd - fwd_r, 536870912.0 + 16777216.0);
  ck_assert_double_eq(rec_r, 536870912.0 + 16777216.0);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(n_r, 5);
  graph_free(g);
  graph_free(gr);
  l = lay(1, 1, FALSE); /* refused on a model without MLA */
  l.ckpt = CKPT_MLA_UP_PROJ;
  model llama;
  ck_assert(model_load_named("llama3-8b", &llama, NULL));
  GError *err = NULL;
  ck_assert(!layout_validate(&l, &llama, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "mla_up_proj"));
  g_clear_error(&err);
}
END_TEST

START_TEST(pipeline_layout_takes_mtp_before_the_loss_only)
{
  int b[17];
  GError *err = NULL;
  ck_assert_msg(pipeline_layout_bounds("Et*4|(tttt|)*14,tmL", 61, 1, 16, b, &err), "%s", err ? err->message : "");
  ck_assert_int_eq(b[15], 1 + 60);  /* the last stage: layer 60, then the final norm and head (MTP rides with L) */
  ck_assert_int_eq(b[16], 61 + 3);
  const char *bad[] = {"Et*4|(tttt|)*14,tL", "Et*4|(tttt|)*14,tmmL", "Et*4|(tttt|)*14,mtL", "Et*4|(tttt|)*14,tm|L"};
  const int stages[] = {16, 16, 16, 17};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&err);
    ck_assert_msg(!pipeline_layout_bounds(bad[i], 61, 1, stages[i], b, &err), "%s accepted", bad[i]);
  }
  g_clear_error(&err);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("mla");
  TCase *tc = tcase_create("mla");
  tcase_add_test(tc, mla_layer_forward_flops_match_the_closed_form);
  tcase_add_test(tc, mla_gemm_shapes_carry_the_dims_and_the_precision);
  tcase_add_test(tc, mla_gemms_imply_the_model_parameter_count);
  tcase_add_test(tc, stage_parameters_add_up_to_the_model_with_its_mtp_module);
  tcase_add_test(tc, mtp_module_adds_its_closed_form_flops);
  tcase_add_test(tc, pipeline_layout_takes_mtp_before_the_loss_only);
  tcase_add_test(tc, mla_up_proj_drops_q_k_v_and_recomputes_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(suite()); }
