/**
 * What the identity tests share: a hub with the real OAuth2 authorization server (rotation
 * overlap 1.5 s, 20 token requests a minute per client), trusting a second OIDC issuer for
 * people, with two sites of inventory; and helpers that remember every secret the hub issued,
 * since none may ever be stored or logged in clear.
 */
import { expect } from "vitest";
import { TEST_ADMIN_SECRET, startOAuthTestHub, testIdentity } from "./test-hub.ts";
import { seedInventory } from "./inventory.ts";
import { startTestIssuer } from "@fm/test-support/oidc-issuer";
import { bearer } from "@fm/test-support/process";

/**
 * Long enough for a test to rotate a secret and use both (two password hashes on a loaded
 * 2-core machine took longer than 1.5 s), short enough to wait for its end.
 */
export const OVERLAP_MS = 4000;

export async function startIdentityTestHub() {
  const people = await startTestIssuer();
  const identity = testIdentity("");
  const hub = await startOAuthTestHub({
    identity: {
      ...identity,
      rotationOverlapMs: OVERLAP_MS,
      tokenRateLimitPerMinute: 20,
      config: {
        ...identity.config,
        external: {
          issuer: people.issuer,
          audience: "fleet-manager",
          mapping: {
            emailDomains: { "example.com": ["fleet.read"] },
            groups: { "fleet-operators": ["fleet.operate"], "fleet-admins": ["fleet.admin"] },
          },
        },
      },
    },
  });
  const inv = await seedInventory(hub.db.prisma, 3);
  /** Every secret the hub issued to this file's tests. */
  const issuedSecrets: string[] = [TEST_ADMIN_SECRET];

  const api = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${hub.url}${path}`, {
      ...init,
      headers: {
        ...(init.body ? { "content-type": "application/json" } : {}),
        ...(init.token ? bearer(init.token) : {}),
        ...(init.headers as Record<string, string>),
      },
    });

  /** Expects a satellite serving `siteIds`; returns its agents' secrets by agent kind. */
  async function createSatellite(name: string, siteIds: string[]): Promise<Record<string, string>> {
    const res = await api("/api/v1/satellites/", {
      method: "POST",
      token: hub.adminToken,
      body: JSON.stringify({ name, siteIds, environment: "prod" }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
    issuedSecrets.push(...body.secrets.map((s) => s.clientSecret));
    return Object.fromEntries(body.secrets.map((s) => [s.agent, s.clientSecret]));
  }

  /** Issues a new secret for one agent of a satellite; the old one works for the overlap. */
  async function rotateSecret(satellite: string, agent: string): Promise<string> {
    const res = await api(`/api/v1/satellites/${satellite}/agents/${agent}/rotate-secret/`, {
      method: "POST",
      token: hub.adminToken,
    });
    expect(res.status).toBe(200);
    const { clientSecret } = (await res.json()) as { clientSecret: string };
    issuedSecrets.push(clientSecret);
    return clientSecret;
  }

  return {
    hub,
    url: hub.url,
    admin: hub.adminToken,
    people,
    inv,
    issuedSecrets,
    api,
    createSatellite,
    rotateSecret,
    async close() {
      await hub.close();
      await people.close();
    },
  };
}
export type IdentityTestHub = Awaited<ReturnType<typeof startIdentityTestHub>>;
