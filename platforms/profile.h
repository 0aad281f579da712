/* profile -- a GPU type and its node: the datasheet and physics figures (peak rates,
 * memory, node shape, interconnect, SMs), loaded from one JSON file
 * (platforms/profiles/NAME.json; docs/profile.md documents every field). How fast a
 * training code runs on it is the software stack's (stack.h), which a simulation
 * carries beside the machine's figures in `stack`.
 *
 * Owns: struct gpu_profile, loading it. May not touch: task graphs' meaning, SimGrid.
 */
#ifndef PROFILE_H
#define PROFILE_H

#include <glib.h>

#include "stack.h"

typedef struct gpu_profile {
  char name[64];
  char comment[512];          /* free text */
  char default_stack[64];     /* the stack run when none is named (--stack): the code usually trained on this GPU;
                               * the key's absence: STACK_DEFAULT (the study's) */
  double peak_flops;          /* dense bf16 tensor-core FLOP/s */
  double peak_fp8_flops;      /* dense FP8 tensor-core FLOP/s; 0: the GPU has no FP8 tensor cores (--precision bf16 only) */
  /* The fraction of the stack's GEMM efficiency (bf16; FP8) this GPU reaches, against the H100 the stacks
   * were fitted on: what a large GEMM sustains of the datasheet peak here (tensor-core clocks under the
   * board's power limit, the libraries' kernels for it) over what it does on the H100. Optional keys
   * gemm_efficiency_scale, fp8_gemm_efficiency_scale, (0, 1.5], default 1; fitted per profile by
   * bench/calibrate-blackwell.sh (docs/blackwell.md). */
  double gemm_efficiency_scale, fp8_gemm_efficiency_scale;
  /* The special function units' exponential throughput (MUFU.EX2 results per second: NVIDIA's "attention
   * acceleration, SFU EX2" figure, 5e12 on B200/GB200, 10.7e12 on Blackwell Ultra), against which a fused
   * attention's softmax runs beside its tensor-core work (platforms/kernel_cost.c). Optional key exp_per_s; 0
   * when absent: the attention as the stack's fit GPU runs it (docs/blackwell.md). */
  double exp_per_s;
  double hbm_bytes_per_s;     /* HBM bandwidth, datasheet */
  double memory_gib;          /* capacity */
  /* the host ("node" in the file's keys): the GPUs of one server or compute tray, which share its NICs and
   * CPUs, are one rail position each and one power unit (node_power_w) */
  int gpus_per_node, nics_per_node;
  /* the NVLink domain: GPUs one NVSwitch fabric joins, whole hosts of consecutive GPUs (optional key;
   * the file's gpus_per_node when absent: an 8-GPU HGX board). 72 on a GB200 NVL72 rack of 18 hosts of 4 */
  int gpus_per_domain;
  double nvlink_bytes_per_s;  /* per GPU per direction */
  double nvlink_latency_s;
  double ib_bytes_per_s;      /* per NIC per direction */
  double ib_latency_s;
  double sm_count;            /* streaming multiprocessors (wave quantization) */
  /* the fabric above the NICs: nodes under one leaf group (0: every node under one non-blocking fabric)
   * and the ratio of the group's NIC bandwidth to its uplink bandwidth (1: non-blocking) */
  double leaf_nodes, oversubscription;
  int fabric;                 /* plat_fabric (fabric.h): fat-tree, or rail leaves (rail, rail-pxn) */
  gboolean mxfp8;             /* MX block-scaled FP8 tensor cores (Blackwell: --precision mxfp8); optional, default false */
  gboolean nvls;              /* NVLink SHARP in the NVSwitch (gen 3+: Hopper, Blackwell); optional, default false */
  /* the precisions (bit 1u << precision, workloads/precision.h) whose constants were fitted to measured runs on
   * this GPU: "calibrated" true (every precision), false (none: datasheet figures only) or a list of names */
  guint calibrated_precisions;
  /* the attention kernels (bit 1u << layout_attn, workloads/layout.h) of a sweep's default space on this machine
   * ("sweep_kernels", optional: 0 when absent, the stack's default then, stack_sweep_kernels; the A100 names every
   * kernel, the six the study swept) */
  guint sweep_kernels;
  /* power per GPU (W) by what it does (analysis/energy.h), and per node beside the GPUs */
  double power_idle_w, power_compute_w, power_memory_w, power_comm_w;
  double node_power_w;        /* CPUs, NICs, NVSwitches, fans, power supplies: a stated constant */
  stack_profile stack;        /* the software stack run on it (not part of the profile file) */
} gpu_profile;

/* The NVLink domain in GPUs: gpus_per_domain where it is whole hosts, else one host (a profile whose
 * gpus_per_node a what-if or a test changed). */
int profile_gpus_per_domain(const gpu_profile *p);
/* Whether a fit on measured runs on this GPU covered precision `prec` (precision.h): else its figures are the
 * datasheet's, or transferred from another precision or GPU (docs/trust.md, "Uncalibrated profiles"). */
gboolean profile_calibrated_for(const gpu_profile *p, int prec);
/* Load the machine's figures; out->stack is left as it is (stack_load_* sets it). */
gboolean profile_load_file(const char *path, gpu_profile *out, GError **err);
gboolean profile_load_named(const char *name, gpu_profile *out, GError **err);
/* The file a --profile value names: itself if it looks like a path (a '/' or ".json"), else the
 * shipped profile of that name (which may not exist). Caller frees. */
char *profile_path(const char *name);
/* The profile and the stack a simulation runs on: profile_load_named, then stack_load_named into out->stack;
 * stack NULL: the profile's default_stack. */
gboolean profile_load_with_stack(const char *profile, const char *stack, gpu_profile *out, GError **err);

#endif
