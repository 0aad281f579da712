#!/usr/bin/env bash
# readme -- runs the examples of README.md: every `layoutsim ...` command in its code blocks (indented four spaces
# or fenced) must exit 0 and print no "NOT RUNNABLE" (a layout the README shows must run). How a line becomes a
# command, in order:
#  1. a line ending in \ continues on the next; what follows " #" is a comment and goes;
#  2. the line is split at " && "; each part that starts with `layoutsim` or `./build/layoutsim` is a command
#     (`bash tools/setup.sh`, `bash bench/...` are not: they install or run long benchmarks), the parts of one
#     line run in order in one fresh directory, a `./build/layoutsim` there and a `layoutsim` on the PATH being
#     the binary under test;
#  3. a word `...` ("and whatever else you set") is dropped: the command runs with the options it names;
#  4. files the reader brings are made first: FILE/config.json a HuggingFace config from tests/hf (the model
#     whose name the directory has), layouts.csv a small sweep's table (llama-7b on 8 GPUs);
#  5. commands that read measured runs (validate, calibrate: measured.csv) are skipped, as the repository holds
#     no measured runs (they are other people's);
#  6. to stay fast (the whole file in well under a minute), a sweep searches a few layouts: each of RESTRICT's
#     options that the command does not set is added after `sweep` (its lists, platform points, plot, shards and
#     merge still run); and SHORTEN maps a command's words to the words run instead, each saying why.
# Usage: bash tests/cli/readme.sh LAYOUTSIM SRCDIR [--time]   (--time: print each command's seconds)
set -uo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
timing=${3:-}
work=$(mktemp -d /tmp/layoutsim-readme-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" && ln -s "$bin" "$work/bin/layoutsim"

# Rule 6. What a sweep searches here (one or two layouts a platform point).
RESTRICT=(--tp 2 --pp 4 --micro-batch 1 --checkpointing none --attention-kernel flash2+rmsnorm --global-batch 64)
# "README words|words run instead|why".
SHORTEN=(
  "layoutsim sweep --shard 3/8 --format csv -o s3.csv|for i in 1 2 3 4 5 6 7 8; do layoutsim sweep --shard \$i/8 --format csv -o s\$i.csv; done|merge needs every shard: the cluster's 8 jobs, one after another"
  "--gpus 256 --fabric|--gpus 64 --fabric|6 platform points of 256 GPUs take 85 s; 64 GPUs are 8 nodes, enough for rails and oversubscription"
  "layoutsim graph --model llama-13b --pp 4 -o|layoutsim graph --model llama-13b --pp 4 --global-batch 64 -o|replay has no fast path: 7 s at 512 micro-batches a replica"
  "--gpus 256 --leaf-nodes 16 --oversubscription 4|--gpus 128 --leaf-nodes 8 --oversubscription 4 --global-batch 256|256 GPUs: 10 s"
  "--model-file Llama-3.1-70B/config.json --gpus 64 --tp 8 --pp 4|--model-file Llama-3.1-70B/config.json --gpus 64 --tp 8 --pp 4 --global-batch 128|1024 micro-batches a replica: 7 s"
  "--tp 32 --pp 2 --global-batch 64|--tp 32 --pp 2 --global-batch 16|tp 32's collectives: 25 s at 32 micro-batches a replica"
)

# rule 1: the code blocks' lines, continuations joined
lines() {
  awk '/^```/ { fence = !fence; next }
       fence || /^    / {
         line = $0; sub(/^ +/, "", line)
         if (cont != "") { line = cont " " line; cont = "" }
         if (line ~ /\\$/) { sub(/ *\\$/, "", line); cont = line; next }
         print line
       }' "$src/README.md"
}

n=0 bad=0 skipped=0
while IFS= read -r line; do
  line=${line%% \#*}
  # rule 2: the layoutsim parts
  cmds=()
  rest=$line
  while :; do
    part=${rest%% && *}
    part=$(sed 's/^ *//; s/ *$//' <<<"$part")
    case "$part" in layoutsim\ * | ./build/layoutsim\ * | ./build/layoutsim) cmds+=("$part") ;; esac
    [[ "$rest" == *" && "* ]] || break
    rest=${rest#* && }
  done
  [ ${#cmds[@]} -eq 0 ] && continue
  n=$((n + 1))
  # rule 5
  if [[ "${cmds[*]}" == *measured.csv* ]]; then
    echo "skip $n - ${cmds[*]} (reads measured runs)"
    skipped=$((skipped + 1))
    continue
  fi
  dir="$work/$n"
  mkdir -p "$dir/build" && ln -s "$bin" "$dir/build/layoutsim"
  why=""
  for cmd in "${cmds[@]}"; do
    # rule 3
    cmd=$(sed 's/ \.\.\.\( \|$\)/\1/g' <<<"$cmd")
    # rule 6
    for s in "${SHORTEN[@]}"; do
      IFS='|' read -r from to _ <<<"$s"
      cmd=${cmd/"$from"/"$to"}
    done
    if [[ "$cmd" == *"layoutsim sweep "* ]]; then
      add=""
      for ((i = 0; i < ${#RESTRICT[@]}; i += 2)); do
        [[ " $cmd " == *" ${RESTRICT[i]} "* ]] || add+=" ${RESTRICT[i]} ${RESTRICT[i + 1]}"
      done
      cmd=${cmd//"layoutsim sweep "/"layoutsim sweep$add "}
    fi
    # rule 4
    if [[ "$cmd" =~ --model-file\ ([^ ]+)/config.json ]]; then
      d=${BASH_REMATCH[1]}
      hf=$(tr 'A-Z' 'a-z' <<<"${d##*/}" | sed 's/^llama-3/llama3/')
      mkdir -p "$dir/$d" && cp "$src/tests/hf/$hf/config.json" "$dir/$d/config.json" || why="no tests/hf/$hf"
    fi
    if [[ "$cmd" == *layouts.csv* && ! -e "$dir/layouts.csv" ]]; then
      (cd "$dir" && "$bin" sweep --model llama-7b --gpus 8 --tp 1,2 --pp 1 --micro-batch 1 --checkpointing none \
        --attention-kernel flash2 --format csv -o layouts.csv > /dev/null 2>&1) || why="layouts.csv not made"
    fi
    [ -n "$why" ] && break
    t0=$(date +%s.%N)
    out=$(cd "$dir" && PATH="$work/bin:$PATH" timeout 300 bash -c "$cmd" 2>&1 < /dev/null)
    rc=$?
    t1=$(date +%s.%N)
    [ -n "$timing" ] && printf '%6.2f s  %s\n' "$(echo "$t1 - $t0" | bc)" "$cmd"
    if [ $rc -ne 0 ]; then why="exit status $rc: $(tail -1 <<<"$out")"; break; fi
    if grep -q "NOT RUNNABLE" <<<"$out"; then why="prints NOT RUNNABLE: $(grep -m1 "NOT RUNNABLE" <<<"$out")"; break; fi
  done
  if [ -n "$why" ]; then
    echo "not ok $n - $cmd: $why"
    bad=$((bad + 1))
  else
    echo "ok $n - ${cmds[*]}"
  fi
done < <(lines)
echo "$n README lines with layoutsim commands: $((n - bad - skipped)) ran, $skipped skipped, $bad failed"
[ $bad -eq 0 ] && [ $n -gt 0 ]
