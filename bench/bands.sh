#!/usr/bin/env bash
# Bands out of sample (issue 25, docs/trust.md "Bands out of sample"): derives the two band constants of the
# trust tables (analysis/trust/*.json) from out-of-sample errors, and reports the coverage of the bands
# (the share of predictions whose |error| lies inside their band) per shared multi-node file and node bucket,
# with the bands' widths, before (the table's bands as shipped) and after, under leave one source out.
#   1. the rows: bench/scale.sh's baseline (VARIANTS=baseline; MAX_ROWS rows per file, run once: rerunning
#      reuses WORK_DIR's rows);
#   2. nemo's base out of sample (`oos_p90_pct`): leave one group out on the 12 rows bench/calibrate-nemo.sh
#      fits, the groups as HOLDOUT says (default "model gpus"): each model (8B, 70B, the 405B proxies) and each
#      GPU count (8 to 256: 8 counts) refitted from nemo-prior without its rows, MAX_EVALS evaluations, and
#      predicted by that fit: the P90 of the |error| of the held-out rows whose model size and node count lie
#      between those of the other groups of its scheme (a row outside them is a distance, which g covers). megatron-deepspeed and study keep their
#      tables' value (megatron-deepspeed: 960 vTrain rows against three fitted constants; study: bench/loso.sh);
#   3. each row's band base and distance outside its table's data (validate -o's band_base_pct and
#      band_distance, from a pass at --gpu-memory 1: the band needs no replay);
#   4. the growth per doubling (`band_pct_per_doubling`, g): a row is inside its band when |e| <= sqrt(B^2 +
#      (g D)^2), i.e. when g >= g_i = sqrt(max(0, e^2 - B^2)) / D; g is the P90 of g_i over the out-of-sample
#      rows with D > 0 (those of a source no stack was fitted on, and nemo's rows of settings outside its fit):
#      90% of them inside. Leave one source out: each file's coverage with g derived from the other files only.
# Writes WORK_DIR/data/analysis/trust/*.json (the tables with the derived constants; copy them to
# analysis/trust/ to ship them) and prints the constants and the coverage table. WORK_DIR must lie outside the
# repository. Usage: bash bench/bands.sh VALIDATION_DIR WORK_DIR [JOBS]   (env MAX_ROWS, MAX_EVALS, HOLDOUT)
. "$(dirname "$0")/lib.sh"
bench_start bands "VALIDATION_DIR WORK_DIR [JOBS]" 2 3 "$@"
jobs=${3:-2}
bench_positive JOBS "$jobs"
evals=${MAX_EVALS:-60}
holdout=${HOLDOUT:-model gpus}
for h in $holdout; do case $h in model|gpus) ;; *) die "HOLDOUT: '$h' is not one of model, gpus" ;; esac; done
bench_positive MAX_EVALS "$evals"
[ -d "$1" ] || die "no directory '$1'"
bench_work "$2"

# 1. the rows (scale.sh checks the rest of its arguments)
VARIANTS=baseline bash "$here/scale.sh" "$1" "$work" "$jobs" > "$work/scale-baseline.md"

# 2. nemo's base out of sample: leave one model out on its fit's rows
src="$1/nvidia_dgxc_h100.csv"
[ -f "$src" ] || die "no $src"
lomo="$work/lomo"
mkdir -p "$lomo/models"
: > "$lomo/skipped.tsv"
awk -v who=external-rows -v models="$lomo/models" -v skips="$lomo/skipped.tsv" -v standin=0 \
  -f "$here/csv.awk" -f "$here/rows.awk" -f "$here/external-rows.awk" "$src" > "$lomo/dgxc.csv"
# the held-out groups: models (leave one model out) and GPU counts (leave one GPU count out), as HOLDOUT says
groups=""
for h in $holdout; do
  case $h in
    model) groups="$groups 8b 70b 405b" ;;
    gpus) groups="$groups $(awk -v who=bands -f "$here/csv.awk" -f <(echo 'NR > 1 { m = cell("model"); n = cell("gpus")
      if (m ~ /^llama/ && m !~ /405b-kv/ && n + 0 <= 256 && !seen[n]++) printf " gpus%d", n }') "$lomo/dgxc.csv")" ;;
  esac
