/* model_params -- see model_params.h. */
#include "model_params.h"

#include "memory.h"

double model_params_per_gpu(const model *m, const layout *l, partition_method method)
{
  partition p;
  if (!partition_make_for(&p, m, l, method, NULL)) return -1;
  double most = 0;
  for (int s = 0; s < l->pp; s++) most = MAX(most, mem_stage_params(m, l, &p, s));
  partition_clear(&p);
  return most;
}
