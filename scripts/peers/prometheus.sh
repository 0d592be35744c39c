#!/usr/bin/env bash
# Prometheus for the alert tests, from Debian: `prometheus` (2.42 on bookworm: the server and
# promtool; test/alerts.int.test.ts runs promtool on infra/alerts/) and
# `prometheus-blackbox-exporter` (0.23: test/hub-probe.e2e.test.ts runs a satellite's hub probe).
#
#   scripts/peers/prometheus.sh install   install both unless they are already on PATH; safe to run again
#
# --no-install-recommends keeps it to the binaries; the packages start no service here (no
# systemd); the tests start their own (packages/test-support/src/prometheus.ts).
set -euo pipefail

usage() {
  echo "usage: $0 install" >&2
  exit 2
}

install() {
  if command -v promtool >/dev/null 2>&1 && command -v prometheus-blackbox-exporter >/dev/null 2>&1; then
    echo "prometheus: already installed ($(command -v promtool), $(command -v prometheus-blackbox-exporter))"
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
  echo "prometheus: installing prometheus and prometheus-blackbox-exporter"
  # Wait for another apt/dpkg holding the lock rather than fail (seconds).
  local apt_opts=(-o DPkg::Lock::Timeout=600 -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends prometheus prometheus-blackbox-exporter
  command -v promtool >/dev/null 2>&1 || { echo "prometheus: installed but \`promtool\` is not on PATH" >&2; exit 1; }
  command -v prometheus-blackbox-exporter >/dev/null 2>&1 || { echo "prometheus: installed but \`prometheus-blackbox-exporter\` is not on PATH" >&2; exit 1; }
  echo "prometheus: installed $(promtool --version 2>&1 | head -n1)"
}

case "${1:-}" in
  install) install ;;
  *) usage ;;
esac
