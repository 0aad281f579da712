/* plat_params -- see plat_params.h. */
#include "plat_params.h"

#include "fabric.h"

plat_params plat_params_of(const gpu_profile *p, int world_size)
{
  plat_params pp = {.gpus_per_node = p->gpus_per_node, .nics_per_node = p->nics_per_node, .gpu_flops = p->peak_flops,
                    .nvlink_bytes_per_s = p->nvlink_bytes_per_s * p->stack.nccl_bw_efficiency_nvlink,
                    .nvlink_latency_s = p->nvlink_latency_s,
                    .ib_bytes_per_s = p->ib_bytes_per_s * p->stack.nccl_bw_efficiency_ib,
                    .ib_latency_s = p->ib_latency_s};
  pp.gpus_per_domain = profile_gpus_per_domain(p);
  pp.nodes = (world_size + p->gpus_per_node - 1) / p->gpus_per_node;
  pp.leaf_nodes = (int)p->leaf_nodes;
  pp.fabric = p->fabric;
  /* a leaf's uplink: its NICs' bandwidth over the oversubscription; a fat-tree leaf holds every NIC of its
   * group's nodes, a rail leaf one NIC of each node of its stripe (every node when leaf_nodes is 0) */
  if (fabric_is_rail(p->fabric))
    pp.uplink_bytes_per_s = plat_stripe_nodes(&pp) * pp.ib_bytes_per_s / p->oversubscription;
  else
    pp.uplink_bytes_per_s = p->leaf_nodes * p->nics_per_node * pp.ib_bytes_per_s / p->oversubscription;
  return pp;
}
