#!/usr/bin/env bash
# Does sequence parallelism pay off for a setting? (docs/calibration.md, finding 4.) Predicts a grid
# of layouts for MODEL at SEQ_LEN tokens on GPUS GPUs (default global batch: 2048 sequences at 2k,
# 512 at 8k) and compares the fastest layout without sequence parallelism (sp 0, any tp) with the
# fastest with it (sp 1, tp >= 2: at tp 1 sp changes nothing), among the layouts predicted ok.
# Grid: tp 1 2 4 8 (those that divide the heads) x pp 1 2 4 8 16 x micro-batch 1 2 4 x sp 0 1 x
# {checkpointing none with flash2+rmsnorm, every_layer with flash2}.
# Prints both layouts and the gain T(best sp 0) / T(best sp 1) - 1 (positive: sp is faster).
# Usage: bash bench/sp-gain.sh MODEL SEQ_LEN GPUS [WORK_DIR [JOBS]]   (a few minutes on 2 cores)
set -euo pipefail
die() { echo "sp-gain: $*" >&2; exit 2; }
[ $# -ge 3 ] && [ $# -le 5 ] || die "usage: bash bench/sp-gain.sh MODEL SEQ_LEN GPUS [WORK_DIR [JOBS]]"
model=$1 seq=$2 gpus=$3 work=${4:-$(mktemp -d)} jobs=${5:-2}
for v in "$seq" "$gpus" "$jobs"; do [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive integer"; done
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work"
grid="$work/sp-grid-$model-$seq-$gpus.csv" out="$work/sp-pred-$model-$seq-$gpus.csv"
gb=$((4194304 / seq))
{
  echo "model,seq_len,global_batch,vocab,gpus,checkpointing,attention_kernel,micro_batch,tp,pp,sp"
  for ck in "none flash2+rmsnorm" "every_layer flash2"; do
    set -- $ck
    for mb in 1 2 4; do for tp in 1 2 4 8; do for pp in 1 2 4 8 16; do for sp in 0 1; do
      [ "$tp" = 1 ] && [ "$sp" = 1 ] && continue
      echo "$model,$seq,$gb,128000,$gpus,$1,$2,$mb,$tp,$pp,$sp"
    done; done; done; done
  done
} > "$grid"
"$bin" predict "$grid" -o "$out" -j "$jobs"
awk -v who=sp-gain "$(cat "$here/csv.awk")"'
  NR == 1 { need("tp pp micro_batch sp checkpointing pred_status pred_step_time_s", "layoutsim predict output"); next }
  cell("pred_status") == "ok" {
    t = cell("pred_step_time_s") + 0
    name = "tp" cell("tp") " pp" cell("pp") " mb" cell("micro_batch") " sp" cell("sp") " " cell("checkpointing")
    if (cell("sp") == 0 && (!t0 || t < t0)) { t0 = t; n0 = name }
    if (cell("sp") == 1 && (!t1 || t < t1)) { t1 = t; n1 = name }
  }
  END {
    if (bad) exit 2
    if (!t0 || !t1) { print "sp-gain: no layout predicted ok with " (!t0 ? "sp 0" : "sp 1") > "/dev/stderr"; exit 2 }
    printf "best without sp: %-32s %8.2f s\nbest with sp:    %-32s %8.2f s\ngain of sp: %+.1f%%\n", n0, t0, n1, t1, 100 * (t0 / t1 - 1)
  }' "$out"
