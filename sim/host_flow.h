/* host_flow -- an asynchronous host-to-host transfer that no actor receives
 * (SimGrid 3.32 has Comm::sendto_async in C++ only): the flow of a ring hop
 * towards a passive member, whose identical hops need no simulation.
 *
 * Owns: the C entry to sendto_async. May not touch: what the bytes mean.
 */
#ifndef HOST_FLOW_H
#define HOST_FLOW_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Start `bytes` from `from` to `to`; the handle is waited on (and freed) by sg_comm_wait_all. */
sg_comm_t net_sendto_async(sg_host_t from, sg_host_t to, double bytes);

#ifdef __cplusplus
}
#endif

#endif
