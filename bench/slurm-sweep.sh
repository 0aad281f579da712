#!/usr/bin/env bash
# A sweep run as a SLURM job array on a one-node SLURM brought up on this machine, its shards
# merged and compared byte for byte with the unsharded run: PASS or FAIL (docs/sweep.md, "Beyond
# one machine"; the job script is bench/slurm-sweep.sbatch, as the docs give it).
#
# What it starts, everything in a fresh temporary directory and on 127.0.0.1 only: munged (its own
# key and socket), slurmctld and slurmd (a slurm.conf with this node's CPUs and memory as slurmd -C
# reports them, proctrack/linuxproc and task/none: no cgroups; SlurmUser root; state, spool, logs
# and pid files in the directory; ports that are free). It installs slurm-wlm and munge when they
# are missing (Debian; where systemd runs, the packages start their own services, which this script
# neither uses nor stops). At the end, on success, failure or interruption, it cancels its job,
# stops the three daemons it started by their pids and removes the directory, so it can be run
# again and again.
#
# Usage: bash bench/slurm-sweep.sh [N]    (as root, after tools/setup.sh; N shards, default 4)
#   SLURM_SWEEP_TIMEOUT_S  how long the array may take (default 300 s)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
LAYOUTSIM=$repo/build/layoutsim
n=${1:-4}
timeout_s=${SLURM_SWEEP_TIMEOUT_S:-300}
# The sweep of docs/sweep.md's example: 144 layouts, a few seconds on one core.
# shellcheck disable=SC2054 # the commas are layoutsim's lists
sweep=(--model llama-7b --gpus 16 --seq-len 1024 --global-batch 64 --tp 1,2 --pp 1,2 --micro-batch 1,2)

