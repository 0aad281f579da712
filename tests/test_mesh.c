/* test_mesh -- the process mesh (workloads/mesh.h) and the axis table (workloads/axes.h) against Megatron-Core's
 * rank generator. The expected groups below were written out by Megatron-Core's own
 * generate_masked_orthogonal_rank_groups (megatron/core/parallel_state.py, RankGenerator, default order
 * "tp-cp-ep-dp-pp", at commit d98e8a64 of NVIDIA/Megatron-LM) for tp 2, cp 2, ep 1, dp 2, pp 2 on 16 ranks;
 * the generator's graph must carry exactly these groups. */
#include <check.h>

#include "check_main.h"
#include "test_layout.h"
#include <string.h>

#include "workloads/axes.h"
#include "workloads/generate.h"
#include "workloads/mesh.h"

/* Megatron-Core's get_ranks(token) for tp2 cp2 dp2 pp2, 16 ranks: 8 groups of 2, or 4 of 4 (dp-cp). */
static const int TP[8][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}};
static const int CP[8][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}};
static const int DP[8][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}};
static const int PP[8][2] = {{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}};
static const int DP_CP[4][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}};

static model small(void)
{
  model m = {.name = "small", .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .vocab = 1024};
  return m;
}

/* tp2 cp2 dp2 pp2 on 16 GPUs, validated (dp derived). */
static layout l16(void)
{
  layout l = test_layout(16, 2, 2, 1, CKPT_NONE);
  l.cp = 2;
  l.seq_len = 256;
  l.global_batch = 8;
  model m = small();
  GError *err = NULL;
  ck_assert_msg(layout_validate(&l, &m, &err), "%s", err ? err->message : "");
  return l;
}

static void assert_groups(const mesh *me, unsigned mask, const int *expected, int count, int size)
{
  ck_assert_int_eq(mesh_group_count(me, mask), count);
  ck_assert_int_eq(mesh_group_size(me, mask), size);
  int got[16];
  for (int i = 0; i < count; i++) {
    mesh_group_ranks(me, mask, i, got);
    for (int k = 0; k < size; k++) {
      ck_assert_int_eq(got[k], expected[i * size + k]);
      /* and back: the rank's group number and place in it */
      ck_assert_int_eq(mesh_group_index(me, got[k], mask), i);
      ck_assert_int_eq(mesh_group_position(me, got[k], mask), k);
    }
  }
}

START_TEST(test_groups_are_megatrons_rank_generator_groups)
{
  layout l = l16();
  ck_assert_int_eq(l.dp, 2);
  mesh me;
  mesh_init(&me, &l);
  ck_assert_int_eq(me.world, 16);
  assert_groups(&me, AXIS_BIT(AXIS_TP), &TP[0][0], 8, 2);
  assert_groups(&me, AXIS_BIT(AXIS_CP), &CP[0][0], 8, 2);
  assert_groups(&me, AXIS_BIT(AXIS_DP), &DP[0][0], 8, 2);
  assert_groups(&me, AXIS_BIT(AXIS_PP), &PP[0][0], 8, 2);
  assert_groups(&me, AXIS_BIT(AXIS_DP) | AXIS_BIT(AXIS_CP), &DP_CP[0][0], 4, 4);
  /* the table's gradient group of dp is Megatron's dp-cp */
  assert_groups(&me, axis_get(AXIS_DP)->group, &DP_CP[0][0], 4, 4);
}
END_TEST

START_TEST(test_rank_and_coordinates_are_a_bijection)
{
  /* uneven degrees, so a swapped stride or radix shows: tp 2, cp 3, dp 5, pp 7 */
  int size[AXIS_N];
  for (int a = 0; a < AXIS_N; a++) size[a] = 1; /* any other axis of the table */
  size[AXIS_TP] = 2, size[AXIS_CP] = 3, size[AXIS_DP] = 5, size[AXIS_PP] = 7;
  mesh me;
  mesh_init_sizes(&me, size);
  ck_assert_int_eq(me.world, 210);
  g_autofree gboolean *seen = g_new0(gboolean, me.world);
  for (int p = 0; p < 7; p++)
    for (int d = 0; d < 5; d++)
      for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++) {
          int co[AXIS_N] = {[AXIS_TP] = t, [AXIS_CP] = c, [AXIS_DP] = d, [AXIS_PP] = p}, back[AXIS_N];
          int r = mesh_rank(&me, co);
          ck_assert_int_eq(r, t + 2 * (c + 3 * (d + 5 * p))); /* Megatron's equation (1), order tp-cp-dp-pp */
          ck_assert(!seen[r]);
          seen[r] = TRUE;
          mesh_coords(&me, r, back);
          for (int a = 0; a < AXIS_N; a++) ck_assert_int_eq(back[a], co[a]);
        }
  /* a group along a set of axes: the ranks whose other coordinates agree, the set's fastest axis first */
  unsigned dpcp = AXIS_BIT(AXIS_DP) | AXIS_BIT(AXIS_CP);
  int got[15];
  mesh_group_ranks(&me, dpcp, mesh_group_index(&me, 1 + 2 * 3 * 5 * 4, dpcp), got); /* tp 1, pp 4 */
  for (int k = 0; k < 15; k++) ck_assert_int_eq(got[k], 1 + 2 * (k % 3 + 3 * (k / 3 + 5 * 4)));
  /* ring neighbours wrap: the pipeline's last stage's next is the first */
  ck_assert_int_eq(mesh_step(&me, 2 * 3 * 5 * 6, AXIS_PP, 1), 0);
  ck_assert_int_eq(mesh_step(&me, 0, AXIS_CP, -1), 2 * 2);
  ck_assert_int_eq(mesh_zeroed(&me, 1 + 2 * (2 + 3 * (4 + 5 * 6)), axis_mask_mirrored()), 2 * (2 + 3 * 5 * 6));
}
END_TEST

