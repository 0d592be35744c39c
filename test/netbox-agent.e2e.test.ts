/**
 * The netbox agent end to end: the NetBox test server (NetBox 4.5's REST API, checked against
 * recorded shapes by test/netbox-server.test.ts), the hub process on PostgreSQL, and
 * `npm run agent -- netbox`. Asserted: what the hub's API shows, the agent's logs and metrics.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Device } from "@fm/domain";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { eventually } from "@fm/test-support/wait";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = JSON.stringify({
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
});
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

let hub: HubProcess;
let admin: string;
let nb: NetboxServer;
let agent: AgentProcess;
let agentEnv: Record<string, string>;

const api = async <T>(path: string) => {
  const res = await fetch(`${hub.url}${path}`, { headers: bearer(admin) });
  return (await res.json()) as T;
};
const devices = async () => (await api<{ items: Device[] }>("/api/v1/devices/?site=iad1&limit=1000")).items;
/** The devices the agent must ingest: NetBox's site iad1, cluster iad1-compute. */
const expected = () => nb.data.devices.filter((d) => d.site === 1 && d.cluster === 1);
/** The hub's devices for these NetBox ids, once the agent has brought them in. */
const ingested = (netboxIds: number[]) =>
  eventually(async () => {
    const all = await devices();
    const found = netboxIds.map((id) => all.find((d) => d.netbox.id === id));
    expect(found.filter((d) => !d).length, "NetBox devices not in the hub yet").toBe(0);
    return found as Device[];
  }, 30_000);

beforeAll(async () => {
  nb = await startNetboxServer({ token: TOKEN, data: realisticFleet({ sites: 2, devicesPerSite: 24 }) });
  cleanups.push(() => nb.stop());
  const db = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => db.drop());
  hub = await startHub({ DATABASE_URL: db.url });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const post = (path: string, body: unknown) =>
    fetch(`${hub.url}${path}`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  const site = (await post("/api/v1/sites/", { slug: "iad1", name: "Ashburn (IAD1)" })) as { id: string };
  const sat = (await post("/api/v1/satellites/", { name: "sys3-iad1", siteIds: [site.id], environment: "dev" })) as {
    secrets: { agent: string; clientId: string; clientSecret: string }[];
  };
  const creds = sat.secrets.find((s) => s.agent === "netbox")!;
  agentEnv = {
    FM_HUB_URL: hub.url,
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "iad1",
    FM_REFLECT_INTERVAL_S: "1",
    FM_BACKOFF_BASE_MS: "250",
    FM_BACKOFF_MAX_S: "2",
    NETBOX_URL: nb.url,
    NETBOX_TOKEN: TOKEN,
    NETBOX_CLUSTER: "iad1-compute",
    NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: MAPPING,
    NETBOX_RESYNC_INTERVAL_S: "3600",
  };
  agent = await startAgent("netbox", agentEnv);
  cleanups.push(() => agent.stop("SIGKILL"));
}, 120_000);

