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
  double peak_flops;          /* dense bf16 tensor-core FLOP/s */
  double hbm_bytes_per_s;     /* HBM bandwidth, datasheet */
  double memory_gib;          /* capacity */
  int gpus_per_node, nics_per_node;
  double nvlink_bytes_per_s;  /* per GPU per direction */
  double nvlink_latency_s;
  double ib_bytes_per_s;      /* per NIC per direction */
  double ib_latency_s;
  /* cost-model constants */
  double gemm_efficiency;      /* fraction of peak a large GEMM reaches */
  double hbm_efficiency;       /* fraction of HBM bandwidth a streaming kernel reaches */
  double attention_efficiency; /* fraction of peak FlashAttention-2 reaches on its (causal) work */
  double launch_overhead_s;    /* per kernel launch */
  double nccl_bw_efficiency_nvlink, nccl_bw_efficiency_ib; /* achieved / link bandwidth */
  double nccl_step_latency_s;  /* per ring step, on top of link latency */
  /* memory overheads */
  double cuda_context_gib, nccl_buffers_gib, fragmentation;
} gpu_profile;

gboolean profile_load_file(const char *path, gpu_profile *out, GError **err);
gboolean profile_load_named(const char *name, gpu_profile *out, GError **err);
/* Save (used by calibrate). */
gboolean profile_save(const gpu_profile *p, const char *path, GError **err);

#endif
