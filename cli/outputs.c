/* outputs -- see outputs.h. */
#include "outputs.h"

#include "common/lsim_error.h"
#include "platforms/profile.h"
#include "workloads/model.h"

/* Whether output `path` would replace a file the command reads: its positional files (graph,
 * tables), --model-file and a --profile or --stack file. predict IN -o IN, filling in its columns in place,
 * is the one exception. */
static gboolean is_an_input(const cli_opts *o, const char *path, gboolean is_output_option)
{
  gboolean predict_in_place = is_output_option && o->positional->len == 1 && o->command_bit == CMD_PREDICT;
  for (guint i = 0; i < o->positional->len; i++)
    if (!predict_in_place && lsim_outfile_same_target(o->positional->pdata[i], path)) return TRUE;
  /* the model and profile files, also where a name stands for a shipped one (every built-in model:
   * the rows of a table may name any of them) */
  g_auto(GStrv) models = model_builtin_paths();
  g_autofree char *profile = profile_path(o->profile_name);
  g_autofree char *stack = stack_path(o->stack_name);
  g_autoptr(GPtrArray) files = g_ptr_array_new();
  g_ptr_array_add(files, (gpointer)o->model_file);
  g_ptr_array_add(files, profile);
  g_ptr_array_add(files, stack);
  g_ptr_array_add(files, (gpointer)o->rq.replay.platform_file);
  for (char **m = models; *m; m++) g_ptr_array_add(files, *m);
  for (guint i = 0; i < files->len; i++) {
    const char *f = files->pdata[i];
    if (f && g_file_test(f, G_FILE_TEST_EXISTS) && lsim_outfile_same_target(f, path)) return TRUE;
  }
  return FALSE;
}

/* Every output file must be writable, named once and not an input, before anything is simulated,
 * so that a bad path fails fast and no file is left behind or silently overwritten. */
gboolean cli_outputs_writable(const cli_opts *o, GError **err)
{
  const char *paths[] = {o->output, o->chrome_trace, o->timeline_svg, o->memory_svg, o->timeline_csv, o->paje,
                         o->rq.replay.simgrid_paje_path, o->trust_out};
  static const char *const names[] = {"-o", "--chrome-trace", "--timeline-svg", "--memory-svg", "--timeline-csv",
                                      "--paje", "--paje-simgrid", "--trust-out"};
  G_STATIC_ASSERT(G_N_ELEMENTS(names) == G_N_ELEMENTS(paths));
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    if (!paths[i]) continue;
    for (size_t k = 0; k < i; k++) {
      if (paths[k] && lsim_outfile_same_target(paths[k], paths[i])) {
        g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: named for two outputs (allowed: one file per output)",
                    paths[i]);
        return FALSE;
      }
    }
    if (is_an_input(o, paths[i], i == 0)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is one of this command's input files or a shipped "
                  "model file (allowed: a different file)", names[i], paths[i]);
      return FALSE;
    }
    if (!lsim_outfile_check(paths[i], err)) return FALSE;
  }
  return TRUE;
}

/* The outputs of sweep and merge: -o and --plot, checked before any work. */
gboolean cli_ranked_outputs_writable(const cli_opts *o, GError **err)
{
  const char *paths[] = {o->output, o->plot};
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    if (!paths[i]) continue;
    if (i == 1 && paths[0] && lsim_outfile_same_target(paths[0], paths[1])) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: named for two outputs (allowed: one file per output)",
                  paths[1]);
      return FALSE;
    }
    if (is_an_input(o, paths[i], FALSE)) {
      g_set_error(err, LSIM_ERROR, LSIM_ERROR_INVALID, "%s: '%s' is one of this command's input files or a shipped "
                  "model file (allowed: a different file)", i ? "--plot" : "-o", paths[i]);
      return FALSE;
    }
    if (!lsim_outfile_check(paths[i], err)) return FALSE;
  }
  return TRUE;
}

gboolean cli_open_output(lsim_outset *set, const char *path, FILE **f, GError **err)
{
  *f = NULL;
  return !path || (*f = lsim_outset_open(set, path, err)) != NULL;
}
