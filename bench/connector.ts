/**
 * The Matrix connector: a real hub, the connector as a process (`npm run connector`) with its own
 * database, and the Kusto/Entra ID test receiver in this process.
 *
 *  1. Throughput: `BENCH_CONNECTOR_DEVICES` (5,000) device.created events already in the feed;
 *     the connector's cursor is set just before them and it starts: records per second from its
 *     start to the receiver's last acknowledgement, against reading the same events bare (the
 *     hub client's readFeed, pages of 500) in the same run.
 *  2. Latency: `BENCH_CONNECTOR_RATE` (100) device changes per second for
 *     `BENCH_CONNECTOR_SECONDS` (20 s), written as the NetBox agent writes them (one view push a
 *     second): hub commit (the event's occurredAt) to the receiver's acknowledgement, p50/p99,
 *     against a bare long-polling feed reader seeing the same events.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { HubClient } from "@fm/clients";
import { agentScope } from "@fm/domain";
import { startConnector } from "@fm/test-support/agents";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";
import { migrate } from "../apps/connectors/src/queue/migrate.ts";
import { QueueStore } from "../apps/connectors/src/queue/store.ts";
import { KustoReceiver } from "../apps/connectors/src/testing/kusto-receiver.ts";
import { migrate as migrateHub } from "../apps/hub/src/db/migrate.ts";
import { bareNetboxItem } from "@fm/test-support/netbox-items";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const until = async (what: () => boolean, ms: number, why: string) => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error(`${why}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

export async function connectorBench(report: Report): Promise<void> {
  const devices = knob("BENCH_CONNECTOR_DEVICES", 5000, 100);
  const rate = knob("BENCH_CONNECTOR_RATE", 100, 20);
  const seconds = knob("BENCH_CONNECTOR_SECONDS", 20, 2);
  const [hubDb, connectorDb, dir] = await Promise.all([
    createTestDatabase(),
    createTestDatabase(),
    mkdtemp(join(tmpdir(), "fm-bench-connector-")),
  ]);
  await migrateHub(hubDb.url);
  const hub = await startHub({ DATABASE_URL: hubDb.url, FM_MIGRATE_ON_START: "false" }, 60_000, { keepLogs: "errors" });
  const receiver = new KustoReceiver();
  await receiver.up();
  const pool = new pg.Pool({ connectionString: connectorDb.url, max: 2 });
  let connector: Awaited<ReturnType<typeof startConnector>> | undefined;
  try {
    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const api = async <T>(method: string, path: string, body?: unknown, token = admin): Promise<T> => {
      const res = await fetch(`${hub.url}${path}`, {
        method,
        headers: { ...bearer(token), "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    const hubClient = new HubClient({ baseUrl: hub.url, token: async () => admin });
    const site = await api<{ id: string }>("POST", "/api/v1/sites/", { slug: "sin1", name: "SIN1" });
    const steadySite = await api<{ id: string }>("POST", "/api/v1/sites/", { slug: "sin2", name: "SIN2" });
    const sat = await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "POST",
      "/api/v1/satellites/",
      { name: "bench-sin1", siteIds: [site.id, steadySite.id], environment: "dev" },
    );
    const nb = sat.secrets.find((x) => x.agent === "netbox")!;
    const nbToken = await clientToken(hub.url, nb.clientId, nb.clientSecret, `fleet.read ${agentScope("netbox")}`);
    const start = (await hubClient.readFeed({ after: "0", limit: 1 })).head;
    const items = Array.from({ length: devices }, (_, i) =>
      bareNetboxItem(`gpu-${String(i).padStart(5, "0")}`, i + 1, { serial: `SN-${i}` }),
    );
    await api(
      "PUT",
      `/api/v1/sites/${site.id}/reflections/netbox`,
      { observedAt: new Date().toISOString(), complete: true, items },
      nbToken,
    );

    // Bare feed reads of the same events: the baseline.
    let t = performance.now();
    let after = start;
    let read = 0;
    for (;;) {
      const page = await hubClient.readFeed({ after, limit: 500 });
      read += page.items.filter((e) => e.type === "device.created").length;
      after = page.nextAfter;
      if (page.items.length === 0) break;
    }
    const bareMs = performance.now() - t;

    // The connector from the same cursor.
    const c = await pool.connect();
    await migrate(c).finally(() => c.release());
    await new QueueStore(pool, "matrix-bench").commitSnapshot({ position: start, head: start, records: [] });
    // The connector's own fleet.read client, as a deployment would make it.
    const client = await api<{ clientSecret: string }>("POST", "/api/v1/clients/", {
      clientId: "matrix-bench",
      scopes: ["fleet.read"],
    });
    await Promise.all([
      writeFile(join(dir, "hub"), client.clientSecret, { mode: 0o600 }),
      writeFile(join(dir, "entra"), receiver.o.clientSecret, { mode: 0o600 }),
    ]);
    t = performance.now();
    connector = await startConnector({
      CONNECTOR_NAME: "matrix-bench",
      CONNECTOR_DATABASE_URL: connectorDb.url,
      CONNECTOR_SITES: "sin1,sin2",
      FM_HUB_URL: hub.url,
      FM_CLIENT_ID: "matrix-bench",
      FM_CLIENT_SECRET_FILE: join(dir, "hub"),
      KUSTO_CLUSTER_URL: receiver.url,
      KUSTO_DATABASE: receiver.o.database,
      KUSTO_TABLE: receiver.o.table,
      KUSTO_MAPPING_NAME: receiver.o.mappingName,
      ENTRA_AUTHORITY: receiver.url,
      ENTRA_TENANT_ID: receiver.o.tenant,
      ENTRA_CLIENT_ID: receiver.o.clientId,
      ENTRA_CLIENT_SECRET_FILE: join(dir, "entra"),
      // Diagnostics: the connector's log level and node flags (e.g. `--cpu-prof`) from the bench's environment.
      ...(process.env.BENCH_CONNECTOR_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_CONNECTOR_LOG_LEVEL } : {}),
      ...(process.env.BENCH_CONNECTOR_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_CONNECTOR_NODE_OPTIONS } : {}),
    });
    const spawnedMs = performance.now() - t;
    await until(() => receiver.stored.size >= devices, 300_000, "every record delivered");
    const connectorMs = performance.now() - t;
    report(
      `connector: ${devices} feed events to Kusto acknowledgements (after start)`,
      `${Math.round(devices / ((connectorMs - spawnedMs) / 1000))}/s`,
      `${((connectorMs - spawnedMs) / 1000).toFixed(2)} s (+ ${(spawnedMs / 1000).toFixed(2)} s process start); ` +
        `bare feed read: ${Math.round(read / (bareMs / 1000))}/s (${(bareMs / 1000).toFixed(2)} s)`,
    );

    // Steady load: every second the NetBox agent's view of sin2 (2 × rate devices) with `rate`
    // of them changed (alternate halves get a new asset tag): `rate` device changes per second,
    // each push one hub transaction, as agents write. Hub commit (the event's occurredAt) to the
    // receiver's acknowledgement, against a bare long-polling reader of the same feed.
    const steadyItems = (tick: number) =>
      Array.from({ length: 2 * rate }, (_, k) => ({
        ...items[0]!,
        netboxId: 100_000 + k,
        name: `steady-${String(k).padStart(4, "0")}`,
        serial: `SN-S-${k}`,
        // Half k % 2 changes on ticks of its parity.
        assetTag: `t${tick - ((tick - (k % 2)) % 2 === 0 ? 0 : 1)}`,
      }));
    await api(
      "PUT",
      `/api/v1/sites/${steadySite.id}/reflections/netbox`,
      { observedAt: new Date().toISOString(), complete: true, items: steadyItems(1) },
      nbToken,
    );
    await until(() => receiver.stored.size >= devices + 2 * rate, 60_000, "sin2 devices delivered");
    const seen = new Map<string, number>();
    const stop = new AbortController();
    const bare = (async () => {
      let cursor = (await hubClient.readFeed({ after: "0", limit: 1 })).head;
      while (!stop.signal.aborted) {
        const page = await hubClient.readFeed({ after: cursor, limit: 1000, wait: 5 });
        const now = Date.now();
        for (const e of page.items)
          if (e.type === "device.updated")
            seen.set(`${e.resourceId}:${e.data.version}`, now - Date.parse(e.occurredAt));
        cursor = page.nextAfter;
      }
    })();
    const before = new Set(receiver.stored.keys());
    const t0 = Date.now();
    let late = 0;
    for (let tick = 2; tick < seconds + 2; tick++) {
      const due = t0 + (tick - 2) * 1000;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      else late++;
      await api(
        "PUT",
        `/api/v1/sites/${steadySite.id}/reflections/netbox`,
        { observedAt: new Date().toISOString(), complete: true, items: steadyItems(tick) },
        nbToken,
      );
    }
    const achieved = (rate * seconds) / ((Date.now() - t0) / 1000);
    await until(() => receiver.stored.size >= before.size + rate * seconds, 120_000, "steady-load records delivered");
    stop.abort();
    await bare.catch(() => {});
    const latencies = [...receiver.stored.entries()]
      .filter(([id]) => !before.has(id))
      .map(([id, r]) => receiver.ackedAt.get(id)! - Date.parse(r.changedAt));
    const bareLatencies = [...seen.values()];
    report(
      `connector: commit -> Kusto ack at ${achieved.toFixed(0)} changes/s, p50 / p99`,
      `${pct(latencies, 50)} / ${pct(latencies, 99)} ms`,
      `bare long-poll reader: ${pct(bareLatencies, 50)} / ${pct(bareLatencies, 99)} ms (${bareLatencies.length} events; ${late} pushes late)`,
    );
  } finally {
    await connector?.stop();
    // Diagnostics: the connector's log lines (JSON, one a line), for timestamps of its pages and deliveries.
    if (process.env.BENCH_CONNECTOR_LOG_FILE && connector)
      await writeFile(process.env.BENCH_CONNECTOR_LOG_FILE, connector.logs.map((l) => JSON.stringify(l)).join("\n"));
    await hub.stop();
    await receiver.down();
    await pool.end();
    await Promise.all([hubDb.drop(), connectorDb.drop(), rm(dir, { recursive: true, force: true })]);
  }
}