/* The generator's graph: its groups are the table's, labelled by Megatron's names, with Megatron's members. */
START_TEST(test_graph_groups_are_megatrons)
{
  layout l = l16();
  model m = small();
  gen_options o = gen_default_options();
  GError *err = NULL;
  g_autoptr(graph) g = gen_graph(&m, &l, &o, &err);
  ck_assert_msg(g != NULL, "%s", err ? err->message : "");
  struct { const char *label; const int *ranks; int count, size; } want[] = {
      {"tp", &TP[0][0], 8, 2}, {"cp", &CP[0][0], 8, 2}, {"dp-cp", &DP_CP[0][0], 4, 4}, {"pp", &PP[0][0], 8, 2}};
  ck_assert_int_eq(g->groups->len, 8 + 8 + 4 + 8);
  guint id = 0;
  for (size_t w = 0; w < G_N_ELEMENTS(want); w++) /* in the table's order, each kind's in Megatron's */
    for (int i = 0; i < want[w].count; i++, id++) {
      const graph_group *gr = g_ptr_array_index(g->groups, id);
      ck_assert_str_eq(gr->label, want[w].label);
      ck_assert_int_eq(gr->ranks->len, want[w].size);
      for (int k = 0; k < want[w].size; k++)
        ck_assert_int_eq(g_array_index(gr->ranks, int, k), want[w].ranks[i * want[w].size + k]);
    }
  /* a mirror (rank 13 = tp 1, cp 0, dp 1, pp 1) of rank 8 (tp 0, dp 0) uses its own tp, dp-cp and pp groups in
   * place of its source's: tp {12, 13} for {8, 9}, dp-cp {9, 11, 13, 15} for {8, 10, 12, 14}, pp {5, 13} for {0, 8} */
  const graph_program *p = g_ptr_array_index(g->programs, 13);
  ck_assert_int_eq(p->mirror_of, 8);
  ck_assert_ptr_nonnull(p->group_map);
  struct { int from, to; } map[] = {{4, 6}, {16 + 2, 16 + 3}, {20 + 0, 20 + 5}};
  for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
    ck_assert_int_eq(GPOINTER_TO_INT(g_hash_table_lookup(p->group_map, GINT_TO_POINTER(map[i].from))), map[i].to);
  /* cp is not mirrored: rank 8's cp partner 10 is a program of its own */
  ck_assert_int_eq(((const graph_program *)g_ptr_array_index(g->programs, 10))->mirror_of, -1);
}
END_TEST

START_TEST(test_dp_is_gpus_over_the_other_axes)
{
  layout l = test_layout(48, 2, 3, 1, CKPT_NONE);
  l.cp = 2;
  l.seq_len = 256;
  l.global_batch = 8;
  model m = small();
  ck_assert(layout_validate(&l, &m, NULL));
  ck_assert_int_eq(l.dp, 48 / (2 * 3 * 2));
  ck_assert_int_eq(layout_dp_cp(&l), 4 * 2);
  ck_assert_int_eq(axis_product(&l, AXIS_ALL), 48);
  /* cp must divide what tp and pp leave: 48 / 6 = 8, and 3 does not */
  l.cp = 3;
  GError *err = NULL;
  ck_assert(!layout_validate(&l, &m, &err));
  ck_assert_str_eq(err->message, "cp: 3 does not divide gpus/(tp*pp) = 8 (allowed: divisors of 8, gpus = tp*cp*dp*pp)");
  g_error_free(err);
}
END_TEST

START_TEST(test_axis_table)
{
  /* Megatron's order, fastest first (other axes may sit between) */
  const char *order[] = {"tp", "cp", "ep", "dp", "pp"};
  for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
    int a = axis_by_name(order[i]);
    ck_assert_int_ge(a, 0);
    ck_assert_str_eq(axis_get(a)->name, order[i]);
    if (i > 0) ck_assert_int_lt(axis_by_name(order[i - 1]), a);
  }
  /* ep and etp are folded: the expert layers' order over the same ranks (test_moe_ep.c), not the world's */
  ck_assert(axis_get(AXIS_EP)->folded && axis_get(AXIS_ETP)->folded);
  ck_assert_uint_eq(AXIS_ALL & AXIS_FOLDED, 0);
  /* ZeRO and the gradient reduction span the ranks holding the same weights: dp and cp */
  ck_assert_uint_eq(axis_mask_sharding(AXIS_REPLICATES_WEIGHTS), AXIS_BIT(AXIS_DP) | AXIS_BIT(AXIS_CP));
  ck_assert_uint_eq(axis_mask_mirrored(), AXIS_BIT(AXIS_TP) | AXIS_BIT(AXIS_DP));
  ck_assert_uint_eq(axis_mask_stage(), AXIS_BIT(AXIS_PP));
  layout l = l16();
  char label[16];
  axis_group_label(&l, AXIS_DP, label, sizeof label);
  ck_assert_str_eq(label, "dp-cp");
  l.cp = 1;
  axis_group_label(&l, AXIS_DP, label, sizeof label);
  ck_assert_str_eq(label, "dp");
  axis_set_size(&l, AXIS_PP, 4);
  ck_assert_int_eq(l.pp, 4);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("mesh");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_groups_are_megatrons_rank_generator_groups);
  tcase_add_test(tc, test_rank_and_coordinates_are_a_bijection);
  tcase_add_test(tc, test_graph_groups_are_megatrons);
  tcase_add_test(tc, test_dp_is_gpus_over_the_other_axes);
  tcase_add_test(tc, test_axis_table);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return check_run(suite()); }
