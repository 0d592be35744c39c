#!/usr/bin/env bash
# A real SLURM cluster for the tests (packages/test-support/src/slurm.ts), from Debian 12's packages
# (Slurm 22.05.8): slurmctld, one slurmd per fake node, and slurmrestd with JWT auth, all on
# 127.0.0.1 and all in one folder.
#
#   scripts/peers/slurm.sh install      install the Debian packages unless slurmctld, slurmd,
#                                       slurmrestd, scontrol and munged are already there;
#                                       safe to run again
#   scripts/peers/slurm.sh start <dir>  start a cluster with its state in <dir>; wait until
#                                       every node is idle and slurmrestd answers; print its URL
#   scripts/peers/slurm.sh stop <dir>   cancel the jobs, stop every daemon started in <dir> and
#                                       wait for them to exit
#
# start (as root) environment, so that several clusters can run side by side:
#   SLURM_REST_PORT     slurmrestd's HTTP port                 (default 6820)
#   SLURM_CTLD_PORT     slurmctld's port                       (default 6817)
#   SLURMD_PORT_BASE    node i's slurmd listens on base + i    (default 17000)
#   SLURM_NODES         number of fake nodes                   (default 4)
#   SLURM_NODE_PREFIX   node names <prefix>001, <prefix>002... (default gpu)
#   SLURM_STANDBY_NODES the last n of the nodes are configured but get no slurmd at start: nodes
#                       still to come (SLURM adoption's servers), whose slurmd a test starts later
#                       (`slurmd -f <dir>/etc/slurm.conf -N <node>`)          (default 0)
#   SLURM_START_TIMEOUT seconds for each start-up wait         (default 60)
#
# <dir> afterwards: etc/slurm.conf (export SLURM_CONF=<dir>/etc/slurm.conf for the slurm
# commands), run/token-root (a JWT for user root, 24 h; send it as X-SLURM-USER-TOKEN with
# X-SLURM-USER-NAME: root), run/*.pid, log/*.log, munge/ (a private munged and socket).
#
# Why it looks like this (more in docs/peers.md, "SLURM"):
# - Every node is a slurmd on this machine (`slurmd -N <name>`, its own port, spool and pid
#   file); jobs really run, as root, under slurmstepd.
# - munged runs with its own key and socket in <dir>, so the cluster needs no system munge.
# - slurmrestd refuses to run as root or as SlurmUser: it drops to `nobody` after binding, so
#   slurm.conf and the folders above it must be world-readable. Without slurmdbd only the
#   openapi/v0.0.3x plugins load (the dbv0.0.3x ones would make it exit); 22.05 has no v0.0.39+.
# - CommunicationParameters=NoInAddrAny,NoCtldInAddrAny keeps the daemons on 127.0.0.1.
# Measured on 2 cores: start about 1 s (slurmctld's scheduler makes its first pass ~3 s after
# it starts, so the very first jobs pend that long), stop 1 to 2 s; install 20 s to 3 min
# (14 MB; it depends on the mirror), a no-op once installed.
set -euo pipefail
PEER=slurm
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REST_PORT=${SLURM_REST_PORT:-6820}
CTLD_PORT=${SLURM_CTLD_PORT:-6817}
SLURMD_PORT_BASE=${SLURMD_PORT_BASE:-17000}
NODES=${SLURM_NODES:-4}
PREFIX=${SLURM_NODE_PREFIX:-gpu}
STANDBY=${SLURM_STANDBY_NODES:-0}
START_TIMEOUT=${SLURM_START_TIMEOUT:-60} # seconds, for each wait during start
STOP_TIMEOUT=10                          # seconds from SIGTERM to SIGKILL, per daemon
PACKAGES=(slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin munge)

usage() {
  cat >&2 <<EOF
usage: $0 install
       $0 start <dir>
       $0 stop <dir>
EOF
  exit 2
}



