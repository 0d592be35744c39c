/**
 * Start-up identity work: the first admin client on an empty database, and the satellites
 * declared in FM_EXPECTED_SATELLITES.
 */
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { Environment } from "@fm/domain";
import type { FastifyBaseLogger } from "fastify";
import type { PrismaClient } from "../../db/client.ts";
import { satelliteRows } from "../satellites/public.ts";
import type { SatelliteService } from "../satellites/service.ts";
import { siteRows } from "../sites/public.ts";
import { identityRepo } from "./repo.ts";
import { generateSecret, hashSecret } from "../../lib/secrets.ts";

export const ADMIN_CLIENT_ID = "fleet-admin";

export interface BootstrapResult {
  /** Set only when the secret was generated on this start (it is then shown once). */
  generatedSecretFile?: string;
}

/**
 * Creates `fleet-admin` when no admin client exists. Its secret comes from
 * FM_BOOTSTRAP_ADMIN_SECRET, or is generated, written 0600 into the data folder and printed
 * once on stderr (never into the JSON logs).
 */
export async function ensureAdminClient(
  prisma: PrismaClient,
  opts: { secret?: string | undefined; dataDir: string; log: FastifyBaseLogger },
): Promise<BootstrapResult> {
  if (await identityRepo.adminClientExists(prisma)) return {};
  const secret = opts.secret ?? generateSecret();
  const created = await identityRepo.createAdminClient(prisma, {
    clientId: ADMIN_CLIENT_ID,
    scopes: ["fleet.admin", "fleet.operate", "fleet.read"],
    secretHash: await hashSecret(secret),
  });
  if (!created) return {}; // another replica created it first
  opts.log.info(
    { clientId: ADMIN_CLIENT_ID, secretSource: opts.secret ? "FM_BOOTSTRAP_ADMIN_SECRET" : "generated" },
    "created the bootstrap admin client",
  );
  if (opts.secret) return {};
  const file = join(opts.dataDir, `${ADMIN_CLIENT_ID}.secret`);
  const fh = await open(file, "w", 0o600);
  await fh.writeFile(secret + "\n");
  await fh.close();
  process.stderr.write(
    `\nFleet Manager: created the admin OAuth2 client '${ADMIN_CLIENT_ID}'. Its secret (shown once, also in ${file}, mode 0600):\n\n  ${secret}\n\n` +
      `Get a token: curl -s -u ${ADMIN_CLIENT_ID}:<secret> -d grant_type=client_credentials <hub>/oauth/token\n\n`,
  );
  return { generatedSecretFile: file };
}

export interface ExpectedSatellite {
  name: string;
  sites: string[];
  environment: Environment;
}

/**
 * Creates declared satellites that do not exist yet (their secrets are generated and not
 * shown: issue one with rotate-secret) and brings their site lists up to date. A satellite
 * naming an unknown site is skipped with an error, not a crash.
 */
export async function reconcileExpectedSatellites(
  prisma: PrismaClient,
  service: SatelliteService,
  expected: ExpectedSatellite[],
  log: FastifyBaseLogger,
): Promise<void> {
  const ctx = {
    principal: { id: "hub:config", kind: "local" as const, scopes: new Set<string>() },
    requestId: null as unknown as string,
  };
  for (const want of expected) {
    const sites = await siteRows.findBySlugs(prisma, want.sites);
    if (sites.length !== want.sites.length) {
      log.error(
        { satellite: want.name, missing: want.sites.filter((s) => !sites.some((x) => x.slug === s)) },
        "FM_EXPECTED_SATELLITES names unknown sites; satellite skipped",
      );
      continue;
    }
    // Hashing six secrets is CPU work: done before the transaction, and only when needed.
    const secrets = (await satelliteRows.exists(prisma, want.name)) ? [] : await service.agentSecrets(want.name);
    await prisma.$transaction(async (tx) => {
      const existing = await satelliteRows.findByName(tx, want.name);
      if (!existing) {
        if (!secrets.length) return; // removed meanwhile by another replica; the next start creates it
        await service.createIn(
          tx,
          ctx,
          { name: want.name, siteIds: sites.map((s) => s.id), environment: want.environment },
          secrets,
        );
        log.info(
          { satellite: want.name },
          "created expected satellite from configuration; issue its secrets with rotate-secret",
        );
        return;
      }
      const have = new Set(existing.sites.map((s) => s.siteId));
      const wantIds = new Set(sites.map((s) => s.id));
      if (have.size !== wantIds.size || [...wantIds].some((id) => !have.has(id))) {
        await satelliteRows.replaceSites(tx, existing.id, [...wantIds]);
        log.info({ satellite: want.name, sites: want.sites }, "updated expected satellite's sites from configuration");
      }
    });
  }
}
