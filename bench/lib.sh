# bench/lib.sh -- the preamble the validation scripts share (sourced, not run): strict mode, `die` naming the
# script, the argument count, the built binary, a WORK_DIR outside the repository (it holds rows derived from
# other people's measurements) with an empty skipped.tsv, and the conversion of measured rows to a predict
# table by a bench/*-rows.awk (with bench/csv.awk). Used by moe.sh, blackwell.sh, external.sh and
# calibrate-nemo.sh:
#   . "$(dirname "$0")/lib.sh"
#   bench_start NAME "VALIDATION_DIR WORK_DIR [JOBS]" MIN_ARGS MAX_ARGS "$@"   # sets here, repo, bin
#   bench_work "$2" [SUBDIR]                                                   # sets work
set -euo pipefail

bench_name=bench
die() { echo "$bench_name: $*" >&2; exit 2; }

# bench_start NAME USAGE MIN MAX ARGS...: the script's name (for die), its usage line and argument count; `here`
# (bench/), `repo` and `bin` (the built layoutsim, refused when absent).
bench_start()
{
  bench_name=$1
  local usage=$2 min=$3 max=$4
  shift 4
  [ $# -ge "$min" ] && [ $# -le "$max" ] || die "usage: bash bench/$bench_name.sh $usage"
  here=$(cd "$(dirname "$0")" && pwd -P)
  repo=$(cd "$here/.." && pwd -P)
  bin="$repo/build/layoutsim"
  [ -x "$bin" ] || die "no $bin: build first (bash tools/setup.sh)"
}

# bench_positive NAME VALUE: refuse a VALUE that is not a positive integer.
bench_positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 '$2' is not a positive integer"; }

# bench_work DIR [SUBDIR]: refuse DIR inside the repository (before creating anything there), then create DIR (and
# DIR/SUBDIR), `work` its real path; work/skipped.tsv emptied (the rows-awk scripts append the rows they skip and why).
bench_work()
{
  # DIR's real path before it exists: that of its deepest existing ancestor, with the rest of DIR after it
  local dir=$1 rest=""
  case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
  while [ ! -d "$dir" ]; do
    rest="/${dir##*/}$rest"
    dir=${dir%/*}
    [ -n "$dir" ] || dir=/
  done
  local base
  base=$(cd "$dir" && pwd -P)
  case "${base%/}$rest/" in
    "$repo"/*) die "WORK_DIR '$1' lies inside the repository (allowed: a directory outside it)" ;;
  esac
  mkdir -p "$1${2:+/$2}"
  work=$(cd "$1" && pwd -P)
  case "$work/" in "$repo"/*) die "WORK_DIR '$1' lies inside the repository (allowed: a directory outside it)" ;; esac
  : > "$work/skipped.tsv"
}

# bench_rows WHO ROWS_AWK [-v VAR=VALUE]... FILE...: the measured rows of FILEs as a predict table on stdout,
# converted by bench/ROWS_AWK with bench/rows.awk's shared functions (skipped rows to work/skipped.tsv).
bench_rows()
{
  local who=$1 script=$2
  shift 2
  local vars=()
  while [ "${1:-}" = -v ]; do
    vars+=(-v "$2")
    shift 2
  done
  awk -v who="$who" "${vars[@]}" -v skips="$work/skipped.tsv" -f "$here/csv.awk" -f "$here/rows.awk" -f "$here/$script" "$@"
}

# bench_lifted WHO IN OUT: IN's rows with the memory limit lifted (a gpu_memory column of 100000 GiB).
bench_lifted()
{
  awk -v who="$1" -f "$here/csv.awk" -f /dev/stdin "$2" > "$3" <<'AWK'
NR == 1 { print $0 ",gpu_memory"; next }
{ print $0 ",100000" }
END { if (bad) exit 2 }
AWK
}