installed() {
  local cmd
  for cmd in slurmctld slurmd slurmrestd scontrol sinfo munged; do
    command -v "$cmd" >/dev/null 2>&1 || return 1
  done
  # The JWT plugin is a library, not a command.
  [ -n "$(find /usr/lib -path '*slurm*' -name auth_jwt.so 2>/dev/null | head -n1)" ]
}

install() {
  if installed; then
    echo "slurm: already installed ($(slurmctld -V 2>&1))"
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${PACKAGES[*]} another way"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "installing ${PACKAGES[*]} needs root (or sudo)"
    sudo=(sudo)
  fi
  # Another apt/dpkg holding the lock: wait for it rather than fail (seconds).
  local apt_opts=(-o DPkg::Lock::Timeout=600 -q) pkg
  # Refresh the package lists only when one of the packages has no candidate in them.
  for pkg in "${PACKAGES[@]}"; do
    if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      echo "slurm: $pkg not in the package lists; running apt-get update"
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
      break
    fi
  done
  echo "slurm: installing ${PACKAGES[*]} (about 20 s)"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${PACKAGES[@]}"
  installed || die "installed ${PACKAGES[*]} but the commands are still missing"
  echo "slurm: installed $(slurmctld -V 2>&1)"
}

# kill -0 also succeeds on a zombie.


