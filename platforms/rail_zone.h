/* rail_zone -- the SimGrid platform of a rail-optimized cluster (fabric rail,
 * rail-pxn): see rail_zone.cpp. C++ only, for cluster.cpp. */
#ifndef RAIL_ZONE_H
#define RAIL_ZONE_H

#include <string>

#include "cluster.h"

/* The host of GPU `gpu` of node `node`: n<node>_g<gpu> (cluster.cpp; plat_host and plat_file_check look
 * hosts up by it). */
std::string plat_gpu_name(int node, int gpu);

/* Build the platform of p (p->fabric a rail fabric) as the root zone: hosts n<node>_g<gpu> as plat_host names them. */
void rail_zone_build(const plat_params *p);

#endif
