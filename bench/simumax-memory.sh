#!/usr/bin/env bash
# The peak memory of the SimuMax B200 rows (../shared/validation/simumax_b200.csv: Megatron-LM, bf16, one 8x B200
# node, Llama 3 70B cut to 12 layers and a 405B-like model cut to 4; each row with the measured
# torch.cuda.max_memory_allocated, mem_gib, and max_memory_reserved, mem_reserved_gib, and SimuMax's own error)
# against layoutsim, per distinct layout (rows that differ only in the micro-batch count share one measurement).
# Rows are converted by bench/blackwell-rows.awk (stack nemo, ZeRO-1 for --use-distributed-optimizer, flash2, the cp
# rows' stated all-to-all context parallelism: --cp-comm-type a2a).
# Two stacks, nothing fitted:
#   shipped  the nemo stack as shipped;
#   stated   the nemo stack with what these runs state in their notes: --accumulate-allreduce-grads-in-fp32
#            (grad_reduce_bytes 4: Megatron's gradient buffer in fp32), --cross-entropy-loss-fusion
#            (vocab_parallel_loss_bytes 2: the fused loss keeps the bf16 logits shard it writes the gradient over),
#            TransformerEngine 2.11.0 (te_dummy_wgrad 1: its cached dummy weight gradients, TE >= 2.3) and the tp
#            overlap off (--disable-tp-comm-overlap-ag/rs).
# Both run the data-parallel overlaps off, as the runs do (no --overlap-grad-reduce / --overlap-param-gather).
# layoutsim's allocated memory is its peak without the stack's CUDA context, NCCL buffers and fragmentation (what
# torch's allocator counts); its reserved memory is the peak without the context and NCCL buffers (the
# fragmentation is the allocator's reserve). docs/memory.md, "Megatron's gradient buffer and loss".
# WORK_DIR must lie outside the repository (it holds rows derived from other people's measurements).
# LAYOUTSIM=path runs another build (e.g. main's, for a before/after).
# Usage: bash bench/simumax-memory.sh VALIDATION_DIR WORK_DIR   (about 1 minute)
set -euo pipefail
die() { echo "simumax-memory: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: bash bench/simumax-memory.sh VALIDATION_DIR WORK_DIR"
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/.." && pwd -P)
bin=${LAYOUTSIM:-$repo/build/layoutsim}
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
[ -f "$1/simumax_b200.csv" ] || die "no $1/simumax_b200.csv"
mkdir -p "$2/models"
work=$(cd "$2" && pwd -P)
case "$work/" in "$repo"/*) die "WORK_DIR '$2' lies inside the repository (allowed: a directory outside it)" ;; esac
: > "$work/skipped.tsv"
awk -v who=blackwell-rows -v models="$work/models" -v skips="$work/skipped.tsv" -f "$here/csv.awk" \
  -f "$here/rows.awk" -f "$here/blackwell-rows.awk" "$1/simumax_b200.csv" > "$work/rows.csv"
nemo="$(cd "$(dirname "$bin")/.." && pwd -P)/platforms/stacks/nemo.json" # the build's own tree (LAYOUTSIM)
[ -f "$nemo" ] || die "no $nemo"
awk 'BEGIN { n = split("grad_reduce_bytes 4 vocab_parallel_loss_bytes 2 te_dummy_wgrad 1 tp_comm_overlap 0", a, " "); for (i = 1; i < n; i += 2) want[a[i]] = a[i + 1] }
  { for (k in want) if (index($0, "\"" k "\"")) { sub(/: *[0-9.]+/, ": " want[k]); seen[k] = 1 } sub(/"name": "nemo"/, "\"name\": \"nemo-simumax-stated\""); l[NR] = $0 }
  END { print l[1]; for (k in want) if (!(k in seen)) printf "\t\"%s\": %s,\n", k, want[k]; for (i = 2; i <= NR; i++) print l[i] }' "$nemo" > "$work/stated.json"
printf '%-30s %-16s %-7s %8s %8s %8s %8s %8s %8s %8s\n' model layout stack alloc meas err% reserved meas err% SimuMax%
awk -v who=simumax-memory -f "$here/csv.awk" -f /dev/stdin "$work/rows.csv" <<'AWK' > "$work/layouts.tsv"
NR == 1 { need("model model_file seq_len global_batch vocab gpus micro_batch tp pp cp sp profile zero mem_gib mem_reserved_gib simumax_mem_err_pct cp_comm_type", "as bench/blackwell-rows.awk writes"); next }
{
  k = cell("model") " " cell("tp") " " cell("pp") " " cell("cp") " " cell("seq_len")
  if (k in seen) next
  seen[k] = 1
  print cell("model") "\t" cell("model_file") "\t" cell("seq_len") "\t" cell("global_batch") "\t" cell("vocab") "\t" cell("gpus") "\t" \
    cell("micro_batch") "\t" cell("tp") "\t" cell("pp") "\t" cell("cp") "\t" cell("sp") "\t" cell("profile") "\t" cell("zero") "\t" \
    cell("mem_gib") "\t" cell("mem_reserved_gib") "\t" cell("simumax_mem_err_pct") "\t" (cell("cp_comm_type") == "" ? "p2p" : cell("cp_comm_type"))
}
END { if (bad) exit 2 }
AWK
while IFS=$'\t' read -r model file seq gb vocab gpus mb tp pp cp sp prof zero mem res smerr cpc; do
  for st in shipped stated; do
    stack=nemo; [ "$st" = stated ] && stack="$work/stated.json"
    spa=""; [ "$sp" = 1 ] && spa="--sp"
    # shellcheck disable=SC2086
    "$bin" simulate --model-file "$file" --seq-len "$seq" --vocab "$vocab" --gpus "$gpus" --tp "$tp" --pp "$pp" --cp "$cp" --cp-comm-type "$cpc" \
      --micro-batch "$mb" --global-batch "$gb" --attention-kernel flash2 --stack "$stack" --profile "$prof" --zero "$zero" \
      --gpu-memory 100000 --overlap-grad-reduce=0 --overlap-param-gather=0 $spa --format json > "$work/out.json"
    awk -v model="$model" -v lay="tp$tp pp$pp cp$cp s$seq" -v st="$st" -v mem="$mem" -v res="$res" -v smerr="$smerr" '
      function get(k,    v) { if (!match(s, "\"" k "\":[ \t]*[0-9.eE+-]+")) return 0; v = substr(s, RSTART, RLENGTH); sub(/.*:[ \t]*/, "", v); return v + 0 }
      { s = s $0 }
      END {
        alloc = get("params") + get("grads") + get("optimizer") + get("activations_peak") + get("buffers")
        reserved = get("peak_gib") - 0.75 - 0.5 # nemo leaves cuda_context_gib, nccl_buffers_gib at their defaults
        ea = 100 * (alloc / mem - 1); er = 100 * (reserved / res - 1)
        printf "%-30s %-16s %-7s %8.2f %8.2f %+8.1f %8.2f %8.2f %+8.1f %8.2f\n", model, lay, st, alloc, mem, ea, reserved, res, er, smerr
      }' "$work/out.json"
  done
done < "$work/layouts.tsv" | tee "$work/table.txt"
awk '{ n[$6]++; a[$6] += ($9 < 0 ? -$9 : $9); r[$6] += ($12 < 0 ? -$12 : $12); s[$6] += ($13 < 0 ? -$13 : $13) }
  END { for (k in n) printf "mean |error| %-7s %2d layouts: allocated %.1f%%, reserved %.1f%%; SimuMax (allocated) %.2f%%\n", k, n[k], a[k] / n[k], r[k] / n[k], s[k] / n[k] }' \
  "$work/table.txt" | sort
