#!/usr/bin/env bash
# A real OpenStack Ironic for the tests (packages/test-support/src/ironic.ts), from Debian's packages.
#
#   scripts/peers/ironic.sh install   install `ironic` + `ironic-dbsync` (package ironic-common)
#                                     and the `openstack baremetal` client (python3-openstackclient,
#                                     python3-ironicclient) unless already on PATH; safe to run again
#
# Only ironic-common: it ships the all-in-one `ironic` command (API and conductor in one
# process), which is all standalone mode needs; ironic-api/ironic-conductor would add systemd
# services that start on install. --no-install-recommends keeps it to ~180 MB. Its python3-ironic
# depends on python3-sushy (4.3.3 in Debian 12), the Redfish library the `redfish` hardware type
# uses: the tests enrol redfish nodes against test Redfish BMCs, so it is checked too.
# The client is what operators run after `eval "$(fleetctl openstack auth ...)"`: a fleetctl test
# runs `openstack baremetal node list` with only those variables against this Ironic.
# How the tests configure, start and talk to it: docs/peers.md, "OpenStack Ironic".
set -euo pipefail

usage() {
  echo "usage: $0 install" >&2
  exit 2
}

client_installed() {
  command -v openstack >/dev/null 2>&1 && openstack baremetal --help >/dev/null 2>&1
}

install() {
  if command -v ironic >/dev/null 2>&1 && command -v ironic-dbsync >/dev/null 2>&1 && client_installed; then
    sushy_check
    echo "ironic: already installed ($(command -v ironic), $(command -v openstack))"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ironic: apt-get not found; install OpenStack Ironic (ironic-common) another way" >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "ironic: installing ironic-common needs root (or sudo)" >&2
      exit 1
    fi
  fi
  echo "ironic: installing ironic-common (about 90 s)"
  # Another apt/dpkg (unattended upgrades, a parallel setup) holds the dpkg lock: wait for it
  # rather than fail (apt-get's own lock timeout, in seconds).
  local apt_opts=(-o DPkg::Lock::Timeout=600 -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends \
    ironic-common python3-openstackclient python3-ironicclient
  client_installed || { echo "ironic: installed python3-ironicclient but \`openstack baremetal\` does not run" >&2; exit 1; }
  command -v ironic >/dev/null 2>&1 || { echo "ironic: installed ironic-common but \`ironic\` is not on PATH" >&2; exit 1; }
  sushy_check
  echo "ironic: installed $(ironic --version 2>&1 | tail -n1)"
}

# The redfish driver imports sushy in the interpreter Ironic runs under (Debian's python3).
sushy_check() {
  local py
  py="$(head -n1 "$(command -v ironic)" | sed 's/^#!//')"
  if ! $py -c 'import sushy' >/dev/null 2>&1; then
    echo "ironic: $py cannot import sushy: install python3-sushy (the redfish hardware type needs it)" >&2
    exit 1
  fi
}

case "${1:-}" in
  install) install ;;
  *) usage ;;
esac
