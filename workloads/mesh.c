/* mesh -- see mesh.h. */
#include "mesh.h"

#include "layout.h"

void mesh_init_sizes(mesh *me, const int size[AXIS_N])
{
  me->n = 0;
  me->world = 1;
  for (int a = 0; a < AXIS_N; a++) {
    me->axis[me->n++] = a;
    me->size[a] = size[a];
    me->stride[a] = me->world;
    me->world *= size[a];
  }
}

void mesh_init(mesh *me, const layout *l)
{
  int size[AXIS_N];
  for (int a = 0; a < AXIS_N; a++) size[a] = axis_get(a)->folded ? 1 : axis_size(l, a);
  mesh_init_sizes(me, size);
}

void mesh_init_expert(mesh *me, const layout *l)
{
  /* Megatron-Core's expert RankGenerator(tp=etp, ep=ep, dp=edp, pp=pp, cp=1, order "tp-cp-ep-dp-pp") */
  static const int ORDER[] = {AXIS_ETP, AXIS_EP, AXIS_DP, AXIS_PP};
  me->n = 0;
  me->world = 1;
  for (int a = 0; a < AXIS_N; a++) {
    me->size[a] = 1;
    me->stride[a] = 0;
  }
  for (gsize i = 0; i < G_N_ELEMENTS(ORDER); i++) {
    int a = ORDER[i];
    me->axis[me->n++] = a;
    me->size[a] = a == AXIS_DP ? axis_edp(l) : axis_size(l, a);
    me->stride[a] = me->world;
    me->world *= me->size[a];
  }
}

int mesh_rank(const mesh *me, const int coord[AXIS_N])
{
  int r = 0;
  for (int i = 0; i < me->n; i++) r += coord[me->axis[i]] * me->stride[me->axis[i]];
  return r;
}

void mesh_coords(const mesh *me, int rank, int coord[AXIS_N])
{
  for (int a = 0; a < AXIS_N; a++) coord[a] = 0;
  for (int i = 0; i < me->n; i++) {
    int a = me->axis[i];
    coord[a] = rank / me->stride[a] % me->size[a];
  }
}

int mesh_group_size(const mesh *me, unsigned mask)
{
  int s = 1;
  for (int i = 0; i < me->n; i++)
    if (mask & AXIS_BIT(me->axis[i])) s *= me->size[me->axis[i]];
  return s;
}

int mesh_group_count(const mesh *me, unsigned mask) { return me->world / mesh_group_size(me, mask); }

/* The coordinates along the axes in (or out of) `mask` as one mixed-radix number, fastest first. */
static int digits(const mesh *me, const int coord[AXIS_N], unsigned mask, gboolean in)
{
  int v = 0, radix = 1;
  for (int i = 0; i < me->n; i++) {
    int a = me->axis[i];
    if (((mask & AXIS_BIT(a)) != 0) != in) continue;
    v += coord[a] * radix;
    radix *= me->size[a];
  }
  return v;
}

int mesh_group_index(const mesh *me, int rank, unsigned mask)
{
  int c[AXIS_N];
  mesh_coords(me, rank, c);
  return digits(me, c, mask, FALSE);
}

int mesh_group_position(const mesh *me, int rank, unsigned mask)
{
  int c[AXIS_N];
  mesh_coords(me, rank, c);
  return digits(me, c, mask, TRUE);
}

/* Spread a mixed-radix number over the coordinates of the axes in (or out of) `mask`. */
static void undigits(const mesh *me, int v, unsigned mask, gboolean in, int coord[AXIS_N])
{
  for (int i = 0; i < me->n; i++) {
    int a = me->axis[i];
    if (((mask & AXIS_BIT(a)) != 0) != in) continue;
    coord[a] = v % me->size[a];
    v /= me->size[a];
  }
}

void mesh_group_ranks(const mesh *me, unsigned mask, int index, int *out)
{
  int c[AXIS_N] = {0};
  undigits(me, index, mask, FALSE, c);
  int n = mesh_group_size(me, mask);
  for (int k = 0; k < n; k++) {
    undigits(me, k, mask, TRUE, c);
    out[k] = mesh_rank(me, c);
  }
}

int mesh_step(const mesh *me, int rank, axis_id a, int step)
{
  int c[AXIS_N];
  mesh_coords(me, rank, c);
  int n = me->size[a];
  c[a] = ((c[a] + step) % n + n) % n;
  return mesh_rank(me, c);
}

int mesh_zeroed(const mesh *me, int rank, unsigned mask)
{
  int c[AXIS_N];
  mesh_coords(me, rank, c);
  for (int a = 0; a < AXIS_N; a++)
    if (mask & AXIS_BIT(a)) c[a] = 0;
  return mesh_rank(me, c);
}
