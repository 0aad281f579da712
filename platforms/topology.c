/* topology -- see topology.h. */
#include "topology.h"

#include <stdio.h>

#include "fabric.h"

int topo_hosts_per_domain(const plat_params *p)
{
  int d = p->gpus_per_domain / p->gpus_per_node;
  return d > 1 && p->gpus_per_domain % p->gpus_per_node == 0 ? d : 1;
}

int topo_host_of(const plat_params *p, int rank) { return rank / p->gpus_per_node; }
int topo_domain_of(const plat_params *p, int rank) { return topo_host_of(p, rank) / topo_hosts_per_domain(p); }
int topo_domains(const plat_params *p) { return (p->nodes + topo_hosts_per_domain(p) - 1) / topo_hosts_per_domain(p); }
int topo_rail_of(const plat_params *p, int rank) { return rank % p->gpus_per_node / (p->gpus_per_node / p->nics_per_node); }

/* A fat-tree's leaf groups hold whole domains (SimGrid routes between the domains' zones): a host's
 * group is its domain's first host's. */
static int leaf_per(const plat_params *p) { return p->leaf_nodes > 0 ? p->leaf_nodes : p->nodes; }
static int fat_groups(const plat_params *p)
{
  int per = leaf_per(p);
  return per < p->nodes ? (p->nodes + per - 1) / per : 0;
}
static int stripe_of(const plat_params *p, int host) { return host / plat_stripe_nodes(p); }

int topo_uplink_of(const plat_params *p, int host, int k)
{
  if (fabric_is_rail(p->fabric)) return stripe_of(p, host) * p->nics_per_node + k;
  if (!fat_groups(p)) return -1;
  int hpd = topo_hosts_per_domain(p);
  return host / hpd * hpd / leaf_per(p);
}

int topo_n_links(const plat_params *p, topo_link_kind kind)
{
  switch (kind) {
  case TOPO_LINK_NVL: return p->nodes * p->gpus_per_node;
  case TOPO_LINK_NIC: return p->nodes * p->nics_per_node;
  case TOPO_LINK_UPLINK:
    if (fabric_is_rail(p->fabric)) return (p->nodes + plat_stripe_nodes(p) - 1) / plat_stripe_nodes(p) * p->nics_per_node;
    return fat_groups(p);
  case TOPO_LINK_CORE: return fabric_is_rail(p->fabric) || topo_domains(p) > 1 ? 1 : 0;
  default: return 0;
  }
}

void topo_link_name(const plat_params *p, topo_link_kind kind, int index, char *buf, size_t len)
{
  int K = p->nics_per_node;
  switch (kind) {
  case TOPO_LINK_NVL: snprintf(buf, len, "nvl_%d_%d", index / p->gpus_per_node, index % p->gpus_per_node); break;
  case TOPO_LINK_NIC: snprintf(buf, len, "nic_%d_%d", index / K, index % K); break;
  case TOPO_LINK_UPLINK:
    if (fabric_is_rail(p->fabric)) snprintf(buf, len, "rail%d_leaf%d", index % K, index / K);
    else snprintf(buf, len, "leaf%d", index);
    break;
  default: snprintf(buf, len, "%s", fabric_is_rail(p->fabric) ? "spine" : "core"); break;
  }
}

void topo_zone_name(const plat_params *p, int domain, char *buf, size_t len)
{
  snprintf(buf, len, "%s%d", topo_hosts_per_domain(p) > 1 ? "domain" : "node", domain);
}

void topo_levels(const plat_params *p, topo_level out[TOPO_N_LEVELS])
{
  int rail = fabric_is_rail(p->fabric), leaf = rail ? plat_stripe_nodes(p) : leaf_per(p);
  out[TOPO_GPU] = (topo_level){"gpu", "its own", 1, p->gpu_flops, 0};
  out[TOPO_DOMAIN] = (topo_level){"nvlink-domain", "a link per GPU into the NVSwitches", p->gpus_per_node * topo_hosts_per_domain(p),
                                  p->nvlink_bytes_per_s, p->nvlink_latency_s};
  out[TOPO_HOST] = (topo_level){"host", "GPUs per NIC share it", p->gpus_per_node, p->ib_bytes_per_s, p->ib_latency_s};
  out[TOPO_LEAF] = (topo_level){rail ? "rail-leaf" : "leaf", "the leaf's NICs share its uplink", leaf * p->gpus_per_node,
                                p->uplink_bytes_per_s, 0};
  out[TOPO_SPINE] = (topo_level){rail ? "spine" : "core", "a fat pipe: none", p->nodes * p->gpus_per_node, 1e15, 0};
}

