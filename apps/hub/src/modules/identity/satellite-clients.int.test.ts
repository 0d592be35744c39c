/** Expected satellites: one OAuth2 client per agent, secrets shown once and never kept in clear, rotation and revocation. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientToken } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import type { Inventory } from "../../testing/inventory.ts";
import { OVERLAP_MS, startIdentityTestHub, type IdentityTestHub } from "../../testing/identity-test-hub.ts";

let t: IdentityTestHub;
let url: string;
let admin: string;
let inv: Inventory;
let issuedSecrets: string[];
beforeAll(async () => {
  t = await startIdentityTestHub();
  ({ url, admin, inv, issuedSecrets } = t);
});
afterAll(() => t.close());
const api: IdentityTestHub["api"] = (path, init) => t.api(path, init);
const createSatellite: IdentityTestHub["createSatellite"] = (name, siteIds) => t.createSatellite(name, siteIds);
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
/** The OAuth2 client id of each agent of satellite `name`. */
const clientIds: Record<string, (name: string) => string> = {
  openstack: (n) => `ironic-agent-${n}`,
  slurm: (n) => `slurm-agent-${n}`,
  workflow: (n) => `workflow-agent-${n}`,
  netbox: (n) => `netbox-agent-${n}`,
  "health-status": (n) => `health-status-agent-${n}`,
  "temporal-worker": (n) => `temporal-worker-${n}`,
};

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
    // Shown once: each of the six secrets the creation answered is its agent's real secret, and
    // none of them is shown again, not in the satellite, the list of satellites, or the audit.
    for (const [agentKind, secret] of Object.entries(secrets))
      await clientToken(url, clientIds[agentKind]!("sys1-ice2"), secret);
    const list = await (await api("/api/v1/satellites/?limit=100", { token: admin })).text();
    expect(list).toContain("sys1-ice2");
    const satId = ((await (await api("/api/v1/satellites/sys1-ice2/", { token: admin })).json()) as { id: string }).id;
    const audit = await (
      await api(`/api/v1/audit/?resourceType=satellite&resourceId=${satId}`, { token: admin })
    ).text();
    expect(audit).toContain("satellite.create");
    for (const [agentKind, secret] of Object.entries(secrets)) {
      expect(JSON.stringify(view), `${agentKind} in the satellite`).not.toContain(secret);
      expect(list, `${agentKind} in the list`).not.toContain(secret);
      expect(audit, `${agentKind} in the audit`).not.toContain(secret);
    }
    // A satellite the hub does not expect cannot authenticate.
    await expect(clientToken(url, "ironic-agent-sys9-nowhere", secrets.openstack!)).rejects.toThrow(/401/);
  });

  it("rotation: the new secret works, the old one until the overlap ends", async () => {
    const secrets = await createSatellite("sys2-rot", [inv.sites.stavanger]);
    const asked = Date.now();
    const clientSecret = await t.rotateSecret("sys2-rot", "slurm");
    const answered = Date.now();
    await clientToken(url, "slurm-agent-sys2-rot", clientSecret);
    await clientToken(url, "slurm-agent-sys2-rot", secrets.slurm!); // still inside the overlap
    const view = (await (await api("/api/v1/satellites/sys2-rot/", { token: admin })).json()) as {
      clients: { agent: string; rotationOverlapUntil: string | null }[];
    };
    // The overlap is a time window of OVERLAP_MS from the rotation, checked on both sides of its end:
    // the old secret works until then, not only just after the rotation, and stops once it has passed.
    const until = Date.parse(view.clients.find((c) => c.agent === "slurm")!.rotationOverlapUntil!);
    expect(until).toBeGreaterThanOrEqual(asked + OVERLAP_MS);
    expect(until).toBeLessThanOrEqual(answered + OVERLAP_MS);
    expect(view.clients.filter((c) => c.rotationOverlapUntil !== null).map((c) => c.agent)).toEqual(["slurm"]);
    await sleepUntil(answered + OVERLAP_MS - 1500);
    await clientToken(url, "slurm-agent-sys2-rot", secrets.slurm!);
    await sleepUntil(until);
    await eventually(
      () => expect(clientToken(url, "slurm-agent-sys2-rot", secrets.slurm!)).rejects.toThrow(/invalid_client/),
      1500,
      100,
    );
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

  it("a satellite deleted and created again under its name does not bring its old tokens back", async () => {
    const before = await createSatellite("sys4-again", [inv.sites.stavanger]);
    const old = await clientToken(url, "ironic-agent-sys4-again", before.openstack!);
    expect((await api("/api/v1/satellites/sys4-again", { method: "DELETE", token: admin })).status).toBe(204);
    await createSatellite("sys4-again", [inv.sites.keflavik]);
    const refused = await api("/api/v1/sites", { token: old });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("no longer exists");
    // Nor does it write the new satellite's site with the old token.
    const push = await api(`/api/v1/sites/${inv.sites.keflavik}/reflections/ironic-overcloud`, {
      method: "PUT",
      token: old,
      body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items: [] }),
    });
    expect(push.status).toBe(401);
  });
});

