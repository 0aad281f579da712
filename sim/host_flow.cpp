/* host_flow -- see host_flow.h. */
#include "host_flow.h"

#include <simgrid/s4u.hpp>

extern "C" sg_comm_t net_sendto_async(sg_host_t from, sg_host_t to, double bytes)
{
  simgrid::s4u::CommPtr c = simgrid::s4u::Comm::sendto_async(from, to, bytes);
  intrusive_ptr_add_ref(c.get()); /* the C handle holds a reference, released when waited on */
  return c.get();
}
