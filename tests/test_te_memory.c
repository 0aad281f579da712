/* test_te_memory -- what Megatron-Core with Transformer Engine keeps that the study's code does not (docs/memory.md,
 * "Megatron with Transformer Engine"): the fused SwiGLU saving its input alone, the attention's output shared with
 * the output projection's saved input in bf16, and TE's cached dummy weight gradients (stack keys fused_swiglu,
 * attn_out_shared, te_dummy_wgrad). Expected values are written here from the codes' sources, not from block.c:
 * Megatron's fused_bias_swiglu.py (SwiGLUFunction saves `input`), TE's module/base.py get_dummy_wgrad (one
 * torch.empty per (rows, cols, dtype)). */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"

#include "workloads/block.h"
#include "workloads/generate.h"
#include "workloads/memory.h"
#include "workloads/precision.h"

static model load70b(void)
{
  model m;
  ck_assert(model_load_named("llama3-70b", &m, NULL));
  return m;
}

static layout make_layout(const model *m, int gpus, int tp, int pp, precision pr)
{
  layout l = test_layout(gpus, tp, pp, 1, CKPT_NONE);
  l.sp = tp > 1;
  l.attn = ATTN_FLASH2_RMSNORM;
  l.precision = pr;
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, m, &err), "%s", err ? err->message : "");
  return l;
}

/* Megatron-Core's TE layer as the stack nemo runs it (fused norms, one fused gate-and-up GEMM, sp shards saved) */
static block_code te_code(gboolean te)
{
  return (block_code){.fused_norm = TRUE, .mlp_in_gemms = 1, .sp_saves_shard = TRUE, .pipe_tensors_shared = TRUE,
                      .vocab_parallel_loss_bytes = 4, .fused_swiglu = te, .attn_out_shared = te};
}

static double saved_of(const block *b, block_label label)
{
  for (int i = 0; i < b->n; i++)
    if (b->op[i].label == label) return b->op[i].saved_bytes;
  ck_abort_msg("no op %d", label);
  return 0;
}

/* One llama3-70b layer at tp 8 with sp, bf16, per token: the two norms' inputs and the QKV and MLP GEMMs'
 * inputs (sp shards, 2h/t each), q k v after rotary (2(h + 2 kvd)/t), the fp32 log-sum-exp (4 a/t), the attention
 * output once (2h/t: the output projection's input, one storage), the gate-and-up output (2 * 2f/t: the fused
 * SwiGLU's only saved tensor) and the down projection's input (2f/t): T/t (12h + 4 kvd + 4a + 6f) in all. */
START_TEST(test_megatron_te_layer_saves_12h_4kvd_6f_per_token_over_t)
{
  model m = load70b();
  layout l = make_layout(&m, 64, 8, 1, PREC_BF16);
  double T = l.seq_len * (double)l.micro_batch, h = 8192, kvd = 8 * 128, f = 28672, a = 64, t = 8;
  block_code c = te_code(TRUE);
  block b;
  block_layer(&m, &l, &c, &b);
  ck_assert_double_eq_tol(block_saved_bytes(&b), T / t * (12 * h + 4 * kvd + 4 * a + 6 * f), 1);
  ck_assert_double_eq_tol(saved_of(&b, BL_SWIGLU), 2 * T * 2 * f / t, 1);
  /* the study's code (torch's silu(gate) * up, a contiguous copy of the attention's output): f/t and h/t more */
  block_code s = te_code(FALSE);
  block bs;
  block_layer(&m, &l, &s, &bs);
  ck_assert_double_eq_tol(block_saved_bytes(&bs) - block_saved_bytes(&b), 2 * T * f / t + 2 * T * h / t, 1);
}
END_TEST

/* Under FP8 the output projection saves its own FP8 copy of its input: the attention keeps its bf16 output. */
START_TEST(test_attention_output_is_shared_in_bf16_only)
{
  model m = load70b();
  double T = 8192, h = 8192, t = 8;
  for (int k = 0; k < 2; k++) {
    precision pr = k ? PREC_FP8 : PREC_BF16;
    layout l = make_layout(&m, 64, 8, 1, pr);
    T = l.seq_len * (double)l.micro_batch;
    block_code on = te_code(TRUE), off = te_code(FALSE);
    block bon, boff;
    block_layer(&m, &l, &on, &bon);
    block_layer(&m, &l, &off, &boff);
    double want = pr == PREC_BF16 ? 2 * T * h / t : 0;
    ck_assert_double_eq_tol(saved_of(&boff, BL_ATTENTION) - saved_of(&bon, BL_ATTENTION), want, 1);
  }
}
END_TEST