say() { printf 'slurm-sweep: %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

[[ $n =~ ^[1-9][0-9]*$ ]] || { say "N: '$n' is not a shard count (allowed: 1, 2, ...)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { say "run it as root (SlurmUser and SlurmdUser are root)" >&2; exit 2; }
[ -x "$LAYOUTSIM" ] || { say "$LAYOUTSIM: missing (bash tools/setup.sh builds it)" >&2; exit 2; }

missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

dir=$(mktemp -d /tmp/layoutsim-slurm.XXXXXX)
chmod 0755 "$dir" # munged wants every directory above its socket searchable by all
job=""
started=() # "name pidfile", in the order they were started

# Stop what this run started, newest first: the job (while slurmctld can still cancel it), then
# slurmd, slurmctld and munged, each by the pid it wrote; then the directory.
cleanup() {
  local rc=$? name pidfile pid i k
  set +e
  trap - EXIT INT TERM
  if [ -n "$job" ] && squeue -h -j "$job" -o %i 2>/dev/null | grep -q .; then
    say "cancelling job $job"
    scancel "$job"
    for ((k = 0; k < 60; k++)); do squeue -h -j "$job" -o %i 2>/dev/null | grep -q . || break; sleep 0.5; done
  fi
  for ((k = ${#started[@]} - 1; k >= 0; k--)); do
    read -r name pidfile <<<"${started[k]}"
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    kill -0 "$pid" 2>/dev/null || continue
    kill "$pid"
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; say "stopped $name (pid $pid, killed)"
    else say "stopped $name (pid $pid)"; fi
  done
  if ((rc != 0)); then
    for f in "$dir"/log/*.log "$dir"/work/shard-*.log; do
      [ -s "$f" ] && { say "--- last lines of ${f#"$dir"/}"; tail -n 5 "$f"; }
    done
  fi
  rm -rf "$dir"
  left=$(pgrep -a -f -- "$dir" || true)
  if [ -z "$left" ]; then say "removed $dir; nothing of this run is left"; else say "still running: $left"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'say "FAIL: line $LINENO: $BASH_COMMAND exited $?"' ERR
trap 'say "FAIL: interrupted"; exit 130' INT
trap 'say "FAIL: terminated"; exit 143' TERM

# Wait up to $1 seconds for the command after it to succeed.
wait_for() {
  local s=$1 k
  shift
  for ((k = 0; k < s * 4; k++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  return 1
}
free_port() { # the first port from $1 on that nothing listens on
  local p
  for ((p = $1; p < $1 + 200; p++)); do ss -Htln "( sport = :$p )" | grep -q . || { echo "$p"; return 0; }; done
  return 1
}
node_is_idle() { [ "$(sinfo -h -n "$host" -o %T)" = idle ]; }

say "directory $dir"
mkdir -p "$dir"/{munge,state,spool,log,work}

# munged: its own key and socket; Slurm reaches it through AuthInfo=socket=.
mungekey --create --keyfile="$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
started+=("munged $dir/munge/munged.pid")
wait_for 10 munge -S "$dir/munge/munge.socket" -n || fail "munged does not answer on $dir/munge/munge.socket"
say "started munged (pid $(cat "$dir/munge/munged.pid"))"

host=$(hostname -s)
ctld_port=$(free_port 16817) || fail "no free port for slurmctld"
slurmd_port=$(free_port $((ctld_port + 1))) || fail "no free port for slurmd"
node=$(slurmd -C | head -n 1)                # NodeName=HOST CPUs=.. Boards=.. ... RealMemory=..
node="NodeName=$host NodeAddr=127.0.0.1 ${node#NodeName=* }"
export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=layoutsim-bench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
$node State=UNKNOWN
PartitionName=bench Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: >"$dir/plugstack.conf"
say "slurm.conf (SLURM_CONF=$SLURM_CONF):"
sed 's/^/    /' "$SLURM_CONF"

slurmctld -f "$SLURM_CONF"
started+=("slurmctld $dir/slurmctld.pid")
wait_for 30 scontrol ping || fail "slurmctld does not answer on 127.0.0.1:$ctld_port"
say "started slurmctld (pid $(cat "$dir/slurmctld.pid"), 127.0.0.1:$ctld_port)"
slurmd -f "$SLURM_CONF"
started+=("slurmd $dir/slurmd.pid")
wait_for 60 node_is_idle || fail "node $host is not idle: $(sinfo -h -n "$host" -o '%T %E')"
say "started slurmd (pid $(cat "$dir/slurmd.pid"), 127.0.0.1:$slurmd_port); node $host idle"
# Only 127.0.0.1: what the two daemons listen on (munged has a socket file only).
listening=$(ss -Htlnp | grep -E "pid=($(cat "$dir/slurmctld.pid")|$(cat "$dir/slurmd.pid"))," |
  awk '{split($6, a, "\""); printf "%s%s %s", (NR > 1 ? ", " : ""), a[2], $4}')
say "listening (ss -tlnp): $listening"
if tr , '\n' <<<"$listening" | grep -qv " 127\.0\.0\.1:"; then fail "a daemon listens beyond 127.0.0.1"; fi

cd "$dir/work"
export LAYOUTSIM
say "sbatch --array=1-$n --cpus-per-task=1 bench/slurm-sweep.sbatch ${sweep[*]}"
job=$(sbatch --parsable --array=1-"$n" --cpus-per-task=1 "$repo/bench/slurm-sweep.sbatch" "${sweep[@]}")
job=${job%%;*}
say "job array $job: $n tasks"
t0=$SECONDS
last=""
while squeue -h -j "$job" -o %i | grep -q .; do
  now="$(squeue -h -r -j "$job" -o %T | sort | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}')"
  [ -n "$now" ] && [ "$now" != "$last" ] && say "  $((SECONDS - t0)) s: $now" && last=$now
  ((SECONDS - t0 < timeout_s)) || fail "job array $job not done within $timeout_s s"
  sleep 1
done
say "job array $job done in $((SECONDS - t0)) s:"
# Each task's end, while slurmctld remembers it (MinJobAge, 300 s by default).
states=$(scontrol -o show job "$job" |
  sed -E 's/.*ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+) .*ExitCode=([0-9:]+).*/\1 \2 \3/' | sort -n)
while read -r line; do echo "    task $line"; done <<<"$states"
bad=$(awk '$2 != "COMPLETED" || $3 != "0:0"' <<<"$states")
if [ "$(wc -l <<<"$states")" -ne "$n" ] || [ -n "$bad" ]; then fail "not every task completed with exit code 0"; fi

shards=()
for ((i = 1; i <= n; i++)); do shards+=("shard-$i.csv"); done
say "shards: $(for s in "${shards[@]}"; do printf '%s (%s layouts), ' "$s" $(($(wc -l <"$s") - 1)); done | sed 's/, $//')"
"$LAYOUTSIM" merge "${shards[@]}" --format csv -o merged.csv
"$LAYOUTSIM" merge "${shards[@]}" --format text -o merged.txt
say "layoutsim merge shard-1.csv .. shard-$n.csv --format csv|text: merged.csv, merged.txt"
t0=$SECONDS
"$LAYOUTSIM" sweep "${sweep[@]}" -j "$(nproc)" --format csv -o whole.csv
"$LAYOUTSIM" sweep "${sweep[@]}" -j "$(nproc)" --format text -o whole.txt
say "unsharded: layoutsim sweep ${sweep[*]} -j $(nproc) --format csv|text: whole.csv, whole.txt ($((SECONDS - t0)) s)"
sed -n '1,2p;4,7p' merged.txt | sed 's/^/    /'
cmp whole.csv merged.csv || fail "the merged CSV differs from the unsharded run's"
cmp whole.txt merged.txt || fail "the merged text differs from the unsharded run's"
say "cmp: merged.csv = whole.csv ($(wc -c <whole.csv) bytes), merged.txt = whole.txt ($(wc -c <whole.txt) bytes)"
say "PASS"
