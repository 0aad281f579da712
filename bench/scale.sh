#!/usr/bin/env bash
# Trust at scale (issue 25): per shared multi-node file of ../shared/validation (a file with a row above
# 8 GPUs) and per node-count bucket (1, 2-16, 17-64, 65-512, >512 nodes of 8 GPUs), the rows, MAPE and
# mean signed error (bias) of the step time, one column group per mechanism switched on cumulatively, so
# the effect of each is visible, and the last column group's band coverage (rows whose |error| lies inside their
# band) with the bands' widths (bench/bands.sh derives the band's constants and its leave-one-source-out coverage) (docs/trust.md, "Mechanisms that grow with scale"):
#   baseline   the shipped stacks as they are;
#   +nccl-lat  "nccl_latency": "tuned": NCCL's own latency per collective (platforms/nccl_tune.h);
#   +straggler "straggler_sigma": SIGMA (default 0.015, docs/trust.md "Stragglers"): compute waits for the
#              slowest of the job's GPUs (sim/straggler.h);
#   +grad-accum "grad_accum_bytes" on megatron-deepspeed (docs/trust.md "BLOOM's step"): the gradient accumulation
#              pass after each micro-batch's backward, 6 bytes a parameter (autograd's AccumulateGrad in DeepSpeed's
#              fp16 engine; Megatron-LM 2021's main_grad.add_ in fp16) and 18 on the rows the source file says ran
#              bf16 (DeepSpeed's BF16_Optimizer.update_hp_grads: cast to fp32, add); nemo none (Megatron-Core fuses
#              the accumulation into the weight-gradient GEMM);
#   +pipe-sg   "pipe_scatter_gather": 1 on megatron-deepspeed (docs/trust.md "BLOOM's step"): without sp, each
#              tensor-parallel rank sends 1/tp of a pipeline tensor and the receiver all-gathers it over tp
#              (DeepSpeed's PartitionedTensor, Megatron-LM 2021's --scatter-gather-tensors-in-pipeline); nemo none.
#   +tp-sync   "tp_async_grad_reduce": 0 on megatron-deepspeed (docs/trust.md "Megatron-LM 2021's blocking tensor-parallel
#              all-reduce"): both files' code predates the asynchronous input-gradient all-reduce (Megatron-LM 6985e58,
#              2021-08-18, the SC'21 runs' commit; the async path first in 16c9044, 2021-09-02, opt-in; BLOOM's fork,
#              bigscience-workshop/Megatron-DeepSpeed, never had it): the all-reduce follows the whole backward GEMM;
#              nemo unchanged.
#   +launch-blocking "launch_blocking": 1 on megatron-deepspeed, BLOOM's rows only (docs/trust.md "BLOOM's step"): its
#              slurm exports CUDA_LAUNCH_BLOCKING=1 (bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm),
#              so each launch's host dispatch lies in series with the GPU; the other files' rows are the variant
#              before's (their scripts do not set it). Last in VARIANTS.
# A variant whose stacks are those of the one before it for a file reuses that one's rows.
# The rows are converted as bench/external.sh does (bench/external-rows.awk), with fp16 rows run as bf16
# (-v fp16=bf16) and FP8 rows kept; NeMo's rows (nvidia_dgxc_h100, megatron_bridge) run on the nemo stack,
# the others on megatron-deepspeed (Megatron-LM's nearest). Each variant is a copy of the stack with the
# key added, written to WORK_DIR. Nothing is fitted here.
# WORK_DIR must lie outside the repository (it holds rows derived from other people's measurements).
# At most MAX_ROWS rows per file (default 30, every k-th expressible row: BLOOM's 103 rows at 48 nodes take
# most of an hour per variant on 2 shared cores); PRECISIONS (default bf16; "bf16 fp8 fp8-cs" adds FP8 rows).
# Usage: bash bench/scale.sh VALIDATION_DIR WORK_DIR [JOBS]
#   (env SIGMA, VARIANTS="baseline nccl-lat straggler" (also grad-accum, pipe-sg, tp-sync, launch-blocking), MAX_ROWS,
#   PRECISIONS)
. "$(dirname "$0")/lib.sh"
bench_start scale "VALIDATION_DIR WORK_DIR [JOBS]" 2 3 "$@"
jobs=${3:-2}
bench_positive JOBS "$jobs"
sigma=${SIGMA:-0.015}
[[ "$sigma" =~ ^0(\.[0-9]+)?$ ]] || die "SIGMA '$sigma' is not a number in [0, 1)"
variants=${VARIANTS:-baseline nccl-lat straggler}
precisions=${PRECISIONS:-bf16}
max_rows=${MAX_ROWS:-30}
bench_positive MAX_ROWS "$max_rows"
for v in $variants; do
  case $v in baseline | nccl-lat | straggler | grad-accum | pipe-sg | tp-sync | launch-blocking) ;; *) die "VARIANTS: '$v' (allowed: baseline, nccl-lat, straggler, grad-accum, pipe-sg, tp-sync, launch-blocking)" ;; esac
