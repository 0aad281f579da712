/* plat_params -- the parameters of the platform SimGrid builds (cluster.h) for a hardware profile
 * with its stack and a world size: link bandwidths as NCCL reaches them (the stack's efficiencies),
 * the node count, the fabric and its leaves' uplinks.
 *
 * Owns: the translation from a profile to a platform's parameters.
 * May not touch: SimGrid, task graphs.
 */
#ifndef PLAT_PARAMS_H
#define PLAT_PARAMS_H

#include "cluster.h"
#include "profile.h"

/* Platform parameters for `world_size` GPUs of profile p (bandwidths scaled by the stack's NCCL
 * efficiencies; a leaf's uplink its NICs' bandwidth over the oversubscription). */
plat_params plat_params_of(const gpu_profile *p, int world_size);

#endif
