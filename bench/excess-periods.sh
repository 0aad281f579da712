#!/usr/bin/env bash
# Diagnostic for the one residual pattern the model leaves in the study's later software stack
# (docs/calibration.md, "What the data say the model is missing"): how much of the step-time error
# of a set of measured runs is one common compute scale s plus x extra pipeline-bubble periods on
# the pipelined rows of one kind. It fits, by least squares on the relative error,
#     measured = s * (predicted + x * period * [pp == PP and tp <= MAXTP])
# where period = predicted / (m + pp - 1), m = global_batch / (dp * micro_batch) micro-batches, is
# the predicted time of one micro-batch's forward and backward on a stage (a 1F1B step is m + pp - 1
# of them; pred_bubble_fraction would not do: it also counts the idle time of stage imbalance).
# It prints s, x, and the mean absolute error before and after, overall and for the rows with and
# without the term. It changes nothing in the model: it measures whether one mechanism of that
# shape explains the rows.
# Input: `layoutsim predict` output of measured runs (the layout columns, status, step_time_s,
# pred_status, pred_step_time_s). Rows are those measured ok and predicted ok whose model matches
# MODEL and whose attention kernel matches KERNEL (awk regular expressions).
# Usage: bash bench/excess-periods.sh PREDICTED.csv [MODEL [KERNEL [PP [MAXTP]]]]
#   e.g. for f in /tmp/study/llama13b-*.csv; do layoutsim predict "$f" -o "/tmp/p-${f##*/}" -j 2; done
#        awk 'FNR > 1 || NR == 1' /tmp/p-llama13b-*.csv > /tmp/p13.csv
#        bash bench/excess-periods.sh /tmp/p13.csv llama-13b '^flash2' 2 2
set -euo pipefail
die() { echo "excess-periods: $*" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 5 ] || die "usage: bash bench/excess-periods.sh PREDICTED.csv [MODEL [KERNEL [PP [MAXTP]]]]"
[ -r "$1" ] || die "cannot read '$1'"
pp=${4:-2} maxtp=${5:-2}
[[ "$pp" =~ ^[0-9]+$ ]] && (( 10#$pp >= 2 )) || die "PP '$pp' must be an integer >= 2"
[[ "$maxtp" =~ ^[1-9][0-9]*$ ]] || die "MAXTP '$maxtp' must be a positive integer"
here=$(cd "$(dirname "$0")" && pwd -P)
awk -v who=excess-periods -v model="${2:-.}" -v kernel="${3:-.}" -v PP="$pp" -v MAXTP="$maxtp" "$(cat "$here/csv.awk")"'
  NR == 1 {
    need("model attention_kernel gpus global_batch micro_batch tp pp status step_time_s pred_status pred_step_time_s", "layoutsim predict output")
    next
  }
  cell("status") == "ok" && cell("pred_status") == "ok" && cell("model") ~ model && cell("attention_kernel") ~ kernel {
    m = cell("step_time_s") + 0; p = cell("pred_step_time_s") + 0
    if (m <= 0 || p <= 0) next
    n++; M[n] = m; P[n] = p; Q[n] = 0
    tp = cell("tp") + 0; pp = cell("pp") + 0
    m_b = cell("global_batch") / (cell("gpus") / (tp * pp) * cell("micro_batch"))
    if (pp == PP && tp <= MAXTP) Q[n] = p / (m_b + pp - 1)
  }
  END {
    if (bad) exit 2
    if (n < 3) { print "excess-periods: fewer than 3 rows match" > "/dev/stderr"; exit 2 }
    # minimise sum ((a P + b Q - M) / M)^2 over a = s, b = s x: a 2x2 linear system
    for (i = 1; i <= n; i++) {
      w = 1 / (M[i] * M[i])
      spp += w * P[i] * P[i]; spq += w * P[i] * Q[i]; sqq += w * Q[i] * Q[i]
      spm += w * P[i] * M[i]; sqm += w * Q[i] * M[i]
    }
    det = spp * sqq - spq * spq
    if (sqq == 0 || det <= 0) { a = spm / spp; b = 0 } else { a = (spm * sqq - sqm * spq) / det; b = (sqm * spp - spm * spq) / det }
    for (i = 1; i <= n; i++) {
      g = Q[i] > 0 ? "with" : "without"
      e0 = (P[i] - M[i]) / M[i]; e1 = (a * P[i] + b * Q[i] - M[i]) / M[i]
      cnt[g]++; before[g] += (e0 < 0 ? -e0 : e0); after[g] += (e1 < 0 ? -e1 : e1)
      bias0[g] += e0; bias1[g] += e1
    }
    printf "rows %d (%d with the term: pp %d, tp <= %d)\n", n, cnt["with"], PP, MAXTP
    printf "fit: compute scale s = %.3f, extra bubble x = %.2f periods\n", a, (a > 0 ? b / a : 0)
    printf "%-22s %5s %10s %10s %10s %10s\n", "rows", "n", "mape_was%", "mape_now%", "bias_was%", "bias_now%"
    split("with without", gs, " ")
    for (k = 1; k <= 2; k++) {
      g = gs[k]; if (!cnt[g]) continue
      printf "%-22s %5d %10.2f %10.2f %+10.2f %+10.2f\n", g " the term", cnt[g], 100 * before[g] / cnt[g], 100 * after[g] / cnt[g], 100 * bias0[g] / cnt[g], 100 * bias1[g] / cnt[g]
    }
    printf "%-22s %5d %10.2f %10.2f\n", "all", n, 100 * (before["with"] + before["without"]) / n, 100 * (after["with"] + after["without"]) / n
  }' "$1"
