/* test_profile -- what a hardware profile file and a stack file may hold: the
 * documented fields and the optional free-text `comment`, each key once; the
 * shipped profiles and stacks, and a stack calibrate saves, load back unchanged. */
#include <check.h>

#include "check_main.h"
#include "check_shipped.h"
#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "common/lsim_json.h"
#include "platforms/fabric.h"
#include "platforms/profile.h"
#include "workloads/precision.h"
#include "platforms/stack.h"
#include "platforms/whatif.h"

/* A shipped file as a tree to edit (caller deletes). */
static cJSON *tree_of(const char *dir, const char *file)
{
  g_autofree char *path = lsim_data_path(dir, file);
  GError *err = NULL;
  cJSON *j = lsim_json_read_file(path, LSIM_INPUT_PROFILE, &err);
  ck_assert_msg(j != NULL, "%s", err ? err->message : "");
  return j;
}

/* The shipped a100-sxm4-80gb profile and study stack as trees to edit (caller deletes). */
static cJSON *shipped_tree(void) { return tree_of("platforms/profiles", "a100-sxm4-80gb.json"); }
static cJSON *stack_tree(void) { return tree_of("platforms/stacks", "study.json"); }

/* Write j to a temporary file and load it as a profile (out) or, out NULL, a stack (*st); returns the
 * error message with the file's path replaced by "P" (caller frees), NULL if it loaded. */
static char *load_error_of(const cJSON *j, gpu_profile *out, stack_profile *st)
{
  GError *err = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("lsim-profile-XXXXXX.json", &path, &err);
  ck_assert_msg(fd >= 0, "tmp file: %s", err ? err->message : "?");
  close(fd);
  ck_assert(lsim_json_write_file(j, path, &err));
  gboolean ok = out ? profile_load_file(path, out, &err) : stack_load_file(path, st, &err);
  g_unlink(path);
  if (ok) return NULL;
  ck_assert(g_str_has_prefix(err->message, path));
  char *msg = g_strconcat("P", err->message + strlen(path), NULL);
  g_error_free(err);
  return msg;
}

static char *load_error(const cJSON *j, gpu_profile *out) { return load_error_of(j, out, NULL); }
static char *stack_error(const cJSON *j, stack_profile *out) { return load_error_of(j, NULL, out); }

/* How many shipped files of `dir` load (as profiles, or as stacks), each with its comment. */
static int shipped_files_load(const char *dir_name, const char *any_file, gboolean stacks)
{
  g_autofree char *any = lsim_data_path(dir_name, any_file);
  g_autofree char *dir_path = g_path_get_dirname(any);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  for (const char *f; (f = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(f, ".json")) continue;
    g_autofree char *path = g_build_filename(dir_path, f, NULL);
    gpu_profile p;
    GError *err = NULL;
    gboolean ok = stacks ? stack_load_file(path, &p.stack, &err) : profile_load_file(path, &p, &err);
    ck_assert_msg(ok, "%s", err ? err->message : "");
    ck_assert_msg(stacks ? p.stack.comment[0] : p.comment[0], "%s: its comment was not read", f);
    n++;
  }
  g_dir_close(dir);
  return n;
}

START_TEST(test_every_shipped_profile_and_stack_loads)
{
  ck_assert_int_ge(shipped_files_load("platforms/profiles", "a100-sxm4-80gb.json", FALSE), 3);
  /* study, megatron-deepspeed, nemo and their priors */
  ck_assert_int_ge(shipped_files_load("platforms/stacks", "study.json", TRUE), 6);
}
END_TEST

/* Whether a shipped stack was fitted on runs of profile `name`: some shipped trust table
 * (analysis/trust/STACK.json, written by validate --trust-out from the runs a stack was fitted on)
 * names it as its profile. */
static gboolean a_stack_was_fitted_on(const char *name)
{
  g_autofree char *any = lsim_data_path("analysis/trust", "study.json");
  g_autofree char *dir_path = g_path_get_dirname(any);
  GDir *dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_ptr_nonnull(dir);
  gboolean fitted = FALSE;
  for (const char *f; (f = g_dir_read_name(dir));) {
    if (!g_str_has_suffix(f, ".json")) continue;
    cJSON *t = tree_of("analysis/trust", f);
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(t, "profile");
    ck_assert(cJSON_IsString(prof));
    fitted |= !strcmp(prof->valuestring, name);
    cJSON_Delete(t);
  }
  g_dir_close(dir);
  return fitted;
}

