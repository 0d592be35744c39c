/**
 * The OpenStack agent end to end, every part a real process talking HTTP: two real Ironic
 * services (overcloud and undercloud, Debian's ironic in standalone mode with fake hardware),
 * the hub on PostgreSQL, and `npm run agent -- openstack` processes. What is asserted is what
 * an operator sees: device state and history in the hub API, the agent's logs, its /metrics,
 * its exit code, and the Ironic nodes' maintenance.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase, type Database } from "../apps/hub/src/db/client.ts";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import {
  createNode,
  failClean,
  getNode,
  setMaintenance,
  setProvisionState,
  startIronic,
  waitForProvisionState,
  deleteNode,
  type IronicPeer,
} from "@fm/test-support/ironic";
import { eventually } from "@fm/test-support/wait";
import { freePort } from "@fm/test-support/ports";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

let db: Database;
let hubPort: number;
let hub: HubProcess;
let databaseUrl: string;
let over: IronicPeer;
let under: IronicPeer;
let admin: string;
let agentEnv: Record<string, string>;
let agent: AgentProcess;
const nodes: Record<string, string> = {}; // name → Ironic uuid
const untouched = { hits: 0 };
let decoy: Server;
let dir: string;

const INTERVAL_S = 1;

async function startTheHub(): Promise<HubProcess> {
  const h = await startHub({ DATABASE_URL: databaseUrl, PORT: String(hubPort), FM_STALE_AFTER_S: "600" });
  cleanups.push(() => h.stop("SIGKILL"));
  return h;
}

const hubUrl = () => `http://127.0.0.1:${hubPort}`;

async function api<T = unknown>(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${hubUrl()}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...bearer(admin),
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...init.headers,
    },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

interface Device {
  id: string;
  name: string;
  cordoned: boolean;
  ironic: {
    instance: string | null;
    nodeUuid: string | null;
    provisionState: string | null;
    maintenance: boolean | null;
    maintenanceReason: string | null;
    lastError: string | null;
    observedAt: string | null;
  };
}
const device = async (name: string): Promise<Device> => {
  const r = await api<{ items: Device[] }>(`/api/v1/devices/?nameExact=${name}`);
  expect(r.status).toBe(200);
  return r.body.items[0]!;
};
const history = async (id: string, field = "provisionState") =>
  (
    await api<{ items: { field: string; oldValue: unknown; newValue: unknown; source: string }[] }>(
      `/api/v1/devices/${id}/history/?field=${field}&limit=1000`,
    )
  ).body.items;

/** Waits for a cycle that started after now: the second one to finish from now on. */
async function fullCycleAfterNow(a: AgentProcess, store: string): Promise<void> {
  const t = Date.now();
  const first = await a.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === store && (l.time as number) > t,
  );
  await a.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === store && (l.time as number) > (first.time as number),
  );
}

