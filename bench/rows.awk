# rows.awk -- the row conversion the bench/*-rows.awk scripts of ../shared/validation/ tables share (moe-rows.awk,
# blackwell-rows.awk; external-rows.awk takes skip, note and pad): a measured row's columns as layoutsim's options. Prepend bench/csv.awk, then this file:
#
#   awk -v who=NAME -v skips=SKIPS.tsv -f bench/csv.awk -f bench/rows.awk -f bench/NAME.awk IN.csv...
#
# A function that refuses a row writes it to SKIPS ("FILE<TAB>LINE<TAB>MODEL<TAB>REASON") and returns "" (or 0):
# the script then goes to the next row.
function skip(reason) { printf "%s\t%d\t%s\t%s\n", FILENAME, FNR, cell("model_name"), reason >> skips }
# The value of KEY=VALUE in the row's notes ("a=1; b=2"), "" where it has none.
function note(key,    n, a, i) { n = split(cell("notes"), a, /; */); for (i = 1; i <= n; i++) if (index(a[i], key "=") == 1) return substr(a[i], length(key) + 2); return "" }
# The leading number of s ("8 (stated)" -> 8), "" where it has none.
function num(s) { sub(/^ */, "", s); sub(/[^0-9.+-].*/, "", s); return s }
# The vocabulary v padded as Megatron pads it at tp t: a multiple of 128 * t.
function pad(v, t,    q) { q = 128 * t; return int((v + q - 1) / q) * q }
# The columns every table of ../shared/validation/README.md has (at its first line).
function rows_need() { need("model_name layers hidden heads ffn vocab seq_len arch gpus gpu_type tp pp dp sp micro_batch global_batch recompute schedule measured_step_time_s notes", "as in ../shared/validation/README.md") }
# The system of gpu_type, its first word ("GB200 (NVL72)" -> GB200).
function rows_system(   s) { s = cell("gpu_type"); sub(/[ (].*/, "", s); return s }
# The shipped profile of a system: H100 -> h100-sxm5-80gb, B200 -> b200, B300 -> b300, GB200 -> gb200-nvl72, GB300 ->
# gb300-nvl72; "" (skipped) for any other.
function rows_profile(sys,    p) {
  p = sys == "H100" ? "h100-sxm5-80gb" : sys == "B200" ? "b200" : sys == "B300" ? "b300" : sys == "GB200" ? "gb200-nvl72" : sys == "GB300" ? "gb300-nvl72" : ""
  if (p == "") skip("GPU " sys ": no profile mapped")
  return p
}
# The precision of notes precision= (bf16 where not stated): bf16, fp8-cs or mxfp8; "" (skipped) for nvfp4 (not
# modelled), mxfp8 on the H100 (no MX tensor cores) and any other.
function rows_precision(sys,    pr) {
  pr = tolower(note("precision")); sub(/[ (].*/, "", pr); pr = pr == "" ? "bf16" : pr
  if (pr == "nvfp4") { skip("precision nvfp4: not modelled"); return "" }
  if (pr == "mxfp8" && sys == "H100") { skip("mxfp8 on H100: the Hopper has no MX tensor cores"); return "" }
  if (pr != "bf16" && pr != "fp8-cs" && pr != "mxfp8") { skip("precision " pr); return "" }
  return pr
}
# The schedule column into the globals sched (1f1b, interleaved) and vs (virtual stages: interleaved-vN's N); 0
# (skipped) for any other schedule.
function rows_schedule(   s) {
  s = cell("schedule")
  if (s != "1f1b" && s !~ /^interleaved-v[0-9]+$/) { skip("schedule " s); return 0 }
  sched = s == "1f1b" ? "1f1b" : "interleaved"; vs = s == "1f1b" ? 1 : substr(s, 14) + 0
  return 1
}
# Context parallelism from notes cp= (1 where not stated).
function rows_cp(   cp) { cp = num(note("cp")); return cp == "" ? 1 : cp }
# Sequence parallelism: the sp column, or, not stated, on where tp t > 1 (the perf recipes' default).
function rows_sp(t,    sp) { sp = cell("sp"); return sp == "" ? (t > 1 ? 1 : 0) : sp }
