/* paje -- see paje.h.
 *
 * Time order. pj_dump (pajeng 1.3.6) only requires time to be
 * non-decreasing per container and type (checked: it rejects a container's
 * state set before its last one, and accepts containers written one after
 * the other), but a Paje file is meant to be read start to end, and the
 * link variables below need the ranks' events in global order anyway. So
 * the ranks are merged: a binary heap holds every rank's next interval
 * (a tiled tl_cursor), keyed by its start in nanoseconds, the rank
 * breaking ties. Times are written as integer nanoseconds (9 decimals).
 *
 * Link utilisation (`links`). The replay records no per-link usage, and a
 * symmetric run does not simulate its mirrors' transfers at all, so every
 * transfer is derived from the timeline, as the --no-symmetry replay
 * (every rank active) performs it:
 * - a pipeline send from a to b moves the send event's bytes from a to b,
 *   the k-th send from a to b being b's k-th receive from a;
 * - a collective over a group of n members runs NCCL's rings
 *   (sim/collective.h: coll_channels, coll_ring_next): in each of its
 *   `channels` rings every member sends bytes / n * steps / channels to its
 *   successor (steps: 2(n-1) for an all-reduce, n-1 otherwise), the k-th
 *   collective of the group on one member matching the k-th on the others;
 * - a transfer a -> b crosses the links of topo_route (platforms/topology.h), the
 *   route SimGrid's platform has: nvl_<a> UP and nvl_<b> DOWN inside an NVLink
 *   domain, and between domains a's NIC UP, the fat-tree's leaf uplinks and core or
 *   the rail leaves' uplinks and spine, b's NIC DOWN;
 * - its bytes are spread evenly over its span: from the later of the two
 *   ends' interval starts (when the transfer can begin) to the end of the
 *   sender's interval. For a pipeline send that end is when the data has
 *   arrived (SimGrid's rendezvous). For a collective it also holds the ring's
 *   latency terms and the wait for the slowest member, so the rate shown is
 *   the transfer's average over its collective, somewhat below the link's
 *   rate, and the bytes are exact: a link's bandwidth_used integrates over
 *   the step to the bytes sent across it.
 * A link's value is the sum of the rates of the transfers crossing it,
 * written once per instant it changes, exactly 0 when none does.
 */
#include "paje.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/lsim_outfile.h"
#include "platforms/topology.h"
#include "sim/collective.h"

typedef long long ns_t;

static ns_t to_ns(double s) { return llround(s * 1e9); }

/* Type aliases. The container types, variable types and state type, as SimGrid names them. */
enum {
  T_ZONE = 1, T_HOST, T_LINK, T_ROUTER, T_CORE,        /* containers (T_CORE: a link under the root) */
  T_SPEED, T_CORES, T_BW, T_LAT, T_CORE_BW, T_CORE_LAT, /* variables set once */
  T_BW_USED, T_CORE_BW_USED,                           /* --paje-links */
  T_GPU,                                               /* the state */
  T_VALUE0                                             /* T_VALUE0 + category: its entity value */
};

enum { DIR_DOWN, DIR_UP };

/* A link direction's bandwidth_used. */
typedef struct link_use {
  int alias;
  double bytes_per_s, written; /* current value, last value written */
  int flows;                   /* transfers crossing it now */
  gboolean dirty;
} link_use;

/* The end of a transfer: its rate leaves its links. */
typedef struct flow_end {
  ns_t t;
  double bytes_per_s;
  int link[TOPO_MAX_HOPS], n_links;
} flow_end;

/* One side of a transfer seen, waiting for the other: a pipeline message (group -1, the k-th from
 * `from` to `to`) or a collective's ring hop (group id, its k-th collective, the sending member,
 * channel `to`). */
typedef struct flow_key {
  int group, k, from, to;
} flow_key;

typedef struct pending_flow {
  flow_key key;
  gboolean sender_seen;
  /* known once the sender was seen */
  ns_t end;
  double bytes;
  int src, dst;
} pending_flow;

/* A rank's next interval, by its start: an entry of the merge's heap. */
typedef struct next_start {
  ns_t t;
  int rank;
} next_start;

