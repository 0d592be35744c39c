/**
 * The inventory snapshot over HTTP, read with the hub client: exactly the feed up to its
 * position, so snapshot + feed from there rebuilds the inventory with no gap and no double, even
 * while writers commit during the snapshot. (The hub client's reading of it is tested with the
 * client.)
 */
import { get as httpGet, type ClientRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FeedPageSchema,
  InventorySnapshotLineSchema,
  type Device,
  type DeviceList,
  type InventoryEvent,
  type InventorySnapshotLine,
  type Problem,
  type SiteList,
} from "@fm/domain";
import { adminQuery } from "@fm/test-support/postgres";
import { eventually } from "@fm/test-support/wait";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import type { Authenticator } from "../../plugins/request-context.ts";

let hub: TestHub;
let url: string;
const deviceIds: string[] = [];
beforeAll(async () => {
  hub = await startTestHub();
  url = await hub.app.listen({ port: 0, host: "127.0.0.1" });
  for (const slug of ["snap-a", "snap-b"])
    await seedNetboxOnlyDevices(
      hub.db.prisma,
      { slug },
      Array.from({ length: 150 }, (_, i) => ({ name: `${slug}-gpu-${i}`, role: "gpu-node" as const })),
    );
  deviceIds.push(...(await hub.db.prisma.device.findMany({ select: { id: true } })).map((d) => d.id));
});
afterAll(() => hub.close());

/** The snapshot's lines, each checked against the contract; a problem document when refused. */
async function snapshot(sites: string[] = []): Promise<InventorySnapshotLine[]> {
  const res = await fetch(`${url}/api/v1/feeds/inventory/snapshot?${sites.map((s) => `site=${s}`).join("&")}`);
  if (res.status !== 200) throw { status: res.status, problem: (await res.json()) as Problem };
  expect(res.headers.get("content-type")).toContain("application/x-ndjson");
  const text = await res.text();
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((l) => InventorySnapshotLineSchema.parse(JSON.parse(l)));
}

/** Every event after `after`, page by page. */
async function feedAfter(after: string): Promise<InventoryEvent[]> {
  const events: InventoryEvent[] = [];
  for (;;) {
    const res = await fetch(`${url}/api/v1/feeds/inventory?after=${after}&limit=1000`);
    expect(res.status).toBe(200);
    const page = FeedPageSchema.parse(await res.json());
    events.push(...page.items);
    if (page.nextAfter === after) return events;
    after = page.nextAfter;
  }
}

const get = async <T>(path: string): Promise<T> => (await hub.app.inject({ url: path })).json<T>();

async function allDevices(): Promise<Device[]> {
  const devices: Device[] = [];
  for (let cursor = ""; ;) {
    const page = await get<DeviceList>(`/api/v1/devices?limit=1000${cursor ? `&cursor=${cursor}` : ""}`);
    devices.push(...page.items);
    if (!page.nextCursor) return devices;
    cursor = page.nextCursor;
  }
}

const patchNotes = (id: string, notes: string) =>
  hub.app.inject({ method: "PATCH", url: `/api/v1/devices/${id}`, payload: { notes } });