/* gpus_per_domain: absent, one host (the 8 of an HGX board); else whole hosts, at most 576. */
START_TEST(test_profile_domain_is_whole_hosts)
{
  gpu_profile p;
  cJSON *j = shipped_tree(); /* no gpus_per_domain: one host of 8 */
  g_autofree char *none = load_error(j, &p);
  ck_assert_msg(!none, "%s", none);
  ck_assert_int_eq(p.gpus_per_domain, 8);
  cJSON_AddNumberToObject(j, "gpus_per_domain", 72);
  g_autofree char *ok = load_error(j, &p);
  ck_assert_msg(!ok, "%s", ok);
  ck_assert_int_eq(p.gpus_per_domain, 72);
  cJSON_ReplaceItemInObjectCaseSensitive(j, "gpus_per_domain", cJSON_CreateNumber(12));
  g_autofree char *part = load_error(j, &p);
  ck_assert_str_eq(part, "P: gpus_per_domain: 12 is not a whole number of hosts of gpus_per_node = 8 (allowed: "
                         "multiples of 8 up to 576)");
  cJSON_ReplaceItemInObjectCaseSensitive(j, "gpus_per_domain", cJSON_CreateNumber(1024));
  g_autofree char *big = load_error(j, &p);
  ck_assert_msg(strstr(big, "gpus_per_domain") && strstr(big, "576"), "%s", big);
  cJSON_Delete(j);
}
END_TEST

/* The datasheet figures of the shipped GPUs, and in which precisions each was calibrated: a precision is
 * marked exactly when measured runs on that GPU in that precision were in a fit (docs/profile.md): the A100
 * (the study's and vTrain's runs: bf16, and it runs nothing else), the H100 (NVIDIA's NeMo runs: bf16 for the
 * nemo stack, fp8 for its FP8 constant: bench/calibrate-nemo.sh, calibrate-fp8.sh), the B200 (bf16 SimuMax
 * rows, fp8-cs and mxfp8 Megatron-Bridge rows: bench/calibrate-blackwell.sh), the GB200 (fp8-cs and mxfp8
 * rows only: its bf16 scale is b200's, transferred, not fitted); not the H200, the B300 (no dense rows) nor
 * the GB300 (its fit stops at its bound 1): docs/blackwell.md. A stack's trust table comes from runs on a
 * GPU only if that GPU is calibrated in bf16. */