done
for g in $groups; do
  # the fit's rows as bench/calibrate-nemo.sh selects them, the profile column dropped, split by model group
  for part in fit held; do
    awk -v who=bands -v g="$g" -v part="$part" -f "$here/csv.awk" -f /dev/stdin "$lomo/dgxc.csv" > "$lomo/$part-$g.csv" <<'AWK'
NR == 1 { need("model gpus profile", "as bench/external-rows.awk writes"); pc = col["profile"] }
{ m = cell("model"); fit = NR > 1 && m ~ /^llama/ && m !~ /405b-kv/ && cell("gpus") + 0 <= 256 && !seen[m " " cell("gpus")]++
  grp = g ~ /^gpus/ ? "gpus" cell("gpus") : m ~ /-8b/ ? "8b" : m ~ /-70b/ ? "70b" : "405b"
  keep = NR == 1 || (fit && (part == "held" ? grp == g : grp != g)) }
keep { out = ""; for (i = 1; i <= nf; i++) if (i != pc) out = out (out == "" ? "" : ",") v[i]; print out }
END { if (bad) exit 2 }
AWK
  done
  if [ ! -s "$lomo/nemo-without-$g.json" ]; then # refitted once (delete to refit)
    echo "bands: nemo without $g: $(($(wc -l < "$lomo/fit-$g.csv") - 1)) rows fitted, $(($(wc -l < "$lomo/held-$g.csv") - 1)) held out" >&2
    nice -n 5 "$bin" calibrate "$lomo/fit-$g.csv" --stack "$repo/platforms/stacks/nemo-prior.json" --profile h100-sxm5-80gb \
      --fit timing --max-evals "$evals" -j "$jobs" -o "$lomo/nemo-without-$g.tmp" > /dev/null 2>&1
    mv "$lomo/nemo-without-$g.tmp" "$lomo/nemo-without-$g.json"
  fi
  # the held-out rows' errors, and what they cover (model sizes: --trust-out)
  [ -s "$lomo/held-$g-trust.json" ] ||
    nice -n 5 "$bin" validate "$lomo/held-$g.csv" --stack "$lomo/nemo-without-$g.json" --profile h100-sxm5-80gb -j "$jobs" \
      -o "$lomo/rows-$g.csv" --trust-out "$lomo/held-$g-trust.json" > /dev/null
done
# the base: the P90 of |error| of the held-out rows whose model size lies inside the others' (the fit without them
# interpolates; a model outside would carry its distance, which g covers)
key() { grep -E "\"$1\"" "$2" | grep -Eo '[0-9.e+]+' | tail -1; }
for g in $groups; do
  t="$lomo/held-$g-trust.json"
  awk -v who=bands -v g="$g" -v lo="$(key model_params_min "$t")" -v hi="$(key model_params_max "$t")" -f "$here/csv.awk" \
    -f <(echo 'NR > 1 && cell("error_pct") != "" { n = cell("setting"); sub(/ GPUs.*/, "", n); sub(/.*, /, "", n)
      print g, lo, hi, int((n + 7) / 8), cell("error_pct") }') "$lomo/rows-$g.csv"
done > "$lomo/errors.txt"
oos=$(awk '{ g[NR] = $1; s[NR] = $1 ~ /^gpus/; lo[NR] = $2; hi[NR] = $3; nd[NR] = $4; e[NR] = $5 < 0 ? -$5 : $5 } END {
  for (i = 1; i <= NR; i++) { # inside: its model sizes and its node count between those of the other groups of its scheme
    min = nmin = 1e30; max = nmax = 0
    for (j = 1; j <= NR; j++) if (s[j] == s[i] && g[j] != g[i]) {
      if (lo[j] < min) min = lo[j]; if (hi[j] > max) max = hi[j]; if (nd[j] < nmin) nmin = nd[j]; if (nd[j] > nmax) nmax = nd[j] }
    if (lo[i] >= min && hi[i] <= max && nd[i] >= nmin && nd[i] <= nmax) { x[++n] = e[i]; printf "bands: held out inside: %s %d nodes, %.2f%%\n", g[i], nd[i], e[i] > "/dev/stderr" }
  }
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
  p = 0.9 * (n - 1); lo0 = int(p); printf "%.4f", (n == 0 ? 0 : lo0 >= n - 1 ? x[n] : x[lo0 + 1] + (p - lo0) * (x[lo0 + 2] - x[lo0 + 1])) }' "$lomo/errors.txt")
