/**
 * Site silence: how long since the hub last accepted a reflection of each source for a site,
 * on the site's representation (with its Reporting condition) and on /metrics, read from the
 * database so two replicas agree whichever one took the push. The clock is not waited on: the
 * last push is backdated in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { DEFAULT_SITE_SILENCE_AFTER_MS, DEFAULT_STALE_AFTER_MS, type DeviceList, type Site } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, startTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import { registerSiteMetrics } from "./metrics.ts";
import { siteRepo } from "./repo.ts";
import { createSiteService } from "./service.ts";

let hub: TestHub & { url: string; adminToken: string };
/** A second replica on the same database, with a 60 s window instead of the default 10 min. */
let replica: TestHub;
beforeAll(async () => {
  // Replicas share the signing keys' encryption key, as they do in a deployment.
  const identity = testIdentity("");
  hub = await startOAuthTestHub({ identity });
  replica = await startTestHub({ databaseUrl: hub.database.url, identity, siteSilenceAfterMs: 60_000 });
});
afterAll(async () => {
  await replica.close();
  await hub.close();
});

/** A site with one device and its satellite's SLURM agent token. */
async function siteWithSlurmAgent(slug: string): Promise<{ id: string; slurm: string }> {
  const id = await seedNetboxOnlyDevices(hub.db.prisma, { slug }, [{ name: `${slug}-gpu-0`, role: "gpu-node" }]);
  const res = await fetch(`${hub.url}/api/v1/satellites`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify({ name: `sat-${slug}`, siteIds: [id], environment: "prod" }),
  });
  const s = (
    (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] }
  ).secrets.find((x) => x.agent === "slurm")!;
  return { id, slurm: await clientToken(hub.url, s.clientId, s.clientSecret) };
}

const getSite = async (id: string) =>
  (await (await fetch(`${hub.url}/api/v1/sites/${id}`, { headers: bearer(hub.adminToken) })).json()) as Site;
const silenceSample = (metrics: string, slug: string, source: string) => {
  const line = metrics
    .split("\n")
    .find((l) => l.startsWith(`fleet_manager_site_source_silence_seconds{site="${slug}",source="${source}"}`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
};
const backdate = (siteId: string, ms: number) =>
  hub.db.prisma.reflectionState.updateMany({ where: { siteId }, data: { appliedAt: new Date(Date.now() - ms) } });

describe("site silence", () => {
  it("a site no agent has pushed for is Unknown and has no silence series", async () => {
    const { id } = await siteWithSlurmAgent("quiet-new");
    const site = await getSite(id);
    expect(site.sources).toEqual([]);
    expect(site.conditions).toEqual([
      expect.objectContaining({ type: "Reporting", status: "Unknown", reason: "NoReflections" }),
    ]);
    const metrics = await (await fetch(`${hub.url}/metrics`)).text();
    expect(silenceSample(metrics, "quiet-new", "slurm")).toBeUndefined();
  });

  it("grows from the last accepted push, turns the site's Reporting condition False after the window, on both replicas", async () => {
    const { id, slurm } = await siteWithSlurmAgent("quiet-later");
    const pushed = await fetch(`${hub.url}/api/v1/sites/${id}/reflections/slurm`, {
      method: "PUT",
      headers: { "content-type": "application/json", ...bearer(slurm) },
      body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items: [] }),
    });
    expect(pushed.status).toBe(200);
    const fresh = await getSite(id);
    expect(fresh.sources).toEqual([
      { source: "slurm", lastAcceptedAt: expect.any(String), silenceSeconds: expect.any(Number), silent: false },
    ]);
    expect(fresh.sources[0]!.silenceSeconds).toBeLessThan(60);
    expect(fresh.conditions[0]).toMatchObject({ status: "True", reason: "AllSourcesReporting" });

    // Five minutes without a push: within the default 10-minute window, past the replica's 60 s.
    await backdate(id, 5 * 60_000);
    expect((await getSite(id)).conditions[0]).toMatchObject({ status: "True" });
    const onReplica = (await replica.app.inject({ url: `/api/v1/sites/${id}` })).json<Site>();
    expect(onReplica.conditions[0]).toMatchObject({ status: "False", reason: "SourceSilent" });
    expect(onReplica.conditions[0]!.message).toMatch(/slurm silent for 30\ds/);

    // Twenty minutes: silent on the default window too; both replicas export the same silence.
    await backdate(id, 20 * 60_000);
    const silent = await getSite(id);
    expect(silent.sources[0]).toMatchObject({ source: "slurm", silent: true });
    expect(silent.sources[0]!.silenceSeconds).toBeGreaterThanOrEqual(1200);
    expect(silent.conditions[0]).toMatchObject({ status: "False", reason: "SourceSilent" });
    const a = silenceSample(await (await fetch(`${hub.url}/metrics`)).text(), "quiet-later", "slurm");
    const b = silenceSample((await replica.app.inject({ url: "/metrics" })).body, "quiet-later", "slurm");
    expect(a).toBeGreaterThanOrEqual(1200);
    expect(b).toBeGreaterThanOrEqual(1200);
    expect(Math.abs(a! - b!)).toBeLessThan(60);

    // A new push: reporting again.
    const again = await fetch(`${hub.url}/api/v1/sites/${id}/reflections/slurm`, {
      method: "PUT",
      headers: { "content-type": "application/json", ...bearer(slurm) },
      body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items: [] }),
    });
    expect(again.status).toBe(200);
    expect((await getSite(id)).conditions[0]).toMatchObject({ status: "True" });
  });
});

