/**
 * The Matrix connector as processes: a real hub on PostgreSQL, `npm run connector` instances with
 * their own database, and the Kusto/Entra ID test receiver (and a webhook receiver) over HTTP.
 * What is asserted is what the customer's side sees: which records arrive, once each, in order
 * per device; and what an operator sees: metrics, the health check's output and exit code.
 * One hub for the file (feed retention an hour; old events are aged in the database), the tests in order.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { agentScope, type DeviceInventoryRecord, type InventoryRecord } from "@fm/domain";
import { startConnector, type AgentProcess } from "@fm/test-support/agents";
import { freePort } from "@fm/test-support/ports";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, REPO_ROOT, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { KustoReceiver } from "../apps/connectors/src/testing/kusto-receiver.ts";
import { WebhookReceiver } from "../apps/connectors/src/testing/webhook-receiver.ts";
import { migrate } from "../apps/connectors/src/queue/migrate.ts";
import { bareNetboxItem } from "@fm/test-support/netbox-items";
import { prng } from "../apps/hub/src/testing/fuzz.ts";

const AGE = "fleet_manager_matrix_oldest_undelivered_event_age_seconds";
let hubDb: TestDatabase;
let connectorDb: TestDatabase;
let hub: HubProcess;
let hubEnv: Record<string, string>;
let admin: string;
let dir: string;
const receiver = new KustoReceiver({ poison: (r) => r.kind === "device" && r.name.startsWith("poison") });
const webhook = new WebhookReceiver(`whsec_${randomBytes(32).toString("base64")}`);
const sites: Record<string, string> = {};
const devices: Record<string, { id: string; name: string }[]> = {};
let netboxToken: string;
let matrix: AgentProcess | undefined;
/** The feed head once the wdc1 changes the stopped webhook instance misses were made. */
let wdc1Head = 0;
/** Every change made through the hub to a sin1 device: what must arrive. */
const made: { deviceId: string; version: number }[] = [];

