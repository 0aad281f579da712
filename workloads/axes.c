/* axes -- see axes.h. */
#include "axes.h"

#include <stddef.h>
#include <string.h>

#include "layout.h"

#define B(a) AXIS_BIT(AXIS_##a)

/* In rank order (axis_id). The help texts are cli's --help lines after the option's name. */
static const axis_info AXES[AXIS_N] = {
    [AXIS_TP] = {.name = "tp", .option = "--tp", .column = "tp", .max = LAYOUT_MAX_GPUS, .listable = TRUE,
                 .help = "tensor-parallel degree, 1 2 4 8 (default 1)",
                 .sweep_default = "powers of 2 up to a node (at most 8) dividing the heads and the vocabulary",
                 .mirrored = TRUE, .shards = AXIS_SHARDS_PARAMS | AXIS_SHARDS_ACTIVATIONS, .group = B(TP),
                 .offset = offsetof(layout, tp)},
    [AXIS_CP] = {.name = "cp", .option = "--cp", .column = "cp", .column_optional = TRUE, .max = LAYOUT_MAX_GPUS, .listable = TRUE,
                 .help = "context-parallel degree (default 1): each rank holds seq-len/cp tokens, attention is "
                         "TransformerEngine's ring (seq-len a multiple of 2*cp, a flash kernel); docs/model.md",
                 .sweep_default = "1 only", .shards = AXIS_SHARDS_ACTIVATIONS | AXIS_REPLICATES_WEIGHTS,
                 .group = B(CP), .offset = offsetof(layout, cp)},
    [AXIS_EP] = {.name = "ep", .option = "--ep", .column = "ep", .column_optional = TRUE, .max = LAYOUT_MAX_GPUS, .folded = TRUE, .listable = TRUE,
                 .help = "expert-parallel degree (default 1): each rank of an ep group holds experts/ep of an MoE "
                         "layer's routed experts, tokens reach them by all-to-all; folded onto tp*cp*dp; docs/moe.md",
                 .sweep_default = "the one value given (default 1)", .shards = AXIS_SHARDS_PARAMS, .group = B(EP), .offset = offsetof(layout, ep)},
    [AXIS_DP] = {.name = "dp", .derived = TRUE, .help = "data-parallel degree: gpus / (the other degrees' product)",
                 .sweep_default = "derived", .mirrored = TRUE, .shards = AXIS_REPLICATES_WEIGHTS,
                 .group = B(DP) | B(CP), .offset = offsetof(layout, dp)},
    [AXIS_PP] = {.name = "pp", .option = "--pp", .column = "pp", .max = G_MAXINT, .listable = TRUE, .stage = TRUE,
                 .help = "pipeline-parallel degree (default 1)",
                 .sweep_default = "the divisors of gpus/tp up to the layers", .shards = AXIS_SHARDS_PARAMS,
                 .group = B(PP), .offset = offsetof(layout, pp)},
    [AXIS_ETP] = {.name = "etp", .option = "--etp", .column = "etp", .column_optional = TRUE, .max = LAYOUT_MAX_GPUS, .folded = TRUE, .listable = TRUE,
                  .help = "expert tensor-parallel degree (default 1): each routed expert split over etp ranks; "
                          "etp*ep divides tp*cp*dp; docs/moe.md",
                  .sweep_default = "the one value given (default 1)", .shards = AXIS_SHARDS_PARAMS, .group = B(ETP),
                  .offset = offsetof(layout, etp)},
};

const axis_info *axis_get(axis_id a) { return &AXES[a]; }

int axis_by_name(const char *name)
{
  for (int a = 0; a < AXIS_N; a++)
    if (strcmp(AXES[a].name, name) == 0) return a;
  return -1;
}

int axis_size(const layout *l, axis_id a) { return *(const int *)((const char *)l + AXES[a].offset); }
void axis_set_size(layout *l, axis_id a, int v) { *(int *)((char *)l + AXES[a].offset) = v; }

int axis_edp(const layout *l)
{
  return (int)(axis_product(l, AXIS_ALL & ~axis_mask_stage()) / axis_product(l, AXIS_FOLDED));
}

gint64 axis_product(const layout *l, unsigned mask)
{
  gint64 p = 1;
  for (int a = 0; a < AXIS_N; a++)
    if (mask & AXIS_BIT(a)) p *= axis_size(l, a);
  return p;
}

unsigned axis_mask_sharding(unsigned shards)
{
  unsigned m = 0;
  for (int a = 0; a < AXIS_N; a++)
    if ((AXES[a].shards & shards) == shards) m |= AXIS_BIT(a);
  return m;
}

unsigned axis_mask_mirrored(void)
{
  unsigned m = 0;
  for (int a = 0; a < AXIS_N; a++)
    if (AXES[a].mirrored) m |= AXIS_BIT(a);
  return m;
}

unsigned axis_mask_stage(void)
{
  unsigned m = 0;
  for (int a = 0; a < AXIS_N; a++)
    if (AXES[a].stage) m |= AXIS_BIT(a);
  return m;
}

void axis_group_label(const layout *l, axis_id own, char *out, gsize n)
{
  out[0] = '\0';
  for (int a = AXIS_N - 1; a >= 0; a--)
    if ((AXES[own].group & AXIS_BIT(a)) && (a == (int)own || axis_size(l, a) > 1)) {
      if (out[0]) g_strlcat(out, "-", n);
      g_strlcat(out, AXES[a].name, n);
    }
}
