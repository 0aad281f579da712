/* coll_tree -- NCCL's tree all-reduce: a double binary tree across NVLink domains (ncclGetDtree,
 * src/graph/trees.cc: the first a binary tree over the domains, the second the first mirrored, or
 * shifted by one for an odd count, so that a domain that is inner in one tree is a leaf in the other),
 * and inside each domain a chain down from the member that joins the tree.
 *
 * The buffer S is split over k channels (k members per domain) and the two trees: S/(2k) each. In
 * channel c the chain of a domain runs through its local members c, c+1, ..., c+k-1 (mod k), so each
 * channel's tree traffic enters and leaves a domain through a different member (and NIC), as the
 * ring's channels do. Each chunk is reduced up (chain towards its head, head to the parent domain's
 * head) and broadcast down the same edges, pipelined: every edge carries S/(2k) each way per channel
 * and tree, all flows at once (coll_algo.h). The critical path is NCCL's tuner's:
 * 2 ((k-1) intra-domain hops + floor(log2 D) inter-domain hops), as many steps.
 *
 * Owns: the tree algorithm. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

#include <math.h>

/* ncclGetBtree: parent (-1: root) and children (-1: none) of r in a binary tree over n */
static void btree(int n, int r, int *up, int *d0, int *d1)
{
  int bit;
  for (bit = 1; bit < n; bit <<= 1)
    if (bit & r) break;
  if (r == 0) {
    *up = -1;
    *d0 = -1;
    *d1 = n > 1 ? bit >> 1 : -1;
    return;
  }
  int u = (r ^ bit) | (bit << 1);
  if (u >= n) u = r ^ bit;
  *up = u;
  int low = bit >> 1;
  *d0 = low == 0 ? -1 : r - low;
  int down1 = low == 0 ? -1 : r + low;
  while (down1 >= n) {
    down1 = low == 0 ? -1 : r + low;
    low >>= 1;
  }
  *d1 = down1;
}

/* ncclGetDtree's tree t (0, 1) for domain r of n */
static void dtree(int n, int r, int t, int *up, int *d0, int *d1)
{
  if (t == 0) {
    btree(n, r, up, d0, d1);
    return;
  }
  int u, a, b;
  if (n % 2 == 1) { /* shift */
    btree(n, (r - 1 + n) % n, &u, &a, &b);
    *up = u == -1 ? -1 : (u + 1) % n;
    *d0 = a == -1 ? -1 : (a + 1) % n;
    *d1 = b == -1 ? -1 : (b + 1) % n;
  } else { /* mirror */
    btree(n, n - 1 - r, &u, &a, &b);
    *up = u == -1 ? -1 : n - 1 - u;
    *d0 = a == -1 ? -1 : n - 1 - a;
    *d1 = b == -1 ? -1 : n - 1 - b;
  }
}

static int log2i(int n) { return n >= 1 ? (int)floor(log2(n)) : 0; }

static void tree_plan(const coll_group *g, int me, coll_plan *p)
{
  int D = g->domains, k = g->per_domain, d = g->dom[me], l = g->loc[me];
  double chunk = 1.0 / (2.0 * k);
  for (int c = 0; c < k; c++) {
    int pos = (l - c + k) % k; /* position in channel c's chain; 0: the head */
    for (int t = 0; t < 2; t++) {
      if (pos > 0) coll_plan_add(p, g->at[d * k + (c + pos - 1) % k], chunk);
      if (pos < k - 1) coll_plan_add(p, g->at[d * k + (c + pos + 1) % k], chunk);
      if (pos == 0 && D > 1) {
        int up, d0, d1;
        dtree(D, d, t, &up, &d0, &d1);
        if (up >= 0) coll_plan_add(p, g->at[up * k + c], chunk);
        if (d0 >= 0) coll_plan_add(p, g->at[d0 * k + c], chunk);
        if (d1 >= 0) coll_plan_add(p, g->at[d1 * k + c], chunk);
      }
    }
  }
  double intra = k > 1 ? coll_hop_latency(g, me, g->at[d * k + (l + 1) % k]) : 0;
  double inter = D > 1 ? coll_hop_latency(g, me, g->at[((d + 1) % D) * k + l]) : 0;
  p->lat_s = 2 * ((k - 1) * intra + log2i(D) * inter);
  p->steps = 2 * ((k - 1) + log2i(D));
}

static gboolean tree_fits(const coll_group *g) { return g->per_domain > 0; }

const coll_algo_def coll_tree_def = {
    .name = "tree", .colls = 1u << COLL_ALL_REDUCE, .fits = tree_fits, .plan = tree_plan,
};
