import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@fm/test-support/wait";
import type { Device, ReflectionResult } from "@fm/domain";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../../testing/inventory.ts";
import { bearer, clientToken } from "@fm/test-support/process";
import { reconcileExpectedSatellites } from "../identity/bootstrap.ts";

let hub: TestHub & { url: string; adminToken: string };
let inv: Inventory;
let openstack: string;
let slurmAgent: string;
let devices: Device[];

beforeAll(async () => {
  hub = await startOAuthTestHub();
  inv = await seedInventory(hub.db.prisma, 6);
  // Start from devices no source but NetBox has seen, not cordoned.
  await hub.db.prisma.device.updateMany({
    data: {
      ironicInstance: null,
      ironicNodeUuid: null,
      ironicProvisionState: null,
      ironicMaintenance: null,
      ironicMaintenanceReason: null,
      ironicLastError: null,
      ironicPowerState: null,
      slurmNodeName: null,
      slurmState: null,
      healthStatus: null,
      cordoned: false,
      cordonReason: null,
      netboxStatus: "active",
    },
  });
  await hub.db.prisma.deviceObservation.updateMany({
    data: { ironicObservedAt: null, slurmObservedAt: null, healthObservedAt: null },
  });
  const res = await fetch(`${hub.url}/api/v1/satellites`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify({ name: "sys1-ice2", siteIds: [inv.sites.keflavik], environment: "prod" }),
  });
  const secrets = Object.fromEntries(
    ((await res.json()) as { secrets: { agent: string; clientSecret: string }[] }).secrets.map((s) => [
      s.agent,
      s.clientSecret,
    ]),
  );
  openstack = await clientToken(hub.url, "ironic-agent-sys1-ice2", secrets.openstack!);
  slurmAgent = await clientToken(hub.url, "slurm-agent-sys1-ice2", secrets.slurm!);
  devices = (
    (await (
      await fetch(`${hub.url}/api/v1/devices?site=keflavik&role=gpu-node`, { headers: bearer(hub.adminToken) })
    ).json()) as { items: Device[] }
  ).items;
});
afterAll(() => hub.close());

const node = (d: Device, uuid: string, o: Record<string, unknown> = {}) => ({
  uuid,
  name: d.name,
  provisionState: "enroll",
  targetProvisionState: null,
  powerState: null,
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
  ...o,
});
const push = (source: string, items: unknown[], observedAt: Date, token = openstack, site = inv.sites.keflavik) =>
  fetch(`${hub.url}/api/v1/sites/${site}/reflections/${source}/`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify({ observedAt: observedAt.toISOString(), complete: true, items }),
  });
const device = async (id: string) =>
  (await (await fetch(`${hub.url}/api/v1/devices/${id}`, { headers: bearer(hub.adminToken) })).json()) as Device;

