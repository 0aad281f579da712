#!/usr/bin/env bash
# The reference study regenerated from simulation (issue 29; docs/study-report.md). Sweeps the study's
# settings and search spaces (../shared/docs/study.md), then writes OUT_DIR/report.md and its figures
# (OUT_DIR/img/*.svg, and *.png where rsvg-convert is installed):
#   part 1, the study regenerated: best MFU per micro-batch, the attention/norm kernels, checkpointing on
#     and off, tensor against pipeline parallelism at equal degree, sequence parallelism on and off, the
#     layouts that do not fit; then findings 1-6, each with a verdict and the breakdown column that carries
#     it, derived by bench/study-report.awk from the simulated numbers (nothing of the verdicts is written in);
#   part 2, the frame of the study extended (175B and 405B dense models, 1,024-16,384 GPUs, A100/H100/B200,
#     other schedules and recompute, the interconnect at 0.5x and 2x, energy): the same questions on today's
#     model, every number with its band, marked as waiting for the corrected scale model (issue 25).
# With PAPER_DIR (the study's measured runs, e.g. ../shared/paper) the report and figures put the measured
# rows beside the simulated ones and each finding's measured verdict beside the simulated one; OUT_DIR must
# then lie outside the repository (the measured data never enter it). Without it: simulated only.
# Deterministic: the same command twice writes identical files (tests/study/check.sh guards the analysis).
# Usage: bash bench/study-report.sh OUT_DIR [PAPER_DIR]
#   JOBS (environment): sweep -j (default 2). STUDY_REUSE=1: reuse OUT_DIR/sweeps/*.csv from an earlier run
#   (re-renders the report without sweeping again). About 5-10 minutes on 2 cores.
set -euo pipefail
die() { echo "study-report: $*" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: bash bench/study-report.sh OUT_DIR [PAPER_DIR]"
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/.." && pwd -P)
bin="$repo/build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
jobs=${JOBS:-2}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "JOBS: '$jobs' is not a positive integer"
reuse=${STUDY_REUSE:-0}
[[ "$reuse" =~ ^[01]$ ]] || die "STUDY_REUSE: '$reuse' is not 0 or 1"
out=$(realpath -m "$1")
paper=""
if [ $# -eq 2 ]; then
  [ -d "$2" ] || die "PAPER_DIR '$2' is not a directory"
  paper=$(cd "$2" && pwd -P)
  case "$out/" in "$repo"/*) die "OUT_DIR '$1' is inside the repository; with PAPER_DIR the measured runs may not be written into it" ;; esac
  [ "$out" != "$paper" ] || die "OUT_DIR '$1' is PAPER_DIR"
fi
[ ! -e "$out" ] || [ -d "$out" ] || die "OUT_DIR '$1' exists and is not a directory"
mkdir -p "$out/sweeps" "$out/img"
export LC_ALL=C

# Part 1: the study's settings. name|model|seq_len|gpus|tp|pp|micro-batch|sp|kind
#   kind sweep: the study's kernel sweep: its earlier software stack's kernels (torch, fused-softmax, flash1: the
#     scaling library's uniform partition, as bench/study-runs.sh annotates those runs) and its later stack's
#     (flash2 with and without checkpointing; flash2+rmsnorm without: the study reports the fused kernel does not
#     work with checkpointing), the later with the study code's default (balanced) partition;
#   kind sp: the study's sequence-parallel sweeps: flash2+rmsnorm, no checkpointing.
# 13B-2k on 64 and 32 GPUs and 65B-2k on 128 and 64 are the settings of its published files, with their axes;
# 13B-8k (128 GPUs) and 30B (256) are not in them: their GPU counts and spaces are this script's choice (those of
# bench/whatif-options.sh), with the later stack's kernels.
PART1=(
  "13B-2k-64|llama-13b|2048|64|1,2|1,2|1,2,4,8|0|sweep|torch,fused-softmax,flash1"
  "13B-2k-32|llama-13b|2048|32|1,2|1,2|1,2,4,8|0,1|sp|"
  "13B-8k-128|llama-13b|8192|128|1,2,4,8|1,2,4,8|1,2,4|0,1|sweep|"
  "30B-2k-256|llama-30b|2048|256|1,2,4|1,2,4,8|1,2,4|0,1|sweep|"
  "30B-8k-256|llama-30b|8192|256|1,2,4|1,2,4,8|1,2,4|0,1|sweep|"
  "65B-2k-128|llama-65b|2048|128|2,4,8|2,4,8|1,2,4|0|sweep|flash1"
  "65B-2k-64|llama-65b|2048|64|2,4,8|2,4,8|1,2,4|0,1|sp|"
)
# Part 2 (the frame; its numbers wait for issue 25's corrected scale model): name|model|seq_len|gpus|profile|more
# sweep options|space (dense: SPACE2, moe: SPACE2_MOE). Global batch 16M tokens (Llama 3 405B's: 8192 sequences at
# 2k, 2048 at 8k, 4096 at 4k). GPT-3's vocabulary (50,257) padded to 51,200 as Megatron does, on the study stack
# (which does not pad). The dense space: tp 2-8, pp 4-32, micro-batch 1-2, sp on, checkpointing none, mlp and
# every_layer (selective changes nothing with FlashAttention), flash2, schedules 1F1B, interleaved (V 2), ZB-H1 and
# DualPipeV (each where valid: ZB-H1 is refused with the overlapped gradient reduction the nemo stack runs), the top
# 5 exact by bound and prune (docs/sweep.md); on Blackwell BF16 and FP8 linear layers. The MoE space: Qwen3-30B-A3B
# with expert parallelism 8 inside the NVLink domain, tp 1-2, pp 1-4, micro-batch 1-2, checkpointing none or
# selective, 1F1B or interleaved, BF16 or FP8.
PART2=(
  "175B-2k-1024-A100|gpt3-175b|2048|1024|a100-sxm4-80gb|--vocab 51200|dense"
  "175B-2k-4096-H100|gpt3-175b|2048|4096|h100-sxm5-80gb||dense"
  "405B-8k-4096-H100|llama3-405b|8192|4096|h100-sxm5-80gb||dense"
  "405B-8k-16384-H100|llama3-405b|8192|16384|h100-sxm5-80gb||dense"
  "405B-8k-4096-B200|llama3-405b|8192|4096|b200|--precision bf16,fp8|dense"
  "405B-8k-4096-GB200|llama3-405b|8192|4096|gb200-nvl72|--precision bf16,fp8|dense"
  "MoE-30B-A3B-4k-1024-GB200|qwen3-30b-a3b|4096|1024|gb200-nvl72|--ep 8 --precision bf16,fp8|moe"
)
# shellcheck disable=SC2054 # the commas are the sweep's lists
SPACE2=(--tp 2,4,8 --pp 4,8,16,32 --micro-batch 1,2 --sp 1 --checkpointing none,mlp,every_layer
        --attention-kernel flash2 --schedule 1f1b,interleaved,zb-h1,dualpipev --virtual-stages 1,2 --top 5)
SPACE2_TEXT="tp 2-8, pp 4-32, micro-batch 1-2, sp 1, checkpointing none, mlp, every_layer, 1F1B, interleaved V2, ZB-H1 and DualPipeV, top 5"
# shellcheck disable=SC2054
SPACE2_MOE=(--tp 1,2 --pp 1,2,4 --micro-batch 1,2 --sp 0,1 --checkpointing none,selective
            --attention-kernel flash2 --schedule 1f1b,interleaved --virtual-stages 1,2 --top 5)
SPACE2_MOE_TEXT="ep 8, tp 1-2, pp 1-4, micro-batch 1-2, checkpointing none or selective, 1F1B or interleaved V2, top 5"
# The interconnect what-if: these Part 2 settings at 0.5x and 2x their profile's InfiniBand bandwidth per NIC.
IB2=("405B-8k-4096-H100")

# one sweep into $out/sweeps/NAME.csv (or the existing file with STUDY_REUSE=1)
sweep() {
  local name=$1
  shift
  local f="$out/sweeps/$name.csv"
  if [ "$reuse" = 1 ]; then
    [ -s "$f" ] || die "STUDY_REUSE=1 but no $f: run once without it"
    return
  fi
  "$bin" sweep "$@" -j "$jobs" --format csv -o "$f" 2> "$out/sweeps/$name.log" ||
    { cat "$out/sweeps/$name.log" >&2; die "the sweep $name failed"; }
  rm -f "$out/sweeps/$name.log"
}

# The columns the analysis reads, from a sweep CSV, one TSV row a layout: part setting stack variant and the
# sweep's own columns (bench/study-report.awk names them in this order).
COLS="model seq_len global_batch gpus profile tp pp micro_batch sp checkpointing attention_kernel schedule virtual_stages zero precision ib_gbps status step_time_s mfu bubble_fraction peak_mem_gib gpu_memory band_pct flags kwh_per_mtok t_forward_s t_backward_s t_recompute_s t_tp_comm_s t_pp_wait_s t_dp_comm_s t_optimizer_s t_idle_s"
totsv() { # PART SETTING STACK VARIANT CSV
  awk -v who=study-report -v part="$1" -v s="$2" -v stack="$3" -v var="$4" -v cols="$COLS" "$(cat "$here/csv.awk")"'
    NR == 1 { need(cols, "layoutsim sweep --format csv"); nc = split(cols, c, " "); next }
    cell("status") == "invalid" { next }
    {
      line = part "\t" s "\t" stack "\t" var
      for (k = 1; k <= nc; k++) { x = cell(c[k]); gsub(/\t/, " ", x); line = line "\t" (x == "" ? "-" : x) }
      print line
    }
    END { if (bad) exit 2 }' "$5"
}

tsv="$out/sweeps/simulated.tsv" settings="$out/sweeps/settings.tsv"
: > "$tsv"
: > "$settings"
for st in "${PART1[@]}"; do
  IFS='|' read -r name model seq gpus tp pp mb sp kind early <<< "$st"
  gb=$((4194304 / seq))
  base=(--model "$model" --seq-len "$seq" --gpus "$gpus" --global-batch "$gb" --tp "$tp" --pp "$pp" --micro-batch "$mb" --sp "$sp")
  printf '1\t%s\t%s\t%s\t%s\t%s\ta100-sxm4-80gb\ttp %s, pp %s, micro-batch %s, sp %s\t%s\n' \
    "$name" "$model" "$seq" "$gpus" "$gb" "$tp" "$pp" "$mb" "$sp" "$kind" >> "$settings"
  if [ "$kind" = sweep ]; then
    if [ -n "$early" ]; then
      sweep "p1-$name-early" "${base[@]}" --attention-kernel "$early" --checkpointing none,every_layer --partition uniform
      totsv 1 "$name" early - "$out/sweeps/p1-$name-early.csv" >> "$tsv"
    fi
    sweep "p1-$name-flash2" "${base[@]}" --attention-kernel flash2 --checkpointing none,every_layer
    totsv 1 "$name" late - "$out/sweeps/p1-$name-flash2.csv" >> "$tsv"
  fi
  sweep "p1-$name-rmsnorm" "${base[@]}" --attention-kernel flash2+rmsnorm --checkpointing none
  totsv 1 "$name" late - "$out/sweeps/p1-$name-rmsnorm.csv" >> "$tsv"
done
for st in "${PART2[@]}"; do
  IFS='|' read -r name model seq gpus profile more space <<< "$st"
  gb=$((16777216 / seq))
  read -r -a more <<< "$more"
  case "$space" in
    dense) sp2=("${SPACE2[@]}") text=$SPACE2_TEXT ;;
    moe) sp2=("${SPACE2_MOE[@]}") text=$SPACE2_MOE_TEXT ;;
    *) die "PART2 $name: space '$space' (allowed: dense, moe)" ;;
  esac
  base=(--model "$model" --seq-len "$seq" --gpus "$gpus" --global-batch "$gb" --profile "$profile" "${more[@]}" "${sp2[@]}")
  printf '2\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tscale\n' \
    "$name" "$model" "$seq" "$gpus" "$gb" "$profile" "$text" >> "$settings"
  sweep "p2-$name" "${base[@]}"
  totsv 2 "$name" - - "$out/sweeps/p2-$name.csv" >> "$tsv"
  for ib in "${IB2[@]}"; do
    [ "$ib" = "$name" ] || continue
    nominal=$(awk -v who=study-report "$(cat "$here/csv.awk")"'NR == 2 { print cell("ib_gbps"); exit }' "$out/sweeps/p2-$name.csv")
    [[ "$nominal" =~ ^[0-9.]+$ ]] || die "no ib_gbps in the sweep p2-$name"
    for f in 0.5 2; do
      x=$(awk -v a="$nominal" -v f="$f" 'BEGIN { printf "%g", a * f }')
      sweep "p2-$name-ib$f" "${base[@]}" --ib-gbps "$x"
      totsv 2 "$name" - "ib x$f" "$out/sweeps/p2-$name-ib$f.csv" >> "$tsv"
    done
  done
done

# The measured rows (with PAPER_DIR): setting, layout and status, step time and MFU; read here, written only
# under OUT_DIR (outside the repository).
meas="$out/sweeps/measured.tsv"
: > "$meas"
if [ -n "$paper" ]; then
  shopt -s nullglob
  files=("$paper"/*.csv)
  [ ${#files[@]} -gt 0 ] || die "no .csv files in PAPER_DIR '$2'"
  for f in "${files[@]}"; do
    awk -v who=study-report "$(cat "$here/csv.awk")"'
      NR == 1 { need("model seq_len gpus checkpointing attention_kernel micro_batch tp pp sp status step_time_s mfu", "a measured table of the study (docs/study.md)"); next }
      {
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell("model"), cell("seq_len"), cell("gpus"), cell("tp"), cell("pp"),
          cell("micro_batch"), cell("sp"), cell("checkpointing"), cell("attention_kernel"), cell("status"),
          cell("step_time_s") == "" ? "-" : cell("step_time_s"), cell("mfu") == "" ? "-" : cell("mfu")
      }
      END { if (bad) exit 2 }' "$f" >> "$meas"
  done
fi

awk -F'\t' -v out="$out" -v paper="${paper:+yes}" -f "$here/study-svg.awk" -f "$here/study-report.awk" "$settings" "$tsv" "$meas"
if command -v rsvg-convert > /dev/null; then
  for s in "$out"/img/*.svg; do rsvg-convert -b white -o "${s%.svg}.png" "$s"; done
fi
echo "study-report: wrote $out/report.md and $(find "$out/img" -name '*.svg' | wc -l) figures in $out/img"