done
case " $variants " in *" launch-blocking "?*) die "VARIANTS: 'launch-blocking' must come last (it applies to BLOOM's rows only)" ;; esac
[ -d "$1" ] || die "no directory '$1'"
bench_work "$2" models
mkdir -p "$work/stacks"

# the stack variants: cumulative keys on the shipped stacks
for s in megatron-deepspeed nemo; do
  keys=""; accum=0; sync=0
  for v in $variants; do
    case $v in
      nccl-lat) keys="$keys\"nccl_latency\": \"tuned\", " ;;
      straggler) keys="$keys\"straggler_sigma\": $sigma, " ;;
      grad-accum) [ "$s" = megatron-deepspeed ] && accum=1 ;;
      pipe-sg) [ "$s" = megatron-deepspeed ] && keys="$keys\"pipe_scatter_gather\": 1, " ;;
      tp-sync) [ "$s" = megatron-deepspeed ] && sync=1 ;;
      launch-blocking) [ "$s" = megatron-deepspeed ] && keys="$keys\"launch_blocking\": 1, " ;;
    esac
    if [ "$accum" = 1 ]; then # fp16 rows 6 bytes, the source's bf16 rows 18 (a stack of their own)
      sed "0,/{/s//{ $keys\"grad_accum_bytes\": 6, /" "$repo/platforms/stacks/$s.json" > "$work/stacks/$s-$v.json"
      sed "0,/{/s//{ $keys\"grad_accum_bytes\": 18, /" "$repo/platforms/stacks/$s.json" > "$work/stacks/$s-$v-bf16.json"
    else
      sed "0,/{/s//{ $keys/" "$repo/platforms/stacks/$s.json" > "$work/stacks/$s-$v.json"
    fi
    if [ "$sync" = 1 ]; then # the shipped stack's key set to 0 in place (a second key would be ambiguous)
      for f in "$work/stacks/$s-$v.json" "$work/stacks/$s-$v-bf16.json"; do
        [ -f "$f" ] || continue
        grep -q '"tp_async_grad_reduce": 1' "$f" || die "tp-sync: no '\"tp_async_grad_reduce\": 1' in $s's stack"
        sed -i 's/"tp_async_grad_reduce": 1/"tp_async_grad_reduce": 0/' "$f"
      done
    fi
  done
done