START_TEST(test_shipped_gpus_datasheet_figures_and_calibration_mark)
{
  const guint bf16 = 1u << PREC_BF16, fp8 = 1u << PREC_FP8, cs = 1u << PREC_FP8_CS, mx = 1u << PREC_MXFP8;
  const struct { const char *name; double tflops, hbm_tbs, gib, nvlink_gbs, ib_gbs, sms, board_w; guint cal; } gpus[] = {
      {"a100-sxm4-80gb", 312, 2.039, 80, 300, 25, 108, 400, bf16 | fp8 | cs | mx}, /* "true": FP8 is refused there */
      /* the same GPU on Jean Zay's Omni-Path: its NIC is what NCCL reached there (test below) */
      {"a100-jean-zay", 312, 2.039, 80, 300, 4.6875, 108, 400, bf16 | fp8 | cs | mx},
      {"h100-sxm5-80gb", 989.4, 3.35, 80, 450, 50, 132, 700, bf16 | fp8},
      {"h200-sxm-141gb", 989.4, 4.8, 141, 450, 50, 132, 700, 0},
      /* Blackwell: half the datasheets' sparse bf16; NVLink 5 1.8 TB/s = 900 GB/s each way; 400/800 Gb/s NICs */
      {"b200", 2250, 8, 180, 900, 50, 148, 1000, bf16 | cs | mx},
      {"b300", 2250, 8, 288, 900, 100, 160, 1100, 0},
      {"gb200-nvl72", 2500, 8, 186, 900, 50, 148, 1200, cs | mx},
      {"gb300-nvl72", 2500, 8, 279, 900, 100, 160, 1400, 0}};
  /* the table covers exactly the files of platforms/profiles: a profile shipped without its figures here fails */
  g_autoptr(GPtrArray) shipped = check_shipped_profiles();
  ck_assert_uint_eq(shipped->len, G_N_ELEMENTS(gpus));
  for (guint k = 0; k < shipped->len; k++) {
    gboolean listed = FALSE;
    for (size_t i = 0; i < G_N_ELEMENTS(gpus); i++) listed |= !strcmp(gpus[i].name, shipped->pdata[k]);
    ck_assert_msg(listed, "platforms/profiles/%s.json: no datasheet figures in this test", (char *)shipped->pdata[k]);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(gpus); i++) {
    gpu_profile p;
    GError *err = NULL;
    ck_assert_msg(profile_load_named(gpus[i].name, &p, &err), "%s", err ? err->message : "");
    ck_assert_double_eq_tol(p.peak_flops, gpus[i].tflops * 1e12, 1);
    ck_assert_double_eq_tol(p.hbm_bytes_per_s, gpus[i].hbm_tbs * 1e12, 1);
    ck_assert_double_eq(p.memory_gib, gpus[i].gib);
    ck_assert_double_eq_tol(p.nvlink_bytes_per_s, gpus[i].nvlink_gbs * 1e9, 1);
    ck_assert_double_eq_tol(p.ib_bytes_per_s, gpus[i].ib_gbs * 1e9, 1);
    ck_assert_double_eq(p.sm_count, gpus[i].sms);
    ck_assert_double_eq(p.power_compute_w, gpus[i].board_w); /* dense GEMMs run at the board limit */
    ck_assert(p.power_idle_w < p.power_comm_w && p.power_comm_w < p.power_memory_w && p.power_memory_w <= p.power_compute_w);
    ck_assert_msg(p.calibrated_precisions == gpus[i].cal, "%s: calibrated precisions 0x%x", gpus[i].name,
                  p.calibrated_precisions);
    for (int prec = 0; prec < PREC_N; prec++)
      ck_assert(profile_calibrated_for(&p, prec) == !!(gpus[i].cal & (1u << prec)));
    if (a_stack_was_fitted_on(gpus[i].name)) ck_assert(profile_calibrated_for(&p, PREC_BF16));
    if (gpus[i].tflops > 2000) /* Blackwell's dense fp8 is twice its bf16 */
      ck_assert_double_eq_tol(p.peak_fp8_flops, 2 * p.peak_flops, 1);
  }
  cJSON *j = shipped_tree();
  cJSON_DeleteItemFromObject(j, "calibrated");
  gpu_profile p;
  g_autofree char *missing = load_error(j, &p);
  ck_assert_str_eq(missing, "P: calibrated: missing (allowed: true, when a stack has been fitted to measured runs on "
                            "this GPU in every precision, false, or a list of the precisions fitted: bf16, fp8, "
                            "fp8-cs, mxfp8)");
  cJSON_AddNumberToObject(j, "calibrated", 1);
  g_autofree char *number = load_error(j, &p);
  ck_assert_ptr_nonnull(strstr(number, "calibrated: a number (allowed: true"));
  cJSON_DeleteItemFromObject(j, "calibrated");
  cJSON_AddItemToObject(j, "calibrated", cJSON_Parse("[\"bf16\", \"fp9\"]"));
  g_autofree char *unknown = load_error(j, &p);
  ck_assert_str_eq(unknown, "P: calibrated[1]: 'fp9' is not a precision (allowed: bf16, fp8, fp8-cs, mxfp8)");
  cJSON_DeleteItemFromObject(j, "calibrated");
  cJSON_AddItemToObject(j, "calibrated", cJSON_Parse("[\"mxfp8\", \"mxfp8\"]"));
  g_autofree char *twice = load_error(j, &p);
  ck_assert_str_eq(twice, "P: calibrated[1]: 'mxfp8' is listed twice (allowed: each precision once)");
  cJSON_DeleteItemFromObject(j, "calibrated");
  cJSON_AddItemToObject(j, "calibrated", cJSON_Parse("[\"bf16\", 8]"));
  g_autofree char *num = load_error(j, &p);
  ck_assert_str_eq(num, "P: calibrated[1]: a number (allowed: a precision name: bf16, fp8, fp8-cs, mxfp8)");
  cJSON_Delete(j);
}
END_TEST

