#!/usr/bin/env bash
# The nemo stack's flex_nvlink_efficiency (docs/moe.md, "The flex token dispatcher"): the NVLink throughput of
# HybridEP's intra-node kernels over the link bandwidth, from the one published measurement of them at hand:
# DeepEP's hybrid-ep branch, Hybrid-EP_Intra-node_Implementation.md (NVIDIA; read at shifangx/DeepEP@1242eb4),
# "Performance Results": 8 ranks, 4096 tokens of hidden 7168, top-8 of 64 uniformly routed experts, 16 SMs, the
# Torch API's algorithm bandwidth (GB/s) of the BF16 dispatch and of the combine, on B200 and on GB200:
#   B200  535.94 530.86      GB200  550.10 538.44
# The algorithm bandwidth counts every token a rank receives, its own share (1 of 8 ranks) included, which never
# crosses NVLink: the link carries 7/8 of it. Both machines' NVLink: 900 GB/s a direction (platforms/profiles/
# b200.json, gb200-nvl72.json). So efficiency = mean of the four x 7/8 / 900. NCCL's on the same links (the nemo
# stack's nccl_bw_efficiency_nvlink) is 0.887: the flex kernels trade bytes (a token once per GPU, not once per
# expert) for a lower rate (16 SMs of copies, not NCCL's channels).
# Usage: bash bench/moe-flex.sh   (prints the value the nemo stack carries)
set -euo pipefail
awk 'BEGIN {
  n = split("535.94 530.86 550.10 538.44", bw, " "); for (i = 1; i <= n; i++) s += bw[i]
  ranks = 8; link = 900
  printf "HybridEP algorithm bandwidth, mean of %d: %.2f GB/s; over NVLink %.2f GB/s of %d: flex_nvlink_efficiency %.4f\n",
    n, s / n, s / n * (ranks - 1) / ranks, link, s / n * (ranks - 1) / ranks / link
}'
