#!/usr/bin/env bash
# Does a sweep restricted to a measured setting's search space rank first the layout that was
# measured fastest? For each table (the study's runs: model, seq_len, global_batch, gpus and the
# layout columns, status, step_time_s), the sweep's axes are the values the table holds (tp, pp,
# micro_batch, sp, checkpointing, attention_kernel); the sweep covers their whole cross product,
# layouts nobody ran included. Prints, per table, the measured fastest and the sweep's first, and
# MATCH or DIFFER.
# Usage: bash bench/paper-sweeps.sh WORK_DIR TABLE.csv...   (e.g. ../shared/paper/*.csv)
set -euo pipefail
die() { echo "paper-sweeps: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: bash bench/paper-sweeps.sh WORK_DIR TABLE.csv..."
work=$1; shift
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work"
for f in "$@"; do
  b=$(basename "$f" .csv)
  # the axes and the measured best, from the table
  IFS=$'\t' read -r args best < <(awk -v who=paper-sweeps "$(cat "$here/csv.awk")"'
    NR == 1 { need("model seq_len global_batch gpus tp pp micro_batch sp checkpointing attention_kernel status step_time_s", "a measured table"); next }
    function add(k, v) { if (!((k, v) in seen)) { seen[k, v] = 1; list[k] = list[k] (list[k] == "" ? "" : ",") v } }
    {
      model = cell("model"); seq = cell("seq_len"); gb = cell("global_batch"); gpus = cell("gpus")
      add("tp", cell("tp")); add("pp", cell("pp")); add("micro-batch", cell("micro_batch")); add("sp", cell("sp"))
      add("checkpointing", cell("checkpointing")); add("attention-kernel", cell("attention_kernel"))
      if (cell("status") == "ok" && (bt == "" || cell("step_time_s") + 0 < bt)) {
        bt = cell("step_time_s") + 0
        bl = "tp" cell("tp") "_pp" cell("pp") "_mb" cell("micro_batch") "_sp" cell("sp") "_" cell("checkpointing") "_" cell("attention_kernel")
      }
    }
    END {
      if (bad) exit 2
      printf "--model %s --seq-len %s --global-batch %s --gpus %s", model, seq, gb, gpus
      n = split("tp pp micro-batch sp checkpointing attention-kernel", k, " ")
      for (i = 1; i <= n; i++) printf " --%s %s", k[i], list[k[i]]
      printf "\t%s\n", bl
    }' "$f")
  # shellcheck disable=SC2086
  "$bin" sweep $args -j 2 --format csv -o "$work/$b.sweep.csv"
  first=$(awk -v who=paper-sweeps "$(cat "$here/csv.awk")"'
    NR > 1 && cell("rank") == "1" { print "tp" cell("tp") "_pp" cell("pp") "_mb" cell("micro_batch") "_sp" cell("sp") "_" cell("checkpointing") "_" cell("attention_kernel") }
    END { if (bad) exit 2 }' "$work/$b.sweep.csv")
  n=$(($(wc -l < "$work/$b.sweep.csv") - 1))
  verdict=DIFFER; [ "$first" = "$best" ] && verdict=MATCH
  printf "%-30s %5d layouts swept  measured fastest %-42s sweep's first %-42s %s\n" "$b" "$n" "${best//_/ }" "${first//_/ }" "$verdict"
done
