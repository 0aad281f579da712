/* plat_file_xml -- see plat_file_xml.h. */
#include "plat_file_xml.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlreader.h>

#include "common/lsim_error.h"

/* SimGrid's units (xbt/parse_units.cpp): a base unit after a decimal or binary prefix, or none. */
typedef struct unit {
  const char *name;
  double scale;
} unit;

static const unit PREFIXES[] = {{"", 1},          {"k", 1e3},     {"K", 1e3},     {"M", 1e6},      {"G", 1e9},
                                {"T", 1e12},      {"P", 1e15},    {"E", 1e18},    {"Z", 1e21},     {"Y", 1e24},
                                {"Ki", 1024.0},   {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                                {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0}};
static const unit TIME_PREFIXES[] = {{"", 1}, {"m", 1e-3}, {"u", 1e-6}, {"n", 1e-9}, {"p", 1e-12}, {"f", 1e-15}};
static const unit TIME_UNITS[] = {{"w", 604800}, {"d", 86400}, {"h", 3600}, {"m", 60}};

/* The scale of suffix `u` (after the number) for kind, or 0 when SimGrid has no such unit. */
static double unit_scale(const char *u, char kind)
{
  if (!*u) return 1; /* a bare number: SimGrid takes it in its base unit */
  if (kind == 'l') {
    for (size_t i = 0; i < G_N_ELEMENTS(TIME_UNITS); i++)
      if (!strcmp(u, TIME_UNITS[i].name)) return TIME_UNITS[i].scale;
    size_t n = strlen(u);
    if (u[n - 1] != 's') return 0;
    for (size_t i = 0; i < G_N_ELEMENTS(TIME_PREFIXES); i++)
      if (strlen(TIME_PREFIXES[i].name) == n - 1 && !strncmp(u, TIME_PREFIXES[i].name, n - 1)) return TIME_PREFIXES[i].scale;
    return 0;
  }
  const char *const *bases = kind == 's' ? (const char *const[]){"flops", "f", NULL} : (const char *const[]){"Bps", "bps", NULL};
  for (int b = 0; bases[b]; b++) {
    size_t n = strlen(u), bn = strlen(bases[b]);
    if (n < bn || strcmp(u + n - bn, bases[b])) continue;
    for (size_t i = 0; i < G_N_ELEMENTS(PREFIXES); i++)
      if (strlen(PREFIXES[i].name) == n - bn && !strncmp(u, PREFIXES[i].name, n - bn))
        return PREFIXES[i].scale * (!strcmp(bases[b], "bps") ? 1.0 / 8 : 1);
  }
  return 0;
}

gboolean plat_file_xml_quantity(const char *s, char kind, double *out)
{
  if (!s || !*s || g_ascii_isspace(*s)) return FALSE;
  char *end;
  errno = 0;
  double v = g_ascii_strtod(s, &end);
  if (end == s) return FALSE;
  double k = unit_scale(end, kind);
  if (k == 0) return FALSE;
  *out = v * k;
  return TRUE;
}

/* ---- the reading ---- */

typedef struct reader_state {
  char first_error[256]; /* libxml2's first complaint */
  int error_line;
} reader_state;

static void on_error(void *ctx, xmlErrorPtr e)
{
  reader_state *st = ctx;
  if (st->first_error[0] || !e || !e->message) return;
  g_strlcpy(st->first_error, e->message, sizeof st->first_error);
  g_strchomp(st->first_error);
  for (char *p = st->first_error; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  st->error_line = e->line;
}

/* The attributes that carry a quantity, per element: kind 's', 'b' or 'l'; comma-separated lists
 * (a host's power states, a wifi link's rates) are checked value by value. */
typedef struct quantity_attr {
  const char *element, *attr;
  char kind;
} quantity_attr;

static const quantity_attr QUANTITIES[] = {
    {"host", "speed", 's'},        {"link", "bandwidth", 'b'},     {"link", "latency", 'l'},
    {"backbone", "bandwidth", 'b'}, {"backbone", "latency", 'l'},   {"cluster", "speed", 's'},
    {"cluster", "bw", 'b'},        {"cluster", "lat", 'l'},        {"cluster", "bb_bw", 'b'},
    {"cluster", "bb_lat", 'l'},    {"cluster", "loopback_bw", 'b'}, {"cluster", "loopback_lat", 'l'},
    {"cluster", "limiter_link", 'b'}, {"cabinet", "speed", 's'},    {"cabinet", "bw", 'b'},
    {"cabinet", "lat", 'l'},       {"peer", "speed", 's'},         {"peer", "bw_in", 'b'},
    {"peer", "bw_out", 'b'},       {"peer", "lat", 'l'},           {"disk", "read_bw", 'b'},
    {"disk", "write_bw", 'b'},
};

static const char *kind_allowed(char kind)
{
  return kind == 's'   ? "a finite speed above 0, such as 1e12, 312Tf or 1.5Gf"
         : kind == 'b' ? "a finite bandwidth above 0, such as 25GBps or 100Gbps"
                       : "a finite latency from 0 to 3600 s, such as 0, 3us or 1.5ms";
}

/* Hosts a cluster's or cabinet's radical names ("0-99", "0-3,8,10-11"); -1 when it is not one. */
static gint64 radical_hosts(const char *r)
{
  gint64 n = 0;
  g_auto(GStrv) parts = g_strsplit(r, ",", -1);
  for (int i = 0; parts[i]; i++) {
    char *end;
    errno = 0;
    gint64 a = g_ascii_strtoll(parts[i], &end, 10), b = a;
    if (end == parts[i] || errno) return -1;
    if (*end == '-') {
      const char *q = end + 1;
      b = g_ascii_strtoll(q, &end, 10);
      if (end == q || errno) return -1;
    }
    if (*end || a < 0 || b < a || b - a >= PLAT_XML_MAX_HOSTS) return -1;
    n += b - a + 1;
    if (n > PLAT_XML_MAX_HOSTS) return n;
  }
  return n;
}

/* Bytes SimGrid takes per element, measured on SimGrid 3.32 (docs/hardening.md, "Platform files"):
 * its engine, a host (with its CPU model and netpoint), a link, a route, any other element, and a
 * cell of a full zone's routing table. */
#define PLAT_BYTES_BASE (32.0 * 1024 * 1024)
#define PLAT_BYTES_HOST 4096.0
#define PLAT_BYTES_LINK 2048.0
#define PLAT_BYTES_ROUTE 512.0
#define PLAT_BYTES_ELEMENT 256.0
#define PLAT_BYTES_FULL_CELL 8.0

typedef struct zone_frame {
  gboolean full;
  double points; /* its hosts, routers and zones */
} zone_frame;

G_GNUC_PRINTF(4, 5)
static gboolean refuse(GError **err, const char *path, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "--platform-file: %s: line %d: %s", path, line, what);
  return FALSE;
}

static void close_zone(GArray *zones, plat_xml_census *c)
{
  zone_frame z = g_array_index(zones, zone_frame, zones->len - 1);
  if (z.full) c->full_zone_pairs += z.points * z.points;
  g_array_set_size(zones, zones->len - 1);
}

static gboolean is_zone(const char *name) { return !strcmp(name, "zone") || !strcmp(name, "AS"); }

/* One element's start: counted, its quantities checked. */
static gboolean element(xmlTextReaderPtr rd, const char *path, GArray *zones, plat_xml_census *c, GError **err)
{
  int line = xmlTextReaderGetParserLineNumber(rd);
  const char *name = (const char *)xmlTextReaderConstName(rd);
  int depth = xmlTextReaderDepth(rd) + 1;
  if (depth > c->depth) c->depth = depth;
  if (depth > PLAT_XML_MAX_DEPTH)
    return refuse(err, path, line, "<%s> nested %d deep (allowed: elements nested at most %d deep)", name, depth,
                  PLAT_XML_MAX_DEPTH);
  if (++c->elements > PLAT_XML_MAX_ELEMENTS)
    return refuse(err, path, line, "more than %d elements (allowed: at most %d)", PLAT_XML_MAX_ELEMENTS,
                  PLAT_XML_MAX_ELEMENTS);
  for (size_t i = 0; i < G_N_ELEMENTS(QUANTITIES); i++) {
    if (strcmp(name, QUANTITIES[i].element)) continue;
    g_autofree char *v = (char *)xmlTextReaderGetAttribute(rd, (const xmlChar *)QUANTITIES[i].attr);
    if (!v) continue;
    char kind = QUANTITIES[i].kind;
    g_auto(GStrv) values = g_strsplit(v, ",", -1);
    for (int k = 0; values[k] || k == 0; k++) {
      double q;
      const char *one = values[k] ? values[k] : "";
      if (!plat_file_xml_quantity(one, kind, &q) || !isfinite(q) || (kind == 'l' ? q < 0 || q > PLAT_XML_MAX_LATENCY_S : q <= 0)) {
        g_autofree char *shown = g_strescape(v, NULL);
        return refuse(err, path, line, "<%s %s=\"%.60s\"> (allowed: %s)", name, QUANTITIES[i].attr, shown,
                      kind_allowed(kind));
      }
      if (!values[k]) break;
    }
  }
  gint64 hosts = 0;
  zone_frame *parent = zones->len ? &g_array_index(zones, zone_frame, zones->len - 1) : NULL;
  if (!strcmp(name, "host") || !strcmp(name, "peer")) hosts = 1;
  else if (!strcmp(name, "cluster") || !strcmp(name, "cabinet")) {
    g_autofree char *r = (char *)xmlTextReaderGetAttribute(rd, (const xmlChar *)"radical");
    hosts = r ? radical_hosts(r) : 0;
    if (hosts < 0) {
      g_autofree char *shown = g_strescape(r, NULL);
      return refuse(err, path, line, "<%s radical=\"%.60s\"> (allowed: ranges such as 0-7 or 0-3,8-11, at most %d hosts)",
                    name, shown, PLAT_XML_MAX_HOSTS);
    }
    c->links += 2 * hosts; /* a private link each way per host */
  } else if (!strcmp(name, "link") || !strcmp(name, "backbone")) c->links++;
  else if (strstr(name, "oute")) c->routes++; /* route, zoneRoute, ASroute, bypassRoute, ... */
  c->hosts += hosts;
  if (c->hosts > PLAT_XML_MAX_HOSTS)
    return refuse(err, path, line, "more than %d hosts (allowed: at most %d)", PLAT_XML_MAX_HOSTS, PLAT_XML_MAX_HOSTS);
  if (parent && (hosts || is_zone(name) || !strcmp(name, "router"))) parent->points += 1; /* a cluster: one zone */
  if (is_zone(name) && !xmlTextReaderIsEmptyElement(rd)) {
    g_autofree char *routing = (char *)xmlTextReaderGetAttribute(rd, (const xmlChar *)"routing");
    zone_frame z = {.full = routing && !strcmp(routing, "Full")};
    g_array_append_val(zones, z);
  }
  return TRUE;
}

gboolean plat_file_xml_validate(const char *path, const char *text, gsize len, double budget_bytes,
                                plat_xml_census *out, GError **err)
{
  plat_xml_census c = {0};
  /* an entity declared in the file (the billion laughs): refused before libxml2 expands anything */
  const char *ent = g_strstr_len(text, (gssize)len, "<!ENTITY");
  if (ent) {
    int line = 1;
    for (const char *p = text; p < ent; p++) line += *p == '\n';
    return refuse(err, path, line, "declares an XML entity (allowed: a platform file without entity declarations)");
  }
  if (len > G_MAXINT) return refuse(err, path, 1, "too large (allowed: at most %d bytes)", G_MAXINT);
  xmlTextReaderPtr rd = xmlReaderForMemory(text, (int)len, path, NULL, XML_PARSE_NONET | XML_PARSE_NOWARNING);
  if (!rd) return refuse(err, path, 1, "cannot be read as XML (allowed: a SimGrid platform XML file)");
  reader_state st = {.first_error = {0}, .error_line = 0};
  xmlTextReaderSetStructuredErrorHandler(rd, on_error, &st);
  g_autoptr(GArray) zones = g_array_new(FALSE, FALSE, sizeof(zone_frame));
  gboolean ok = TRUE, root_seen = FALSE;
  int r;
  while (ok && (r = xmlTextReaderRead(rd)) == 1) {
    int type = xmlTextReaderNodeType(rd);
    if (type == XML_READER_TYPE_ELEMENT) {
      const char *name = (const char *)xmlTextReaderConstName(rd);
      if (!root_seen && strcmp(name, "platform")) {
        ok = refuse(err, path, xmlTextReaderGetParserLineNumber(rd), "the root element is <%.40s> (allowed: <platform>)", name);
        break;
      }
      root_seen = TRUE;
      ok = element(rd, path, zones, &c, err);
    } else if (type == XML_READER_TYPE_END_ELEMENT && is_zone((const char *)xmlTextReaderConstName(rd)) && zones->len)
      close_zone(zones, &c);
    else if (type == XML_READER_TYPE_ENTITY_REFERENCE) {
      ok = refuse(err, path, xmlTextReaderGetParserLineNumber(rd), "an entity reference (allowed: a platform file without entities)");
    }
  }
  if (ok && r != 0) {
    if (st.first_error[0]) ok = refuse(err, path, st.error_line > 0 ? st.error_line : 1, "not well-formed XML: %s (allowed: a SimGrid platform XML file)", st.first_error);
    else ok = refuse(err, path, xmlTextReaderGetParserLineNumber(rd), "not well-formed XML (allowed: a SimGrid platform XML file)");
  }
  if (ok && !root_seen) ok = refuse(err, path, 1, "no <platform> element (allowed: a SimGrid platform XML file)");
  xmlFreeTextReader(rd);
  if (!ok) return FALSE;
  while (zones->len) close_zone(zones, &c);
  c.bytes = PLAT_BYTES_BASE + c.hosts * PLAT_BYTES_HOST + c.links * PLAT_BYTES_LINK + c.routes * PLAT_BYTES_ROUTE +
            c.elements * PLAT_BYTES_ELEMENT + c.full_zone_pairs * PLAT_BYTES_FULL_CELL;
  if (c.bytes > budget_bytes) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "--platform-file: %s: SimGrid would take about %.1f GiB for it (%" G_GINT64_FORMAT " hosts, %" G_GINT64_FORMAT
                " links, %" G_GINT64_FORMAT " routes, %.3g cells of full-routing tables) (allowed: at most %.0f GiB: fewer "
                "hosts in a routing=\"Full\" zone, or nested zones)",
                path, c.bytes / (1024.0 * 1024 * 1024), c.hosts, c.links, c.routes, c.full_zone_pairs,
                budget_bytes / (1024.0 * 1024 * 1024));
    return FALSE;
  }
  if (out) *out = c;
  return TRUE;
}
