/* gen_groups -- the generator's rank lookups: a rank's coordinates to its id in Megatron's order (the
 * mesh's, mesh.h) and the graph's communication groups of every rank, one per mesh group along each axis
 * of the table (axes.h).
 *
 * Owns: gen_rank, gen_rank_cp, the group ids the generator emits collectives on (gen_groups).
 * May not touch: events, schedules, memory.
 */
#include "emit.h"

/* Megatron's order tp-cp-(ep)-dp-pp (parallel_state.py): the mesh's (mesh.h). */
int gen_rank_cp(const layout *l, int stage, int dpi, int cpi, int tpi)
{
  mesh me;
  mesh_init(&me, l);
  int c[AXIS_N] = {[AXIS_TP] = tpi, [AXIS_CP] = cpi, [AXIS_DP] = dpi, [AXIS_PP] = stage};
  return mesh_rank(&me, c);
}

int gen_rank(const layout *l, int stage, int dpi, int tpi) { return gen_rank_cp(l, stage, dpi, 0, tpi); }

/* A group of n ranks in ring order; none (-1) for fewer than 2. */
static int add_group_of(graph *g, const int *ranks, int n, const char *label)
{
  return n < 2 ? -1 : graph_add_group(g, ranks, n, label);
}

void gen_groups_make(graph *g, const layout *l, gboolean experts, gen_groups *gs)
{
  mesh_init(&gs->me, l);
  mesh_init_expert(&gs->xme, l);
  g_autofree int *ranks = g_new(int, gs->me.world);
  for (int a = 0; a < AXIS_N; a++) {
    const mesh *me = axis_get(a)->folded ? &gs->xme : &gs->me; /* ep's, etp's: the expert order's */
    unsigned mask = axis_get(a)->group;
    int n = mesh_group_size(me, mask), count = mesh_group_count(me, mask);
    char label[sizeof ((graph_group *)NULL)->label];
    axis_group_label(l, a, label, sizeof label);
    gs->id[a] = g_new(int, count);
    for (int i = 0; i < count; i++) {
      mesh_group_ranks(me, mask, i, ranks);
      gs->id[a][i] = n < 2 ? -1 : a == AXIS_ETP ? graph_add_group_class(g, ranks, n, label, TC_TP)
                                                : add_group_of(g, ranks, n, label);
    }
  }
  /* the expert data-parallel groups (expert gradients are reduced over them), classed dp */
  unsigned mask = AXIS_BIT(AXIS_DP);
  int n = mesh_group_size(&gs->xme, mask), count = mesh_group_count(&gs->xme, mask);
  gs->edp_id = g_new(int, count);
  for (int i = 0; i < count; i++) {
    mesh_group_ranks(&gs->xme, mask, i, ranks);
    gs->edp_id[i] = n < 2 || !experts ? -1 : graph_add_group_class(g, ranks, n, "edp", TC_DP);
  }
}

int gen_group_edp_of(const gen_groups *gs, int rank)
{
  return gs->edp_id[mesh_group_index(&gs->xme, rank, AXIS_BIT(AXIS_DP))];
}

int gen_group_edp_exists(const layout *l) { return axis_edp(l) > 1 ? 0 : -1; }

/* The id of a rank's group of axis a (-1: none, a group of 1). */
int gen_group_of(const gen_groups *gs, axis_id a, int rank)
{
  const mesh *me = axis_get(a)->folded ? &gs->xme : &gs->me;
  return gs->id[a][mesh_group_index(me, rank, axis_get(a)->group)];
}

void gen_groups_clear(gen_groups *gs)
{
  for (int a = 0; a < AXIS_N; a++) g_free(gs->id[a]);
  g_free(gs->edp_id);
}

/* 0 when a rank has a group of axis a, -1 when it has none (a group of 1). */
int gen_group_exists(const layout *l, axis_id a) { return axis_product(l, axis_get(a)->group) > 1 ? 0 : -1; }