describe("netbox agent against the NetBox test server and the hub", () => {
  it("builds the site's inventory: devices of the cluster, roles with classes, types, racks, interfaces, MACs, cable peers", async () => {
    await agent.waitForLog((l) => l.msg === "Starting reflector for NetBox");
    const want = expected();
    expect(want.length).toBeGreaterThan(10);
    const got = await eventually(async () => {
      const d = await devices();
      expect(d.length).toBe(want.length);
      return d;
    });
    expect(got.map((d) => d.name).sort()).toEqual(want.map((d) => d.name!).sort());
    // One device checked field by field against NetBox's own records.
    const nbDevice = want.find((d) => nb.data.deviceRoles.find((r) => r.id === d.role)!.slug === "gpu-node")!;
    const hubDevice = got.find((d) => d.name === nbDevice.name)!;
    const role = nb.data.deviceRoles.find((r) => r.id === nbDevice.role)!;
    const type = nb.data.deviceTypes.find((t) => t.id === nbDevice.device_type)!;
    expect(hubDevice).toMatchObject({
      netbox: { id: nbDevice.id, status: nbDevice.status, missing: false },
      role: { slug: role.slug, deviceClass: "GPU_COMPUTE" },
      deviceType: { slug: type.slug, cpuArchitecture: String(type.custom_fields.cpu_architecture) },
      serial: nbDevice.serial || null,
    });
    const nbIfaces = nb.data.interfaces.filter((i) => i.device === nbDevice.id);
    expect(hubDevice.interfaces.map((i) => i.name).sort()).toEqual(nbIfaces.map((i) => i.name).sort());
    for (const i of nbIfaces) {
      const mac = nb.data.macAddresses.find((m) => m.id === i.primary_mac_address)?.mac_address ?? null;
      expect(hubDevice.interfaces.find((x) => x.name === i.name)!.macAddress).toBe(mac?.toUpperCase() ?? null);
    }
    expect(hubDevice.interfaces.some((i) => i.peerDevice !== null && i.peerInterface !== null)).toBe(true);
    const roles = (
      await api<{ items: { slug: string; deviceClass: string }[] }>("/api/v1/device-roles/?site=iad1&inUse=true")
    ).items;
    expect(Object.fromEntries(roles.map((r) => [r.slug, r.deviceClass]))).toMatchObject({ "gpu-node": "GPU_COMPUTE" });
    expect(
      await agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "netbox-devices" }),
    ).toBeGreaterThan(0);
  }, 60_000);

  it("shows a rename, a MAC change, a role change and a removal within a change-poll interval", async () => {
    const [a, b, c, gone] = expected().slice(0, 4);
    const byNetboxId = async (id: number) => (await devices()).find((d) => d.netbox.id === id)!;
    const hubIdOfA = (await ingested([a!.id, b!.id, c!.id, gone!.id]))[0]!.id;
    const iface = nb.data.interfaces.find((i) => i.device === b!.id && i.primary_mac_address !== null)!;
    const cpuRole = nb.data.deviceRoles.find((r) => r.slug === "cpu-node")!;
    const fullReads = agent.logs.filter((l) => l.msg === "NetBox full read").length;

    nb.edit("dcim.device", a!.id, (d: { name: string }) => (d.name = `${d.name}-renamed`));
    nb.edit(
      "dcim.macaddress",
      iface.primary_mac_address!,
      (m: { mac_address: string }) => (m.mac_address = "02:AA:BB:CC:DD:EE"),
    );
    nb.edit("dcim.device", c!.id, (d: { role: number }) => (d.role = cpuRole.id));
    nb.edit("dcim.device", gone!.id, "delete");

    await eventually(async () => {
      const renamed = await byNetboxId(a!.id);
      expect(renamed).toMatchObject({ id: hubIdOfA, name: `${a!.name}` });
      expect((await byNetboxId(b!.id)).interfaces.find((i) => i.name === iface.name)!.macAddress).toBe(
        "02:AA:BB:CC:DD:EE",
      );
      expect((await byNetboxId(c!.id)).role).toMatchObject({ slug: "cpu-node", deviceClass: "CPU_BAREMETAL" });
      expect((await byNetboxId(gone!.id)).netbox.missing).toBe(true);
    }, 10_000);
    // The change log triggered it (the resync interval is an hour).
    expect(agent.logs.filter((l) => l.msg === "NetBox full read").length).toBeGreaterThan(fullReads);
    expect(
      agent.logs.some(
        (l) => l.msg === "NetBox full read" && typeof l.reason === "string" && l.reason.startsWith("dcim."),
      ),
    ).toBe(true);
  }, 60_000);

  it("without permission on MAC addresses it logs a clear error per poll and the rest of the sync goes on", async () => {
    const target = expected()[5]!;
    await ingested([target.id]);
    nb.setDenied(["dcim.macaddress"]);
    try {
      nb.edit("dcim.device", target.id, (d: { name: string }) => (d.name = `${d.name}-after-403`));
      await eventually(async () =>
        expect((await devices()).find((d) => d.netbox.id === target.id)!.name).toBe(target.name),
      );
      // The MAC poll of a cycle without another change meets the 403 (the full read reads no MAC list).
      await eventually(async () => {
        const errors = agent.logs.filter(
          (l) => typeof l.msg === "string" && l.msg.includes("dcim.macaddress") && l.level === "ERROR",
        );
        expect(errors.length).toBeGreaterThan(0);
      });
      expect(
        await agent.metric("fleet_manager_reflector_errors_total", {
          store: "netbox-devices",
          reason: "netbox_permission",
        }),
      ).toBeGreaterThan(0);
      // Polls after the 403 still succeed.
      const t = Date.now();
      await agent.waitForLog((l) => l.msg === "reflector cycle done" && (l.time as number) > t);
    } finally {
      nb.setDenied([]);
    }
  }, 60_000);
});
