/* coll_alltoall_flex -- the node-deduplicated all-to-all of Megatron-Core's flex token dispatcher
 * (`--moe-token-dispatcher-type flex`, backends DeepEP and HybridEP: megatron/core/transformer/moe/
 * token_dispatcher.py MoEFlexTokenDispatcher, fused_a2a.py), as the per-peer sizes of the flow engine.
 *
 * What it does (deepseek-ai/DeepEP README "normal kernels" and csrc/kernels/internode.cu; HybridEP the
 * same scheme with its own kernels): a token is sent over the network (RDMA) ONCE to every other NVLink
 * domain that holds one or more of its top-k experts, to the GPU of the same local index there (its "rail"
 * peer), which forwards it over NVLink once to every GPU of its domain holding one of its experts; inside
 * the sender's own domain it goes once to every such GPU. The expert permutation (k copies) is made by the
 * receiver. Combine is the same traffic reversed (each GPU's partial sums reduced at the forwarder, then
 * sent once per domain). So per token: not k copies (the pairwise all-to-all of Megatron's alltoall
 * dispatcher, sim/coll_alltoall.c) but the number of distinct destination domains and GPUs.
 *
 * Uniform routing of top-k over E experts, e of them on a domain (or GPU): the chance that a token has one
 * of its experts there is 1 - C(E - e, k) / C(E, k) (the complement of all k drawn among the other E - e;
 * sampling without replacement), so a token reaches N (1 - C(E - E/N, k) / C(E, k)) of N domains on average
 * (coll_flex_reach). Per rank, with the graph's buffer S = k T h b (the k copies the pairwise one sends):
 *   to each other domain's rail peer   reach(E, k, N) / k * S      (network)
 *   to each member of its own domain   N * reach(E, k, n) / k * S  (NVLink: its own tokens and the N - 1
 *                                                                   domains' tokens it forwards)
 * for a group of n members in N domains of n/N each (the group shape it needs; else pairwise). Flows run
 * together (chunks pipelined as the kernels do), symmetric (the combine mirrors the dispatch).
 * The kernels' NVLink throughput is the stack's flex_nvlink_efficiency of the link (HybridEP's README measures
 * about 0.54 on B200 and GB200, below NCCL's): the NVLink flows carry nccl_bw_efficiency_nvlink / it times their bytes
 * on links the platform runs at NCCL's efficiency (coll_group.flex_nvlink_scale). The network side runs at the
 * stack's flex_ib_efficiency of the NIC (HybridEP's README measures 0.54 on H100 over 2 nodes) the same way
 * (coll_group.flex_ib_scale); without it, at NCCL's. Forwarding and RDMA are pipelined (HybridEP's RDMA warp
 * group beside its NVLink ones, on Hopper as on Blackwell: Hybrid-EP_Implementation.md).
 * Not modelled: the SMs the kernels take (HybridEP's moe_hybridep_num_sms_*), which matter only where the
 * all-to-all overlaps compute; routing that is not uniform (the imbalance scales S, as for pairwise).
 *
 * Owns: the flex all-to-all's plan and its reach formula. May not touch: graphs' meaning.
 */
#include "coll_algo.h"

#include <math.h>

double coll_flex_reach(int experts, int top_k, int parts)
{
  if (parts <= 1) return 1;
  int others = experts - experts / parts; /* experts not on the part */
  double none = 1;                        /* C(others, k) / C(E, k) as a product: prod (others - i) / (E - i) */
  for (int i = 0; i < top_k; i++) none *= others - i > 0 ? (double)(others - i) / (experts - i) : 0;
  return 1 - none;
}

static gboolean flex_fits(const coll_group *g)
{
  return g->flex_top_k > 0 && g->per_domain > 0 && g->flex_experts % g->n == 0;
}

static void flex_plan(const coll_group *g, int me, coll_plan *p)
{
  int N = g->domains, n = g->n, E = g->flex_experts, k = g->flex_top_k;
  double net = coll_flex_reach(E, k, N) / k, nvl = N * coll_flex_reach(E, k, n) / k, hop = 0;
  if (g->flex_nvlink_scale > 0) nvl *= g->flex_nvlink_scale; /* the kernels' NVLink rate, not NCCL's */
  if (g->flex_ib_scale > 0) net *= g->flex_ib_scale;          /* their RDMA rate, not NCCL's */
  for (int d = 0; d < N; d++) {
    if (d == g->dom[me]) {
      for (int l = 0; l < g->per_domain; l++)
        if (l != g->loc[me]) coll_plan_add(p, g->at[d * g->per_domain + l], nvl);
    } else {
      coll_plan_add(p, g->at[d * g->per_domain + g->loc[me]], net); /* the rail peer */
    }
  }
  for (int i = 0; i < p->n_to; i++) hop = MAX(hop, coll_hop_latency(g, me, p->to[i]));
  p->lat_s = hop;
  p->steps = 1;
}

const coll_algo_def coll_flex_def = {
    .name = "flex", .colls = 1u << COLL_ALL_TO_ALL, .fits = flex_fits, .plan = flex_plan,
};
