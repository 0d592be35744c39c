#!/usr/bin/env bash
# A real Temporal server for the tests: the Temporal CLI's dev server (`temporal server
# start-dev`, SQLite-backed), built from source with the machine's Go. See docs/peers.md,
# "Temporal".
#
#   scripts/peers/temporal.sh install                      build $FM_TOOLS_CACHE/bin/temporal (skipped when
#                                                          it is already built from the same pins)
#   scripts/peers/temporal.sh start <dir> [port] [ui-port] start a dev server in the background,
#                                                          state in <dir>; wait until it is SERVING
#   scripts/peers/temporal.sh stop <dir>                   stop the server started in <dir>
#
# start: gRPC frontend on 127.0.0.1:<port> (default 7233), SQLite file <dir>/temporal.db, log
# <dir>/temporal.log, pid <dir>/temporal.pid. Headless (no web UI) unless a ui-port is given.
# The dev server creates the `default` namespace itself. Its HTTP API and /metrics ports are
# random free ports, so servers on different gRPC ports can run side by side.
#
# Why it is built and how it is pinned (tools/temporal/go.mod + go.sum):
# - There is no Temporal server on npm or in Debian; the CLI is a Go program, and the Go module
#   proxy is reachable here. The proxy here lists github.com/temporalio/cli v1.1.1, v1.5.1 and
#   v1.9.1 only.
# - v1.9.1 (the newest, go 1.26.8) cannot be built: its go.mod has
#   `replace github.com/temporalio/cli/cliext => ./cliext`, a nested module that is not inside
#   the cli module's zip and that the proxy refuses ("github.com/temporalio/cli/cliext@v0.0.0:
#   ... 403 Forbidden ... This module version is not available"). `go install ...@v1.9.1` fails
#   with "The go.mod file for the module providing named packages contains one or more replace
#   directives", and a tools module cannot repeat a replace that points at a directory that
#   nobody serves.
# - v1.5.1 (go 1.25.0, Temporal server v1.29.1) has no replace directives and builds with
#   go1.26.8: that is the pin. The tools module only requires it (a `tool` directive; `go mod
#   tidy` resolved exactly the versions of the cli's own go.mod). To move the pin: edit the
#   version in tools/temporal/go.mod, run `go mod tidy` there, and re-run `install`; if the new
#   go.mod has replace lines with module targets, repeat them in tools/temporal/go.mod.
#
# The binary and Go's caches live OUTSIDE the checkout, in FM_TOOLS_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager), so a fresh clone on the same machine (CI)
# reuses them instead of rebuilding: bin/temporal, go/ (GOMODCACHE, GOCACHE; ~1.8 GB + ~1.4 GB).
# The stamp bin/temporal.stamp holds a hash of tools/temporal/go.mod, go.sum, the Go version and
# the build flags; a checkout with other pins rebuilds (reusing the Go caches). Measured on 2
# cores: cold install 6m45s to 10m46s, rebuild with warm Go caches ~8 s, no-op ~0.1 s; binary
# ~203 MB; the server is SERVING ~1 s after start, RSS ~150 MB.
set -euo pipefail
PEER=temporal
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS_DIR="$ROOT/tools/temporal"
CACHE="${FM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager}"
BIN_DIR="$CACHE/bin"
BIN="$BIN_DIR/temporal"
STAMP="$BIN_DIR/temporal.stamp"
PKG=github.com/temporalio/cli/cmd/temporal
START_TIMEOUT=${TEMPORAL_START_TIMEOUT:-60} # seconds
STOP_TIMEOUT=10                              # seconds from SIGTERM to SIGKILL

usage() {
  cat >&2 <<EOF
usage: $0 install
       $0 start <dir> [port (default 7233)] [ui-port (default: no web UI)]
       $0 stop <dir>
EOF
  exit 2
}



find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  else
    die "Go not found (neither on PATH nor at /usr/local/go/bin/go); it needs Go >= $(sed -n 's/^go //p' "$TOOLS_DIR/go.mod")"
  fi
}

go_env() {
  export GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build" GOBIN="$BIN_DIR" CGO_ENABLED=0 GOWORK=off
  # -modcacherw: a module cache that `rm -rf` can delete.
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -mod=readonly"
}

pinned_version() {
  awk '$1 == "github.com/temporalio/cli" { print $2 }' "$TOOLS_DIR/go.mod"
}

# As the CLI's own release build (.goreleaser.yml): static (pure Go, SQLite included), no
# symbol tables, the version stamped in.
build_flags() {
  local v
  v=$(pinned_version)
  BUILD_FLAGS=(-trimpath "-ldflags=-s -w -X github.com/temporalio/cli/temporalcli.Version=${v#v}")
}

stamp_of() {
  local go=$1
  build_flags
  {
    cat "$TOOLS_DIR/go.mod" "$TOOLS_DIR/go.sum"
    "$go" env GOVERSION
    echo "CGO_ENABLED=0 ${BUILD_FLAGS[*]}"
  } | sha256sum | cut -d' ' -f1
}