typedef struct paje_w {
  FILE *f;
  const timeline *tl;
  const plat_params *pp;
  int next_alias;
  GArray *containers;  /* (alias, type) of every container, for the destroy events */
  int *host_alias;     /* per GPU of the platform */
  /* the merge */
  tl_cursor *cur;
  tl_interval *iv;
  next_start *heap;    /* a binary heap: the earliest first, the lower rank on a tie */
  int heap_n;
  /* links */
  gboolean links;
  link_use *link;
  int n_links, top;    /* links from `top` on hang under the root (leaf uplinks, core or spine) */
  int offset[TOPO_N_LINK_KINDS]; /* the first link id of each kind */
  GArray *dirty;       /* of int: links changed at `now` */
  ns_t now;
  GArray *ends;        /* of flow_end: a binary heap by t */
  GHashTable *pending; /* flow_key -> pending_flow */
  GHashTable **seen;   /* per rank: (id * 4 + kind) -> messages / collectives seen so far */
  int *channels;       /* per group, 0 until computed */
} paje_w;

/* ---- output ------------------------------------------------------------ */

/* Numbers by hand: printf was most of the writer's time on a large layout. */
static char *put_u64(char *p, unsigned long long v)
{
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  while (n) *p++ = digits[--n];
  return p;
}

/* `whole`.`frac` with `decimals` digits after the point. */
static char *put_fixed(char *p, unsigned long long whole, unsigned long long frac, int decimals)
{
  p = put_u64(p, whole);
  *p++ = '.';
  for (int i = decimals - 1; i >= 0; i--) {
    p[i] = (char)('0' + frac % 10);
    frac /= 10;
  }
  return p + decimals;
}

static char *put_int(char *p, int v) { return put_u64(p, (unsigned long long)v); }

/* A time: seconds with 9 decimals. */
static char *put_ns(char *p, ns_t ns)
{
  return put_fixed(p, (unsigned long long)(ns / 1000000000), (unsigned long long)(ns % 1000000000), 9);
}

/* A value >= 0: 6 decimals below 1e12 (bytes/s: to a millionth of a byte per second), whole from there
 * (within 1e-12 of it), %g beyond what a 64-bit integer holds. */
static char *put_value(char *p, double v)
{
  if (!(v >= 0) || v >= 9e18) return p + sprintf(p, "%.17g", v);
  if (v >= 1e12) return put_u64(p, (unsigned long long)llround(v));
  long long micro = llround(v * 1e6);
  return put_fixed(p, (unsigned long long)(micro / 1000000), (unsigned long long)(micro % 1000000), 6);
}

/* "11 T gpu HOST VALUE": a GPU's state from t on. */
static void put_state(paje_w *w, ns_t t, int host_alias, tl_cat c)
{
  char line[64], *p = line;
  *p++ = '1';
  *p++ = '1';
  *p++ = ' ';
  p = put_ns(p, t);
  *p++ = ' ';
  p = put_int(p, T_GPU);
  *p++ = ' ';
  p = put_int(p, host_alias);
  *p++ = ' ';
  p = put_int(p, T_VALUE0 + (int)c);
  *p++ = '\n';
  fwrite_unlocked(line, 1, (size_t)(p - line), w->f);
}

/* A variable set once, at 0: as SimGrid writes it (9 decimals). */
static void put_constant(paje_w *w, int type, int alias, double value)
{
  fprintf(w->f, "8 0.000000000 %d %d %.9f\n", type, alias, value);
}

/* "8 T TYPE CONTAINER VALUE" */
static void put_variable(paje_w *w, ns_t t, int type, int alias, double value)
{
  char line[96], *p = line;
  *p++ = '8';
  *p++ = ' ';
  p = put_ns(p, t);
  *p++ = ' ';
  p = put_int(p, type);
  *p++ = ' ';
  p = put_int(p, alias);
  *p++ = ' ';
  p = put_value(p, value);
  *p++ = '\n';
  fwrite_unlocked(line, 1, (size_t)(p - line), w->f);
}

