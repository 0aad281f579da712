/* rail_zone -- a rail-optimized cluster as one SimGrid zone whose routes are
 * computed from the two GPUs' node and index, not stored.
 *
 * The switches: inside an NVLink domain (one host, or whole hosts: topology.h), each GPU's split-duplex
 * NVLink link to the NVSwitches (as cluster.cpp); NIC k of every host ("node"; GPU g's NIC is g / (GPUs
 * per NIC)) on rail leaf k of its stripe (leaf_nodes hosts, or all of them); each leaf
 * switch non-blocking, with one split-duplex uplink to a fat-pipe spine of
 * uplink_bytes_per_s (its NICs' bandwidth over the oversubscription). Routes (topo_route's):
 *   same domain:                      nvl_i up, nvl_j down                     (NVLink latency)
 *   same rail, same stripe:           nic_i up, nic_j down                     (IB latency)
 *   otherwise (fabric rail):          nic_i up, uplink up, spine, uplink down, nic_j down
 *   otherwise (fabric rail-pxn):      nvl_i up, nvl_p down, then the proxy p's route to j,
 *                                     p the GPU of the source node with j's index (on j's rail),
 *                                     as NCCL's PXN moves the data over NVLink first (NVLink + IB latency).
 * The uplinks and the spine add no latency (the NIC links carry it, as the fat-tree's core).
 *
 * Why a zone of its own: SimGrid's hierarchical routing gives one route per pair of child zones, so
 * a zone per node cannot pick the rail by GPU index; a Full zone would hold a route per GPU pair
 * (67 million at 8192 GPUs). This one holds the links and computes each route on demand.
 *
 * Owns: the rail fabric's links and routes. May not touch: task graphs, the fat-tree (cluster.cpp).
 */
#include "rail_zone.h"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "fabric.h"
#include "topology.h"

namespace sg4 = simgrid::s4u;
namespace kr = simgrid::kernel::routing;
using LinkImpl = simgrid::kernel::resource::StandardLinkImpl;

namespace {

struct Duplex {
  sg4::Link *up = nullptr, *down = nullptr;
};

class RailZone : public kr::NetZoneImpl {
public:
  explicit RailZone(const plat_params *p) : kr::NetZoneImpl("cluster"), p_(*p) {}
  void build();

protected:
  void get_local_route(const kr::NetPoint *src, const kr::NetPoint *dst, kr::Route *into, double *latency) override;
  void get_graph(const s_xbt_graph_t *graph, std::map<std::string, xbt_node_t, std::less<>> *nodes,
                 std::map<std::string, xbt_edge_t, std::less<>> *edges) override;

private:
  plat_params p_;
  std::vector<int> rank_of_; /* netpoint id -> GPU rank */
  std::vector<Duplex> nvl_, nic_, uplink_; /* by rank; by node * nics + k; by stripe * nics + k */
  sg4::Link *spine_ = nullptr;

