# study-svg.awk -- the SVG charts of bench/study-report.sh (owner: the study report, docs/study-report.md):
# grouped bars with measured markers and error bars, and a scatter with a diagonal. Plain SVG 1.1, fixed
# number formats, no iteration over awk's hash order: the same data give the same bytes.

function esc(x) { gsub(/&/, "\\&amp;", x); gsub(/</, "\\&lt;", x); gsub(/>/, "\\&gt;", x); return x }
function color(k) { return substr("#4a7ab5#e08a2c#4d9e5a#b5485a#8a6bb5#7a7a7a#c9b13a#3aa6b0", 7 * ((k - 1) % 8) + 1, 7) }
function svg_open(f, w, h) {
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\">\n", w, h, w, h > f
  printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h > f
}
function svg_text(f, x, y, s, extra) { printf "<text x=\"%.1f\" y=\"%.1f\"%s>%s</text>\n", x, y, extra == "" ? "" : " " extra, esc(s) > f }
function svg_line(f, x1, y1, x2, y2, style) { printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x1, y1, x2, y2, style > f }
function svg_close(f) { print "</svg>" > f; close(f) }
# nice upper end of an axis holding v
function axis_top(v,    t) { t = 10; while (t < v * 1.08) t += 10; return t }

# Grouped bars. nc categories (CL[c]) along x, ns series (SL[s]) per category. V[c, s]: a number, "x" (none
# fits: drawn as a red "none fits") or "" (not in this category's space: "n/a"); MV[c, s] the same for measured
# values (a black diamond on the bar's centre, "" for none); EB[c, s] a half-width error band (drawn as a
# whisker) or "". Every bar carries its value. note: a line under the title.
function bars(f, title, note, ylab, nc, CL, ns, SL, V, MV, EB, hasm,    c, s, bw, gw, left, W, H, top, ph, ymax, x, y, h, v, t, lx, lab, foot, lw, nfl, FL, nparts, FP) {
  bw = ns > 4 ? 17 : 22; left = 64; top = 64; ph = 260
  gw = ns * bw + 28
  for (c = 1; c <= nc; c++) if (7.6 * length(CL[c]) + 16 > gw) gw = 7.6 * length(CL[c]) + 16
  foot = "bars: simulated, labelled with their MFU %" (BAR_EBNOTE != "" ? "; whiskers: " BAR_EBNOTE : "") \
    (hasm ? "; black diamond: the measured best of the same series (its layout may differ: the report's table names both); black cross: measured, none fits" : "")
  # the footnote in lines of at most 90 characters, broken after "; "
  nfl = 0; FL[1] = ""
  nparts = split(foot, FP, "; ")
  for (c = 1; c <= nparts; c++) {
    if (nfl == 0 || length(FL[nfl]) + length(FP[c]) + 2 > 90) FL[++nfl] = FP[c] (c < nparts ? ";" : "")
    else FL[nfl] = FL[nfl] " " FP[c] (c < nparts ? ";" : "")
  }
  W = left + nc * gw + 24
  if (10 + 6.6 * length(note) > W) W = 10 + 6.6 * length(note)
  for (c = 1; c <= nfl; c++) if (left + 6.2 * length(FL[c]) > W) W = left + 6.2 * length(FL[c])
  if (10 + 9.5 * length(title) > W) W = 10 + 9.5 * length(title)
  W = int(W)
  H = top + ph + 82 + 15 * nfl
  ymax = 10
  for (c = 1; c <= nc; c++) for (s = 1; s <= ns; s++) {
    if (V[c, s] != "" && V[c, s] != "x" && V[c, s] + EB[c, s] > ymax) ymax = V[c, s] + EB[c, s]
    if (MV[c, s] != "" && MV[c, s] != "x" && MV[c, s] > ymax) ymax = MV[c, s]
  }
  ymax = axis_top(ymax)
  svg_open(f, W, H)
  svg_text(f, 10, 20, title, "font-size=\"15\" font-weight=\"bold\"")
  svg_text(f, 10, 38, note, "fill=\"#444444\"")
  for (t = 0; t <= ymax; t += 10) {
    y = top + ph - ph * t / ymax
    svg_line(f, left, y, left + nc * gw, y, "stroke=\"" (t == 0 ? "#000000" : "#dddddd") "\"")
    svg_text(f, left - 6, y + 4, t, "text-anchor=\"end\"")
  }
  svg_text(f, 16, top + ph / 2, ylab, "text-anchor=\"middle\" transform=\"rotate(-90 16 " (top + ph / 2) ")\"")
  for (c = 1; c <= nc; c++) {
    x = left + (c - 1) * gw + (gw - ns * bw) / 2
    svg_text(f, left + (c - 0.5) * gw, top + ph + 18, CL[c], "text-anchor=\"middle\" font-weight=\"bold\"")
    for (s = 1; s <= ns; s++) {
      v = V[c, s]; lx = x + (s - 0.5) * bw
      if (v == "") { svg_text(f, lx + 4, top + ph - 4, "n/a", "font-size=\"10\" fill=\"#999999\" transform=\"rotate(-90 " (lx + 4) " " (top + ph - 4) ")\""); continue }
      if (v == "x") svg_text(f, lx + 4, top + ph - 18, "none fits", "font-size=\"10\" fill=\"#c0392b\" transform=\"rotate(-90 " (lx + 4) " " (top + ph - 18) ")\"")
      else {
        h = ph * v / ymax
        printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x + (s - 1) * bw + 1, top + ph - h, bw - 2, h, color(s) > f
        if (EB[c, s] != "" && EB[c, s] > 0) {
          svg_line(f, lx, top + ph - ph * (v + EB[c, s]) / ymax, lx, top + ph - ph * (v - EB[c, s]) / ymax, "stroke=\"#222222\"")
          svg_line(f, lx - 3, top + ph - ph * (v + EB[c, s]) / ymax, lx + 3, top + ph - ph * (v + EB[c, s]) / ymax, "stroke=\"#222222\"")
          svg_line(f, lx - 3, top + ph - ph * (v - EB[c, s]) / ymax, lx + 3, top + ph - ph * (v - EB[c, s]) / ymax, "stroke=\"#222222\"")
        }
        # the value inside the bar, from its foot (above it when the bar is too short)
        lab = sprintf("%.1f", v)
        if (h >= 34) { y = top + ph - 4; svg_text(f, lx + 4, y, lab, "font-size=\"10\" fill=\"white\" transform=\"rotate(-90 " (lx + 4) " " y ")\"") }
        else { y = top + ph - h - 4; svg_text(f, lx + 4, y, lab, "font-size=\"10\" transform=\"rotate(-90 " (lx + 4) " " y ")\"") }
      }
      if (MV[c, s] != "" && MV[c, s] != "x") {
        y = top + ph - ph * MV[c, s] / ymax
        printf "<path d=\"M %.1f %.1f l 5 5 l -5 5 l -5 -5 z\" fill=\"black\" stroke=\"white\"/>\n", lx, y - 5 > f
      } else if (MV[c, s] == "x") {
        printf "<path d=\"M %.1f %.1f l 8 8 m 0 -8 l -8 8\" stroke=\"black\" stroke-width=\"2\"/>\n", lx - 4, top + ph - 12 > f
      }
    }
  }
  # legend
  y = top + ph + 40; x = left
  for (s = 1; s <= ns; s++) {
    lw = 26 + 7.2 * length(SL[s])
    if (x + lw > W - 10 && x > left) { x = left; y += 18 }
    printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y - 10, color(s) > f
    svg_text(f, x + 16, y, SL[s], ""); x += lw
  }
  for (c = 1; c <= nfl; c++) svg_text(f, left, y + 5 + 15 * c, FL[c], "font-size=\"11\" fill=\"#444444\"")
  svg_close(f)
}

