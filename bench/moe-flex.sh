#!/usr/bin/env bash
# The nemo stack's flex_nvlink_efficiency and flex_ib_efficiency (docs/moe.md, "The flex token dispatcher"): the
# NVLink and the network (RDMA) throughput of HybridEP's kernels over the link bandwidth, from the published
# measurements of them at hand.
# NVLink: DeepEP's hybrid-ep branch, Hybrid-EP_Intra-node_Implementation.md (NVIDIA; read at shifangx/DeepEP@1242eb4),
# "Performance Results": 8 ranks, 4096 tokens of hidden 7168, top-8 of 64 uniformly routed experts, 16 SMs, the
# Torch API's algorithm bandwidth (GB/s) of the BF16 dispatch and of the combine, on B200 and on GB200:
#   B200  535.94 530.86      GB200  550.10 538.44
# and the branch's docs/README_Hybrid-EP.md (deepseek-ai/DeepEP@94a9f8f) the same on GB200 at 32 SMs, 8 ranks:
#   GB200 545.71 568.94
# 32 SMs is what the rows' recipes run: Megatron-Bridge's perf scripts set moe_hybridep_num_sms = 32 for every
# HybridEP recipe (scripts/performance/utils/overrides.py since c62795c "HybridEP support", 2025-11-19;
# src/megatron/bridge/perf_recipes/_common.py _benchmark_common, NVIDIA-NeMo/Megatron-Bridge@067f987), so the 32-SM
# pair sets the value (the four 16-SM figures give 0.5239, the value before 2026-12-03).
# The algorithm bandwidth counts every token a rank receives, its own share (1 of 8 ranks) included, which never
# crosses NVLink: the link carries 7/8 of it. Both machines' NVLink: 900 GB/s a direction (platforms/profiles/
# b200.json, gb200-nvl72.json). So efficiency = mean of the two x 7/8 / 900. NCCL's on the same links (the nemo
# stack's nccl_bw_efficiency_nvlink) is 0.887: the flex kernels trade bytes (a token once per GPU, not once per
# expert) for a lower rate (32 SMs of copies, not NCCL's channels).
# Network: the same branch's docs/README_Hybrid-EP.md (deepseek-ai/DeepEP@94a9f8f, branch hybrid-ep), "H100
# Platform": 16 ranks (2 nodes of 8 H100, one 400 Gb/s NIC a GPU), 4096 tokens of hidden 7168, top-8 of 128
# uniformly routed experts (8 a rank), the Torch API's "IB bandwidth" of the BF16 dispatch and of the combine at
# 16 SMs, the most the table measures (4, 8, 16) and the nearest to the recipes' 32 (above):  54.47 53.35
# (at 8 SMs, HybridEP's multi-node default, csrc/hybrid_ep/config.cuh, 57.74 56.96 would give 0.5735)
# Its bytes (tests/utils.py count_rdma_send_from_routing_map, "to align with ... DeepEP"; DeepEP's
# tests/test_internode.py alike) count a token once per node it reaches, its own node included, which it never
# leaves: of N nodes reached evenly (N - 1)/N cross the network, 1/2 here. NIC 50 GB/s (platforms/profiles/
# h100-sxm5-80gb.json). So efficiency = mean of the two x 1/2 / 50. The check
# printed last: with it the model's flex plan (sim/coll_alltoall_flex.c) is network-bound on that benchmark, its
# NVLink forwarding (at flex_nvlink_efficiency) ending first, so the measured time is the RDMA side's.
# Usage: bash bench/moe-flex.sh   (prints the values the nemo stack carries)
set -euo pipefail
awk 'function reach(E, k, P,   o, none, i) { o = E - E / P; none = 1; for (i = 0; i < k; i++) none *= (o - i) / (E - i); return 1 - none }
BEGIN {
  n = split("535.94 530.86 550.10 538.44", bw, " "); for (i = 1; i <= n; i++) s += bw[i]
  ranks = 8; link = 900
  printf "HybridEP algorithm bandwidth at 16 SMs, mean of %d: %.2f GB/s; over NVLink %.2f GB/s of %d: %.4f (not used)\n",
    n, s / n, s / n * (ranks - 1) / ranks, link, s / n * (ranks - 1) / ranks / link
  s32 = (545.71 + 568.94) / 2; fnvl = s32 * (ranks - 1) / ranks / link
  printf "HybridEP algorithm bandwidth at 32 SMs (GB200), mean of 2: %.2f GB/s; over NVLink %.2f GB/s of %d: flex_nvlink_efficiency %.4f\n",
    s32, s32 * (ranks - 1) / ranks, link, fnvl
  ib = (54.47 + 53.35) / 2; nodes = 2; nic = 50; fib = ib * (nodes - 1) / nodes / nic
  printf "HybridEP H100 IB bandwidth, mean of 2: %.3f GB/s; over the network %.3f GB/s of %d: flex_ib_efficiency %.4f\n",
    ib, ib * (nodes - 1) / nodes, nic, fib
  E = 128; k = 8; T = 4096; h = 7168; S = k * T * h * 2 # the k copies, bytes a rank
  tnet = reach(E, k, nodes) / k * S / (fib * nic * 1e9)
  tnvl = 7 * nodes * reach(E, k, 16) / k * S / (fnvl * 450e9)
  printf "check, that benchmark in the model: network %.3f ms (measured %.3f ms), NVLink forwarding %.3f ms: network-bound\n",
    1e3 * tnet, 1e3 * T * nodes * reach(E, k, nodes) * h * 2 / (ib * 1e9), 1e3 * tnvl
}'
