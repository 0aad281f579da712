# study-report.awk -- the study report's analysis (owner: the study report, docs/study-report.md). Reads, tab-
# separated, as bench/study-report.sh writes them:
#   1. settings.tsv   part name model seq_len gpus global_batch profile space kind
#   2. simulated.tsv  part setting stack variant, then the sweep's columns in the order of study-report.sh's COLS
#   3. measured.tsv   model seq_len gpus tp pp micro_batch sp checkpointing attention_kernel status step_time_s mfu
#                     (empty without PAPER_DIR)
# and writes out/report.md and out/img/*.svg. Every verdict is computed here from those rows by the rules the
# report states (the thresholds in BEGIN); nothing of the study's findings is assumed. Needs -v out=DIR,
# -v paper=yes (or empty) and study-svg.awk before it. POSIX awk (mawk): no iteration over a hash.

BEGIN {
  PAIR_SHARE = 0.90   # finding 2: share of the checkpointing pairs that must go the finding's way
  PAIR_TP_PP = 0.75   # finding 3: share of the tp/pp pairs
  SP_GAIN = 1.0       # finding 4: sp "helps" when the best layout with it is more than this many percent faster
  RMS_POINTS = 2.0    # finding 5: "many MFU points"
  OOM_MANY = 0.20     # finding 6: "many configurations do not fit": at least this share of a setting's space
  NCOL = split("compute recompute tp-comm bubble dp-comm optimizer+idle", COLNAME, " ")
  COLDESC["compute"] = "forward and backward kernels (t_forward_s + t_backward_s)"
  COLDESC["recompute"] = "recomputation (t_recompute_s)"
  COLDESC["tp-comm"] = "exposed tensor-parallel communication (t_tp_comm_s)"
  COLDESC["bubble"] = "pipeline wait, the bubble (t_pp_wait_s)"
  COLDESC["dp-comm"] = "exposed data-parallel communication (t_dp_comm_s)"
  COLDESC["optimizer+idle"] = "optimizer and idle time (t_optimizer_s + t_idle_s)"
  NKEALL = split("torch fused-softmax flash1 flash2 flash2+rmsnorm", KEALL, " ")
  fileno = 0
}
FNR == 1 { fileno++ }

fileno == 1 {
  ns++; SN[ns] = $2; SPART[$2] = $1; SMODEL[$2] = $3; SSEQ[$2] = $4; SGPUS[$2] = $5; SGB[$2] = $6
  SPROF[$2] = $7; SSPACE[$2] = $8; SKIND[$2] = $9
  if ($1 == 1) P1[++np1] = $2; else P2[++np2] = $2
  BYKEY[$3, $4, $5] = $2
  next
}
fileno == 2 {
  if (NF != 37) die("simulated.tsv line " FNR ": " NF " fields, 37 expected")
  if ($1 == 2) { part2_row(); next }
  s = $2; i = ++N["s"]
  R["s", i, "set"] = s; R["s", i, "tp"] = $10; R["s", i, "pp"] = $11; R["s", i, "mb"] = $12
  R["s", i, "sp"] = $13; R["s", i, "ck"] = $14; R["s", i, "ke"] = $15; R["s", i, "st"] = $21
  R["s", i, "t"] = $21 == "ok" ? $22 + 0 : 0; R["s", i, "mfu"] = $21 == "ok" ? 100 * $23 : 0
  PEAK[i] = $25 + 0; CAP[i] = $26 + 0; BAND[i] = $27 + 0
  if ($21 == "ok") {
    if (!((s) in BMIN) || BAND[i] < BMIN[s]) BMIN[s] = BAND[i]
    if (!((s) in BMAX) || BAND[i] > BMAX[s]) BMAX[s] = BAND[i]
    nfl = split($28, FLA, ";")
    for (q = 1; q <= nfl; q++) if (FLA[q] ~ /^outside:/) { NOUTR[s, substr(FLA[q], 9)]++; seen("s", s, "out", substr(FLA[q], 9)) }
  }
  C[i, 1] = $30 + $31; C[i, 2] = $32 + 0; C[i, 3] = $33 + 0; C[i, 4] = $34 + 0; C[i, 5] = $35 + 0; C[i, 6] = $36 + $37
  k = rkey(s, $10, $11, $12, $13, $14, $15)
  if (("s", k) in ID) die(s " " lay("s", i) " simulated twice")
  ID["s", k] = i
  seen("s", s, "ke", $15); seen("s", s, "mb", $12); seen("s", s, "ck", $14); seen("s", s, "sp", $13)
  next
}
fileno == 3 {
  s = BYKEY[$1, $2, $3]
  if (s == "" || SPART[s] != 1) { MSKIP++; next }
  sp = $4 == 1 ? 0 : $7   # sp changes nothing at tp 1: the simulator refuses it there, the study ran it
  k = rkey(s, $4, $5, $6, sp, $8, $9)
  if (("m", k) in ID) { MDUP++; next }
  i = ++N["m"]
  R["m", i, "set"] = s; R["m", i, "tp"] = $4; R["m", i, "pp"] = $5; R["m", i, "mb"] = $6; R["m", i, "sp"] = sp
  R["m", i, "ck"] = $8; R["m", i, "ke"] = $9; R["m", i, "st"] = $10
  R["m", i, "t"] = ($10 == "ok" && $11 != "-") ? $11 + 0 : 0
  R["m", i, "mfu"] = ($10 == "ok" && $12 != "-") ? 100 * $12 : 0
  ID["m", k] = i
  MSETS[s]++
  seen("m", s, "ke", $9); seen("m", s, "mb", $6); seen("m", s, "ck", $8); seen("m", s, "sp", sp)
  next
}

function die(msg) { print "study-report: " msg > "/dev/stderr"; bad = 1; exit 2 }
function rkey(s, tp, pp, mb, sp, ck, ke) { return s "|" tp "|" pp "|" mb "|" sp "|" ck "|" ke }
function seen(w, s, f, v) { if (!((w, s, f, v) in HAS)) { HAS[w, s, f, v] = 1; NV[w, s, f]++; VAL[w, s, f, NV[w, s, f]] = v } }
function lay(w, i) { return "tp" R[w, i, "tp"] " pp" R[w, i, "pp"] " mb" R[w, i, "mb"] " sp" R[w, i, "sp"] " " R[w, i, "ck"] " " R[w, i, "ke"] }
function ok(w, i) { return i > 0 && R[w, i, "t"] > 0 }
# the row of side w like row i but with field f set to v (0 if none)
function partner(w, i, f, v,    x, k, q) {
  split("tp pp mb sp ck ke", x, " ")
  k = R[w, i, "set"]
  for (q = 1; q <= 6; q++) k = k "|" (x[q] == f ? v : R[w, i, x[q]])
  return ((w, k) in ID) ? ID[w, k] : 0
}
# does row i of side w match filt ("mb=1,ck=none", "mb!1": equal or not equal)
function matches(w, i, filt,    a, na, q, f, v, neg) {
  if (filt == "") return 1
  na = split(filt, a, ",")
  for (q = 1; q <= na; q++) {
    neg = index(a[q], "!") > 0
    f = neg ? substr(a[q], 1, index(a[q], "!") - 1) : substr(a[q], 1, index(a[q], "=") - 1)
    v = neg ? substr(a[q], index(a[q], "!") + 1) : substr(a[q], index(a[q], "=") + 1)
    if (neg ? R[w, i, f] == v : R[w, i, f] != v) return 0
  }
  return 1
}
# the fastest row of side w in setting s matching filt that fits (0: none)
function best(w, s, filt,    i, b) {
  b = 0
  for (i = 1; i <= N[w]; i++)
    if (R[w, i, "set"] == s && ok(w, i) && matches(w, i, filt) && (!b || R[w, i, "t"] < R[w, b, "t"])) b = i
  return b
}
function count(w, s, filt, st,    i, c) {
  c = 0
  for (i = 1; i <= N[w]; i++) if (R[w, i, "set"] == s && (st == "" || R[w, i, "st"] == st) && matches(w, i, filt)) c++
  return c
}
# the breakdown column in which (simulated) row b spends most more than row a: sets DK (its index) and DV (seconds)
function dcol(a, b,    k) {
  DK = 1; DV = C[b, 1] - C[a, 1]
  for (k = 2; k <= NCOL; k++) if (C[b, k] - C[a, k] > DV) { DK = k; DV = C[b, k] - C[a, k] }
}
function pct(x) { return sprintf("%.1f%%", x) }
function mfu(w, i) { return i ? sprintf("%.1f%%", R[w, i, "mfu"]) : "none fits" }
# simulated: the MFU with its layout's band (band_pct, relative); measured: the MFU alone
function bestcell(w, s, filt,    i) { i = best(w, s, filt); return i ? sprintf("%s (%s)", w == "s" ? band2(R[w, i, "mfu"], BAND[i], "%.1f") : sprintf("%.1f", R[w, i, "mfu"]), shortlay(w, i, filt)) : "none fits" }
# the layout without the fields the filter fixes
function shortlay(w, i, filt,    x, r, q) {
  split("tp pp mb sp ck ke", x, " "); r = ""
  for (q = 1; q <= 6; q++) if (index("," filt, "," x[q] "=") == 0) r = r (r == "" ? "" : " ") (q <= 4 ? x[q] : "") R[w, i, x[q]]
  return r
}
function verdict(k, tot) { return tot == 0 ? "not testable" : (k == tot ? "reproduced" : (2 * k >= tot ? "partly reproduced" : "not reproduced")) }
function hasm(s) { return paper == "yes" && MSETS[s] > 0 }
# a value for a chart: the best MFU of side w at filt in s, "x" when the value is in the space but none fits, ""
# when it is not in the space
# (CHB: the half-width of the returned simulated row's band, in MFU points; "" for none)
function chartv(w, s, f, v, extra,    i) {
  CHB = ""
  if (!((w, s, f, v) in HAS)) return ""
  i = best(w, s, f "=" v (extra == "" ? "" : "," extra))
  if (i && w == "s") CHB = sprintf("%.2f", R[w, i, "mfu"] * BAND[i] / 100)
  return i ? sprintf("%.2f", R[w, i, "mfu"]) : "x"
}

