/* test_memory_key -- the memory verdict's cache key (analysis/pool.c pool_memory_key) is derived from the layout's
 * and the stack's own tables, so that a field cannot be forgotten: the layout's field table and the axes cover
 * every byte of struct layout but alignment padding; every field the memory depends on changes the key when
 * perturbed, and a field it does not depend on leaves it; the stack's key table says of every key whether the
 * memory depends on it, and its defaults are the study's code (gen_default_code). */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/pool.h"
#include "check_main.h"
#include "platforms/plat_file.h"
#include "platforms/stack.h"
#include "workloads/axes.h"
#include "workloads/layout.h"
#include "workloads/precision.h"

typedef struct span {
  gsize off, size, align;
  const char *name;
} span;

static int by_offset(const void *a, const void *b)
{
  const span *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

static gsize align_up(gsize v, gsize a) { return (v + a - 1) / a * a; }

/* A field added to struct layout but to neither table leaves a hole larger than the padding before the next
 * field (or at the end): the spans of the axes and the fields, in order, must follow each other with only the
 * padding their alignment needs, and the padding's total is pinned. */
START_TEST(test_layout_tables_cover_every_byte_of_the_layout)
{
  span s[AXIS_N + 64];
  int n = 0;
  for (int a = 0; a < AXIS_N; a++) s[n++] = (span){axis_get(a)->offset, sizeof(int), G_ALIGNOF(int), axis_get(a)->name};
  gsize nf;
  const layout_field *f = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++) {
    gsize al = f[i].type == LAYOUT_FIELD_DOUBLE ? G_ALIGNOF(double) : f[i].type == LAYOUT_FIELD_INT ? G_ALIGNOF(int) : 1;
    if (f[i].type == LAYOUT_FIELD_INT) ck_assert_uint_eq(f[i].size, sizeof(int));
    if (f[i].type == LAYOUT_FIELD_DOUBLE) ck_assert_uint_eq(f[i].size, sizeof(double));
    s[n++] = (span){f[i].offset, f[i].size, al, f[i].name};
  }
  qsort(s, n, sizeof *s, by_offset);
  gsize end = 0, padding = 0;
  for (int i = 0; i < n; i++) {
    ck_assert_msg(s[i].off == align_up(end, s[i].align), "struct layout: %zu undeclared bytes before '%s' (add the "
                  "field to layout.c's LAYOUT_FIELDS or the axes table)", s[i].off - end, s[i].name);
    padding += s[i].off - end;
    end = s[i].off + s[i].size;
  }
  ck_assert_msg(sizeof(layout) == align_up(end, G_ALIGNOF(layout)), "struct layout: %zu undeclared bytes after '%s'",
                sizeof(layout) - end, s[n - 1].name);
  padding += sizeof(layout) - end;
  /* An undeclared int could sit in a padding hole unseen by the check above: the holes' total is pinned (today 4:
   * overlap_moe_ep_comm filled the 4 bytes before moe_imbalance, then cuda_graph made the ints odd, leaving 4 after
   * pipeline_layout at the struct's end; moe_flex_dispatcher made them even again: 0; cp_comm made them odd: 4; fp8_param_gather even: 0; cuda_graph_scope odd: 4, after
   * pipeline_layout at the end), so a field filling one shows here. A declared field that fills or opens one:
   * update. */
  ck_assert_msg(padding == 4, "struct layout: %zu bytes of padding where 4 were: a new field in a hole? (declare "
                "it in layout.c's LAYOUT_FIELDS, then update this count)", padding);
}
END_TEST

static char *layout_key(const layout *l)
{
  GString *k = g_string_new(NULL);
  layout_memory_key(l, k);
  return g_string_free(k, FALSE);
}

