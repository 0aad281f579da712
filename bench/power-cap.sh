#!/usr/bin/env bash
# What the A100's power cap would do to a simulated step (issue 25; docs/memory.md section 5b, "The power cap
# over the step"): an estimate from `simulate --format json` outputs, not a mechanism of the simulator.
#
# The energy model (docs/energy.md, analysis/energy.c) gives each GPU-second a class and a power: compute-bound
# kernels power_compute_w, memory-bound power_memory_w, collectives and pipeline waits power_comm_w, idle
# power_idle_w. power_compute_w is the board limit itself (the draw of a GEMM already held at the cap), so the
# power the same kernel would draw at the full clock is taken from the clock NVIDIA sustains at the limit under
# back-to-back dense tensor work (1305 of 1410 MHz, the A100's HPL Rpeak): dynamic power ~ f V^2 with V tracking f,
# P(f) = P_s + (P_cap - P_s) (f / f_sus)^k, k = 3 (k = 2 printed beside it: V flat near the top of the V-f
# curve), P_s = power_idle_w (the part that does not scale with the clock). The controller keeps the average
# over its window at or under the cap; the clock r = f / f_max solves
#   [ c / r * P(r f_max) + m P_mem + n P_comm + i P_idle ] / (c / r + m + n + i) = P_cap
# with c, m, n, i the fractions of the window in each class (compute-bound time stretches by 1 / r, the rest not).
# Two windows: the whole step ("step"), and the steady state ("steady": the step less its pipeline waits,
# bubble_fraction -- every pipeline wait, analysis/metrics.c -- taken off the communication class, where the
# timeline puts them: the most the cap can take in this model). The step estimate
# stretches the compute-bound seconds, T (1 + c (1 / r - 1)): low, the pipeline waits growing with the stages'
# compute too; for the step, rerun simulate with --stack-set gemm_efficiency=(the stack's) x r.
# Usage: bash bench/power-cap.sh SIMULATE_JSON...   (A100 figures: cap 400 W, f_sus / f_max = 1305 / 1410)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash bench/power-cap.sh SIMULATE_JSON..." >&2; exit 2; }
printf '%-36s %8s %6s %6s %6s %6s %7s %8s %8s %9s %8s %8s %9s\n' file step_s comp mem comm bubble W@fmax r_step \
  r_steady3 step_s3 r_step2 r_stdy2 step_s2
for f in "$@"; do
  name=$(basename "$f")
  tr -d ' \n\t' < "$f" | awk -v file="$name" -v cap=400 -v ps=60 -v pm=300 -v pc=150 -v pi=60 -v sus=1305/1410 '
    function num(key,   t) { if (!match(s, "\"" key "\":[0-9.eE+-]+")) return 0
                             t = substr(s, RSTART, RLENGTH); sub(/.*:/, "", t); return t + 0 }
    function avg(r, c, m, n, i, k,   tc, pf) { pf = ps + (cap - ps) * (1 / fsus) ^ k; tc = c / r
      return (tc * (ps + (pf - ps) * r ^ k) + m * pm + n * pc + i * pi) / (tc + m + n + i) }
    function clock(c, m, n, i, k,   lo, hi, mid, j) { if (avg(1, c, m, n, i, k) <= cap) return 1
      lo = 0.3; hi = 1; for (j = 0; j < 60; j++) { mid = (lo + hi) / 2; if (avg(mid, c, m, n, i, k) > cap) hi = mid; else lo = mid }
      return lo }
    { s = s $0 }
    END {
      split(sus, q, "/"); fsus = q[1] / q[2]
      T = num("step_time_s"); b = num("bubble_fraction")
      s = substr(s, index(s, "\"gpu_seconds\":"))   # the energy object: its classes, not the breakdown
      c = num("compute_s"); m = num("memory_s"); n = num("comm_s"); i = num("idle_s"); tot = c + m + n + i
      if (tot <= 0) { printf "%-36s no energy object (not a simulate --format json output)\n", file; exit }
      c /= tot; m /= tot; n /= tot; i /= tot; nb = n - b; if (nb < 0) nb = 0
      rs = clock(c, m, n, i, 3); r3 = clock(c, m, nb, i, 3); r2s = clock(c, m, n, i, 2); r2 = clock(c, m, nb, i, 2)
      printf "%-36s %8.3f %6.3f %6.3f %6.3f %6.3f %7.1f %8.4f %8.4f %9.3f %8.4f %8.4f %9.3f\n", file, T, c, m, n, b,
             avg(1, c, m, n, i, 3), rs, r3, T * (1 + c * (1 / r3 - 1)), r2s, r2, T * (1 + c * (1 / r2 - 1))
    }'
done
