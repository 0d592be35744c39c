/**
 * Reflection benchmarks, each compared in the same run with a baseline:
 *  (a) a full OpenStack agent cycle (list Ironic → cordon check → push → hub apply) for 2,000
 *      real Ironic nodes: first load, unchanged, and with 1 % changed; baseline: the Ironic
 *      list alone, which no cycle can beat;
 *  (b) hub apply time of a pushed view of 10,000 and 50,000 devices with 1 % changed, against
 *      a bare SQL upsert of the same rows (INSERT … ON CONFLICT … DO UPDATE … WHERE … IS
 *      DISTINCT FROM …) into a table shaped like the observed Ironic fields, which also stamps
 *      every row it saw with the observation time as the hub must; after each round both
 *      sides must hold the same rows, or the benchmark stops;
 *  (c) GET /api/v1/devices/?limit=100 on the hub against Ironic's own
 *      GET /v1/nodes?detail=true&limit=100, with the same 2,000 nodes.
 */
import { randomUUID } from "node:crypto";
import autocannon from "autocannon";
import { pino } from "pino";
import pg from "pg";
import { IronicClient } from "@fm/clients";
import { agentHubClient } from "./agent-client.ts";
import type { IronicItem } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { ironicReflector } from "../apps/satellite-agents/src/openstack-agent/agent.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import type { AgentContext } from "../apps/satellite-agents/src/runtime/agent.ts";
import { seedNetboxOnlyDevices } from "../apps/hub/src/testing/inventory.ts";
import {
  createNodesBulk,
  setMaintenance,
  clearMaintenance,
  startIronic,
  IRONIC_API_VERSION,
} from "@fm/test-support/ironic";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";
import { CONNECTIONS, DURATION_S, ROUNDS, WARMUP_S, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
/** Rounds of the apply comparison (b), each hub push followed by the baseline's: a shared machine needs several. */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** A hub on a fresh migrated database with `devices` NetBox-only devices at site "bench", and an openstack agent's credentials. */
async function benchHub(devices: number) {
  const db = await createTestDatabase();
  await migrate(db.url);
  const data = createDatabase(db.url, { poolMax: 2 });
  const names = Array.from({ length: devices }, (_, i) => `bench-gpu-${String(i + 1).padStart(5, "0")}`);
  const siteId = await seedNetboxOnlyDevices(
    data.prisma,
    { slug: "bench" },
    names.map((name) => ({ name, role: "gpu-node" as const })),
  );
  await data.prisma.$executeRawUnsafe("ANALYZE");
  // The production log level (info: two lines per request), kept unparsed by this process.
  // BENCH_HUB_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": profile the hub (written when it stops).
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, {
    keepLogs: "errors",
    nodeArgs: process.env.BENCH_HUB_NODE_ARGS?.split(" ").filter(Boolean),
  });
  const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const client = await agentHubClient(hub.url, admin, {
    satellite: "bench-sat",
    siteIds: [siteId],
    agent: "openstack",
  });
  return {
    db,
    data,
    hub,
    admin,
    names,
    siteId,
    client,
    close: async () => {
      await hub.stop();
      await data.close();
      await db.drop();
    },
  };
}

/** Nodes of the Ironic cycle part, in Ironic and in the hub. */
const IRONIC_NODES = knob("BENCH_IRONIC_NODES", 2000, 20);
const NODES_LABEL = `${IRONIC_NODES.toLocaleString("en")} nodes`;

