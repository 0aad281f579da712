/* cluster -- see cluster.h. */
#include "cluster.h"

#include "fabric.h"
#include "rail_zone.h"
#include "topology.h"

#include <simgrid/host.h>
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
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
  return snprintf(buf, (size_t)len, "%d %d %d %d %a %a %a %a %a %d %a %d", p->nodes, p->gpus_per_node, p->nics_per_node,
                  p->gpus_per_domain, p->gpu_flops, p->nvlink_bytes_per_s, p->nvlink_latency_s, p->ib_bytes_per_s, p->ib_latency_s,
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

/* Domain d's zone: its hosts' GPUs, each GPU's NVLink link, each host's NICs, the domain's gateway. */
static sg4::NetZone *build_domain(const plat_params *p, sg4::NetZone *root, int d, simgrid::kernel::routing::NetPoint **gw)
{
  char name[64];
  topo_zone_name(p, d, name, sizeof name);
  auto *zone = sg4::create_full_zone(name);
  zone->set_parent(root);
  int G = p->gpus_per_node, hpd = topo_hosts_per_domain(p), first = d * hpd * G;
  int end = std::min((d + 1) * hpd, p->nodes) * G;
  std::vector<const sg4::Host *> gpus;
  std::vector<sg4::Link *> nvl, nic;
  for (int r = first; r < end; r++) {
    gpus.push_back(zone->create_host(plat_gpu_name(r / G, r % G), p->gpu_flops)->seal());
    built_hosts.push_back(const_cast<sg_host_t>(gpus.back()));
    topo_link_name(p, TOPO_LINK_NVL, r, name, sizeof name);
    nvl.push_back(zone->create_split_duplex_link(name, p->nvlink_bytes_per_s)->set_latency(p->nvlink_latency_s / 2)->seal());
  }
  for (int k = first / G * p->nics_per_node; k < end / G * p->nics_per_node; k++) {
    topo_link_name(p, TOPO_LINK_NIC, k, name, sizeof name);
    nic.push_back(zone->create_split_duplex_link(name, p->ib_bytes_per_s)->set_latency(p->ib_latency_s / 2)->seal());
  }
  /* "sw<n>" where a domain is one host (the name before domains), as topo_zone_name */
  *gw = zone->create_router((hpd > 1 ? "sw_domain" : "sw") + std::to_string(d));
  using D = sg4::LinkInRoute::Direction;
  for (int i = first; i < end; i++) {
    for (int j = first; j < end; j++) {
      if (i == j) continue;
      zone->add_route(gpus[i - first]->get_netpoint(), gpus[j - first]->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(nvl[i - first], D::UP), sg4::LinkInRoute(nvl[j - first], D::DOWN)}, false);
    }
    sg4::Link *n = nic[(i / G - first / G) * p->nics_per_node + topo_rail_of(p, i)];
    zone->add_route(gpus[i - first]->get_netpoint(), *gw, nullptr, nullptr, {sg4::LinkInRoute(n, D::UP)}, false);
    zone->add_route(*gw, gpus[i - first]->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(n, D::DOWN)}, false);
  }
  return zone->seal();
}

/* Whether every domain's traffic to another domain takes the core alone (no leaf groups with uplinks of
 * their own between them): then the root zone is a star, one route per domain to and from the core, and
 * the route between two domains is the core, as a full zone's route per pair of domains would be (the
 * same links in the same order, so the same times). A full zone's routes grow with the square of the
 * domains: 2.7e8 routes, about 28 GB, at 131,072 GPUs (docs/sweep.md, "131,072 GPUs"). */
static bool core_only(const plat_params *p, int nd, int hpd)
{
  for (int d = 1; d < nd; d++)
    if (topo_uplink_of(p, d * hpd, 0) != topo_uplink_of(p, 0, 0)) return false;
  return true;
}

extern "C" int plat_root_is_star(const plat_params *p)
{
  return !fabric_is_rail(p->fabric) && core_only(p, topo_domains(p), topo_hosts_per_domain(p));
}

