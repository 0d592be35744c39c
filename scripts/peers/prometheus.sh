#!/usr/bin/env bash
# Prometheus's `promtool` for the alert rule tests (infra/alerts/, test/alerts.test.ts), from
# Debian's `prometheus` package (2.42 on bookworm).
#
#   scripts/peers/prometheus.sh install   install `promtool` unless it is already on PATH; safe to run again
#
# --no-install-recommends keeps it to the server and promtool; the package starts no service
# here (no systemd), and the tests only run `promtool check rules` / `promtool test rules`.
set -euo pipefail

usage() {
  echo "usage: $0 install" >&2
  exit 2
}

install() {
  if command -v promtool >/dev/null 2>&1; then
    echo "prometheus: promtool already installed ($(command -v promtool))"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "prometheus: apt-get not found; install Prometheus (its promtool) another way" >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "prometheus: installing prometheus needs root (or sudo)" >&2
      exit 1
    fi
  fi
  echo "prometheus: installing prometheus (for promtool)"
  # Wait for another apt/dpkg holding the lock rather than fail (seconds).
  local apt_opts=(-o DPkg::Lock::Timeout=600 -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends prometheus
  command -v promtool >/dev/null 2>&1 || { echo "prometheus: installed but \`promtool\` is not on PATH" >&2; exit 1; }
  echo "prometheus: installed $(promtool --version 2>&1 | head -n1)"
}

case "${1:-}" in
  install) install ;;
  *) usage ;;
esac