static int create(paje_w *w, int type, int parent, const char *name)
{
  int alias = w->next_alias++;
  fprintf(w->f, "6 0.000000000 %d %d %d \"%s\"\n", alias, type, parent, name);
  int entry[2] = {alias, type};
  g_array_append_vals(w->containers, entry, 1);
  return alias;
}

static void header(paje_w *w)
{
  FILE *f = w->f;
  /* no comment line: Vite warns about each ("the definition is not identified") */
  /* the event definitions used, numbered as SimGrid numbers them */
  fputs("%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
        "%EventDef PajeDefineVariableType 1\n% Alias string\n% Type string\n% Name string\n% Color color\n"
        "%EndEventDef\n"
        "%EventDef PajeDefineStateType 2\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
        "%EventDef PajeDefineEntityValue 5\n% Alias string\n% Type string\n% Name string\n% Color color\n"
        "%EndEventDef\n"
        "%EventDef PajeCreateContainer 6\n% Time date\n% Alias string\n% Type string\n% Container string\n"
        "% Name string\n%EndEventDef\n"
        "%EventDef PajeDestroyContainer 7\n% Time date\n% Type string\n% Name string\n%EndEventDef\n"
        "%EventDef PajeSetVariable 8\n% Time date\n% Type string\n% Container string\n% Value double\n"
        "%EndEventDef\n"
        "%EventDef PajeSetState 11\n% Time date\n% Type string\n% Container string\n% Value string\n"
        "%EndEventDef\n",
        f);
  fprintf(f, "0 %d 0 L1\n0 %d %d HOST\n0 %d %d LINK\n0 %d %d ROUTER\n", T_ZONE, T_HOST, T_ZONE, T_LINK, T_ZONE,
          T_ROUTER, T_ZONE);
  fprintf(f, "1 %d %d speed \"1 1 1\"\n1 %d %d core_count \"1 1 1\"\n", T_SPEED, T_HOST, T_CORES, T_HOST);
  fprintf(f, "1 %d %d bandwidth \"1 1 1\"\n1 %d %d latency \"1 1 1\"\n", T_BW, T_LINK, T_LAT, T_LINK);
  int top = w->n_links > w->top;
  if (top)
    fprintf(f, "0 %d 0 LINK\n1 %d %d bandwidth \"1 1 1\"\n1 %d %d latency \"1 1 1\"\n", T_CORE, T_CORE_BW, T_CORE,
            T_CORE_LAT, T_CORE);
  if (w->links) {
    fprintf(f, "1 %d %d bandwidth_used \"0.5 0.5 0.5\"\n", T_BW_USED, T_LINK);
    if (top) fprintf(f, "1 %d %d bandwidth_used \"0.5 0.5 0.5\"\n", T_CORE_BW_USED, T_CORE);
  }
  fprintf(f, "2 %d %d gpu\n", T_GPU, T_HOST);
  for (int c = 0; c < TL_N; c++)
    fprintf(f, "5 %d %d %s \"%s\"\n", T_VALUE0 + c, T_GPU, tl_cat_name((tl_cat)c), tl_cat_info_of((tl_cat)c)->paje_colour); /* as SimGrid's trace declares them */
}

/* ---- containers ------------------------------------------------------- */

/* Link ids of the directions (the bandwidth_used variables): topology.h's links by kind, two directions
 * each (the core or spine: one). */
static int link_id(const paje_w *w, topo_link_kind kind, int index, int dir)
{
  return w->offset[kind] + (kind == TOPO_LINK_CORE ? 0 : index * 2 + dir);
}
static int nvl_id(const paje_w *w, int gpu, int dir) { return link_id(w, TOPO_LINK_NVL, gpu, dir); }

static void link_container(paje_w *w, int zone, const char *name, double bytes_per_s, double latency_s, int id)
{
  int root = zone == 0; /* a link under the root: the type SimGrid gives those */
  int a = create(w, root ? T_CORE : T_LINK, zone, name);
  put_constant(w, root ? T_CORE_BW : T_BW, a, bytes_per_s);
  put_constant(w, root ? T_CORE_LAT : T_LAT, a, latency_s);
  if (id < 0) return;
  w->link[id].alias = a;
  if (w->links) put_variable(w, 0, root ? T_CORE_BW_USED : T_BW_USED, a, 0);
}

