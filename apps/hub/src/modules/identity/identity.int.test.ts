import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { SignJWT, decodeProtectedHeader } from "jose";
import { TEST_ADMIN_SECRET, startOAuthTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";
import { startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { bearer, clientToken } from "@fm/test-support/process";
import { seedInventory, type Inventory } from "../../testing/inventory.ts";

const ADMIN_SECRET = TEST_ADMIN_SECRET;
const OVERLAP_MS = 1500;
let hub: TestHub;
let url: string;
let people: TestIssuer;
let inv: Inventory;
let admin: string;
/** Every secret the hub issued during this file: none may be stored or logged in clear. */
const issuedSecrets: string[] = [ADMIN_SECRET];

beforeAll(async () => {
  people = await startTestIssuer();
  const oauthHub = await startOAuthTestHub((issuer) => {
    const identity = testIdentity(issuer);
    return {
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
    };
  });
  hub = oauthHub;
  url = oauthHub.url;
  admin = oauthHub.adminToken;
  inv = await seedInventory(hub.db.prisma, 3);
});
afterAll(async () => {
  await hub.close();
  await people.close();
});

const api = (path: string, init: RequestInit & { token?: string } = {}) =>
  fetch(`${url}${path}`, {
    ...init,
    headers: {
      ...(init.body ? { "content-type": "application/json" } : {}),
      ...(init.token ? bearer(init.token) : {}),
      ...(init.headers as Record<string, string>),
    },
  });

async function createSatellite(name: string, siteIds: string[]): Promise<Record<string, string>> {
  const res = await api("/api/v1/satellites/", {
    method: "POST",
    token: admin,
    body: JSON.stringify({ name, siteIds, environment: "prod" }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
  issuedSecrets.push(...body.secrets.map((s) => s.clientSecret));
  return Object.fromEntries(body.secrets.map((s) => [s.agent, s.clientSecret]));
}

describe("authorization server", () => {
  it("works with openid-client: discovery, then the client credentials grant (basic and post)", async () => {
    for (const auth of [oidc.ClientSecretBasic(ADMIN_SECRET), oidc.ClientSecretPost(ADMIN_SECRET)]) {
      const config = await oidc.discovery(new URL(url), "fleet-admin", undefined, auth, {
        execute: [oidc.allowInsecureRequests],
      });
      const tokens = await oidc.clientCredentialsGrant(config, { scope: "fleet.read" });
      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.expires_in).toBe(600);
      const header = decodeProtectedHeader(tokens.access_token);
      expect(header).toMatchObject({ alg: "EdDSA", typ: "at+jwt" });
      expect(header.kid).toBeTruthy();
      expect((await api("/api/v1/sites/", { token: tokens.access_token })).status).toBe(200);
      // Only the scope it asked for: a read token cannot create.
      expect(
        (
          await api("/api/v1/sites/", {
            method: "POST",
            token: tokens.access_token,
            body: JSON.stringify({ slug: "nope", name: "x" }),
          })
        ).status,
      ).toBe(403);
    }
  });

  it("answers RFC 6749 errors for bad client credentials, grants and scopes", async () => {
    const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(body),
      });
    const wrong = await token({ grant_type: "client_credentials", client_id: "fleet-admin", client_secret: "wrong" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });
    expect((await token({ grant_type: "client_credentials", client_id: "nobody", client_secret: "x" })).status).toBe(
      401,
    );
    const grant = await token({ grant_type: "password", client_id: "fleet-admin", client_secret: ADMIN_SECRET });
    expect(await grant.json()).toMatchObject({ error: "unsupported_grant_type" });
    const scope = await token({
      grant_type: "client_credentials",
      client_id: "fleet-admin",
      client_secret: ADMIN_SECRET,
      scope: "agent:netbox",
    });
    expect(scope.status).toBe(400);
    expect(await scope.json()).toMatchObject({ error: "invalid_scope" });
    const meta = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
      token_endpoint_auth_methods_supported: string[];
    };
    expect(meta.issuer).toBe(url);
    expect(meta.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post"]);
  });

  it("rotates the signing key: old tokens stay valid, new ones carry the new kid, JWKS has both", async () => {
    const before = admin;
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await api("/api/v1/admin/signing-keys/rotate", { method: "POST", token: admin });
    expect(rotated.status).toBe(200);
    const { kid } = (await rotated.json()) as { kid: string };
    expect(kid).not.toBe(oldKid);
    const fresh = await clientToken(url, "fleet-admin", ADMIN_SECRET);
    expect(decodeProtectedHeader(fresh).kid).toBe(kid);
    expect((await api("/api/v1/sites", { token: before })).status).toBe(200);
    const jwks = (await (await fetch(`${url}/oauth/jwks`)).json()) as { keys: { kid: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([oldKid, kid].sort());
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true); // public keys only
    admin = fresh;
  });

  it("rate-limits the token endpoint per client id", async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 25 && !limited; i++) {
      const res = await fetch(`${url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: "flooder", client_secret: "x" }),
      });
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited?.json()).toMatchObject({ error: "temporarily_unavailable" });
    // Another client from the same address is still served: the per-address limit is higher.
    await clientToken(url, "fleet-admin", ADMIN_SECRET);
  });
});

describe("expected satellites and agents", () => {
  it("creates one client per agent, shown once; agents read but write only their own state", async () => {
    const secrets = await createSatellite("sys1-ice2", [inv.sites.keflavik]);
    expect(Object.keys(secrets).sort()).toEqual([
      "health-status",
      "netbox",
      "openstack",
      "slurm",
      "temporal-worker",
      "workflow",
    ]);
    const agent = await clientToken(url, "ironic-agent-sys1-ice2", secrets.openstack!);
    expect((await api("/api/v1/device-roles/?site=keflavik&inUse=true", { token: agent })).status).toBe(200);
    expect(
      (
        await api("/api/v1/sites", {
          method: "POST",
          token: agent,
          body: JSON.stringify({ slug: "agent-made", name: "x" }),
        })
      ).status,
    ).toBe(403);
    const hb = await api("/api/v1/satellites/sys1-ice2/agents/openstack/heartbeat", {
      method: "POST",
      token: agent,
      body: JSON.stringify({ reflectors: { "ironic-nodes-overcloud": 12 } }),
    });
    expect(hb.status).toBe(204);
    // Another agent's heartbeat, even of the same satellite, is not its to report.
    expect(
      (await api("/api/v1/satellites/sys1-ice2/agents/slurm/heartbeat", { method: "POST", token: agent, body: "{}" }))
        .status,
    ).toBe(403);
    const view = (await (await api("/api/v1/satellites/sys1-ice2/", { token: admin })).json()) as {
      siteIds: string[];
      clients: {
        agent: string;
        clientId: string;
        lastTokenAt: string | null;
        lastHeartbeatAt: string | null;
        reflectorAgesSeconds: Record<string, number> | null;
      }[];
    };
    expect(view.siteIds).toEqual([inv.sites.keflavik]);
    const os = view.clients.find((c) => c.agent === "openstack")!;
    expect(os).toMatchObject({
      clientId: "ironic-agent-sys1-ice2",
      reflectorAgesSeconds: { "ironic-nodes-overcloud": 12 },
    });
    expect(os.lastTokenAt).not.toBeNull();
    expect(os.lastHeartbeatAt).not.toBeNull();
    expect(JSON.stringify(view)).not.toContain(secrets.openstack!);
    // A satellite the hub does not expect cannot authenticate.
    await expect(clientToken(url, "ironic-agent-sys9-nowhere", secrets.openstack!)).rejects.toThrow(/401/);
  });

  it("rotation: the new secret works, the old one until the overlap ends", async () => {
    const secrets = await createSatellite("sys2-rot", [inv.sites.stavanger]);
    const res = await api("/api/v1/satellites/sys2-rot/agents/slurm/rotate-secret/", { method: "POST", token: admin });
    expect(res.status).toBe(200);
    const { clientSecret } = (await res.json()) as { clientSecret: string };
    issuedSecrets.push(clientSecret);
    await clientToken(url, "slurm-agent-sys2-rot", clientSecret);
    await clientToken(url, "slurm-agent-sys2-rot", secrets.slurm!); // still inside the overlap
    await new Promise((r) => setTimeout(r, OVERLAP_MS + 200));
    await expect(clientToken(url, "slurm-agent-sys2-rot", secrets.slurm!)).rejects.toThrow(/invalid_client/);
    await clientToken(url, "slurm-agent-sys2-rot", clientSecret);
  });

  it("revocation and removal make existing tokens fail at once", async () => {
    const secrets = await createSatellite("sys3-rev", [inv.sites.stavanger]);
    const netbox = await clientToken(url, "netbox-agent-sys3-rev", secrets.netbox!);
    const health = await clientToken(url, "health-status-agent-sys3-rev", secrets["health-status"]!);
    expect((await api("/api/v1/sites", { token: netbox })).status).toBe(200);
    expect(
      (await api("/api/v1/satellites/sys3-rev/agents/netbox/revoke", { method: "POST", token: admin })).status,
    ).toBe(200);
    const revoked = await api("/api/v1/sites", { token: netbox });
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get("www-authenticate")).toContain("invalid_token");
    await expect(clientToken(url, "netbox-agent-sys3-rev", secrets.netbox!)).rejects.toThrow(/401/);
    expect((await api("/api/v1/sites", { token: health })).status).toBe(200);
    expect((await api("/api/v1/satellites/sys3-rev", { method: "DELETE", token: admin })).status).toBe(204);
    expect((await api("/api/v1/sites", { token: health })).status).toBe(401);
  });
});

describe("people through an external OIDC issuer", () => {
  it("maps email domains and groups to scopes and checks the audience", async () => {
    const reader = await people.token({ email: "ana@example.com", email_verified: true });
    expect((await api("/api/v1/sites", { token: reader })).status).toBe(200);
    expect(
      (
        await api("/api/v1/sites", {
          method: "POST",
          token: reader,
          body: JSON.stringify({ slug: "by-reader", name: "x" }),
        })
      ).status,
    ).toBe(403);
    const adminPerson = await people.token({ email: "bo@example.com", groups: ["fleet-admins"] });
    const created = await api("/api/v1/sites", {
      method: "POST",
      token: adminPerson,
      body: JSON.stringify({ slug: "by-person", name: "x" }),
    });
    expect(created.status).toBe(201);
    const audit = (await (
      await api("/api/v1/audit?action=site.create&resourceId=" + ((await created.json()) as { id: string }).id, {
        token: admin,
      })
    ).json()) as { items: { principal: string }[] };
    expect(audit.items[0]!.principal).toBe("person:bo@example.com");
    const outsider = await people.token({ email: "eve@elsewhere.org" });
    expect((await api("/api/v1/sites", { token: outsider })).status).toBe(403);
    const wrongAud = await people.token({ email: "ana@example.com" }, { audience: "another-app" });
    expect((await api("/api/v1/sites", { token: wrongAud })).status).toBe(401);
  });
});

describe("every mutating route refuses callers without the right to it, and changes nothing", () => {
  it("matrix", async () => {
    const keyPair = hub.app.identity.keystore.current();
    const sign = (claims: Record<string, unknown>, o: { aud?: string; iss?: string; exp?: number } = {}) =>
      new SignJWT({ client_id: "fleet-admin", scope: "fleet.admin fleet.operate fleet.read", ...claims })
        .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: keyPair.kid })
        .setIssuer(o.iss ?? url)
        .setAudience(o.aud ?? "fleet-manager")
        .setSubject("fleet-admin")
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        .setExpirationTime(o.exp ?? Math.floor(Date.now() / 1000) + 600)
        .sign(keyPair.privateKey);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const claims = {
      iss: url,
      aud: "fleet-manager",
      sub: "fleet-admin",
      client_id: "fleet-admin",
      scope: "fleet.admin",
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 600,
      jti: "x",
    };
    const jwks = (await (await fetch(`${url}/oauth/jwks`)).json()) as { keys: Record<string, string>[] };
    const hsKey = JSON.stringify(jwks.keys[jwks.keys.length - 1]);
    const hsInput = `${b64({ alg: "HS256", typ: "at+jwt", kid: keyPair.kid })}.${b64(claims)}`;

    const other = await createSatellite("sys4-other", [inv.sites.stavanger]);
    const mine = await createSatellite("sys5-mine", [inv.sites.keflavik]);
    const otherAgent = await clientToken(url, "ironic-agent-sys4-other", other.openstack!);
    const wrongSourceAgent = await clientToken(url, "slurm-agent-sys5-mine", mine.slurm!);
    const revokedToken = await clientToken(url, "workflow-agent-sys5-mine", mine.workflow!);
    await api("/api/v1/satellites/sys5-mine/agents/workflow/revoke", { method: "POST", token: admin });
    const rotated = (await (
      await api("/api/v1/satellites/sys5-mine/agents/netbox/rotate-secret", { method: "POST", token: admin })
    ).json()) as { clientSecret: string };
    issuedSecrets.push(rotated.clientSecret);
    await new Promise((r) => setTimeout(r, OVERLAP_MS + 200));
    await expect(clientToken(url, "netbox-agent-sys5-mine", mine.netbox!)).rejects.toThrow(/invalid_client/); // rotated-out secret after the overlap

    const callers: [string, string | undefined, number][] = [
      ["no token", undefined, 401],
      ["expired token", await sign({}, { exp: Math.floor(Date.now() / 1000) - 60 }), 401],
      ["wrong audience", await sign({}, { aud: "some-other-api" }), 401],
      ["wrong issuer", await sign({}, { iss: "https://evil.example" }), 401],
      ["alg none", `${b64({ alg: "none", typ: "at+jwt" })}.${b64(claims)}.`, 401],
      [
        "HS256 signed with the public key",
        `${hsInput}.${createHmac("sha256", hsKey).update(hsInput).digest("base64url")}`,
        401,
      ],
      ["read-only person", await people.token({ email: "ro@example.com" }), 403],
      ["agent of another satellite", otherAgent, 403],
      ["agent of the right satellite, wrong source", wrongSourceAgent, 403],
      ["revoked client", revokedToken, 401],
    ];

    const site = (await (await api("/api/v1/sites?slug=keflavik", { token: admin })).json()) as {
      items: { id: string }[];
    };
    const device = (await (await api("/api/v1/devices?site=keflavik&limit=1", { token: admin })).json()) as {
      items: { id: string }[];
    };
    const params: Record<string, string> = {
      id: site.items[0]!.id,
      site_id: inv.sites.keflavik,
      name: "sys5-mine",
      agent: "openstack",
      source: "ironic-overcloud",
    };
    // A body the route would accept, so what refuses the caller is authorization, not validation.
    const bodies: Record<string, unknown> = {
      "/api/v1/sites/:site_id/reflections/:source": { observedAt: new Date().toISOString(), complete: true, items: [] },
      "/api/v1/jobs/:id/report": { status: "SUBMITTED" },
    };
    const mutating = hub.app.routeTable.filter(
      (r) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method) && r.url.startsWith("/api/"),
    );
    expect(mutating.length).toBeGreaterThanOrEqual(12);

    const fingerprint = async () => {
      const tables = await hub.db.prisma.$queryRaw<
        { t: string }[]
      >`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`;
      const out: string[] = [];
      for (const { t } of tables)
        out.push(
          ...(
            await hub.db.prisma.$queryRawUnsafe<{ h: string }[]>(
              `SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${t}" x`,
            )
          ).map((r) => `${t}:${r.h}`),
        );
      return out;
    };
    const before = await fingerprint();
    const failures: string[] = [];
    for (const route of mutating) {
      const path = route.url.replace(/:(\w+)/g, (_m, p: string) =>
        p === "id" && route.url.startsWith("/api/v1/devices") ? device.items[0]!.id : (params[p] ?? "x"),
      );
      for (const [who, token, status] of callers) {
        // The agent routes check the satellite and agent in the handler: another satellite's agent gets 403 there.
        const expected = route.scope === "agent" && who === "read-only person" ? 403 : status;
        const res = await api(path, {
          method: route.method,
          token,
          body: route.method === "DELETE" ? undefined : JSON.stringify(bodies[route.url] ?? {}),
        });
        if (res.status !== expected)
          failures.push(`${route.method} ${path} as ${who}: ${res.status}, expected ${expected}`);
        else expect(res.headers.get("content-type")).toMatch(/problem\+json/);
      }
    }
    expect(failures).toEqual([]);
    expect(await fingerprint()).toEqual(before);
  });
});

describe("secrets at rest and in logs", () => {
  it("no client secret appears in clear in any table or log line", async () => {
    expect(issuedSecrets.length).toBeGreaterThan(20);
    const tables = await hub.db.prisma.$queryRaw<
      { t: string }[]
    >`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`;
    let dump = "";
    for (const { t } of tables)
      dump +=
        (
          await hub.db.prisma.$queryRawUnsafe<{ d: string | null }[]>(
            `SELECT string_agg(x::text, '\n') AS d FROM "${t}" x`,
          )
        )[0]!.d ?? "";
    expect(dump).toContain("scrypt$"); // the hashes are there
    const logs = JSON.stringify(hub.logs);
    for (const secret of issuedSecrets) {
      expect(dump.includes(secret), "secret found in the database").toBe(false);
      expect(logs.includes(secret), "secret found in the logs").toBe(false);
    }
    expect(hub.logs.length).toBeGreaterThan(50);
  });
});
