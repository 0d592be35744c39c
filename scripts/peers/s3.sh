#!/usr/bin/env bash
# An S3-compatible server for the burn-in artifact tests: gofakes3 (MIT), built from the Go module
# proxy with the machine's Go and cached outside the checkout, as Helm and the Temporal CLI are.
# It speaks the S3 REST API (PUT/GET object, ListObjectsV2, multipart) on one port, objects in
# memory. It does not check request signatures: tests of credential handling check what the
# client sends, not a 403. See docs/peers.md, "S3".
#
#   scripts/peers/s3.sh install                      build $FM_TOOLS_CACHE/bin/gofakes3 (skipped when built
#                                                    from the same version and Go)
#   scripts/peers/s3.sh start <dir> <port> <bucket>  start it on 127.0.0.1:<port> with <bucket> created,
#                                                    log <dir>/gofakes3.log, pid <dir>/gofakes3.pid
#   scripts/peers/s3.sh stop <dir>                   stop the server started in <dir>
#
# The pin is github.com/johannesboyne/gofakes3 v1.2.0 (GOFAKES3_VERSION below).
set -euo pipefail
PEER=s3
STOP_TIMEOUT=5
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOFAKES3_VERSION=v1.2.0
PKG=github.com/johannesboyne/gofakes3/cmd/gofakes3
CACHE="${FM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager}"
BIN_DIR="$CACHE/bin"
BIN="$BIN_DIR/gofakes3"
STAMP="$BIN_DIR/gofakes3.stamp"

find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  else
    die "Go not found (neither on PATH nor at /usr/local/go/bin/go)"
  fi
}

stamp_of() {
  {
    echo "$PKG@$GOFAKES3_VERSION"
    "$1" env GOVERSION
  } | sha256sum | cut -d' ' -f1
}

up_to_date() {
  [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$1" ]
}

install() {
  local go stamp
  go=$(find_go)
  stamp=$(stamp_of "$go")
  if up_to_date "$stamp"; then
    echo "gofakes3: up to date ($BIN)"
    return 0
  fi
  mkdir -p "$BIN_DIR"
  exec 9>"$BIN_DIR/gofakes3.lock"
  if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date "$stamp"; then
      echo "gofakes3: up to date ($BIN, built by another install meanwhile)"
      return 0
    fi
  fi
  local t0 tmp
  t0=$(now)
  tmp=$(mktemp -d "$BIN_DIR/gofakes3.tmp.XXXXXX")
  echo "gofakes3: building $PKG@$GOFAKES3_VERSION with $("$go" env GOVERSION) into $BIN (about 1 min from cold)"
  if ! GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build" GOBIN="$tmp" CGO_ENABLED=0 GOWORK=off \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw" "$go" install -trimpath "$PKG@$GOFAKES3_VERSION"; then
    rm -rf "$tmp"
    die "build failed (see above)"
  fi
  mv -f "$tmp/gofakes3" "$BIN"
  rm -rf "$tmp"
  echo "$stamp" >"$STAMP"
  echo "gofakes3: built $BIN in $(since "$t0") s"
}

# The pid in <dir>/gofakes3.pid, if that process is alive and is gofakes3.
running_pid() {
  local pidfile=$1/gofakes3.pid pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q gofakes3 || return 1
  echo "$pid"
}

start() {
  local dir=${1:?usage: $0 start <dir> <port> <bucket>} port=${2:?port} bucket=${3:?bucket} pid i
  [ -x "$BIN" ] || die "$BIN not built; run: $0 install"
  mkdir -p "$dir"
  if pid=$(running_pid "$dir"); then die "a server started in $dir is already running (pid $pid)"; fi
  port_open "$port" && die "port $port is already in use"
  nohup "$BIN" -backend memory -host "127.0.0.1:$port" -initialbucket "$bucket" \
    >"$dir/gofakes3.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/gofakes3.pid"
  for ((i = 0; i < 300; i++)); do
    if ! alive "$pid"; then
      rm -f "$dir/gofakes3.pid"
      log_tail "$dir/gofakes3.log"
      die "gofakes3 exited at start"
    fi
    port_open "$port" && return 0
    sleep 0.1
  done
  terminate "$pid" gofakes3
  log_tail "$dir/gofakes3.log"
  die "gofakes3 did not listen on $port within 30 s"
}

stop() {
  local dir=${1:?usage: $0 stop <dir>} pid
  if pid=$(running_pid "$dir"); then terminate "$pid" gofakes3; fi
  rm -f "$dir/gofakes3.pid"
}

case "${1:-}" in
  install) install ;;
  start) start "$2" "$3" "$4" ;;
  stop) stop "$2" ;;
  *)
    echo "usage: $0 install | start <dir> <port> <bucket> | stop <dir>" >&2
    exit 2
    ;;
esac