echo "bands: nemo leave one group out ($holdout): $(awk '{ printf "%s%s %+.2f", (NR > 1 ? "," : ""), $1, $5 }' "$lomo/errors.txt"); the P90 of those inside the others' model sizes and node counts: $oos%" >&2
[ "$oos" != 0.0000 ] || die "no held-out row of nemo lies inside the others' model sizes and node counts"

# 3. the tables with nemo's base out of sample, in a data root of their own (the repository's are not touched)
data="$work/data"
mkdir -p "$data/analysis/trust"
ln -sfn "$repo/platforms" "$data/platforms"
ln -sfn "$repo/workloads" "$data/workloads"
for t in "$repo"/analysis/trust/*.json; do cp "$t" "$data/analysis/trust/"; done
set_key() { # FILE KEY VALUE: the kept key's value (the file's own indentation and separator kept)
  sed -i -E "s/^([[:space:]]*\"$2\":[[:space:]]*)[-0-9.e+]+/\1$3/" "$1"
  grep -Eq "\"$2\":[[:space:]]*$3(,|$)" "$1" || die "$1: could not set $2"
}
set_key "$data/analysis/trust/nemo.json" oos_p90_pct "$oos"

# 4. each row's base and distance (nothing replayed), joined to its error by row order
stack_of() { case $1 in nvidia_dgxc*|megatron_bridge*) echo nemo ;; *) echo megatron-deepspeed ;; esac; }
names=()
for f in "$work"/*-baseline-rows.csv; do names+=("$(basename "$f" -baseline-rows.csv)"); done
[ ${#names[@]} -gt 0 ] || die "no rows in '$work' (bench/scale.sh found no shared multi-node file)"
pass() { # SUFFIX: the distance pass of every file with the tables in $data
  for name in "${names[@]}"; do
    LAYOUTSIM_DATA="$data" nice -n 5 "$bin" validate "$work/$name.csv" --stack "$work/stacks/$(stack_of "$name")-baseline.json" \
      --gpu-memory 1 -j "$jobs" -o "$work/$name-$1.csv" > /dev/null
  done
}
pass dist
joined="$work/bands-rows.tsv"
for name in "${names[@]}"; do
  paste -d '\t' <(awk -v who=bands -f "$here/csv.awk" -f <(echo 'NR > 1 { print cell("setting") "\t" cell("error_pct") "\t" cell("band_pct") }') "$work/$name-baseline-rows.csv") \
    <(awk -v who=bands -f "$here/csv.awk" -f <(echo 'NR > 1 { print cell("setting") "\t" cell("band_base_pct") "\t" cell("band_distance") }') "$work/$name-dist.csv") |
    awk -F'\t' -v file="$name" '$1 != $4 { print "bands: rows out of order in " file ": " $1 " / " $4 > "/dev/stderr"; exit 2 }
      $2 != "" { print file "\t" $1 "\t" $2 "\t" $3 "\t" $5 "\t" $6 }'
done > "$joined"

# 5. g from the out-of-sample rows, per file left out and over all; the coverage table
awk -F'\t' -v gfile="$work/g.txt" -f /dev/stdin "$joined" > "$work/bands.md" <<'AWK'
function p90(arr, n,    i, j, t, p, lo) { # validate's P90 (linear between order statistics)
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
  p = 0.9 * (n - 1); lo = int(p); return lo >= n - 1 ? arr[n] : arr[lo + 1] + (p - lo) * (arr[lo + 2] - arr[lo + 1])
}
function median(arr, n,    i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
  return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{ # file, setting, error %, band before %, base %, distance
  n++; file[n] = $1; e[n] = $3 < 0 ? -$3 : $3; before[n] = $4; B[n] = $5; D[n] = $6
  s = $2; gpus = s; sub(/ GPUs.*/, "", gpus); sub(/.*, /, "", gpus); model = s; sub(/ .*/, "", model)
  nodes = int((gpus + 7) / 8)
  bucket[n] = nodes <= 1 ? "1" : nodes <= 16 ? "2-16" : nodes <= 64 ? "17-64" : nodes <= 512 ? "65-512" : ">512"
  # in sample: nemo's rows of a setting it was fitted on (Llama up to 256 GPUs but the full 405B)
  insample[n] = $1 ~ /^nvidia_dgxc/ && model ~ /^llama/ && model !~ /405b-kv/ && gpus + 0 <= 256
  gi[n] = D[n] > 0 ? sqrt(e[n] * e[n] > B[n] * B[n] ? e[n] * e[n] - B[n] * B[n] : 0) / D[n] : -1
  if (!(($1) in seen)) { seen[$1] = 1; files[++nf] = $1 }
}
END {
  for (k = 0; k <= nf; k++) { # k 0: every file (the shipped g); k > 0: without file k
    m = 0; delete a
    for (i = 1; i <= n; i++) if (!insample[i] && gi[i] >= 0 && (k == 0 || file[i] != files[k])) a[++m] = gi[i]
    g[k] = m ? p90(a, m) : 0; used[k] = m
  }
  printf "g (band_pct_per_doubling) over every file: %.4f (%d out-of-sample rows outside the data)\n", g[0], used[0]
  for (k = 1; k <= nf; k++) printf "g without %s: %.4f (%d rows)\n", files[k], g[k], used[k]
  print ""
  print "| file | nodes | rows | as run: in band | as run: band % median (min-max) | after, leave one source out: in band | after: band % median (min-max) | after, g over all: in band |"
  print "|---|---|---|---|---|---|---|---|"
  split("1 2-16 17-64 65-512 >512 all", order, " ")
  for (k = 1; k <= nf; k++) for (o = 1; o <= 6; o++) {
    b = order[o]; r = cb = ca = c0 = 0; delete wb; delete wa; nb = 0; minb = mina = 1e9; maxb = maxa = 0
    for (i = 1; i <= n; i++) {
      if (file[i] != files[k] || (b != "all" && bucket[i] != b)) continue
      r++
      after = sqrt(B[i] * B[i] + g[k] * g[k] * D[i] * D[i]); all = sqrt(B[i] * B[i] + g[0] * g[0] * D[i] * D[i])
      wa[r] = after; if (after < mina) mina = after; if (after > maxa) maxa = after
      ca += e[i] <= after; c0 += e[i] <= all
      if (before[i] != "") { wb[++nb] = before[i]; cb += e[i] <= before[i]; if (before[i] < minb) minb = before[i]; if (before[i] > maxb) maxb = before[i] }
    }
    if (!r) continue
    printf "| %s | %s | %d | %s | %s | %d/%d (%.0f%%) | %.1f (%.1f-%.1f) | %d/%d |\n", files[k], b, r,
      nb ? sprintf("%d/%d (%.0f%%)", cb, nb, 100 * cb / nb) : "-", nb ? sprintf("%.1f (%.1f-%.1f)", median(wb, nb), minb, maxb) : "-",
      ca, r, 100 * ca / r, median(wa, r), mina, maxa, c0, r
  }
  printf "%.4f\n", g[0] > gfile
}
AWK
g=$(cat "$work/g.txt")
[[ "$g" =~ ^[0-9]+\.[0-9]+$ ]] || die "no g derived (see $work/bands.md)"
for t in "$data"/analysis/trust/*.json; do set_key "$t" band_pct_per_doubling "$g"; done

# 6. the check: the tables as written give every row sqrt(B^2 + (g D)^2), as the table above computed it
pass check
for name in "${names[@]}"; do
  awk -v who=bands -v g="$g" -f "$here/csv.awk" -f <(echo 'NR > 1 && cell("band_pct") != "" { b = cell("band_base_pct"); d = cell("band_distance")
    want = sqrt(b * b + g * g * d * d); got = cell("band_pct"); if (got - want > 0.01 || want - got > 0.01) { print "bands: " FILENAME ": band " got " against " want > "/dev/stderr"; bad = 1 } }
    END { exit bad ? 2 : 0 }') "$work/$name-check.csv"
done
echo "== the constants (copy $data/analysis/trust/*.json to analysis/trust/ to ship them)"
echo "nemo oos_p90_pct $oos (leave one group out: $holdout)"
cat "$work/bands.md"