check_number() {
  [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || die "$1 must be a number from $3 to $4, got '$2'"
}

# The pid in a pid file if that process is alive and runs `comm` (a recycled pid is not ours).
pid_of() {
  local file=$1 comm=$2 pid
  [ -f "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] && alive "$pid" || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}

# wait_for <seconds> <what> <cmd...>: polls cmd every 0.2 s.
wait_for() {
  local t=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}


node_name() { printf '%s%03d' "$PREFIX" "$1"; }

idle_nodes() { sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l; }
all_idle() { [ "$(idle_nodes)" -eq "$((NODES - STANDBY))" ]; }
rest_answers() { curl -s -o /dev/null -m 2 "http://127.0.0.1:$REST_PORT/openapi/v3"; }

write_conf() {
  local dir=$1 last
  last=$(printf '%03d' "$NODES")
  cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/peers/slurm.sh start; one test cluster, every daemon on 127.0.0.1.
ClusterName=fm$CTLD_PORT
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket.2
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$dir/etc/jwt_hs256.key
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
MpiDefault=none
MailProg=/bin/true
# A DOWN node comes back by itself only when it went down for not responding (1): one an
# operator (or a test) set DOWN stays DOWN until resumed. 2 would also bring those back at the
# node's next registration, which slurmctld asks for every few pings: a DOWN set by hand
# could turn IDLE at any moment, under a test that checks it stays DOWN.
ReturnToService=1
SlurmdTimeout=300
# Finished jobs stay visible to squeue/REST for 10 minutes (the default is 5).
MinJobAge=600
NodeName=$PREFIX[001-$last] NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((SLURMD_PORT_BASE + 1))-$((SLURMD_PORT_BASE + NODES)) CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=$PREFIX Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  chmod 644 "$dir/etc/slurm.conf"
}

start() {
  [ $# -eq 1 ] || usage
  [ "$(id -u)" -eq 0 ] || die "start needs root (slurmd runs jobs as their users; munged and slurmctld run as root here)"
  installed || die "SLURM is not installed; run: $0 install"
  check_number SLURM_REST_PORT "$REST_PORT" 1 65535
  check_number SLURM_CTLD_PORT "$CTLD_PORT" 1 65535
  check_number SLURM_NODES "$NODES" 1 999
  check_number SLURM_STANDBY_NODES "$STANDBY" 0 "$NODES"
  check_number SLURMD_PORT_BASE "$SLURMD_PORT_BASE" 1 $((65535 - NODES))
  [[ "$PREFIX" =~ ^[a-z][a-z0-9-]*$ ]] || die "SLURM_NODE_PREFIX must be lower-case letters, digits and '-', got '$PREFIX'"
  mkdir -p "$1"
  local dir
  dir=$(cd "$1" && pwd)
  # A cluster from an earlier run in this folder: stop it, then start afresh.
  if [ -d "$dir/run" ] || [ -d "$dir/munge" ]; then stop_dir "$dir" quiet; fi
  rm -rf "${dir:?}"/{etc,state,spool,log,run,munge}
  mkdir -p "$dir"/{etc,state,spool,log,run,munge}
  # slurmrestd runs as nobody and must read slurm.conf (mktemp folders are 700).
  chmod 755 "$dir" "$dir/etc" "$dir/munge"

  local port i
  for port in "$REST_PORT" "$CTLD_PORT" $(seq $((SLURMD_PORT_BASE + 1)) $((SLURMD_PORT_BASE + NODES))); do
    port_open "$port" && die "127.0.0.1:$port is already in use (set SLURM_REST_PORT, SLURM_CTLD_PORT, SLURMD_PORT_BASE)"
  done

  local t0
  t0=$(now)
  export SLURM_CONF=$dir/etc/slurm.conf
  # Keys: munge's (1 KiB) and the HS256 key slurmctld signs and checks JWTs with.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  head -c 32 /dev/urandom >"$dir/etc/jwt_hs256.key"
  chmod 600 "$dir/etc/jwt_hs256.key"
  write_conf "$dir"

  munged -S "$dir/munge/munge.socket.2" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" ||
    { log_tail "$dir/log/munged.log"; die "munged did not start"; }

  slurmctld -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 ||
    { log_tail "$dir/log/slurmctld.log" "$dir/log/slurmctld.out"; stop_dir "$dir" quiet; die "slurmctld did not start"; }
  wait_for "$START_TIMEOUT" slurmctld scontrol ping ||
    { log_tail "$dir/log/slurmctld.log"; stop_dir "$dir" quiet; die "slurmctld not answering after $START_TIMEOUT s"; }

  for i in $(seq 1 "$((NODES - STANDBY))"); do
    slurmd -f "$SLURM_CONF" -N "$(node_name "$i")" </dev/null >>"$dir/log/slurmd.out" 2>&1 ||
      { log_tail "$dir/log/slurmd-$(node_name "$i").log" "$dir/log/slurmd.out"; stop_dir "$dir" quiet; die "slurmd $(node_name "$i") did not start"; }
  done
  wait_for "$START_TIMEOUT" "idle nodes" all_idle || {
    sinfo -N >&2 || true
    log_tail "$dir/log/slurmctld.log"
    stop_dir "$dir" quiet
    die "not all $((NODES - STANDBY)) started nodes idle after $START_TIMEOUT s"
  }

  # SLURM_JWT=daemon: slurmrestd itself authenticates each request with the client's JWT.
  # From <dir>: a job submitted without a working directory gets slurmrestd's.
  (cd "$dir" && SLURM_JWT=daemon exec setsid slurmrestd -f "$SLURM_CONF" -a rest_auth/jwt \
    -s openapi/v0.0.38,openapi/v0.0.37 -u nobody "127.0.0.1:$REST_PORT" \
    </dev/null >"$dir/log/slurmrestd.log" 2>&1) &
  local rest_pid=$!
  echo "$rest_pid" >"$dir/run/slurmrestd.pid"
  local deadline=$((SECONDS + START_TIMEOUT))
  until rest_answers; do
    if ! alive "$rest_pid" || [ "$SECONDS" -ge "$deadline" ]; then
      log_tail "$dir/log/slurmrestd.log"
      stop_dir "$dir" quiet
      die "slurmrestd not answering on 127.0.0.1:$REST_PORT"
    fi
    sleep 0.2
  done

  local token
  token=$(scontrol token username=root lifespan=86400) || { stop_dir "$dir" quiet; die "scontrol token failed"; }
  (umask 077 && printf '%s' "${token#SLURM_JWT=}" >"$dir/run/token-root")
  echo "slurm: $NODES nodes $(node_name 1)..$(node_name "$NODES") idle, REST on http://127.0.0.1:$REST_PORT (ready in $(since "$t0") s; SLURM_CONF=$SLURM_CONF, token $dir/run/token-root)"
  echo "http://127.0.0.1:$REST_PORT"
}

# SIGTERM, then SIGKILL after STOP_TIMEOUT seconds; waits for the exit.

stop_dir() {
  local dir=$1 quiet=${2:-} f pid stopped=0
  cancel_jobs "$dir"
  # The REST front first, the controller and munge last: the daemons talk to them on the way out.
  for f in "$dir/run/slurmrestd.pid" "$dir"/run/slurmd-*.pid "$dir/run/slurmctld.pid" "$dir/run/munged.pid"; do
    [ -f "$f" ] || continue
    local name
    name=$(basename "$f" .pid)
    if pid=$(pid_of "$f" "${name%%-*}"); then
      terminate "$pid" "$name"
      stopped=$((stopped + 1))
    fi
    rm -f "$f"
  done
  kill_leftover_jobs "$dir"
  [ -n "$quiet" ] || echo "slurm: stopped $stopped daemon(s) ($dir)"
}

# Running jobs outlive slurmd (slurmstepd and the job's processes are not its children), so
# they are cancelled through the controller while it still runs, and waited for.
cancel_jobs() {
  local dir=$1 ids i
  [ -f "$dir/etc/slurm.conf" ] && pid_of "$dir/run/slurmctld.pid" slurmctld >/dev/null || return 0
  ids=$(SLURM_CONF=$dir/etc/slurm.conf squeue -h -o %i 2>/dev/null) || return 0
  [ -n "$ids" ] || return 0
  # shellcheck disable=SC2086 # one argument per job id
  SLURM_CONF=$dir/etc/slurm.conf scancel --signal=KILL --full $ids 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [ -z "$(step_pids "$dir")" ] && return 0
    sleep 0.1
  done
}

# slurmstepd processes of this cluster: they carry the daemons' SLURM_CONF in their environment.
step_pids() {
  local dir=$1 p
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$dir/etc/slurm.conf" || continue
    echo "${p#/proc/}"
  done
}

# Whatever the cancel left (a controller that was already gone): this cluster's slurmstepd
# processes and batch scripts (run from <dir>/spool), with all their descendants, get SIGKILL.
kill_leftover_jobs() {
  local dir=$1 p roots=() pids=() ppid
  for p in /proc/[0-9]*; do
    tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$dir/spool/" && roots+=("${p#/proc/}")
  done
  mapfile -t -O "${#roots[@]}" roots < <(step_pids "$dir")
  [ "${#roots[@]}" -gt 0 ] || return 0
  # Descendants, breadth first over the parent links in /proc/<pid>/stat.
  declare -A parent_of=()
  for p in /proc/[0-9]*/stat; do
    ppid=$(sed 's/^.*) [A-Za-z] \([0-9]*\).*$/\1/' "$p" 2>/dev/null) || continue
    p=${p#/proc/}
    parent_of[${p%/stat}]=$ppid
  done
  pids=("${roots[@]}")
  local i=0 child
  while [ "$i" -lt "${#pids[@]}" ]; do
    for child in "${!parent_of[@]}"; do
      [ "${parent_of[$child]}" = "${pids[$i]}" ] && pids+=("$child")
    done
    i=$((i + 1))
  done
  echo "slurm: killing ${#pids[@]} leftover job process(es) of $dir" >&2
  kill -KILL "${pids[@]}" 2>/dev/null || true
  for p in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do alive "$p" || break; sleep 0.1; done
  done
}

stop() {
  [ $# -eq 1 ] || usage
  [ -d "$1" ] || { echo "slurm: no cluster in $1"; return 0; }
  stop_dir "$(cd "$1" && pwd)"
}

case "${1:-}" in
  install) [ $# -eq 1 ] || usage; install ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) usage ;;
esac
