#!/usr/bin/env bash
# Does the fast path agree with full replay? Predicts every row of the given tables twice: with
# --fidelity fast (the steady-state extrapolation wherever m > pp + 2, the memory verdict first) and
# with --fidelity full (every layout replayed in full, its memory verdict from the whole step), and
# prints, per file and in total, the rows compared, OOM verdicts that differ, and the worst and
# mean relative step-time difference over rows that both predict ok (with the worst row).
# Usage: bash bench/fast-check.sh WORK_DIR TABLE.csv...   (e.g. ../shared/paper/*.csv; minutes on 2 cores)
set -euo pipefail
die() { echo "fast-check: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: bash bench/fast-check.sh WORK_DIR TABLE.csv..."
work=$1; shift
here=$(cd "$(dirname "$0")" && pwd -P)
bin="$here/../build/layoutsim"
[ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
mkdir -p "$work"
for f in "$@"; do
  b=$(basename "$f" .csv)
  "$bin" predict "$f" --fidelity full -o "$work/$b.full.csv" -j 2
  "$bin" predict "$f" --fidelity fast -o "$work/$b.fast.csv" -j 2
  awk -v who=fast-check -v file="$b" "$(cat "$here/csv.awk")"'
    FNR == 1 { need("pred_status pred_step_time_s pred_fidelity", "layoutsim predict output"); next }
    FILENAME ~ /full.csv$/ { st[FNR] = cell("pred_status"); t[FNR] = cell("pred_step_time_s") + 0; next }
    {
      n++
      if (cell("pred_status") != st[FNR]) { vd++; print "  verdict differs on line " FNR ": full " st[FNR] ", fast " cell("pred_status") }
      if (cell("pred_status") == "ok" && st[FNR] == "ok") {
        d = cell("pred_step_time_s") - t[FNR]; if (d < 0) d = -d; d /= t[FNR]
        k++; sum += d; fast += cell("pred_fidelity") == "fast"
        if (d >= worst) { worst = d; wl = FNR }
      }
    }
    END { if (bad) exit 2; printf "%-36s rows %4d  verdicts differ %d  ok in both %4d (%d extrapolated)  mean %.2e  worst %.2e (line %d)\n", file, n, vd, k, fast, k ? sum / k : 0, worst, wl }
  ' "$work/$b.full.csv" "$work/$b.fast.csv"
done