describe("inventory snapshot", () => {
  it("starts with its position, lists every site, role and device as their GETs do, and ends with the count", async () => {
    // Devices that differ from their neighbours, away from the first: a line built from less than
    // the GET's row would show on them.
    for (const id of [deviceIds[137]!, deviceIds[251]!])
      expect((await patchNotes(id, `snapshot note ${id}`)).statusCode).toBe(200);
    const lines = await snapshot();
    const [head, ...rest] = lines;
    const end = rest.pop();
    expect(head).toMatchObject({ kind: "snapshot", sites: ["snap-a", "snap-b"] });
    expect(end).toEqual({ kind: "end", count: rest.length });
    const devices = rest.filter((l) => l.kind === "device").map((l) => l.data);
    expect(devices.map((d) => d.id).sort()).toEqual([...deviceIds].sort());
    expect(devices.filter((d) => d.notes).length).toBe(2);
    const listed = new Map((await allDevices()).map((d) => [d.id, d]));
    for (const d of devices) expect(d, d.name).toEqual(listed.get(d.id));
    for (const d of devices.filter((x) => x.notes)) expect(d).toEqual(await get(`/api/v1/devices/${d.id}`));
    const sites = rest.flatMap((l) => (l.kind === "site" ? [l.data] : []));
    expect(sites.map((s) => s.slug).sort()).toEqual(["snap-a", "snap-b"]);
    for (const site of sites) expect(site).toEqual(await get(`/api/v1/sites/${site.id}`));
    const roles = rest.flatMap((l) => (l.kind === "deviceRole" ? [l.data] : []));
    expect(roles.map((r) => r.slug)).toContain("gpu-node");
    expect(roles).toEqual(
      expect.arrayContaining((await get<{ items: unknown[] }>("/api/v1/device-roles?limit=1000")).items),
    );
    expect(roles).toHaveLength((await get<{ items: unknown[] }>("/api/v1/device-roles?limit=1000")).items.length);
    // Nothing changed since: the feed after the snapshot's position is empty.
    expect(await feedAfter((head as { position: string }).position)).toEqual([]);
  });

  it("limits to the sites asked for, and refuses an unknown site with 404", async () => {
    const lines = await snapshot(["snap-b"]);
    expect(lines[0]).toMatchObject({ kind: "snapshot", sites: ["snap-b"] });
    const devices = lines.filter((l) => l.kind === "device").map((l) => l.data);
    expect(devices).toHaveLength(150);
    expect(new Set(devices.map((d) => d.site.slug))).toEqual(new Set(["snap-b"]));
    expect(lines.filter((l) => l.kind === "site")).toHaveLength(1);

    const err = await snapshot(["snap-b", "nowhere"]).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 404, problem: { status: 404, code: "site_not_found" } });
    expect((err as { problem: Problem }).problem.detail).toContain("nowhere");
    const bad = await hub.app.inject({ url: "/api/v1/feeds/inventory/snapshot?site=Not%20A%20Slug" });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers["content-type"]).toContain("application/problem+json");
  });

  it("includes a change committed but not yet positioned, and gives its event a position at or below its own", async () => {
    const id = deviceIds[7]!;
    const device = await get<Device>(`/api/v1/devices/${id}`);
    // A change and its event committed without the commit notification: nothing has positioned it.
    await hub.db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL session_replication_role = replica`;
      await tx.$executeRaw`UPDATE devices SET notes = 'unpositioned', version = version + 1 WHERE id = ${id}::uuid`;
      await tx.$executeRaw`
        INSERT INTO inventory_events (type, resource_type, resource_id, site_id, data)
        VALUES ('device.updated', 'device', ${id}, ${device.site.id}::uuid, ${JSON.stringify({ ...device, notes: "unpositioned", version: device.version + 1 })}::jsonb)`;
    });
    const lines = await snapshot();
    const position = BigInt((lines[0] as { position: string }).position);
    const seen = lines.flatMap((l) => (l.kind === "device" && l.data.id === id ? [l.data] : []))[0]!;
    expect(seen.notes).toBe("unpositioned");
    const [event] = await hub.db.prisma.inventoryEvent.findMany({
      where: { resourceId: id },
      orderBy: { seq: "desc" },
    });
    expect(event!.position).not.toBeNull();
    expect(event!.position! <= position).toBe(true);
    expect((await feedAfter(position.toString())).filter((e) => e.resourceId === id)).toEqual([]);
  });

  it("with writers committing throughout, snapshot + feed from its position is the final state: each change once", async () => {
    let writing = true;
    let written = 0;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const id = deviceIds[(w * 37 + i * 11) % deviceIds.length]!;
        // The snapshot and the LISTEN connection hold two of the test hub's five connections:
        // on a loaded machine a writer can wait past the pool's timeout and be shed with a 503,
        // which changes nothing, as a client that retries later would see. Only those count.
        const res = await patchNotes(id, `w${w}-${i}`);
        if (res.statusCode === 503) continue;
        expect(res.statusCode).toBe(200);
        if (i % 10 === 0) {
          const site = await hub.app.inject({
            method: "POST",
            url: "/api/v1/sites",
            payload: { slug: `snap-w${w}-${i}`, name: "created meanwhile" },
          });
          expect([201, 503]).toContain(site.statusCode);
        }
        written++;
      }
    });
    while (written < 20) await new Promise((r) => setTimeout(r, 5));
    const lines = await snapshot();
    const writtenDuring = written;
    while (written < writtenDuring + 20) await new Promise((r) => setTimeout(r, 5));
    writing = false;
    await Promise.all(writers);

    const position = (lines[0] as { position: string }).position;
    const devices = new Map<string, Device>();
    const sites = new Map<string, string>();
    for (const l of lines) {
      if (l.kind === "device") devices.set(l.data.id, l.data);
      if (l.kind === "site") sites.set(l.data.id, l.data.slug);
    }
    const events = await feedAfter(position);
    // Both sides of the position saw writes: the snapshot raced the writers.
    expect(events.filter((e) => e.type === "device.updated").length).toBeGreaterThan(0);
    expect([...devices.values()].some((d) => d.version > 1)).toBe(true);
    for (const e of events) {
      if (e.type === "device.updated") {
        const before = devices.get(e.resourceId)!;
        // Each device's versions continue exactly: a double would repeat one, a gap skip one.
        expect(e.data.version).toBe(before.version + 1);
        devices.set(e.resourceId, e.data);
      }
      if (e.type === "site.created") {
        expect(sites.has(e.resourceId)).toBe(false);
        sites.set(e.resourceId, e.data.slug);
      }
    }
    const final = new Map<string, Device>();
    for (const d of await allDevices()) final.set(d.id, d);
    expect(devices.size).toBe(final.size);
    for (const [id, d] of final)
      expect({ notes: devices.get(id)?.notes, version: devices.get(id)?.version }).toEqual({
        notes: d.notes,
        version: d.version,
      });
    const finalSites = (await get<SiteList>("/api/v1/sites?limit=1000")).items.map((s) => s.slug);
    expect([...sites.values()].sort()).toEqual(finalSites.sort());
  });
});

describe("inventory snapshot readers that go away", () => {
  it("end their snapshot's transaction: more of them than the pool has connections, and the hub still serves", async () => {
    // Each reader takes the first bytes and closes its connection while the hub has lines to send.
    for (let i = 0; i < 7; i++)
      await new Promise<void>((resolve, reject) => {
        const req = httpGet(`${url}/api/v1/feeds/inventory/snapshot`, (res) =>
          res.once("data", () => {
            req.destroy();
            resolve();
          }),
        );
        req.once("error", reject);
      });
    const inTransaction = async () =>
      (
        await adminQuery(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'",
          [hub.database.name],
        )
      ).rows[0].n as number;
    // A reader's slot frees once its transaction has rolled back and its connection is back in
    // the pool, which can trail the last "idle in transaction" row by a moment: the hub serves
    // a whole snapshot again once both have happened.
    await eventually(async () => {
      expect(await inTransaction()).toBe(0);
      const lines = await snapshot();
      expect(lines.at(-1)).toEqual({ kind: "end", count: lines.length - 2 });
    });
  });
});

describe("inventory snapshots at once", () => {
  it("past the limit (a quarter of the pool) a snapshot is 503 snapshots_busy with Retry-After; the hub lives on", async () => {
    // The test hub's pool has 5 connections: one snapshot streams at a time. The first reader
    // takes its first bytes and then reads no further, holding the snapshot open.
    let holder!: ClientRequest;
    await new Promise<void>((resolve, reject) => {
      holder = httpGet(`${url}/api/v1/feeds/inventory/snapshot`, (res) => {
        expect(res.statusCode).toBe(200);
        res.once("data", () => {
          res.pause();
          resolve();
        });
      });
      holder.once("error", reject);
    });
    const refused = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/api/v1/feeds/inventory/snapshot`)));
    for (const res of refused) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("10");
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "snapshots_busy", status: 503 });
    }
    // Other requests are served meanwhile, and once the reader goes the next snapshot streams.
    expect((await fetch(`${url}/api/v1/sites/`)).status).toBe(200);
    holder.destroy();
    await eventually(async () => {
      const lines = await snapshot();
      expect(lines.at(-1)).toEqual({ kind: "end", count: lines.length - 2 });
    });
  });
});

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

