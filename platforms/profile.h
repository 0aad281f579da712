/* profile -- a GPU type and its node: peak rates, memory, interconnect and
 * the few efficiency constants of the cost model, loaded from one JSON file
 * (platforms/profiles/NAME.json; docs/profile.md documents every field).
 *
 * Owns: struct gpu_profile, loading and overriding it.
 * May not touch: task graphs' meaning, SimGrid.
 */
#ifndef PROFILE_H
#define PROFILE_H

#include <glib.h>

typedef struct gpu_profile {
  char name[64];
  char comment[512];          /* free text, kept on save */
  double peak_flops;          /* dense bf16 tensor-core FLOP/s */
  double hbm_bytes_per_s;     /* HBM bandwidth, datasheet */
  double memory_gib;          /* capacity */
  int gpus_per_node, nics_per_node;
  double nvlink_bytes_per_s;  /* per GPU per direction */
  double nvlink_latency_s;
  double ib_bytes_per_s;      /* per NIC per direction */
  double ib_latency_s;
  /* cost-model constants (platforms/kernel_cost.h, docs/profile.md) */
  double sm_count;             /* streaming multiprocessors (wave quantization) */
  double gemm_tile_m, gemm_tile_n; /* output tile of the large cuBLAS kernels */
  double gemm_efficiency;      /* fraction of peak a large, well-quantized GEMM reaches */
  double gemm_k_half;          /* reduction length at which a GEMM loses half its efficiency */
  double hbm_efficiency;       /* fraction of HBM bandwidth a streaming kernel reaches */
  double flash1_efficiency, flash2_efficiency; /* FlashAttention fraction of peak on its causal work, s, d -> inf */
  double attn_seq_half, attn_head_dim_half;   /* sequence length, head dim at which it is halved */
  double launch_overhead_s;    /* GPU-side gap per kernel launch */
  double nccl_bw_efficiency_nvlink, nccl_bw_efficiency_ib; /* achieved / link bandwidth */
  double nccl_step_latency_s;  /* per ring step, on top of link latency */
  /* memory overheads */
  double cuda_context_gib, nccl_buffers_gib, fragmentation;
} gpu_profile;

gboolean profile_load_file(const char *path, gpu_profile *out, GError **err);
gboolean profile_load_named(const char *name, gpu_profile *out, GError **err);
/* The file a --profile value names: itself if it looks like a path (a '/' or ".json"), else the
 * shipped profile of that name (which may not exist). Caller frees. */
char *profile_path(const char *name);
/* Save (used by calibrate). */
gboolean profile_save(const gpu_profile *p, const char *path, GError **err);

#endif
