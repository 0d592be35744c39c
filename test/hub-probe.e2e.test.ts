/**
 * The satellite's hub probe as deployed (infra/alerts/satellite-prometheus.yml) with real
 * parts: a real Prometheus scraping a real blackbox exporter that probes a real hub's /healthz,
 * and the satellite rules loaded. Only the intervals are shortened (1 s) and the addresses
 * pointed at this machine; the job, module, relabelling and rules are the file's. Asserted what
 * the runbook relies on: the probe reports success while the hub answers; a hub that is down
 * still scrapes cleanly and reports probe_success 0 (FleetManagerHubApiUnreachable's input);
 * an exporter that is gone makes the scrape fail and probe_success vanish
 * (FleetManagerHubProbeMissing's input).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, stringify } from "yaml";
import { startHub, type HubProcess } from "@fm/test-support/process";
import { createTestDatabase, type TestDatabase } from "@fm/test-support/postgres";
import {
  startBlackboxExporter,
  startPrometheus,
  type BlackboxPeer,
  type PrometheusPeer,
} from "@fm/test-support/prometheus";
import { eventually } from "@fm/test-support/wait";

const ALERTS = join(import.meta.dirname, "../infra/alerts");
const JOB = "fleet-manager-satellite-hub-probe";

interface ScrapeConfig {
  job_name: string;
  scrape_interval: string;
  scrape_timeout: string;
  static_configs: { targets: string[] }[];
  relabel_configs: { target_label: string; replacement?: string }[];
}

/** The committed satellite configuration, its hub and exporter addresses replaced, intervals at 1 s. */
function satelliteConfig(hubUrl: string, exporter: string): string {
  const config = parse(readFileSync(join(ALERTS, "satellite-prometheus.yml"), "utf8")) as {
    global: Record<string, string>;
    rule_files: string[];
    scrape_configs: ScrapeConfig[];
  };
  config.global.evaluation_interval = "1s";
  config.rule_files = config.rule_files.map((f) => join(ALERTS, f));
  const probe = config.scrape_configs.find((s) => s.job_name === JOB)!;
  probe.scrape_interval = "1s";
  probe.scrape_timeout = "1s";
  probe.static_configs = [{ targets: [`${hubUrl}/healthz`] }];
  const address = probe.relabel_configs.find((r) => r.target_label === "__address__")!;
  address.replacement = exporter;
  return stringify(config);
}

let db: TestDatabase;
let hub: HubProcess;
let blackbox: BlackboxPeer;
let prometheus: PrometheusPeer;

beforeAll(async () => {
  db = await createTestDatabase(inject("templateDatabase"));
  [hub, blackbox] = await Promise.all([startHub({ DATABASE_URL: db.url }), startBlackboxExporter()]);
  prometheus = await startPrometheus(satelliteConfig(hub.url, blackbox.address));
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await blackbox?.stop();
  await hub?.stop("SIGKILL");
  await db?.drop();
}, 60_000);

const value = async (promql: string) => (await prometheus.query(promql)).map((s) => s.value);

describe("a satellite's hub probe", () => {
  it("reports the hub up, then the hub down with a clean scrape, then nothing once the exporter is gone", async () => {
    // The hub answers: the probe of its /healthz through the exporter's http_2xx succeeds.
    await eventually(async () => {
      const [sample, ...others] = await prometheus.query(`probe_success{job="${JOB}"}`);
      expect(others).toEqual([]);
      expect(sample).toMatchObject({ metric: { instance: `${hub.url}/healthz`, job: JOB }, value: 1 });
    }, 30_000);
    expect(await value(`probe_http_status_code{job="${JOB}"}`)).toEqual([200]);
    // The rules load and evaluate; the group keeps its own 30 s interval, so its first
    // evaluation comes within 30 s of start.
    await eventually(async () => {
      const group = (await prometheus.rules()).find((g) => g.name === "fleet-manager-satellite");
      expect(group?.rules.map((r) => [r.name, r.health, r.lastError ?? ""])).toEqual([
        ["FleetManagerHubApiUnreachable", "ok", ""],
        ["FleetManagerHubProbeMissing", "ok", ""],
      ]);
    }, 45_000);

    // The hub down: the scrape still succeeds and says probe_success 0 (what the unreachable alert reads).
    await hub.stop();
    await eventually(async () => {
      expect(await value(`probe_success{job="${JOB}"}`)).toEqual([0]);
      expect(await value(`up{job="${JOB}"}`)).toEqual([1]);
    }, 30_000);

    // The exporter gone: the scrape fails and probe_success stops reporting (what the missing alert reads).
    await blackbox.stop();
    await eventually(async () => {
      expect(await value(`up{job="${JOB}"}`)).toEqual([0]);
      expect(await value(`probe_success{job="${JOB}"}`)).toEqual([]);
    }, 30_000);
  }, 150_000);
});
