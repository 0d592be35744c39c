# Shell helpers shared by the peer scripts (sourced, not run). The sourcing script sets
# PEER (its name in messages) and STOP_TIMEOUT (seconds from SIGTERM to SIGKILL).

die() {
  echo "$PEER: $*" >&2
  exit 1
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# A process that exists and is not a zombie (PID 1 here does not reap daemons' parents).
alive() {
  kill -0 "$1" 2>/dev/null && ! grep -qs '^[0-9]* ([^)]*) Z' "/proc/$1/stat"
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The last lines of each existing log file, on stderr.
log_tail() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    echo "--- last lines of $f ---" >&2
    tail -n 30 "$f" >&2 || true
  done
  echo "---" >&2
}

# terminate <pid> [name]: SIGTERM, then SIGKILL after STOP_TIMEOUT seconds; returns once it is gone.
terminate() {
  local pid=$1 name=${2:-pid $1} i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  echo "$PEER: $name (pid $pid) still running ${STOP_TIMEOUT} s after SIGTERM; sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.1; done
}
