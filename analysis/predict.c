/* predict -- see predict.h. Workers are forked before SimGrid is touched in
 * the parent; each writes one fixed-size `prediction` (smaller than
 * PIPE_BUF, so the write is atomic) to its pipe and exits. */
#include "predict.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/lsim_error.h"
#include "workloads/partition.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* the required columns, then the optional ones */
static const char *const COLUMNS[] = {"model", "seq_len", "global_batch", "vocab", "gpus", "checkpointing",
                                      "attention_kernel", "micro_batch", "tp", "pp", "sp", "partition"};
#define N_REQUIRED 11
G_STATIC_ASSERT(N_REQUIRED < G_N_ELEMENTS(COLUMNS));

const char *const *predict_columns(guint *n)
{
  *n = G_N_ELEMENTS(COLUMNS);
  return COLUMNS;
}

const char *predict_status_name(pred_status s) { return s == PRED_OK ? "ok" : s == PRED_OOM ? "oom" : "invalid"; }

gboolean predict_check_columns(const csv_table *t, const char *path, GError **err)
{
  for (size_t i = 0; i < N_REQUIRED; i++)
    if (csv_column(t, COLUMNS[i]) < 0) {
      g_autoptr(GString) needed = g_string_new(COLUMNS[0]);
      for (size_t j = 1; j < N_REQUIRED; j++) g_string_append_printf(needed, ", %s", COLUMNS[j]);
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_PARSE, "%s: missing column '%s' (needed: %s)", path, COLUMNS[i],
                  needed->str);
      return FALSE;
    }
  return TRUE;
}

static gboolean row_int(const csv_table *t, guint r, const char *col, int *out, GError **err)
{
  const char *s = csv_cell(t, r, csv_column(t, col));
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!g_ascii_isdigit(*s) || errno || *end || v > 1000000000) { /* strict: no blanks, no sign */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is not a whole number (allowed: %s)", col, s,
                !strcmp(col, "sp") ? "0, 1" : "plain digits such as 1 or 2048, no blanks or signs");
    return FALSE;
  }
  *out = (int)v;
  return TRUE;
}

gboolean predict_row_request(const csv_table *t, guint r, const predict_cfg *cfg, sim_request *rq, GError **err)
{
  memset(rq, 0, sizeof *rq);
  rq->prof = cfg->prof;
  rq->capacity_gib = cfg->capacity_gib;
  rq->gen = cfg->gen;
  rq->l = layout_default();
  if (!model_load_named(csv_cell(t, r, csv_column(t, "model")), &rq->m, err)) return FALSE;
  int vocab, sp;
  layout *l = &rq->l;
  if (!row_int(t, r, "vocab", &vocab, err) || !row_int(t, r, "seq_len", &l->seq_len, err) ||
      !row_int(t, r, "global_batch", &l->global_batch, err) || !row_int(t, r, "gpus", &l->gpus, err) ||
      !row_int(t, r, "micro_batch", &l->micro_batch, err) || !row_int(t, r, "tp", &l->tp, err) ||
      !row_int(t, r, "pp", &l->pp, err) || !row_int(t, r, "sp", &sp, err))
    return FALSE;
  if (vocab < 1 || vocab > MODEL_MAX_VOCAB) { /* as --vocab: 0 is refused, not "the model's" */
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "vocab: '%d' is not a vocabulary size (allowed: 1 to %d)", vocab,
                MODEL_MAX_VOCAB);
    return FALSE;
  }
  rq->m.vocab = vocab;
  if (sp > 1) {
    g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "sp: '%d' is neither off nor on (allowed: 0, 1)", sp);
    return FALSE;
  }
  l->sp = sp == 1;
  if (!layout_parse_ckpt(csv_cell(t, r, csv_column(t, "checkpointing")), &l->ckpt, err)) return FALSE;
  if (!layout_parse_attn(csv_cell(t, r, csv_column(t, "attention_kernel")), &l->attn, err)) return FALSE;
  /* optional: how the run split its layers over the stages; empty = the command's --partition */
  int c_part = csv_column(t, "partition");
  if (c_part >= 0 && *csv_cell(t, r, c_part) && !partition_parse_method(csv_cell(t, r, c_part), &rq->gen.partition, err))
    return FALSE;
  return layout_validate(l, &rq->m, err);
}

/* Runs in the worker process. */
static prediction predict_one(sim_request *rq)
{
  prediction p = {.status = PRED_INVALID};
  sim_outcome o = {0};
  GError *err = NULL;
  if (!sim_run_layout(rq, &o, &err)) {
    g_strlcpy(p.error, err->message, sizeof p.error);
    g_error_free(err);
    sim_outcome_clear(&o);
    return p;
  }
  p.status = o.met->oom ? PRED_OOM : PRED_OK;
  p.step_time_s = o.met->step_time_s;
  p.mfu = o.met->mfu;
  p.peak_gib = o.met->mem_peak_bytes / GIB;
  p.bubble_fraction = o.met->bubble_fraction;
  p.fragmentation_limit = o.met->mem_fragmentation_limit;
  if (o.met->oom)
    g_snprintf(p.error, sizeof p.error, "peak %.1f GiB on stage %d exceeds %.1f GiB", p.peak_gib, o.met->mem_peak_stage,
               rq->capacity_gib);
  sim_outcome_clear(&o);
  return p;
}

