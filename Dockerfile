# One image for every Fleet Manager process, selected by the command:
#   docker run IMAGE                                                  the hub (apps/hub/dist/main.js)
#   docker run IMAGE apps/satellite-agents/dist/main.js <openstack|netbox|workflow|temporal-worker>
#   docker run IMAGE apps/connectors/dist/main.js                     a connector instance (CONNECTOR_NAME, …)
#   docker run IMAGE apps/hub/dist/migrate.js                         migrations only
# It runs the built output (npm run build) as UID 65532 and writes nothing outside /tmp, so it
# runs with a read-only root file system and an emptyDir (or tmpfs) on /tmp.
#
# NODE_IMAGE: any Debian bookworm image with Node.js >= 20.19 and npm as node and npm on PATH.
# The default is the official one; a machine that reaches no container registry builds its own
# from Debian's archive with scripts/image/node-base.sh and passes --build-arg NODE_IMAGE=….
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# Stage 1: every dependency, then the build (Prisma client generation, esbuild, the workflow bundle, the web UI).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY apps/hub/package.json apps/hub/
COPY apps/satellite-agents/package.json apps/satellite-agents/
COPY apps/connectors/package.json apps/connectors/
COPY packages/clients/package.json packages/clients/
COPY packages/domain/package.json packages/domain/
COPY packages/test-support/package.json packages/test-support/
# The CLI's build bundles @fm/fleet-spec: npm ci links it only when its package.json is here.
COPY packages/fleet-spec/package.json packages/fleet-spec/
# The web UI's build tools (Vite, React) are its workspace's dependencies.
COPY apps/web/package.json apps/web/
# The CLI's libraries are its workspace's devDependencies (its build bundles them into dist/).
COPY apps/fleetctl/package.json apps/fleetctl/
RUN npm ci --no-audit --no-fund --loglevel=error
COPY . .
RUN npm run build

# Stage 2: the packages the built processes import at run time, and nothing else.
FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/hub/package.json apps/hub/
COPY apps/satellite-agents/package.json apps/satellite-agents/
COPY apps/connectors/package.json apps/connectors/
COPY packages/clients/package.json packages/clients/
COPY packages/domain/package.json packages/domain/
COPY packages/test-support/package.json packages/test-support/
# --omit=optional: @prisma/client lists the prisma CLI and typescript as optional peers, which the
# lockfile keeps as devOptional, so --omit=dev alone installs them (and their ~120 packages); the
# processes need neither at run time (migrations are the hub's own SQL runner, workflows come as a
# prebuilt bundle). The other optional packages are other platforms' binaries and pg-cloudflare.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --loglevel=error && rm -rf /root/.npm

# Stage 3: the image. No compiler, no sources, no npm cache; owned by root, run as 65532.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=runtime-deps /app /app
COPY --from=build /src/apps/hub/dist /app/apps/hub/dist
COPY --from=build /src/apps/satellite-agents/dist /app/apps/satellite-agents/dist
COPY --from=build /src/apps/connectors/dist /app/apps/connectors/dist
# Static files the hub serves at /ui/ (FM_WEB_DIR's default from the built hub).
COPY --from=build /src/apps/web/dist /app/apps/web/dist
USER 65532:65532
# The hub's API; every agent's /healthz, /readyz and /metrics.
EXPOSE 8080 9464
ENTRYPOINT ["node"]
CMD ["apps/hub/dist/main.js"]
