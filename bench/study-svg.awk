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

# Grouped bars. nc categories (CL[c]) along x, ns series (SL[s]) per category; a category label "a|b|c" prints a
# in bold and b, c on lines of their own. V[c, s]: a number, "x" (none fits: drawn as a red "none fits") or "" (not in this
# category's space: "n/a"); MV[c, s] the same for measured values (a black diamond on the bar's centre, "" for
# none); EB[c, s] a half-width error band (drawn as a whisker) or "". Every bar carries its value; the footnote
# says what each mark means (n/a and none fits only where drawn). note: under the title. Both are wrapped to the
# plot's width (wrap: a new line after "; " where the next part does not fit, else between words).
function wrap(s, max, OUT,    n, P, c, k, nw, WD, w, piece) {
  n = 0; OUT[1] = ""
  k = split(s, P, "; ")
  for (c = 1; c <= k; c++) {
    piece = P[c] (c < k ? ";" : "")
    if (n > 0 && length(OUT[n]) + length(piece) + 1 <= max) { OUT[n] = OUT[n] " " piece; continue }
    # a new line for this part; a part longer than a line is broken between words
    nw = split(piece, WD, " "); OUT[++n] = WD[1]
    for (w = 2; w <= nw; w++) if (length(OUT[n]) + length(WD[w]) + 1 > max) OUT[++n] = WD[w]; else OUT[n] = OUT[n] " " WD[w]
  }
  return n
}
function bars(f, title, note, ylab, nc, CL, ns, SL, V, MV, EB, hasm,    c, s, bw, gw, left, W, H, top, ph, ymax, x, y, h, v, t, lx, lab, foot, lw, nfl, FL, nnl, NL, CA, CB, CP, twol, hasna, hasx, hasmx, haseb, ly, nly, LX, LY, ncl, NCL, e) {
  bw = ns > 4 ? 17 : (ns == 1 ? 36 : 22); left = 64; ph = 260
  gw = ns * bw + 28; twol = 0; hasna = 0; hasx = 0; hasmx = 0; haseb = 0
  for (c = 1; c <= nc; c++) {
    NCL[c] = split(CL[c], CP, "|"); CA[c] = CP[1]; if (NCL[c] - 1 > twol) twol = NCL[c] - 1
    for (e = 2; e <= NCL[c]; e++) { CB[c, e] = CP[e]; if (6.4 * length(CP[e]) + 16 > gw) gw = 6.4 * length(CP[e]) + 16 }
    if (7.6 * length(CA[c]) + 16 > gw) gw = 7.6 * length(CA[c]) + 16
    for (s = 1; s <= ns; s++) { if (V[c, s] == "") hasna = 1; if (V[c, s] == "x") hasx = 1; if (MV[c, s] == "x") hasmx = 1; if (V[c, s] != "" && V[c, s] != "x" && EB[c, s] != "" && EB[c, s] > 0) haseb = 1 }
  }
  # a plot at least 440 px wide: a single group is not a sliver at the left of a wide canvas
  if (nc * gw < 440) gw = 440 / nc
  foot = "bars: simulated, labelled with their MFU %" (haseb && BAR_EBNOTE != "" ? "; whiskers: " BAR_EBNOTE : "") \
    (hasna ? "; n/a: not in the setting's sweep" : "") (hasx ? "; none fits: every layout of it runs out of memory" : "") \
    (hasm ? "; black diamond: the measured best of the same series (its layout may differ: the report's table names both)" : "") (hasmx ? "; black cross: measured, none fits" : "")
  # the note and the footnote as wide as the plot (at least 80 characters)
  nfl = wrap(foot, (left + nc * gw) / 6.2 > 80 ? int((left + nc * gw) / 6.2) : 80, FL)
  nnl = wrap(note, (left + nc * gw) / 6.6 > 80 ? int((left + nc * gw) / 6.6) : 80, NL)
  top = 48 + 16 * nnl
  W = left + nc * gw + 24
  for (c = 1; c <= nnl; c++) if (10 + 6.6 * length(NL[c]) > W) W = 10 + 6.6 * length(NL[c])
  for (c = 1; c <= nfl; c++) if (left + 6.2 * length(FL[c]) > W) W = left + 6.2 * length(FL[c])
  if (10 + 9.5 * length(title) > W) W = 10 + 9.5 * length(title)
  W = int(W)
  # the legend's places, in rows that fit the width
  ly = top + ph + 40 + 14 * twol; x = left; nly = 1
  for (s = 1; s <= ns; s++) {
    lw = 26 + 7.2 * length(SL[s])
    if (x + lw > W - 10 && x > left) { x = left; ly += 18; nly++ }
    LX[s] = x; LY[s] = ly; x += lw
  }
  H = ly + 24 + 15 * nfl
  ymax = 10
  for (c = 1; c <= nc; c++) for (s = 1; s <= ns; s++) {
    if (V[c, s] != "" && V[c, s] != "x" && V[c, s] + EB[c, s] > ymax) ymax = V[c, s] + EB[c, s]
    if (MV[c, s] != "" && MV[c, s] != "x" && MV[c, s] > ymax) ymax = MV[c, s]
  }
  ymax = axis_top(ymax)
  svg_open(f, W, H)
  svg_text(f, 10, 20, title, "font-size=\"15\" font-weight=\"bold\"")
  for (c = 1; c <= nnl; c++) svg_text(f, 10, 22 + 16 * c, NL[c], "fill=\"#444444\"")
  for (t = 0; t <= ymax; t += 10) {
    y = top + ph - ph * t / ymax
    svg_line(f, left, y, left + nc * gw, y, "stroke=\"" (t == 0 ? "#000000" : "#dddddd") "\"")
    svg_text(f, left - 6, y + 4, t, "text-anchor=\"end\"")
  }
  svg_text(f, 16, top + ph / 2, ylab, "text-anchor=\"middle\" transform=\"rotate(-90 16 " (top + ph / 2) ")\"")
  for (c = 1; c <= nc; c++) {
    x = left + (c - 1) * gw + (gw - ns * bw) / 2
    svg_text(f, left + (c - 0.5) * gw, top + ph + 18, CA[c], "text-anchor=\"middle\" font-weight=\"bold\"")
    for (e = 2; e <= NCL[c]; e++) svg_text(f, left + (c - 0.5) * gw, top + ph + 4 + 14 * e, CB[c, e], "text-anchor=\"middle\" font-size=\"11\" fill=\"#444444\"")
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
  for (s = 1; s <= ns; s++) {
    printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", LX[s], LY[s] - 10, color(s) > f
    svg_text(f, LX[s] + 16, LY[s], SL[s], "")
  }
  for (c = 1; c <= nfl; c++) svg_text(f, left, ly + 5 + 15 * c, FL[c], "font-size=\"11\" fill=\"#444444\"")
  svg_close(f)
}

# Scatter: n points (X[k], Y[k]) in percent, group G[k] (coloured, GL[g] the legend), hollow H[k] (measured:
# a ring) or filled (simulated); the diagonal y = x.
function scatter(f, title, note, xlab, ylab, n, X, Y, G, H, ng, GL, hasm,    k, lo, hi, left, top, pw, W, Hh, x, y, t, g, sx, sy, BN) {
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
  # "y = x" right of and below the diagonal's top end, clear of the line
  svg_text(f, left + pw - 6, top + 64, "y = x", "text-anchor=\"end\" fill=\"#c0392b\"")
  svg_text(f, left + 10, top + 18, "above the line: the pipeline-heavy layout is faster", "font-size=\"11\" fill=\"#444444\"")
  svg_text(f, left + pw - 10, top + pw - 10, "below: the tensor-heavy one is faster", "text-anchor=\"end\" font-size=\"11\" fill=\"#444444\"")
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
  if (hasm) { y += 18; svg_text(f, left + pw + 20, y + 10, "ring: measured pair", "font-size=\"11\"") }
  # what the chart does not draw: each layout's band (SC_BANDNOTE: lines separated by "|")
  for (k = 1; k <= split(SC_BANDNOTE, BN, "|"); k++) svg_text(f, left + pw + 20, y + 18 + 16 * k, BN[k], "font-size=\"11\" fill=\"#444444\"")
  svg_close(f)
}
