/**
 * The windows a hub process reads from its environment, in seconds (apps/hub/src/main.ts turns
 * them into the milliseconds the services take), checked on both sides at process level: not
 * before the window, and by it. A seconds/milliseconds slip in main.ts, or a window read from the
 * wrong variable, fails here; the services' own tests inject milliseconds and cannot see it.
 *
 * Every value is distinct from its default, so a hub that ignored the variable fails too.
 * - Impairment cordon and release: the health pushes' `observedAt` is their clock, so the test
 *   places observations 1 s either side of each window instead of waiting for it.
 * - Staleness: devices last observed 30 s either side of the window, against the hub's own clock.
 * - Site silence: real time (the window counts from when the hub accepted a push), 10 s.
 * - Feed retention: real time, 60 s (its minimum); the hub purges every 60 s, so an event is gone
 *   by retention + one purge interval, and still readable at half the retention.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Device, HealthItem, Site } from "@fm/domain";
import { createDatabase, type Database } from "../apps/hub/src/db/client.ts";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";

const S = 1000;
const CORDON_AFTER_S = 420;
const RELEASE_AFTER_S = 1260;
const STALE_AFTER_S = 420;
const SILENCE_AFTER_S = 10;
const RETENTION_S = 60;
/** The hub's purge interval (apps/hub/src/app.ts), not configurable. */
const PURGE_INTERVAL_S = 60;

const cleanups: (() => Promise<unknown>)[] = [];
let hub: HubProcess;
let admin: string;
let agent: string;
let siteId: string;
let names: string[];
/** When the retention check's event was committed, and the feed position just below it. */
let retained: { committedAt: number; after: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function api<T>(path: string, init: RequestInit = {}, token = admin): Promise<{ status: number; body: T }> {
  const res = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...bearer(token), ...init.headers },
  });
  return { status: res.status, body: (await res.json()) as T };
}

const device = async (name: string) =>
  (await api<{ items: Device[] }>(`/api/v1/devices?name=${name}`)).body.items.find((d) => d.name === name)!;