/* Jean Zay's A100 partition (BLOOM-176B's machine, docs/trust.md "BLOOM's step"): 4 Omni-Path NICs per node
 * (bigscience tr11-176B-ml README: "4 OmniPath links"), and what NCCL reached over them, 135 Gb/s per node
 * (S. Bekman, stas00/ml-engineering network/README.md, Omni-Path): the megatron-deepspeed stack's achieved network
 * bandwidth per node, NICs x link x its IB efficiency, is that figure; the GPU is the DGX A100 profile's. */
START_TEST(test_jean_zay_network_is_what_nccl_reached_there)
{
  gpu_profile jz, a100;
  stack_profile md;
  GError *err = NULL;
  ck_assert_msg(profile_load_named("a100-jean-zay", &jz, &err), "%s", err ? err->message : "");
  ck_assert(profile_load_named("a100-sxm4-80gb", &a100, &err));
  ck_assert(stack_load_named("megatron-deepspeed", &md, &err));
  ck_assert_int_eq(jz.nics_per_node, 4);
  ck_assert_int_eq(jz.gpus_per_node, 8);
  ck_assert_str_eq(jz.default_stack, "megatron-deepspeed");
  ck_assert_double_eq_tol(jz.nics_per_node * jz.ib_bytes_per_s * md.nccl_bw_efficiency_ib, 135e9 / 8, 1);
  /* a third of the line rate: 4 x 100 Gb/s */
  ck_assert_double_eq_tol(jz.nics_per_node * jz.ib_bytes_per_s * md.nccl_bw_efficiency_ib / (4 * 100e9 / 8), 0.3375, 1e-9);
  ck_assert_double_eq(jz.peak_flops, a100.peak_flops);
  ck_assert_double_eq(jz.hbm_bytes_per_s, a100.hbm_bytes_per_s);
  ck_assert_double_eq(jz.nvlink_bytes_per_s, a100.nvlink_bytes_per_s);
  ck_assert_double_eq(jz.memory_gib, a100.memory_gib);
}
END_TEST

/* What calibrate writes (stack_save) is a stack file: it loads back to the same values, to the last bit: a
 * fitted constant such as 0.1 + 0.2 (0.30000000000000004) was written as cJSON's 15 digits, 0.3 (found by
 * tests/fuzz/fuzz_profile.c). */
