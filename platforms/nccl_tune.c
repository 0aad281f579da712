/* nccl_tune -- see nccl_tune.h. Constants and formulas are tuning.cc's (NCCL 2.30.7), in its units:
 * latencies in µs, bandwidths in GB/s (1e9 bytes/s), time = latency + bytes / (1000 * bandwidth). */
#include "nccl_tune.h"

#include <math.h>
#include <string.h>

enum { HW_NVLINK, HW_NET };
enum { CC_VOLTA, CC_AMPERE, CC_HOPPER, CC_BLACKWELL };

/* ncclTunerConstantsDefaults, rows Tree, Ring, NVLS; columns LL, LL128, Simple */
static const double BASE_LAT[NCCL_TUNE_N_ALGOS][NCCL_TUNE_N_PROTOS] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}};
static const double HW_LAT[2][NCCL_TUNE_N_ALGOS][NCCL_TUNE_N_PROTOS] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}}, /* NVLINK */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}},  /* NET */
};
static const double LL_MAX_BWS[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double PER_CH_RING_LL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
static const double PER_CH_TREE_LL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double PER_CH_TREE[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double NVLS_EFFICIENCY[4] = {0, 0, 0.85, 0.74};
/* treeCorrectionFactor: powers of two from 64 B, per protocol */
static const double TREE_CORRECTION[NCCL_TUNE_N_PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

static const char *const ALGO_NAMES[NCCL_TUNE_N_ALGOS] = {"tree", "ring", "nvls"};
static const char *const PROTO_NAMES[NCCL_TUNE_N_PROTOS] = {"LL", "LL128", "Simple"};

const char *nccl_tune_algo_name(nccl_tune_algo a) { return ALGO_NAMES[a]; }
const char *nccl_tune_proto_name(nccl_tune_proto p) { return PROTO_NAMES[p]; }

int nccl_tune_compcap(const char *name)
{
  if (g_str_has_prefix(name, "h100") || g_str_has_prefix(name, "h200")) return 90;
  if (g_str_has_prefix(name, "b") || g_str_has_prefix(name, "gb")) return 100;
  return 80;
}

static int log2i(double n) { return n >= 1 ? (int)floor(log2(n)) : -1; }

static int cc_index(int compcap)
{
  return compcap >= 100 ? CC_BLACKWELL : compcap >= 90 ? CC_HOPPER : compcap >= 80 ? CC_AMPERE : CC_VOLTA;
}

double nccl_tune_nvls_efficiency(int compcap) { return NVLS_EFFICIENCY[cc_index(compcap)]; }

/* The DGX node's CPU: AMD on DGX A100, Intel on DGX H100/H200/B200 */
static gboolean cpu_amd(const nccl_tune_comm *cm) { return cc_index(cm->compcap) == CC_AMPERE; }

/* Which (collective, algorithm) NCCL considers here (tuning.cc's skips and ncclTopoTuneModel's disables). */
static gboolean considered(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p)
{
  if (c == COLL_ALL_TO_ALL) return a == NCCL_TUNE_RING; /* not tuned: grouped sends */
  if (a == NCCL_TUNE_NVLS) /* Simple only; multi-node NVLS needs CollNet (disabled); RS/AG NVLS not simulated */
    return p == NCCL_TUNE_SIMPLE && cm->nvls && cm->nnodes == 1 && c == COLL_ALL_REDUCE &&
           NVLS_EFFICIENCY[cc_index(cm->compcap)] > 0;
  if (a == NCCL_TUNE_TREE) return c == COLL_ALL_REDUCE;
  return TRUE;
}

/* comm->bandwidths[c][a][p] (GB/s, algorithm bandwidth) */
static double bandwidth(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p)
{
  int n = cm->nranks, nodes = cm->nnodes, cci = cc_index(cm->compcap), ch = NCCL_TUNE_CHANNELS;
  int index2 = nodes <= 2 ? nodes - 1 : 2, index1 = nodes == 1 ? cci : cpu_amd(cm) ? 1 : 0;
  double ll_max = LL_MAX_BWS[index1][index2], ppn = (double)n / nodes;
  int nsteps = c == COLL_ALL_REDUCE ? 2 * (n - 1) : c == COLL_ALL_TO_ALL ? n : n - 1;
  double graph = (nodes == 1 ? cm->nvlink_bytes_per_s : MIN(cm->nvlink_bytes_per_s, cm->node_net_bytes_per_s)) / 1e9;
  double bw = graph / ch; /* per channel: bwIntra = bwInter */
  if (a == NCCL_TUNE_NVLS) {
    double intra = bw * NVLS_EFFICIENCY[cci] * (ch - 1) / ch;
    intra *= c == COLL_ALL_REDUCE ? 2.0 : (ppn - 1) / ppn;
    bw = MIN(intra, bw);
  }
  double bus = ch * bw;
  if (a == NCCL_TUNE_RING && p == NCCL_TUNE_LL) bus = MIN(ll_max, bus * .5);
  if (a == NCCL_TUNE_RING && p == NCCL_TUNE_LL128) bus = MIN(bus * 0.92, ch * PER_CH_RING_LL128[cci][index2]);
  if (a == NCCL_TUNE_TREE && c == COLL_ALL_REDUCE) bus = MIN(bus * .92, ch * PER_CH_TREE[cci][index2]);
  if (a == NCCL_TUNE_TREE && p == NCCL_TUNE_LL) bus = MIN(bus * 1.0 / 3.8, ll_max);
  if (a == NCCL_TUNE_TREE && p == NCCL_TUNE_LL128)
    bus = MIN(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * PER_CH_TREE_LL128[cci][index2]);
  if (!(a != NCCL_TUNE_RING && (c == COLL_ALL_GATHER || c == COLL_REDUCE_SCATTER)))
    bus *= a == NCCL_TUNE_RING || a == NCCL_TUNE_NVLS ? (double)n / nsteps : .5;
  return bus;
}

/* comm->latencies[c][a][p] (µs) */
static double latency(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p)
{
  int n = cm->nranks, nodes = cm->nnodes;
  int nsteps = c == COLL_ALL_REDUCE ? 2 * (n - 1) : c == COLL_ALL_TO_ALL ? n : n - 1;
  double lat = BASE_LAT[a][p], intra = HW_LAT[HW_NVLINK][a][p];
  double inter = n == nodes ? HW_LAT[HW_NET][NCCL_TUNE_TREE][p] : HW_LAT[HW_NET][a][p]; /* ppn 1: tree's */
  if (a == NCCL_TUNE_RING) {
    double overhead = nodes > 1 ? (cpu_amd(cm) ? 2.0 : 1.0) * (p == NCCL_TUNE_SIMPLE ? 3 : 1) : 0;
    intra = MAX(intra, overhead);
    int n_inter = nodes == 1 ? 0 : c == COLL_ALL_REDUCE ? 2 * (nodes - 1) : nodes - 1;
    return lat + (nsteps - n_inter) * intra + n_inter * inter;
  }
  if (a == NCCL_TUNE_TREE) return lat + (c == COLL_ALL_REDUCE ? 2 * ((n / nodes - 1) * intra + log2i(nodes) * inter) : 0);
  return intra + (nodes > 1 ? inter : 0); /* NVLS */
}

/* The latency of (a, p) as ncclTopoGetAlgoTime charges it: the ring's Simple all-reduce across nodes carries the
 * "plateau" factor (1.4 from Ampere on, 1.9 before) once each channel's share holds 64 elements or more. */
static double charged_latency(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p, double bytes)
{
  double lat = latency(cm, c, a, p);
  if (a == NCCL_TUNE_RING && p == NCCL_TUNE_SIMPLE && cm->nnodes > 1 && c == COLL_ALL_REDUCE &&
      floor(bytes / ((double)NCCL_TUNE_CHANNELS * cm->nranks)) >= 64)
    lat *= cm->compcap < 80 ? 1.9 : 1.4; /* plateau effect of ring */
  return lat;
}

double nccl_tune_time_us(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, nccl_tune_proto p, double bytes)
{
  if (cm->nranks < 2 || !considered(cm, c, a, p)) return -1;
  double bw = bandwidth(cm, c, a, p);
  if (bw <= 0) return -1;
  int log_size = log2i(floor(bytes / 64));
  if (a == NCCL_TUNE_TREE && c == COLL_ALL_REDUCE && log_size >= 0 && log_size < 23) bw *= TREE_CORRECTION[p][log_size];
  return charged_latency(cm, c, a, p, bytes) + bytes / (1000 * bw);
}

double nccl_tune_latency_us(const nccl_tune_comm *cm, graph_coll c, nccl_tune_algo a, double bytes,
                            nccl_tune_proto *proto)
{
  double min_t = INFINITY, lat = -1;
  for (int p = 0; p < NCCL_TUNE_N_PROTOS; p++) {
    double t = nccl_tune_time_us(cm, c, a, (nccl_tune_proto)p, bytes);
    if (t >= 0 && t < min_t) {
      min_t = t;
      lat = charged_latency(cm, c, a, (nccl_tune_proto)p, bytes);
      if (proto) *proto = (nccl_tune_proto)p;
    }
  }
  return lat;
}

nccl_tune_algo nccl_tune_choose(const nccl_tune_comm *cm, graph_coll c, double bytes, nccl_tune_proto *proto)
{
  nccl_tune_algo best = NCCL_TUNE_RING;
  nccl_tune_proto best_p = NCCL_TUNE_SIMPLE;
  double min_t = INFINITY;
  for (int a = 0; a < NCCL_TUNE_N_ALGOS; a++) /* NCCL's order: the first of equal times wins */
    for (int p = 0; p < NCCL_TUNE_N_PROTOS; p++) {
      double t = nccl_tune_time_us(cm, c, (nccl_tune_algo)a, (nccl_tune_proto)p, bytes);
      if (t >= 0 && t < min_t) {
        min_t = t;
        best = (nccl_tune_algo)a;
        best_p = (nccl_tune_proto)p;
      }
    }
  if (proto) *proto = best_p;
  return best;
}