describe("an inventory snapshot whose reader stops reading", () => {
  /** This hub's stall window: how long a reader may take nothing before its snapshot is cut. */
  const STALL_MS = 1000;
  let own: TestHub;
  let ownUrl: string;
  beforeAll(async () => {
    own = await startTestHub({ snapshotStallMs: STALL_MS });
    ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
    // Enough lines (some 20 MB) to fill every buffer between the hub and a reader that stops.
    await seedNetboxOnlyDevices(
      own.db.prisma,
      { slug: "stall" },
      Array.from({ length: 8000 }, (_, i) => ({ name: `stall-gpu-${i}`, role: "gpu-node" as const })),
    );
  }, 120_000);
  afterAll(() => own.close());

  it("is cut short once the reader has taken nothing for a while: its slot frees, its stream has no end line", async () => {
    const received: Buffer[] = [];
    let ended!: Promise<void>;
    let stalled!: IncomingMessage;
    let pausedAt = 0;
    await new Promise<void>((resolve, reject) => {
      const req = httpGet(`${ownUrl}/api/v1/feeds/inventory/snapshot`, (res) => {
        stalled = res;
        ended = new Promise<void>((done) => {
          res.on("close", done);
          res.on("error", () => done());
        });
        res.once("data", (chunk: Buffer) => {
          received.push(chunk);
          res.pause();
          pausedAt = Date.now();
          resolve();
        });
      });
      req.once("error", reject);
    });
    // The one slot (a pool of 5) is the stalled reader's until the hub cuts it short.
    const another = () => fetch(`${ownUrl}/api/v1/feeds/inventory/snapshot?site=stall`);
    // Not before the stall window: half way into it, the stalled snapshot still holds its slot
    // (it is the hub's one: 503 snapshots_busy).
    await sleepUntil(pausedAt + STALL_MS / 2);
    const early = await another();
    const earlyBody = await early.text();
    expect(early.status, earlyBody.slice(0, 200)).toBe(503);
    expect(earlyBody).toContain('"code":"snapshots_busy"');
    // By the stall window (with room for the buffers to fill before it starts), it is cut short
    // and its slot is free: far before the snapshot's own timeout (600 s) would end it.
    await sleepUntil(pausedAt + STALL_MS);
    await eventually(
      async () => {
        const res = await another();
        expect(res.status).toBe(200);
        const lines = (await res.text()).trim().split("\n");
        expect(JSON.parse(lines.at(-1)!)).toEqual({ kind: "end", count: lines.length - 2 });
        expect(lines.length).toBeGreaterThan(8000);
      },
      STALL_MS * 4,
      100,
    );
    stalled.on("data", (chunk: Buffer) => received.push(chunk));
    stalled.resume();
    await ended;
    const text = Buffer.concat(received).toString();
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain('"kind":"end"');
  }, 120_000);
});

