/* partition -- see partition.h. BALANCED follows DeepSpeed's
 * ds_utils.partition_balanced: binary search of the bottleneck weight (eps
 * 1e-3) with a greedy left-to-right probe over the prefix sums. */
#include "partition.h"

#include <string.h>

#include "block.h"
#include "layout.h"
#include "pipeline_layout.h"
#include "common/lsim_error.h"

gboolean partition_parse_method(const char *s, partition_method *out, GError **err)
{
  if (strcmp(s, "uniform") == 0) *out = PARTITION_UNIFORM;
  else if (strcmp(s, "balanced") == 0) *out = PARTITION_BALANCED;
  else if (strcmp(s, "auto") == 0) *out = PARTITION_AUTO;
  else if (strcmp(s, "layers") == 0) *out = PARTITION_LAYERS;
  else {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "partition: unknown '%s' (allowed: auto, balanced, uniform, layers)", s);
    return FALSE;
  }
  return TRUE;
}

const char *partition_method_name(partition_method m)
{
  return m == PARTITION_UNIFORM ? "uniform" : m == PARTITION_BALANCED ? "balanced" : m == PARTITION_LAYERS ? "layers"
         : m == PARTITION_LAYOUT ? "layout" : "auto";
}

/* DeepSpeed's type:transformer (Megatron-DeepSpeed's PipelineModule) and Megatron-LM: the transformer layers
 * split evenly over the pp (virtual) stages (the first L % pp one more), the embedding with the first, the
 * final norm and head with the last stage's. With V chunks per stage, Megatron-LM's interleaved schedule
 * gives virtual stage v = c * pp + s L / (pp V) layers (the schedule requires the division to be exact). */
static void by_layers(int *bounds, int layers, int pp)
{
  int base = layers / pp, extra = layers % pp;
  bounds[0] = 0;
  bounds[1] = 1 + base + (extra > 0);
  for (int s = 1; s < pp; s++) bounds[s + 1] = bounds[s] + base + (s < extra ? 1 : 0);
  bounds[pp] = layers + 3;
}

static void uniform(int *bounds, int items, int pp)
{
  int base = items / pp, extra = items % pp;
  bounds[0] = 0;
  for (int s = 0; s < pp; s++) bounds[s + 1] = bounds[s] + base + (s < extra ? 1 : 0);
}

