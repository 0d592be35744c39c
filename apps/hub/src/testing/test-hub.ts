/** An in-process hub on its own test database, called with app.inject or over a socket. */
import { Writable } from "node:stream";
import { inject } from "vitest";
import type { FastifyInstance } from "fastify";
import { randomBytes } from "node:crypto";
import { buildApp, type AppDeps } from "../app.ts";
import { hubLogger } from "../lib/log.ts";
import { localAuthenticator } from "../plugins/request-context.ts";
import { ensureAdminClient } from "../modules/identity/bootstrap.ts";
import { clientToken } from "@fm/test-support/process";
import { createDatabase, type Database } from "../db/client.ts";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { startTcpProxy, type TcpProxy } from "@fm/test-support/tcp-proxy";

export interface TestHub {
  app: FastifyInstance;
  db: Database;
  database: TestDatabase;
  /** Every log line the hub wrote, parsed. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/** Identity settings for an in-process hub; the issuer is what its tokens carry. */
export const testIdentity = (issuer = "http://hub.test") => ({
  config: { issuer, audience: "fleet-manager", tokenLifetimeS: 600 },
  kek: randomBytes(32),
  rotationOverlapMs: 3600_000,
});

/**
 * A hub on its own database. By default every caller is the local admin (tests of other
 * features); pass `authenticate: undefined` for the real OAuth2 authenticator.
 */
export async function startTestHub(overrides: Partial<AppDeps> & { databaseUrl?: string } = {}): Promise<TestHub> {
  const database = await createTestDatabase(inject("templateDatabase"));
  const db = createDatabase(overrides.databaseUrl ?? database.url, { poolMax: 5, connectTimeoutMs: 1000 });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const app = await buildApp({
    prisma: db.prisma,
    pool: db.pool,
    logger: hubLogger("info", sink),
    identity: testIdentity(),
    authenticate: localAuthenticator,
    ...overrides,
  });
  return {
    app,
    db,
    database,
    logs,
    async close() {
      await app.close();
      await db.close();
      await database.drop();
    },
  };
}

/** A hub that reaches its database through a TCP proxy the test can cut and restore. */
export async function startProxiedTestHub(overrides: Partial<AppDeps> = {}): Promise<TestHub & { proxy: TcpProxy }> {
  const database = await createTestDatabase(inject("templateDatabase"));
  const target = new URL(database.url);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  target.port = String(proxy.port);
  const hub = await startTestHub({ databaseUrl: target.toString(), ...overrides });
  return {
    ...hub,
    // The database behind the proxy, the one the hub uses (not the one startTestHub made).
    database,
    proxy,
    async close() {
      await hub.close();
      await proxy.close();
      await database.drop();
    },
  };
}

/**
 * A hub with the real OAuth2 authenticator, listening on a real port that is also its issuer.
 * The port is the one the OS gives it as it binds (no port chosen first and bound later, which
 * another process could take meanwhile): like a hub without FM_ISSUER_URL, its issuer is set
 * to the address it listens on, unless `overrides.identity` names one.
 */
export async function startOAuthTestHub(
  overrides: Partial<AppDeps> = {},
): Promise<TestHub & { url: string; adminToken: string }> {
  const identity = overrides.identity ?? testIdentity("");
  const hub = await startTestHub({ authenticate: undefined, ...overrides, identity });
  await hub.app.ready();
  await ensureAdminClient(hub.db.prisma, { secret: TEST_ADMIN_SECRET, dataDir: "/nonexistent", log: hub.app.log });
  const url = await hub.app.listen({ port: 0, host: "127.0.0.1" });
  if (!identity.config.issuer) identity.config.issuer = url;
  return { ...hub, url, adminToken: await clientToken(url, "fleet-admin", TEST_ADMIN_SECRET) };
}
export const TEST_ADMIN_SECRET = "in-process-admin-secret";
