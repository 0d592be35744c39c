/**
 * The OpenStack agent's end-to-end environment, every part a real process talking HTTP: two
 * real Ironic services (overcloud and undercloud, Debian's ironic in standalone mode with fake
 * hardware), the hub on PostgreSQL behind a TCP proxy (so it can restart on a port of its own
 * choosing and keep one address), NetBox's view of sites keflavik and stavanger, and the
 * `npm run agent -- openstack` process of keflavik.
 *
 * Fixture, for tests that only read it: overcloud nodes gpu-001..gpu-005, gpu-serial-only
 * (matched by serial to NetBox's gpu-serial-only-x) and stray-node (no device); undercloud
 * nodes hv-001 and hv-002. A test that changes anything uses ownNodes().
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, inject } from "vitest";
import { createDatabase, type Database } from "../apps/hub/src/db/client.ts";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { createNode, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { eventually } from "@fm/test-support/wait";
import { createTestDatabase } from "@fm/test-support/postgres";
import { startTcpProxy } from "@fm/test-support/tcp-proxy";
import { ADMIN_SECRET, clientToken, hubApi, startHub, type HubProcess } from "@fm/test-support/process";

export const INTERVAL_S = 1;

export interface Device {
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

export type OpenstackEnv = Awaited<ReturnType<typeof startOpenstackEnv>>;

export async function startOpenstackEnv() {
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    return await setUp(cleanups, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function setUp(cleanups: (() => Promise<unknown>)[], stop: () => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), "fm-openstack-e2e-"));
  const [over, under, testDb, hubProxy] = await Promise.all([
    startIronic(),
    startIronic(),
    createTestDatabase(inject("templateDatabase")),
    startTcpProxy(),
  ]);
  cleanups.push(
    () => over.stop(),
    () => under.stop(),
    () => testDb.drop(),
    () => hubProxy.close(),
  );
  const db: Database = createDatabase(testDb.url, { poolMax: 2 });
  cleanups.push(() => db.close());
  const hubUrl = `http://127.0.0.1:${hubProxy.port}`;
  let admin = "";

  const api = hubApi(
    () => hubUrl,
    () => admin,
  );
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
  const cloudsFile = async (name: string, endpoint: string): Promise<string> => {
    const file = join(dir, `${name}-clouds.yaml`);
    await writeFile(file, `clouds:\n  ${name}:\n    auth_type: none\n    baremetal_endpoint_override: ${endpoint}\n`);
    return file;
  };

  // NetBox's view: keflavik has GPU nodes and hypervisors, stavanger only GPU nodes, so it
  // needs no undercloud.
  const kef = await seedNetboxOnlyDevices(db.prisma, { slug: "keflavik" }, [
    ...["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-005"].map((name) => ({ name, role: "gpu-node" as const })),
    { name: "gpu-serial-only-x", role: "gpu-node" as const, serial: "SN-SERIAL-9" },
    { name: "hv-001", role: "hypervisor" as const },
    { name: "hv-002", role: "hypervisor" as const },
  ]);
  const sta = await seedNetboxOnlyDevices(db.prisma, { slug: "stavanger" }, [
    { name: "sta-gpu-001", role: "gpu-node" },
  ]);

  const env = {
    over,
    under,
    db,
    hubUrl,
    /** The hub process running now (replaced by startTheHub). */
    hub: undefined as unknown as HubProcess,
    /** keflavik's agent running now (replaced by startTheAgent). */
    agent: undefined as unknown as AgentProcess,
    agentEnv: {} as Record<string, string>,
    /** Ironic uuids of the fixture's nodes by name. */
    nodes: {} as Record<string, string>,
    /** An "Ironic" that counts every connection made to it. */
    decoy: { url: "", hits: 0 },
    api,
    device,
    history,
    cloudsFile,
    stop,
    /** A hub on a port of its own choosing, reached through the proxy, whose URL is its issuer. */
    async startTheHub(): Promise<HubProcess> {
      const h = await startHub({ DATABASE_URL: testDb.url, FM_ISSUER_URL: hubUrl, FM_STALE_AFTER_S: "600" });
      cleanups.push(() => h.stop("SIGKILL"));
      hubProxy.retarget({ host: "127.0.0.1", port: Number(new URL(h.url).port) });
      env.hub = h;
      return h;
    },
    async stopTheHub(): Promise<void> {
      expect(await env.hub.stop()).toBe(0);
      hubProxy.retarget(undefined); // while it is down, connections are dropped as they arrive
    },
    async startAgent(overrides: Record<string, string> = {}): Promise<AgentProcess> {
      const a = await startAgent("openstack", { ...env.agentEnv, ...overrides });
      cleanups.push(() => a.stop("SIGKILL"));
      return a;
    },
    /** Starts keflavik's agent (again, after a test stopped it); resolves once it has run a cycle. */
    async startTheAgent(): Promise<AgentProcess> {
      env.agent = await env.startAgent();
      await env.agent.waitForLog((l) => l.msg === "reflector cycle done");
      return env.agent;
    },
    ownNodes: (kind: "gpu" | "hv", count: number) => ownNodes(env, kind, count),
  };

  await env.startTheHub();
  admin = await clientToken(hubUrl, "fleet-admin", ADMIN_SECRET);
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "/api/v1/satellites/",
    { method: "POST", body: { name: "sys1-ice2", siteIds: [kef, sta], environment: "prod" } },
  );
  expect(sat.status).toBe(201);
  const creds = sat.body.secrets.find((s) => s.agent === "openstack")!;

  for (const name of ["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-005", "stray-node"])
    env.nodes[name] = (await createNode(over.url, { name })).uuid;
  // Matched by serial: Ironic calls it gpu-serial-only, NetBox another name.
  env.nodes["gpu-serial-only"] = (
    await createNode(over.url, { name: "gpu-serial-only", extra: { serial: "SN-SERIAL-9" } })
  ).uuid;
  for (const name of ["hv-001", "hv-002"]) env.nodes[name] = (await createNode(under.url, { name })).uuid;

  const decoy: Server = createServer((_req, res) => (env.decoy.hits++, res.writeHead(500).end()));
  decoy.on("connection", () => env.decoy.hits++);
  await new Promise<void>((r) => decoy.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => decoy.close(r)));
  env.decoy.url = `http://127.0.0.1:${(decoy.address() as { port: number }).port}`;

  env.agentEnv = {
    FM_HUB_URL: hubUrl,
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
  await env.startTheAgent();
  return env;
}