/* A split-duplex link as SimGrid traces it: the link, and later its two directions. */
static void directions(paje_w *w, int zone, const char *name, double bytes_per_s, double latency_s, int down_id)
{
  char n[64];
  snprintf(n, sizeof n, "%s_DOWN", name);
  link_container(w, zone, n, bytes_per_s, latency_s, down_id);
  snprintf(n, sizeof n, "%s_UP", name);
  link_container(w, zone, n, bytes_per_s, latency_s, down_id + DIR_UP - DIR_DOWN);
}

static void containers(paje_w *w)
{
  const plat_params *pp = w->pp;
  int G = pp->gpus_per_node, K = pp->nics_per_node, hpd = topo_hosts_per_domain(pp);
  double nvl_lat = pp->nvlink_latency_s / 2, nic_lat = pp->ib_latency_s / 2; /* per link, as cluster.cpp sets them */
  char name[64];
  for (int d = 0; d < topo_domains(pp); d++) { /* a zone per NVLink domain, as cluster.cpp's */
    int h0 = d * hpd, h1 = MIN(h0 + hpd, pp->nodes);
    topo_zone_name(pp, d, name, sizeof name);
    int zone = create(w, T_ZONE, 0, name);
    for (int r = h0 * G; r < h1 * G; r++) {
      snprintf(name, sizeof name, "n%d_g%d", r / G, r % G);
      int h = w->host_alias[r] = create(w, T_HOST, zone, name);
      put_constant(w, T_SPEED, h, pp->gpu_flops);
      put_constant(w, T_CORES, h, 1);
      topo_link_name(pp, TOPO_LINK_NVL, r, name, sizeof name);
      link_container(w, zone, name, pp->nvlink_bytes_per_s, nvl_lat, -1);
    }
    for (int k = h0 * K; k < h1 * K; k++) {
      topo_link_name(pp, TOPO_LINK_NIC, k, name, sizeof name);
      link_container(w, zone, name, pp->ib_bytes_per_s, nic_lat, -1);
    }
    snprintf(name, sizeof name, hpd > 1 ? "sw_domain%d" : "sw%d", d);
    create(w, T_ROUTER, zone, name);
    for (int k = h0 * K; k < h1 * K; k++) {
      topo_link_name(pp, TOPO_LINK_NIC, k, name, sizeof name);
      directions(w, zone, name, pp->ib_bytes_per_s, nic_lat, link_id(w, TOPO_LINK_NIC, k, DIR_DOWN));
    }
    for (int r = h0 * G; r < h1 * G; r++) {
      topo_link_name(pp, TOPO_LINK_NVL, r, name, sizeof name);
      directions(w, zone, name, pp->nvlink_bytes_per_s, nvl_lat, nvl_id(w, r, DIR_DOWN));
    }
  }
  /* above the domains: the leaf uplinks (fat-tree leaf groups or rail leaves), then the core or spine */
  for (int u = 0; u < topo_n_links(pp, TOPO_LINK_UPLINK); u++) {
    topo_link_name(pp, TOPO_LINK_UPLINK, u, name, sizeof name);
    directions(w, 0, name, pp->uplink_bytes_per_s, 0, link_id(w, TOPO_LINK_UPLINK, u, DIR_DOWN));
  }
  if (topo_n_links(pp, TOPO_LINK_CORE)) {
    topo_link_name(pp, TOPO_LINK_CORE, 0, name, sizeof name);
    link_container(w, 0, name, 1e15, 0, link_id(w, TOPO_LINK_CORE, 0, 0)); /* cluster.cpp's fat pipe */
  }
}

/* ---- link utilisation ------------------------------------------------- */

static void flush_links(paje_w *w)
{
  for (guint i = 0; i < w->dirty->len; i++) {
    int id = g_array_index(w->dirty, int, i);
    link_use *l = &w->link[id];
    l->dirty = FALSE;
    if (l->bytes_per_s == l->written) continue;
    put_variable(w, w->now, id >= w->top ? T_CORE_BW_USED : T_BW_USED, l->alias, l->bytes_per_s);
    l->written = l->bytes_per_s;
  }
  g_array_set_size(w->dirty, 0);
}