# ---- the report's blocks, one function per kind -------------------------------------------------------------
# A section: its heading and, where it has one, its figure (img/FILE.svg, described by alt).
function section(md, title, file, alt) {
  print "\n### " title "\n" > md
  if (file != "") print "![" alt "](img/" file ".svg)\n" > md
}
# A table's head line and its rule, of the columns cols ("a|b|c"; the caller adds the measured ones where hasp).
function head(cols,    a, n, q, h) { n = split(cols, a, "|"); h = "|"; for (q = 1; q <= n; q++) h = h " " a[q] " |"; return h }
function rule(cols,    a, n, q, r) { n = split(cols, a, "|"); r = "|"; for (q = 1; q <= n; q++) r = r "---|"; return r }
function table_head(md, cols) { print head(cols) > md; print rule(cols) > md }
# The charts' values of setting s at value v of field f, simulated (V) and measured (M), at bar group q, series k.
function chart_values(V, M, E, q, k, s, f, v) { V[q, k] = chartv("s", s, f, v, ""); E[q, k] = CHB; M[q, k] = hasm(s) ? chartv("m", s, f, v, "") : "" }
# A row of a best-MFU-per-value table: setting s's fastest layout at each value LIST[1..n] of field f ("n/a": the
# value is not in its sweep), with the measured one (hasp) in a column of its own after each (mode "column", empty
# where not measured) or in the same cell (mode "inline", where measured); the charts' values at bar group q.
function value_row(s, f, LIST, n, mode, q, V, M, E,    line, k, c) {
  line = "| " s " |"
  for (k = 1; k <= n; k++) {
    c = ((("s", s, f, LIST[k]) in HAS) ? bestcell("s", s, f "=" LIST[k]) : "n/a")
    if (hasp && mode == "inline" && (("m", s, f, LIST[k]) in HAS)) c = c "; measured " bestcell("m", s, f "=" LIST[k])
    line = line " " c " |"
    if (hasp && mode == "column") line = line " " ((("m", s, f, LIST[k]) in HAS) ? bestcell("m", s, f "=" LIST[k]) : "") " |"
    chart_values(V, M, E, q, k, s, f, LIST[k])
  }
  return line
}
# A row of an off/on table (checkpointing, sp): setting s's fastest layout at value a and at value b of field f,
# then (gain) the gain cell g; with the measured rows (hasp) the same of the measured ones (gain cell mg), empty
# where s has none; the charts' values at bar group q.
function off_on_row(s, f, a, b, q, V, M, E, gain, g, mg,    line) {
  line = "| " s " | " bestcell("s", s, f "=" a) " | " bestcell("s", s, f "=" b) " |" (gain ? " " g " |" : "")
  if (hasp) line = line (hasm(s) ? " " bestcell("m", s, f "=" a) " | " bestcell("m", s, f "=" b) " |" (gain ? " " mg " |" : "") : " | |" (gain ? " |" : ""))
  chart_values(V, M, E, q, 1, s, f, a); chart_values(V, M, E, q, 2, s, f, b)
  return line
}

# ---- part 2 rows: the sweep's ranking order, ok rows first -------------------------------------------------
function part2_row(    s, v, k) {
  s = $2; v = $4
  if ($21 != "ok") return
  k = ++N2[s, v]
  if (k > 10) return
  X2[s, v, k, "lay"] = "tp" $10 " pp" $11 " mb" $12 " sp" $13 " " $14 " " $16 ($17 > 1 ? " V" $17 : "") ($19 != "bf16" ? " " $19 : "")
  X2[s, v, k, "prec"] = $19
  X2[s, v, k, "tp"] = $10; X2[s, v, k, "pp"] = $11; X2[s, v, k, "mb"] = $12; X2[s, v, k, "ck"] = $14; X2[s, v, k, "sp"] = $13; X2[s, v, k, "vs"] = $17
  X2[s, v, k, "sch"] = $16; X2[s, v, k, "t"] = $22 + 0; X2[s, v, k, "mfu"] = 100 * $23; X2[s, v, k, "band"] = $27 + 0
  X2[s, v, k, "kwh"] = $29 + 0; X2[s, v, k, "flags"] = $28; X2[s, v, k, "ib"] = $20; X2[s, v, k, "bub"] = 100 * $24
  X2[s, v, k, "peak"] = $25 + 0
  if (!((s, v) in V2SEEN)) { V2SEEN[s, v] = 1; NV2[s]++; V2[s, NV2[s]] = v }
}
function outside(flags,    a, na, q, r) {
  na = split(flags, a, ";"); r = ""
  for (q = 1; q <= na; q++) if (a[q] ~ /^outside:/) r = r (r == "" ? "" : ", ") substr(a[q], 9)
  for (q = 1; q <= na; q++) if (a[q] == "uncalibrated-profile") r = r (r == "" ? "" : ", ") "profile not calibrated in this precision"
  return r == "" ? "none" : r
}
function band2(v, b, fmt) { return sprintf(fmt " ± " fmt, v, v * b / 100) }

