/**
 * The health-status agent end to end, every part a real process over HTTP: an exporter the test
 * controls (DCGM-exporter-shaped series for every GPU of every device) → a real Prometheus
 * (Debian 2.42, under Mimir's /prometheus prefix) → `npm run agent -- health-status` → the hub
 * on PostgreSQL. An XID burst on one GPU makes its device critical, the hub cordons it for
 * impairment; the XID clears, the device is healthy again and the hub releases it. The hub's
 * windows are 3 s here (FM_IMPAIRMENT_*), the production defaults 10 and 30 minutes.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDatabase, type Database } from "../apps/hub/src/db/client.ts";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { dcgmGpuLabels, setHealthyGpus, startTestExporter, type TestExporter } from "@fm/test-support/exporter";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { startPrometheus, type PrometheusPeer } from "@fm/test-support/prometheus";
import { eventually } from "@fm/test-support/wait";

interface Device {
  id: string;
  name: string;
  cordoned: boolean;
  cordonReason: string | null;
  cordonSource: string | null;
  operationalStatus: string;
  health: { status: string | null; conditions: { name: string; status: string; message?: string }[] };
}

const NAMES = Array.from({ length: 10 }, (_, n) => `gpu-${String(n + 1).padStart(3, "0")}`);
const cleanups: (() => Promise<unknown>)[] = [];
let exporter: TestExporter;
let prometheus: PrometheusPeer;
let hub: HubProcess;
let agent: AgentProcess;
let admin: string;

beforeAll(async () => {
  exporter = await startTestExporter();
  cleanups.push(() => exporter.stop());
  for (const host of NAMES) setHealthyGpus(exporter, host);
  prometheus = await startPrometheus(
    `global: { scrape_interval: 1s }
scrape_configs:
  - job_name: dcgm
    metrics_path: /dcgm
    static_configs: [{ targets: ["${exporter.address}"] }]
`,
    { routePrefix: "/prometheus" },
  );
  cleanups.push(() => prometheus.stop());
  await eventually(async () => expect(await prometheus.query("DCGM_FI_DEV_GPU_TEMP")).toHaveLength(80), 60_000);

  const testDb = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => testDb.drop());
  const db: Database = createDatabase(testDb.url, { poolMax: 2 });
  cleanups.push(() => db.close());
  await seedNetboxOnlyDevices(
    db.prisma,
    { slug: "keflavik" },
    NAMES.map((name) => ({ name, role: "gpu-node" as const })),
  );
  hub = await startHub({
    DATABASE_URL: testDb.url,
    FM_IMPAIRMENT_CORDON_AFTER_S: "3",
    FM_IMPAIRMENT_RELEASE_AFTER_S: "3",
    FM_IMPAIRMENT_MAX_SITE_FRACTION: "0.2",
  });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const siteId = (await db.prisma.site.findUniqueOrThrow({ where: { slug: "keflavik" } })).id;
  const res = await fetch(`${hub.url}/api/v1/satellites/`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(admin) },
    body: JSON.stringify({ name: "sys1-ice2", siteIds: [siteId], environment: "prod" }),
  });
  expect(res.status).toBe(201);
  const creds = (
    (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] }
  ).secrets.find((s) => s.agent === "health-status")!;
  agent = await startAgent("health-status", {
    FM_HUB_URL: hub.url,
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "keflavik",
    FM_REFLECT_INTERVAL_S: "1",
    FM_HEARTBEAT_INTERVAL_S: "1",
    MIMIR_BASE_URL: prometheus.url,
  });
  cleanups.push(() => agent.stop("SIGKILL"));
}, 150_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

async function device(name: string): Promise<Device> {
  const res = await fetch(`${hub.url}/api/v1/devices/?nameExact=${name}`, { headers: bearer(admin) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Device[] }).items[0]!;
}

describe("health-status agent → hub, on a real Prometheus", () => {
  it("an XID burst on one GPU: condition, failed, impairment cordon; cleared: healthy and released", async () => {
    await agent.waitForLog((l) => l.msg === "reflector cycle done" && l.store === "health" && l.items === 10);
    for (const name of NAMES) expect((await device(name)).health.status).toBe("ok");

    exporter.set("/dcgm", "DCGM_FI_DEV_XID_ERRORS", dcgmGpuLabels("gpu-004", 2), 79);
    const sick = await eventually(async () => {
      const d = await device("gpu-004");
      expect(d.health.status).toBe("critical");
      return d;
    }, 30_000);
    expect(sick.health.conditions).toEqual([
      { name: "GpuXidErrors", status: "critical", message: "GPU 2 reported XID 79 in the last 10 minutes" },
    ]);
    expect(sick.operationalStatus).toBe("FAILED");

    const cordoned = await eventually(async () => {
      const d = await device("gpu-004");
      expect(d.cordoned).toBe(true);
      return d;
    }, 30_000);
    expect(cordoned).toMatchObject({
      cordonSource: "impairment",
      cordonReason: expect.stringMatching(/^impairment: GpuXidErrors critical since /),
    });
    for (const name of NAMES.filter((n) => n !== "gpu-004")) expect((await device(name)).cordoned).toBe(false);

    exporter.set("/dcgm", "DCGM_FI_DEV_XID_ERRORS", dcgmGpuLabels("gpu-004", 2), 0);
    await eventually(async () => expect((await device("gpu-004")).health.status).toBe("ok"), 30_000);
    const released = await eventually(async () => {
      const d = await device("gpu-004");
      expect(d.cordoned).toBe(false);
      return d;
    }, 30_000);
    expect(released).toMatchObject({ cordonSource: null, cordonReason: null, health: { status: "ok" } });
  }, 120_000);
});
