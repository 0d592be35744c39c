/**
 * The NetBox reflector against the NetBox test server at a given release: what it would push
 * after a NetBox edit, with a token lacking the change-log permission, and across patch panels.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { NetboxClient, type HubClient } from "@fm/clients";
import type { NetboxItem, NetboxSettings } from "@fm/domain";
import {
  cableThroughPatchPanels,
  realisticFleet,
  startNetboxServer,
  type NetboxServer,
} from "@fm/test-support/netbox-server";
import { createAgentMetrics } from "../runtime/metrics.ts";
import { resolveScope, siteSettings } from "./agent.ts";
import { NetboxReflector } from "./reflector.ts";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const ROLES = { "gpu-node": "GPU_COMPUTE", "cpu-node": "CPU_BAREMETAL", hypervisor: "CPU_HYPERVISOR" } as const;

let nb: NetboxServer | undefined;
afterEach(async () => {
  await nb?.stop();
  nb = undefined;
});

/** A reflector of site iad1 / cluster iad1-compute, its log lines, and the pushes it makes to a recording hub. */
async function reflectorAt(version: string) {
  nb = await startNetboxServer({ token: TOKEN, version, data: realisticFleet({ sites: 1, devicesPerSite: 16 }) });
  const netbox = new NetboxClient({ url: nb.url, token: TOKEN, backoffMs: 5, maxAttempts: 2 });
  const lines: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  const pushes: Array<{ observedAt: string; items: unknown[] }> = [];
  const hub = {
    pushReflection: (_site: string, _source: string, body: { observedAt: string; items: unknown[] }) => {
      pushes.push(body);
      return Promise.resolve({ created: 0, updated: 0, unchanged: body.items.length, missing: 0, unmatched: [] });
    },
  } as unknown as HubClient;
  const metrics = createAgentMetrics({ agent: "netbox", site: "iad1", satellite: "test" });
  // The hub's NetBox settings, as an admin may change them between cycles.
  const settings: NetboxSettings = {
    deviceFilters: [{ site: "iad1", clusters: ["iad1-compute"] }],
    deviceRoleClassMapping: { ...ROLES },
    version: 1,
    updatedAt: new Date().toISOString(),
  };
  (hub as unknown as { netboxSettings: () => Promise<NetboxSettings> }).netboxSettings = () =>
    Promise.resolve(structuredClone(settings));
  const reflector = new NetboxReflector({
    hub,
    netbox,
    site: { id: "site-1" },
    scope: await resolveScope(netbox, "iad1", ["iad1-compute"]),
    settings: () => siteSettings(hub, "iad1", { NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: {} }),
    resolveClusters: (clusters) => resolveScope(netbox, "iad1", clusters).then((s) => s.clusterIds),
    resyncIntervalMs: 3_600_000,
    log,
    metrics,
    now: () => Date.now(),
  });
  return { nb: nb, reflector, lines, pushes, metrics, settings };
}

const byId = (items: NetboxItem[], id: number) => items.find((i) => i.netboxId === id)!;