# Scatter: n points (X[k], Y[k]) in percent, group G[k] (coloured, GL[g] the legend), hollow H[k] (measured:
# a ring) or filled (simulated); the diagonal y = x.
function scatter(f, title, note, xlab, ylab, n, X, Y, G, H, ng, GL, hasm,    k, lo, hi, left, top, pw, W, Hh, x, y, t, g, sx, sy) {
  lo = 100; hi = 0
  for (k = 1; k <= n; k++) { if (X[k] < lo) lo = X[k]; if (Y[k] < lo) lo = Y[k]; if (X[k] > hi) hi = X[k]; if (Y[k] > hi) hi = Y[k] }
  lo = int(lo / 10) * 10; hi = axis_top(hi); if (hi <= lo) hi = lo + 10
  left = 70; top = 60; pw = 420; W = left + pw + 220; Hh = top + pw + 60
  svg_open(f, W, Hh)
  svg_text(f, 10, 20, title, "font-size=\"15\" font-weight=\"bold\"")
  svg_text(f, 10, 38, note, "fill=\"#444444\"")
  for (t = lo; t <= hi; t += 10) {
    sx = left + pw * (t - lo) / (hi - lo); sy = top + pw - pw * (t - lo) / (hi - lo)
    svg_line(f, sx, top, sx, top + pw, "stroke=\"#eeeeee\""); svg_line(f, left, sy, left + pw, sy, "stroke=\"#eeeeee\"")
    svg_text(f, sx, top + pw + 16, t, "text-anchor=\"middle\""); svg_text(f, left - 6, sy + 4, t, "text-anchor=\"end\"")
  }
  printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", left, top, pw, pw > f
  svg_line(f, left, top + pw, left + pw, top, "stroke=\"#c0392b\" stroke-dasharray=\"5 4\"")
  svg_text(f, left + pw - 8, top + 24, "y = x", "text-anchor=\"end\" fill=\"#c0392b\"")
  svg_text(f, left + 10, top + 18, "above the line: the pipeline-heavy layout is faster", "font-size=\"11\" fill=\"#444444\"")
  svg_text(f, left + pw / 2, top + pw + 36, xlab, "text-anchor=\"middle\"")
  svg_text(f, 18, top + pw / 2, ylab, "text-anchor=\"middle\" transform=\"rotate(-90 18 " (top + pw / 2) ")\"")
  for (k = 1; k <= n; k++) {
    x = left + pw * (X[k] - lo) / (hi - lo); y = top + pw - pw * (Y[k] - lo) / (hi - lo)
    if (H[k]) printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", x, y, color(G[k]) > f
    else printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y, color(G[k]) > f
  }
  y = top + 10
  for (g = 1; g <= ng; g++) {
    printf "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", left + pw + 24, y, color(g) > f
    svg_text(f, left + pw + 34, y + 4, GL[g], ""); y += 20
  }
  svg_text(f, left + pw + 20, y + 10, "dot: simulated pair", "font-size=\"11\"")
  if (hasm) svg_text(f, left + pw + 20, y + 28, "ring: measured pair", "font-size=\"11\"")
  svg_close(f)
}
