/* plat_file_xml -- a user's SimGrid platform file (--platform-file) read by libxml2, as a stream,
 * before SimGrid ever parses it: SimGrid's own parser (flex, in surf_parse_lex) corrupts its heap on
 * deeply nested zones, and its engine aborts on a host of speed 0 or a link of bandwidth 0, so
 * nothing it would choke on may reach it (docs/hardening.md, "Platform files").
 *
 * Checked: well-formed XML without a DTD of its own (no entity may be declared), nesting at most
 * PLAT_XML_MAX_DEPTH deep, at most PLAT_XML_MAX_ELEMENTS elements and PLAT_XML_MAX_HOSTS hosts (a
 * cluster's radical counted host by host), and every speed, bandwidth and latency a finite number
 * with one of SimGrid's units: speeds and bandwidths above 0, latencies from 0 to
 * PLAT_XML_MAX_LATENCY_S. The memory SimGrid will take for the platform is estimated from the
 * counts (a full routing zone holds a table of n^2 routes) and counted against the budget.
 *
 * Owns: the reading of the file before SimGrid, its bounds, the platform's memory estimate.
 * May not touch: what SimGrid does with the file (plat_file_check loads it in a child).
 */
#ifndef PLAT_FILE_XML_H
#define PLAT_FILE_XML_H

#include <glib.h>

#define PLAT_XML_MAX_DEPTH 32
#define PLAT_XML_MAX_ELEMENTS 1000000
#define PLAT_XML_MAX_HOSTS 65536
#define PLAT_XML_MAX_LATENCY_S 3600.0

/* What the file holds, counted as it is read. */
typedef struct plat_xml_census {
  gint64 elements, hosts, links, routes, depth;
  double full_zone_pairs; /* the sum over routing="Full" zones of (their hosts, routers and zones)^2 */
  double bytes;           /* SimGrid's estimated memory for the platform */
} plat_xml_census;

/* Validate the platform file text (len bytes, read from path) before SimGrid sees it: FALSE with err
 * ("--platform-file: PATH: line N: ... (allowed: ...)", one line) on the first defect; c filled on
 * success (may be NULL). budget_bytes: the most memory SimGrid may take for the platform. */
gboolean plat_file_xml_validate(const char *path, const char *text, gsize len, double budget_bytes,
                                plat_xml_census *c, GError **err);
/* A SimGrid quantity with its unit ("10GBps", "3us", "1e12", "1Gf"): kind 's' speed (flop/s), 'b'
 * bandwidth (bytes/s), 'l' latency (s). FALSE when it is not a number with one of SimGrid's units. */
gboolean plat_file_xml_quantity(const char *s, char kind, double *out);

#endif
