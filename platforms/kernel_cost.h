/* kernel_cost -- how long a compute event of the task graph takes on a GPU
 * of a given profile: the hardware side of the cost model.
 *
 * First model (roofline): time = launches * launch_overhead
 *   + max(flops / (peak * efficiency), bytes / (hbm * hbm_efficiency)),
 * with efficiency the GEMM or attention efficiency of the profile.
 *
 * Owns: the time of one compute event. May not touch: SimGrid, schedules.
 */
#ifndef KERNEL_COST_H
#define KERNEL_COST_H

#include "profile.h"
#include "workloads/graph.h"

double kcost_seconds(const gpu_profile *p, const graph_event *e);

#endif