async function cloudsFile(name: string, endpoint: string): Promise<string> {
  const file = join(dir, `${name}-clouds.yaml`);
  await writeFile(file, `clouds:\n  ${name}:\n    auth_type: none\n    baremetal_endpoint_override: ${endpoint}\n`);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fm-openstack-e2e-"));
  const [o, u, testDb, port] = await Promise.all([
    startIronic(),
    startIronic(),
    createTestDatabase(inject("templateDatabase")),
    freePort(),
  ]);
  over = o;
  under = u;
  cleanups.push(
    () => over.stop(),
    () => under.stop(),
    () => testDb.drop(),
  );
  databaseUrl = testDb.url;
  hubPort = port;
  db = createDatabase(databaseUrl, { poolMax: 2 });
  cleanups.push(() => db.close());
  // NetBox's view (issue #6 brings its reflection): keflavik has GPU nodes and hypervisors,
  // stavanger only GPU nodes, so it needs no undercloud.
  const kef = await seedNetboxOnlyDevices(db.prisma, { slug: "keflavik" }, [
    ...["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-005"].map((name) => ({ name, role: "gpu-node" as const })),
    { name: "gpu-serial-only-x", role: "gpu-node" as const, serial: "SN-SERIAL-9" },
    { name: "hv-001", role: "hypervisor" as const },
    { name: "hv-002", role: "hypervisor" as const },
  ]);
  const sta = await seedNetboxOnlyDevices(db.prisma, { slug: "stavanger" }, [
    { name: "sta-gpu-001", role: "gpu-node" },
  ]);
  hub = await startTheHub();
  admin = await clientToken(hubUrl(), "fleet-admin", ADMIN_SECRET);
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "/api/v1/satellites/",
    { method: "POST", body: { name: "sys1-ice2", siteIds: [kef, sta], environment: "prod" } },
  );
  expect(sat.status).toBe(201);
  const creds = sat.body.secrets.find((s) => s.agent === "openstack")!;

  for (const name of ["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-005", "stray-node"])
    nodes[name] = (await createNode(over.url, { name })).uuid;
  // Matched by serial: Ironic calls it gpu-serial-only, NetBox another name.
  nodes["gpu-serial-only"] = (
    await createNode(over.url, { name: "gpu-serial-only", extra: { serial: "SN-SERIAL-9" } })
  ).uuid;
  for (const name of ["hv-001", "hv-002"]) nodes[name] = (await createNode(under.url, { name })).uuid;

  // An "Ironic" that counts every connection: stavanger's undercloud must never be contacted.
  decoy = createServer((_req, res) => (untouched.hits++, res.writeHead(500).end()));
  decoy.on("connection", () => untouched.hits++);
  await new Promise<void>((r) => decoy.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => decoy.close(r)));

  agentEnv = {
    FM_HUB_URL: hubUrl(),
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "keflavik",
    FM_REFLECT_INTERVAL_S: String(INTERVAL_S),
    FM_HEARTBEAT_INTERVAL_S: "1",
    FM_BACKOFF_BASE_MS: "250",
    FM_BACKOFF_MAX_S: "2",
    FM_MAX_CONSECUTIVE_FAILURES: "40",
    FM_HTTP_TIMEOUT_MS: "5000",
    OPENSTACK_OVERCLOUD_CLOUDS_FILE: await cloudsFile("overcloud", over.url),
    OPENSTACK_UNDERCLOUD_CLOUDS_FILE: await cloudsFile("undercloud", under.url),
  };
  agent = await startAgent("openstack", agentEnv);
  cleanups.push(() => agent.stop("SIGKILL"));
}, 120_000);