/* te_dummy_wgrad: one bf16 tensor per distinct linear weight shape on the rank, 2 (h (h + 2 kvd) + h h + 2 f h
 * + h f) / t bytes, the same for a stage of 40 layers (pp 2) as of 80 (pp 1); nothing on the study's code. */
START_TEST(test_te_dummy_wgrad_is_one_layer_of_linear_weights_per_rank)
{
  model m = load70b();
  double h = 8192, kvd = 8 * 128, f = 28672, t = 8;
  double want = 2 * (h * (h + 2 * kvd) + h * h + 2 * f * h + h * f) / t;
  for (int pp = 1; pp <= 2; pp++) {
    layout l = make_layout(&m, 64 * pp, 8, pp, PREC_BF16);
    partition p;
    ck_assert(partition_make(&p, &m, pp, 1, PARTITION_UNIFORM, NULL));
    gen_code code = gen_default_code();
    mem_states off, on;
    mem_model_states(&m, &l, &code, &p, 0, &off);
    code.te_dummy_wgrad = TRUE;
    mem_model_states(&m, &l, &code, &p, 0, &on);
    ck_assert_double_eq_tol(on.buffers_bytes - off.buffers_bytes, want, 1);
    ck_assert_double_eq(on.params_bytes + on.grads_bytes + on.optimizer_bytes,
                        off.params_bytes + off.grads_bytes + off.optimizer_bytes);
    partition_clear(&p);
  }
}
END_TEST

static const block_op *op_of(const block *b, block_label label)
{
  for (int i = 0; i < b->n; i++)
    if (b->op[i].label == label) return &b->op[i];
  ck_abort_msg("no op %d", label);
  return NULL;
}

/* Gradient-accumulation fusion (TE's fuse_wgrad_accumulation: the wgrad GEMM accumulates into the fp32 main_grad,
 * autograd gets the cached dummy): a linear's backward holds its output gradient (T x n) and the input gradient it
 * writes (T x k), no bf16 weight gradient (k x n). One llama3-70b layer at tp 8 with sp, bf16: the fused gate-and-up
 * (n 2f/t, k h) holds 2 T (2f/t + h) while it runs, the down projection (n h, k f/t) 2 T (h + f/t); without the
 * fusion each also holds 2 k n. */
START_TEST(test_fused_wgrad_backward_holds_no_weight_gradient)
{
  model m = load70b();
  layout l = make_layout(&m, 64, 8, 1, PREC_BF16);
  double T = l.seq_len * (double)l.micro_batch, h = 8192, f = 28672, t = 8;
  block_code c = te_code(TRUE), plain = te_code(TRUE);
  c.wgrad_in_main_grad = TRUE;
  block b, bp;
  block_layer(&m, &l, &c, &b);
  block_layer(&m, &l, &plain, &bp);
  ck_assert_double_eq_tol(op_of(&b, BL_MLP_UP)->transient_bytes[1], 2 * T * (2 * f / t + h), 1);
  ck_assert_double_eq_tol(op_of(&b, BL_MLP_DOWN)->transient_bytes[1], 2 * T * (h + f / t), 1);
  ck_assert_double_eq_tol(op_of(&bp, BL_MLP_UP)->transient_bytes[1] - op_of(&b, BL_MLP_UP)->transient_bytes[1],
                          2 * h * 2 * f / t, 1);
  /* what the layer saves is not changed */
  ck_assert_double_eq(block_saved_bytes(&b), block_saved_bytes(&bp));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("te_memory");
  TCase *tc = tcase_create("te_memory");
  tcase_add_test(tc, test_megatron_te_layer_saves_12h_4kvd_6f_per_token_over_t);
  tcase_add_test(tc, test_attention_output_is_shared_in_bf16_only);
  tcase_add_test(tc, test_te_dummy_wgrad_is_one_layer_of_linear_weights_per_rank);
  tcase_add_test(tc, test_fused_wgrad_backward_holds_no_weight_gradient);
  suite_add_tcase(s, tc);
  return check_run(s);
}
