/**
 * The queue and the deliverer against real PostgreSQL and the Kusto/Entra ID test receiver over
 * HTTP: what arrives, in which order, what is dead-lettered, and what survives a failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import type { InventoryRecord } from "@fm/domain";
import { Deliverer, MAX_REFUSED_IN_A_ROW } from "./deliverer.ts";
import { createConnectorMetrics } from "./metrics.ts";
import { CursorMoved, QueueStore } from "./queue/store.ts";
import { EntraTokenSource } from "./sink/entra-token.ts";
import { KustoSink } from "./sink/kusto.ts";
import { recordsOfEvent } from "./transform.ts";
import { connectorDatabase } from "./testing/connector-db.ts";
import { device, event, site } from "./testing/fixtures.ts";
import { KustoReceiver } from "./testing/kusto-receiver.ts";

const sin1 = site("sin1");
const devices = Array.from({ length: 6 }, (_, i) => device(sin1, i === 3 ? "poison-gpu" : `gpu-${i}`));
let dbh: Awaited<ReturnType<typeof connectorDatabase>>;
let receiver: KustoReceiver;
let run: { stop: AbortController; done: Promise<void> } | undefined;
let n = 0;

beforeAll(async () => {
  dbh = await connectorDatabase();
});
afterAll(() => dbh?.close());
afterEach(async () => {
  run?.stop.abort();
  await run?.done;
  run = undefined;
  await receiver?.down();
});

/** A fresh connector name (its own queue) with `changes` device events committed as one page. */
async function setup(
  changes: number,
  opts: {
    poison?: boolean | "all" | ((r: InventoryRecord) => boolean);
    mappingName?: string;
    entraSecret?: string;
    idleMs?: number;
  } = {},
) {
  const name = `matrix-t${++n}`;
  receiver = new KustoReceiver({
    poison:
      typeof opts.poison === "function"
        ? opts.poison
        : opts.poison === "all"
          ? () => true
          : opts.poison
            ? (r) => r.kind === "device" && r.name.startsWith("poison")
            : undefined,
  });
  await receiver.up();
  const store = new QueueStore(dbh.pool, name);
  await store.commitSnapshot({ position: "0", head: "0", records: [] });
  const ctx = { connector: name, siteIds: new Set([sin1.id]) };
  /** Commits the next `n` device changes as one feed page. */
  let position = 0;
  const commit = async (n: number) => {
    const events = Array.from({ length: n }, (_, i) => {
      const d = devices[(position + i) % devices.length]!;
      return event(position + i + 1, "device.updated", { ...d, version: 10 + position + i }, sin1.id);
    });
    const after = position;
    position += n;
    await store.commitPage({
      after: String(after),
      nextAfter: String(position),
      head: String(position),
      records: events.flatMap((e) => recordsOfEvent(e, ctx)),
    });
  };
  await commit(changes);
  const metrics = createConnectorMetrics(name, { stats: () => store.stats(), lag: () => ({ events: 0, seconds: 0 }) });
  const tokens = new EntraTokenSource({
    authority: receiver.url,
    tenant: receiver.o.tenant,
    clientId: receiver.o.clientId,
    secret: () => opts.entraSecret ?? receiver.o.clientSecret,
    scope: `${receiver.url}/.default`,
    timeoutMs: 5000,
  });
  const sink = new KustoSink({
    clusterUrl: receiver.url,
    database: receiver.o.database,
    table: receiver.o.table,
    mappingName: opts.mappingName ?? receiver.o.mappingName,
    tokens,
    timeoutMs: 5000,
    app: "test",
  });
  const deliverer = new Deliverer({
    store,
    sink,
    batchSize: 4,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    metrics,
    log: pino({ level: "silent" }),
    idleMs: opts.idleMs ?? 50,
  });
  const start = () => {
    const stop = new AbortController();
    run = { stop, done: deliverer.run(stop.signal) };
  };
  return { store, metrics, tokens, start, name, deliverer, commit };
}

const until = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};
const metric = async (m: { registry: { metrics(): Promise<string> } }, line: string) =>
  Number(
    (await m.registry.metrics())
      .split("\n")
      .find((l) => l.startsWith(line))
      ?.split(" ")
      .at(-1),
  );

