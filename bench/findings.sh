#!/usr/bin/env bash
# The study's findings 1-3 and 5 (docs/calibration.md, "The study's findings in the simulated
# results"), counted in a `layoutsim validate -o` table: for each finding, the pairs of rows that
# are the same layout but for the one factor, predicted (both predicted ok) and measured (both
# measured ok), and how many of them go the finding's way.
#   1. micro-batch 1 is best: the micro-batch of the fastest layout of each setting;
#   2. avoid checkpointing: every_layer against none -> the checkpointed one slower; and the best
#      checkpointed layout against the best non-checkpointed one, per setting;
#   3. pipeline over tensor parallelism: tp a pp b against tp b pp a (a < b) -> the pp-heavy one faster;
#   5. fused RMSNorm: flash2+rmsnorm against flash2 -> the fused one faster.
# Usage: layoutsim validate FILES -o ROWS.csv -j 2; bash bench/findings.sh ROWS.csv
set -euo pipefail
die() { echo "findings: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: bash bench/findings.sh ROWS.csv (the per-row table of layoutsim validate -o)"
[ -r "$1" ] || die "cannot read '$1'"
here=$(cd "$(dirname "$0")" && pwd -P)
awk -v who=findings "$(cat "$here/csv.awk")"'
  NR == 1 { need("setting layout status step_time_s pred_status pred_step_time_s", "layoutsim validate -o output"); next }
  {
    # layout: "tpA ppB mbC spD CHECKPOINTING KERNEL"
    if (split(cell("layout"), f, " ") != 6) die(FILENAME " line " NR ": layout \"" cell("layout") "\" is not tp pp mb sp checkpointing kernel")
    s = cell("setting"); tp = substr(f[1], 3); pp = substr(f[2], 3); mb = substr(f[3], 3)
    n++; S[n] = s; TP[n] = tp; PP[n] = pp; MB[n] = mb; SP[n] = f[4]; CK[n] = f[5]; KE[n] = f[6]
    T["p", n] = cell("pred_status") == "ok" ? cell("pred_step_time_s") + 0 : 0
    T["m", n] = cell("status") == "ok" ? cell("step_time_s") + 0 : 0
    if ((s, tp, pp, mb, SP[n], CK[n], KE[n]) in id) die(FILENAME " line " NR ": " s ", " cell("layout") " appears twice")
    id[s, tp, pp, mb, SP[n], CK[n], KE[n]] = n
    if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
  }
  # count a pair (a should be faster than b) on side w (p: predicted, m: measured)
  function pair(name, a, b, w) {
    if (!a || !b || !T[w, a] || !T[w, b]) return
    tot[name, w]++; if (T[w, a] < T[w, b]) yes[name, w]++
  }
  function best(w, s, ck,    i, bi) {
    bi = 0
    for (i = 1; i <= n; i++)
      if (S[i] == s && T[w, i] && (ck == "" || CK[i] == ck) && (!bi || T[w, i] < T[w, bi])) bi = i
    return bi
  }
  END {
    if (bad) exit 2
    for (i = 1; i <= n; i++) {
      s = S[i]
      if (CK[i] == "none") { j = id[s, TP[i], PP[i], MB[i], SP[i], "every_layer", KE[i]]; pair("2", i, j, "p"); pair("2", i, j, "m") }
      if (PP[i] + 0 > TP[i] + 0) { j = id[s, PP[i], TP[i], MB[i], SP[i], CK[i], KE[i]]; pair("3", i, j, "p"); pair("3", i, j, "m") }
      if (KE[i] == "flash2+rmsnorm") { j = id[s, TP[i], PP[i], MB[i], SP[i], CK[i], "flash2"]; pair("5", i, j, "p"); pair("5", i, j, "m") }
    }
    print "1. micro-batch 1 is best: micro-batch of the fastest layout (predicted | measured)"
    for (k = 1; k <= ns; k++) {
      s = order[k]; bp = best("p", s, ""); bm = best("m", s, "")
      printf "   %-32s mb %s | mb %s\n", s, bp ? MB[bp] : "-", bm ? MB[bm] : "-"
    }
    split("2 3 5", fs, " ")
    title["2"] = "2. avoid checkpointing: pairs where the checkpointed layout is slower"
    title["3"] = "3. pipeline over tensor parallelism: pairs where the pp-heavy layout is faster"
    title["5"] = "5. fused RMSNorm: pairs where flash2+rmsnorm is faster than flash2"
    for (k = 1; k <= 3; k++) {
      x = fs[k]
      printf "%s: predicted %d of %d, measured %d of %d\n", title[x], yes[x, "p"], tot[x, "p"], yes[x, "m"], tot[x, "m"]
      if (x == "2")
        for (q = 1; q <= ns; q++) {
          s = order[q]; line = ""
          for (w = 1; w <= 2; w++) {
            side = w == 1 ? "p" : "m"; a = best(side, s, "every_layer"); b = best(side, s, "none")
            line = line sprintf("  %s %s", side == "p" ? "predicted" : "measured", (a && b) ? sprintf("%+.0f%%", 100 * (T[side, a] / T[side, b] - 1)) : "-")
          }
          if (line ~ /%/) printf "   best checkpointed against best non-checkpointed, %-30s%s\n", s, line
        }
    }
  }' "$1"