describe("environments", () => {
  it("accepts the rollout guide's dev, stg and prod, and refuses any other name with a 400 naming the field", async () => {
    const create = (name: string, environment: string) =>
      api("/api/v1/satellites/", {
        method: "POST",
        token: admin,
        body: JSON.stringify({ name, siteIds: [inv.sites.keflavik], environment }),
      });
    for (const environment of ["dev", "stg", "prod"]) {
      const res = await create(`sys4-env-${environment}`, environment);
      expect(res.status, await res.clone().text()).toBe(201);
      const body = (await res.json()) as { environment: string; secrets: { clientSecret: string }[] };
      issuedSecrets.push(...body.secrets.map((s) => s.clientSecret));
      expect(body.environment).toBe(environment);
      const read = await api(`/api/v1/satellites/sys4-env-${environment}`, { token: admin });
      expect(((await read.json()) as { environment: string }).environment).toBe(environment);
    }
    const refused = await create("sys4-env-staging", "staging");
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(JSON.stringify(await refused.json())).toContain("environment");
    expect((await api("/api/v1/satellites/sys4-env-staging", { token: admin })).status).toBe(404);
  });
});

describe("secrets at rest and in logs", () => {
  it("no client secret appears in clear in any table or log line", async () => {
    // Secrets issued, rotated, used for tokens and refused: none may be stored or logged.
    for (const name of ["sys6-at-rest", "sys7-at-rest", "sys8-at-rest"]) {
      const secrets = await createSatellite(name, [inv.sites.keflavik]);
      for (const [agent, secret] of Object.entries(secrets)) await clientToken(url, clientIds[agent]!(name), secret);
    }
    // Created with an Idempotency-Key: the response a repeat is answered with is recorded too.
    const keyed = () =>
      api("/api/v1/satellites/", {
        method: "POST",
        token: admin,
        headers: { "idempotency-key": "sys9-at-rest-once" },
        body: JSON.stringify({ name: "sys9-at-rest", siteIds: [inv.sites.keflavik], environment: "prod" }),
      });
    const first = await keyed();
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as { secrets: { clientSecret: string }[] };
    issuedSecrets.push(...firstBody.secrets.map((s) => s.clientSecret));
    const replay = await keyed();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(firstBody);
    await t.rotateSecret("sys6-at-rest", "openstack");
    await expect(clientToken(url, "ironic-agent-sys6-at-rest", "wrong-secret-value")).rejects.toThrow(/401/);
    expect(issuedSecrets.length).toBeGreaterThan(24);
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
    expect(dump).toContain("scrypt$"); // the hashes are there
    const logs = JSON.stringify(t.hub.logs);
    for (const secret of issuedSecrets) {
      expect(dump.includes(secret), "secret found in the database").toBe(false);
      expect(logs.includes(secret), "secret found in the logs").toBe(false);
    }
    expect(t.hub.logs.length).toBeGreaterThan(50);
  });
});
