/**
 * Health cycle benchmark: 10,000 GPU devices with 8 GPUs each, their DCGM-shaped series
 * (temperature and last XID per GPU: 160,000 series) scraped by a real Prometheus from an
 * exporter this process serves; 1 % of the devices have a problem. Reports one cycle of the
 * health-status agent with the built-in rules — the site's device names from the hub, one query
 * per rule, the series turned into every device's health, the push and the hub's apply — and,
 * as the same-run baseline, the same queries sent bare (plain fetch, nothing done with the
 * answers). The first push writes every device's health; the second is the steady state.
 */
import { pino } from "pino";
import { PrometheusClient } from "@fm/clients";
import { seedNetboxOnlyDevices } from "../apps/hub/src/testing/inventory.ts";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { healthReflector } from "../apps/satellite-agents/src/health-status-agent/agent.ts";
import { DEFAULT_RULES } from "../apps/satellite-agents/src/health-status-agent/rules.ts";
import type { AgentContext } from "../apps/satellite-agents/src/runtime/agent.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import { startTestExporter } from "@fm/test-support/exporter";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, clientToken, startHub } from "@fm/test-support/process";
import { startPrometheus } from "@fm/test-support/prometheus";
import { eventually } from "@fm/test-support/wait";
import { agentHubClient } from "./agent-client.ts";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function healthCycle(report: Report, devices = knob("BENCH_HEALTH_DEVICES", 10_000, 200)) {
  const t0 = performance.now();
  const names = Array.from({ length: devices }, (_, n) => `gpu-${String(n).padStart(5, "0")}`);
  const exporter = await startTestExporter();
  for (const [k, host] of names.entries())
    for (let gpu = 0; gpu < 8; gpu++) {
      const labels = { gpu: String(gpu), UUID: `GPU-${host}-${gpu}`, device: `nvidia${gpu}`, Hostname: host };
      // 1 %: one GPU hot, or one reporting an XID.
      exporter.set("/dcgm", "DCGM_FI_DEV_GPU_TEMP", labels, k % 200 === 0 && gpu === 0 ? 95 : 50);
      exporter.set("/dcgm", "DCGM_FI_DEV_XID_ERRORS", labels, 0);
    }
  const prometheus = await startPrometheus(
    `global: { scrape_interval: 15s, scrape_timeout: 14s }
scrape_configs:
  - job_name: dcgm
    metrics_path: /dcgm
    static_configs: [{ targets: ["${exporter.address}"] }]
`,
  );
  const db = await createTestDatabase();
  await migrate(db.url);
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
  try {
    await eventually(
      async () => {
        const n = await prometheus.query("count(DCGM_FI_DEV_GPU_TEMP)");
        if (n[0]?.value !== devices * 8) throw new Error("not scraped yet");
      },
      120_000,
      1000,
    );
    // The XIDs after a first scrape, so that they are changes.
    for (const [k, host] of names.entries())
      if (k % 200 === 100)
        exporter.set(
          "/dcgm",
          "DCGM_FI_DEV_XID_ERRORS",
          { gpu: "3", UUID: `GPU-${host}-3`, device: "nvidia3", Hostname: host },
          79,
        );
    await eventually(
      async () => {
        const n = await prometheus.query("count(DCGM_FI_DEV_XID_ERRORS > 0)");
        if (n[0]?.value !== devices / 200) throw new Error("XIDs not scraped yet");
      },
      120_000,
      1000,
    );
    const prisma = createDatabase(db.url, { poolMax: 2 });
    const siteId = await seedNetboxOnlyDevices(
      prisma.prisma,
      { slug: "bench-health" },
      names.map((name) => ({ name, role: "gpu-node" as const })),
    );
    await prisma.close();
    report("(setup) exporter, Prometheus scrape, hub and devices", s(performance.now() - t0), `${devices * 16} series`);

    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const hubClient = await agentHubClient(hub.url, admin, {
      satellite: "bench-health",
      siteIds: [siteId],
      agent: "health-status",
    });
    const ctx = {
      config: {},
      log: pino({ level: "silent" }),
      hub: hubClient,
      site: { id: siteId, slug: "bench-health" },
      satellite: "bench-health",
      metrics: createAgentMetrics({ agent: "health-status", site: "bench-health", satellite: "bench-health" }),
      now: Date.now,
      signal: new AbortController().signal,
    };
    const spec = healthReflector(
      ctx as unknown as AgentContext<never>,
      new PrometheusClient({ baseUrl: prometheus.url, timeoutMs: 120_000 }),
      DEFAULT_RULES,
    );
    const signal = new AbortController().signal;
    const cycle = async () => {
      const c0 = performance.now();
      const items = await spec.list(signal);
      const c1 = performance.now();
      const r = await spec.push(items, new Date(), signal);
      const c2 = performance.now();
      const sick = (items as { status: string }[]).filter((i) => i.status !== "ok").length;
      return { read: c1 - c0, push: c2 - c1, total: c2 - c0, r, items: items.length, sick };
    };
    const first = await cycle();
    report(
      `(h) health cycle, first push: ${first.items} devices, ${DEFAULT_RULES.length} rules`,
      s(first.total),
      `devices+queries+evaluate ${s(first.read)}, hub push+apply ${s(first.push)}; updated ${String(first.r.updated)}, not ok ${first.sick}`,
    );
    const again = await cycle();
    report(
      "(h) health cycle, steady state (nothing changed)",
      s(again.total),
      `devices+queries+evaluate ${s(again.read)}, hub push+apply ${s(again.push)}; unchanged ${String(again.r.unchanged)}`,
    );
    const b0 = performance.now();
    for (const rule of DEFAULT_RULES)
      await (await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(rule.expr)}`)).text();
    const baseMs = performance.now() - b0;
    report(
      "(h) baseline: the same rule queries, bare (no device list, no evaluation, no push)",
      s(baseMs),
      `steady cycle / bare queries: ${(again.total / baseMs).toFixed(2)}×`,
    );
  } finally {
    await hub.stop();
    await prometheus.stop();
    await exporter.stop();
    await db.drop();
  }
}
