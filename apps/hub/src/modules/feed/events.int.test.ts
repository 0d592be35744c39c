/**
 * Every event the feed serves parses with the domain's schemas, exactly: connectors are
 * written against them. Checked on what the feed serves and on what writers stored (a writer
 * emitting another shape would show as a field the schema strips or misses), after the demo
 * seed, and after API writes and reflection pushes that emit every event type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INVENTORY_EVENT_DATA,
  INVENTORY_EVENT_TYPES,
  InventoryEventSchema,
  type FeedPage,
  type InventoryEvent,
  type InventoryEventType,
  type NetboxItem,
} from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedInventory(hub.db.prisma, 4);
});
afterAll(() => hub.close());

const call = async <T>(method: string, path: string, body?: unknown, token = hub.adminToken) => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  expect(res.status, `${method} ${path}: ${res.status === 204 ? "" : await res.clone().text()}`).toBeLessThan(300);
  return (res.status === 204 ? undefined : await res.json()) as T;
};

/** The whole feed, as a reader pages through it. */
async function feed(): Promise<InventoryEvent[]> {
  const events: InventoryEvent[] = [];
  for (let after = "0"; ;) {
    const page = await call<FeedPage>("GET", `/api/v1/feeds/inventory?after=${after}&limit=1000`);
    events.push(...page.items);
    if (!page.items.length) return events;
    after = page.nextAfter;
  }
}

/** Each event parses with its schema to itself, served and as its writer stored it; returns the types seen. */
async function expectExactShapes(served: InventoryEvent[]): Promise<Set<InventoryEventType>> {
  for (const event of served) expect(InventoryEventSchema.parse(event), event.type).toEqual(event);
  const stored = await hub.db.prisma.inventoryEvent.findMany({
    where: { position: { in: served.map((e) => BigInt(e.position)) } },
  });
  expect(stored).toHaveLength(served.length);
  for (const row of stored) {
    const schema = INVENTORY_EVENT_DATA[row.type as InventoryEventType];
    expect(schema, row.type).toBeDefined();
    expect(schema.parse(row.data), row.type).toEqual(row.data);
    expect(row.resourceType).toBe(row.type.split(".")[0]);
  }
  return new Set(served.map((e) => e.type));
}