describe("NetBox reflector", () => {
  it.each(["4.2.0", "4.5.0", "4.5.3"])(
    "NetBox %s: an operator's device edit between resyncs is in the next view",
    async (version) => {
      const { nb, reflector } = await reflectorAt(version);
      const device = nb.data.devices.find((d) => d.cluster === 1)!;
      expect(byId(await reflector.list(), device.id).serial).toBe(device.serial || null);
      nb.edit("dcim.device", device.id, (d: { serial: string }) => (d.serial = "SN-REPLACED-1"));
      expect(byId(await reflector.list(), device.id).serial).toBe("SN-REPLACED-1");
    },
  );

  it("without core.view_objectchange: every poll logs the missing permission, and the view is pushed as of the last full read", async () => {
    const { nb, reflector, lines, pushes, metrics } = await reflectorAt("4.5.0");
    const first = await reflector.list();
    const readAt = new Date();
    await reflector.push(first, readAt);
    nb.setDenied(["core.objectchange"]);
    const again = await reflector.list();
    expect(again).toEqual(first);
    await reflector.push(again, new Date(readAt.getTime() + 60_000));
    // Both carry the start of the full read: the second push claims nothing newer than the first.
    expect(pushes[1]!.observedAt).toBe(pushes[0]!.observedAt);
    expect(Date.parse(pushes[0]!.observedAt)).toBeLessThanOrEqual(readAt.getTime());
    expect(lines.find((l) => l.level === 50)).toMatchObject({
      permission: "core.view_objectchange",
      msg: expect.stringContaining("NetBox edits wait for the full resync"),
    });
    const errors = await metrics.errors.get();
    expect(errors.values.find((v) => v.labels.reason === "netbox_permission")?.value).toBe(1);
  });

  it("follows the hub's NetBox settings between cycles: a new role mapping and a new cluster, without a restart", async () => {
    const { nb, reflector, settings } = await reflectorAt("4.5.0");
    const gpu = nb.data.devices.find((d) => d.cluster === 1 && d.role === 1)!;
    expect(byId(await reflector.list(), gpu.id).role.deviceClass).toBe("GPU_COMPUTE");
    settings.deviceRoleClassMapping["gpu-node"] = "STORAGE";
    expect(byId(await reflector.list(), gpu.id).role.deviceClass).toBe("STORAGE");

    // A second cluster at the site: its devices are ingested from the next cycle on.
    nb.data.clusters.push({ ...nb.data.clusters[0]!, id: 99, name: "iad1-storage" });
    const moved = nb.data.devices.find((d) => d.cluster === 1 && d.id !== gpu.id)!;
    nb.edit("dcim.device", moved.id, (d: { cluster: number }) => (d.cluster = 99));
    expect((await reflector.list()).some((i) => i.netboxId === moved.id)).toBe(false);
    settings.deviceFilters = [{ site: "iad1", clusters: ["iad1-compute", "iad1-storage"] }];
    expect((await reflector.list()).some((i) => i.netboxId === moved.id)).toBe(true);
  });

  it("takes an interface's MAC from its assigned MAC addresses when it has no primary one, reading no MAC list", async () => {
    const { nb, reflector } = await reflectorAt("4.5.0");
    const mac = nb.data.macAddresses.find((m) => {
      const i = nb.data.interfaces.find((x) => x.id === m.interface);
      return i && nb.data.devices.find((d) => d.id === i.device)?.cluster === 1;
    })!;
    const iface = nb.data.interfaces.find((i) => i.id === mac.interface)!;
    iface.primary_mac_address = null;
    const item = byId(await reflector.list(), iface.device);
    expect(item.interfaces.find((i) => i.name === iface.name)?.macAddress).toBe(mac.mac_address.toUpperCase());
    expect(nb.requests.filter((r) => r.path === "/api/dcim/mac-addresses/")).toHaveLength(0);
  });

  it("takes the peer of an uplink cabled through two patch panels from NetBox's connected endpoints", async () => {
    const { nb, reflector } = await reflectorAt("4.5.0");
    const uplink = nb.data.interfaces.find((i) => {
      const d = nb.data.devices.find((x) => x.id === i.device)!;
      return d.cluster === 1 && nb.data.cables.some((c) => c.a.includes(i.id));
    })!;
    const leafPort = nb.data.interfaces.find((i) =>
      nb.data.cables.find((c) => c.a.includes(uplink.id))!.b.includes(i.id),
    )!;
    const leaf = nb.data.devices.find((d) => d.id === leafPort.device)!;
    cableThroughPatchPanels(nb.data, uplink.id, "pp-r01");
    const item = byId(await reflector.list(), uplink.device);
    expect(item.interfaces.find((i) => i.name === uplink.name)).toMatchObject({
      peerDevice: leaf.name,
      peerInterface: leafPort.name,
    });
  });
});
