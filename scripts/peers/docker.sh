#!/usr/bin/env bash
# A Docker daemon and the Node.js base image, so the container image (./Dockerfile) can be built
# and run by test/image.e2e.test.ts on this machine:
#
#   scripts/peers/docker.sh install   install docker.io and mmdebstrap from Debian if missing,
#                                     start dockerd if no daemon answers, build the base image
#                                     (scripts/image/node-base.sh) if missing; a no-op otherwise
#   scripts/peers/docker.sh image     print the base image's tag
#
# The machine has a Docker client but no daemon; Debian 12's docker.io (20.10) provides one.
# Container registries (Docker Hub, ghcr.io, quay.io) do not answer here, so the Dockerfile's
# default base (node:<version>-bookworm-slim) cannot be pulled: its stand-in is built from
# Debian's archive and this machine's Node.js (see scripts/image/node-base.sh). dockerd is
# started in the background with its log in $FM_TOOLS_CACHE/dockerd.log and keeps running, as
# the machine's PostgreSQL does.
set -euo pipefail
PEER=docker
STOP_TIMEOUT=10
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE="${FM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager}"
IMAGE="${FM_NODE_IMAGE:-fleet-manager-node:$(node -p 'process.versions.node')-bookworm}"

apt_install() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "installing $* needs root (or sudo)"
    sudo=(sudo)
  fi
  local apt_opts=(-o DPkg::Lock::Timeout=300 -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "$@"
}

install() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${missing[*]} another way"
    echo "docker: installing ${missing[*]} from Debian"
    apt_install "${missing[@]}"
  fi
  if ! docker info >/dev/null 2>&1; then
    mkdir -p "$CACHE"
    echo "docker: starting dockerd (log $CACHE/dockerd.log)"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    nohup "${sudo[@]}" dockerd >"$CACHE/dockerd.log" 2>&1 </dev/null &
    local deadline=$((SECONDS + 60))
    until docker info >/dev/null 2>&1; do
      [ "$SECONDS" -lt "$deadline" ] || {
        log_tail "$CACHE/dockerd.log"
        die "dockerd did not answer within 60 s"
      }
      sleep 0.5
    done
  fi
  "$ROOT/scripts/image/node-base.sh" "$IMAGE"
}

case "${1:-}" in
  install) install ;;
  image) echo "$IMAGE" ;;
  *)
    echo "usage: $0 install|image" >&2
    exit 2
    ;;
esac
