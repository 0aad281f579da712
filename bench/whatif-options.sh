#!/usr/bin/env bash
# What if the study had had other training options? (issue 16, item 6.) For each of the study's
# settings (model, sequence length, GPU count) and each named option set below, sweeps the study's
# search space with that option set's flags and keeps the fastest layout that fits; then writes
# docs/whatif-options.md, a table per setting (option set -> best layout, MFU, change in MFU points
# against the study's own options, and the main cause from the sweep's time breakdown), and one SVG
# per setting (the best MFU of each option set) in docs/img/. Predictions only: no measured data is
# read.
#
# Adding an option is one entry of OPTION_SETS: "name|sweep flags". The first entry is the study's
# options (1F1B, checkpointing none or every_layer): every change is against it.
#
# Usage: bash bench/whatif-options.sh [DOC_DIR [WORK_DIR [JOBS]]]
#   DOC_DIR  where whatif-options.md and img/whatif-options-*.svg go (default: the tree's docs/)
#   WORK_DIR the sweeps' CSVs (default: a fresh temporary directory)
#   JOBS     sweep -j (default 2). About 2 minutes on 2 cores.
set -euo pipefail
die() { echo "whatif-options: $*" >&2; exit 2; }
[ $# -le 3 ] || die "usage: bash bench/whatif-options.sh [DOC_DIR [WORK_DIR [JOBS]]]"
here=$(cd "$(dirname "$0")" && pwd -P)
doc=${1:-$here/../docs} work=${2:-$(mktemp -d)} jobs=${3:-2}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "JOBS: '$jobs' is not a positive integer"
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work" "$doc/img"

# The study's settings: name, model, sequence length, GPUs. 13B-2k on 64 and 65B-2k on 128 GPUs are
# the settings of its published sweeps; 13B-8k and 30B are not in the published files, and their GPU
# counts (128, 256) are this script's choice: change them here.
SETTINGS=(
  "13B-2k llama-13b 2048 64"
  "13B-8k llama-13b 8192 128"
  "30B-2k llama-30b 2048 256"
  "30B-8k llama-30b 8192 256"
  "65B-2k llama-65b 2048 128"
)
# The study's search space, the same for every setting: tensor parallelism 1-8 inside a node (the
# sweep counts as invalid what a model does not allow: llama-30b's 52 heads take tp 1, 2, 4), pipeline
# 1-8, micro-batch 1-4, sequence parallelism off and on, FlashAttention 2 with the fused RMSNorm
# kernel, the default global batch (4M tokens: 2048 sequences at 2k, 512 at 8k).
# shellcheck disable=SC2054 # the commas are the sweep's lists
SPACE=(--tp 1,2,4,8 --pp 1,2,4,8 --micro-batch 1,2,4 --sp 0,1 --attention-kernel flash2+rmsnorm)
# The option sets: "name|flags added to the sweep": schedules, recompute variants, ZeRO stages and the
# overlap of gradient reduction and parameter gathering (the study's: 1F1B, ZeRO-1, nothing overlapped).
OPTION_SETS=(
  "study|--schedule 1f1b --checkpointing none,every_layer"
  "gpipe|--schedule gpipe --checkpointing none,every_layer"
  "interleaved V2|--schedule interleaved --virtual-stages 2 --checkpointing none,every_layer"
  "interleaved V4|--schedule interleaved --virtual-stages 4 --checkpointing none,every_layer"
  "zb-h1|--schedule zb-h1 --checkpointing none,every_layer"
  "no recompute|--schedule 1f1b --checkpointing none"
  "every_layer only|--schedule 1f1b --checkpointing every_layer"
  "selective only|--schedule 1f1b --checkpointing selective"
  "mlp only|--schedule 1f1b --checkpointing mlp"
  "study + mlp|--schedule 1f1b --checkpointing none,every_layer,mlp"
  "study + selective + mlp|--schedule 1f1b --checkpointing none,every_layer,selective,mlp"
  "ZeRO 0|--schedule 1f1b --checkpointing none,every_layer --zero 0"
  "ZeRO 2|--schedule 1f1b --checkpointing none,every_layer --zero 2"
  "ZeRO 3|--schedule 1f1b --checkpointing none,every_layer --zero 3"
  "overlap grad reduce|--schedule 1f1b --checkpointing none,every_layer --overlap-grad-reduce"
  "ZeRO 1 + both overlaps|--schedule 1f1b --checkpointing none,every_layer --overlap-grad-reduce --overlap-param-gather"
  "ZeRO 2 + both overlaps|--schedule 1f1b --checkpointing none,every_layer --zero 2 --overlap-grad-reduce --overlap-param-gather"
)

best="$work/best.tsv"
: > "$best"
for st in "${SETTINGS[@]}"; do
  read -r sname model seq gpus <<< "$st"
  for os in "${OPTION_SETS[@]}"; do
    oname=${os%%|*} flags=${os#*|}
    out="$work/${sname}-${oname// /_}.csv"
    # shellcheck disable=SC2086
    "$bin" sweep --model "$model" --seq-len "$seq" --gpus "$gpus" "${SPACE[@]}" $flags -j "$jobs" --format csv -o "$out"
    # the fastest layout that fits (the ranking puts them first), or a row saying none does
    awk -v who=whatif-options -v s="$sname" -v o="$oname" "$(cat "$here/csv.awk")"'
      NR == 1 { need("rank status tp pp micro_batch sp checkpointing schedule virtual_stages step_time_s mfu bubble_fraction peak_mem_gib flags t_forward_s t_backward_s t_recompute_s t_tp_comm_s t_pp_wait_s t_dp_comm_s t_optimizer_s t_idle_s", "layoutsim sweep --format csv"); next }
      cell("status") == "ok" { n++ }
      cell("status") == "ok" && !found {
        found = 1
        sch = cell("schedule") (cell("virtual_stages") > 1 ? " V" cell("virtual_stages") : "")
        lay = "tp" cell("tp") " pp" cell("pp") " mb" cell("micro_batch") " sp" cell("sp") " " cell("checkpointing") " " sch
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", s, o, lay, cell("step_time_s"), cell("mfu"), cell("bubble_fraction"), cell("peak_mem_gib"), cell("flags")
        printf "\t%s\t%s\t%s\t%s", cell("t_forward_s") + cell("t_backward_s"), cell("t_recompute_s"), cell("t_pp_wait_s"), cell("t_tp_comm_s") + cell("t_dp_comm_s")
        printf "\t%s", cell("t_optimizer_s") + cell("t_idle_s")
      }
      END {
        if (bad) exit 2
        if (!found) printf "%s\t%s\t-\t0\t0\t0\t0\t-\t0\t0\t0\t0\t0", s, o
        printf "\t%d\n", n
      }' "$out" >> "$best"
  done
done

# The report and the SVGs, from best.tsv (one row per setting and option set, the study's first).
awk -F'\t' -v doc="$doc" -v names="$(printf '%s\n' "${SETTINGS[@]}" | awk '{printf "%s%s=%s %s, %s GPUs", (NR > 1 ? ";" : ""), $1, $2, ($3 == 2048 ? "2k" : "8k"), $4}')" '
  function esc(x) { gsub(/&/, "\\&amp;", x); gsub(/</, "\\&lt;", x); return x }
  # the breakdown category that moved most from the study best to this one, and by how much
  function cause(i, s,    k, d, bk, bd, what) {
    split("compute recompute bubble comm rest", what, " ")
    bd = 0; bk = 0
    for (k = 1; k <= 5; k++) { d = T[i, k] - T[s, k]; if (d * d > bd * bd) { bd = d; bk = k } }
    if (!bk || bd * bd < 0.0025) return "same time"
    label["compute"] = "compute"; label["recompute"] = "memory (recompute)"; label["bubble"] = "bubble"
    label["comm"] = "exposed comm"; label["rest"] = "optimizer/idle"
    return sprintf("%s %+.2f s", label[what[bk]], bd)
  }
  {
    n++; S[n] = $1; O[n] = $2; L[n] = $3; ST[n] = $4; M[n] = 100 * $5; B[n] = 100 * $6; P[n] = $7; F[n] = $8
    for (k = 1; k <= 5; k++) T[n, k] = $(8 + k)
    FIT[n] = $14
    if (!($1 in first)) { first[$1] = n; order[++ns] = $1 }
  }
  END {
    split(names, nm, ";"); for (k in nm) { split(nm[k], kv, "="); title[kv[1]] = kv[2] }
    md = doc "/whatif-options.md"
    print "# What if: schedules, recompute variants, ZeRO stages and overlap for the study'"'"'s settings" > md
    print "" > md
    print "Written by `bash bench/whatif-options.sh` (do not edit: rerun it). For each of the study'"'"'s settings," > md
    print "`layoutsim sweep` ranks the study'"'"'s search space (tp 1, 2, 4, 8; pp 1, 2, 4, 8; micro-batch 1, 2, 4;" > md
    print "sp 0 and 1; FlashAttention 2 with the fused RMSNorm kernel; 4M tokens a step) under each option set," > md
    print "and the table gives the fastest layout predicted to fit. **Δ MFU** is in points against the" > md
    print "study'"'"'s own options (1F1B, checkpointing none or every_layer). **Main cause** is the part of the" > md
    print "step time (the sweep'"'"'s breakdown, seconds per GPU) that moved most from the study'"'"'s best to this" > md
    print "one: *bubble* (pipeline wait), *memory (recompute)* (recompute time, paid to fit), *exposed comm*" > md
    print "(tensor- and data-parallel communication not hidden), *compute* (forward and backward kernels:" > md
    print "another micro-batch or tp). These are predictions, most of them outside the calibration data" > md
    print "(8k, 30B, 32 nodes, schedules other than 1F1B, selective and mlp: see the flags and docs/trust.md);" > md
    print "differences of a point or two are inside the error bands. The study ran FlashAttention 2 + RMSNorm" > md
    print "without checkpointing only (the fused kernel did not work with it); the sweep allows both." > md
    print "GPU counts: 13B-2k on 64 and 65B-2k on 128 as the study'"'"'s published sweeps; 13B-8k (128) and" > md
    print "30B (256) are not in the published files and are the script'"'"'s choice. GPipe keeps every" > md
    print "micro-batch'"'"'s activations until its backward (docs/schedules.md): at 4M tokens a step no layout" > md
    print "of the space fits with it. ZeRO 0 keeps whole fp32 optimizer states on every rank; ZeRO 2" > md
    print "reduce-scatters every micro-batch'"'"'s gradients as its backward ends them and ZeRO 3 also gathers" > md
    print "each layer'"'"'s weights before its forward and backward (docs/memory.md); the overlaps run the" > md
    print "gradient reduction under the last backward and the parameter gather under the next forward" > md
    print "(docs/schedules.md, \"Overlap\"). The study'"'"'s code ran ZeRO 1 with nothing overlapped." > md
    for (q = 1; q <= ns; q++) {
      s = order[q]; sb = first[s]
      print "" > md
      printf "## %s (%s)\n\n", s, title[s] > md
      printf "![best MFU per option set, %s](img/whatif-options-%s.svg)\n\n", s, s > md
      print "| option set | best layout | step s | MFU % | Δ MFU | bubble % | peak GiB | main cause | fit | flags |" > md
      print "|---|---|---|---|---|---|---|---|---|---|" > md
      changed = ""; same = ""
      for (i = sb; i <= n && S[i] == s; i++) {
        if (L[i] == "-") { printf "| %s | none fits | | | | | | memory (no layout fits) | 0 | |\n", O[i] > md; nofit = nofit (nofit == "" ? "" : ", ") O[i]; continue }
        d = L[sb] == "-" ? 0 : M[i] - M[sb]
        printf "| %s | %s | %.2f | %.1f | %s | %.1f | %.1f | %s | %d | %s |\n", O[i], L[i], ST[i], M[i],
               i == sb ? "—" : sprintf("%+.1f", d), B[i], P[i], i == sb ? "—" : cause(i, sb), FIT[i], F[i] == "" ? "" : F[i] > md
        split(L[i], a, " "); split(L[sb], b, " ")
        if (i > sb) {
          if (a[1] " " a[2] " " a[3] " " a[4] != b[1] " " b[2] " " b[3] " " b[4]) changed = changed sprintf("%s%s (%s, %+.1f points)", changed == "" ? "" : "; ", O[i], a[1] " " a[2] " " a[3] " " a[4], d)
          else same = same (same == "" ? "" : ", ") O[i]
          if (d > bestd) { bestd = d; besto = O[i] }
        }
      }
      printf "\nThe layout (tp, pp, micro-batch, sp) changes with: %s. It stays with: %s%s.\n", changed == "" ? "none" : changed,
             same == "" ? "none" : same, nofit == "" ? "" : "; nothing fits with " nofit > md
      summary[s] = bestd > 0.05 ? sprintf("%s, %+.1f points", besto, bestd) : "none of the option sets beats the study'"'"'s"
      bestd = 0; besto = ""; nofit = ""
      best_study[s] = L[sb] == "-" ? "none fits" : sprintf("%s, %.1f%%", L[sb], M[sb])
      # the SVG: a bar of best MFU per option set, a line at the study'"'"'s
      svg = doc "/img/whatif-options-" s ".svg"
      rows = 0; for (i = sb; i <= n && S[i] == s; i++) rows++
      W = 920; lw = 190; bw = 380; rh = 22; top = 40; H = top + rows * rh + 40
      printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H > svg
      printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H > svg
      printf "<text x=\"10\" y=\"22\" font-size=\"14\">%s (%s): best MFU per option set (predicted)</text>\n", s, esc(title[s]) > svg
      for (i = sb; i <= n && S[i] == s; i++) {
        y = top + (i - sb) * rh
        x = bw * M[i] / 100
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", lw - 6, y + 15, esc(O[i]) > svg
        printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", lw, y + 3, x, rh - 6, i == sb ? "#555555" : "#4a7ab5" > svg
        printf "<text x=\"%d\" y=\"%d\">%s</text>\n", lw + bw + 12, y + 15, L[i] == "-" ? "none fits" : sprintf("%.1f%%  %s", M[i], esc(L[i])) > svg
      }
      xs = lw + bw * M[sb] / 100
      printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n", xs, top, xs, top + rows * rh > svg
      for (t = 0; t <= 100; t += 20) {
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999999\"/>\n", lw + bw * t / 100, top + rows * rh, lw + bw * t / 100, top + rows * rh + 5 > svg
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d%%</text>\n", lw + bw * t / 100, top + rows * rh + 18, t > svg
      }
      printf "<text x=\"%d\" y=\"%d\" fill=\"#c0392b\">dashed: the study'"'"'s options</text>\n", lw, H - 6 > svg
      print "</svg>" > svg
      close(svg)
    }
    print "\n## Summary\n" > md
    print "| setting | the study'"'"'s options: best layout, MFU | the largest gain |" > md
    print "|---|---|---|" > md
    for (q = 1; q <= ns; q++) printf "| %s | %s | %s |\n", order[q], best_study[order[q]], summary[order[q]] > md
    close(md)
  }' "$best"
echo "whatif-options: wrote $doc/whatif-options.md and $doc/img/whatif-options-*.svg (sweeps in $work)"
