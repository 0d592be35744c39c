/**
 * The audit log names what it refers to: each entry's principal (the client, a satellite's agent)
 * and resource (a device's name, a site's slug, a satellite's name) beside the ids, as they are
 * now; a resource deleted since keeps its id and has no name. Over HTTP with real tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry, AuditList } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub();
});
afterAll(() => hub.close());

const call = (path: string, init: { method?: string; body?: unknown; token?: string; etag?: string } = {}) =>
  fetch(`${hub.url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...bearer(init.token ?? hub.adminToken),
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.etag ? { "if-match": init.etag } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
const audit = async (query: string): Promise<AuditEntry[]> => {
  const r = await call(`/api/v1/audit?${query}`);
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as AuditList).items;
};

describe("audit entries name things", () => {
  it("a device's cordon names the device and the client, a site's creation its slug, a satellite its name", async () => {
    const siteId = await seedNetboxOnlyDevices(hub.db.prisma, { slug: "named" }, [
      { name: "named-gpu-0", role: "gpu-node" },
    ]);
    const device = await hub.db.prisma.device.findFirstOrThrow({ where: { siteId } });
    const cordon = await call(`/api/v1/devices/${device.id}`, {
      method: "PATCH",
      body: { cordoned: true, cordonReason: "named test" },
    });
    expect(cordon.status, await cordon.clone().text()).toBe(200);
    expect(await audit(`resourceType=device&resourceId=${device.id}`)).toEqual([
      expect.objectContaining({
        principal: "fleet-admin",
        principalKind: "client",
        principalName: "fleet-admin",
        resourceType: "device",
        resourceId: device.id,
        resourceName: "named-gpu-0",
      }),
    ]);

    const sat = await call("/api/v1/satellites", {
      method: "POST",
      body: { name: "sat-named", siteIds: [siteId], environment: "prod" },
    });
    expect(sat.status).toBe(201);
    const satId = ((await sat.json()) as { id: string }).id;
    expect((await audit(`resourceType=satellite&resourceId=${satId}`))[0]).toMatchObject({
      resourceName: "sat-named",
    });
  });

  it("an agent's change names the agent as such; a deleted site keeps its id and has no name", async () => {
    const siteId = await seedNetboxOnlyDevices(hub.db.prisma, { slug: "by-agent" }, [
      { name: "by-agent-gpu-0", role: "gpu-node" },
    ]);
    const sat = await call("/api/v1/satellites", {
      method: "POST",
      body: { name: "sat-by-agent", siteIds: [siteId], environment: "prod" },
    });
    const secrets = ((await sat.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] })
      .secrets;
    const slurm = secrets.find((s) => s.agent === "slurm")!;
    const token = await clientToken(hub.url, slurm.clientId, slurm.clientSecret);
    const push = await call(`/api/v1/sites/${siteId}/reflections/slurm`, {
      method: "PUT",
      token,
      body: {
        observedAt: new Date().toISOString(),
        complete: true,
        items: [{ name: "by-agent-gpu-0", state: "IDLE", flags: [], reason: null, partitions: ["gpu"] }],
      },
    });
    expect(push.status, await push.clone().text()).toBe(200);
    const byAgent = await audit(`principal=${slurm.clientId}`);
    expect(byAgent.length).toBeGreaterThan(0);
    for (const e of byAgent) expect(e).toMatchObject({ principalKind: "agent", principalName: slurm.clientId });
    expect(byAgent.find((e) => e.resourceType === "device")).toMatchObject({ resourceName: "by-agent-gpu-0" });

    const created = await call("/api/v1/sites", { method: "POST", body: { slug: "gone-soon", name: "Gone soon" } });
    expect(created.status).toBe(201);
    const gone = (await created.json()) as { id: string };
    expect((await audit(`resourceType=site&resourceId=${gone.id}`))[0]).toMatchObject({ resourceName: "gone-soon" });
    const etag = created.headers.get("etag")!;
    expect((await call(`/api/v1/sites/${gone.id}`, { method: "DELETE", etag })).status).toBe(204);
    const after = await audit(`resourceType=site&resourceId=${gone.id}`);
    expect(after.map((e) => [e.action, e.resourceId, e.resourceName])).toEqual([
      ["site.create", gone.id, null],
      ["site.delete", gone.id, null],
    ]);
  });
});
