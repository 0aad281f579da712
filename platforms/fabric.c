/* fabric -- see fabric.h. */
#include "fabric.h"

#include <string.h>

static const char *const NAMES[] = {"fat-tree", "rail", "rail-pxn"};

const char *fabric_name(int f) { return f >= FABRIC_FAT_TREE && f <= FABRIC_RAIL_PXN ? NAMES[f - 1] : "?"; }

int fabric_parse(const char *s, int *out)
{
  for (int f = FABRIC_FAT_TREE; f <= FABRIC_RAIL_PXN; f++)
    if (!strcmp(s, NAMES[f - 1])) {
      *out = f;
      return 1;
    }
  return 0;
}

int fabric_is_rail(int f) { return f == FABRIC_RAIL || f == FABRIC_RAIL_PXN; }