shopt -s nullglob
files=("$1"/*.csv)
[ ${#files[@]} -gt 0 ] || die "no *.csv in '$1'"
names=()
for f in "${files[@]}"; do
  name=$(basename "$f" .csv)
  awk -v who=scale -f "$here/csv.awk" -f <(echo 'NR > 1 && cell("gpus") + 0 > 8 { m = 1 } END { exit !m }') "$f" || continue
  out="$work/$name.csv"
  awk -v who=external-rows -v models="$work/models" -v skips="$work/skipped.tsv" -v fp16=bf16 \
    -v precisions="$precisions" -f "$here/csv.awk" -f "$here/rows.awk" -f "$here/external-rows.awk" "$f" > "$out.all"
  kept=$(($(wc -l < "$out.all") - 1))
  # at most MAX_ROWS rows per file, evenly spaced: every k-th, k a power of two (deterministic, and a smaller
  # MAX_ROWS takes a subset of a larger one's rows: the table compares the rows every variant ran)
  k=1; while [ $((k * max_rows)) -lt "$kept" ]; do k=$((k * 2)); done
  awk -v k="$k" 'NR == 1 || (NR - 2) % k == 0' "$out.all" > "$out"
  echo "== $name: $kept of $(($(wc -l < "$f") - 1)) rows expressible, $(($(wc -l < "$out") - 1)) run (every ${k}th)" >&2
  [ "$kept" -gt 0 ] && names+=("$name")
done
stack_of() { case $1 in nvidia_dgxc*|megatron_bridge*) echo nemo ;; *) echo megatron-deepspeed ;; esac; }
prev=""
for v in $variants; do # variant-major: the baseline of every file first
  for name in "${names[@]}"; do
    [ -s "$work/$name-$v-rows.csv" ] && continue # already run (delete to re-run)
    if [ "$v" = launch-blocking ] && [ -n "$prev" ] && [[ "$name" != bloom* ]]; then
      cp "$work/$name-$prev-rows.csv" "$work/$name-$v-rows.csv" # only BLOOM's slurm sets CUDA_LAUNCH_BLOCKING=1
      continue
    fi
    st="$work/stacks/$(stack_of "$name")-$v" pst="$work/stacks/$(stack_of "$name")-$prev"
    if [ -n "$prev" ] && cmp -s "$st.json" "$pst.json" && { [ ! -f "$st-bf16.json" ] || cmp -s "$st-bf16.json" "$pst-bf16.json"; }; then
      cp "$work/$name-$prev-rows.csv" "$work/$name-$v-rows.csv" # the same stacks as the variant before
      continue
    fi
    echo "   $v: $name" >&2
    if [ -f "$st-bf16.json" ]; then
      # the rows the source file says ran bf16 (its precision note) apart, on the bf16 stack; then merged in order
      awk -v who=scale -f "$here/csv.awk" -f <(echo 'NR > 1 && cell("notes") ~ /(^|; *)precision=bf16/ { print NR }') \
        "$1/$name.csv" > "$work/$name-bf16-lines.txt"
      for part in other bf16; do
        awk -v who=scale -v part="$part" -v lines="$work/$name-bf16-lines.txt" -f "$here/csv.awk" -f <(echo '
          BEGIN { while ((getline l < lines) > 0) bf[l] = 1 }
          NR == 1 || ((cell("source_row") in bf) == (part == "bf16")) { print }') "$work/$name.csv" > "$work/$name-$part.csv"
        if [ "$(wc -l < "$work/$name-$part.csv")" -gt 1 ]; then
          "$bin" validate "$work/$name-$part.csv" --stack "$st$([ $part = bf16 ] && echo -bf16).json" -j "$jobs" \
            -o "$work/$name-$v-$part.tmp" > /dev/null
        else
          : > "$work/$name-$v-$part.tmp" # no row
        fi
      done
      awk -v who=scale -v lines="$work/$name-bf16-lines.txt" -v a="$work/$name-$v-other.tmp" -v b="$work/$name-$v-bf16.tmp" \
        -f "$here/csv.awk" -f <(echo '
          BEGIN { while ((getline l < lines) > 0) bf[l] = 1; ha = (getline h < a) > 0; hb = (getline hh < b) > 0; print ha ? h : hh }
          NR > 1 { f = (cell("source_row") in bf) ? b : a; if ((getline l < f) <= 0) { print "scale: rows short in " f > "/dev/stderr"; exit 2 }; print l }') \
        "$work/$name.csv" > "$work/$name-$v-rows.tmp"
    else
      "$bin" validate "$work/$name.csv" --stack "$st.json" -j "$jobs" -o "$work/$name-$v-rows.tmp" > /dev/null
    fi
    mv "$work/$name-$v-rows.tmp" "$work/$name-$v-rows.csv"
  done
  prev=$v
done

# the table: per file and bucket, per variant: rows, MAPE, bias
echo "| file | nodes | rows |$(for v in $variants; do printf ' %s mape%% | %s bias%% |' "$v" "$v"; done) in band | band +-% median (min-max) |"
echo "|---|---|---|$(for v in $variants; do printf -- '---|---|'; done)---|---|"
for name in "${names[@]}"; do
  args=()
  for v in $variants; do # each file to the columns the table needs (validate -o's columns grew: band_pct)
    awk -v who=scale -f "$here/csv.awk" -f <(echo 'NR == 1 { need("setting layout error_pct", "as validate -o writes"); print "setting,layout,error_pct,band_pct"; next }
      { q = "\""; s = cell("setting"); gsub(q, q q, s); l = cell("layout"); gsub(q, q q, l)
        printf "%s%s%s,%s%s%s,%s,%s\n", q, s, q, q, l, q, cell("error_pct"), ("band_pct" in col) ? cell("band_pct") : "" }') \
      "$work/$name-$v-rows.csv" > "$work/$name-$v-rows.norm"
    args+=("$work/$name-$v-rows.norm")
  done
  awk -v who=scale -v file="$name" -v nv="$(echo $variants | wc -w)" -f "$here/csv.awk" -f /dev/stdin "${args[@]}" <<'AWK'
FNR == 1 { vi++; next }
{ # a row by its place in the file (the files repeat runs of one layout); kept where every variant timed it
  key = FNR
  if (cell("error_pct") == "") next
  err[vi, key] = cell("error_pct") + 0; cnt[key]++; setting[key] = cell("setting")
  if (cell("band_pct") != "") band[vi, key] = cell("band_pct") + 0
}
END {
  if (bad) exit 2
  for (key in cnt) {
    if (cnt[key] != nv) continue
    g = setting[key]; sub(/ GPUs.*/, "", g); sub(/.*, /, "", g); nodes = int((g + 7) / 8)
    b = nodes <= 1 ? "1" : nodes <= 16 ? "2-16" : nodes <= 64 ? "17-64" : nodes <= 512 ? "65-512" : ">512"
    seen[b] = 1
    for (i = 1; i <= nv; i++) {
      e = err[i, key]
      n[i, b]++; a[i, b] += e < 0 ? -e : e; s2[i, b] += e
      n[i, "all"]++; a[i, "all"] += e < 0 ? -e : e; s2[i, "all"] += e
      if ((i, key) in band) {
        nb[i, b]++; nb[i, "all"]++; if ((e < 0 ? -e : e) <= band[i, key]) { cov[i, b]++; cov[i, "all"]++ }
        if (i == nv) { w[b, nb[i, b]] = band[i, key]; w["all", nb[i, "all"]] = band[i, key] }
      }
    }
  }
  split("1 2-16 17-64 65-512 >512 all", order, " ")
  for (k = 1; k <= 6; k++) {
    b = order[k]
    if (b != "all" && !(b in seen)) continue
    line = sprintf("| %s | %s | %d |", file, b, n[1, b])
    for (i = 1; i <= nv; i++) line = line sprintf(" %.2f | %+.2f |", n[i, b] ? a[i, b] / n[i, b] : 0, n[i, b] ? s2[i, b] / n[i, b] : 0)
    # the band's coverage (the last variant's bands: the share of rows whose |error| lies inside their band)
    line = line (nb[nv, b] ? sprintf(" %d/%d |", cov[nv, b], nb[nv, b]) : " - |")
    # the bands' widths: median (min-max) of +-%, beside the coverage (a band that covers by being wide is no win)
    m = nb[nv, b]; delete x
    for (j = 1; j <= m; j++) x[j] = w[b, j]
    for (j = 1; j <= m; j++) for (q = j + 1; q <= m; q++) if (x[q] < x[j]) { t = x[j]; x[j] = x[q]; x[q] = t }
    line = line (m ? sprintf(" %.1f (%.1f-%.1f) |", m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2, x[1], x[m]) : " - |")
    print line
  }
}
AWK
done