/* Move the links' clock to t: what changed before is written at its own time. */
static void links_at(paje_w *w, ns_t t)
{
  if (t <= w->now) return;
  flush_links(w);
  w->now = t;
}

static void change(paje_w *w, int id, double bytes_per_s, int flows)
{
  link_use *l = &w->link[id];
  l->flows += flows;
  l->bytes_per_s += bytes_per_s;
  if (l->flows == 0 || l->bytes_per_s < 0) l->bytes_per_s = 0; /* no rounding residue once idle */
  if (!l->dirty) {
    l->dirty = TRUE;
    g_array_append_val(w->dirty, id);
  }
}

static gboolean end_before(const flow_end *a, const flow_end *b) { return a->t < b->t; }

static void ends_push(paje_w *w, const flow_end *e)
{
  g_array_append_vals(w->ends, e, 1);
  flow_end *h = (flow_end *)w->ends->data;
  for (guint i = w->ends->len - 1; i > 0;) {
    guint up = (i - 1) / 2;
    if (!end_before(&h[i], &h[up])) break;
    flow_end t = h[i];
    h[i] = h[up];
    h[up] = t;
    i = up;
  }
}

static flow_end ends_pop(paje_w *w)
{
  flow_end *h = (flow_end *)w->ends->data, top = h[0];
  guint n = w->ends->len - 1;
  h[0] = h[n];
  g_array_set_size(w->ends, n);
  for (guint i = 0;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && end_before(&h[l], &h[m])) m = l;
    if (r < n && end_before(&h[r], &h[m])) m = r;
    if (m == i) break;
    flow_end t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
  return top;
}

/* Apply every transfer ending up to t, each at its end. */
static void end_flows(paje_w *w, ns_t t)
{
  while (w->ends->len && g_array_index(w->ends, flow_end, 0).t <= t) {
    flow_end e = ends_pop(w);
    links_at(w, e.t);
    for (int i = 0; i < e.n_links; i++) change(w, e.link[i], -e.bytes_per_s, -1);
  }
}

/* Move to t: transfers ending before are applied, what changed before t is written. */
static void links_advance(paje_w *w, ns_t t)
{
  end_flows(w, t);
  links_at(w, t);
}

/* After the last interval: the transfers still running end, the last values are written. */
static void links_finish(paje_w *w)
{
  end_flows(w, G_MAXINT64);
  flush_links(w);
}

/* The link directions a transfer from rank src to rank dst crosses (topology.h's routes). */
static int route(const paje_w *w, int src, int dst, int link[TOPO_MAX_HOPS])
{
  topo_hop h[TOPO_MAX_HOPS];
  int n = topo_route(w->pp, src, dst, h);
  for (int i = 0; i < n; i++) link[i] = link_id(w, h[i].kind, h[i].index, h[i].dir == TOPO_UP ? DIR_UP : DIR_DOWN);
  return n;
}

/* A transfer from now to `end`. */
static void transfer(paje_w *w, int src, int dst, double bytes, ns_t end)
{
  if (bytes <= 0 || end <= w->now) return;
  flow_end e = {.t = end, .bytes_per_s = bytes / ((double)(end - w->now) * 1e-9)};
  e.n_links = route(w, src, dst, e.link);
  for (int i = 0; i < e.n_links; i++) change(w, e.link[i], e.bytes_per_s, 1);
  ends_push(w, &e);
}

static guint key_hash(gconstpointer p)
{
  const flow_key *k = p;
  return (guint)k->group * 2654435761u ^ (guint)k->k * 40503u ^ (guint)k->from * 97u ^ (guint)k->to;
}

static gboolean key_equal(gconstpointer a, gconstpointer b) { return !memcmp(a, b, sizeof(flow_key)); }

