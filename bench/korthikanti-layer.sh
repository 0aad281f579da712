#!/usr/bin/env bash
# One transformer layer's forward and backward (with its recompute) as layoutsim times them, against Korthikanti et
# al. 2022 (arXiv:2205.05198): Table 4 (one layer of the 22B model, ms) and section 6.2's overheads for the 530B and
# 1T models (the combined forward + backward of "present work", selective recompute + sp, is 2% over the baseline
# without recompute and without sp; full recompute is 36% over it; 22B: 4% and 39%, Table 4). The models are those
# of the paper's Table 3 (tp 8; micro-batch 4 for 22B, 1 for the others; sequence 2048), on the megatron-deepspeed
# stack and the A100 profile as bench/korthikanti.sh runs them; docs/memory.md section 5b.
#
# How a layer is timed: `simulate` of the model cut to 4 layers (a layer's time does not depend on how many there
# are), pp 1, one micro-batch, `--timeline-csv` of rank 0; the layer's forward is the compute stream's time from the
# first to the last forward event of layer 2 (the collectives it waits for included, as a CUDA-event timing around
# the layer would see them), its backward likewise over its backward and recompute events.
# Usage: bash bench/korthikanti-layer.sh [WORK_DIR] [--stack-set KEY=VALUE ...]   (under a minute on 2 cores)
set -euo pipefail
die() { echo "korthikanti-layer: $*" >&2; exit 2; }
work=$(mktemp -d)
if [ $# -ge 1 ] && [ "${1#--}" = "$1" ]; then work=$1; shift; fi
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work"

# Table 3: name hidden heads micro_batch; then the paper's per-layer figures where it gives them (Table 4 ms for
# 22B: baseline, sp, full, selective, selective+sp as forward/backward; section 6.2 overheads for 530B and 1T)
rows="gpt-22b 6144 64 4
gpt-175b 12288 96 1
gpt-530b 20480 128 1
gpt-1t 25600 160 1"
declare -A paper=([gpt-22b:none]=7.7/11.9 [gpt-22b:sp]=7.2/11.8 [gpt-22b:full]=7.7/19.5 [gpt-22b:selective]=7.7/13.2
                  [gpt-22b:selective+sp]=7.2/13.1)
declare -A paper_over=([gpt-22b:full]=39 [gpt-22b:selective+sp]=4 [gpt-530b:full]=36 [gpt-530b:selective+sp]=2
                       [gpt-1t:full]=36 [gpt-1t:selective+sp]=2)

printf '%-9s %-13s %8s %8s %8s %13s %9s %9s\n' model method fwd_ms bwd_ms sum_ms paper_f/b paper_ovh model_ovh
echo "$rows" | while read -r name hidden heads mb; do
  cat > "$work/$name-4l.json" <<EOF
{ "name": "$name-4l", "layers": 4, "hidden": $hidden, "heads": $heads, "ffn": $((4 * hidden)), "vocab": 51200,
  "norm": "layernorm", "mlp": "gelu", "positions": "learned", "max_positions": 2048, "bias": true,
  "tied_embeddings": true, "dropout": 0.1,
  "comment": "Korthikanti et al. 2022 Table 3, cut to 4 layers to time one" }
EOF
  base=""
  for method in none sp full selective selective+sp; do
    case $method in
      none) ck="--checkpointing none" ;; sp) ck="--checkpointing none --sp" ;;
      full) ck="--checkpointing every_layer" ;; selective) ck="--checkpointing selective" ;;
      selective+sp) ck="--checkpointing selective --sp" ;;
    esac
    # shellcheck disable=SC2086
    "$bin" simulate --model-file "$work/$name-4l.json" --gpus 8 --tp 8 --pp 1 --micro-batch "$mb" \
      --global-batch "$mb" --seq-len 2048 --attention-kernel fused-softmax --stack megatron-deepspeed \
      --profile a100-sxm4-80gb $ck ${extra[@]+"${extra[@]}"} --timeline-csv "$work/$name-$method.csv" \
      --trace-ranks 0 > /dev/null
    fb=$(awk -F, '$2 == "compute" && $8 == 2 {
                    p = ($3 == "forward") ? "f" : "b"
                    if (!(p in lo) || $5 < lo[p]) lo[p] = $5; if ($6 > hi[p]) hi[p] = $6 }
                  END { printf "%.3f %.3f", 1e3 * (hi["f"] - lo["f"]), 1e3 * (hi["b"] - lo["b"]) }' "$work/$name-$method.csv")
    read -r f b <<< "$fb"
    s=$(awk -v f="$f" -v b="$b" 'BEGIN { printf "%.3f", f + b }')
    [ "$method" = none ] && base=$s
    ovh=$(awk -v s="$s" -v b0="$base" 'BEGIN { printf "%+.1f%%", 100 * (s / b0 - 1) }')
    pf=${paper[$name:$method]:--}
    po=${paper_over[$name:$method]:-}
    [ -n "$po" ] && po="+$po%" || po=-
    printf '%-9s %-13s %8s %8s %8s %13s %9s %9s\n' "$name" "$method" "$f" "$b" "$s" "$pf" "$po" "$ovh"
  done
done
