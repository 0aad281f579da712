#!/usr/bin/env bash
# The FP8 constant of a stack (docs/precision.md): measured FP8 runs of NeMo (Transformer Engine, current
# scaling) -- the FP8 rows of ../shared/validation/nvidia_dgxc_h100.csv, H100 -- converted by
# bench/external-rows.awk, and a fit of fp8_gemm_efficiency alone (calibrate --fit fp8) with every bf16
# constant of the stack held, on profile h100-sxm5-80gb. Prints the FP8 rows' MAPE before (the rows run as
# bf16: what layoutsim predicted before it knew FP8; and with the stack's prior FP8 constant) and after the
# fit, per model, then the FP8/BF16 speed-up the fitted model predicts for three measured layouts (Llama 3.1
# 8B, 70B, GPT-3 175B) beside the measured one, with each layout's time breakdown in both precisions (what
# keeps the speed-up under 2x: docs/precision.md).
#
# The fit's rows: the Llama 3.1 FP8 rows (8B, 70B, the 405B proxies) at up to 256 GPUs, one per model and GPU
# count; the others (Llama above 256 GPUs, GPT-3 175B) are left out and judged.
#
# Usage: bash bench/calibrate-fp8.sh CSV WORK_DIR [STACK [MAX_EVALS]]
#   CSV: a measured-runs table of ../shared/validation/ (nvidia_dgxc_h100.csv; other tables' H100 rows
#   in fp8 are read alike); STACK: the stack whose bf16 constants are held (default platforms/stacks/nemo.json);
#   MAX_EVALS default 20. Writes WORK_DIR/STACK-fp8.json (copy it over the stack to ship it). WORK_DIR must lie
#   outside the repository.
. "$(dirname "$0")/lib.sh"
bench_start calibrate-fp8 "CSV WORK_DIR [STACK [MAX_EVALS]]" 2 4 "$@"
src="$1"
[ -f "$src" ] || die "no $src"
stack=${3:-$repo/platforms/stacks/nemo.json}
[ -f "$stack" ] || die "no stack file $stack"
evals=${4:-20}
[[ "$evals" =~ ^[1-9][0-9]*$ ]] || die "MAX_EVALS '$evals' is not a positive integer"
bench_work "$2" models
prof=h100-sxm5-80gb
bench_rows external-rows external-rows.awk -v models="$work/models" -v standin=0 -v precisions="bf16 fp8" "$src" > "$work/all.csv"
# the FP8 rows on the H100; the same rows as bf16 (the "before")
awk -v who=calibrate-fp8 -v want=fp8 -f "$here/csv.awk" -f /dev/stdin "$work/all.csv" > "$work/fp8.csv" <<'AWK'
NR == 1 { need("precision profile", "as bench/external-rows.awk writes"); print; next }
cell("precision") == want && cell("profile") == "h100-sxm5-80gb"
END { if (bad) exit 2 }
AWK
sed '1!s/,fp8$/,bf16/' "$work/fp8.csv" > "$work/fp8-as-bf16.csv"
# the fit's rows, the profile column dropped (calibrate fits on --profile)
awk -v who=calibrate-fp8 -f "$here/csv.awk" -f /dev/stdin "$work/fp8.csv" > "$work/fit.csv" <<'AWK'
NR == 1 { need("model gpus profile", "as bench/external-rows.awk writes"); pc = col["profile"] }
{ keep = NR == 1 || (cell("model") ~ /^llama/ && cell("model") !~ /405b-kv/ && cell("gpus") + 0 <= 256 && !seen[cell("model") " " cell("gpus")]++) }
keep { out = ""; for (i = 1; i <= nf; i++) if (i != pc) out = out (out == "" ? "" : ",") v[i]; print out }
END { if (bad) exit 2 }
AWK
nfp8=$(($(wc -l < "$work/fp8.csv") - 1))
[ "$nfp8" -gt 0 ] || die "no FP8 H100 row in $src"
echo "calibrate-fp8: $nfp8 FP8 rows, $(($(wc -l < "$work/fit.csv") - 1)) in the fit; stack $(basename "$stack") held but fp8_gemm_efficiency"
name=$(basename "$stack" .json)
"$bin" calibrate "$work/fit.csv" --stack "$stack" --profile "$prof" --fit fp8 --max-evals "$evals" -o "$work/$name-fp8.json"
summary() { # validate's rows -> MAPE and bias per model
  awk -v who=calibrate-fp8 -f "$here/csv.awk" -f /dev/stdin "$1" <<'AWK'
NR == 1 { need("setting error_pct", "as validate -o writes"); next }
cell("error_pct") != "" {
  s = cell("setting"); g = s; sub(/ seq .*/, "", s); sub(/.*, /, "", g); sub(/ GPUs.*/, "", g)
  k = s (s ~ /^llama/ && s !~ /405b-kv/ && g + 0 <= 256 ? " (in the fit)" : "")
  e = cell("error_pct") + 0; n[k]++; a[k] += e < 0 ? -e : e; b[k] += e; N++; A += e < 0 ? -e : e
}
END {
  if (bad) exit 2
  printf "  %-48s %5s %7s %7s\n", "model", "rows", "mape%", "bias%"
  for (k in n) printf "  %-48s %5d %7.2f %+7.2f\n", k, n[k], a[k] / n[k], b[k] / n[k] | "sort"
  close("sort")
  printf "  %-48s %5d %7.2f\n", "all", N, N ? A / N : 0
}
AWK
}
echo "== before: the FP8 rows run as bf16 (--stack $name)"
"$bin" validate "$work/fp8-as-bf16.csv" --stack "$stack" -o "$work/rows-bf16.csv" > /dev/null
summary "$work/rows-bf16.csv"
echo "== before: the FP8 rows in fp8 with the stack's prior fp8_gemm_efficiency"
"$bin" validate "$work/fp8.csv" --stack "$stack" -o "$work/rows-prior.csv" > /dev/null
summary "$work/rows-prior.csv"
echo "== after: the FP8 rows in fp8 with the fitted stack ($name-fp8.json)"
"$bin" validate "$work/fp8.csv" --stack "$work/$name-fp8.json" -o "$work/rows-fit.csv" > /dev/null
summary "$work/rows-fit.csv"
# three measured layouts in both precisions: the first row of each model at its smallest GPU count
awk -v who=calibrate-fp8 -f "$here/csv.awk" -f /dev/stdin "$work/all.csv" > "$work/pairs.csv" <<'AWK'
NR == 1 { need("model gpus precision profile schedule virtual_stages", "as bench/external-rows.awk writes"); print; next }
cell("profile") == "h100-sxm5-80gb" && cell("model") ~ /^(llama3.1-8b|llama3.1-70b|gpt3-175b)/ {
  k = cell("model") " " cell("gpus") " " cell("tp") " " cell("pp") " " cell("cp") " " cell("virtual_stages")
  if (!(k in row)) { row[k] = $0; order[++n] = k }
  if (cell("precision") == "fp8") fp8[k] = cell("step_time_s"); else bf16[k] = cell("step_time_s")
}
END {
  if (bad) exit 2
  for (i = 1; i <= n; i++) { k = order[i]; m = k; sub(/ .*/, "", m); if (!(m in done) && (k in fp8) && (k in bf16)) { done[m] = 1; print row[k] } }
}
AWK
echo "== FP8/BF16 speed-up, predicted (fitted stack) and measured; breakdown per step (s) in bf16 -> fp8"
tail -n +2 "$work/pairs.csv" | while IFS= read -r line; do
  head -1 "$work/pairs.csv" > "$work/pair.csv"
  echo "$line" | sed 's/,fp8$/,bf16/' >> "$work/pair.csv"
  echo "$line" | sed 's/,bf16$/,fp8/' >> "$work/pair.csv"
  "$bin" predict "$work/pair.csv" --stack "$work/$name-fp8.json" -o "$work/pair-out.csv" > /dev/null
  model=$(echo "$line" | cut -d, -f1)
  mb=$(awk -F, -v m="$model" 'NR > 1 && $1 == m && $NF == "bf16" { print $21; exit }' "$work/all.csv")
  mf=$(awk -F, -v m="$model" 'NR > 1 && $1 == m && $NF == "fp8" { print $21; exit }' "$work/all.csv")
  awk -v who=calibrate-fp8 -v model="$model" -v mb="$mb" -v mf="$mf" -f "$here/csv.awk" -f /dev/stdin "$work/pair-out.csv" <<'AWK'
NR == 1 { need("pred_step_time_s precision gpus tp pp cp", "as predict -o writes"); next }
{ t[cell("precision")] = cell("pred_step_time_s"); lay = sprintf("%d GPUs tp %d pp %d cp %d", cell("gpus"), cell("tp"), cell("pp"), cell("cp")) }
END {
  if (bad) exit 2
  printf "  %-28s %-28s bf16 %7.3f s  fp8 %7.3f s  predicted x%.2f  measured x%.2f (%s s / %s s)\n", model, lay, t["bf16"], t["fp8"], t["bf16"] / t["fp8"], mb / mf, mb, mf
}
AWK
done
echo "calibrate-fp8: wrote $work/$name-fp8.json"
