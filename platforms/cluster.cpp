/* cluster -- see cluster.h. */
#include "cluster.h"

#include "fabric.h"
#include "rail_zone.h"

#include <simgrid/host.h>
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace sg4 = simgrid::s4u;

/* Every field: one added to plat_params must be added here (the assertion is there to say so). */
static_assert(sizeof(plat_params) == 80, "plat_key: a field of plat_params is missing from the key");

extern "C" int plat_key(const plat_params *p, char *buf, int len)
{
  return snprintf(buf, (size_t)len, "%d %d %d %a %a %a %a %a %d %a %d", p->nodes, p->gpus_per_node, p->nics_per_node,
                  p->gpu_flops, p->nvlink_bytes_per_s, p->nvlink_latency_s, p->ib_bytes_per_s, p->ib_latency_s,
                  p->leaf_nodes, p->uplink_bytes_per_s, p->fabric);
}

extern "C" int plat_same(const plat_params *a, const plat_params *b)
{
  char ka[PLAT_KEY_LEN], kb[PLAT_KEY_LEN];
  plat_key(a, ka, sizeof ka);
  plat_key(b, kb, sizeof kb);
  return strcmp(ka, kb) == 0;
}

extern "C" int plat_stripe_nodes(const plat_params *p)
{
  return p->leaf_nodes > 0 && p->leaf_nodes < p->nodes ? p->leaf_nodes : p->nodes;
}

extern "C" void plat_configure(void)
{
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/solver:fairbottleneck");
}

std::string plat_gpu_name(int node, int gpu) { return "n" + std::to_string(node) + "_g" + std::to_string(gpu); }

/* The GPU hosts plat_build created, by rank: plat_host then needs no look-up by name (SimGrid's walks
 * every zone of the platform). SimGrid glue: the platform is the process's one, like the engine. */
static std::vector<sg_host_t> built_hosts;

static sg4::NetZone *build_node(const plat_params *p, sg4::NetZone *root, int node, simgrid::kernel::routing::NetPoint **gw)
{
  auto *zone = sg4::create_full_zone("node" + std::to_string(node));
  zone->set_parent(root);
  std::vector<const sg4::Host *> gpus;
  std::vector<sg4::Link *> nvl, nic;
  for (int g = 0; g < p->gpus_per_node; g++) {
    gpus.push_back(zone->create_host(plat_gpu_name(node, g), p->gpu_flops)->seal());
    built_hosts.push_back(const_cast<sg_host_t>(gpus.back()));
    nvl.push_back(zone->create_split_duplex_link("nvl_" + std::to_string(node) + "_" + std::to_string(g),
                                                 p->nvlink_bytes_per_s)
                      ->set_latency(p->nvlink_latency_s / 2)
                      ->seal());
  }
  for (int k = 0; k < p->nics_per_node; k++)
    nic.push_back(zone->create_split_duplex_link("nic_" + std::to_string(node) + "_" + std::to_string(k),
                                                 p->ib_bytes_per_s)
                      ->set_latency(p->ib_latency_s / 2)
                      ->seal());
  *gw = zone->create_router("sw" + std::to_string(node));
  int per_nic = p->gpus_per_node / p->nics_per_node;
  using D = sg4::LinkInRoute::Direction;
  for (int i = 0; i < p->gpus_per_node; i++) {
    for (int j = 0; j < p->gpus_per_node; j++) {
      if (i == j) continue;
      zone->add_route(gpus[i]->get_netpoint(), gpus[j]->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(nvl[i], D::UP), sg4::LinkInRoute(nvl[j], D::DOWN)}, false);
    }
    sg4::Link *n = nic[i / per_nic];
    zone->add_route(gpus[i]->get_netpoint(), *gw, nullptr, nullptr, {sg4::LinkInRoute(n, D::UP)}, false);
    zone->add_route(*gw, gpus[i]->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(n, D::DOWN)}, false);
  }
  return zone->seal();
}

extern "C" void plat_build(const plat_params *p)
{
  built_hosts.clear();
  if (fabric_is_rail(p->fabric)) return rail_zone_build(p);
  auto *root = sg4::create_full_zone("cluster");
  std::vector<sg4::NetZone *> nodes;
  std::vector<simgrid::kernel::routing::NetPoint *> gws;
  for (int n = 0; n < p->nodes; n++) {
    simgrid::kernel::routing::NetPoint *gw;
    nodes.push_back(build_node(p, root, n, &gw));
    gws.push_back(gw);
  }
  if (p->nodes > 1) {
    /* non-blocking fat-tree: a fat pipe of no latency; NIC links carry the latency */
    /* not sealed here: root->seal() seals it, and sealing twice breaks Paje tracing ("container core already present") */
    sg4::Link *core = root->create_link("core", 1e15)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    /* leaf groups: traffic between two groups climbs the source group's uplink and descends the other's */
    int per = p->leaf_nodes > 0 ? p->leaf_nodes : p->nodes;
    std::vector<sg4::Link *> up;
    for (int gr = 0; per < p->nodes && gr * per < p->nodes; gr++)
      up.push_back(root->create_split_duplex_link("leaf" + std::to_string(gr), p->uplink_bytes_per_s));
    using D = sg4::LinkInRoute::Direction;
    for (int a = 0; a < p->nodes; a++)
      for (int b = a + 1; b < p->nodes; b++) {
        std::vector<sg4::LinkInRoute> via{sg4::LinkInRoute(core)};
        if (!up.empty() && a / per != b / per)
          via = {sg4::LinkInRoute(up[a / per], D::UP), sg4::LinkInRoute(core), sg4::LinkInRoute(up[b / per], D::DOWN)};
        root->add_route(nodes[a]->get_netpoint(), nodes[b]->get_netpoint(), gws[a], gws[b], via, true);
      }
  }
  root->seal();
}

extern "C" sg_host_t plat_host(const plat_params *p, int rank)
{
  if (rank >= 0 && (size_t)rank < built_hosts.size()) return built_hosts[rank]; /* node-major: n0_g0, n0_g1, ... */
  return sg4::Host::by_name(plat_gpu_name(rank / p->gpus_per_node, rank % p->gpus_per_node));
}
