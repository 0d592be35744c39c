#!/usr/bin/env bash
# Chromium for the web UI's browser tests, screenshots and benchmark, from Debian (`chromium`,
# at /usr/bin/chromium). playwright-core drives it (test/web-env.ts); Playwright's own browser
# download is never used (`playwright install` reaches a host this setup does not need).
#
#   scripts/peers/chromium.sh install   install it unless it is already there; safe to run again
#
# CHROMIUM_PATH points the tests at another Chromium instead.
set -euo pipefail

usage() {
  echo "usage: $0 install" >&2
  exit 2
}

install() {
  local path="${CHROMIUM_PATH:-/usr/bin/chromium}"
  if [ -x "$path" ]; then
    echo "chromium: already installed ($path)"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium: apt-get not found; install Chromium another way and set CHROMIUM_PATH" >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "chromium: installing chromium needs root (or sudo)" >&2
      exit 1
    fi
  fi
  echo "chromium: installing chromium"
  # Wait for another apt/dpkg holding the lock rather than fail (seconds).
  local apt_opts=(-o DPkg::Lock::Timeout=600 -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends chromium
  [ -x /usr/bin/chromium ] || { echo "chromium: installed but /usr/bin/chromium is missing" >&2; exit 1; }
  echo "chromium: installed $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
}

case "${1:-}" in
  install) install ;;
  *) usage ;;
esac