END {
  if (bad) exit 2
  md = out "/report.md"
  hasp = paper == "yes" && N["m"] > 0
  print "# The study regenerated from simulation" > md
  print "" > md
  print "Written by `bash bench/study-report.sh OUT_DIR" (hasp ? " PAPER_DIR" : "") "` (do not edit: rerun it; docs/study-report.md says how it" > md
  print "works). The reference is Hagemann et al. 2023, \"Efficient Parallelization Layouts for Large-Scale Distributed" > md
  print "Model Training\" (the study: ../shared/docs/study.md). Part 1 regenerates its evidence on its settings and" > md
  print "search spaces; part 2 is the frame of the study extended, on today's model. Every verdict below is computed" > md
  print "from the simulated rows by the rule it states (bench/study-report.awk); none is written in. The verdicts at a" > md
  print "glance: [Summary](#summary); the extension's, each number with its band: [Answers of the extension](#answers-of-the-extension)." > md
  if (hasp) print "Measured rows (PAPER_DIR, the study authors' runs, not part of the repository) are shown beside the simulated ones: " N["m"] " rows matched a setting" (MDUP ? ", " MDUP " repeated layouts left out" : "") "." > md
  else print "Simulated only: run it with PAPER_DIR to see the study's measured rows beside the simulated ones." > md
  print "" > md

  # ---------------- part 1 ----------------
  print "## Part 1: the study regenerated" > md
  print "" > md
  table_head(md, "setting|model|seq|GPUs|global batch|space|kernels|layouts that fit / do not fit|band (± % of each MFU)|outside the calibration data (layouts that fit)" (hasp ? "|measured rows" : ""))
  for (q = 1; q <= np1; q++) {
    s = P1[q]; kl = ""
    for (k = 1; k <= NV["s", s, "ke"]; k++) kl = kl (k > 1 ? ", " : "") VAL["s", s, "ke", k]
    ol = ""
    for (k = 1; k <= NV["s", s, "out"]; k++) ol = ol (k > 1 ? ", " : "") VAL["s", s, "out", k] " (" NOUTR[s, VAL["s", s, "out", k]] " of " count("s", s, "", "ok") ")"
    printf "| %s | %s | %d | %d | %d | %s; checkpointing %s | %s | %d / %d | %s | %s |%s\n", s, SMODEL[s], SSEQ[s], SGPUS[s], SGB[s], SSPACE[s],
      (("s", s, "ck", "every_layer") in HAS) ? "none, every_layer" : "none", kl, count("s", s, "", "ok"), count("s", s, "", "oom"),
      ((s) in BMIN) ? (sprintf("%.1f", BMIN[s]) == sprintf("%.1f", BMAX[s]) ? sprintf("%.1f%%", BMIN[s]) : sprintf("%.1f-%.1f%%", BMIN[s], BMAX[s])) : "-",
      ol == "" ? "none" : ol, hasp ? " " MSETS[s] + 0 " |" : "" > md
  }
  print "" > md
  print "On the shipped A100 profile and the study stack. Where a setting has an earlier-stack kernel (torch, fused-softmax," > md
  print "flash1), it runs with the uniform partition of the study's earlier code; flash2 and flash2+rmsnorm with its later" > md
  print "code's balanced partition (docs/calibration.md, \"Two software stacks\"); flash2+rmsnorm without checkpointing only" > md
  print "(the study: the fused kernel does not work with it). 13B-2k on 64 and 32 GPUs and 65B-2k on 128 and 64 are the" > md
  print "settings of the study's published runs; 13B-8k and 30B are not in them (GPU counts and spaces are the script's" > md
  print "choice). A setting's name is model-sequence-GPUs (13B-2k-64: llama-13b, 2,048 tokens, 64 GPUs)." > md
  print "" > md
  print "**Bands.** Every simulated MFU in the tables below is given as value ± band (the findings' text repeats values" > md
  print "without it): the sweep's `band_pct` of that layout, the 90th percentile of the step-time error of its regime" > md
  print "against measured runs (docs/trust.md), relative to the value, wider where the regime is less well calibrated (e.g." > md
  print "pipeline degree 2, `pp2-cost`)." > md
  print "The table's last columns give each setting's range of bands and which of its layouts lie outside the calibration" > md
  print "data (`outside:` flags: 8k sequences, more nodes than measured): those are predictions, not interpolations. The" > md
  print "figures draw the same bands as whiskers. The bands are each number's error against a measurement; they are not" > md
  print "the error of a difference between two layouts of one setting, which the findings below compare." > md
  print "" > md
  print "The breakdown columns named below are the sweep's (docs/metrics.md): seconds per GPU of each step." > md

  # 1.1 micro-batch
  section(md, "Best MFU per micro-batch size", "p1-microbatch", "best MFU per micro-batch size")
  print "MFU % ± band of the fastest layout that fits at each micro-batch size (its other fields in brackets)" (hasp ? "; measured: the same for the measured rows" : "") "." > md
  print "" > md
  cols = "setting"; split("1 2 4 8", MBL, " ")
  for (k = 1; k <= 4; k++) cols = cols "|mb " MBL[k] (hasp ? "|measured mb " MBL[k] : "")
  table_head(md, cols)
  for (q = 1; q <= np1; q++) { CL[q] = P1[q]; print value_row(P1[q], "mb", MBL, 4, "column", q, V1, M1, E1) > md }
  for (k = 1; k <= 4; k++) SL[k] = "micro-batch " MBL[k]
  BAR_EBNOTE = "the band of the bar's layout (band_pct, docs/trust.md), against measurement"
  bars(out "/img/p1-microbatch.svg", "Best MFU per micro-batch size", "the fastest layout that fits at each micro-batch size, per setting (A100, study stack); setting: model-sequence-GPUs", "MFU %", np1, CL, 4, SL, V1, M1, E1, hasp)

  # 1.2 kernels
  section(md, "The attention and norm kernels", "p1-kernels", "best MFU per kernel")
  print "MFU % ± band of the fastest layout that fits with each kernel (its other fields in brackets)." > md
  print "" > md
  cols = "setting"; for (k = 1; k <= NKEALL; k++) cols = cols "|" KEALL[k]
  table_head(md, cols)
  for (q = 1; q <= np1; q++) print value_row(P1[q], "ke", KEALL, NKEALL, "inline", q, V2, M2, E2) > md
  for (k = 1; k <= NKEALL; k++) SL[k] = KEALL[k]
  bars(out "/img/p1-kernels.svg", "Best MFU per attention/norm kernel", "the fastest layout that fits with each kernel, per setting (A100, study stack); torch, fused-softmax and flash1 with the earlier stack's uniform partition", "MFU %", np1, CL, NKEALL, SL, V2, M2, E2, hasp)

  # 1.3 checkpointing
  section(md, "Checkpointing on and off", "p1-checkpointing", "best MFU with and without checkpointing")
  table_head(md, "setting|no checkpointing|every layer" (hasp ? "|measured: none|measured: every layer" : ""))
  for (q = 1; q <= np1; q++) {
    s = P1[q]
    if (!((("s", s, "ck", "every_layer") in HAS))) continue
    nc3++; CL3[nc3] = s
    print off_on_row(s, "ck", "none", "every_layer", nc3, V3, M3, E3, 0) > md
  }
  SL3[1] = "no checkpointing"; SL3[2] = "every layer"
  bars(out "/img/p1-checkpointing.svg", "Best MFU with and without activation checkpointing", "the fastest layout that fits, any kernel, per setting; the fused RMSNorm kernel runs only without checkpointing, so part of each gap is the kernel's: finding 2 below compares the same layouts", "MFU %", nc3, CL3, 2, SL3, V3, M3, E3, hasp)

  # finding 2's pairs and finding 3's pairs, both sides
  for (w = 1; w <= 2; w++) {
    side = w == 1 ? "s" : "m"
    for (i = 1; i <= N[side]; i++) {
      if (!ok(side, i)) continue
      if (R[side, i, "ck"] == "none") {
        j = partner(side, i, "ck", "every_layer")
        if (ok(side, j)) { P2T[side]++; if (R[side, j, "t"] > R[side, i, "t"]) P2Y[side]++; if (side == "s") for (k = 1; k <= NCOL; k++) P2D[k] += C[j, k] - C[i, k] }
      }
      if (R[side, i, "pp"] + 0 > R[side, i, "tp"] + 0) {
        j = partner(side, i, "tp", R[side, i, "pp"]); if (j) j = partner(side, j, "pp", R[side, i, "tp"])
        if (ok(side, j)) {
          P3T[side]++; if (R[side, i, "t"] < R[side, j, "t"]) P3Y[side]++
          P3S[side, R[side, i, "set"]]++; if (R[side, i, "t"] < R[side, j, "t"]) P3SY[side, R[side, i, "set"]]++
          if (side == "s") {
            for (k = 1; k <= NCOL; k++) P3D[k] += C[j, k] - C[i, k]
            # the pair's MFU gap against the larger of its two bands (in MFU points)
            bi = R[side, i, "mfu"] * BAND[i] / 100; bj = R[side, j, "mfu"] * BAND[j] / 100
            if ((R[side, i, "mfu"] - R[side, j, "mfu"]) ^ 2 < (bi > bj ? bi : bj) ^ 2) P3IN++
            if (!P3BLO || BAND[i] < P3BLO) P3BLO = BAND[i]; if (BAND[j] < P3BLO) P3BLO = BAND[j]
            if (BAND[i] > P3BHI) P3BHI = BAND[i]; if (BAND[j] > P3BHI) P3BHI = BAND[j]
          }
          np4++; X4[np4] = R[side, j, "mfu"]; Y4[np4] = R[side, i, "mfu"]; H4[np4] = side == "m"
          for (q = 1; q <= np1; q++) if (P1[q] == R[side, i, "set"]) G4[np4] = q
        }
      }
    }
  }

  # 1.4 tp against pp
  section(md, "Tensor against pipeline parallelism at equal degree", "p1-tp-vs-pp", "pairs tp a pp b against tp b pp a")
  print "Pairs of layouts that are the same but for tp and pp swapped (tp a pp b against tp b pp a, a < b), both fitting:" > md
  print "how many of them the pipeline-heavy one is faster. In " P3IN + 0 " of the " P3T["s"] + 0 " simulated pairs the MFU gap is smaller than the" > md
  print "larger of the two layouts' bands (" sprintf("%.1f-%.1f%%", P3BLO, P3BHI) " of the MFU)." > md
  print "" > md
  table_head(md, "setting|pairs|pipeline-heavy faster" (hasp ? "|measured pairs|measured pipeline-heavy faster" : ""))
  for (q = 1; q <= np1; q++) {
    s = P1[q]
    if (!P3S["s", s] && !P3S["m", s]) continue
    printf "| %s | %d | %d |%s\n", s, P3S["s", s], P3SY["s", s], hasp ? sprintf(" %d | %d |", P3S["m", s], P3SY["m", s]) : "" > md
  }
  for (q = 1; q <= np1; q++) GL4[q] = P1[q]
  SC_BANDNOTE = sprintf("no whiskers: each MFU carries|its layout's band, %.1f-%.1f%% of|it (the report's tables); in %d|of the %d simulated pairs the|gap is within the larger band", P3BLO, P3BHI, P3IN + 0, P3T["s"])
  scatter(out "/img/p1-tp-vs-pp.svg", "Tensor against pipeline parallelism at equal degree", "each point a pair tp a pp b / tp b pp a (a < b), same micro-batch, sp, checkpointing and kernel",
    "MFU % of the tensor-heavy layout (tp b pp a)", "MFU % of the pipeline-heavy layout (tp a pp b)", np4, X4, Y4, G4, H4, np1, GL4, hasp)

  # 1.5 sequence parallelism
  section(md, "Sequence parallelism on and off", "p1-sp", "best MFU without and with sequence parallelism")
  print "The fastest layout that fits without sp (any tp) and with it (tp ≥ 2: at tp 1 sp changes nothing); gain: the" > md
  print "step time without over the step time with, minus 1 (positive: sp is faster)." > md
  print "" > md
  table_head(md, "setting|without sp|with sp|gain" (hasp ? "|measured without|measured with|measured gain" : ""))
  for (q = 1; q <= np1; q++) {
    s = P1[q]
    if (!((("s", s, "sp", "1") in HAS))) continue
    nc5++; CL5[nc5] = s; SP5[nc5] = s
    b0 = best("s", s, "sp=0"); b1 = best("s", s, "sp=1")
    G5["s", s] = (b0 && b1) ? 100 * (R["s", b0, "t"] / R["s", b1, "t"] - 1) : ""
    if (hasp) {
      m0 = best("m", s, "sp=0"); m1 = best("m", s, "sp=1")
      G5["m", s] = (m0 && m1) ? 100 * (R["m", m0, "t"] / R["m", m1, "t"] - 1) : ""
    }
    print off_on_row(s, "sp", "0", "1", nc5, V5, M5, E5, 1, G5["s", s] == "" ? "-" : sprintf("%+.1f%%", G5["s", s]),
      G5["m", s] == "" ? "-" : sprintf("%+.1f%%", G5["m", s])) > md
  }
  SL5[1] = "sp off"; SL5[2] = "sp on (tp >= 2)"
  bars(out "/img/p1-sp.svg", "Best MFU without and with sequence parallelism", "the fastest layout that fits, per setting whose space has sp on; at tp 1 sp changes nothing, so sp on means tp of 2 or more", "MFU %", nc5, CL5, 2, SL5, V5, M5, E5, hasp)

  # 1.6 OOM
  section(md, "Which layouts do not fit", "p1-oom", "predicted peak memory of every layout")
  print "Predicted peak memory per GPU against the 80 GiB of an A100" (hasp ? "; measured: the study's ok/oom label of the same layout, and how often the predicted label agrees with it (rows ok or oom)" : "") "." > md
  print "" > md
  table_head(md, "setting|layouts|do not fit|share|within 5 GiB of the limit" (hasp ? "|measured ok/oom rows|measured oom|labels agree" : ""))
  for (q = 1; q <= np1; q++) {
    s = P1[q]; tot = count("s", s, "", "ok") + count("s", s, "", "oom"); oo = count("s", s, "", "oom"); near = 0
    for (i = 1; i <= N["s"]; i++) if (R["s", i, "set"] == s && (R["s", i, "st"] == "ok" || R["s", i, "st"] == "oom") && (PEAK[i] - CAP[i]) ^ 2 < 25) near++
    OOMF[s] = tot ? oo / tot : 0
    mline = ""
    if (hasp) {
      mt = 0; mo = 0; ag = 0
      for (i = 1; i <= N["m"]; i++) {
        if (R["m", i, "set"] != s || (R["m", i, "st"] != "ok" && R["m", i, "st"] != "oom")) continue
        j = ID["s", rkey(s, R["m", i, "tp"], R["m", i, "pp"], R["m", i, "mb"], R["m", i, "sp"], R["m", i, "ck"], R["m", i, "ke"])]
        if (!j || (R["s", j, "st"] != "ok" && R["s", j, "st"] != "oom")) continue
        mt++; if (R["m", i, "st"] == "oom") mo++; if (R["m", i, "st"] == R["s", j, "st"]) ag++
        MLAB[j] = R["m", i, "st"]
      }
      AGT += mt; AGY += ag
      mline = mt ? sprintf(" %d | %d | %.1f%% |", mt, mo, 100 * ag / mt) : " | | |"
    }
    printf "| %s | %d | %d | %.0f%% | %d |%s\n", s, tot, oo, 100 * OOMF[s], near, mline > md
  }
  oom_figure(out "/img/p1-oom.svg")

  # ---------------- findings ----------------
  section(md, "The findings, one by one")
  print "Each verdict compares the simulated rows with the study's statement (study.md, \"Findings\") by the rule given;" > md
  print "\"reproduced\" when every setting (or pair share) meets it, \"partly\" when at least half do, \"not reproduced\"" > md
  print "otherwise." (hasp ? " The measured verdict applies the same rule to the measured rows of the settings that have them." : "") > md
  print "The mechanism is the breakdown column that carries the difference, read from the same rows." > md
  print "" > md
  cols = "finding|simulated|mechanism (breakdown column)" (hasp ? "|measured" : ""); sumh = head(cols); sums = rule(cols)
  sumt = ""

  # finding 1
  k1 = 0; t1 = 0; mk1 = 0; mt1 = 0; txt = ""; mp1 = 0
  for (k = 1; k <= NCOL; k++) TALLY[k] = 0
  TALLYN = 0
  for (q = 1; q <= np1; q++) {
    s = P1[q]; b = best("s", s, ""); if (!b) continue
    t1++; if (R["s", b, "mb"] == 1) k1++
    i1 = best("s", s, "mb=1"); i2 = best("s", s, "mb!1")
    line = sprintf("- %s: the best layout has micro-batch %s (%s, %s)", s, R["s", b, "mb"], lay("s", b), mfu("s", b))
    if (i1 && i2) {
      dcol(i1, i2); TALLYN++; if (DV > 0) TALLY[DK]++
      line = line sprintf("; the best with a larger micro-batch, %s, is %+.1f%% in step time, most in %s (%+.2f s)", lay("s", i2), 100 * (R["s", i2, "t"] / R["s", i1, "t"] - 1), COLNAME[DK], DV)
      if (R["s", i2, "tp"] * R["s", i2, "pp"] > R["s", i1, "tp"] * R["s", i1, "pp"] || (R["s", i2, "ck"] != "none" && R["s", i1, "ck"] == "none")) { mp1++; line = line ", and needs more model parallelism or checkpointing" }
    }
    if (hasm(s)) { m = best("m", s, ""); if (m) { mt1++; if (R["m", m, "mb"] == 1) mk1++; line = line sprintf("; measured best: micro-batch %s (%s, %s)", R["m", m, "mb"], lay("m", m), mfu("m", m)) } }
    txt = txt line ".\n"
  }
  mech = tally_name()
  F[1] = verdict(k1, t1)
  print "#### 1. Micro-batch size 1 is usually best\n" > md
  printf "**Simulated: %s** — micro-batch 1 is the best in %d of %d settings.%s Rule: the fastest layout of each setting has micro-batch 1. Mechanism: what the best layout with a larger micro-batch loses most in, %s; it needs more model parallelism or checkpointing than the micro-batch 1 best in %d of %d settings (the study's mechanism: micro-batch 1 allows the least model parallelism and no checkpointing).\n\n", F[1], k1, t1,
    hasp ? sprintf(" Measured: %s (%d of %d settings).", verdict(mk1, mt1), mk1, mt1) : "", mech, mp1, TALLYN > md
  printf "%s", txt > md
  sumt = sumt "\n| 1. micro-batch 1 is usually best | " F[1] " (" k1 " of " t1 " settings) | " mech "; more model parallelism or checkpointing at a larger micro-batch in " mp1 " of " TALLYN " |" (hasp ? " " verdict(mk1, mt1) " (" mk1 " of " mt1 ") |" : "")

  # finding 2
  k2 = 0; t2 = 0; txt = ""
  for (q = 1; q <= np1; q++) {
    s = P1[q]
    if (!((("s", s, "ck", "every_layer") in HAS))) continue
    bn = best("s", s, "ck=none"); bc = best("s", s, "ck=every_layer")
    if (!bn) { txt = txt "- " s ": no layout fits without checkpointing.\n"; continue }
    t2++; b = best("s", s, ""); if (R["s", b, "ck"] == "none") k2++
    line = sprintf("- %s: best without checkpointing %s (%s), with %s", s, lay("s", bn), mfu("s", bn), bc ? lay("s", bc) " (" mfu("s", bc) ")" : "none fits")
    if (bc) line = line sprintf(", %+.0f%% in step time", 100 * (R["s", bc, "t"] / R["s", bn, "t"] - 1))
    if (bc && R["s", bn, "tp"] * R["s", bn, "pp"] > R["s", bc, "tp"] * R["s", bc, "pp"]) line = line sprintf("; the non-checkpointed best raises tp·pp to %d (checkpointed best: %d) and is still faster", R["s", bn, "tp"] * R["s", bn, "pp"], R["s", bc, "tp"] * R["s", bc, "pp"])
    txt = txt line ".\n"
  }
  kk = 1; for (k = 2; k <= NCOL; k++) if (P2D[k] > P2D[kk]) kk = k
  mech = COLNAME[kk] sprintf(" (%s: %+.1f s summed over the pairs, of %+.1f s in all)", COLDESC[COLNAME[kk]], P2D[kk], sumd(P2D))
  share = P2T["s"] ? P2Y["s"] / P2T["s"] : 0
  F[2] = (P2T["s"] == 0) ? "not testable" : (share >= PAIR_SHARE && k2 == t2 ? "reproduced" : (share >= PAIR_SHARE || k2 == t2 ? "partly reproduced" : "not reproduced"))
  mv = hasp ? (P2T["m"] ? (P2Y["m"] / P2T["m"] >= PAIR_SHARE ? "reproduced" : "not reproduced") sprintf(" (%d of %d pairs)", P2Y["m"], P2T["m"]) : "not testable") : ""
  print "\n#### 2. Avoid activation checkpointing where memory allows\n" > md
  printf "**Simulated: %s** — in %d of %d pairs (the same layout with every_layer and with none, both fitting) the checkpointed one is slower, and the fastest layout is not checkpointed in %d of %d settings.%s Rule: at least %d%% of the pairs, and every setting's best. Mechanism: %s.\n\n",
    F[2], P2Y["s"], P2T["s"], k2, t2, hasp ? " Measured pairs: " mv "." : "", 100 * PAIR_SHARE, mech > md
  printf "%s", txt > md
  sumt = sumt "\n| 2. avoid checkpointing | " F[2] " (" P2Y["s"] " of " P2T["s"] " pairs; best not checkpointed in " k2 " of " t2 ") | " COLNAME[kk] " |" (hasp ? " " mv " |" : "")

  # finding 3
  kk = 1; kn = 1; for (k = 2; k <= NCOL; k++) { if (P3D[k] > P3D[kk]) kk = k; if (P3D[k] < P3D[kn]) kn = k }
  share = P3T["s"] ? P3Y["s"] / P3T["s"] : 0
  F[3] = P3T["s"] == 0 ? "not testable" : (share >= PAIR_TP_PP ? "reproduced" : (share >= 0.5 ? "partly reproduced" : "not reproduced"))
  mv = hasp ? (P3T["m"] ? (P3Y["m"] / P3T["m"] >= PAIR_TP_PP ? "reproduced" : (P3Y["m"] / P3T["m"] >= 0.5 ? "partly reproduced" : "not reproduced")) sprintf(" (%d of %d pairs)", P3Y["m"], P3T["m"]) : "not testable") : ""
  mech = COLNAME[kk] sprintf(" (the tensor-heavy layouts spend %+.1f s more in %s over the pairs", P3D[kk], COLDESC[COLNAME[kk]]) \
    (P3D[kn] < 0 ? sprintf("; the pipeline-heavy ones pay in %s, %+.1f s)", COLNAME[kn], -P3D[kn]) : "; the pipeline-heavy ones pay in no column more)")
  print "\n#### 3. Prefer pipeline over tensor parallelism at equal degree\n" > md
  printf "**Simulated: %s** — the pipeline-heavy layout is faster in %d of %d pairs (figure above).%s Rule: at least %d%% of the pairs (half: partly). Mechanism: %s.\n",
    F[3], P3Y["s"], P3T["s"], hasp ? " Measured: " mv "." : "", 100 * PAIR_TP_PP, mech > md
  sumt = sumt "\n| 3. pipeline over tensor parallelism | " F[3] " (" P3Y["s"] " of " P3T["s"] " pairs) | " COLNAME[kk] (P3D[kn] < 0 ? " against " COLNAME[kn] : "") " |" (hasp ? " " mv " |" : "")

  # finding 4
  k4 = 0; t4 = 0; mk4 = 0; mt4 = 0; txt = ""; mem4 = 0; help4 = 0
  for (k = 1; k <= NCOL; k++) TALLY[k] = 0
  for (q = 1; q <= nc5; q++) {
    s = SP5[q]; if (G5["s", s] == "") continue
    large = SMODEL[s] != "llama-13b" || SSEQ[s] >= 8192
    t4++; agree = large ? G5["s", s] > SP_GAIN : G5["s", s] <= SP_GAIN; if (agree) k4++
    b0 = best("s", s, "sp=0"); b1 = best("s", s, "sp=1"); p0 = partner("s", b1, "sp", "0")
    line = sprintf("- %s (%s): sp %s (%+.1f%%; best without %s, with %s)", s, large ? "30B+ or 8k" : "smaller", G5["s", s] > SP_GAIN ? "helps" : "does not help", G5["s", s], lay("s", b0), lay("s", b1))
    if (p0) line = line sprintf("; the best sp layout without sp %s (peak %.1f GiB against %.1f with sp)", R["s", p0, "st"] == "ok" ? "fits" : "does not fit", PEAK[p0], PEAK[b1])
    if (G5["s", s] > SP_GAIN) {
      if (R["s", p0, "st"] == "oom" || R["s", b0, "tp"] * R["s", b0, "pp"] > R["s", b1, "tp"] * R["s", b1, "pp"] || R["s", b0, "ck"] != R["s", b1, "ck"]) { mem4++; line = line ": carried by memory (peak_mem_gib)" }
      else { dcol(b1, b0); TALLY[DK]++; line = line sprintf(": the same layout, carried by %s (%+.2f s without sp)", COLNAME[DK], DV) }
      help4++
    }
    if (hasm(s) && G5["m", s] != "") { mt4++; if (large ? G5["m", s] > SP_GAIN : G5["m", s] <= SP_GAIN) mk4++; line = line sprintf("; measured %+.1f%%", G5["m", s]) }
    txt = txt line ".\n"
  }
  F[4] = verdict(k4, t4)
  kk = 1; for (k = 2; k <= NCOL; k++) if (TALLY[k] > TALLY[kk]) kk = k
  if (!help4) { mech = "none (sp helps in no setting)"; mcol4 = "-" }
  else if (mem4 >= help4 - mem4) { mech = sprintf("memory (peak_mem_gib), as the study says: in %d of the %d settings where sp helps, the best layout without it needs more model parallelism or checkpointing, or does not fit", mem4, help4); mcol4 = "peak_mem_gib (memory), as the study" }
  else { mech = sprintf("%s (%s) at the same layout in %d of the %d settings where sp helps, not memory as the study says (a cheaper layout: %d)", COLNAME[kk], COLDESC[COLNAME[kk]], TALLY[kk], help4, mem4); mcol4 = COLNAME[kk] " (not memory, the study's)" }
  print "\n#### 4. Sequence parallelism helps only for the largest settings (30B+ or 8k)\n" > md
  printf "**Simulated: %s** — %d of %d settings go the finding's way.%s Rule: the best layout with sp is more than %.0f%% faster than the best without in the 30B+ or 8k settings, and not in the others. Mechanism: %s.\n\n",
    F[4], k4, t4, hasp ? sprintf(" Measured: %s (%d of %d settings with sp runs).", verdict(mk4, mt4), mk4, mt4) : "", SP_GAIN, mech > md
  printf "%s", txt > md
  sumt = sumt "\n| 4. sp helps only the largest | " F[4] " (" k4 " of " t4 " settings) | " mcol4 " |" (hasp ? " " verdict(mk4, mt4) " (" mk4 " of " mt4 ") |" : "")

  # finding 5
  k5 = 0; t5 = 0; mk5 = 0; mt5 = 0; txt = ""; kern5 = 0; gain5 = 0; KP5 = 0; LP5 = 0
  for (q = 1; q <= np1; q++) {
    s = P1[q]
    if (!((("s", s, "ke", "flash2") in HAS)) || !((("s", s, "ke", "flash2+rmsnorm") in HAS))) continue
    bf = best("s", s, "ke=flash2"); br = best("s", s, "ke=flash2+rmsnorm"); if (!bf || !br) continue
    pr = 0; pn = 0; py = 0
    for (i = 1; i <= N["s"]; i++) if (R["s", i, "set"] == s && R["s", i, "ke"] == "flash2+rmsnorm" && ok("s", i)) {
      j = partner("s", i, "ke", "flash2"); if (!ok("s", j)) continue
      pn++; pr += R["s", j, "t"] / R["s", i, "t"]; if (R["s", i, "t"] < R["s", j, "t"]) py++
    }
    # the kernel's share: flash2+rmsnorm at the flash2 best's own layout (else the mean ratio over the pairs)
    total = R["s", br, "mfu"] - R["s", bf, "mfu"]; j = partner("s", bf, "ke", "flash2+rmsnorm")
    kp = ok("s", j) ? R["s", j, "mfu"] - R["s", bf, "mfu"] : (pn ? R["s", bf, "mfu"] * (pr / pn - 1) : 0); lp = total - kp
    t5++; KP5 += kp; LP5 += lp; if (total >= RMS_POINTS && lp >= kp) k5++; if (total >= RMS_POINTS && lp < kp) kern5++; if (total >= RMS_POINTS) gain5++
    dcol(br, bf)
    line = sprintf("- %s: %+.1f MFU points (flash2 best %s, %s; flash2+rmsnorm best %s, %s): the kernel alone, at the flash2 best's layout, gives %+.1f%s, the cheaper layout the fused kernel's memory allows the rest, %+.1f; the flash2 best loses most in %s (%+.2f s); flash2+rmsnorm is faster in %d of %d equal-layout pairs",
      s, total, lay("s", bf), mfu("s", bf), lay("s", br), mfu("s", br), kp, ok("s", j) ? "" : " (estimated from the pairs' mean ratio: that layout does not fit with it)", lp, COLNAME[DK], DV, py, pn)
    if (hasm(s)) {
      mf = best("m", s, "ke=flash2"); mr = best("m", s, "ke=flash2+rmsnorm")
      if (mf && mr) {
        mt5++; mtot = R["m", mr, "mfu"] - R["m", mf, "mfu"]; j = partner("m", mf, "ke", "flash2+rmsnorm")
        mkp = ok("m", j) ? R["m", j, "mfu"] - R["m", mf, "mfu"] : ""
        if (mtot >= RMS_POINTS && (mkp == "" || mtot - mkp >= mkp)) mk5++
        line = line sprintf("; measured %+.1f points (%s against %s)%s", mtot, lay("m", mr), lay("m", mf), mkp == "" ? ", the fused kernel at the flash2 best's layout not measured" : sprintf(", the kernel alone %+.1f, the layout %+.1f", mkp, mtot - mkp))
      }
    }
    txt = txt line ".\n"
  }
  F[5] = t5 == 0 ? "not testable" : (k5 == t5 ? "reproduced" : (k5 + kern5 == t5 && kern5 ? "partly reproduced (the gain, but more from the kernel than from the layout)" : verdict(k5, t5)))
  mech5 = sprintf("summed over the settings, the kernel at the same layout gives %+.1f MFU points, the cheaper layout %+.1f: the gain is carried by %s", KP5, LP5,
    LP5 > KP5 ? "memory (peak_mem_gib: the fused kernel's smaller activations let a layout with less model parallelism or no checkpointing fit), as the study says" : "compute (t_forward_s + t_backward_s: the norm's kernels), not mainly by the cheaper layout the study credits")
  mcol5 = LP5 > KP5 ? "peak_mem_gib (the cheaper layout), as the study" : "compute (the kernel), not the layout (the study's)"
  print "\n#### 5. The fused RMSNorm kernel gains many MFU points, largely through a cheaper layout\n" > md
  printf "**Simulated: %s** — the fused kernel gains at least %.0f MFU points in %d of %d settings, more through the layout than through the kernel in %d.%s Rule: the best flash2+rmsnorm layout is at least %.0f MFU points above the best flash2 layout, and more of the gain comes from the layout change than from the kernel at the same layout (the kernel's share: flash2+rmsnorm at the flash2 best's own layout, or where that does not fit the mean step-time ratio over the equal-layout pairs applied to it). Mechanism: %s.\n\n",
    F[5], RMS_POINTS, gain5, t5, k5, hasp ? sprintf(" Measured, by the same rule: %s (%d of %d settings).", verdict(mk5, mt5), mk5, mt5) : "", RMS_POINTS, mech5 > md
  printf "%s", txt > md
  f5 = F[5]; g5 = "gains in " gain5 ", via the layout in " k5 " of " t5 " settings"
  if (f5 ~ /\)$/) sub(/\)$/, "; " g5 ")", f5); else f5 = f5 " (" g5 ")"
  sumt = sumt "\n| 5. fused RMSNorm gains, via the layout | " f5 " | " mcol5 " |" (hasp ? " " verdict(mk5, mt5) " (" mk5 " of " mt5 ") |" : "")

  # finding 6
  k6 = 0; t6 = 0; txt = ""
  for (q = 1; q <= np1; q++) { s = P1[q]; t6++; if (OOMF[s] >= OOM_MANY) k6++; txt = txt sprintf("%s%s %.0f%%", q > 1 ? ", " : "", s, 100 * OOMF[s]) }
  F[6] = verdict(k6, t6)
  print "\n#### 6. Many configurations do not fit in 80 GB\n" > md
  printf "**Simulated: %s** — at least %.0f%% of the space does not fit in %d of %d settings (%s).%s Mechanism: the memory model's peak per GPU (peak_mem_gib) against the GPU's memory; the figure above shows how close to the boundary the layouts lie.\n",
    F[6], 100 * OOM_MANY, k6, t6, txt, hasp && AGT ? sprintf(" Against the measured labels: the predicted ok/oom label agrees on %d of %d measured layouts (%.1f%%).", AGY, AGT, 100 * AGY / AGT) : "" > md
  sumt = sumt "\n| 6. many layouts do not fit | " F[6] " (" k6 " of " t6 " settings) | peak_mem_gib |" (hasp ? (AGT ? sprintf(" labels agree %.1f%% |", 100 * AGY / AGT) : " |") : "")

  section(md, "Summary")
  print sumh > md
  print sums sumt > md
  part2(md)
  close(md)
}
function sumd(D,    k, t) { t = 0; for (k = 1; k <= NCOL; k++) t += D[k]; return t }
function tally_name(    k, b) { b = 0; for (k = 1; k <= NCOL; k++) if (TALLY[k] > (b ? TALLY[b] : 0)) b = k; return b ? COLNAME[b] " (" COLDESC[COLNAME[b]] "), the largest in " TALLY[b] " of " TALLYN " settings" : "none (no setting has both)" }

