/* cluster -- the SimGrid platform of a GPU cluster built from parameters and
 * the levels of topology.h: hosts ("nodes") of `gpus_per_node` GPUs, whole
 * hosts forming an NVLink domain of `gpus_per_domain` GPUs; inside a domain
 * every GPU has its own split-duplex NVLink link to the NVSwitches (route
 * gi->gj = nvl_i up, nvl_j down, whichever host each is on); every GPU reaches
 * other domains through a split-duplex NIC link of its host (GPUs share NICs
 * when nics_per_node < gpus_per_node) into a fat-tree:
 * one fat-pipe core, and, with leaf groups, a shared uplink per group that
 * carries the group's traffic to other groups (its bandwidth the group's NIC
 * bandwidth over the oversubscription ratio). A rail-optimized fabric (fabric
 * rail or rail-pxn: NIC k of every node on rail leaf k, leaves under a spine) is
 * the zone of rail_zone.cpp instead. Built with the C++ S4U API
 * (SimGrid 3.32 has no C calls for zones; XML platforms with nested zones
 * break Paje tracing). Host `rank` is GPU rank % gpus_per_node of node
 * rank / gpus_per_node, named n<node>_g<gpu>.
 *
 * Owns: platform construction and the network-model settings that make
 * transfer times exact (docs/simgrid-notes: CM02, no cross-traffic, no
 * TCP-gamma cap, fair-bottleneck solver).
 * May not touch: task graphs, timing of compute.
 */
#ifndef CLUSTER_H
#define CLUSTER_H

#include <simgrid/forward.h>

#include "plat_file_check.h" /* a user's platform file (--platform-file) checked before a run */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plat_params {
  int nodes, gpus_per_node, nics_per_node; /* hosts; a host's GPUs and NICs (topology.h) */
  int gpus_per_domain;                      /* the NVLink domain: whole hosts of consecutive GPUs */
  double gpu_flops;                             /* host speed */
  double nvlink_bytes_per_s, nvlink_latency_s;  /* effective, per direction; latency GPU to GPU */
  double ib_bytes_per_s, ib_latency_s;          /* effective, per direction; latency GPU to GPU */
  /* leaf groups of leaf_nodes nodes (0: one non-blocking fabric) whose traffic to other groups shares one
   * split-duplex uplink of uplink_bytes_per_s per direction */
  int leaf_nodes;
  double uplink_bytes_per_s;
  /* plat_fabric (fabric.h; 0: fat-tree). A rail fabric has a leaf per rail (NIC index) and per stripe of
   * leaf_nodes nodes (0: one stripe of every node), whose uplink to the spine is uplink_bytes_per_s
   * per direction (the NIC bandwidth of the leaf's nodes over the oversubscription) */
  int fabric;
} plat_params;

/* A string that names the platform p exactly (every field; doubles in hexadecimal), into buf of len
 * bytes (PLAT_KEY_LEN always holds it); returns its length. */
#define PLAT_KEY_LEN 256
int plat_key(const plat_params *p, char *buf, int len);
/* Whether a and b describe the same platform: the same key. */
int plat_same(const plat_params *a, const plat_params *b);
/* Nodes of one stripe of a rail fabric (the nodes whose NICs share its rail leaves): leaf_nodes where
 * it groups fewer than all nodes, else every node. */
int plat_stripe_nodes(const plat_params *p);
/* Set the network-model configuration; call after simgrid_init, before plat_build. */
void plat_configure(void);
/* Build the platform (once per process). */
void plat_build(const plat_params *p);
/* Whether plat_build's fat-tree root is a star zone (a route per domain: no leaf groups with uplinks of
 * their own) rather than a full one (a route per pair of domains); 0 for a rail fabric (computed routes). */
int plat_root_is_star(const plat_params *p);
/* Whether plat_build makes the whole platform one zone whose routes are computed per pair (a rail fabric, or
 * a fat-tree of more NVLink domains than SimGrid's per-zone name checks make cheap): no stored routes. */
int plat_routes_computed(const plat_params *p);
/* Host of GPU rank `rank`: n<node>_g<gpu>, node = rank / gpus_per_node, gpu = rank % gpus_per_node. */
sg_host_t plat_host(const plat_params *p, int rank);

#ifdef __cplusplus
}
#endif

#endif
