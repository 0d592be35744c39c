/**
 * Two hub replicas on one database, as behind a load balancer: real hub processes sharing an
 * issuer URL and a key encryption key, callers and an agent spreading their requests over both.
 * Asserted from outside only: answers, the feed as each replica serves it, tokens, logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentScope, type InventoryEvent } from "@fm/domain";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";
import { bareNetboxItem } from "@fm/test-support/netbox-items";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

/** What the replicas share besides the database: the load balancer's URL as issuer. */
let shared: Record<string, string>;
let a: HubProcess;
let b: HubProcess;
let admin: string;

const started = async (env: Record<string, string>) => {
  const h = await startHub(env);
  cleanups.push(() => h.stop("SIGKILL"));
  return h;
};

beforeAll(async () => {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  shared = { DATABASE_URL: db.url, FM_ISSUER_URL: "http://hubs.e2e.test" };
  // Started together on an empty database: both race to migrate.
  [a, b] = await Promise.all([started(shared), started(shared)]);
  admin = await clientToken(a.url, "fleet-admin", ADMIN_SECRET);
});

const send = (hub: HubProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(admin), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function createSite(hub: HubProcess, slug: string): Promise<string> {
  const res = await send(hub, "POST", "/api/v1/sites/", { slug, name: slug });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Reads the whole feed through one replica, following nextAfter, until `done` says enough. */
async function readFeed(
  hub: HubProcess,
  done: (events: InventoryEvent[]) => boolean,
  give: { up: boolean } = { up: false },
): Promise<InventoryEvent[]> {
  const events: InventoryEvent[] = [];
  let after = "0";
  while (!give.up) {
    const res = await send(hub, "GET", `/api/v1/feeds/inventory?after=${after}&limit=1000&wait=2`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: InventoryEvent[]; nextAfter: string };
    events.push(...page.items);
    after = page.nextAfter;
    if (page.items.length === 0 && done(events)) return events;
  }
  return events;
}

/** Positions 1, 2, 3 … with no gap and no repeat. */
const positionsOf = (events: InventoryEvent[]) => events.map((e) => Number(e.position));
const contiguous = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** A NetBox view of `n` devices at one site, as the NetBox agent pushes it. */
const netboxView = (n: number, status: "active" | "staged") =>
  Array.from({ length: n }, (_, i) =>
    bareNetboxItem(`rep-gpu-${String(i + 1).padStart(3, "0")}`, i + 1, { serial: `SN-REP-${i + 1}`, status }),
  );

/** A satellite serving `siteId`; returns its agent clients' credentials. */
async function satellite(name: string, siteId: string): Promise<Record<string, { clientId: string; secret: string }>> {
  const res = await send(a, "POST", "/api/v1/satellites/", { name, siteIds: [siteId], environment: "dev" });
  expect(res.status, await res.clone().text()).toBe(201);
  const { secrets } = (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
  return Object.fromEntries(secrets.map((s) => [s.agent, { clientId: s.clientId, secret: s.clientSecret }]));
}

const kidOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string }).kid;

describe("two hub replicas on one database", () => {
  it("migrate once when started together, then both serve", async () => {
    const appliers = [a, b].filter((h) => h.logs.some((l) => l.msg === "applied database migrations"));
    expect(appliers).toHaveLength(1);
    for (const h of [a, b]) expect((await fetch(`${h.url}/readyz`)).status).toBe(200);
  });

  it("serve one gap-free feed in one order, read through either, while callers and an agent write through both", async () => {
    const siteId = await createSite(a, "feed-agents");
    const creds = (await satellite("feed-sat", siteId)).netbox!;
    const agentToken = await clientToken(b.url, creds.clientId, creds.secret, `fleet.read ${agentScope("netbox")}`);
    const written = new Set<string>([siteId]);

    const callers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 15; i++) written.add(await createSite(i % 2 ? a : b, `feed-${w}-${i}`));
    });
    // The agent pushes its growing view, each push to the other replica.
    const agent = (async () => {
      for (let i = 1; i <= 8; i++) {
        const res = await fetch(`${(i % 2 ? a : b).url}/api/v1/sites/${siteId}/reflections/netbox`, {
          method: "PUT",
          headers: { ...bearer(agentToken), "content-type": "application/json" },
          body: JSON.stringify({
            observedAt: new Date().toISOString(),
            complete: true,
            items: netboxView(i * 5, "staged"),
          }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        expect(((await res.json()) as { created: number }).created).toBe(5);
      }
    })();
    let writing = true;
    const sawAll = (events: InventoryEvent[]) =>
      !writing &&
      [...written].every((id) => events.some((e) => e.resourceId === id)) &&
      events.filter((e) => e.type === "device.created").length === 40;
    const give = { up: false };
    const readers = [readFeed(a, sawAll, give), readFeed(b, sawAll, give)] as const;
    try {
      await Promise.all([...callers, agent]);
    } catch (err) {
      give.up = true;
      await Promise.allSettled(readers);
      throw err;
    }
    writing = false;
    const [throughA, throughB] = await Promise.all(readers);

    expect(positionsOf(throughA)).toEqual(contiguous(throughA.length));
    expect(positionsOf(throughB)).toEqual(contiguous(throughB.length));
    // One order: the same events at the same positions, whichever replica served them.
    const key = (e: InventoryEvent) => `${e.position} ${e.type} ${e.resourceId}`;
    const common = Math.min(throughA.length, throughB.length);
    expect(throughA.slice(0, common).map(key)).toEqual(throughB.slice(0, common).map(key));
    const created = throughA.filter((e) => e.type === "site.created").map((e) => e.resourceId);
    expect(created.filter((id) => written.has(id)).sort()).toEqual([...written].sort());
    expect(new Set(created).size).toBe(created.length);
  }, 90_000);

  it("honour one Idempotency-Key and one If-Match across replicas", async () => {
    const body = { slug: "idem-across", name: "Once" };
    const key = { "idempotency-key": "replicas-1" };
    const first = await Promise.all([a, b].map((h) => send(h, "POST", "/api/v1/sites/", body, key)));
    expect(first.map((r) => r.status).sort()).toContain(201);
    for (const r of first) expect([201, 409]).toContain(r.status);
    const again = await Promise.all([a, b].map((h) => send(h, "POST", "/api/v1/sites/", body, key)));
    const ids = await Promise.all(again.map(async (r) => ((await r.json()) as { id: string }).id));
    expect(again.map((r) => [r.status, r.headers.get("idempotent-replayed")])).toEqual([
      [201, "true"],
      [201, "true"],
    ]);
    expect(ids[0]).toBe(ids[1]);
    const listed = (await (await send(b, "GET", "/api/v1/sites/?slug=idem-across")).json()) as { count: number };
    expect(listed.count).toBe(1);

    const etag = (await send(a, "GET", `/api/v1/sites/${ids[0]}`)).headers.get("etag")!;
    const patches = await Promise.all(
      [a, b].map((h, i) => send(h, "PATCH", `/api/v1/sites/${ids[0]}`, { name: `Writer ${i}` }, { "if-match": etag })),
    );
    expect(patches.map((r) => r.status).sort()).toEqual([200, 412]);
  });

  it("refuse a revoked agent's token on both replicas", async () => {
    const siteId = await createSite(b, "revoked-here");
    const creds = (await satellite("revoke-sat", siteId)).netbox!;
    const token = await clientToken(a.url, creds.clientId, creds.secret, `fleet.read ${agentScope("netbox")}`);
    const read = (h: HubProcess) => fetch(`${h.url}/api/v1/sites/${siteId}`, { headers: bearer(token) });
    for (const h of [a, b]) {
      const r = await read(h);
      expect(r.status, await r.text()).toBe(200);
    }
    expect((await send(b, "POST", "/api/v1/satellites/revoke-sat/agents/netbox/revoke")).status).toBe(200);
    // Each replica learns of the revocation by notification; the client cache's 5 s expiry bounds a lost one.
    await eventually(async () => expect([(await read(a)).status, (await read(b)).status]).toEqual([401, 401]), 5_000);
  });

  it("after a signing-key rotation on one replica, both sign with the new key and accept tokens of the old", async () => {
    const before = await clientToken(b.url, "fleet-admin", ADMIN_SECRET);
    const rotated = await send(a, "POST", "/api/v1/admin/signing-keys/rotate");
    expect(rotated.status).toBe(200);
    const { kid } = (await rotated.json()) as { kid: string };
    expect(kidOf(before)).not.toBe(kid);
    await eventually(async () => {
      for (const h of [a, b]) {
        expect(kidOf(await clientToken(h.url, "fleet-admin", ADMIN_SECRET))).toBe(kid);
        const jwks = (await (await fetch(`${h.url}/oauth/jwks`)).json()) as { keys: { kid: string }[] };
        expect(jwks.keys.map((k) => k.kid).sort()).toEqual([kidOf(before), kid].sort());
      }
    }, 5_000);
    for (const h of [a, b])
      for (const t of [before, await clientToken(h === a ? b.url : a.url, "fleet-admin", ADMIN_SECRET)])
        expect((await fetch(`${h.url}/api/v1/sites/`, { headers: bearer(t) })).status).toBe(200);
  });

  it("lose no acknowledged write when one replica is SIGKILLed under load", async () => {
    const c = await started(shared);
    const acknowledged: string[] = [];
    let stop = false;
    let refused = 0;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const hub = i % 2 ? c : b;
        const res = await send(hub, "POST", "/api/v1/sites/", { slug: `kill-${w}-${i}`, name: "x" }).catch(() => null);
        if (res?.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
        else refused++; // no answer from the killed replica: not acknowledged
      }
    });
    await eventually(async () => expect(acknowledged.length).toBeGreaterThan(40), 30_000, 20);
    c.proc.kill("SIGKILL");
    await c.exited;
    await eventually(async () => expect(refused).toBeGreaterThan(0), 10_000, 20);
    const ackedAtKill = acknowledged.length;
    await eventually(async () => expect(acknowledged.length).toBeGreaterThan(ackedAtKill + 20), 30_000, 20);
    stop = true;
    await Promise.all(writers);

    const listed = new Set<string>();
    for (let cursor = ""; ;) {
      const page = (await (await send(a, "GET", `/api/v1/sites/?limit=1000${cursor}`)).json()) as {
        items: { id: string }[];
        nextCursor: string | null;
      };
      for (const s of page.items) listed.add(s.id);
      if (!page.nextCursor) break;
      cursor = `&cursor=${page.nextCursor}`;
    }
    expect(acknowledged.filter((id) => !listed.has(id))).toEqual([]);
    const events = await readFeed(a, (es) => acknowledged.every((id) => es.some((e) => e.resourceId === id)));
    expect(positionsOf(events)).toEqual(contiguous(events.length));
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
  }, 120_000);
});
