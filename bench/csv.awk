# csv.awk -- the CSV reading the bench scripts share (prepended to each script's awk program).
# The first line names the columns: col[name] is a column's index. Every line is split into
# v[1..nf], cells may be quoted ("a, b"; "" inside is a quote); cell(name) is the current row's
# cell of that column. A row whose cell count differs from the header's stops the script naming
# its line (awk reads lines: a blank line or a quoted line break stops it too), as does a column
# named twice in the header and need() for a missing column. Set `who` (the script's name, for messages) with -v; an END block
# of the script must start with `if (bad) exit 2`.
function csv(line, c,    n, i, ch, q, cur) {
  n = 1; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    ch = substr(line, i, 1)
    if (q) { if (ch == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur ch; i++ } else q = 0 } else cur = cur ch }
    else if (ch == "\"") q = 1
    else if (ch == ",") { c[n++] = cur; cur = "" }
    else cur = cur ch
  }
  c[n] = cur
  return n
}
function die(msg) { print who ": " msg > "/dev/stderr"; bad = 1; exit 2 }
function need(names, what,    a, k) {
  split(names, a, " ")
  for (k in a) if (!(a[k] in col)) die("no column " a[k] " (give it " what ")")
}
function cell(name) { return v[col[name]] }
{ sub(/\r$/, ""); split("", v); nf = csv($0, v) }
NR == 1 { ncol = nf; for (i = 1; i <= nf; i++) { if (v[i] != "" && v[i] in col) die(FILENAME ": column " v[i] " appears more than once in the header (each column may appear once)"); col[v[i]] = i } }
NR > 1 && nf != ncol { die(FILENAME " line " NR ": " nf " cells, the header has " ncol) }