# Predicted peak memory of every layout of each part-1 setting, sorted, against the GPU's memory; measured labels as
# rings. One panel a setting, four a row.
function oom_figure(f,    q, s, nn, i, j, t, L, cols, pw, ph, gx, gy, W, H, x0, y0, ymax, cap, x, y, col, r, maxp, mw, mn, k) {
  cols = 4; pw = 250; ph = 170; gx = 40; gy = 70
  W = 60 + cols * (pw + gx); H = 90 + int((np1 + cols - 1) / cols) * (ph + gy) - gy + 56
  svg_open(f, W, H)
  svg_text(f, 10, 20, "Which layouts fit: predicted peak memory per GPU, every layout of each setting", "font-size=\"15\" font-weight=\"bold\"")
  svg_text(f, 10, 38, "layouts sorted by predicted peak; dot: predicted to fit (blue) or not (red); dashed: the GPU's memory", "fill=\"#444444\"")
  if (paper == "yes" && N["m"] > 0) svg_text(f, 10, 54, "ring: a measured layout; thin grey: its measured ok/oom label agrees with the prediction; thick orange: it does not", "fill=\"#444444\"")
  for (q = 1; q <= np1; q++) {
    s = P1[q]; nn = 0; cap = 0; maxp = 0
    for (i = 1; i <= N["s"]; i++) if (R["s", i, "set"] == s && (R["s", i, "st"] == "ok" || R["s", i, "st"] == "oom")) {
      L[++nn] = i; cap = CAP[i]; if (PEAK[i] > maxp) maxp = PEAK[i]
    }
    for (i = 2; i <= nn; i++) { t = L[i]; for (j = i - 1; j >= 1 && (PEAK[L[j]] > PEAK[t] || (PEAK[L[j]] == PEAK[t] && L[j] > t)); j--) L[j + 1] = L[j]; L[j + 1] = t }
    ymax = axis_top(maxp < 2 * cap ? maxp : 2 * cap)
    x0 = 60 + ((q - 1) % cols) * (pw + gx); y0 = 90 + int((q - 1) / cols) * (ph + gy)
    mw = 0; mn = 0
    for (k = 1; k <= nn; k++) if (L[k] in MLAB) { mn++; if (MLAB[L[k]] != R["s", L[k], "st"]) mw++ }
    svg_text(f, x0, y0 - 8, s " (" nn " layouts)", "font-weight=\"bold\"")
    if (mn) svg_text(f, x0 + 6, y0 + 14, "wrong: " mw " of " mn " measured", "font-size=\"10\" fill=\"#b35900\"")
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n", x0, y0, pw, ph > f
    for (t = 0; t <= ymax; t += (ymax > 100 ? 40 : 20)) { y = y0 + ph - ph * t / ymax; svg_line(f, x0 - 3, y, x0, y, "stroke=\"black\""); svg_text(f, x0 - 5, y + 4, t, "text-anchor=\"end\" font-size=\"10\"") }
    y = y0 + ph - ph * cap / ymax
    svg_line(f, x0, y, x0 + pw, y, "stroke=\"#c0392b\" stroke-dasharray=\"5 3\"")
    svg_text(f, x0 + 4, y - 3, cap " GiB", "font-size=\"10\" fill=\"#c0392b\"")
    svg_text(f, x0 + pw / 2, y0 + ph + 14, "layouts, by predicted peak", "text-anchor=\"middle\" font-size=\"10\" fill=\"#444444\"")
    if (q % cols == 1) svg_text(f, x0 - 36, y0 + ph / 2, "peak GiB", "text-anchor=\"middle\" font-size=\"10\" transform=\"rotate(-90 " (x0 - 36) " " (y0 + ph / 2) ")\"")
    for (k = 1; k <= nn; k++) {
      i = L[k]; x = x0 + pw * (k - 0.5) / nn
      y = PEAK[i] > ymax ? y0 + 2 : y0 + ph - ph * PEAK[i] / ymax
      col = R["s", i, "st"] == "ok" ? "#4a7ab5" : "#c0392b"
      if (PEAK[i] > ymax) printf "<path d=\"M %.1f %.1f l 3 5 l -6 0 z\" fill=\"%s\"/>\n", x, y, col > f
      else printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n", x, y, col > f
      if ((i in MLAB) && MLAB[i] == R["s", i, "st"]) printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"none\" stroke=\"#aaaaaa\" stroke-width=\"0.8\"/>\n", x, y > f
    }
    # the wrong predictions last, on top of the rest
    for (k = 1; k <= nn; k++) {
      i = L[k]; if (!(i in MLAB) || MLAB[i] == R["s", i, "st"]) continue
      x = x0 + pw * (k - 0.5) / nn; y = PEAK[i] > ymax ? y0 + 2 : y0 + ph - ph * PEAK[i] / ymax
      printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#e67e22\" stroke-width=\"2.2\"/>\n", x, y > f
    }
  }
  svg_text(f, 10, H - 12, "triangles at a panel's top: peaks above its axis (more than twice the GPU's memory); no band is drawn on a peak: the report's table counts the layouts within 5 GiB of the limit", "font-size=\"11\" fill=\"#444444\"")
  svg_close(f)
}

