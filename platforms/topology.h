/* topology -- the machine as levels, described once: a GPU; its NVLink domain (GPUs one NVSwitch
 * fabric joins: 8 on an HGX board, 72 on a GB200 NVL72 rack); its host (the server or compute tray
 * whose GPUs share NICs and CPUs: the host's NIC k is rail k); the leaf switches (a fat-tree's leaf
 * groups or a rail fabric's rail leaves) and the spine (the fat-tree's core) above them. Each level
 * has a size, a bandwidth and latency per link and a sharing rule (docs/topology.md).
 *
 * Ranks are placed consecutively: rank r is GPU r % gpus_per_node of host r / gpus_per_node, and
 * hosts are consecutive in their domain (host h in domain h / hosts_per_domain). The links of the
 * platform and the route between two ranks are given here, and the SimGrid builder (cluster.cpp,
 * rail_zone.cpp) and the Paje writer (traces/paje.c) both draw what they say:
 *   same domain:            nvl(src) up, nvl(dst) down
 *   fat-tree:               nic(src) up, [leaf uplink(src's group) up,] core, [leaf uplink down,] nic(dst) down
 *   rail, same rail:        nic(src) up, [rail uplink up, spine, rail uplink down,] nic(dst) down
 *   rail, other rails:      nic(src) up, rail uplink up, spine, rail uplink down, nic(dst) down
 *   rail-pxn, other rails:  nvl(src) up, nvl(proxy) down, then the proxy's same-rail route
 *                           (the proxy: the GPU of src's host with dst's index, as NCCL's PXN)
 *
 * Owns: levels, rank placement on hosts and domains, link names and indices, routes.
 * May not touch: SimGrid (the builders are C++ and read this), task graphs.
 */
#ifndef TOPOLOGY_H
#define TOPOLOGY_H

#include <stddef.h>

#include "cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TOPO_GPU, TOPO_DOMAIN, TOPO_HOST, TOPO_LEAF, TOPO_SPINE, TOPO_N_LEVELS } topo_level_id;

/* One level: how many GPUs one unit of it holds (the leaf: GPUs under one leaf group or stripe; the
 * spine: every GPU), its links' bandwidth per direction and latency GPU to GPU through it, and who
 * shares a link of it. */
typedef struct topo_level {
  const char *name, *sharing;
  int gpus;
  double bytes_per_s, latency_s;
} topo_level;

/* The links of the platform by kind: a GPU's NVLink into its domain's switch, a host's NIC, a leaf's
 * uplink (fat-tree: per leaf group; rail: per stripe and rail), the core / spine (a fat pipe). */
typedef enum { TOPO_LINK_NVL, TOPO_LINK_NIC, TOPO_LINK_UPLINK, TOPO_LINK_CORE, TOPO_N_LINK_KINDS } topo_link_kind;
enum { TOPO_UP, TOPO_DOWN };

/* One link crossed in one direction (the core: TOPO_UP, it has one). */
typedef struct topo_hop {
  topo_link_kind kind;
  int index, dir;
} topo_hop;

#define TOPO_MAX_HOPS 7

/* The levels of platform p, from the GPU up. */
void topo_levels(const plat_params *p, topo_level out[TOPO_N_LEVELS]);
/* Hosts of one NVLink domain (1 where the domain is one host). */
int topo_hosts_per_domain(const plat_params *p);
int topo_host_of(const plat_params *p, int rank);
int topo_domain_of(const plat_params *p, int rank);
int topo_domains(const plat_params *p);
/* The NIC of rank's host it reaches the fabric through: its rail. */
int topo_rail_of(const plat_params *p, int rank);
/* The leaf uplink a host's NIC k climbs (-1: none, a single leaf group). */
int topo_uplink_of(const plat_params *p, int host, int k);
/* How many links of a kind the platform has. */
int topo_n_links(const plat_params *p, topo_link_kind kind);
/* A link's name, as SimGrid and the Paje trace call it: nvl_<host>_<gpu>, nic_<host>_<k>, leaf<group> or
 * rail<k>_leaf<stripe>, core or spine. */
void topo_link_name(const plat_params *p, topo_link_kind kind, int index, char *buf, size_t len);
/* The zone of domain d (node<d> where a domain is one host, domain<d> otherwise). */
void topo_zone_name(const plat_params *p, int domain, char *buf, size_t len);
/* The links from rank src to rank dst, in order: how many (0 when src == dst). */
int topo_route(const plat_params *p, int src, int dst, topo_hop hops[TOPO_MAX_HOPS]);
/* The latency of that route, GPU to GPU. */
double topo_route_latency_s(const plat_params *p, int src, int dst);

#ifdef __cplusplus
}
#endif

#endif