/* Above this many NVLink domains the fat-tree is built as one zone with computed routes (rail_zone.cpp's, whose
 * topo_route gives the fat-tree's routes: the same links in the same order, the same latencies): SimGrid checks
 * each new host and link name against every zone, so a zone per domain costs the square of the domains
 * (23 s of CPU at 16,384 H100, docs/sweep.md "131,072 GPUs"). Below it, a zone per domain as SimGrid's own
 * trace and traces/paje.c draw it. LAYOUTSIM_PLATFORM_ZONES_MAX overrides it (tests: the same step both ways). */
#define PLAT_ZONES_MAX 512

static int zones_max(void)
{
  const char *v = getenv("LAYOUTSIM_PLATFORM_ZONES_MAX");
  return v && *v ? atoi(v) : PLAT_ZONES_MAX;
}

extern "C" int plat_routes_computed(const plat_params *p)
{
  return fabric_is_rail(p->fabric) || topo_domains(p) > zones_max();
}

extern "C" void plat_build(const plat_params *p)
{
  built_hosts.clear();
  if (plat_routes_computed(p)) {
    rail_zone_build(p);
    for (int r = 0; r < p->nodes * p->gpus_per_node; r++) /* by rank, as a zone per domain records them */
      built_hosts.push_back(sg4::Host::by_name(plat_gpu_name(r / p->gpus_per_node, r % p->gpus_per_node)));
    return;
  }
  int nd = topo_domains(p), hpd = topo_hosts_per_domain(p);
  bool star = core_only(p, nd, hpd);
  auto *root = star ? sg4::create_star_zone("cluster") : sg4::create_full_zone("cluster");
  std::vector<sg4::NetZone *> domains;
  std::vector<simgrid::kernel::routing::NetPoint *> gws;
  for (int d = 0; d < nd; d++) {
    simgrid::kernel::routing::NetPoint *gw;
    domains.push_back(build_domain(p, root, d, &gw));
    gws.push_back(gw);
  }
  if (nd > 1) {
    /* non-blocking fat-tree: a fat pipe of no latency; NIC links carry the latency */
    /* not sealed here: root->seal() seals it, and sealing twice breaks Paje tracing ("container core already present") */
    char name[64];
    topo_link_name(p, TOPO_LINK_CORE, 0, name, sizeof name);
    sg4::Link *core = root->create_link(name, 1e15)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    /* leaf groups (topology.h): traffic between two groups climbs the source group's uplink and descends the other's */
    std::vector<sg4::Link *> up;
    for (int gr = 0; gr < topo_n_links(p, TOPO_LINK_UPLINK); gr++) {
      topo_link_name(p, TOPO_LINK_UPLINK, gr, name, sizeof name);
      up.push_back(root->create_split_duplex_link(name, p->uplink_bytes_per_s));
    }
    using D = sg4::LinkInRoute::Direction;
    if (star) { /* up to the core and down from it: the star drops the core's second appearance */
      for (int a = 0; a < nd; a++) {
        root->add_route(domains[a]->get_netpoint(), nullptr, gws[a], nullptr, {sg4::LinkInRoute(core)}, false);
        root->add_route(nullptr, domains[a]->get_netpoint(), nullptr, gws[a], {sg4::LinkInRoute(core)}, false);
      }
    } else
    for (int a = 0; a < nd; a++)
      for (int b = a + 1; b < nd; b++) {
        int ua = topo_uplink_of(p, a * hpd, 0), ub = topo_uplink_of(p, b * hpd, 0);
        std::vector<sg4::LinkInRoute> via{sg4::LinkInRoute(core)};
        if (ua != ub) via = {sg4::LinkInRoute(up[ua], D::UP), sg4::LinkInRoute(core), sg4::LinkInRoute(up[ub], D::DOWN)};
        root->add_route(domains[a]->get_netpoint(), domains[b]->get_netpoint(), gws[a], gws[b], via, true);
      }
  }
  root->seal();
}

extern "C" sg_host_t plat_host(const plat_params *p, int rank)
{
  if (rank >= 0 && (size_t)rank < built_hosts.size()) return built_hosts[rank]; /* node-major: n0_g0, n0_g1, ... */
  return sg4::Host::by_name(plat_gpu_name(rank / p->gpus_per_node, rank % p->gpus_per_node));
}