/* Every axis and every MEMORY field moves the key; every DERIVED field leaves it. */
START_TEST(test_layout_memory_key_changes_with_each_memory_field_only)
{
  layout l = layout_default();
  g_autofree char *base = layout_key(&l);
  for (int a = 0; a < AXIS_N; a++) {
    layout p = l;
    axis_set_size(&p, a, axis_size(&l, a) + 1);
    g_autofree char *k = layout_key(&p);
    if (axis_get(a)->derived) ck_assert_str_eq(k, base);
    else ck_assert_msg(strcmp(k, base), "axis %s does not change the memory key", axis_get(a)->name);
  }
  gsize nf;
  const layout_field *f = layout_fields(&nf);
  for (gsize i = 0; i < nf; i++) {
    layout p = l;
    char *at = (char *)&p + f[i].offset;
    if (f[i].type == LAYOUT_FIELD_INT) *(int *)at += 1;
    else if (f[i].type == LAYOUT_FIELD_DOUBLE) *(double *)at += 0.5;
    else at[0] = 'x';
    g_autofree char *k = layout_key(&p);
    if (f[i].tag == LAYOUT_KEY_DERIVED) ck_assert_msg(!strcmp(k, base), "derived %s changes the key", f[i].name);
    else ck_assert_msg(strcmp(k, base), "field %s does not change the memory key", f[i].name);
  }
}
END_TEST

static char *stack_key(const stack_profile *s)
{
  GString *k = g_string_new(NULL);
  stack_memory_key(s, k);
  return g_string_free(k, FALSE);
}

/* Each key says MEMORY or NOT_MEMORY (exactly one); a MEMORY key moves the key, a NOT_MEMORY one (an efficiency,
 * a latency, the zero default that reaches the memory through the layout) leaves it: two stacks differing only in
 * such keys share their memory verdicts. */
START_TEST(test_stack_memory_key_follows_the_key_tags)
{
  GError *err = NULL;
  stack_profile st;
  ck_assert_msg(stack_load_named("nemo", &st, &err), "%s", err ? err->message : "");
  g_autofree char *base = stack_key(&st);
  size_t n;
  const plat_field *f = stack_key_table(&n);
  int memory = 0;
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(f[i].tags == STACK_KEY_MEMORY || f[i].tags == STACK_KEY_NOT_MEMORY, "stack key %s: tags %u",
                  f[i].key, f[i].tags);
    stack_profile p = st;
    double *v = (double *)((char *)&p + f[i].off);
    *v = *v == f[i].hi ? f[i].lo : f[i].hi; /* another allowed value */
    g_autofree char *k = stack_key(&p);
    if (f[i].tags == STACK_KEY_MEMORY) {
      memory++;
      ck_assert_msg(strcmp(k, base), "stack key %s does not change the memory key", f[i].key);
    } else {
      ck_assert_msg(!strcmp(k, base), "stack key %s (not the memory's) changes the memory key", f[i].key);
    }
  }
  /* cuda_context_gib, nccl_buffers_gib, fragmentation and the 15 of the code's graph (fused_swiglu, attn_out_shared,
   * te_dummy_wgrad, tp_async_grad_reduce and fused_softmax_max_seq among them) */
  ck_assert_int_eq(memory, 18);
}
END_TEST

/* The defaults of the keys of the code's graph are the study's code, as the generator's own defaults say. */
START_TEST(test_stack_defaults_are_the_study_code)
{
  size_t n;
  const plat_field *f = stack_key_table(&n);
  stack_profile st = {0};
  for (size_t i = 0; i < n; i++)
    if (f[i].optional) *(double *)((char *)&st + f[i].off) = f[i].dflt;
  gen_code want = gen_default_code(), got = stack_gen_code(&st);
  ck_assert_int_eq(got.mlp_in_gemms, want.mlp_in_gemms);
  ck_assert_int_eq(got.fused_norm, want.fused_norm);
  ck_assert_double_eq(got.grad_reduce_bytes, want.grad_reduce_bytes);
  ck_assert_int_eq(got.fused_softmax_batches, want.fused_softmax_batches);
  ck_assert_int_eq(got.fused_softmax_max_seq, want.fused_softmax_max_seq);
  ck_assert_int_eq(got.sp_saves_shard, want.sp_saves_shard);
  ck_assert_int_eq(got.pipe_tensors_shared, want.pipe_tensors_shared);
  ck_assert_int_eq(got.grad_buffer, want.grad_buffer);
  ck_assert_double_eq(got.vocab_parallel_loss_bytes, want.vocab_parallel_loss_bytes);
  ck_assert_int_eq(got.tp_comm_overlap, want.tp_comm_overlap);
  ck_assert_int_eq(got.tp_async_grad_reduce, want.tp_async_grad_reduce);
  ck_assert_int_eq((int)st.zero, layout_default().zero);
}
END_TEST