/** The site's whole health view at `when`: every device ok but those given. */
async function pushHealth(when: number, sick: string[] = []): Promise<void> {
  const items: HealthItem[] = names.map((name) =>
    sick.includes(name)
      ? {
          name,
          status: "critical",
          conditions: [{ name: "GpuXidErrors", status: "critical", message: "GPU 2 reported XID 79" }],
        }
      : { name, status: "ok", conditions: [] },
  );
  const res = await api(
    `/api/v1/sites/${siteId}/reflections/health/`,
    {
      method: "PUT",
      body: JSON.stringify({ observedAt: new Date(when).toISOString(), complete: true, items }),
    },
    agent,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

beforeAll(async () => {
  const testDb = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => testDb.drop());
  const db: Database = createDatabase(testDb.url, { poolMax: 2 });
  cleanups.push(() => db.close());
  const now = Date.now();
  names = ["win-gpu001", "win-gpu002"];
  siteId = await seedNetboxOnlyDevices(
    db.prisma,
    { slug: "windows" },
    names.map((name) => ({ name, role: "gpu-node" as const })),
    new Date(now - 2 * 3600 * S),
  );
  // Observed by NetBox just inside and just outside the staleness window.
  await seedNetboxOnlyDevices(
    db.prisma,
    { slug: "staleness" },
    [{ name: "fresh-gpu001", role: "gpu-node" }],
    new Date(now - (STALE_AFTER_S - 30) * S),
  );
  await seedNetboxOnlyDevices(
    db.prisma,
    { slug: "staleness" },
    [{ name: "stale-gpu001", role: "gpu-node" }],
    new Date(now - (STALE_AFTER_S + 30) * S),
  );

  hub = await startHub({
    DATABASE_URL: testDb.url,
    FM_IMPAIRMENT_CORDON_AFTER_S: String(CORDON_AFTER_S),
    FM_IMPAIRMENT_RELEASE_AFTER_S: String(RELEASE_AFTER_S),
    // Two devices: impairment may cordon one of them (the default 10 % would hold the site).
    FM_IMPAIRMENT_MAX_SITE_FRACTION: "0.5",
    FM_STALE_AFTER_S: String(STALE_AFTER_S),
    FM_SITE_SILENCE_AFTER_S: String(SILENCE_AFTER_S),
    FM_FEED_RETENTION_S: String(RETENTION_S),
    FM_FEED_SNAPSHOT_TIMEOUT_S: "10",
  });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);

  // The retention clock starts first (it is the longest wait): one committed change, and the
  // position just below it.
  const head = await api<{ head: string }>("/api/v1/feeds/inventory/?after=latest&limit=1");
  const created = await api("/api/v1/sites/", {
    method: "POST",
    body: JSON.stringify({ slug: "retained", name: "Retained" }),
  });
  expect(created.status).toBe(201);
  retained = { committedAt: Date.now(), after: head.body.head };

  const sat = await api<{ secrets: { agent: string; clientSecret: string }[] }>("/api/v1/satellites", {
    method: "POST",
    body: JSON.stringify({ name: "win1", siteIds: [siteId], environment: "prod" }),
  });
  expect(sat.status).toBe(201);
  const secret = sat.body.secrets.find((s) => s.agent === "health-status")!.clientSecret;
  agent = await clientToken(hub.url, "health-status-agent-win1", secret);
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

describe("the hub process's windows, read from its environment in seconds", () => {
  it("FM_IMPAIRMENT_CORDON_AFTER_S and FM_IMPAIRMENT_RELEASE_AFTER_S: not a second early, and on time", async () => {
    const [sick, well] = names as [string, string];
    const t0 = Date.now() - 2 * 3600 * S + 60 * S;
    await pushHealth(t0, [sick]);
    await pushHealth(t0 + (CORDON_AFTER_S - 1) * S, [sick]);
    expect(await device(sick)).toMatchObject({ cordoned: false, health: { status: "critical" } });
    await pushHealth(t0 + CORDON_AFTER_S * S, [sick]);
    expect(await device(sick)).toMatchObject({ cordoned: true, cordonSource: "impairment" });
    expect((await device(well)).cordoned).toBe(false);

    // Healthy again from t1: still cordoned a second before the release window, released at it.
    const t1 = t0 + (CORDON_AFTER_S + 60) * S;
    await pushHealth(t1);
    await pushHealth(t1 + (RELEASE_AFTER_S - 1) * S);
    expect(await device(sick)).toMatchObject({ cordoned: true, cordonSource: "impairment" });
    await pushHealth(t1 + RELEASE_AFTER_S * S);
    expect(await device(sick)).toMatchObject({ cordoned: false, cordonSource: null });
  });

  it("FM_STALE_AFTER_S: a device observed 30 s inside the window is not STALE, one 30 s outside it is", async () => {
    expect((await device("fresh-gpu001")).operationalStatus).not.toBe("STALE");
    expect((await device("stale-gpu001")).operationalStatus).toBe("STALE");
  });

  it("FM_SITE_SILENCE_AFTER_S: a site still reports at half its window, and is silent by it", async () => {
    const reporting = async () => {
      const site = (await api<Site>(`/api/v1/sites/${siteId}/`)).body;
      return {
        status: site.conditions.find((c) => c.type === "Reporting")!.status,
        silence: site.sources.find((s) => s.source === "health")!.silenceSeconds,
      };
    };
    await pushHealth(Date.now() - 5 * S);
    const accepted = Date.now();
    await sleep(accepted + (SILENCE_AFTER_S / 2) * S - Date.now());
    const half = await reporting();
    expect(half.status).toBe("True");
    // The silence is counted in seconds since the push: about half the window, never the window.
    expect(half.silence).toBeGreaterThanOrEqual(SILENCE_AFTER_S / 2 - 1);
    expect(half.silence).toBeLessThan(SILENCE_AFTER_S);
    await sleep(accepted + (SILENCE_AFTER_S + 2) * S - Date.now());
    expect((await reporting()).status).toBe("False");
  });

  it(
    "FM_FEED_RETENTION_S: an event is still readable at half the retention, and purged by retention + one purge interval",
    async () => {
      const read = () => api<{ code?: string; items?: unknown[] }>(`/api/v1/feeds/inventory/?after=${retained.after}`);
      await sleep(retained.committedAt + (RETENTION_S / 2) * S - Date.now());
      const half = await read();
      expect(half.status).toBe(200);
      expect(half.body.items!.length).toBeGreaterThan(0);
      const by = retained.committedAt + (RETENTION_S + PURGE_INTERVAL_S + 10) * S;
      let last = half;
      while (Date.now() < by) {
        last = await read();
        if (last.status === 410) break;
        await sleep(2 * S);
      }
      expect(last.status).toBe(410);
      expect(last.body.code).toBe("feed_cursor_expired");
      // ...and it was not purged before it was older than the retention.
      expect(Date.now() - retained.committedAt).toBeGreaterThanOrEqual(RETENTION_S * S);
    },
    { timeout: (RETENTION_S + PURGE_INTERVAL_S + 60) * S },
  );
});
