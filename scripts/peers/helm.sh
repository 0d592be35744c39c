#!/usr/bin/env bash
# Helm, for rendering and linting the charts in infra/helm/ (no cluster needed). Built from the
# Go module proxy with the machine's Go and cached outside the checkout, as the Temporal CLI is
# (scripts/peers/temporal.sh). See docs/peers.md, "Helm".
#
#   scripts/peers/helm.sh install   build $FM_TOOLS_CACHE/bin/helm (skipped when it is already
#                                   built from the same version, Go and flags)
#   scripts/peers/helm.sh path      print the binary's path (fails when it is not built)
#
# The pin is helm.sh/helm/v3 v3.21.4 (HELM_VERSION below). v3.22.0 is served by the proxy but
# not approved for this project. `go install pkg@version` builds the module with the go.sum the
# Helm release itself ships, so no tools module is needed; the version string is stamped into
# the binary as Helm's own Makefile does (internal/version.version), so `helm version` prints
# it. The stamp bin/helm.stamp holds a hash of the version, the Go version and the build flags.
# Measured on 2 cores: cold build about 3 min (101 MB binary), no-op about 0.1 s.
set -euo pipefail
PEER=helm
STOP_TIMEOUT=1
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION=v3.21.4
PKG=helm.sh/helm/v3/cmd/helm
CACHE="${FM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager}"
BIN_DIR="$CACHE/bin"
BIN="$BIN_DIR/helm"
STAMP="$BIN_DIR/helm.stamp"

find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  else
    die "Go not found (neither on PATH nor at /usr/local/go/bin/go)"
  fi
}

BUILD_FLAGS=(-trimpath "-ldflags=-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION")

stamp_of() {
  {
    echo "$PKG@$HELM_VERSION"
    "$1" env GOVERSION
    echo "CGO_ENABLED=0 ${BUILD_FLAGS[*]}"
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
    echo "helm: up to date ($BIN)"
    return 0
  fi
  mkdir -p "$BIN_DIR"
  exec 9>"$BIN_DIR/helm.lock"
  if command -v flock >/dev/null 2>&1; then
    flock 9
    if up_to_date "$stamp"; then
      echo "helm: up to date ($BIN, built by another install meanwhile)"
      return 0
    fi
  fi
  local t0 tmp
  t0=$(now)
  tmp=$(mktemp -d "$BIN_DIR/helm.tmp.XXXXXX")
  echo "helm: building $PKG@$HELM_VERSION with $("$go" env GOVERSION) into $BIN (about 3 min from cold on 2 cores)"
  # -modcacherw: a module cache that `rm -rf` can delete.
  if ! GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build" GOBIN="$tmp" CGO_ENABLED=0 GOWORK=off \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw" "$go" install "${BUILD_FLAGS[@]}" "$PKG@$HELM_VERSION"; then
    rm -rf "$tmp"
    die "build failed (see above)"
  fi
  mv -f "$tmp/helm" "$BIN"
  rm -rf "$tmp"
  echo "$stamp" >"$STAMP"
  echo "helm: built $BIN ($(du -h "$BIN" | cut -f1)) in $(since "$t0") s: $("$BIN" version --short)"
}

path() {
  [ -x "$BIN" ] || die "$BIN not built; run: $0 install"
  echo "$BIN"
}

case "${1:-}" in
  install) install ;;
  path) path ;;
  *)
    echo "usage: $0 install|path" >&2
    exit 2
    ;;
esac
