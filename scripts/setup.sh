#!/usr/bin/env bash
# Installs what a clean checkout needs to build and test, idempotently:
#  - npm dependencies from the lockfile (skipped when node_modules already matches it)
#  - the Prisma client (generated; skipped when the schema has not changed)
#  - the peers the end-to-end tests start: Ironic (Debian), SLURM (Debian: slurmctld, slurmd,
#    slurmrestd, munge) and the Temporal dev server (built from the Go module proxy once, then
#    cached outside the checkout in FM_TOOLS_CACHE, default ~/.cache/fleet-manager; see scripts/peers/*.sh)
#  - Helm, for the chart tests, and gofakes3 (an S3 server), for the burn-in artifact tests: built
#    from the Go module proxy once and cached the same way
#  - Docker, for the image test: docker.io and mmdebstrap from Debian, dockerd started if no
#    daemon answers, and the Node.js base image built from Debian's archive (scripts/peers/docker.sh)
#  - Prometheus, promtool and the blackbox exporter (Debian), which the alert tests run
#  - Chromium (Debian), which the web UI's browser tests drive through playwright-core
#  - zsh (Debian), for the test of fleetctl's zsh completion
#  - a PostgreSQL for the tests on 127.0.0.1:5432: the machine's cluster is started if it
#    is installed but stopped. Without one, the test setup falls back to an embedded
#    PostgreSQL of its own (see apps/hub/src/testing/global-setup.ts).
set -euo pipefail
cd "$(dirname "$0")/.."

lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
stamp=node_modules/.fm-lock-hash
# An `npm ci` run by hand just before (the README's first command) counts: npm writes its own
# record of the tree, node_modules/.package-lock.json, after every install.
if [ ! -f "$stamp" ] && [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
  echo "$lock_hash" > "$stamp"
fi
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  echo "setup: installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

node scripts/prisma-generate.mjs

scripts/peers/ironic.sh install
scripts/peers/slurm.sh install
scripts/peers/temporal.sh install
scripts/peers/helm.sh install
scripts/peers/s3.sh install
scripts/peers/docker.sh install
scripts/peers/prometheus.sh install
scripts/peers/chromium.sh install

# zsh, which the test of fleetctl's zsh completion script runs (Debian's package, ~2 MB).
if ! command -v zsh >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo=()
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo=(sudo)
  echo "setup: installing zsh"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q install -y --no-install-recommends zsh
fi

if [ -z "${TEST_DATABASE_URL:-}" ] && command -v pg_isready >/dev/null 2>&1; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
      for v in $(ls /etc/postgresql); do
        echo "setup: starting PostgreSQL cluster $v/main"
        pg_ctlcluster --skip-systemctl-redirect "$v" main start || true
      done
      for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    fi
  fi
fi