describe("the deliverer", () => {
  it("delivers every record once, in order per device, and empties the queue", async () => {
    const t = await setup(12);
    t.start();
    await until(async () => (await t.store.stats()).undelivered === 0);
    expect(receiver.stored.size).toBe(12);
    expect(receiver.duplicates).toBe(0);
    for (const d of devices) {
      const versions = [...receiver.stored.values()]
        .filter((r) => r.kind === "device" && r.deviceId === d.id)
        .map((r) => (r as { version: number }).version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
    }
    expect(
      await metric(t.metrics, `fleet_manager_connector_records_delivered_total{sink="kusto",connector="${t.name}"}`),
    ).toBe(12);
  });

  it("bisects a refused batch: the poison record is dead-lettered with Kusto's reason, the rest flows", async () => {
    const t = await setup(12, { poison: true });
    t.start();
    await until(async () => (await t.store.stats()).undelivered === 0);
    // Devices 3 and 9 are the poison device's two changes.
    expect(receiver.stored.size).toBe(10);
    const dead = await t.store.deadLetters();
    expect(dead.map((d) => d.resourceKey)).toEqual([`device:${devices[3]!.id}`, `device:${devices[3]!.id}`]);
    expect(dead[0]!.reason).toBe(
      "400 BadRequest_InvalidBlob: Stream_WrongNumberOfFields: the record does not fit the mapping",
    );
    expect((await t.store.stats()).deadLetters).toBe(2);
    expect(await metric(t.metrics, `fleet_manager_connector_dead_letters{connector="${t.name}"}`)).toBe(2);
    expect((await t.store.state())!.lastErrorClass).toBe("sink_rejected");
  });

  it("a sink refusing every record is taken as misconfigured: a few dead letters, then the queue is kept and retried as sink_config", async () => {
    const t = await setup(12, { poison: "all" });
    t.start();
    await until(async () => (await t.store.state())?.lastErrorClass === "sink_config");
    await until(async () => receiver.requests.ingest >= 20);
    expect(receiver.stored.size).toBe(0);
    expect(await t.store.stats()).toMatchObject({
      deadLetters: MAX_REFUSED_IN_A_ROW,
      undelivered: 12 - MAX_REFUSED_IN_A_ROW,
    });
  });

  it("an accepted record resets the refusal streak: more refusals than the limit, never in a row, are all dead-lettered", async () => {
    // Every other change is refused (odd versions): 6 refusals, each after an acceptance, twice
    // the limit of refusals in a row. Were the streak not reset by an acceptance, the fourth
    // refusal would stop the dead-lettering and retry the queue as sink_config.
    const t = await setup(12, { poison: (r) => r.kind === "device" && (r as { version: number }).version % 2 === 1 });
    t.start();
    await until(async () => (await t.store.stats()).undelivered === 0);
    expect(receiver.stored.size).toBe(6);
    expect((await t.store.stats()).deadLetters).toBe(6);
    expect(6).toBeGreaterThan(MAX_REFUSED_IN_A_ROW);
    expect((await t.store.state())!.lastErrorClass).toBe("sink_rejected");
  });

  it("waits out 429 Retry-After (not before it, and not much after), fetches a new token after a 401, and loses nothing", async () => {
    const t = await setup(8);
    receiver.throttle(2, 1);
    t.start();
    await until(async () => (await t.store.stats()).undelivered === 0);
    expect(receiver.requests.throttled).toBe(2);
    // Each request after a 429 came no sooner than its Retry-After (1 s), and by it plus the
    // deliverer's own backoff (at most 200 ms here) and a generous allowance for a busy machine.
    const log = receiver.ingestLog;
    expect(log.slice(0, 3).map((r) => r.throttled)).toEqual([true, true, false]);
    for (const i of [1, 2]) {
      const gap = log[i]!.at - log[i - 1]!.at;
      expect(gap, `request ${i + 1}`).toBeGreaterThanOrEqual(999);
      expect(gap, `request ${i + 1}`).toBeLessThan(1000 + 200 + 1500);
    }
    expect((await t.store.state())!.lastErrorClass).toBe("sink_throttled");
    expect(
      await metric(t.metrics, `fleet_manager_connector_failures_total{reason="sink_throttled",connector="${t.name}"}`),
    ).toBe(2);

    receiver.expireTokens();
    const grants = t.tokens.grants;
    await t.store.commitPage({
      after: "8",
      nextAfter: "9",
      head: "9",
      records: recordsOfEvent(event(9, "device.updated", devices[0], sin1.id), {
        connector: t.name,
        siteIds: new Set([sin1.id]),
      }),
    });
    await until(async () => (await t.store.stats()).undelivered === 0);
    expect(receiver.requests.unauthorized).toBe(1);
    expect(t.tokens.grants).toBe(grants + 1);
    expect(receiver.stored.size).toBe(9);
  });

  it("keeps the queue while the receiver is down and delivers it when it is back", async () => {
    const t = await setup(5);
    await receiver.down();
    t.start();
    await until(async () => (await t.store.state())!.lastErrorClass === "sink_unavailable");
    expect((await t.store.stats()).undelivered).toBe(5);
    await receiver.up();
    await until(async () => (await t.store.stats()).undelivered === 0);
    expect(receiver.stored.size).toBe(5);
  });

  it("does not dead-letter anything when Kusto refuses the mapping itself: it retries as a configuration error", async () => {
    const t = await setup(3, { mappingName: "NoSuchMapping" });
    t.start();
    await until(async () => receiver.requests.ingest >= 3);
    expect(await t.store.stats()).toMatchObject({ undelivered: 3, deadLetters: 0 });
    expect((await t.store.state())!.lastErrorClass).toBe("sink_config");
  });
});

describe("the Entra ID token", () => {
  it("refused (wrong secret): nothing is sent or dead-lettered, the error class is sink_auth with the AADSTS code", async () => {
    const t = await setup(2, { entraSecret: "not-the-secret" });
    const refused = t.tokens.get().catch((err: unknown) => err as Error);
    expect(await refused).toMatchObject({ name: "TokenError", status: 401, aadsts: "AADSTS7000215" });
    t.start();
    await until(async () => (await t.store.state())!.lastErrorClass === "sink_auth");
    expect(receiver.requests.ingest).toBe(0);
    expect(await t.store.stats()).toMatchObject({ undelivered: 2, deadLetters: 0 });
  });
});

describe("the queue", () => {
  it("gives a page's records back as committed, in the page's order, whatever their text holds", async () => {
    const name = `matrix-t${++n}`;
    const store = new QueueStore(dbh.pool, name);
    await store.commitSnapshot({ position: "0", head: "0", records: [] });
    const ctx = { connector: name, siteIds: new Set([sin1.id]) };
    // Quotes, backslashes, an escaped control character, non-ASCII and a surrogate pair: what
    // an array literal would have had to escape, in names that sort otherwise than the page.
    const names = ['z "quoted" gpu', "y back\\slash\\", "x tab\there", "w gpü-Ω", "v 🚀 rack", "u plain"];
    const events = names.map((nm, i) =>
      event(i + 1, "device.updated", { ...device(sin1, nm), version: 10 + i }, sin1.id),
    );
    const records = events.flatMap((e) => recordsOfEvent(e, ctx));
    await store.commitPage({ after: "0", nextAfter: "6", head: "6", records });
    const queued = await store.next(100);
    expect(queued.map((q) => q.record)).toEqual(records.map((r) => r.record));
    expect(queued.map((q) => q.resourceKey)).toEqual(records.map((r) => r.resourceKey));
    expect(queued.map((q) => q.recordId)).toEqual(records.map((r) => r.record.recordId));
    // A page read again (a retry after a lost commit acknowledgement) queues nothing twice.
    await store.commitSnapshot({ position: "0", head: "0", records: [] });
    await store.commitPage({ after: "0", nextAfter: "6", head: "6", records });
    expect((await store.next(100)).map((q) => q.seq)).toEqual(queued.map((q) => q.seq));
  });

  it("a wake-up that comes while it is finding the queue empty is not lost: it looks again instead of idling", async () => {
    // An idle timer longer than the test: only the wake-up can get these records delivered.
    const t = await setup(0, { idleMs: 600_000 });
    const next = t.store.next.bind(t.store);
    let raced = false;
    t.store.next = async (limit) => {
      const batch = await next(limit);
      if (!raced && batch.length === 0) {
        // The reader commits and wakes the deliverer after its read saw nothing, before it idles.
        raced = true;
        await t.commit(5);
        t.deliverer.wake();
      }
      return batch;
    };
    t.start();
    await until(() => receiver.stored.size === 5);
    expect(raced).toBe(true);
    await until(async () => (await t.store.stats()).undelivered === 0);
  });

  it("refuses to move a cursor that is no longer where the page was read from", async () => {
    const t = await setup(1);
    await expect(t.store.commitPage({ after: "0", nextAfter: "5", head: "5", records: [] })).rejects.toBeInstanceOf(
      CursorMoved,
    );
    expect((await t.store.state())!.position).toBe("1");
  });
});