export async function ironicCycle(report: Report): Promise<void> {
  const ironic = await startIronic();
  const env = await benchHub(IRONIC_NODES);
  try {
    const t0 = performance.now();
    const nodes = await createNodesBulk(ironic.url, env.names, 16);
    report(
      `(setup) create ${NODES_LABEL} in Ironic`,
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
      "16 concurrent POST /v1/nodes",
    );

    const log = pino({ level: "silent" });
    const ctx = {
      config: { IRONIC_PAGE_SIZE: 1000, FM_CORDON_SYNC: true },
      log,
      hub: env.client,
      site: { id: env.siteId, slug: "bench" },
      satellite: "bench-sat",
      metrics: createAgentMetrics({ agent: "openstack", site: "bench", satellite: "bench-sat" }),
      signal: new AbortController().signal,
    } as unknown as AgentContext<{ IRONIC_PAGE_SIZE: number; FM_CORDON_SYNC: boolean }>;
    const ironicClient = new IronicClient({ endpoint: ironic.url });
    const spec = ironicReflector(ctx, "overcloud", ironicClient);
    const signal = new AbortController().signal;
    const cycle = async () => {
      const c0 = performance.now();
      let items = await spec.list(signal);
      const c1 = performance.now();
      items = await spec.reconcile!(items, signal);
      const c2 = performance.now();
      const result = await spec.push(items, new Date(), signal);
      const c3 = performance.now();
      return { list: c1 - c0, reconcile: c2 - c1, push: c3 - c2, total: c3 - c0, result };
    };
    const first = await cycle();
    report(
      `(a) full cycle, ${NODES_LABEL}, first load`,
      ms(first.total),
      `list ${ms(first.list)}, cordon check ${ms(first.reconcile)}, push+apply ${ms(first.push)}; updated ${String(first.result.updated)}`,
    );
    const steady = [await cycle(), await cycle(), await cycle()];
    report(
      `(a) full cycle, ${NODES_LABEL}, nothing changed (median of 3)`,
      ms(median(steady.map((c) => c.total))),
      `push+apply ${ms(median(steady.map((c) => c.push)))}; updated ${String(steady[0]!.result.updated)}`,
    );
    const changed: Awaited<ReturnType<typeof cycle>>[] = [];
    const step = Math.max(1, Math.floor(IRONIC_NODES / 100));
    for (let round = 0; round < 3; round++) {
      for (const n of nodes.slice(round * step, (round + 1) * step))
        await setMaintenance(ironic.url, n.uuid, `bench round ${round}`);
      changed.push(await cycle());
    }
    report(
      `(a) full cycle, ${NODES_LABEL}, 1 % changed (median of 3)`,
      ms(median(changed.map((c) => c.total))),
      `list ${ms(median(changed.map((c) => c.list)))}, push+apply ${ms(median(changed.map((c) => c.push)))}; updated ${String(changed[0]!.result.updated)}`,
    );
    const lists: number[] = [];
    for (let i = 0; i < 3; i++) {
      const l0 = performance.now();
      await ironicClient.listNodes({ limit: 1000 });
      lists.push(performance.now() - l0);
    }
    report(
      "(a) baseline: the Ironic list alone (median of 3)",
      ms(median(lists)),
      `cycle / list: ${(median(changed.map((c) => c.total)) / median(lists)).toFixed(2)}×`,
    );
    for (const n of nodes.slice(0, 60)) await clearMaintenance(ironic.url, n.uuid);

    // (c) reads: the hub's device list against Ironic's node list, same 2,000 nodes.
    await cycle();
    const hubUrl = `${env.hub.url}/api/v1/devices/?limit=100`;
    const ironicUrl = `${ironic.url}/v1/nodes?detail=true&limit=100`;
    const run = (url: string, headers: Record<string, string>, duration = DURATION_S) =>
      autocannon({ url, connections: CONNECTIONS, duration, headers });
    const hubHeaders = bearer(env.admin);
    const ironicHeaders = { "x-openstack-ironic-api-version": IRONIC_API_VERSION };
    const pages = await samePages(env.hub.url, hubHeaders, ironic.url, ironicHeaders);
    await run(hubUrl, hubHeaders, WARMUP_S);
    await run(ironicUrl, ironicHeaders, WARMUP_S);
    const h = await run(hubUrl, hubHeaders);
    const i = await run(ironicUrl, ironicHeaders);
    if (h.non2xx || i.non2xx || h.errors || i.errors)
      throw new Error(`errors under load: hub ${h.non2xx}/${h.errors}, ironic ${i.non2xx}/${i.errors}`);
    report(
      "(c) hub GET /api/v1/devices/?limit=100 req/s",
      h.requests.average.toFixed(0),
      `p99 ${h.latency.p99} ms, ${CONNECTIONS} connections, ${DURATION_S} s, ${IRONIC_NODES.toLocaleString("en")} devices`,
    );
    report(
      "(c) Ironic GET /v1/nodes?detail=true&limit=100 req/s",
      i.requests.average.toFixed(0),
      `p99 ${i.latency.p99} ms, same ${NODES_LABEL} (one ironic process)`,
    );
    report("(c) hub / Ironic throughput", `${((h.requests.average / i.requests.average) * 100).toFixed(0)} %`);
    report(
      "(c) bytes per page of 100, hub / Ironic",
      `${pages.hubBytes} / ${pages.ironicBytes}`,
      `both listed the same ${NODES_LABEL} (checked, paging to the end)`,
    );
  } finally {
    await env.close();
    await ironic.stop();
  }
}

