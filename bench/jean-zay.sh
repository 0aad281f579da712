#!/usr/bin/env bash
# BLOOM's machine at <= 16 nodes (docs/trust.md, "BLOOM's step"): the published runs of BigScience's code on Jean Zay's
# A100 partition below 17 nodes, against layoutsim on the profile a100-jean-zay with the stack BLOOM ran
# (megatron-deepspeed with grad_accum_bytes 18, pipe_scatter_gather 1, tp_async_grad_reduce 0, launch_blocking 1;
# dropout 0.1). The published figures (bigscience-workshop/bigscience@9e64ede train/tr11-176B-ml/chronicles-prequel.md,
# 2022-02-17, "Best TFLOPs", iteration 2 of a run, tp 8, micro-batch 1, global batch 2048, seq 2048, vocabulary
# 250k, full recompute, bf16):
#   1 node  (tp8 pp1,  8 layers, hidden 14400, 32 heads: "20B"):  777.09 s (fp16 run: 769.99 s)
#   10 nodes (tp8 pp10, 80 layers, hidden 14400, 96 heads: "200B"): 853.81 s (fp16 run: 844.81 s)
# and the A/B of CUDA_LAUNCH_BLOCKING ("dealing with JZ hanging"): 80 GPUs, the 200B, global batch 512, 91.04 TFLOP/s
# with it against 97.20 without, a step 97.20 / 91.04 = 1.068 times longer.
# Both models have hidden 14400 (1800 a rank at tp 8, not a multiple of 64): BigScience measured 221 s against
# 160 s for hidden 14400 against 13824 on the same 40 nodes, a shape penalty the kernel model does not have; so the
# 1-node row checks the compute only loosely, and the 10-node row's use is its difference to the 1-node row (the
# same 8 layers a GPU; the pipeline's communication and fill).
# With P2P=E the pipeline sends between nodes run at p2p_bw_efficiency_ib E (0: the collectives' 0.9); P2P=0.2 makes the
# 10-node row's pipeline cost what was measured (docs/trust.md, "BLOOM's step": a fit on this row, not shipped).
# Usage: [P2P=E] bash bench/jean-zay.sh [WORK_DIR]   (about 3 minutes of CPU; the 10-node run takes 4 GiB)
set -euo pipefail
die() { echo "jean-zay: $*" >&2; exit 2; }
[ $# -le 1 ] || die "usage: bash bench/jean-zay.sh [WORK_DIR]"
work=${1:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work"
model() { # name layers heads
  echo "{ \"name\": \"$1\", \"layers\": $2, \"hidden\": 14400, \"heads\": $3, \"ffn\": 57600, \"vocab\": 250680, \"norm\": \"layernorm\", \"mlp\": \"gelu\", \"positions\": \"alibi\", \"bias\": true, \"tied_embeddings\": true, \"embedding_norm\": true, \"dropout\": 0.1 }" > "$work/$1.json"
}
model jz-20b 8 32
model jz-200b 80 96
common=(--profile a100-jean-zay --tp 8 --micro-batch 1 --seq-len 2048 --vocab 250880 --checkpointing every_layer
  --attention-kernel fused-softmax --stack-set grad_accum_bytes=18 --stack-set pipe_scatter_gather=1
  --stack-set tp_async_grad_reduce=0 --stack-set p2p_bw_efficiency_ib="${P2P:-0}")
step() { "$bin" simulate --format json "$@" 2> /dev/null | awk -F'[:,]' '/"step_time_s"/ && !n++ { gsub(/[ \t]/, "", $2); print $2 }'; }
t1=$(step --model-file "$work/jz-20b.json" --gpus 8 --pp 1 --global-batch 2048 "${common[@]}" --stack-set launch_blocking=1)
t10=$(step --model-file "$work/jz-200b.json" --gpus 80 --pp 10 --global-batch 2048 "${common[@]}" --stack-set launch_blocking=1)
a=$(step --model-file "$work/jz-200b.json" --gpus 80 --pp 10 --global-batch 512 "${common[@]}" --stack-set launch_blocking=0)
b=$(step --model-file "$work/jz-200b.json" --gpus 80 --pp 10 --global-batch 512 "${common[@]}" --stack-set launch_blocking=1)
awk -v t1="$t1" -v t10="$t10" -v a="$a" -v b="$b" 'BEGIN {
  printf "| run | predicted | published | error %% |\n|---|---|---|---|\n"
  printf "| 1 node, tp8 pp1, 20B | %.1f s | 777.09 s | %+.1f |\n", t1, 100 * (t1 / 777.09 - 1)
  printf "| 10 nodes, tp8 pp10, 200B | %.1f s | 853.81 s | %+.1f |\n", t10, 100 * (t10 / 853.81 - 1)
  printf "| 10 nodes less 1 node (the pipeline) | %.1f s | %.1f s | %+.1f |\n", t10 - t1, 853.81 - 777.09, 100 * ((t10 - t1) / (853.81 - 777.09) - 1)
  printf "| CUDA_LAUNCH_BLOCKING=1 over 0, 80 GPUs, global batch 512 | x%.3f | x%.3f | %+.1f |\n", b / a, 97.20 / 91.04, 100 * ((b / a) / (97.20 / 91.04) - 1)
}'
