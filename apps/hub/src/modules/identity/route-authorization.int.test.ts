/** Authorization of every mutating route: callers without the right to it are refused and change nothing. */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT } from "jose";
import { clientToken } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import type { Inventory } from "../../testing/inventory.ts";
import { OVERLAP_MS, startIdentityTestHub, type IdentityTestHub } from "../../testing/identity-test-hub.ts";

let t: IdentityTestHub;
let url: string;
let admin: string;
let inv: Inventory;
beforeAll(async () => {
  t = await startIdentityTestHub();
  ({ url, admin, inv } = t);
});
afterAll(() => t.close());
const api: IdentityTestHub["api"] = (path, init) => t.api(path, init);
const createSatellite: IdentityTestHub["createSatellite"] = (name, siteIds) => t.createSatellite(name, siteIds);

describe("every mutating route refuses callers without the right to it, and changes nothing", () => {
  it("matrix", async () => {
    const keyPair = t.hub.app.identity.keystore.current();
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
    await t.rotateSecret("sys5-mine", "netbox");
    // A rotated-out secret, once the overlap has passed.
    await eventually(
      () => expect(clientToken(url, "netbox-agent-sys5-mine", mine.netbox!)).rejects.toThrow(/invalid_client/),
      OVERLAP_MS * 4,
      300,
    );

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
      ["read-only person", await t.people.token({ email: "ro@example.com" }), 403],
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
    const mutating = t.hub.app.routeTable.filter(
      (r) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method) && r.url.startsWith("/api/"),
    );
    expect(mutating.length).toBeGreaterThanOrEqual(12);

    const fingerprint = async () => {
      const tables = await t.hub.db.prisma.$queryRaw<
        { table: string }[]
      >`SELECT tablename AS "table" FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`;
      const out: string[] = [];
      for (const { table } of tables)
        out.push(
          ...(
            await t.hub.db.prisma.$queryRawUnsafe<{ h: string }[]>(
              `SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${table}" x`,
            )
          ).map((r) => `${table}:${r.h}`),
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
