/* traffic_class -- see traffic_class.h. */
#include "traffic_class.h"

#include <string.h>

static const tc_info TABLE[TC_N] = {
    [TC_OTHER] = {"other", TC_COUNT_BY_PHASE, FALSE, TL_TP_COMM, FALSE},
    [TC_TP] = {"tp", TC_COUNT_BY_PHASE, TRUE, TL_TP_COMM, TRUE},
    [TC_CP] = {"cp", TC_COUNT_BY_PHASE, FALSE, TL_CP_COMM, TRUE},
    [TC_DP] = {"dp", TC_COUNT_BY_PHASE, FALSE, TL_TP_COMM, FALSE}, /* ZeRO-3's gathers in a layer */
    [TC_DP_CP] = {"dp-cp", TC_COUNT_BY_PHASE, FALSE, TL_TP_COMM, FALSE},
    [TC_PP] = {"pp", TC_COUNT_PIPELINE, FALSE, TL_PP_WAIT, TRUE},
    [TC_EP] = {"ep", TC_COUNT_BY_PHASE, FALSE, TL_EP_COMM, FALSE}, /* the all-to-all dispatch and combine (docs/moe.md) */
};

const tc_info *tc_info_of(traffic_class c) { return &TABLE[(unsigned)c < TC_N ? c : TC_OTHER]; }

const char *tc_name(traffic_class c) { return tc_info_of(c)->name; }

int tc_from_name(const char *name)
{
  for (int c = 0; c < TC_N; c++)
    if (name && !strcmp(name, TABLE[c].name)) return c;
  return -1;
}

const char *tc_names_list(void)
{
  static char buf[128];
  if (!buf[0])
    for (int c = 0; c < TC_N; c++) {
      if (c) g_strlcat(buf, ", ", sizeof buf);
      g_strlcat(buf, TABLE[c].name, sizeof buf);
    }
  return buf;
}