/* First index i in [lo, hi) with w[i] >= x (Python's bisect_left). */
static int bisect_left(const double *w, double x, int lo, int hi)
{
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (w[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* DeepSpeed's _lprobe: can `parts` stages each hold at most `bottleneck`? */
static gboolean lprobe(const double *w, int n, int parts, double bottleneck, int *bounds)
{
  for (int p = 0; p <= parts; p++) bounds[p] = p == 0 ? 0 : n;
  double bsum = bottleneck;
  int chunk = n / parts, step = chunk;
  for (int p = 1; p < parts; p++) {
    while (step < n && w[step] < bsum) step += chunk;
    bounds[p] = bisect_left(w, bsum, step - chunk, step < n ? step : n);
    if (bounds[p] == n) {
      double part = w[n - 1] - w[bounds[p - 1]];
      return part < bottleneck;
    }
    /* a first stage that cannot hold even the first item: DeepSpeed's weights[-1] is Python's last
     * element, the total (w[-1] here read before the array) */
    bsum = w[bounds[p] > 0 ? bounds[p] - 1 : n - 1] + bottleneck;
  }
  return bsum >= w[n - 1];
}

static void balanced(int *bounds, const model *m, int items, int pp, int tp)
{
  g_autofree double *w = g_new(double, items);
  double layer = block_layer_params(m, tp); /* the parameters a rank of each item holds (block.h) */
  for (int i = 0; i < items; i++) {
    double wi = i == 0 ? block_embedding_params(m, tp) : i <= m->layers ? layer
                : i == m->layers + 1 ? block_final_norm_params(m) : block_head_params(m, tp);
    w[i] = (i ? w[i - 1] : 0) + wi;
  }
  double lower = w[items - 1] / pp, upper = w[items - 1], eps = 1e-3;
  while (upper > lower + eps) {
    double mid = lower + (upper - lower) / 2;
    if (lprobe(w, items, pp, mid, bounds)) upper = mid;
    else lower = mid + eps;
  }
  lprobe(w, items, pp, upper, bounds);
}

static gboolean all_stages_hold_items(const partition *p)
{
  for (int s = 0; s < p->pp * p->chunks; s++)
    if (p->first_item[s + 1] <= p->first_item[s]) return FALSE;
  return TRUE;
}

gboolean partition_make(partition *out, const model *m, int pp, int tp, partition_method method, GError **err)
{
  return partition_make_chunked(out, m, pp, 1, tp, method, err);
}

gboolean partition_make_chunked(partition *out, const model *m, int pp, int chunks, int tp, partition_method method,
                                GError **err)
{
  int items = m->layers + 3, n = pp * chunks;
  out->pp = pp;
  out->chunks = chunks;
  out->first_item = g_new(int, n + 1);
  /* chunked stages: Megatron-LM's even split of the layers, unless a method is asked for */
  if (method == PARTITION_AUTO && chunks > 1) method = PARTITION_LAYERS;
  out->method = method == PARTITION_UNIFORM || method == PARTITION_LAYERS ? method : PARTITION_BALANCED;
  if (method == PARTITION_UNIFORM) uniform(out->first_item, items, n);
  else if (method == PARTITION_LAYERS) by_layers(out->first_item, m->layers, n);
  else balanced(out->first_item, m, items, n, tp);
  if (method == PARTITION_AUTO && !all_stages_hold_items(out)) {
    out->method = PARTITION_UNIFORM;
    uniform(out->first_item, items, n);
  }
  for (int s = 0; s < n; s++)
    if (out->first_item[s + 1] <= out->first_item[s]) {
      if (chunks > 1)
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "virtual_stages: %d*%d virtual stages leave virtual stage %d "
                    "empty, without any item (%s has %d items, partition %s; allowed: partition auto, which splits the "
                    "layers evenly)", pp, chunks, s, m->name, items, partition_method_name(out->method));
      else
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "pp: %d stages leave stage %d empty, without any item (%s has %d items, partition %s)",
                  pp, s, m->name, items, partition_method_name(out->method));
      partition_clear(out);
      return FALSE;
    }
  return TRUE;
}

gboolean partition_make_layout(partition *out, const model *m, int pp, int chunks, const char *spec, GError **err)
{
  out->pp = pp;
  out->chunks = chunks;
  out->method = PARTITION_LAYOUT;
  out->first_item = g_new(int, pp * chunks + 1);
  if (!pipeline_layout_bounds(spec, m->layers, m->mtp_layers, pp * chunks, out->first_item, err)) {
    partition_clear(out);
    return FALSE;
  }
  return TRUE;
}

gboolean partition_make_for(partition *out, const model *m, const layout *l, partition_method method, GError **err)
{
  int chunks = MAX(1, l->virtual_stages);
  if (l->pipeline_layout[0]) return partition_make_layout(out, m, l->pp, chunks, l->pipeline_layout, err);
  return partition_make_chunked(out, m, l->pp, chunks, l->tp, method, err);
}

void partition_clear(partition *p) { g_clear_pointer(&p->first_item, g_free); }


gboolean partition_has_embedding(const partition *p, int stage) { return p->first_item[stage] == 0; }

static gboolean holds(const partition *p, int stage, int item)
{
  return p->first_item[stage] <= item && item < p->first_item[stage + 1];
}

gboolean partition_has_final_norm(const partition *p, const model *m, int stage)
{
  return holds(p, stage, m->layers + 1);
}

gboolean partition_has_head(const partition *p, const model *m, int stage) { return holds(p, stage, m->layers + 2); }

void partition_layers(const partition *p, const model *m, int stage, int *first, int *count)
{
  int lo = MAX(p->first_item[stage], 1), hi = MIN(p->first_item[stage + 1], m->layers + 1);
  *first = lo - 1;
  *count = MAX(hi - lo, 0);
}