let made = 0;
/**
 * Devices for one test only: known to NetBox at keflavik (GPU nodes served by the overcloud,
 * hypervisors by the undercloud), each with a new Ironic node, returned once reflected.
 */
async function ownNodes(
  env: { db: Database; over: IronicPeer; under: IronicPeer; device(name: string): Promise<Device> },
  kind: "gpu" | "hv",
  count: number,
): Promise<{ name: string; uuid: string }[]> {
  const names = Array.from({ length: count }, () => `own-${kind}-${++made}`);
  const role = kind === "gpu" ? ("gpu-node" as const) : ("hypervisor" as const);
  await seedNetboxOnlyDevices(
    env.db.prisma,
    { slug: "keflavik" },
    names.map((name) => ({ name, role })),
  );
  const ironic = kind === "gpu" ? env.over : env.under;
  const created: { name: string; uuid: string }[] = [];
  for (const name of names) created.push({ name, uuid: (await createNode(ironic.url, { name })).uuid });
  await eventually(async () => {
    for (const n of created) expect((await env.device(n.name)).ironic.nodeUuid).toBe(n.uuid);
  }, 30_000);
  return created;
}

/** Waits for a cycle that started after now: the second one to finish from now on. */
export async function fullCycleAfterNow(a: AgentProcess, store: string): Promise<void> {
  const t = Date.now();
  const first = await a.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === store && (l.time as number) > t,
  );
  await a.waitForLog(
    (l) => l.msg === "reflector cycle done" && l.store === store && (l.time as number) > (first.time as number),
  );
}