typedef struct worker {
  pid_t pid;
  int fd;
  guint row;
} worker;

/* Fork a process that simulates one row and writes its prediction into a pipe. FALSE (errno kept,
 * nothing left open) when the system refuses a pipe or a process: too many -j for its limits. */
static gboolean start_worker(worker *w, sim_request *rq, guint row)
{
  int fds[2];
  if (pipe(fds) != 0) return FALSE;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    errno = e;
    return FALSE;
  }
  if (pid == 0) {
    close(fds[0]);
    prediction p = predict_one(rq);
    ssize_t n = write(fds[1], &p, sizeof p);
    _exit(n == (ssize_t)sizeof p ? 0 : 1);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->row = row;
  return TRUE;
}

static void finish_worker(worker *w, int status, prediction *out)
{
  prediction p;
  ssize_t n = read(w->fd, &p, sizeof p);
  close(w->fd);
  if (n == (ssize_t)sizeof p) {
    *out = p;
    return;
  }
  memset(out, 0, sizeof *out);
  out->status = PRED_INVALID;
  if (WIFSIGNALED(status))
    g_snprintf(out->error, sizeof out->error, "internal error: simulation died (signal %d)", WTERMSIG(status));
  else g_snprintf(out->error, sizeof out->error, "internal error: simulation exited with status %d", WEXITSTATUS(status));
}

prediction *predict_table(const csv_table *t, const predict_cfg *cfg)
{
  guint rows = t->rows->len;
  prediction *out = g_new0(prediction, rows ? rows : 1);
  for (guint r = 0; r < rows; r++) { /* until a worker reports: never a zero taken for a prediction */
    out[r].status = PRED_INVALID;
    g_strlcpy(out[r].error, "internal error: not simulated", sizeof out[r].error);
  }
  int jobs = MAX(1, cfg->jobs);
  g_autofree worker *ws = g_new0(worker, jobs);
  int running = 0;
  guint next = 0;
  while (next < rows || running > 0) {
    while (next < rows && running < jobs) {
      sim_request rq;
      GError *err = NULL;
      if (!predict_row_request(t, next, cfg, &rq, &err)) {
        out[next].status = PRED_INVALID;
        g_strlcpy(out[next].error, err->message, sizeof out[next].error);
        g_error_free(err);
        next++;
        continue;
      }
      int slot = 0;
      while (ws[slot].pid) slot++;
      if (start_worker(&ws[slot], &rq, next)) {
        next++;
        running++;
        continue;
      }
      if (running > 0) break; /* out of processes or descriptors: wait for one to finish, then retry */
      out[next].status = PRED_INVALID;
      g_snprintf(out[next].error, sizeof out[next].error, "internal error: cannot start a simulation process (%s)",
                 g_strerror(errno));
      next++;
    }
    if (running == 0) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) { /* no child to wait for: the rows still running keep "not simulated" */
      for (int i = 0; i < jobs; i++)
        if (ws[i].pid) close(ws[i].fd);
      break;
    }
    for (int i = 0; i < jobs; i++)
      if (ws[i].pid == pid) {
        finish_worker(&ws[i], status, &out[ws[i].row]);
        ws[i].pid = 0;
        running--;
      }
  }
  return out;
}

static char *fmt(double v) { return g_strdup_printf("%.6g", v); }

/* The columns predict writes, in this order; they replace any of the same name in the input. */
static const char *const PRED_COLUMNS[] = {"pred_status", "pred_step_time_s", "pred_mfu", "pred_peak_mem_gib",
                                           "pred_bubble_fraction", "pred_fragmentation_limit", "pred_error"};

/* Every pred_* cell of row r (cols: their indices, in PRED_COLUMNS' order), empty where p has no
 * value, so nothing of an earlier run survives when a predicted table is predicted again. */
static void set_pred_cells(csv_table *t, guint r, const int *cols, const prediction *p)
{
  const double nums[] = {p->step_time_s, p->mfu, p->peak_gib, p->bubble_fraction, p->fragmentation_limit};
  G_STATIC_ASSERT(G_N_ELEMENTS(nums) + 2 == G_N_ELEMENTS(PRED_COLUMNS));
  csv_set(t, r, cols[0], predict_status_name(p->status));
  for (size_t i = 0; i < G_N_ELEMENTS(nums); i++) {
    g_autofree char *v = p->status == PRED_INVALID ? g_strdup("") : fmt(nums[i]);
    csv_set(t, r, cols[1 + i], v);
  }
  csv_set(t, r, cols[G_N_ELEMENTS(PRED_COLUMNS) - 1], p->error);
}

gboolean predict_file(const char *in, const char *outp, const predict_cfg *cfg, GError **err)
{
  g_autoptr(csv_table) t = csv_read(in, err);
  if (!t || !predict_check_columns(t, in, err)) return FALSE;
  g_autofree prediction *p = predict_table(t, cfg);
  int cols[G_N_ELEMENTS(PRED_COLUMNS)];
  for (size_t i = 0; i < G_N_ELEMENTS(PRED_COLUMNS); i++) cols[i] = csv_add_column(t, PRED_COLUMNS[i]);
  for (guint r = 0; r < t->rows->len; r++) set_pred_cells(t, r, cols, &p[r]);
  return csv_write(t, outp, err);
}