START_TEST(test_saved_stack_loads_back_unchanged)
{
  const char *names[] = {"study", "megatron-deepspeed"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    stack_profile p, q;
    ck_assert(stack_load_named(names[i], &p, NULL));
    p.gemm_efficiency = 0.1 + 0.2;
    p.launch_overhead_s = 1.5389222735688401e-05;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("lsim-stack-XXXXXX.json", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    GError *err = NULL;
    ck_assert(stack_save(&p, path, &err));
    ck_assert_msg(stack_load_file(path, &q, &err), "%s", err ? err->message : "");
    g_unlink(path);
    ck_assert_mem_eq(&p, &q, sizeof p);
  }
}
END_TEST

/* The machine and the software are two files: a profile of before the split, with a stack constant in
 * it, and a stack file with a datasheet figure, are refused naming the key; a stack file's keys are
 * each read once. */
START_TEST(test_profile_and_stack_keys_do_not_mix)
{
  gpu_profile p;
  stack_profile st;
  cJSON *old = shipped_tree();
  cJSON_AddNumberToObject(old, "gemm_efficiency", 0.78);
  g_autofree char *m_old = load_error(old, &p);
  ck_assert_msg(g_str_has_prefix(m_old, "P: unknown key 'gemm_efficiency' (allowed: name, comment, calibrated, gpus_per_node, "),
                "%s", m_old);
  cJSON_Delete(old);

  cJSON *hw = stack_tree();
  cJSON_AddNumberToObject(hw, "peak_flops", 312e12);
  g_autofree char *m_hw = stack_error(hw, &st);
  ck_assert_msg(g_str_has_prefix(m_hw, "P: unknown key 'peak_flops' (allowed: name, comment, partition, nccl_latency, attention, gemm_tile_m, "),
                "%s", m_hw);
  cJSON_Delete(hw);

  cJSON *dup = stack_tree();
  cJSON_AddNumberToObject(dup, "launch_overhead_s", 1e-6);
  g_autofree char *m_dup = stack_error(dup, &st);
  ck_assert_str_eq(m_dup, "P: key 'launch_overhead_s' appears more than once (each key may appear once)");
  cJSON_Delete(dup);

  cJSON *miss = stack_tree();
  cJSON_DeleteItemFromObjectCaseSensitive(miss, "nccl_step_latency_s");
  g_autofree char *m_miss = stack_error(miss, &st);
  ck_assert_msg(m_miss && strstr(m_miss, "nccl_step_latency_s"), "%s", m_miss ? m_miss : "(loaded)");
  cJSON_Delete(miss);
}
END_TEST

/* A stack's fields are refused outside their ranges, naming the field: the code's counts are integers, the
 * gradient precision 2 or 4 bytes, the partition one of the generator's. */
START_TEST(test_bad_stack_fields_are_refused_naming_the_field)
{
  stack_profile st;
  static const struct { const char *key; double v; const char *s, *want; } cases[] = {
      {"gemm_efficiency", 1.0000001, NULL, "P: gemm_efficiency = 1.0000001 is outside its allowed range [0.05, 1]"},
      {"mlp_in_gemms", 3, NULL, "P: mlp_in_gemms = 3 is outside its allowed range [1, 2] or not an integer"},
      {"fused_norm", 0.5, NULL, "P: fused_norm = 0.5 is outside its allowed range [0, 1] or not an integer"},
      {"grad_reduce_bytes", 3, NULL, "P: grad_reduce_bytes = 3 is not a precision (allowed: 2, 4)"},
      {"vocab_parallel_loss_bytes", 1, NULL, "P: vocab_parallel_loss_bytes = 1 is not 0 or a precision (allowed: 0, 2, 4)"},
      {"grad_buffer", 0.5, NULL, "P: grad_buffer = 0.5 is outside its allowed range [0, 1] or not an integer"},
      {"fragmentation", -0.1, NULL, "P: fragmentation = -0.1 is outside its allowed range [0, 1]"},
      /* an integer key's bounds written in full, as any count: not %g's 1.04858e+06 (which is not even the bound) */
      {"fused_softmax_max_seq", 2097152, NULL,
       "P: fused_softmax_max_seq = 2097152 is outside its allowed range [0, 1048576] or not an integer"},
      {"partition", 0, "halves", "P: partition: unknown 'halves' (allowed: auto, balanced, uniform, layers)"},
      {"partition", 0, NULL, "P: field 'partition' must be a string (got a number)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cJSON *t = stack_tree();
    cJSON_DeleteItemFromObjectCaseSensitive(t, cases[i].key); /* a key at its default is not in the file */
    cJSON_AddItemToObject(t, cases[i].key, cases[i].s ? cJSON_CreateString(cases[i].s) : cJSON_CreateNumber(cases[i].v));
    g_autofree char *m = stack_error(t, &st);
    cJSON_Delete(t);
    ck_assert_msg(m != NULL, "case %zu loaded", i);
    ck_assert_str_eq(m, cases[i].want);
  }
}
END_TEST

/* A key given twice would be read from its first place, a misspelt key ignored (the field it
 * meant then missing, or a what-if silently not applied): both are errors naming the key, the
 * unknown one with the allowed keys. `comment` is optional, and a string. */
START_TEST(test_profile_file_takes_each_known_key_once)
{
  gpu_profile p;
  cJSON *dup = shipped_tree();
  cJSON_AddNumberToObject(dup, "peak_flops", 0.1); /* cJSON appends a second member */
  g_autofree char *m_dup = load_error(dup, &p);
  ck_assert_str_eq(m_dup, "P: key 'peak_flops' appears more than once (each key may appear once)");
  cJSON_Delete(dup);

  cJSON *typo = shipped_tree();
  cJSON_AddNumberToObject(typo, "gemm_eff", 0.5);
  g_autofree char *m_typo = load_error(typo, &p);
  ck_assert_msg(g_str_has_prefix(m_typo, "P: unknown key 'gemm_eff' (allowed: name, comment, calibrated, gpus_per_node, "
                                         "nics_per_node, fabric, gpus_per_domain, nvls, default_stack, mxfp8, gemm_efficiency_scale, fp8_gemm_efficiency_scale, "
                                         "sweep_kernels, exp_per_s, peak_flops, "),
                "%s", m_typo);
  ck_assert_ptr_nonnull(strstr(m_typo, ", sm_count, leaf_nodes, oversubscription, power_idle_w, power_compute_w, power_memory_w, power_comm_w, node_power_w, peak_fp8_flops)"));
  cJSON_Delete(typo);

  /* the fabric is a name of fabric.h, and required */
  cJSON *torus = shipped_tree();
  cJSON_ReplaceItemInObjectCaseSensitive(torus, "fabric", cJSON_CreateString("torus"));
  g_autofree char *m_torus = load_error(torus, &p);
  ck_assert_str_eq(m_torus, "P: fabric: invalid value 'torus' (allowed: fat-tree, rail, rail-pxn)");
  cJSON_Delete(torus);
  cJSON *rail = shipped_tree();
  cJSON_ReplaceItemInObjectCaseSensitive(rail, "fabric", cJSON_CreateString("rail-pxn"));
  ck_assert(load_error(rail, &p) == NULL && p.fabric == FABRIC_RAIL_PXN);
  cJSON_Delete(rail);

  cJSON *no_comment = shipped_tree();
  cJSON_DeleteItemFromObjectCaseSensitive(no_comment, "comment");
  g_autofree char *m_none = load_error(no_comment, &p);
  ck_assert_msg(m_none == NULL, "%s", m_none);
  ck_assert_str_eq(p.comment, "");
  cJSON_AddNumberToObject(no_comment, "comment", 5);
  g_autofree char *m_num = load_error(no_comment, &p);
  ck_assert_str_eq(m_num, "P: field 'comment' must be a string (got a number)");
  cJSON_Delete(no_comment);
}
END_TEST

/* NICs are shared by equal groups of GPUs: a count that does not divide the node is refused with the
 * counts that would. */
START_TEST(test_nics_must_divide_the_node)
{
  gpu_profile p;
  cJSON *t = shipped_tree();
  cJSON_ReplaceItemInObjectCaseSensitive(t, "nics_per_node", cJSON_CreateNumber(3));
  g_autofree char *m = load_error(t, &p);
  ck_assert_str_eq(m, "P: nics_per_node: 3 does not divide gpus_per_node = 8 (allowed: 1, 2, 4, 8)");
  cJSON_Delete(t);
}
END_TEST

/* A profile's name reaches the reports and traces as it is: printable UTF-8 of 1 to 63 bytes (struct
 * gpu_profile holds 64), refused naming the field otherwise, never cut. */
START_TEST(test_profile_name_is_printable_utf8_of_at_most_63_bytes)
{
  gpu_profile p;
  char a63[64], a64[65];
  memset(a63, 'b', 63);
  a63[63] = '\0';
  memset(a64, 'b', 64);
  a64[64] = '\0';
  g_autofree char *want64 = g_strdup_printf("P: name: \"%s\" is 64 bytes long", a64);
  struct { const char *name, *want; } cases[] = {
      {"a100\tx", "P: name: \"a100\\tx\" holds a control or format character"},
      {"a100\x80", "P: name: \"a100\\x80\" is not valid UTF-8"},
      {a64, want64},
      {a63, NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cJSON *t = shipped_tree();
    cJSON_ReplaceItemInObjectCaseSensitive(t, "name", cJSON_CreateString(cases[i].name));
    g_autofree char *m = load_error(t, &p);
    cJSON_Delete(t);
    if (!cases[i].want) {
      ck_assert_msg(m == NULL, "case %zu: %s", i, m);
      ck_assert_str_eq(p.name, cases[i].name);
      continue;
    }
    g_autofree char *want = g_strconcat(cases[i].want, " (allowed: printable UTF-8 text, 1 to 63 bytes)", NULL);
    ck_assert_msg(m != NULL, "case %zu loaded", i);
    ck_assert_str_eq(m, want);
  }
}
END_TEST

/* A value outside its range is shown as given: %.6g printed 108.0000001 (not an integer) as 108 and
 * 1.0000001 (above 1) as 1, values the message then called outside the range. */
START_TEST(test_profile_messages_show_the_number_as_given)
{
  gpu_profile p;
  static const struct { const char *key; double v; const char *want; } cases[] = {
      {"sm_count", 108.0000001, "P: sm_count = 108.0000001 is outside its allowed range [1, 10000] or not an integer"},
      {"memory_gib", 0.0999999999, "P: memory_gib = 0.0999999999 is outside its allowed range [0.1, 100000]"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    cJSON *t = shipped_tree();
    cJSON_ReplaceItemInObjectCaseSensitive(t, cases[i].key, cJSON_CreateNumber(cases[i].v));
    g_autofree char *m = load_error(t, &p);
    cJSON_Delete(t);
    ck_assert_msg(m != NULL, "case %zu loaded", i);
    ck_assert_str_eq(m, cases[i].want);
  }
}
END_TEST

/* A what-if of leaf_nodes 0 sets "no leaf groups" on a profile that has them (a sweep's CSV writes 0 for
 * the shipped profiles, and predict reads it back), where an unset axis leaves the profile's value. */
START_TEST(test_leaf_nodes_0_is_a_value_not_unset)
{
  gpu_profile p;
  ck_assert(profile_load_named("a100-sxm4-80gb", &p, NULL));
  p.leaf_nodes = 4;
  double cap = p.memory_gib;
  plat_whatif w = {{0}};
  ck_assert(whatif_apply(&w, &p, &cap, NULL));
  ck_assert_int_eq(p.leaf_nodes, 4);
  ck_assert(whatif_parse(WHATIF_LEAF_NODES, "leaf_nodes", "0", &w.v[WHATIF_LEAF_NODES], NULL));
  ck_assert(whatif_apply(&w, &p, &cap, NULL));
  ck_assert_int_eq(p.leaf_nodes, 0);
  g_autofree char *col = whatif_format(WHATIF_LEAF_NODES, whatif_profile_value(WHATIF_LEAF_NODES, &p));
  ck_assert_str_eq(col, "0");
}
END_TEST

/* A what-if outside its range names the option, the value and the range, the bounds of an integer written as
 * integers: --leaf-nodes' largest as 1000000 (it was %g's 1e+06), the same for each integer axis; a number
 * axis' bounds as given (0.008, 800000). */
START_TEST(test_whatif_range_messages_write_integers_in_full)
{
  static const struct { whatif_axis a; const char *field, *value, *want; } cases[] = {
      {WHATIF_LEAF_NODES, "--leaf-nodes", "99999999",
       "--leaf-nodes: invalid value '99999999' (allowed: an integer from 0 to 1000000)"},
      {WHATIF_LEAF_NODES, "leaf_nodes", "-1", "leaf_nodes: invalid value '-1' (allowed: an integer from 0 to 1000000)"},
      {WHATIF_NICS_PER_NODE, "--nics-per-node", "2048",
       "--nics-per-node: invalid value '2048' (allowed: an integer from 1 to 1024)"},
      {WHATIF_IB_GBPS, "--ib-gbps", "0", "--ib-gbps: invalid value '0' (allowed: a number from 0.008 to 800000)"},
      {WHATIF_OVERSUBSCRIPTION, "--oversubscription", "0.5",
       "--oversubscription: invalid value '0.5' (allowed: a number from 1 to 1000)"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    double v = 0;
    g_autoptr(GError) err = NULL;
    ck_assert_msg(!whatif_parse(cases[i].a, cases[i].field, cases[i].value, &v, &err), "case %zu taken", i);
    ck_assert_str_eq(err->message, cases[i].want);
  }
}
END_TEST

int main(void)
{
Suite *s = suite_create("profile");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, test_every_shipped_profile_and_stack_loads);
  tcase_add_test(tc, test_shipped_gpus_datasheet_figures_and_calibration_mark);
  tcase_add_test(tc, test_jean_zay_network_is_what_nccl_reached_there);
  tcase_add_test(tc, test_profile_domain_is_whole_hosts);
  tcase_add_test(tc, test_saved_stack_loads_back_unchanged);
  tcase_add_test(tc, test_profile_and_stack_keys_do_not_mix);
  tcase_add_test(tc, test_bad_stack_fields_are_refused_naming_the_field);
  tcase_add_test(tc, test_profile_file_takes_each_known_key_once);
  tcase_add_test(tc, test_nics_must_divide_the_node);
  tcase_add_test(tc, test_profile_name_is_printable_utf8_of_at_most_63_bytes);
  tcase_add_test(tc, test_profile_messages_show_the_number_as_given);
  tcase_add_test(tc, test_leaf_nodes_0_is_a_value_not_unset);
  tcase_add_test(tc, test_whatif_range_messages_write_integers_in_full);
  suite_add_tcase(s, tc);
  return check_run(s);
}
