/** Machine OAuth2 clients: created with chosen fleet scopes, secret shown once, rotated with an overlap, revoked at once. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

interface Created {
  clientId: string;
  kind: string;
  scopes: string[];
  description: string | null;
  clientSecret: string;
}

const post = (path: string, body?: unknown, token = admin) =>
  api(path, { method: "POST", token, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

async function createClient(clientId: string, scopes: string[], description?: string, token = admin) {
  const res = await post("/api/v1/clients/", { clientId, scopes, ...(description ? { description } : {}) }, token);
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as Created;
  t.issuedSecrets.push(body.clientSecret);
  return body;
}

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

async function rotate(clientId: string): Promise<string> {
  const res = await post(`/api/v1/clients/${clientId}/rotate-secret/`);
  expect(res.status, await res.clone().text()).toBe(200);
  const { clientSecret } = (await res.json()) as { clientSecret: string };
  t.issuedSecrets.push(clientSecret);
  return clientSecret;
}

describe("machine clients", () => {
  it("a fleet.read client reads with its own token and is refused writes", async () => {
    const created = await createClient("matrix-prod", ["fleet.read"], "Matrix connector, production");
    expect(created).toMatchObject({ clientId: "matrix-prod", kind: "machine", scopes: ["fleet.read"] });
    const token = await clientToken(url, "matrix-prod", created.clientSecret);
    expect((await api("/api/v1/sites", { token })).status).toBe(200);
    const write = await post("/api/v1/sites", { slug: "connector-made", name: "x" }, token);
    expect(write.status).toBe(403);
    // It cannot widen itself at the token endpoint either.
    await expect(clientToken(url, "matrix-prod", created.clientSecret, "fleet.admin")).rejects.toThrow(/invalid_scope/);

    const read = await api("/api/v1/clients/matrix-prod", { token: admin });
    expect(read.status).toBe(200);
    const view = (await read.json()) as Record<string, unknown>;
    expect(view).toMatchObject({ description: "Matrix connector, production", revokedAt: null });
    expect(view.lastTokenAt).not.toBeNull();
    expect(JSON.stringify(view)).not.toContain(created.clientSecret);
    expect(JSON.stringify(view)).not.toContain("scrypt");
  });

  it("lists machine and bootstrap clients, never agents' or any hash, page by page", async () => {
    await t.createSatellite("sys1-list", [inv.sites.keflavik]);
    await createClient("list-a", ["fleet.operate"]);
    await createClient("list-b", ["fleet.read", "fleet.operate"]);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(`/api/v1/clients?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: admin });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { clientId: string; kind: string }[]; nextCursor: string | null };
      expect(JSON.stringify(page)).not.toContain("scrypt");
      ids.push(...page.items.map((i) => i.clientId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(["fleet-admin", "list-a", "list-b"]));
    expect(ids.some((id) => id.endsWith("-sys1-list"))).toBe(false);
    const bad = await api("/api/v1/clients?cursor=bm90LWEtY3Vyc29y", { token: admin });
    expect(bad.status).toBe(400);
  });

  it("refuses bad input with a 400 naming the field, and taken ids with a 409", async () => {
    const cases: [unknown, string][] = [
      [{ clientId: "Matrix_Prod", scopes: ["fleet.read"] }, "clientId"],
      [{ clientId: "x".repeat(64), scopes: ["fleet.read"] }, "clientId"],
      [{ clientId: "agent-scoped", scopes: ["agent:openstack"] }, "scopes"],
      [{ clientId: "no-scopes", scopes: [] }, "scopes"],
      [{ clientId: "twice", scopes: ["fleet.read", "fleet.read"] }, "scopes"],
      [{ clientId: "extra", scopes: ["fleet.read"], secretHash: "scrypt$1" }, "secretHash"],
    ];
    for (const [body, field] of cases) {
      const res = await post("/api/v1/clients", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(JSON.stringify(await res.json())).toContain(field);
    }
    await createClient("dup-client", ["fleet.read"]);
    const again = await post("/api/v1/clients", { clientId: "dup-client", scopes: ["fleet.admin"] });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("client_id_taken");
    await t.createSatellite("sys2-taken", [inv.sites.keflavik]);
    for (const clientId of ["ironic-agent-sys2-taken", "fleet-admin"]) {
      const res = await post("/api/v1/clients", { clientId, scopes: ["fleet.read"] });
      expect(res.status, clientId).toBe(409);
    }
    // The satellite's agent still authenticates with its own scopes: nothing was overwritten.
    const view = (await (await api("/api/v1/satellites/sys2-taken", { token: admin })).json()) as {
      clients: { clientId: string; scopes: string[] }[];
    };
    expect(view.clients.find((c) => c.clientId === "ironic-agent-sys2-taken")!.scopes).toContain("agent:openstack");
  });

  it("rotation: the new secret works at once, the old one until the overlap ends", async () => {
    const { clientSecret: old } = await createClient("rot-client", ["fleet.read"]);
    const asked = Date.now();
    const fresh = await rotate("rot-client");
    const answered = Date.now();
    await clientToken(url, "rot-client", fresh);
    await clientToken(url, "rot-client", old);
    const view = (await (await api("/api/v1/clients/rot-client", { token: admin })).json()) as {
      rotationOverlapUntil: string | null;
    };
    // The overlap is OVERLAP_MS from the rotation, and the secrets are honoured on both sides of its end.
    const until = Date.parse(view.rotationOverlapUntil!);
    expect(until).toBeGreaterThanOrEqual(asked + OVERLAP_MS);
    expect(until).toBeLessThanOrEqual(answered + OVERLAP_MS);
    await sleepUntil(answered + OVERLAP_MS - 1500);
    await clientToken(url, "rot-client", old); // not before: still inside the overlap
    await sleepUntil(until);
    await eventually(() => expect(clientToken(url, "rot-client", old)).rejects.toThrow(/invalid_client/), 1500, 100);
    await clientToken(url, "rot-client", fresh);
  });

  it("revocation: tokens already issued fail at once, no new ones, no rotation back", async () => {
    const { clientSecret } = await createClient("rev-client", ["fleet.operate"]);
    const token = await clientToken(url, "rev-client", clientSecret);
    expect((await api("/api/v1/sites", { token })).status).toBe(200);
    const res = await post("/api/v1/clients/rev-client/revoke");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { revokedAt: string | null }).revokedAt).not.toBeNull();
    const refused = await api("/api/v1/sites", { token });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("revoked");
    await expect(clientToken(url, "rev-client", clientSecret)).rejects.toThrow(/401/);
    const rotated = await post("/api/v1/clients/rev-client/rotate-secret");
    expect(rotated.status).toBe(409);
    expect(((await rotated.json()) as { code: string }).code).toBe("client_revoked");
    // Revoking again is harmless and says the same.
    expect((await post("/api/v1/clients/rev-client/revoke")).status).toBe(200);
    const audit = await t.hub.db.prisma.auditLog.findMany({
      where: { resourceId: "rev-client" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual(["oauth_client.create", "oauth_client.revoke"]);
    expect(audit.every((a) => a.principal === "fleet-admin")).toBe(true);
  });

  it("agents' clients and the bootstrap admin client are not managed here, and say where they are", async () => {
    const secrets = await t.createSatellite("sys3-agents", [inv.sites.stavanger]);
    for (const action of ["rotate-secret", "revoke"]) {
      const agent = await post(`/api/v1/clients/slurm-agent-sys3-agents/${action}`);
      expect(agent.status).toBe(409);
      const body = (await agent.json()) as { code: string; detail: string };
      expect(body.code).toBe("agent_client");
      expect(body.detail).toContain("/api/v1/satellites");
      const boot = await post(`/api/v1/clients/fleet-admin/${action}`);
      expect(boot.status).toBe(409);
      expect(((await boot.json()) as { code: string }).code).toBe("bootstrap_client");
    }
    expect((await api("/api/v1/clients/slurm-agent-sys3-agents", { token: admin })).status).toBe(404);
    expect((await api("/api/v1/clients/no-such-client", { token: admin })).status).toBe(404);
    expect((await post("/api/v1/clients/no-such-client/revoke")).status).toBe(404);
    // Both still work.
    await clientToken(url, "slurm-agent-sys3-agents", secrets.slurm!);
    expect((await api("/api/v1/clients/fleet-admin", { token: admin })).status).toBe(200);
  });

  it("only fleet admins see or change clients", async () => {
    const { clientSecret } = await createClient("ops-client", ["fleet.operate"]);
    const operator = await clientToken(url, "ops-client", clientSecret);
    const person = await t.people.token({ email: "ro@example.com" });
    const routes: [string, string][] = [
      ["GET", "/api/v1/clients"],
      ["GET", "/api/v1/clients/ops-client"],
      ["POST", "/api/v1/clients"],
      ["POST", "/api/v1/clients/ops-client/rotate-secret"],
      ["POST", "/api/v1/clients/ops-client/revoke"],
    ];
    for (const token of [operator, person])
      for (const [method, path] of routes) {
        const res = await api(path, {
          method,
          token,
          ...(method === "POST" ? { body: JSON.stringify({ clientId: "sneaky", scopes: ["fleet.admin"] }) } : {}),
        });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    expect((await api("/api/v1/clients/sneaky", { token: admin })).status).toBe(404);
    await clientToken(url, "ops-client", clientSecret);
  });

  it("no client secret appears in clear in any table or log line", async () => {
    const { clientSecret } = await createClient("rest-client", ["fleet.read"]);
    await clientToken(url, "rest-client", clientSecret);
    await rotate("rest-client");
    // Created with an Idempotency-Key: the response a repeat is answered with is recorded (sealed) too.
    const keyed = () =>
      api("/api/v1/clients", {
        method: "POST",
        token: admin,
        headers: { "idempotency-key": "rest-keyed-once" },
        body: JSON.stringify({ clientId: "rest-keyed", scopes: ["fleet.read"] }),
      });
    const first = await keyed();
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as Created;
    t.issuedSecrets.push(firstBody.clientSecret);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const replay = await keyed();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(firstBody);
    // The replay carries the secret again: no cache may keep it either (issue 33, finding 9).
    expect(replay.headers.get("cache-control")).toBe("no-store");
    const tables = await t.hub.db.prisma.$queryRaw<
      { table: string }[]
    >`SELECT tablename AS "table" FROM pg_tables WHERE schemaname = 'public'`;
    let dump = "";
    for (const { table } of tables)
      dump +=
        (
          await t.hub.db.prisma.$queryRawUnsafe<{ d: string | null }[]>(
            `SELECT string_agg(x::text, '\n') AS d FROM "${table}" x`,
          )
        )[0]!.d ?? "";
    expect(dump).toContain("rest-client");
    const logs = JSON.stringify(t.hub.logs);
    for (const secret of t.issuedSecrets) {
      expect(dump.includes(secret), "secret found in the database").toBe(false);
      expect(logs.includes(secret), "secret found in the logs").toBe(false);
    }
  });

  // Last: it revokes the bootstrap admin client underneath the API.
  it("refuses to revoke the last client that may administer the fleet", async () => {
    const { clientSecret } = await createClient("ops-admin", ["fleet.admin"]);
    await t.hub.db.prisma.oAuthClient.update({ where: { clientId: "fleet-admin" }, data: { revokedAt: new Date() } });
    const opsAdmin = await clientToken(url, "ops-admin", clientSecret);
    const refused = await post("/api/v1/clients/ops-admin/revoke", undefined, opsAdmin);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { code: string }).code).toBe("last_admin_client");
    expect((await api("/api/v1/clients", { token: opsAdmin })).status).toBe(200);
    await createClient("ops-admin-2", ["fleet.admin"], undefined, opsAdmin);
    expect((await post("/api/v1/clients/ops-admin/revoke", undefined, opsAdmin)).status).toBe(200);
    expect((await api("/api/v1/clients", { token: opsAdmin })).status).toBe(401);
  });
});