/* One end of a transfer is in its interval (now): the transfer starts if the other already was. */
static void flow_side(paje_w *w, flow_key key, gboolean sender, int src, int dst, double bytes, ns_t sender_end)
{
  pending_flow *p = g_hash_table_lookup(w->pending, &key);
  if (p && p->sender_seen == sender) return; /* the same side twice: sends and receives that do not pair */
  if (!p) {
    p = g_new(pending_flow, 1);
    *p = (pending_flow){.key = key, .sender_seen = sender, .end = sender_end, .bytes = bytes, .src = src, .dst = dst};
    g_hash_table_insert(w->pending, &p->key, p);
    return;
  }
  if (!sender) { /* the sender's end and bytes, seen first */
    sender_end = p->end;
    bytes = p->bytes;
  }
  g_hash_table_remove(w->pending, &key);
  transfer(w, src, dst, bytes, sender_end);
}

/* How many times rank r met (kind, id) before: its k-th message to or from a peer, k-th collective of a group. */
static int count(paje_w *w, int r, int kind, int id)
{
  if (!w->seen[r]) w->seen[r] = g_hash_table_new(g_direct_hash, g_direct_equal);
  gpointer key = GINT_TO_POINTER(id * 4 + kind);
  int k = GPOINTER_TO_INT(g_hash_table_lookup(w->seen[r], key));
  g_hash_table_insert(w->seen[r], key, GINT_TO_POINTER(k + 1));
  return k;
}

static int group_channels(paje_w *w, int gid, const graph_group *gr)
{
  if (w->channels[gid]) return w->channels[gid];
  int n = (int)gr->ranks->len;
  g_autofree int *node = g_new(int, n);
  for (int i = 0; i < n; i++) node[i] = topo_domain_of(w->pp, g_array_index(gr->ranks, int, i));
  return w->channels[gid] = coll_channels(node, n);
}

static void collective(paje_w *w, int r, const tl_interval *iv, ns_t end)
{
  if (iv->peer < 0 || iv->peer >= (int)w->tl->g->groups->len) return;
  const graph_group *gr = g_ptr_array_index(w->tl->g->groups, iv->peer);
  int n = (int)gr->ranks->len, me = -1;
  for (int i = 0; i < n && me < 0; i++)
    if (g_array_index(gr->ranks, int, i) == r) me = i;
  if (n < 2 || me < 0) return;
  int ch = group_channels(w, iv->peer, gr), k = count(w, r, 2, iv->peer);
  double bytes = iv->ev->bytes / n * coll_steps((graph_coll)iv->ev->variant, n) / ch;
  for (int c = 0; c < ch; c++) {
    int next = coll_ring_next(me, n, ch, c), prev = coll_ring_prev(me, n, ch, c);
    flow_side(w, (flow_key){iv->peer, k, me, c}, TRUE, r, g_array_index(gr->ranks, int, next), bytes, end);
    flow_side(w, (flow_key){iv->peer, k, prev, c}, FALSE, g_array_index(gr->ranks, int, prev), r, bytes, end);
  }
}

static void communication(paje_w *w, int r, const tl_interval *iv, ns_t end)
{
  const graph_event *e = iv->ev;
  if (!e || e->kind == EV_COMPUTE) return;
  if (e->kind == EV_COLLECTIVE) {
    collective(w, r, iv, end);
    return;
  }
  if (iv->peer < 0) return; /* a mirror whose graph does not say where it sends */
  if (e->kind == EV_SEND)
    flow_side(w, (flow_key){-1, count(w, r, 0, iv->peer), r, iv->peer}, TRUE, r, iv->peer, e->bytes, end);
  else
    flow_side(w, (flow_key){-1, count(w, r, 1, iv->peer), iv->peer, r}, FALSE, iv->peer, r, 0, end);
}

/* ---- the merge -------------------------------------------------------- */

static gboolean before(const next_start *a, const next_start *b)
{
  return a->t < b->t || (a->t == b->t && a->rank < b->rank);
}

static void sift_down(paje_w *w, int i)
{
  next_start *h = w->heap;
  int n = w->heap_n;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && before(&h[l], &h[m])) m = l;
    if (r < n && before(&h[r], &h[m])) m = r;
    if (m == i) return;
    next_start t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* Load rank r's next interval into heap slot i; FALSE when it has none left. */