describe("OpenStack agent against two real Ironic services", () => {
  it("starts one reflector per needed instance and reflects every node within an interval", async () => {
    await agent.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'overcloud'");
    await agent.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'undercloud'");
    await eventually(
      async () => {
        for (const name of ["gpu-001", "gpu-005", "hv-002"]) {
          const d = await device(name);
          expect(d.ironic).toMatchObject({ nodeUuid: nodes[name], provisionState: "enroll", maintenance: false });
        }
        expect((await device("hv-001")).ironic.instance).toBe("undercloud");
        expect((await device("gpu-001")).ironic.instance).toBe("overcloud");
        expect((await device("gpu-serial-only-x")).ironic.nodeUuid).toBe(nodes["gpu-serial-only"]);
      },
      (INTERVAL_S + 10) * 1000,
    );
    // The stray node matches no device: reported, not invented.
    const cycle = await agent.waitForLog(
      (l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud" && l.unmatched === 1,
    );
    expect(cycle.items).toBe(7);
    // Store names in metrics, as the rollout guide's verification step expects.
    expect(
      await agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "ironic-nodes-overcloud" }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(
      await agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", {
        store: "ironic-nodes-undercloud",
      }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(await agent.metric("process_start_time_seconds")).toBeGreaterThan(0);
    // Heartbeats carry the reflector ages to the hub.
    await eventually(async () => {
      const sat = await api<{
        clients: {
          agent: string;
          lastHeartbeatAt: string | null;
          reflectorAgesSeconds: Record<string, number> | null;
        }[];
      }>("/api/v1/satellites/sys1-ice2/");
      const c = sat.body.clients.find((x) => x.agent === "openstack")!;
      expect(c.lastHeartbeatAt).not.toBeNull();
      expect(Object.keys(c.reflectorAgesSeconds ?? {}).sort()).toEqual([
        "ironic-nodes-overcloud",
        "ironic-nodes-undercloud",
      ]);
    });
  }, 60_000);

  it("an instance no device at the site needs is never contacted", async () => {
    const sta = await startAgent("openstack", {
      ...agentEnv,
      FM_SITE: "stavanger",
      OPENSTACK_UNDERCLOUD_CLOUDS_FILE: await cloudsFile(
        "decoy",
        `http://127.0.0.1:${(decoy.address() as { port: number }).port}`,
      ),
    });
    cleanups.push(() => sta.stop("SIGKILL"));
    await sta.waitForLog((l) => l.msg === "Starting reflector for Ironic instance 'overcloud'");
    await sta.waitForLog((l) => typeof l.msg === "string" && l.msg.startsWith("Skipping Ironic instance 'undercloud'"));
    await sta.waitForLog((l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud");
    expect(sta.logs.some((l) => l.msg === "Starting reflector for Ironic instance 'undercloud'")).toBe(false);
    expect(untouched.hits).toBe(0);
    expect(
      await sta.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "ironic-nodes-undercloud" }),
    ).toBeUndefined();
    expect(await sta.stop()).toBe(0);
  }, 60_000);

  it("reflects manage, provide, active, deleted, maintenance and a failed clean, with history", async () => {
    const id = nodes["gpu-001"]!;
    await setProvisionState(over.url, id, "manage");
    await waitForProvisionState(over.url, id, "manageable", 20_000);
    await eventually(async () => expect((await device("gpu-001")).ironic.provisionState).toBe("manageable"));
    await setProvisionState(over.url, id, "provide");
    await waitForProvisionState(over.url, id, "available", 30_000);
    await eventually(async () => expect((await device("gpu-001")).ironic.provisionState).toBe("available"));
    await setProvisionState(over.url, id, "active");
    await waitForProvisionState(over.url, id, "active", 30_000);
    await eventually(async () => expect((await device("gpu-001")).ironic.provisionState).toBe("active"));
    await setProvisionState(over.url, id, "deleted");
    await waitForProvisionState(over.url, id, "available", 30_000);
    await eventually(async () => expect((await device("gpu-001")).ironic.provisionState).toBe("available"));
    const d = await device("gpu-001");
    // Every stable state, in order; transient ones (cleaning, deploying, deleting) may or may
    // not have been caught by a cycle, so they are left out of the comparison.
    const stable = new Set(["enroll", "manageable", "available", "active"]);
    const entries = await history(d.id);
    expect(entries.filter((h) => stable.has(String(h.newValue))).map((h) => h.newValue)).toEqual([
      "enroll",
      "manageable",
      "available",
      "active",
      "available",
    ]);
    expect(entries.every((h) => h.source === "ironic-overcloud")).toBe(true);

    await setMaintenance(over.url, nodes["gpu-002"]!, "operator: replacing PSU 2");
    await eventually(async () =>
      expect((await device("gpu-002")).ironic).toMatchObject({
        maintenance: true,
        maintenanceReason: "operator: replacing PSU 2",
      }),
    );
    expect((await history((await device("gpu-002")).id, "maintenance")).at(-1)).toMatchObject({
      oldValue: { on: false },
      newValue: { on: true, reason: "operator: replacing PSU 2" },
    });

    const bad = nodes["gpu-003"]!;
    await setProvisionState(over.url, bad, "manage");
    await waitForProvisionState(over.url, bad, "manageable", 20_000);
    await failClean(over.url, bad);
    const failed = await getNode(over.url, bad);
    expect(failed.provision_state).toBe("clean failed");
    await eventually(async () => {
      const g = await device("gpu-003");
      expect(g.ironic).toMatchObject({
        provisionState: "clean failed",
        maintenance: true,
        lastError: failed.last_error,
      });
      expect(g.ironic.lastError).toBeTruthy();
    });
    const status = await api<{ operationalStatus: string }>(`/api/v1/devices/${(await device("gpu-003")).id}/`);
    expect(status.body.operationalStatus).toBe("FAILED");
  }, 120_000);

  it("a node deleted from Ironic is reported missing and its Ironic state cleared", async () => {
    await deleteNode(over.url, nodes["gpu-005"]!);
    await eventually(async () =>
      expect((await device("gpu-005")).ironic).toMatchObject({
        nodeUuid: null,
        provisionState: null,
        observedAt: null,
      }),
    );
    await agent.waitForLog(
      (l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud" && l.missing === 1,
    );
  }, 60_000);

  it("cordon puts the node in maintenance; uncordon clears only the agent's own maintenance", async () => {
    const patch = async (name: string, body: unknown) => {
      const d = await device(name);
      const cur = await api(`/api/v1/devices/${d.id}/`);
      const r = await api(`/api/v1/devices/${d.id}/`, {
        method: "PATCH",
        body,
        headers: { "if-match": cur.headers.get("etag")! },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    await patch("gpu-004", { cordoned: true, cordonReason: "RMA 7: GPU 3 Xid 79" });
    await eventually(async () =>
      expect(await getNode(over.url, nodes["gpu-004"]!)).toMatchObject({
        maintenance: true,
        maintenance_reason: "fleet-manager cordon: RMA 7: GPU 3 Xid 79",
      }),
    );
    await eventually(async () => expect((await device("gpu-004")).ironic.maintenance).toBe(true));
    // gpu-002 is in an operator's maintenance: cordoning keeps their reason, uncordoning keeps it.
    await patch("gpu-002", { cordoned: true, cordonReason: "RMA 8" });
    await fullCycleAfterNow(agent, "ironic-nodes-overcloud");
    expect(await getNode(over.url, nodes["gpu-002"]!)).toMatchObject({
      maintenance: true,
      maintenance_reason: "operator: replacing PSU 2",
    });

    await patch("gpu-004", { cordoned: false });
    await patch("gpu-002", { cordoned: false });
    await eventually(async () =>
      expect(await getNode(over.url, nodes["gpu-004"]!)).toMatchObject({
        maintenance: false,
        maintenance_reason: null,
      }),
    );
    await eventually(async () => expect((await device("gpu-004")).ironic.maintenance).toBe(false));
    await fullCycleAfterNow(agent, "ironic-nodes-overcloud");
    expect(await getNode(over.url, nodes["gpu-002"]!)).toMatchObject({
      maintenance: true,
      maintenance_reason: "operator: replacing PSU 2",
    });
    // The failed clean's maintenance (Ironic's own) is untouched by all this.
    expect(
      await getNode(over.url, nodes["gpu-003"]!),
      JSON.stringify(agent.logs.filter((l) => l.node === nodes["gpu-003"])),
    ).toMatchObject({ maintenance: true });
  }, 90_000);

  it("with the hub down for 20 s the agent backs off, then converges with no transition lost", async () => {
    expect(await hub.stop()).toBe(0);
    const downAt = Date.now();
    // Changes in Ironic while the hub cannot hear about them.
    await setProvisionState(under.url, nodes["hv-001"]!, "manage");
    await setProvisionState(over.url, nodes["gpu-004"]!, "manage");
    await waitForProvisionState(under.url, nodes["hv-001"]!, "manageable", 20_000);
    await waitForProvisionState(over.url, nodes["gpu-004"]!, "manageable", 20_000);
    await new Promise((r) => setTimeout(r, 20_000 - (Date.now() - downAt)));
    const failures = agent.logs.filter(
      (l) => typeof l.msg === "string" && l.msg.startsWith("reflector cycle failed") && (l.time as number) > downAt,
    );
    expect(failures.length).toBeGreaterThan(2);
    // Backing off: the delays it announced grow.
    const delays = failures.filter((l) => l.store === "ironic-nodes-overcloud").map((l) => l.retryInMs as number);
    expect(Math.max(...delays)).toBeGreaterThan(Math.min(...delays));
    expect(
      await agent.metric("fleet_manager_reflector_errors_total", {
        store: "ironic-nodes-overcloud",
        reason: "hub_unavailable",
      }),
    ).toBeGreaterThan(0);
    expect(
      await agent.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }),
    ).toBeGreaterThan(10);

    hub = await startTheHub();
    await eventually(async () => {
      expect((await device("hv-001")).ironic.provisionState).toBe("manageable");
      expect((await device("gpu-004")).ironic.provisionState).toBe("manageable");
    }, 30_000);
    for (const name of ["hv-001", "gpu-004"])
      expect((await history((await device(name)).id)).at(-1)).toMatchObject({
        oldValue: "enroll",
        newValue: "manageable",
      });
    expect(
      await agent.metric("fleet_manager_reflector_consecutive_failures", { store: "ironic-nodes-overcloud" }),
    ).toBe(0);
  }, 120_000);

  it("a restarted agent converges, including changes made while it was down", async () => {
    expect(await agent.stop()).toBe(0);
    await setProvisionState(under.url, nodes["hv-002"]!, "manage");
    await waitForProvisionState(under.url, nodes["hv-002"]!, "manageable", 20_000);
    agent = await startAgent("openstack", agentEnv);
    cleanups.push(() => agent.stop("SIGKILL"));
    await eventually(async () => expect((await device("hv-002")).ironic.provisionState).toBe("manageable"), 20_000);
    // Everything else converged and stayed as it was: a repeated view changes nothing.
    const cycle = await agent.waitForLog(
      (l) => l.msg === "reflector cycle done" && l.store === "ironic-nodes-overcloud",
    );
    expect(cycle).toMatchObject({ updated: 0, unmatched: 1 });
  }, 90_000);

  it("with Ironic down the reflector age grows, errors are counted, and after N failures the agent exits non-zero", async () => {
    // One agent per site, as deployed: two would race each other's pushes.
    expect(await agent.stop()).toBe(0);
    const dead = await startAgent("openstack", {
      ...agentEnv,
      FM_MAX_CONSECUTIVE_FAILURES: "4",
      FM_BACKOFF_BASE_MS: "500",
      OPENSTACK_OVERCLOUD_CLOUDS_FILE: await cloudsFile("closed", `http://127.0.0.1:${await freePort()}`),
    });
    cleanups.push(() => dead.stop("SIGKILL"));
    await dead.waitForLog((l) => l.msg === "reflector cycle failed (1/4)" && l.store === "ironic-nodes-overcloud");
    const age1 = (await dead.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }))!;
    await dead.waitForLog((l) => l.msg === "reflector cycle failed (2/4)" && l.store === "ironic-nodes-overcloud");
    const age2 = (await dead.metric("fleet_manager_reflector_age_seconds", { store: "ironic-nodes-overcloud" }))!;
    expect(age2).toBeGreaterThan(age1);
    expect(
      await dead.metric("fleet_manager_reflector_errors_total", {
        store: "ironic-nodes-overcloud",
        reason: "ironic_unavailable",
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      await dead.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "ironic-nodes-overcloud" }),
    ).toBeUndefined();
    // The undercloud reflector of the same process is fine meanwhile.
    expect(
      await dead.metric("fleet_manager_reflector_consecutive_failures", { store: "ironic-nodes-undercloud" }),
    ).toBe(0);
    expect(await dead.exited).toBe(1);
    expect(dead.logs.at(-1)).toMatchObject({ msg: "agent exiting after repeated failures", exitCode: 1 });
  }, 90_000);
});