install() {
  [ -f "$TOOLS_DIR/go.mod" ] || die "missing $TOOLS_DIR/go.mod"
  local go stamp
  go=$(find_go)
  stamp=$(stamp_of "$go")
  if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$stamp" ]; then
    echo "temporal: up to date ($BIN)"
    return 0
  fi
  mkdir -p "$BIN_DIR"
  # One build at a time (parallel test jobs may all call install).
  exec 9>"$BIN_DIR/temporal.lock"
  if command -v flock >/dev/null 2>&1; then
    flock 9
    if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$stamp" ]; then
      echo "temporal: up to date ($BIN, built by another install meanwhile)"
      return 0
    fi
  fi
  go_env
  build_flags
  local t0 tmp
  echo "temporal: building the Temporal CLI $(pinned_version) with $("$go" env GOVERSION) into $BIN (3 to 11 min from cold on 2 cores, most of it downloading ~1.8 GB of modules and compiling; seconds once $CACHE/go is warm)"
  t0=$(now)
  tmp="$BIN.tmp.$$"
  rm -f "$tmp"
  if ! (cd "$TOOLS_DIR" && "$go" build "${BUILD_FLAGS[@]}" -o "$tmp" "$PKG"); then
    rm -f "$tmp"
    die "build failed (see above); module: $TOOLS_DIR"
  fi
  mv -f "$tmp" "$BIN"
  echo "$stamp" >"$STAMP"
  echo "temporal: built $BIN ($(du -h "$BIN" | cut -f1)) in $(since "$t0") s: $("$BIN" --version 2>&1 | head -n1)"
}

# kill -0 also succeeds on a zombie (our own child, not yet reaped, in start's clean-up).


# The pid in <dir>/temporal.pid, if that process is alive and is a temporal server.
running_pid() {
  local pidfile=$1/temporal.pid pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'temporal server start-dev' || return 1
  echo "$pid"
}

check_port() {
  [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 65535 ] || die "$1 must be a port number, got '$2'"
}


start() {
  [ $# -ge 1 ] && [ $# -le 3 ] || usage
  local dir=$1 port=${2:-7233} ui_port=${3:-}
  check_port port "$port"
  [ -z "$ui_port" ] || check_port ui-port "$ui_port"
  [ -x "$BIN" ] || die "$BIN not built; run: $0 install"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  local pid log=$dir/temporal.log
  if pid=$(running_pid "$dir"); then
    die "a server started in $dir is already running (pid $pid); stop it first: $0 stop $dir"
  fi
  rm -f "$dir/temporal.pid"
  # Something else on the port would look like our server coming up.
  port_open "$port" && die "127.0.0.1:$port is already in use"
  local ui_args=(--headless)
  if [ -n "$ui_port" ]; then
    port_open "$ui_port" && die "127.0.0.1:$ui_port (ui-port) is already in use"
    ui_args=(--ui-ip 127.0.0.1 --ui-port "$ui_port")
  fi

  local t0
  t0=$(now)
  nohup "$BIN" server start-dev \
    --ip 127.0.0.1 --port "$port" "${ui_args[@]}" \
    --db-filename "$dir/temporal.db" --log-level warn \
    </dev/null >"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/temporal.pid"

  local deadline=$((SECONDS + START_TIMEOUT)) state=starting
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! alive "$pid"; then
      rm -f "$dir/temporal.pid"
      log_tail "$log"
      die "server exited during start-up (see $log)"
    fi
    if [ "$state" = starting ] && port_open "$port"; then
      state=listening
    fi
    if [ "$state" = listening ] &&
      "$BIN" operator cluster health --address "127.0.0.1:$port" \
        --disable-config-file --disable-config-env --command-timeout 5s 2>/dev/null | grep -q SERVING; then
      echo "temporal: serving on 127.0.0.1:$port (pid $pid, ready in $(since "$t0") s${ui_port:+, web UI on http://127.0.0.1:$ui_port}; log $log)"
      return 0
    fi
    sleep 0.2
  done
  [ -f "$log" ] && log_tail "$log"
  echo "temporal: not SERVING on 127.0.0.1:$port after ${START_TIMEOUT} s (state: $state); stopping pid $pid" >&2
  terminate "$pid"
  rm -f "$dir/temporal.pid"
  exit 1
}

# SIGTERM, then SIGKILL after STOP_TIMEOUT seconds.

stop() {
  [ $# -eq 1 ] || usage
  local dir=$1 pid
  if ! pid=$(running_pid "$dir"); then
    rm -f "$dir/temporal.pid"
    echo "temporal: no server running for $dir"
    return 0
  fi
  terminate "$pid"
  rm -f "$dir/temporal.pid"
  echo "temporal: stopped pid $pid ($dir)"
}

case "${1:-}" in
  install) [ $# -eq 1 ] || usage; install ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) usage ;;
esac