static gboolean advance(paje_w *w, int r, int i)
{
  if (!tl_cursor_next(&w->cur[r], &w->iv[r])) return FALSE;
  w->heap[i] = (next_start){to_ns(w->iv[r].start_s), r};
  return TRUE;
}

static void states(paje_w *w)
{
  int world = w->tl->g->world_size;
  for (int r = 0; r < world; r++) {
    tl_cursor_init(&w->cur[r], w->tl, r, TRUE);
    if (advance(w, r, w->heap_n)) w->heap_n++;
  }
  for (int i = w->heap_n / 2 - 1; i >= 0; i--) sift_down(w, i);
  while (w->heap_n) {
    int r = w->heap[0].rank;
    const tl_interval *iv = &w->iv[r];
    ns_t t0 = w->heap[0].t, t1 = to_ns(iv->end_s);
    if (w->links) links_advance(w, t0);
    if (t1 > t0) put_state(w, t0, w->host_alias[r], iv->cat);
    if (w->links) communication(w, r, iv, t1);
    if (!advance(w, r, 0)) w->heap[0] = w->heap[--w->heap_n];
    sift_down(w, 0);
  }
  for (int r = 0; r < world; r++) tl_cursor_clear(&w->cur[r]);
}

static void destroy_all(paje_w *w, ns_t t)
{
  char time[32];
  *put_ns(time, t) = '\0';
  for (guint i = w->containers->len; i-- > 0;) { /* children before their zone */
    const int *c = &g_array_index(w->containers, int, 2 * i);
    fprintf(w->f, "7 %s %d %d\n", time, c[1], c[0]);
  }
}

void trace_paje_put(const timeline *tl, const plat_params *pp, gboolean links, FILE *f)
{
  int world = tl->g->world_size, hosts = pp->nodes * pp->gpus_per_node;
  paje_w w = {.f = f, .tl = tl, .pp = pp, .next_alias = 1, .links = links};
  w.containers = g_array_new(FALSE, FALSE, 2 * sizeof(int));
  w.host_alias = g_new0(int, MAX(hosts, 1));
  w.cur = g_new0(tl_cursor, MAX(world, 1));
  w.iv = g_new0(tl_interval, MAX(world, 1));
  w.heap = g_new0(next_start, MAX(world, 1));
  for (int k = 0; k < TOPO_N_LINK_KINDS; k++) {
    w.offset[k] = w.n_links;
    w.n_links += (k == TOPO_LINK_CORE ? 1 : 2) * topo_n_links(pp, (topo_link_kind)k);
    if (k == TOPO_LINK_NIC) w.top = w.n_links;
  }
  w.link = g_new0(link_use, w.n_links);
  w.dirty = g_array_new(FALSE, FALSE, sizeof(int));
  w.ends = g_array_new(FALSE, FALSE, sizeof(flow_end));
  w.pending = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
  w.seen = g_new0(GHashTable *, MAX(world, 1));
  w.channels = g_new0(int, MAX(tl->g->groups->len, 1));
  header(&w);
  containers(&w);
  states(&w);
  ns_t step = to_ns(tl->step_time_s);
  if (links) links_finish(&w);
  destroy_all(&w, step);
  for (int r = 0; r < world; r++)
    if (w.seen[r]) g_hash_table_destroy(w.seen[r]);
  g_free(w.seen);
  g_free(w.channels);
  g_hash_table_destroy(w.pending);
  g_array_free(w.ends, TRUE);
  g_array_free(w.dirty, TRUE);
  g_free(w.link);
  g_free(w.heap);
  g_free(w.iv);
  g_free(w.cur);
  g_free(w.host_alias);
  g_array_free(w.containers, TRUE);
}

gboolean trace_paje_write(const timeline *tl, const plat_params *pp, gboolean links, const char *path, GError **err)
{
  lsim_outfile tf;
  if (!lsim_outfile_open(&tf, path, err)) return FALSE;
  trace_paje_put(tl, pp, links, tf.f);
  return lsim_outfile_commit(&tf, err);
}