static int hop(topo_hop *h, int n, topo_link_kind kind, int index, int dir)
{
  h[n] = (topo_hop){kind, index, dir};
  return n + 1;
}

/* From rank src's host through NIC k to rank dst's host on the same rail k. */
static int rail_hops(const plat_params *p, int src, int dst, int k, topo_hop *h, int n)
{
  int a = topo_host_of(p, src), b = topo_host_of(p, dst), K = p->nics_per_node;
  n = hop(h, n, TOPO_LINK_NIC, a * K + k, TOPO_UP);
  if (stripe_of(p, a) != stripe_of(p, b)) {
    n = hop(h, n, TOPO_LINK_UPLINK, topo_uplink_of(p, a, k), TOPO_UP);
    n = hop(h, n, TOPO_LINK_CORE, 0, TOPO_UP);
    n = hop(h, n, TOPO_LINK_UPLINK, topo_uplink_of(p, b, k), TOPO_DOWN);
  }
  return hop(h, n, TOPO_LINK_NIC, b * K + k, TOPO_DOWN);
}

int topo_route(const plat_params *p, int src, int dst, topo_hop hops[TOPO_MAX_HOPS])
{
  if (src == dst) return 0;
  int n = 0, K = p->nics_per_node, G = p->gpus_per_node;
  int a = topo_host_of(p, src), b = topo_host_of(p, dst), ri = topo_rail_of(p, src), rj = topo_rail_of(p, dst);
  if (topo_domain_of(p, src) == topo_domain_of(p, dst)) {
    n = hop(hops, n, TOPO_LINK_NVL, src, TOPO_UP);
    return hop(hops, n, TOPO_LINK_NVL, dst, TOPO_DOWN);
  }
  if (!fabric_is_rail(p->fabric)) {
    int ua = topo_uplink_of(p, a, ri), ub = topo_uplink_of(p, b, rj);
    n = hop(hops, n, TOPO_LINK_NIC, a * K + ri, TOPO_UP);
    if (ua != ub) n = hop(hops, n, TOPO_LINK_UPLINK, ua, TOPO_UP);
    n = hop(hops, n, TOPO_LINK_CORE, 0, TOPO_UP);
    if (ua != ub) n = hop(hops, n, TOPO_LINK_UPLINK, ub, TOPO_DOWN);
    return hop(hops, n, TOPO_LINK_NIC, b * K + rj, TOPO_DOWN);
  }
  if (ri == rj) return rail_hops(p, src, dst, ri, hops, n);
  if (p->fabric == FABRIC_RAIL_PXN) { /* NVLink to the proxy on dst's rail, then its rail */
    int proxy = a * G + dst % G;
    n = hop(hops, n, TOPO_LINK_NVL, src, TOPO_UP);
    n = hop(hops, n, TOPO_LINK_NVL, proxy, TOPO_DOWN);
    return rail_hops(p, proxy, dst, rj, hops, n);
  }
  n = hop(hops, n, TOPO_LINK_NIC, a * K + ri, TOPO_UP); /* up rail ri's leaf, across the spine, down rail rj's */
  n = hop(hops, n, TOPO_LINK_UPLINK, topo_uplink_of(p, a, ri), TOPO_UP);
  n = hop(hops, n, TOPO_LINK_CORE, 0, TOPO_UP);
  n = hop(hops, n, TOPO_LINK_UPLINK, topo_uplink_of(p, b, rj), TOPO_DOWN);
  return hop(hops, n, TOPO_LINK_NIC, b * K + rj, TOPO_DOWN);
}

double topo_route_latency_s(const plat_params *p, int src, int dst)
{
  topo_hop h[TOPO_MAX_HOPS];
  int n = topo_route(p, src, dst, h), nvl = 0, nic = 0;
  for (int i = 0; i < n; i++) {
    nvl += h[i].kind == TOPO_LINK_NVL;
    nic += h[i].kind == TOPO_LINK_NIC;
  }
  return nvl / 2 * p->nvlink_latency_s + nic / 2 * p->ib_latency_s; /* half a latency per link, as they are set */
}
