/* collective -- see collective.h. */
#include "collective.h"

#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

static int payload; /* SimGrid aborts on NULL payloads; the data itself is never read */

int coll_steps(graph_coll c, int n)
{
  if (n < 2) return 0;
  return c == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
}

static sg_mailbox_t target(const coll_member *m) { return *m->active ? m->inbox : m->sink; }

double coll_run(graph_coll c, const coll_member *members, int n, int me, double bytes, double step_overhead_s)
{
  int steps = coll_steps(c, n);
  if (steps == 0) return 0;
  const coll_member *next = &members[(me + 1) % n], *prev = &members[(me + n - 1) % n];
  double chunk = bytes / n;
  int others_active = 0;
  for (int i = 0; i < n; i++) others_active += (i != me) && *members[i].active;
  if (!others_active) {
    sg_mailbox_put(target(next), &payload, (long)(chunk * steps));
    double hop = sg_host_get_route_latency(members[me].host, next->host);
    return (steps - 1) * hop + steps * step_overhead_s;
  }
  for (int s = 0; s < steps; s++) {
    sg_comm_t out = sg_mailbox_put_async(target(next), &payload, (long)chunk);
    if (*prev->active) sg_mailbox_get(members[me].inbox);
    sg_comm_wait(out);
  }
  return steps * step_overhead_s;
}
