/* schedule -- see schedule.h. The table, lookups and the helpers every schedule shares. */
#include "schedule.h"

#include <string.h>

#include "common/lsim_error.h"

/* The schedules, the default first. Adding one: its file defines `const sched_def sched_def_NAME`, and
 * one X(NAME) here (docs/schedules.md). */
#define SCHEDULES(X) X(1f1b) X(gpipe) X(interleaved) X(zbh1) X(dualpipev)

#define DECLARE(n) extern const sched_def sched_def_##n;
SCHEDULES(DECLARE)
#define ENTRY(n) &sched_def_##n,
static const sched_def *const TABLE[] = {SCHEDULES(ENTRY)};

static const char *const NAMES[SCHED_N_KINDS] = {"recv_act", "send_act",  "recv_grad",  "send_grad", "forward",
                                                 "backward", "optimizer", "backward_b", "backward_w"};

const char *sched_kind_name(sched_kind k) { return NAMES[k]; }

int sched_count(void) { return (int)G_N_ELEMENTS(TABLE); }

const sched_def *sched_get(int id) { return id >= 0 && id < sched_count() ? TABLE[id] : TABLE[0]; }

const char *sched_name(int id) { return sched_get(id)->name; }

char *sched_names(const char *sep)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < sched_count(); i++) g_string_append_printf(s, "%s%s", i ? sep : "", TABLE[i]->name);
  return g_string_free(s, FALSE);
}

gboolean sched_parse(const char *name, int *id, GError **err)
{
  for (int i = 0; i < sched_count(); i++)
    if (!g_ascii_strcasecmp(name, TABLE[i]->name)) { /* 1F1B as Megatron's papers write it is 1f1b */
      *id = i;
      return TRUE;
    }
  g_autofree char *names = sched_names(", ");
  g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "schedule: unknown '%s' (allowed: %s)", name, names);
  return FALSE;
}

int sched_min_stages(int id) { return MAX(1, sched_get(id)->min_stages); }

gboolean sched_check(int id, int stages, int chunks, int m, int layers, GError **err)
{
  const sched_def *d = sched_get(id);
  if (stages < sched_min_stages(id)) { /* e.g. zb-h1 at pp 1: 1f1b's step under another name */
    g_autoptr(GString) ok = g_string_new(NULL);
    for (int i = 0; i < sched_count(); i++)
      if (sched_min_stages(i) <= stages) g_string_append_printf(ok, "%s%s", ok->len ? ", " : "", TABLE[i]->name);
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "schedule: %s at pp %d, where %s (allowed at pp %d: %s; %s with "
                "pp %d or more)", d->name, stages, d->below_min, stages, ok->str, d->name, sched_min_stages(id));
    return FALSE;
  }
  if (chunks < 1) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "virtual_stages: must be a positive integer (got %d)", chunks);
    return FALSE;
  }
  if (!d->chunked && chunks != 1) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID,
                "virtual_stages: %d needs the interleaved schedule; schedule %s holds one chunk per stage "
                "(allowed with %s: 1)", chunks, d->name, d->name);
    return FALSE;
  }
  return d->check ? d->check(stages, chunks, m, layers, err) : TRUE;
}

int sched_vstage(int id, int stage, int chunk, int stages, int chunks)
{
  const sched_def *d = sched_get(id);
  return d->vstage ? d->vstage(stage, chunk, stages, chunks) : chunk * stages + stage;
}

int sched_vstage_holder(int id, int v, int stages, int chunks, int *chunk)
{
  if (v < 0 || v >= stages * chunks) return -1;
  if (!sched_get(id)->vstage) { /* the default map, inverted */
    if (chunk) *chunk = v / stages;
    return v % stages;
  }
  for (int s = 0; s < stages; s++)
    for (int c = 0; c < chunks; c++)
      if (sched_vstage(id, s, c, stages, chunks) == v) {
        if (chunk) *chunk = c;
        return s;
      }
  return -1;
}

gboolean sched_affine_counts(int id, int stages, int *m1, int *m2)
{
  return sched_counts_affine(&sched_get(id)->counts, stages, m1, m2);
}

int sched_memory_micro_batches(int id, int stages, int m) { return sched_counts_memory(&sched_get(id)->counts, stages, m); }

GArray *sched_instructions(int id, int stage, int stages, int chunks, int m)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  sched_get(id)->emit(out, stage, stages, chunks, m);
  return out;
}

void sched_push(GArray *out, sched_kind k, int mb, int chunk)
{
  sched_instr in = {k, mb, chunk, FALSE};
  g_array_append_val(out, in);
}

void sched_push_with_p2p(GArray *out, sched_kind k, int mb, int chunk, int stage, int stages, int chunks)
{
  int v = chunk * stages + stage, last = stages * chunks - 1;
  if (k == SCHED_FORWARD) {
    if (v > 0) sched_push(out, SCHED_RECV_ACT, mb, chunk);
    sched_push(out, k, mb, chunk);
    if (v < last) sched_push(out, SCHED_SEND_ACT, mb, chunk);
  } else if (k == SCHED_BACKWARD || k == SCHED_BACKWARD_B) {
    if (v < last) sched_push(out, SCHED_RECV_GRAD, mb, chunk);
    sched_push(out, k, mb, chunk);
    if (v > 0) sched_push(out, SCHED_SEND_GRAD, mb, chunk);
  } else {
    sched_push(out, k, mb, chunk);
  }
}

int sched_pipe_buffers(int r, int P, int m)
{
  int b = MIN(P - r + 1, m);
  return MAX(2, b);
}

void sched_combine_no_pipelining(GArray *instrs)
{
  g_autoptr(GArray) fwd = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  g_autoptr(GArray) bwd = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(sched_instr));
  for (guint i = 0; i < instrs->len; i++) {
    sched_instr in = g_array_index(instrs, sched_instr, i);
    g_assert(in.kind != SCHED_RECV_ACT && in.kind != SCHED_SEND_ACT && in.kind != SCHED_RECV_GRAD &&
             in.kind != SCHED_SEND_GRAD && in.kind != SCHED_BACKWARD_B && in.kind != SCHED_BACKWARD_W);
    g_array_append_val(in.kind == SCHED_FORWARD ? fwd : in.kind == SCHED_BACKWARD ? bwd : rest, in);
  }
  g_assert(fwd->len == bwd->len);
  g_array_set_size(instrs, 0);
  for (guint i = 0; i <= fwd->len && fwd->len > 0; i++) {
    if (i < fwd->len) g_array_append_val(instrs, g_array_index(fwd, sched_instr, i));
    if (i == 0) continue;
    sched_instr b = g_array_index(bwd, sched_instr, i - 1);
    b.paired = i < fwd->len; /* the last backward runs alone */
    g_array_append_val(instrs, b);
  }
  g_array_append_vals(instrs, rest->data, rest->len);
}
