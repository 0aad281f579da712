#!/usr/bin/env bash
# catalogue -- runs the catalogue of bad inputs, tests/cli/catalogue.tsv: one bad input a line, as
#   WHAT <tab> SETUP <tab> ARGS <tab> MESSAGE
# SETUP (a shell command, "-" for none) makes the input files in an empty directory, with $SRC the
# source tree; ARGS is layoutsim's command line there (shell words). Each must be refused as the
# README says bad input is: exit status 2 within 5 s, nothing on standard output, exactly one line on
# standard error, MESSAGE, and no file left behind (the directory holds what SETUP made, unchanged).
# Every option of cli/option_table.c must have at least one row whose ARGS use it.
# Usage: bash tests/cli/catalogue.sh LAYOUTSIM SRCDIR [--print]
#   --print: write the table with the messages layoutsim gives instead (to make or review it)
set -uo pipefail
bin=$(realpath "$1")
export SRC=$(realpath "$2")
print=${3:-}
table=$SRC/tests/cli/catalogue.tsv
work=$(mktemp -d /tmp/layoutsim-catalogue-XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0
bad=0
while IFS=$'\t' read -r what setup args want; do
  [[ -z "$what" || "$what" == \#* ]] && continue
  n=$((n + 1))
  rm -rf "$work/dir" && mkdir "$work/dir" && cd "$work/dir" || exit 1
  [ "$setup" = "-" ] || eval "$setup" < /dev/null || { echo "not ok $n - $what: its setup failed"; bad=$((bad + 1)); continue; }
  before=$(ls -A --full-time 2>/dev/null; md5sum -- * 2>/dev/null)
  eval "set -- $args"
  timeout 5 "$bin" "$@" < /dev/null > "$work/stdout" 2> "$work/stderr"
  rc=$?
  after=$(ls -A --full-time 2>/dev/null; md5sum -- * 2>/dev/null)
  got=$(cat "$work/stderr")
  if [ -n "$print" ]; then
    printf '%s\t%s\t%s\t%s\n' "$what" "$setup" "$args" "$got"
    continue
  fi
  why=""
  if [ $rc -ne 2 ]; then why="exit status $rc"
  elif [ "$(wc -l < "$work/stderr")" -ne 1 ]; then why="$(wc -l < "$work/stderr") lines on stderr"
  elif [ "$got" != "$want" ]; then why="message differs"
  elif [ -s "$work/stdout" ]; then why="output on stdout"
  elif [ "$before" != "$after" ]; then why="files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
  fi
  if [ -n "$why" ]; then
    bad=$((bad + 1))
    printf 'not ok %d - %s: %s\n  args: %s\n  want: %s\n  got:  %s\n' "$n" "$what" "$why" "$args" "$want" "$got"
  else
    echo "ok $n - $what"
  fi
done < "$table"
[ -n "$print" ] && exit 0
# every option of the option table (cli/option_table.c) has at least one refusal row: ARGS using --NAME
uncovered=""
for o in $(grep -o '{\.name = "[a-z0-9-]*"' "$SRC/cli/option_table.c" | sed 's/.*"\(.*\)"/\1/'); do
  # not grep -q: its early exit kills cut with SIGPIPE, and under pipefail a covered option then read as uncovered
  cut -f3 "$table" | grep -E -- "--$o([ =]|\$)" > /dev/null || uncovered="$uncovered --$o"
done
if [ -n "$uncovered" ]; then
  echo "not ok - options of cli/option_table.c without a refusal row in the catalogue:$uncovered"
  bad=$((bad + 1))
fi
echo "catalogue: $n bad inputs, $((n - bad)) refused as they should be, $bad not"
[ $bad -eq 0 ] && [ $n -ge 60 ]
