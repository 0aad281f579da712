/* mesh -- the process mesh: ranks <-> coordinates along the parallel axes of the table (axes.h), and the
 * group of a rank along any set of axes, as Megatron-Core's RankGenerator makes them
 * (megatron/core/parallel_state.py, generate_masked_orthogonal_rank_groups):
 *   rank = sum over the axes of coordinate * stride, strides the products of the faster axes' degrees
 *   (order tp-cp-dp-pp, tp fastest);
 *   a group along a set of axes: the ranks whose other coordinates agree; its members ordered by their
 *   coordinates along the set (mixed radix, fastest first), the groups numbered by the other coordinates
 *   (mixed radix, fastest first).
 *
 * Megatron folds expert layers onto the same ranks with a second order (tp-ep-dp-pp over the expert
 * tensor-parallel etp, ep and the expert data-parallel edp = world / (etp*ep*pp), cp 1): that is a second
 * mesh over the same world (mesh_init_expert), built from the folded axes of the table (axes.h); every
 * function here reads the mesh it is given, so the generator looks up an expert layer's groups in that one.
 *
 * Owns: rank <-> coordinates, group membership and numbering, ring neighbours along an axis.
 * May not touch: the axes' meaning (axes.h), task graphs.
 */
#ifndef MESH_H
#define MESH_H

#include "axes.h"

struct layout;

typedef struct mesh {
  int world;            /* ranks: the product of the degrees */
  int n;                /* axes in the order */
  int axis[AXIS_N];     /* the table's axes, fastest first */
  int size[AXIS_N];     /* degree, by axis_id (1 for an axis not in the order) */
  int stride[AXIS_N];   /* stride, by axis_id (0 for an axis not in the order) */
} mesh;

/* The dense layers' mesh of a validated layout: every axis of the table in its order. */
void mesh_init(mesh *me, const struct layout *l);
/* The expert layers' mesh of a validated layout (Megatron's parallel folding): order etp, ep, dp, pp, dp's degree
 * the expert data-parallel edp (axis_edp), tp and cp absent (degree 1). */
void mesh_init_expert(mesh *me, const struct layout *l);
/* A mesh of the given degrees (by axis_id) in the table's order. */
void mesh_init_sizes(mesh *me, const int size[AXIS_N]);

/* The rank of coordinates (by axis_id; each in 0..size-1), and back. */
int mesh_rank(const mesh *me, const int coord[AXIS_N]);
void mesh_coords(const mesh *me, int rank, int coord[AXIS_N]);

/* The group of the axes in `mask` (AXIS_BIT): its size; how many there are (world / size); the number of
 * the one holding `rank` (Megatron's group index); where `rank` sits in it; its members in order. */
int mesh_group_size(const mesh *me, unsigned mask);
int mesh_group_count(const mesh *me, unsigned mask);
int mesh_group_index(const mesh *me, int rank, unsigned mask);
int mesh_group_position(const mesh *me, int rank, unsigned mask);
void mesh_group_ranks(const mesh *me, unsigned mask, int index, int *out);

/* The rank `step` places along axis a from `rank`, around the ring (the cp ring, the pipeline's stages). */
int mesh_step(const mesh *me, int rank, axis_id a, int step);
/* The rank with its coordinates along the axes in `mask` set to 0 (a mirror's source). */
int mesh_zeroed(const mesh *me, int rank, unsigned mask);

#endif
