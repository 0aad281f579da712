/* sched_counts -- see sched_counts.h. */
#include "sched_counts.h"

static int at(sched_pp_linear f, int stages) { return f.per_stage * stages + f.plus; }

gboolean sched_counts_affine(const sched_counts *c, int stages, int *m1, int *m2)
{
  *m1 = *m2 = 0;
  if (!c->affine) return FALSE;
  *m1 = MAX(at(c->whole, stages), c->whole_at_least);
  *m2 = *m1 + at(c->round, stages);
  return TRUE;
}

int sched_counts_memory(const sched_counts *c, int stages, int m)
{
  return c->peak_grows ? m : MIN(m, at(c->peak, stages));
}