  Duplex split(const std::string &name, double bytes_per_s, double latency_s);
  void add(kr::Route *into, sg4::Link *l) const { into->link_list_.push_back(l->get_impl()); }
  std::string link_name(topo_link_kind kind, int index) const
  {
    char b[64];
    topo_link_name(&p_, kind, index, b, sizeof b);
    return b;
  }
};

Duplex RailZone::split(const std::string &name, double bytes_per_s, double latency_s)
{
  /* not sealed here: the zone's seal seals its links (sealing twice breaks Paje tracing) */
  sg4::SplitDuplexLink *l = get_iface()->create_split_duplex_link(name, bytes_per_s);
  l->set_latency(latency_s);
  return Duplex{l->get_link_up(), l->get_link_down()};
}

void RailZone::build()
{
  int G = p_.gpus_per_node;
  for (int n = 0; n < p_.nodes; n++)
    for (int g = 0; g < G; g++) {
      sg4::Host *h = get_iface()->create_host(plat_gpu_name(n, g), p_.gpu_flops);
      unsigned long at = h->get_netpoint()->id();
      if (rank_of_.size() <= at) rank_of_.resize(at + 1, -1);
      rank_of_[at] = n * G + g;
      nvl_.push_back(split(link_name(TOPO_LINK_NVL, n * G + g), p_.nvlink_bytes_per_s, p_.nvlink_latency_s / 2));
      h->seal();
    }
  for (int i = 0; i < topo_n_links(&p_, TOPO_LINK_NIC); i++)
    nic_.push_back(split(link_name(TOPO_LINK_NIC, i), p_.ib_bytes_per_s, p_.ib_latency_s / 2));
  for (int i = 0; i < topo_n_links(&p_, TOPO_LINK_UPLINK); i++)
    uplink_.push_back(split(link_name(TOPO_LINK_UPLINK, i), p_.uplink_bytes_per_s, 0));
  spine_ = get_iface()->create_link(link_name(TOPO_LINK_CORE, 0), 1e15)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
}

void RailZone::get_local_route(const kr::NetPoint *src, const kr::NetPoint *dst, kr::Route *into, double *latency)
{
  int i = rank_of_.at(src->id()), j = rank_of_.at(dst->id());
  topo_hop h[TOPO_MAX_HOPS];
  int n = topo_route(&p_, i, j, h);
  for (int x = 0; x < n; x++) {
    const std::vector<Duplex> &v = h[x].kind == TOPO_LINK_NVL ? nvl_ : h[x].kind == TOPO_LINK_NIC ? nic_ : uplink_;
    if (h[x].kind == TOPO_LINK_CORE) add(into, spine_);
    else add(into, h[x].dir == TOPO_UP ? v.at(h[x].index).up : v.at(h[x].index).down);
  }
  if (latency) *latency += topo_route_latency_s(&p_, i, j); /* SimGrid asks for the links alone at times (sg_host_get_route) */
}

/* The topology Paje's platform view draws: each GPU to its NVLink and NIC links, NVLink to the zone
 * (the NVSwitches), NIC to its leaf's uplink, uplinks to the spine. Only containers are named. */
void RailZone::get_graph(const s_xbt_graph_t *graph, std::map<std::string, xbt_node_t, std::less<>> *nodes,
                         std::map<std::string, xbt_edge_t, std::less<>> *edges)
{
  int K = p_.nics_per_node;
  xbt_node_t zone = new_xbt_graph_node(graph, get_cname(), nodes);
  xbt_node_t spine = new_xbt_graph_node(graph, spine_->get_cname(), nodes);
  for (const Duplex &u : uplink_)
    for (sg4::Link *l : {u.up, u.down})
      new_xbt_graph_edge(graph, new_xbt_graph_node(graph, l->get_cname(), nodes), spine, edges);
  for (const kr::NetPoint *v : get_vertices()) {
    int r = rank_of_.at(v->id()), n = topo_host_of(&p_, r), k = topo_rail_of(&p_, r);
    xbt_node_t gpu = new_xbt_graph_node(graph, v->get_cname(), nodes);
    for (sg4::Link *l : {nvl_[r].up, nvl_[r].down}) {
      xbt_node_t ln = new_xbt_graph_node(graph, l->get_cname(), nodes);
      new_xbt_graph_edge(graph, gpu, ln, edges);
      new_xbt_graph_edge(graph, ln, zone, edges);
    }
    const Duplex &u = uplink_[topo_uplink_of(&p_, n, k)];
    for (sg4::Link *l : {nic_[n * K + k].up, nic_[n * K + k].down}) {
      xbt_node_t ln = new_xbt_graph_node(graph, l->get_cname(), nodes);
      new_xbt_graph_edge(graph, gpu, ln, edges);
      new_xbt_graph_edge(graph, ln, new_xbt_graph_node(graph, u.up->get_cname(), nodes), edges);
    }
  }
}

} // namespace

void rail_zone_build(const plat_params *p)
{
  auto *zone = new RailZone(p); /* the root zone: the engine owns and deletes it */
  zone->build();
  zone->get_iface()->seal();
}