describe("PUT /api/v1/sites/{site_id}/reflections/{source}", () => {
  const uuids = ["0190a5b4-0000-7000-8000-0000000000a1", "0190a5b4-0000-7000-8000-0000000000a2"];
  let t = Date.now() - 60_000;
  const next = () => new Date((t += 1000));

  it("matches by name first, then by node UUID, writes only changes with history, and reports counts", async () => {
    const [a, b] = devices;
    const first = await push(
      "ironic-overcloud",
      [
        node(a!, uuids[0]!),
        node(b!, uuids[1]!),
        node({ name: "not-in-netbox" } as Device, "0190a5b4-0000-7000-8000-0000000000ff"),
      ],
      next(),
    );
    expect(first.status, await first.clone().text()).toBe(200);
    expect(await first.json()).toEqual({
      created: 0,
      updated: 2,
      unchanged: 0,
      missing: 0,
      unmatched: 1,
      unmatchedItems: ["not-in-netbox"],
    });
    expect(await device(a!.id)).toMatchObject({
      ironic: { instance: "overcloud", nodeUuid: uuids[0], provisionState: "enroll" },
      operationalStatus: "ENROLLING",
    });

    // Renamed in Ironic: still matched by UUID. manage -> manageable -> provide -> available.
    const second = (await (
      await push(
        "ironic-overcloud",
        [
          node(a!, uuids[0]!, { name: "renamed", provisionState: "available", powerState: "power off" }),
          node(b!, uuids[1]!),
        ],
        next(),
      )
    ).json()) as ReflectionResult;
    expect(second).toMatchObject({ updated: 1, unchanged: 1, unmatched: 0 });
    const after = await device(a!.id);
    expect(after).toMatchObject({ ironic: { provisionState: "available" }, operationalStatus: "AVAILABLE" });
    const history = (await (
      await fetch(`${hub.url}/api/v1/devices/${a!.id}/history?field=provisionState`, {
        headers: bearer(hub.adminToken),
      })
    ).json()) as { items: { source: string; oldValue: unknown; newValue: unknown }[] };
    expect(history.items.map((h) => [h.source, h.oldValue, h.newValue])).toEqual([
      ["ironic-overcloud", null, "enroll"],
      ["ironic-overcloud", "enroll", "available"],
    ]);
  });

  it("a repeated push changes nothing; an older push is refused with 409", async () => {
    const [a, b] = devices;
    const items = [
      node(a!, uuids[0]!, {
        provisionState: "clean failed",
        maintenance: true,
        maintenanceReason: "clean failed",
        lastError: "erase_devices failed",
      }),
      node(b!, uuids[1]!),
    ];
    const at = next();
    expect(((await (await push("ironic-overcloud", items, at)).json()) as ReflectionResult).updated).toBe(1);
    const events = await hub.db.prisma.inventoryEvent.count();
    const again = (await (await push("ironic-overcloud", items, at)).json()) as ReflectionResult;
    expect(again).toMatchObject({ updated: 0, unchanged: 2 });
    expect(await hub.db.prisma.inventoryEvent.count()).toBe(events);
    const before = await device(a!.id);
    expect(before).toMatchObject({
      operationalStatus: "FAILED",
      ironic: { lastError: "erase_devices failed", maintenance: true },
    });
    // Listed again later, unchanged: only the time Ironic last listed it moves (not the device's
    // version, not its updatedAt, no feed event).
    const later = next();
    expect(await (await push("ironic-overcloud", items, later)).json()).toMatchObject({ updated: 0, unchanged: 2 });
    const listed = await device(a!.id);
    expect(listed.ironic.observedAt).toBe(later.toISOString());
    expect(listed).toMatchObject({ version: before.version, updatedAt: before.updatedAt });
    expect(await hub.db.prisma.inventoryEvent.count()).toBe(events);
    const stale = await push(
      "ironic-overcloud",
      [node(a!, uuids[0]!, { provisionState: "available" })],
      new Date(at.getTime() - 5000),
    );
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ code: "stale_reflection" });
    expect((await device(a!.id)).ironic.provisionState).toBe("clean failed");
  });

  it("records each changed device's feed event as the device reads right after the push", async () => {
    const [a, b] = devices;
    const res = await push(
      "ironic-overcloud",
      [
        node(a!, uuids[0]!, { provisionState: "available", maintenance: true, maintenanceReason: "feed check" }),
        node(b!, uuids[1]!, { provisionState: "clean failed", lastError: "disk" }),
      ],
      next(),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const feed = (await (
      await fetch(`${hub.url}/api/v1/feeds/inventory?after=0&limit=1000`, { headers: bearer(hub.adminToken) })
    ).json()) as { items: { type: string; resourceId: string; data: unknown }[] };
    for (const d of [a!, b!]) {
      const last = feed.items.filter((e) => e.type === "device.updated" && e.resourceId === d.id).at(-1);
      expect(last?.data).toEqual(await device(d.id));
    }
  });

  it("clears a node Ironic no longer lists (missing)", async () => {
    const [, b] = devices;
    const res = (await (await push("ironic-overcloud", [node(b!, uuids[1]!)], next())).json()) as ReflectionResult;
    expect(res.missing).toBe(1);
    expect((await device(devices[0]!.id)).ironic).toMatchObject({
      nodeUuid: null,
      provisionState: null,
      observedAt: null,
    });
  });

  it("matches a SLURM node to the device the agent names (deviceNamePrefix), or to none when it names none", async () => {
    const [, , c, d] = devices;
    const res = await push(
      "slurm",
      [
        { name: "n-c", device: c!.name, state: "IDLE", flags: ["DRAIN"], reason: "operator", partitions: ["gpu"] },
        // Named like a device, but the agent says it is none (its name lacks the prefix).
        { name: d!.name, device: null, state: "IDLE", flags: [], reason: null, partitions: ["gpu"] },
      ],
      next(),
      slurmAgent,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ updated: 1, unmatched: 1, unmatchedItems: [d!.name] });
    expect((await device(c!.id)).slurm).toMatchObject({ nodeName: "n-c", state: "IDLE", stateFlags: ["DRAIN"] });
    expect((await device(d!.id)).slurm.nodeName).toBeNull();
  });

  it("lets an agent write only its own source at its own satellite's sites, and validates items", async () => {
    expect((await push("slurm", [], next(), openstack)).status).toBe(403);
    expect((await push("ironic-overcloud", [], next(), slurmAgent)).status).toBe(403);
    expect((await push("ironic-overcloud", [], next(), openstack, inv.sites.stavanger)).status).toBe(403);
    expect((await push("ironic-overcloud", [], next(), hub.adminToken)).status).toBe(403);
    const bad = await push("ironic-overcloud", [{ uuid: "nope", name: 5 }], next());
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual(
      expect.arrayContaining(["body.items.0.uuid", "body.items.0.name"]),
    );
    // The route leaves checking items to the source's schema, which names the one that is no object.
    const notObjects = await push("ironic-overcloud", [node(devices[0]!, devices[0]!.id), 42, ["x"]], next());
    expect(notObjects.status).toBe(400);
    expect(((await notObjects.json()) as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
      "body.items.1",
      "body.items.2",
    ]);
    // Serving a new site takes effect at once: the satellite_sites trigger clears every
    // replica's cached client state (the cache would otherwise keep the old list for 5 s).
    await reconcileExpectedSatellites(
      hub.db.prisma,
      hub.app.identity.satellites,
      [{ name: "sys1-ice2", sites: ["keflavik", "stavanger"], environment: "prod" }],
      hub.app.log,
    );
    await eventually(async () =>
      expect((await push("ironic-overcloud", [], next(), openstack, inv.sites.stavanger)).status).toBe(200),
    );
    const slurm = await push(
      "slurm",
      [{ name: devices[1]!.name, state: "IDLE", flags: [], reason: null, partitions: ["gpu"] }],
      next(),
      slurmAgent,
    );
    expect(slurm.status).toBe(200);
    expect(await slurm.json()).toMatchObject({ updated: 1 });
  });
});