function part2(md,    q, s, v, k, b, lay1, line, nb, CLb, Vb, Eb, SLb, ib, ni, Vi, Ei, CLi, SLi, x, out1, hold1, hold2, hold3, t, gb) {
  print "\n## Part 2: the study extended (frame)\n" > md
  print "> **The scale model is still being corrected** (issue 25, \"Trust at scale\"): every number in this part is today's" > md
  print "> model's and will move when the corrected model lands. The sections, sweeps and figures below are the frame the same" > md
  print "> command fills then. Each number carries the error band of its regime (the sweep's `band_pct`, docs/trust.md), and" > md
  print "> every setting here lies outside the calibration data (last column); read the bands as a floor, not a bound." > md
  print "" > md
  print "Global batch: 16M tokens (Llama 3 405B's). Each setting's space:" > md
  print "" > md
  table_head(md, "setting|model|seq|GPUs|profile|space")
  for (q = 1; q <= np2; q++) { s = P2[q]; printf "| %s | %s | %d | %d | %s | %s |\n", s, SMODEL[s], SSEQ[s], SGPUS[s], SPROF[s], SSPACE[s] > md }
  print "" > md
  print "The Blackwell settings also sweep BF16 against FP8 linear layers (the layout names fp8 where it won). The top 5" > md
  print "of each setting are exact by bound and prune (docs/sweep.md). Not in the frame yet: DeepSeek-V3-class MoE (one" > md
  print "sweep of its space takes about 9 minutes on 2 cores), 16,384 GPUs of 175B and 131,072 of anything, ZeRO-2/3" > md
  print "(each is one more entry in bench/study-report.sh's PART2 or its spaces; left out to keep the whole report within" > md
  print "15 minutes on 2 cores)." > md
  section(md, "Best layouts at scale", "p2-best", "best MFU at scale, with bands")
  table_head(md, "setting|profile|best layout (tp pp mb sp, recompute, schedule, precision if not bf16)|MFU %|step s|bubble %|kWh per million tokens|outside the calibration data")
  for (q = 1; q <= np2; q++) {
    s = P2[q]; v = "-"; nb++
    # under the name, the best layout in two lines: its degrees, then its recompute, schedule and precision
    CLb[nb] = s (N2[s, v] ? "|tp" X2[s, v, 1, "tp"] " pp" X2[s, v, 1, "pp"] " mb" X2[s, v, 1, "mb"] " sp" X2[s, v, 1, "sp"] "|" (X2[s, v, 1, "ck"] == "none" ? "no recompute" : "recompute " X2[s, v, 1, "ck"]) ", " X2[s, v, 1, "sch"] (X2[s, v, 1, "vs"] > 1 ? " V" X2[s, v, 1, "vs"] : "") ", " X2[s, v, 1, "prec"] : "")
    if (!N2[s, v]) { printf "| %s | %s | none fits | | | | | |\n", s, SPROF[s] > md; Vb[nb, 1] = "x"; continue }
    b = X2[s, v, 1, "band"]
    printf "| %s | %s | %s | %s | %s | %.1f | %s | %s |\n", s, SPROF[s], X2[s, v, 1, "lay"], band2(X2[s, v, 1, "mfu"], b, "%.1f"), band2(X2[s, v, 1, "t"], b, "%.2f"),
      X2[s, v, 1, "bub"], band2(X2[s, v, 1, "kwh"], b, "%.3f"), outside(X2[s, v, 1, "flags"]) > md
    Vb[nb, 1] = sprintf("%.2f", X2[s, v, 1, "mfu"]); Eb[nb, 1] = sprintf("%.2f", X2[s, v, 1, "mfu"] * b / 100)
  }
  print "" > md
  print "MFU, step time and energy carry the band of the best layout's regime (± the sweep's `band_pct` of the value); the" > md
  print "bubble is a share of the same simulated step and has no band of its own. MFU is against each GPU's own dense BF16" > md
  print "peak (FP8 layouts too): compare GPU generations by step time, not by MFU." > md
  SLb[1] = "best layout (today's model)"
  BAR_EBNOTE = "the band of the best layout's regime, against measurement (today's model, issue 25 pending)"
  bars(out "/img/p2-best.svg", "The study extended: best MFU at scale (frame, issue 25 pending)", "the fastest layout of each setting (under its name), 16M tokens a step, top 5 by bound and prune; every setting lies outside the calibration data (the report's table); MFU is against each GPU's own dense BF16 peak, FP8 layouts too: compare GPUs by step time (the table), not by MFU", "MFU %", nb, CLb, 1, SLb, Vb, EMPTY, Eb, 0)

  section(md, "The findings at scale")
  print "Read from each setting's top 5 (the rest of the space is pruned, so pairs as in part 1 are not available):" > md
  print "the best layout's micro-batch (finding 1), checkpointing (2), tp against pp (3) and schedule." > md
  print "" > md
  table_head(md, "setting|micro-batch of the best (top 5 with mb 1)|checkpointing of the best (top 5 without)|tp, pp of the best|schedule of the best|precision of the best")
  hold1 = 0; hold2 = 0; hold3 = 0; t = 0
  for (q = 1; q <= np2; q++) {
    s = P2[q]; v = "-"; if (!N2[s, v]) continue
    t++; c1 = 0; c2 = 0; n10 = N2[s, v] < 5 ? N2[s, v] : 5
    for (k = 1; k <= n10; k++) { if (X2[s, v, k, "mb"] == 1) c1++; if (X2[s, v, k, "ck"] == "none") c2++ }
    if (X2[s, v, 1, "mb"] == 1) hold1++; if (X2[s, v, 1, "ck"] == "none") hold2++; if (X2[s, v, 1, "pp"] + 0 >= X2[s, v, 1, "tp"] + 0) hold3++
    printf "| %s | %s (%d of %d) | %s (%d of %d) | tp %s, pp %s | %s | %s |\n", s, X2[s, v, 1, "mb"], c1, n10, X2[s, v, 1, "ck"], c2, n10, X2[s, v, 1, "tp"], X2[s, v, 1, "pp"], X2[s, v, 1, "sch"], X2[s, v, 1, "prec"] > md
  }
  printf "\nToday's model: the best layout has micro-batch 1 in %d of %d settings (finding 1 %s), no checkpointing in %d of %d (finding 2 %s), and at least as much pipeline as tensor parallelism in %d of %d (finding 3 %s at the best layout). Findings 4 and 5 are not asked by this space (sp on, one kernel); finding 6 is in each setting's sweep (its `oom` rows).\n",
    hold1, t, hold1 == t ? "holds" : "breaks where it does not", hold2, t, hold2 == t ? "holds" : "breaks where it does not", hold3, t, hold3 == t ? "holds" : "breaks where it does not" > md

  section(md, "The interconnect what-if", "p2-interconnect", "best MFU at 0.5x, 1x and 2x the InfiniBand bandwidth")
  table_head(md, "setting|0.5× InfiniBand|1×|2×|the best layout changes|MFU change at 0.5× and 2×, against the 1× band")
  split("ib x0.5,-,ib x2", IBV, ","); SLi[1] = "0.5x InfiniBand"; SLi[2] = "1x"; SLi[3] = "2x"
  for (q = 1; q <= np2; q++) {
    s = P2[q]; if (!N2[s, "ib x2"] && !N2[s, "ib x0.5"]) continue
    ni++; CLi[ni] = s; line = "| " s " |"; x = ""; gb = ""
    for (k = 1; k <= 3; k++) {
      v = IBV[k]
      if (!N2[s, v]) { line = line " none fits |"; Vi[ni, k] = "x"; continue }
      b = X2[s, v, 1, "band"]
      line = line sprintf(" %s, MFU %s%% (%s Gb/s) |", X2[s, v, 1, "lay"], band2(X2[s, v, 1, "mfu"], b, "%.1f"), X2[s, v, 1, "ib"])
      Vi[ni, k] = sprintf("%.2f", X2[s, v, 1, "mfu"]); Ei[ni, k] = sprintf("%.2f", X2[s, v, 1, "mfu"] * b / 100)
      gb = gb (gb == "" ? "" : " / ") X2[s, v, 1, "ib"]
      if (k != 2 && N2[s, "-"] && X2[s, v, 1, "lay"] != X2[s, "-", 1, "lay"]) x = x (x == "" ? "" : "; ") "at " substr(v, 4)
    }
    line = line " " (x == "" ? "no" : "yes, " x) " |"
    CLi[ni] = s "|" gb " Gb/s InfiniBand per NIC"
    if (N2[s, "-"]) {
      b = X2[s, "-", 1, "mfu"] * X2[s, "-", 1, "band"] / 100
      for (k = 1; k <= 3; k += 2) {
        v = IBV[k]
        line = line (N2[s, v] ? sprintf(" %s %+.1f points (%s the ±%.1f band);", substr(v, 4), X2[s, v, 1, "mfu"] - X2[s, "-", 1, "mfu"], (X2[s, v, 1, "mfu"] - X2[s, "-", 1, "mfu"]) ^ 2 < b * b ? "inside" : "outside", b) : " " substr(v, 4) ": none fits;")
      }
      sub(/;$/, "", line)
    }
    print line " |" > md
  }
  BAR_EBNOTE = "each bar's band against measurement (today's model, issue 25 pending), not the uncertainty of the difference between two bars"
  if (ni) bars(out "/img/p2-interconnect.svg", "The interconnect what-if (frame, issue 25 pending)", "best MFU at 0.5x, 1x and 2x the profile's InfiniBand bandwidth per NIC; the best layout at each may differ: the report's table names it", "MFU %", ni, CLi, 3, SLi, Vi, EMPTY, Ei, 0)
  print "\nEnergy per million tokens of each best layout is in the first table (docs/energy.md: the power model and its sources)." > md
  answers(md)
}
# the micro-batches a pipeline runs per step at the best layout of part-2 setting s (dense: dp = GPUs / (tp pp))
function nmb(s) { return sprintf("%d", SGB[s] / (SGPUS[s] / (X2[s, "-", 1, "tp"] * X2[s, "-", 1, "pp"])) / X2[s, "-", 1, "mb"]) }
# One best layout of part 2 in words: "MFU m ± b%, step t ± b s, bubble u%, e ± b kWh per million tokens (layout)".
function p2best(s,    b) {
  b = X2[s, "-", 1, "band"]
  return sprintf("MFU %s%%, step %s s, bubble %.1f%%, %s kWh per million tokens (%s)", band2(X2[s, "-", 1, "mfu"], b, "%.1f"),
    band2(X2[s, "-", 1, "t"], b, "%.2f"), X2[s, "-", 1, "bub"], band2(X2[s, "-", 1, "kwh"], b, "%.3f"), X2[s, "-", 1, "lay"])
}
# Part 2's answers, read from the tables above (nothing written in): the same model on more GPUs of one profile; the
# same model and GPU count on other profiles; the interconnect what-if; where the study's findings break at scale.
function answers(md,    q, r, s, u, n, line, done, b, v, k, d) {
  section(md, "Answers of the extension")
  print "Today's model (issue 25 pending); every setting outside the calibration data, so each band is a floor. Read from" > md
  print "the tables above." > md
  print "" > md
  n = 0
  for (q = 1; q <= np2; q++) for (r = q + 1; r <= np2; r++) {
    s = P2[q]; u = P2[r]
    if (!N2[s, "-"] || !N2[u, "-"] || SMODEL[s] != SMODEL[u] || SSEQ[s] != SSEQ[u] || SPROF[s] != SPROF[u] || SGPUS[s] == SGPUS[u]) continue
    n++
    printf "- **More GPUs** (%s at %d tokens on %s): %d GPUs: %s; %d GPUs: %s.%s\n", SMODEL[s], SSEQ[s], SPROF[s], SGPUS[s], p2best(s), SGPUS[u], p2best(u),
      (X2[u, "-", 1, "bub"] > X2[s, "-", 1, "bub"] + 10 ? sprintf(" The bubble grows from %.1f%% to %.1f%% of the step: pp %d with %s micro-batches a pipeline per step, against pp %d with %s.", X2[s, "-", 1, "bub"], X2[u, "-", 1, "bub"],
        X2[s, "-", 1, "pp"], nmb(s), X2[u, "-", 1, "pp"], nmb(u)) : "") > md
  }
  for (q = 1; q <= np2; q++) {
    s = P2[q]; if (!N2[s, "-"] || ((s) in done)) continue
    line = ""; k = 0
    for (r = q; r <= np2; r++) {
      u = P2[r]
      if (!N2[u, "-"] || SMODEL[s] != SMODEL[u] || SSEQ[s] != SSEQ[u] || SGPUS[s] != SGPUS[u]) continue
      done[u] = 1; k++
      line = line (k > 1 ? "; " : "") sprintf("%s: step %s s, %s kWh per million tokens, MFU %s%% (%s)", SPROF[u], band2(X2[u, "-", 1, "t"], X2[u, "-", 1, "band"], "%.2f"),
        band2(X2[u, "-", 1, "kwh"], X2[u, "-", 1, "band"], "%.3f"), band2(X2[u, "-", 1, "mfu"], X2[u, "-", 1, "band"], "%.1f"), X2[u, "-", 1, "prec"])
    }
    if (k > 1) printf "- **Other GPUs** (%s at %d tokens on %d GPUs): %s. Compare step times: each MFU is against its own GPU's BF16 peak.\n", SMODEL[s], SSEQ[s], SGPUS[s], line > md
  }
  for (q = 1; q <= np2; q++) {
    s = P2[q]; if (!N2[s, "-"] || (!N2[s, "ib x0.5"] && !N2[s, "ib x2"])) continue
    b = X2[s, "-", 1, "mfu"] * X2[s, "-", 1, "band"] / 100; line = ""
    for (k = 1; k <= 3; k += 2) {
      v = IBV[k]; if (!N2[s, v]) continue
      d = X2[s, v, 1, "mfu"] - X2[s, "-", 1, "mfu"]
      line = line (line == "" ? "" : "; ") sprintf("at %s (%s Gb/s) MFU %s%%, %+.1f points, %s the ±%.1f band of the 1x value", substr(v, 4), X2[s, v, 1, "ib"],
        band2(X2[s, v, 1, "mfu"], X2[s, v, 1, "band"], "%.1f"), d, d * d < b * b ? "inside" : "outside", b)
    }
    printf "- **The interconnect** (%s, %s Gb/s InfiniBand per NIC: MFU %s%%): %s.\n", s, X2[s, "-", 1, "ib"], band2(X2[s, "-", 1, "mfu"], X2[s, "-", 1, "band"], "%.1f"), line > md
  }
  line = ""
  for (q = 1; q <= np2; q++) {
    s = P2[q]; if (!N2[s, "-"]) continue
    if (X2[s, "-", 1, "mb"] != 1) line = line (line == "" ? "" : "; ") s ": micro-batch " X2[s, "-", 1, "mb"] " (finding 1)"
    if (X2[s, "-", 1, "ck"] != "none") line = line (line == "" ? "" : "; ") s ": checkpointing " X2[s, "-", 1, "ck"] " (finding 2)"
    if (X2[s, "-", 1, "pp"] + 0 < X2[s, "-", 1, "tp"] + 0) line = line (line == "" ? "" : "; ") s ": more tensor than pipeline parallelism (finding 3)"
  }
  printf "- **The study's findings at scale** (the best layout of each setting): %s.\n", line == "" ? "findings 1-3 hold in every setting" : "they break in " line > md
}