describe("inventory snapshot access", () => {
  let own: TestHub;
  let ownUrl: string;
  beforeAll(async () => {
    // The hub's scope check with callers of each kind: no credentials, no scope, fleet.read.
    const authenticate: Authenticator = async (request) => {
      const token = request.headers.authorization?.replace(/^Bearer /, "");
      if (!token) return undefined;
      const scopes = token === "reader" ? ["fleet.read"] : [];
      return { id: token, kind: "client", scopes: new Set(scopes) };
    };
    own = await startTestHub({ authenticate });
    ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => own.close());

  it("needs fleet.read: 401 without a token, 403 without the scope", async () => {
    const get = (token?: string) =>
      fetch(
        `${ownUrl}/api/v1/feeds/inventory/snapshot`,
        token ? { headers: { authorization: `Bearer ${token}` } } : {},
      );
    const anonymous = await get();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("content-type")).toContain("application/problem+json");
    expect((await get("nobody")).status).toBe(403);
    const reader = await get("reader");
    expect(reader.status).toBe(200);
    expect(reader.headers.get("content-type")).toContain("application/x-ndjson");
    const text = await reader.text();
    expect(
      text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { kind: string })
        .at(-1),
    ).toEqual({ kind: "end", count: 0 });
  });
});

describe("inventory snapshot slots, per caller and kept for machines", () => {
  let own: TestHub;
  let ownUrl: string;
  beforeAll(async () => {
    // Three slots: people share two, one is kept for machine clients (the connectors). Each
    // request says who it is (x-who: person:ana, client:connector-1), as a token would.
    const authenticate: Authenticator = async (request) => {
      const [kind, id] = String(request.headers["x-who"] ?? "client:fleet-admin").split(":") as [
        "person" | "client",
        string,
      ];
      return { id: `${kind}:${id}`, kind, scopes: new Set(["fleet.read"]) };
    };
    own = await startTestHub({ authenticate, snapshotMaxConcurrent: 3 });
    ownUrl = await own.app.listen({ port: 0, host: "127.0.0.1" });
    // Enough lines that a reader who stops after the first holds its snapshot open.
    await seedNetboxOnlyDevices(
      own.db.prisma,
      { slug: "slots" },
      Array.from({ length: 4000 }, (_, i) => ({ name: `slots-gpu-${i}`, role: "gpu-node" as const })),
    );
  }, 120_000);
  afterAll(() => own.close());

  /** A snapshot `who` opens, takes the first bytes of, and then reads no further. */
  const hold = (who: string) =>
    new Promise<ClientRequest>((resolve, reject) => {
      const req = httpGet(`${ownUrl}/api/v1/feeds/inventory/snapshot`, { headers: { "x-who": who } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${who}: ${res.statusCode}`));
        res.once("data", () => {
          res.pause();
          resolve(req);
        });
      });
      req.once("error", reject);
    });
  const open = (who: string) => fetch(`${ownUrl}/api/v1/feeds/inventory/snapshot`, { headers: { "x-who": who } });
  const whole = async (res: Response) => {
    const lines = (await res.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as InventorySnapshotLine);
    return lines.at(-1);
  };

  it("one snapshot per caller (429), people cannot take the machines' slot (503), a connector still resnapshots", async () => {
    const ana = await hold("person:ana");
    try {
      const again = await open("person:ana");
      expect(again.status).toBe(429);
      expect(again.headers.get("retry-after")).toBe("10");
      expect(await again.json()).toMatchObject({ code: "snapshot_already_streaming", status: 429 });

      const bo = await hold("person:bo");
      try {
        // Both people's slots are taken: a third person waits, though one slot is free …
        const cy = await open("person:cy");
        expect(cy.status).toBe(503);
        expect(cy.headers.get("retry-after")).toBe("10");
        expect(await cy.json()).toMatchObject({ code: "snapshots_busy" });
        // … for a machine client: the connector reads a whole snapshot meanwhile.
        const connector = await open("client:connector-1");
        expect(connector.status).toBe(200);
        expect(await whole(connector)).toMatchObject({ kind: "end" });
      } finally {
        bo.destroy();
      }
      // Once bo has gone, cy's next try streams.
      await eventually(async () => {
        const cy = await open("person:cy");
        expect(cy.status).toBe(200);
        expect(await whole(cy)).toMatchObject({ kind: "end" });
      });
    } finally {
      ana.destroy();
    }
    // And ana, whose first snapshot has gone, may open another.
    // (Its body is read to the end: a snapshot left unread would hold the hub's close until the stall cut.)
    await eventually(async () => {
      const again = await open("person:ana");
      expect(again.status).toBe(200);
      expect(await whole(again)).toMatchObject({ kind: "end" });
    });
  }, 120_000);
});