/** Pushes one SLURM reflection listing the site's device, as the agent would, observed now. */
async function pushSlurm(id: string, token: string, names: string[]): Promise<void> {
  const res = await fetch(`${hub.url}/api/v1/sites/${id}/reflections/slurm`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify({
      observedAt: new Date().toISOString(),
      complete: true,
      items: names.map((name) => ({ name, state: "IDLE", flags: [], reason: null, partitions: ["gpu"] })),
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("the site's state and its devices' staleness agree", () => {
  it("with the default windows, the site is reporting while its devices are fresh and silent by the moment they turn STALE", async () => {
    expect(DEFAULT_SITE_SILENCE_AFTER_MS).toBe(DEFAULT_STALE_AFTER_MS);
    const { id, slurm } = await siteWithSlurmAgent("agree");
    await pushSlurm(id, slurm, ["agree-gpu-0"]);
    // Everything the site's sources said, moved `ms` into the past: the push and each device stamp.
    const age = async (ms: number) => {
      const at = new Date(Date.now() - ms);
      await hub.db.prisma.reflectionState.updateMany({ where: { siteId: id }, data: { appliedAt: at } });
      await hub.db.prisma.deviceObservation.updateMany({
        where: { device: { siteId: id } },
        data: { netboxObservedAt: at, slurmObservedAt: at },
      });
    };
    const devices = async () =>
      (
        (await (
          await fetch(`${hub.url}/api/v1/devices?site=agree`, { headers: bearer(hub.adminToken) })
        ).json()) as DeviceList
      ).items.map((d) => d.operationalStatus);

    // Just inside the window (5 s before it ends): the devices are not STALE and the site reports.
    await age(DEFAULT_STALE_AFTER_MS - 5000);
    expect(await devices()).not.toContain("STALE");
    expect((await getSite(id)).conditions[0]).toMatchObject({ status: "True", reason: "AllSourcesReporting" });

    // Just past it: the devices are STALE, and the site is silent, not reporting.
    await age(DEFAULT_STALE_AFTER_MS + 5000);
    expect(await devices()).toEqual(["STALE"]);
    const silent = await getSite(id);
    expect(silent.conditions[0]).toMatchObject({ status: "False", reason: "SourceSilent" });
    expect(silent.sources).toEqual([expect.objectContaining({ source: "slurm", silent: true })]);
  });
});

describe("the silence metric inside the window", () => {
  it("reports the seconds since the last accepted push shortly after it, well below the window", async () => {
    const { id, slurm } = await siteWithSlurmAgent("metric-early");
    await pushSlurm(id, slurm, []);
    const { appliedAt } = await hub.db.prisma.reflectionState.findFirstOrThrow({ where: { siteId: id } });
    // A scrape 42 s after the push, by a clock the test holds.
    const registry = new Registry();
    const service = createSiteService({
      prisma: hub.db.prisma,
      repo: siteRepo,
      silenceAfterMs: DEFAULT_SITE_SILENCE_AFTER_MS,
      now: () => new Date(appliedAt.getTime() + 42_500),
    });
    registerSiteMetrics(registry, service);
    expect(silenceSample(await registry.metrics(), "metric-early", "slurm")).toBe(42);
    // And the hub's own /metrics right after the push: a few seconds at most, not absent, not the window.
    const now = silenceSample(await (await fetch(`${hub.url}/metrics`)).text(), "metric-early", "slurm");
    expect(now).toBeGreaterThanOrEqual(0);
    expect(now).toBeLessThan(30);
  });
});
