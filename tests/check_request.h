/* check_request -- the setup the simulation tests share (test_tp_async, test_overlaps, test_zero): a request on
 * a shipped profile and stack, the stack's generator code, links made free, the layout validated. Each test keeps
 * its own layout, its cases and its expected values; only the plumbing is here. */
#ifndef CHECK_REQUEST_H
#define CHECK_REQUEST_H

#include <check.h>

#include "analysis/simulate.h"
#include "platforms/stack.h"

/* Profile `profile` with stack `stack` into rq->prof, the memory capacity the GPU's (as the command line does). */
static inline void check_request_platform(sim_request *rq, const char *profile, const char *stack)
{
  GError *err = NULL;
  ck_assert_msg(profile_load_with_stack(profile, stack, &rq->prof, &err), "%s", err ? err->message : "");
  rq->capacity_gib = rq->prof.memory_gib;
}

/* The generator's code and partition method the stack's (stack_gen_code), as the command line resolves them. */
static inline void check_request_stack_generator(sim_request *rq)
{
  rq->gen.code = stack_gen_code(&rq->prof.stack);
  rq->gen.partition = rq->prof.stack.partition;
}

/* Communication free of latency and bandwidth: zero link and NCCL step latencies, 1e18 B/s links, no launch
 * overhead; what is left of a step is its kernels' math (the caller frees the host or HBM too where it needs). */
static inline void check_free_links(gpu_profile *p)
{
  p->nvlink_latency_s = p->ib_latency_s = p->stack.nccl_step_latency_s = 0;
  p->nvlink_bytes_per_s = p->ib_bytes_per_s = 1e18;
  p->stack.launch_overhead_s = 0;
}

/* layout_validate of rq's layout against its model, failing the test with its message. */
static inline void check_request_validate(sim_request *rq)
{
  GError *err = NULL;
  ck_assert_msg(layout_validate(&rq->l, &rq->m, &err), "%s", err ? err->message : "");
}

#endif