/* A stack file with only the keys without a default loads, and every default is what the table says; a shipped
 * stack round-trips through stack_save unchanged; stack_show writes every key. */
START_TEST(test_stack_save_writes_only_what_differs_and_reads_back)
{
  GError *err = NULL;
  stack_profile st, back;
  ck_assert(stack_load_named("study", &st, &err));
  ck_assert_double_eq(st.gemm_tile_m, 256);
  ck_assert_double_eq(st.tp_overlap_sm_fraction, 0.15);
  ck_assert_double_eq(st.cuda_context_gib, 0.75);
  ck_assert_int_eq(st.partition, PARTITION_AUTO);
  ck_assert_int_eq(st.attention[GRAPH_ATTN_SCORES].model, STACK_ATTN_MATERIALIZED);
  ck_assert_int_eq(st.attention[GRAPH_ATTN_FLASH2].model, STACK_ATTN_FUSED);
  g_autofree char *dir = g_dir_make_tmp("lsim-stack-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "s.json", NULL);
  ck_assert(stack_save(&st, path, &err));
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  ck_assert_ptr_null(strstr(text, "gemm_tile_m"));    /* at its default */
  ck_assert_ptr_nonnull(strstr(text, "fragmentation")); /* fitted: always written */
  ck_assert(stack_load_file(path, &back, &err));
  ck_assert_int_eq(memcmp(&st, &back, sizeof st), 0);
  /* the effective stack shows every key, the defaulted ones with their values */
  g_autofree char *shown = stack_show(&st);
  size_t n;
  const plat_field *f = stack_key_table(&n);
  for (size_t i = 0; i < n; i++) ck_assert_msg(strstr(shown, f[i].key), "stack_show lacks %s", f[i].key);
  ck_assert_ptr_nonnull(strstr(shown, "\"gemm_tile_m\":\t256"));
  ck_assert_ptr_nonnull(strstr(shown, "\"scores\":"));
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* The bug four hand edits made possible: two layouts differing only in precision got one memory verdict. */
START_TEST(test_request_key_tells_precisions_apart)
{
  sim_request rq = {.l = layout_default(), .gen = gen_default_options()};
  GError *err = NULL;
  ck_assert(model_load_named("llama-7b", &rq.m, &err));
  ck_assert(profile_load_with_stack("h100-sxm5-80gb", NULL, &rq.prof, &err));
  sim_request fp8 = rq;
  fp8.l.precision = 1;
  g_autofree char *a = pool_memory_key(&rq, TRUE), *b = pool_memory_key(&fp8, TRUE), *c = pool_memory_key(&rq, FALSE);
  ck_assert_str_ne(a, b);
  ck_assert_str_ne(a, c);
  sim_request faster = rq; /* the links and kernels do not move the memory */
  faster.prof.stack.gemm_efficiency *= 0.5;
  faster.prof.ib_bytes_per_s *= 2;
  g_autofree char *d = pool_memory_key(&faster, TRUE);
  ck_assert_str_eq(a, d);
}
END_TEST

static Suite *memory_key_suite(void)
{
  Suite *s = suite_create("memory_key");
  TCase *tc = tcase_create("key");
  tcase_add_test(tc, test_layout_tables_cover_every_byte_of_the_layout);
  tcase_add_test(tc, test_layout_memory_key_changes_with_each_memory_field_only);
  tcase_add_test(tc, test_stack_memory_key_follows_the_key_tags);
  tcase_add_test(tc, test_stack_defaults_are_the_study_code);
  tcase_add_test(tc, test_stack_save_writes_only_what_differs_and_reads_back);
  tcase_add_test(tc, test_request_key_tells_precisions_apart);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(memory_key_suite()); }
