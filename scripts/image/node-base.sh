#!/usr/bin/env bash
# The Node.js base image the Dockerfile builds FROM on a machine that cannot reach a container
# registry (Docker Hub, ghcr.io and quay.io do not answer here; Debian's archive and the npm
# registry do):
#
#   scripts/image/node-base.sh [tag]   build the image `tag` (default: $FM_NODE_IMAGE or
#                                      fleet-manager-node:<node version>-bookworm) unless it exists
#
# The root file system is Debian bookworm from deb.debian.org (mmdebstrap, minbase, plus
# ca-certificates and the C++ runtime Node links against), imported with `docker import`.
# Debian bookworm's own nodejs is 18.19, below the >= 20.19 the project needs, and nodejs.org
# is not reachable either, so Node.js and npm are this machine's own (the files of its `nodejs`
# package and its global npm), the same versions the tests run with. Where a registry is
# reachable, the Dockerfile's default base, the official node:<version>-bookworm-slim, has the
# same layout (/usr/local is not used: node is /usr/bin/node here, which both PATHs find).
# The image trusts what this machine trusts: its CA bundle (/etc/ssl/certs/ca-certificates.crt,
# which holds any CA the machine's egress proxy signs with) replaces Debian's, and
# NODE_EXTRA_CA_CERTS points Node (and so npm) at it, as on this machine; without it `npm ci` in
# the build fails here with SELF_SIGNED_CERT_IN_CHAIN.
# Measured on 2 cores: about 1 min (the Debian download); a no-op when the image exists.
set -euo pipefail
PEER=node-base
STOP_TIMEOUT=1
# shellcheck source=scripts/peers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../peers/lib.sh"

NODE_VERSION=$(node -p 'process.versions.node')
TAG=${1:-${FM_NODE_IMAGE:-fleet-manager-node:$NODE_VERSION-bookworm}}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

command -v docker >/dev/null || die "docker not found (Debian: apt-get install docker.io)"
command -v mmdebstrap >/dev/null || die "mmdebstrap not found (Debian: apt-get install mmdebstrap)"
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "node-base: $TAG exists"
  exit 0
fi

t0=$(now)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Node.js and npm of this machine: the nodejs package's files, and the global npm (which npm
# may have updated in place since the package was installed).
node_bin=$(command -v node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
tar -C / -cf "$work/node.tar" "${node_bin#/}" "${npm_dir#/}"
cp /etc/ssl/certs/ca-certificates.crt "$work/ca-certificates.crt"
echo "node-base: building $TAG from Debian bookworm ($MIRROR) with Node.js $NODE_VERSION and npm $(npm -v)"
mmdebstrap --variant=minbase --include=ca-certificates,libstdc++6 \
  --customize-hook="tar -C \"\$1\" -xf $work/node.tar" \
  --customize-hook="ln -sf ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/bin/npm\"" \
  --customize-hook="ln -sf ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/bin/npx\"" \
  --customize-hook="cp $work/ca-certificates.crt \"\$1/etc/ssl/certs/ca-certificates.crt\"" \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
  bookworm "$work/rootfs.tar" "$MIRROR"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$TAG" >/dev/null
echo "node-base: built $TAG in $(since "$t0") s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))"
