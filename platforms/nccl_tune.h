/* nccl_tune -- NCCL's own choice of a collective algorithm: the latency and bandwidth model of
 * ncclTopoTuneModel and ncclTopoGetAlgoTime (src/graph/tuning.cc), re-implemented for ring, tree
 * and NVLS and the protocols LL, LL128 and Simple, following NCCL 2.30.7 (github.com/NVIDIA/nccl
 * commit 5067397c2676d5aed50042fc39e5c8ee96eb0027; docs/collectives.md).
 *
 * For each enabled (algorithm, protocol) NCCL predicts time = latency + bytes / bandwidth and runs
 * the fastest; the protocol only changes the prediction (layoutsim simulates the algorithm's data
 * movement, not the protocol's). What NCCL's topology search would find is taken from the profile:
 * a group's bus bandwidth is the GPU's NVLink bandwidth inside one node and min(NVLink, the node's
 * NICs) across nodes, split over NCCL_TUNE_CHANNELS channels (the count the per-channel caps are
 * multiplied by); the CPU (which sets LL's cap and the network overhead) is the DGX one of the GPU's
 * generation: AMD for Ampere (DGX A100), Intel for Hopper and Blackwell. CollNet, NVLS-tree and PAT
 * are not modelled (no SHARP network; PAT runs reduce-scatter/all-gather with one GPU per node only).
 *
 * Owns: the tuner's constants and formulas. May not touch: SimGrid, graphs' meaning.
 */
#ifndef NCCL_TUNE_H
#define NCCL_TUNE_H

#include <glib.h>

#include "workloads/graph.h"

typedef enum { NCCL_TUNE_TREE, NCCL_TUNE_RING, NCCL_TUNE_NVLS, NCCL_TUNE_N_ALGOS } nccl_tune_algo;
typedef enum { NCCL_TUNE_LL, NCCL_TUNE_LL128, NCCL_TUNE_SIMPLE, NCCL_TUNE_N_PROTOS } nccl_tune_proto;

/* NCCL's channel count for the per-channel caps (NCCL_MAX_NCHANNELS / 2: what its search finds on 8-GPU
 * NVSwitch nodes, and NVLS's default channel count on Hopper). */
#define NCCL_TUNE_CHANNELS 16

/* The communicator as the tuner sees it. */
typedef struct nccl_tune_comm {
  int nranks, nnodes;   /* nodes: NVLink domains */
  int compcap;          /* 80 Ampere, 90 Hopper, 100 Blackwell */
  gboolean nvls;        /* NVLink SHARP (NVSwitch gen 3+) */
  double nvlink_bytes_per_s, node_net_bytes_per_s; /* per GPU per direction; the node's NICs together */
} nccl_tune_comm;

/* The compute capability of a profile by its name (a100... 80, h100... and h200... 90, b... and gb... 100; else 80). */
int nccl_tune_compcap(const char *profile_name);
/* NCCL's nvlsEfficiency of a compute capability (tuning.cc: 0.85 Hopper, 0.74 Blackwell; 0: no NVLS): the
 * fraction of the link's bandwidth an NVLS all-reduce sustains (its model and sim/coll_nvls.c's flows). */
double nccl_tune_nvls_efficiency(int compcap);

/* NCCL's predicted time (µs) of collective c of `bytes` per rank with algorithm a and protocol p, or -1
 * where NCCL would not run it (bandwidth 0). */
double nccl_tune_time_us(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p, double bytes);
/* The latency (µs) NCCL's model charges algorithm a for collective c of `bytes` per rank, with the protocol it
 * would run a with (the fastest of a's; *proto, may be NULL, gets it): baseLat + the per-step hwLat of each
 * step's link type (NVLink steps of a ring across nodes raised to the network overhead), times the ring's
 * Simple all-reduce plateau factor across nodes. -1 where NCCL would not run a. */
double nccl_tune_latency_us(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, double bytes,
                            nccl_tune_proto *proto);
/* The algorithm NCCL runs: the fastest (algorithm, protocol); *proto (may be NULL) gets its protocol. */
nccl_tune_algo nccl_tune_choose(const nccl_tune_comm *cm, graph_coll c, double bytes, nccl_tune_proto *proto);
const char *nccl_tune_algo_name(nccl_tune_algo a);
const char *nccl_tune_proto_name(nccl_tune_proto p);

#endif