/**
 * Pages through both lists, 100 at a time, and checks that they hold the same nodes (the hub's
 * devices by their Ironic node uuid); returns the mean size of a page on each side.
 */
async function samePages(
  hubUrl: string,
  hubHeaders: Record<string, string>,
  ironicUrl: string,
  ironicHeaders: Record<string, string>,
): Promise<{ hubBytes: number; ironicBytes: number }> {
  const hub: string[] = [];
  const ironic: string[] = [];
  let hubBytes = 0;
  let ironicBytes = 0;
  let hubPages = 0;
  let ironicPages = 0;
  for (let cursor: string | null = ""; cursor !== null; hubPages++) {
    const text: string = await (
      await fetch(`${hubUrl}/api/v1/devices/?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: hubHeaders })
    ).text();
    hubBytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { items: { ironic: { nodeUuid: string | null } }[]; nextCursor: string | null };
    hub.push(...page.items.map((d) => String(d.ironic.nodeUuid)));
    cursor = page.nextCursor;
  }
  for (let marker: string | undefined = ""; marker !== undefined; ironicPages++) {
    const text: string = await (
      await fetch(`${ironicUrl}/v1/nodes?detail=true&limit=100${marker ? `&marker=${marker}` : ""}`, {
        headers: ironicHeaders,
      })
    ).text();
    ironicBytes += Buffer.byteLength(text);
    const nodes: { uuid: string }[] = (JSON.parse(text) as { nodes: { uuid: string }[] }).nodes;
    ironic.push(...nodes.map((n) => n.uuid));
    marker = nodes.length === 100 ? nodes.at(-1)!.uuid : undefined;
  }
  const a = [...hub].sort().join();
  const b = [...ironic].sort().join();
  if (a !== b) throw new Error(`the hub listed ${hub.length} nodes, Ironic ${ironic.length}, not the same ones`);
  return { hubBytes: Math.round(hubBytes / hubPages), ironicBytes: Math.round(ironicBytes / ironicPages) };
}

const COLUMNS = [
  "provision_state",
  "target_provision_state",
  "power_state",
  "maintenance",
  "maintenance_reason",
  "last_error",
  "fault",
] as const;
const TYPED = COLUMNS.map((c) => `${c} ${c === "maintenance" ? "boolean" : "text"}`).join(", ");

/**
 * The baseline: what the hub must do at the least, in bare SQL, in one transaction: write the
 * rows that changed (INSERT … ON CONFLICT … DO UPDATE … WHERE … IS DISTINCT FROM …) and stamp
 * every row it saw with the view's observation time, as the hub stamps every device it saw.
 */
async function bareUpsert(sql: pg.Client, view: IronicItem[], observedAt: Date) {
  const rows = view.map((i) => ({
    uuid: i.uuid,
    name: i.name,
    provision_state: i.provisionState,
    target_provision_state: i.targetProvisionState,
    power_state: i.powerState,
    maintenance: i.maintenance,
    maintenance_reason: i.maintenanceReason,
    last_error: i.lastError,
    fault: i.fault,
  }));
  const t0 = performance.now();
  await sql.query("BEGIN");
  const written = await sql.query(
    `INSERT INTO bench_ironic_nodes AS t (uuid, name, ${COLUMNS.join(", ")}, observed_at)
     SELECT x.uuid, x.name, ${COLUMNS.map((c) => `x.${c}`).join(", ")}, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(uuid uuid, name text, ${TYPED})
     ON CONFLICT (uuid) DO UPDATE SET name = EXCLUDED.name, ${COLUMNS.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}
     WHERE (t.name, ${COLUMNS.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM (EXCLUDED.name, ${COLUMNS.map((c) => `EXCLUDED.${c}`).join(", ")})`,
    [JSON.stringify(rows), observedAt],
  );
  await sql.query("UPDATE bench_ironic_nodes SET observed_at = $1 WHERE uuid = ANY($2::uuid[])", [
    observedAt,
    rows.map((r) => r.uuid),
  ]);
  await sql.query("COMMIT");
  return { ms: performance.now() - t0, rows: written.rowCount ?? 0 };
}

/**
 * Both sides must hold the same rows after a round: each device's Ironic fields as pushed, and
 * every row stamped with the round's observation time. Throws (the benchmark stops) otherwise.
 */
async function checkSameRows(sql: pg.Client, siteId: string, observedAt: Date): Promise<void> {
  const hub = await sql.query<{ name: string; v: string; at: Date | null }>(
    `SELECT name, ${COLUMNS.map((c) => `coalesce(ironic_${c}::text, '')`).join(" || '|' || ")} AS v, o.ironic_observed_at AS at
       FROM devices d JOIN device_observations o ON o.device_id = d.id WHERE d.site_id = $1::uuid ORDER BY name`,
    [siteId],
  );
  const base = await sql.query<{ name: string; v: string; at: Date | null }>(
    `SELECT name, ${COLUMNS.map((c) => `coalesce(${c}::text, '')`).join(" || '|' || ")} AS v, observed_at AS at
       FROM bench_ironic_nodes ORDER BY name`,
  );
  const show = (r: { name: string; v: string; at: Date | null }) => `${r.name} ${r.v} ${r.at?.toISOString()}`;
  const h = hub.rows.map(show);
  const b = base.rows.map(show);
  const differ = h.filter((x, i) => x !== b[i]);
  if (h.length !== b.length || differ.length)
    throw new Error(
      `hub and baseline rows differ (${h.length} vs ${b.length} rows; first: ${differ[0]} vs ${b[h.indexOf(differ[0]!)]})`,
    );
  if (hub.rows.some((r) => r.at?.getTime() !== observedAt.getTime()))
    throw new Error("the hub did not stamp every device it saw with the observation time");
}

/** The heap and index sizes (MiB, one decimal) of the devices table and of device_observations. */
async function deviceTableMiB(sql: pg.Client): Promise<string> {
  const r = await sql.query<{ t: string; i: string; ot: string; oi: string }>(
    `SELECT pg_relation_size('devices') AS t, pg_indexes_size('devices') AS i,
            pg_relation_size('device_observations') AS ot, pg_indexes_size('device_observations') AS oi`,
  );
  const mib = (b: string) => (Number(b) / 2 ** 20).toFixed(1);
  const x = r.rows[0]!;
  return `${mib(x.t)} / ${mib(x.i)}, ${mib(x.ot)} / ${mib(x.oi)}`;
}

/** (b) hub apply vs a bare SQL upsert of the same rows, for `n` devices with 1 % changed. */
export async function reflectionApply(report: Report, n: number): Promise<void> {
  const env = await benchHub(n);
  const sql = new pg.Client({ connectionString: env.db.url });
  await sql.connect();
  try {
    const items: IronicItem[] = env.names.map((name) => ({
      uuid: randomUUID(),
      name,
      serial: null,
      provisionState: "available",
      targetProvisionState: null,
      powerState: "power off",
      maintenance: false,
      maintenanceReason: null,
      lastError: null,
      fault: null,
    }));
    const push = async (view: IronicItem[], observedAt: Date) => {
      const t0 = performance.now();
      const r = await env.client
        .pushReflection(env.siteId, "ironic-overcloud", { observedAt: observedAt.toISOString(), items: view })
        .catch((err: unknown) => {
          for (const l of env.hub.logs.filter((x) => x.level === "ERROR" || x.level === "FATAL"))
            console.error(JSON.stringify(l).slice(0, 2000));
          throw err;
        });
      return { ms: performance.now() - t0, r };
    };
    const firstAt = new Date();
    const first = await push(items, firstAt);
    report(`(b) hub apply, ${n.toLocaleString("en")} devices, first load`, ms(first.ms), `updated ${first.r.updated}`);

    await sql.query(
      `CREATE TABLE bench_ironic_nodes (uuid uuid PRIMARY KEY, name text, ${TYPED}, observed_at timestamptz(3))`,
    );
    await bareUpsert(sql, items, firstAt);
    await checkSameRows(sql, env.siteId, firstAt);
    const sizeBefore = await deviceTableMiB(sql);
    const hubTimes: number[] = [];
    const baseTimes: number[] = [];
    let updated = 0;
    let written = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // 1 % of the devices change provision state this round.
      for (let k = 0; k < n / 100; k++) {
        const i = (round * (n / 100) + k) % n;
        items[i] = { ...items[i]!, provisionState: items[i]!.provisionState === "available" ? "active" : "available" };
      }
      const observedAt = new Date();
      const h = await push(items, observedAt);
      const b = await bareUpsert(sql, items, observedAt);
      await checkSameRows(sql, env.siteId, observedAt);
      if (h.r.updated !== b.rows)
        throw new Error(`the hub updated ${h.r.updated} devices, the baseline wrote ${b.rows} rows`);
      hubTimes.push(h.ms);
      baseTimes.push(b.ms);
      updated = h.r.updated;
      written = b.rows;
    }
    const hm = median(hubTimes);
    const bm = median(baseTimes);
    report(
      `(b) hub apply, ${n.toLocaleString("en")} devices, 1 % changed (median of ${ROUNDS})`,
      ms(hm),
      `updated ${updated}, unchanged ${n - updated}; HTTP, JSON, auth, history, audit, feed included`,
    );
    report(
      `(b) baseline SQL + observed_at, ${n.toLocaleString("en")} rows, 1 % changed (median of ${ROUNDS})`,
      ms(bm),
      `rows written ${written}, rows stamped ${n}; same rows as the hub's (checked)`,
    );
    const sizeAfter = await deviceTableMiB(sql);
    report(
      `(b) devices, device_observations (table / indexes), first load -> ${ROUNDS} rounds`,
      `${sizeBefore} -> ${sizeAfter} MiB`,
      "growth: row versions that did not fit in their page (not heap-only, a new entry in every index)",
    );
    const ratios = hubTimes.map((h, i) => h / baseTimes[i]!);
    report(
      `(b) hub / baseline time, ${n.toLocaleString("en")} devices`,
      `${median(ratios).toFixed(1)}×`,
      `per round ${ratios.map((r) => r.toFixed(1)).join(", ")}×; hub ${hubTimes.map(ms).join(", ")}; baseline ${baseTimes.map(ms).join(", ")}`,
    );
  } finally {
    await sql.end();
    await env.close();
  }
}