async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  token = admin,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** The NetBox view of a site, as the NetBox agent pushes it. */
async function pushNetbox(slug: string, names: string[]): Promise<void> {
  const items = names.map((name, i) =>
    bareNetboxItem(name, i + 1 + (slug === "wdc1" ? 1000 : 0), { serial: `SN-${name}` }),
  );
  const res = await api(
    "PUT",
    `/api/v1/sites/${sites[slug]}/reflections/netbox`,
    { observedAt: new Date().toISOString(), complete: true, items },
    netboxToken,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const list = await api<{ items: { id: string; name: string }[] }>("GET", `/api/v1/devices/?site=${slug}&limit=1000`);
  // Operator changes go to the healthy devices; the poison one has a test of its own.
  devices[slug] = list.body.items.filter((d) => !d.name.startsWith("poison"));
}

/** An operator change to a device (its notes): one device.updated event. */
async function change(slug: string, i: number): Promise<number> {
  const d = devices[slug]![i % devices[slug]!.length]!;
  const res = await api<{ version: number }>("PATCH", `/api/v1/devices/${d.id}`, {
    notes: `change ${randomBytes(4).toString("hex")}`,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  if (slug === "sin1") made.push({ deviceId: d.id, version: res.body.version });
  return res.body.version;
}

const connectorEnv = (name: string, extra: Record<string, string>): Record<string, string> => ({
  CONNECTOR_NAME: name,
  CONNECTOR_DATABASE_URL: connectorDb.url,
  FM_HUB_URL: hub.url,
  // Each connector instance has its own fleet.read client, made through the clients API.
  FM_CLIENT_ID: name,
  FM_CLIENT_SECRET_FILE: join(dir, `${name}.secret`),
  CONNECTOR_FEED_WAIT_S: "5",
  CONNECTOR_BATCH_SIZE: "10",
  CONNECTOR_BACKOFF_BASE_MS: "200",
  CONNECTOR_BACKOFF_MAX_S: "2",
  // A feed read not done in wait + 2 × this is a stall the freshness gauge counts (9 s here).
  CONNECTOR_HTTP_TIMEOUT_MS: "2000",
  ...extra,
});
const kustoEnv = (name = "matrix-prod", to = receiver, entraSecret = "entra-secret") =>
  connectorEnv(name, {
    CONNECTOR_SITES: "sin1",
    CONNECTOR_SINK: "kusto",
    KUSTO_CLUSTER_URL: to.url,
    KUSTO_DATABASE: to.o.database,
    KUSTO_TABLE: to.o.table,
    KUSTO_MAPPING_NAME: to.o.mappingName,
    ENTRA_AUTHORITY: to.url,
    ENTRA_TENANT_ID: to.o.tenant,
    ENTRA_CLIENT_ID: to.o.clientId,
    ENTRA_CLIENT_SECRET_FILE: join(dir, entraSecret),
  });
const webhookEnv = () =>
  connectorEnv("matrix-wdc1-prod", {
    CONNECTOR_SITES: "wdc1",
    CONNECTOR_SINK: "webhook",
    WEBHOOK_URL: webhook.url,
    WEBHOOK_SECRET_FILE: join(dir, "webhook-secret"),
  });

async function until(what: () => boolean | Promise<boolean>, ms: number, why: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`${why}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const deviceRecords = (r: { stored: Map<string, InventoryRecord> }) =>
  [...r.stored.values()].filter((x): x is DeviceInventoryRecord => x.kind === "device");
const arrived = (c: { deviceId: string; version: number }) =>
  deviceRecords(receiver).some((r) => r.deviceId === c.deviceId && r.version === c.version);

const hubMetrics = async () => (await fetch(`${hub.url}/metrics`)).text();
const gauge = (text: string, name: string) =>
  Number(
    text
      .split("\n")
      .find((l) => l.startsWith(name + " "))
      ?.split(" ")[1],
  );

/** `npm run connector:check`, its output and exit code. */
function check(name: string, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", "apps/connectors/src/check-cli.ts", "--connector", name, ...args],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, CONNECTOR_DATABASE_URL: connectorDb.url },
      },
    );
    let out = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (out += d.toString()));
    p.on("close", (code) => resolve({ code, out }));
  });
}

/** A new Kusto instance of sin1 with its own fleet.read client and receiver: it starts from a snapshot. */
async function freshInstance(name: string): Promise<{ rcv: KustoReceiver; env: Record<string, string> }> {
  const res = await api<{ clientSecret: string }>("POST", "/api/v1/clients/", {
    clientId: name,
    scopes: ["fleet.read"],
    description: "Matrix connector instance",
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const rcv = new KustoReceiver();
  await Promise.all([
    writeFile(join(dir, `${name}.secret`), res.body.clientSecret, { mode: 0o600 }),
    writeFile(join(dir, `${name}-entra-secret`), rcv.o.clientSecret, { mode: 0o600 }),
    rcv.up(),
  ]);
  return { rcv, env: kustoEnv(name, rcv, `${name}-entra-secret`) };
}

type Change = { deviceId: string; version: number };

/** Two operators changing sin1 devices (disjoint halves) until stopped: commits all the while. */
function writers(): { count: () => number; stop: () => Promise<Change[]> } {
  const written: Change[] = [];
  let stopping = false;
  const loops = [0, 1].map(async (w) => {
    for (let i = w; !stopping; i += 2) {
      const d = devices.sin1![i % devices.sin1!.length]!;
      const res = await api<{ version: number }>("PATCH", `/api/v1/devices/${d.id}`, {
        notes: `writer ${w} ${randomBytes(4).toString("hex")}`,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      written.push({ deviceId: d.id, version: res.body.version });
      await new Promise((r) => setTimeout(r, 40));
    }
  });
  return {
    count: () => written.length,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return written;
    },
  };
}

/** Each sin1 device's version at the hub now. */
async function hubVersions(): Promise<Map<string, number>> {
  const list = await api<{ items: { id: string; version: number }[] }>("GET", "/api/v1/devices/?site=sin1&limit=1000");
  return new Map(list.body.items.map((d) => [d.id, d.version]));
}

/**
 * Waits until `rcv` holds every sin1 device's state at the hub, then checks that what it was
 * sent for each device, in the order records first arrived, is the hub's sequence of that
 * device's states: the snapshot's first, then versions rising by one up to the hub's (no gap, no
 * state twice under two record ids, no older state after a newer one); that every change written
 * after the snapshot arrived; and that every repeat was a record id already stored.
 */
async function expectHubSequences(rcv: KustoReceiver, written: Change[]): Promise<void> {
  const hubNow = await hubVersions();
  await until(
    () =>
      devices.sin1!.every((d) => deviceRecords(rcv).some((r) => r.deviceId === d.id && r.version === hubNow.get(d.id))),
    90_000,
    "every device's state at the hub delivered",
  );
  const firsts = [...new Set(rcv.arrivals)].map((id) => rcv.stored.get(id)!);
  expect(firsts).toHaveLength(rcv.stored.size);
  expect(rcv.arrivals.length - firsts.length).toBe(rcv.duplicates);
  const snapshotVersion = new Map<string, number>();
  for (const d of devices.sin1!) {
    const mine = firsts.filter((r): r is DeviceInventoryRecord => r.kind === "device" && r.deviceId === d.id);
    expect(mine[0]?.recordId, d.name).toContain(":snapshot-");
    const first = mine[0]!.version;
    snapshotVersion.set(d.id, first);
    expect(
      mine.map((r) => r.version),
      d.name,
    ).toEqual(Array.from({ length: hubNow.get(d.id)! - first + 1 }, (_, i) => first + i));
  }
  const after = written.filter((c) => c.version > snapshotVersion.get(c.deviceId)!);
  expect(after.length).toBeGreaterThan(0);
  const got = new Set(deviceRecords(rcv).map((r) => `${r.deviceId}:${r.version}`));
  expect(after.filter((c) => !got.has(`${c.deviceId}:${c.version}`))).toEqual([]);
}

beforeAll(async () => {
  [hubDb, connectorDb, dir] = await Promise.all([
    createTestDatabase(inject("templateDatabase")),
    createTestDatabase(),
    mkdtemp(join(tmpdir(), "fm-connector-")),
  ]);
  hubEnv = { DATABASE_URL: hubDb.url, PORT: String(await freePort()), FM_FEED_RETENTION_S: "3600" };
  hub = await startHub(hubEnv);
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  for (const slug of ["sin1", "wdc1"]) {
    const res = await api<{ id: string }>("POST", "/api/v1/sites/", { slug, name: slug.toUpperCase() });
    expect(res.status).toBe(201);
    sites[slug] = res.body.id;
  }
  const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
    "POST",
    "/api/v1/satellites/",
    {
      name: "sys1-sin1",
      siteIds: [sites.sin1, sites.wdc1],
      environment: "dev",
    },
  );
  const nb = sat.body.secrets.find((s) => s.agent === "netbox")!;
  netboxToken = await clientToken(hub.url, nb.clientId, nb.clientSecret, `fleet.read ${agentScope("netbox")}`);
  await pushNetbox(
    "sin1",
    Array.from({ length: 20 }, (_, i) => `sin1-gpu-${String(i).padStart(3, "0")}`),
  );
  await pushNetbox(
    "wdc1",
    Array.from({ length: 5 }, (_, i) => `wdc1-gpu-${i}`),
  );
  await Promise.all(
    ["matrix-prod", "matrix-wdc1-prod"].map(async (clientId) => {
      const res = await api<{ clientSecret: string }>("POST", "/api/v1/clients/", {
        clientId,
        scopes: ["fleet.read"],
        description: "Matrix connector instance",
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await writeFile(join(dir, `${clientId}.secret`), res.body.clientSecret, { mode: 0o600 });
    }),
  );
  await Promise.all([
    writeFile(join(dir, "entra-secret"), receiver.o.clientSecret, { mode: 0o600 }),
    writeFile(join(dir, "webhook-secret"), webhook.secret, { mode: 0o600 }),
    receiver.up(),
    webhook.start(),
  ]);
}, 120_000);

afterAll(async () => {
  await matrix?.stop("SIGKILL");
  await hub?.stop("SIGKILL");
  await Promise.all([receiver.down(), webhook.stop()]);
  await Promise.all([hubDb?.drop(), connectorDb?.drop(), dir && rm(dir, { recursive: true, force: true })]);
}, 60_000);

describe("the Matrix connector", () => {
  it("starts from the hub's snapshot: every device of its site once, none of another site", async () => {
    matrix = await startConnector(kustoEnv());
    await until(() => deviceRecords(receiver).length === 20, 30_000, "snapshot delivered");
    expect(deviceRecords(receiver).every((r) => r.siteSlug === "sin1" && r.recordId.includes(":snapshot-"))).toBe(true);
    // Each sin1 device exactly once (no device twice under two ids, none left out), no wdc1 device.
    expect(
      deviceRecords(receiver)
        .map((r) => r.deviceId)
        .sort(),
    ).toEqual(devices.sin1!.map((d) => d.id).sort());
    expect(
      [...receiver.stored.values()].filter((r) => r.kind === "site").map((r) => (r as { siteSlug: string }).siteSlug),
    ).toEqual(["sin1"]);
    await until(async () => (await fetch(`${matrix!.metricsUrl}/readyz`)).status === 200, 10_000, "ready");
    const ok = await check("matrix-prod");
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toContain("connector matrix-prod: WITHIN SLA");
  }, 60_000);

  it("killed (SIGKILL) mid-batch and restarted: every change arrives, in order per device, repeats only as the same record id", async () => {
    // A backlog (the receiver away while the changes are made), then a slow receiver: the kill
    // lands while a batch is in flight, with most of the backlog still queued.
    await receiver.down();
    for (let i = 0; i < 100; i++) await change("sin1", i);
    receiver.ingestDelayMs = 400;
    const before = receiver.stored.size;
    await receiver.up();
    await until(() => receiver.stored.size >= before + 20 && receiver.inFlight > 0, 30_000, "deliveries under way");
    expect(await matrix!.stop("SIGKILL")).toBe("SIGKILL");
    expect(made.filter(arrived).length).toBeLessThan(100);
    receiver.ingestDelayMs = 0;
    matrix = await startConnector(kustoEnv());
    await until(() => made.every(arrived), 60_000, "every change delivered after the restart");
    // The batch in flight at the kill was stored but never acknowledged: sent again, same ids.
    expect(receiver.duplicates).toBeGreaterThan(0);
    // No change became two different records: duplicates only as a repeated id, which the receiver dropped.
    const keys = deviceRecords(receiver).map((r) => `${r.deviceId}:${r.version}`);
    expect(new Set(keys).size).toBe(keys.length);
    // In order per device: versions rise in the order the records first arrived.
    const firsts = [...new Set(receiver.arrivals)].map((id) => receiver.stored.get(id)!);
    for (const d of devices.sin1!) {
      const versions = firsts
        .filter((r) => r.kind === "device" && r.deviceId === d.id)
        .map((r) => (r as DeviceInventoryRecord).version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
    }
  }, 120_000);

  it("a webhook instance for another site ships its own site, signed, then stops cleanly", async () => {
    const wdc1 = await startConnector(webhookEnv());
    await until(() => deviceRecords(webhook).length === 5, 30_000, "wdc1 snapshot delivered");
    expect(deviceRecords(webhook).every((r) => r.siteSlug === "wdc1")).toBe(true);
    expect(webhook.badSignatures).toBe(0);
    expect(await wdc1.stop("SIGTERM")).toBe(0);
    // Changes it will not read before the hub's retention drops them (a later test).
    for (let i = 0; i < 3; i++) await change("wdc1", i);
    wdc1Head = gauge(await hubMetrics(), "fleet_manager_feed_head_position");
    expect(wdc1Head).toBeGreaterThan(0);
  }, 60_000);

  it("receiver down 60 s: the oldest-undelivered age grows past the check's SLA, then recovers and nothing is lost", async () => {
    await receiver.down();
    for (let i = 0; i < 5; i++) await change("sin1", i);
    await new Promise((r) => setTimeout(r, 60_000));
    expect(await matrix!.metric(AGE, { connector: "matrix-prod" })).toBeGreaterThanOrEqual(55);
    const breach = await check("matrix-prod", "--sla-s", "30");
    expect(breach.code, breach.out).toBe(1);
    expect(breach.out).toContain("SLA BREACH");
    expect(breach.out).toContain("last error: sink_unavailable");
    await receiver.up();
    await until(async () => (await matrix!.metric(AGE, { connector: "matrix-prod" })) === 0, 30_000, "queue drained");
    expect(made.every(arrived)).toBe(true);
  }, 120_000);

  it("hub restarted: the freshness gauge counts the time it cannot read, and the connector resumes", async () => {
    expect(await hub.stop()).toBe(0);
    await matrix!.waitForLog((l) => l.msg === "feed read failed" && l.reason === "hub_unavailable", 30_000);
    // The queue is empty, yet what the hub commits meanwhile would go unread: the alert's gauge grows.
    await until(
      async () => ((await matrix!.metric(AGE, { connector: "matrix-prod" })) ?? 0) > 0,
      30_000,
      "freshness gauge counting the stalled reader",
    );
    expect(await matrix!.metric("fleet_manager_connector_undelivered_records")).toBe(0);
    hub = await startHub(hubEnv);
    admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const v = await change("sin1", 7);
    await until(
      () => arrived({ deviceId: devices.sin1![7]!.id, version: v }),
      30_000,
      "change after the restart delivered",
    );
    await until(async () => (await matrix!.metric(AGE, { connector: "matrix-prod" })) === 0, 30_000, "fresh again");
  }, 120_000);

  it("a cursor older than the hub keeps: 410, a new snapshot, and the state the missed changes left", async () => {
    // The hub keeps events at least an hour: the wdc1 changes are aged past it, as an hour
    // passing would, and the next purge (every minute) drops them.
    const hubSql = new pg.Client({ connectionString: hubDb.url });
    await hubSql.connect();
    await hubSql
      .query("UPDATE inventory_events SET occurred_at = now() - interval '2 hours' WHERE position <= $1", [wdc1Head])
      .finally(() => hubSql.end());
    const versions = await Promise.all(
      devices
        .wdc1!.slice(0, 3)
        .map(async (d) => (await api<{ version: number }>("GET", `/api/v1/devices/${d.id}`)).body.version),
    );
    await until(
      async () => gauge(await hubMetrics(), "fleet_manager_feed_oldest_position") > wdc1Head,
      90_000,
      "hub purged the old events",
    );
    const wdc1 = await startConnector(webhookEnv());
    try {
      await wdc1.waitForLog((l) => l.msg === "snapshot queued" && l.reason === "cursor_expired", 30_000);
      for (const [i, d] of devices.wdc1!.slice(0, 3).entries())
        await until(
          () => deviceRecords(webhook).some((r) => r.deviceId === d.id && r.version === versions[i]),
          30_000,
          "resnapshot delivered",
        );
      expect(await wdc1.metric("fleet_manager_connector_snapshots_total", { reason: "cursor_expired" })).toBe(1);
    } finally {
      await wdc1.stop();
    }
  }, 150_000);

  it("a record Kusto refuses is dead-lettered with its reason while the rest flows", async () => {
    // The same view as before (same NetBox ids for the same names), plus one device.
    await pushNetbox("sin1", [...devices.sin1!.map((d) => d.name).sort(), "poison-gpu-999"]);
    const after = [await change("sin1", 1), await change("sin1", 2)];
    await until(() => made.every(arrived), 30_000, "the others delivered");
    expect(after).toHaveLength(2);
    await until(
      async () => (await matrix!.metric("fleet_manager_connector_dead_letters")) === 1,
      30_000,
      "dead letter counted",
    );
    const out = await check("matrix-prod");
    expect(out.code, out.out).toBe(0);
    expect(out.out).toContain("dead letters: 1");
    expect(out.out).toMatch(/device:[0-9a-f-]+ matrix-prod:\d+:device:[0-9a-f-]+: 400 BadRequest_InvalidBlob/);
    const health = (await (await fetch(`${matrix!.metricsUrl}/healthz`)).json()) as { deadLetters: number };
    expect(health.deadLetters).toBe(1);
  }, 60_000);
  it("killed (SIGKILL) again and again at varied moments while writers commit: nothing lost, nothing doubled but a record id", async () => {
    const given = process.env.CONNECTOR_KILL_SEED;
    const seed = given ? Number(given) : randomBytes(4).readUInt32BE(0);
    console.log(`connector kill schedule: CONNECTOR_KILL_SEED=${seed}`);
    const rand = prng(seed);
    const name = "matrix-chaos";
    const inst = await freshInstance(name);
    // The moments, each observed in the process rather than guessed: the process's statement
    // blocked on a lock this test holds (pg_blocking_pids), or a request at the receiver.
    type Moment = "snapshot commit" | "feed page commit" | "batch in flight" | "batch acknowledged" | "anywhere";
    const later: Moment[] = ["feed page commit", "batch in flight", "batch acknowledged", "anywhere"];
    later.push(later[Math.floor(rand() * 4)]!, later[Math.floor(rand() * 4)]!);
    for (let i = later.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [later[i], later[j]] = [later[j]!, later[i]!];
    }
    const moments: Moment[] = ["snapshot commit", ...later];
    const hold = new pg.Client({ connectionString: connectorDb.url });
    const watch = new pg.Client({ connectionString: connectorDb.url });
    await Promise.all([hold.connect(), watch.connect()]);
    // The connector's tables, as its first start makes them: this test holds rows in them.
    await migrate(hold);
    const holdPid = (await hold.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const blockedOn = async (pattern: RegExp) =>
      (
        await watch.query<{ query: string }>(
          "SELECT query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
          [holdPid],
        )
      ).rows.some((r) => pattern.test(r.query));
    const count = async (table: string) =>
      (await watch.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE connector = $1`, [name]))
        .rows[0]!.n;
    /**
     * Locks the rows `lock` selects and waits until the connector's statement matching `waiting`
     * waits on them. The rows locked may be gone a moment later (a batch deleted just before the
     * lock, the queue then refilled with new rows): then it lets go and locks again.
     */
    const holdUntilBlocked = async (lock: string, waiting: RegExp): Promise<true> => {
      for (let attempt = 1; ; attempt++) {
        await until(async () => (await count(/connector_(\w+)/.exec(lock)![0])) > 0, 30_000, "rows to lock");
        await hold.query("BEGIN");
        await hold.query(lock, [name]);
        try {
          await until(() => blockedOn(waiting), 3_000, `${String(waiting)} waiting on the lock`);
          return true;
        } catch (err) {
          await hold.query("ROLLBACK");
          if (attempt === 10) throw err;
        }
      }
    };
    const w = writers();
    const landed: string[] = [];
    try {
      for (const moment of moments) {
        inst.rcv.ingestDelayMs = moment === "batch in flight" ? 300 : 0;
        let holding = false;
        if (moment === "snapshot commit") {
          // The state row the snapshot's transaction inserts, held uncommitted: its commit waits.
          await hold.query("BEGIN");
          await hold.query(
            "INSERT INTO connector_state (connector, position, head, caught_up_at) VALUES ($1, 0, 0, now())",
            [name],
          );
          holding = true;
        }
        const c = await startConnector(inst.env);
        const before = inst.rcv.arrivals.length;
        if (moment === "snapshot commit") {
          await until(() => blockedOn(/INSERT INTO connector_state/), 30_000, "snapshot commit waiting");
        } else if (moment === "feed page commit") {
          await until(async () => (await count("connector_state")) === 1, 30_000, "cursor stored");
          holding = await holdUntilBlocked(
            "SELECT 1 FROM connector_state WHERE connector = $1 FOR UPDATE",
            /UPDATE connector_state\s+SET position/,
          );
        } else if (moment === "batch in flight") {
          await until(() => inst.rcv.inFlight > 0, 30_000, "a batch in flight");
        } else if (moment === "batch acknowledged") {
          // The queued rows locked: the sink takes a batch, the process cannot delete it.
          holding = await holdUntilBlocked(
            "SELECT 1 FROM connector_queue WHERE connector = $1 FOR UPDATE",
            /DELETE FROM connector_queue/,
          );
        } else {
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 1500)));
        }
        expect(await c.stop("SIGKILL")).toBe("SIGKILL");
        if (holding) await hold.query("ROLLBACK");
        landed.push(`${moment} (after ${inst.rcv.arrivals.length - before} records arrived)`);
        // The snapshot killed before its commit left nothing to deliver.
        if (moment === "snapshot commit") expect(inst.rcv.stored.size).toBe(0);
      }
      inst.rcv.ingestDelayMs = 0;
      const c = await startConnector(inst.env);
      const written = await w.stop();
      try {
        await expectHubSequences(inst.rcv, written);
      } finally {
        await c.stop();
      }
      console.log(
        `connector kills (seed ${seed}): ${landed.join("; ")}; ${written.length} changes written, ` +
          `${inst.rcv.stored.size} records stored, ${inst.rcv.duplicates} repeats dropped by record id`,
      );
    } finally {
      await w.stop();
      await hold.end();
      await watch.end();
      await inst.rcv.down();
    }
  }, 180_000);

  it("a fresh instance starting while writers commit: each device's states arrive once each, in order, from the snapshot on", async () => {
    const inst = await freshInstance("matrix-fresh");
    const w = writers();
    try {
      await until(() => w.count() >= 20, 30_000, "writers under way");
      const c = await startConnector(inst.env);
      try {
        await c.waitForLog((l) => l.msg === "snapshot queued" && l.reason === "start", 30_000);
        const atSnapshot = w.count();
        await until(() => w.count() >= atSnapshot + 60, 60_000, "changes after the snapshot");
        await expectHubSequences(inst.rcv, await w.stop());
        expect(inst.rcv.duplicates).toBe(0);
      } finally {
        await c.stop();
      }
    } finally {
      await w.stop();
      await inst.rcv.down();
    }
  }, 150_000);
});