describe("feed event shapes", () => {
  it("the demo seed emits site, role and device events of exactly the shapes real writes emit", async () => {
    const seeded = (await feed()).filter((e) => e.requestId === null);
    expect(await expectExactShapes(seeded)).toEqual(new Set(["site.created", "device_role.created", "device.created"]));
    expect(seeded.filter((e) => e.type === "device.created")).toHaveLength(8);
    const site = seeded.find((e) => e.type === "site.created" && e.data.slug === "keflavik");
    expect(site?.data).toMatchObject({ slug: "keflavik", region: "eu-north-ice", version: 1 });
  });

  it("API writes and reflection pushes emit every event type, each of exactly its schema's shape", async () => {
    // Sites: created, updated, deleted.
    const site = await call<{ id: string }>("POST", "/api/v1/sites", { slug: "evt-oslo", name: "Oslo", region: "no" });
    await call("PATCH", `/api/v1/sites/${site.id}`, { name: "Oslo DC" });
    const gone = await call<{ id: string }>("POST", "/api/v1/sites", { slug: "evt-gone", name: "Gone" });
    await call("DELETE", `/api/v1/sites/${gone.id}`);
    await call("POST", `/api/v1/sites/${site.id}/topology-sync`, { reason: "audit only: no feed event" });

    const satellite = await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "POST",
      "/api/v1/satellites",
      { name: "evt-osl1", siteIds: [site.id], environment: "dev" },
    );
    const token = (agent: string) => {
      const s = satellite.secrets.find((x) => x.agent === agent)!;
      return clientToken(hub.url, s.clientId, s.clientSecret);
    };
    const [netbox, openstack, workflow] = await Promise.all([token("netbox"), token("openstack"), token("workflow")]);

    // NetBox: a new role, type and two devices, then the role and type renamed (role, type and devices updated).
    const item = (n: number, roleName: string): NetboxItem => ({
      netboxId: 9000 + n,
      name: `evt-gpu-${n}`,
      serial: `SN-EVT-${n}`,
      assetTag: null,
      status: "staged",
      role: { slug: "evt-gpu", name: roleName, netboxId: 77, deviceClass: "GPU_COMPUTE" },
      // Renamed with the role: device_type.created, then device_type.updated.
      deviceType: {
        slug: "evt-tray",
        manufacturer: "NVIDIA",
        model: `${roleName} tray`,
        cpuArchitecture: "aarch64",
        netboxId: 78,
      },
      location: null,
      rack: { name: "E01", netboxId: 70 },
      rackPosition: n,
      platformClass: null,
      tags: [],
      bmcAddress: null,
      interfaces: [],
    });
    let observedAt = Date.now() - 60_000;
    const push = (source: string, items: unknown[], by: string) =>
      call(
        "PUT",
        `/api/v1/sites/${site.id}/reflections/${source}`,
        {
          observedAt: new Date((observedAt += 1000)).toISOString(),
          complete: true,
          items,
        },
        by,
      );
    await push("netbox", [item(1, "GPU"), item(2, "GPU")], netbox);
    await push("netbox", [item(1, "GPU node"), item(2, "GPU node")], netbox);
    const devices = (await call<{ items: { id: string; name: string }[] }>("GET", "/api/v1/devices?site=evt-oslo"))
      .items;
    const [first, second] = [
      devices.find((d) => d.name === "evt-gpu-1")!,
      devices.find((d) => d.name === "evt-gpu-2")!,
    ];
    const node = "0190a5b4-1234-7abc-8def-00000000e001";
    await push(
      "ironic-overcloud",
      [
        {
          uuid: node,
          name: "evt-gpu-1",
          provisionState: "enroll",
          targetProvisionState: null,
          powerState: null,
          maintenance: false,
          maintenanceReason: null,
          lastError: null,
          fault: null,
        },
      ],
      openstack,
    );
    await call("PATCH", `/api/v1/devices/${second.id}`, { cordoned: true, cordonReason: "event shapes" });

    // Jobs: created, then updated by a report (with a device observation) and a cancel.
    const job = await call<{ id: string }>("POST", "/api/v1/jobs", { kind: "ENROL", deviceIds: [first.id] });
    await call(
      "POST",
      `/api/v1/jobs/${job.id}/report`,
      { status: "SUBMITTED", workflowId: job.id, devices: [{ deviceId: first.id, netbox: { status: "active" } }] },
      workflow,
    );
    await call("POST", `/api/v1/jobs/${job.id}/cancel`);

    // SLURM bootstrap configs: created, replaced, deleted (user-data only as a digest).
    const role = (
      await call<{ items: { id: string; slug: string }[] }>("GET", "/api/v1/device-roles?limit=1000")
    ).items.find((r) => r.slug === "evt-gpu")!;
    const base = `/api/v1/sites/${site.id}/slurm-bootstrap-configs`;
    const config = await call<{ id: string }>("POST", base, {
      deviceRoleId: role.id,
      image: "ubuntu-24.04",
      flavor: "gpu.large",
      userData: btoa("#cloud-config\n"),
    });
    await call("PUT", `${base}/${config.id}`, { image: "ubuntu-24.04-v2", flavor: "gpu.large", gres: "gpu:8" });
    await call("DELETE", `${base}/${config.id}`);

    // The NetBox settings: one cluster more for the site.
    await call("PUT", "/api/v1/netbox/settings", {
      deviceFilters: [{ site: "evt-oslo", clusters: ["evt-compute"] }],
      deviceRoleClassMapping: { "evt-gpu": "GPU_COMPUTE" },
    });

    const written = (await feed()).filter((e) => e.requestId !== null);
    expect([...(await expectExactShapes(written))].sort()).toEqual([...INVENTORY_EVENT_TYPES].sort());
    const created = written.find((e) => e.type === "slurm_bootstrap_config.created");
    expect(created?.type === "slurm_bootstrap_config.created" && created.data.userData).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
  });
});
