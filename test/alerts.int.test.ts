/**
 * The alert rules of infra/alerts/ against the real promtool (Prometheus 2.42): the files are
 * valid, every alert of the runbook exists once with its labels and a link to its runbook
 * section, reads only metric names this software defines, and behaves as the runbook says on
 * the cases of ./alerts/cases.ts (series that fire and series that must not, the runbook's
 * incidents among them).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALERTED_METRICS, REFLECTOR_METRICS } from "@fm/domain";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import { CASES } from "./alerts/cases.ts";
import { ALERTS_DIR, RULE_FILES, allRules, runPromtool, testRules } from "./alerts/promtool.ts";

const PAGING = [
  "FleetManagerApiErrorRateHigh",
  "FleetManagerApiTrafficAbsent",
  "FleetManagerOpenStackStateStale",
  "FleetManagerWorkflowAgentStale",
  "FleetManagerTemporalWorkerDown",
  "FleetManagerMatrixFeedStalled",
];
const SATELLITE = ["FleetManagerHubApiUnreachable", "FleetManagerHubProbeMissing"];
const RUNBOOK = readFileSync(join(import.meta.dirname, "../docs/runbook.md"), "utf8");

describe("alert rule files", () => {
  it.each(Object.entries(RULE_FILES))("promtool check rules accepts %s", async (_name, file) => {
    const r = await runPromtool(["check", "rules", file]);
    expect(r.output).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });

  it("the satellite's Prometheus configuration (hub probe, rules) passes promtool check config", async () => {
    const r = await runPromtool(["check", "config", join(ALERTS_DIR, "satellite-prometheus.yml")]);
    expect(r.code, r.output).toBe(0);
  });

  it("holds the runbook's eight alerts, each once", () => {
    expect(allRules().map((r) => r.alert)).toEqual([...PAGING, ...SATELLITE]);
  });

  it.each(PAGING)("%s pages: severity=error, Sev-2 in the summary", (name) => {
    const rule = allRules().find((r) => r.alert === name)!;
    expect(rule.labels).toEqual({ severity: "error" });
    expect(rule.annotations.summary).toMatch(/^Sev-2: /);
    expect(rule.file).toBe("sev1");
  });

  it.each(SATELLITE)("%s is a satellite alert that does not page", (name) => {
    const rule = allRules().find((r) => r.alert === name)!;
    expect(["critical", "warning"]).toContain(rule.labels.severity);
    expect(rule.annotations.summary).not.toContain("Sev-2");
    expect(rule.file).toBe("satellite");
  });

  it.each([...PAGING, ...SATELLITE])("%s links to its own section of docs/runbook.md", (name) => {
    const rule = allRules().find((r) => r.alert === name)!;
    expect(rule.annotations.runbook_url).toMatch(new RegExp(`/docs/runbook\\.md#${name.toLowerCase()}$`));
    expect(RUNBOOK).toMatch(new RegExp(`^## ${name}$`, "m"));
  });

  it("reads only fleet_manager_* metrics defined in @fm/domain, and the agents export the reflector ones", async () => {
    const read = new Set(allRules().flatMap((r) => r.expr.match(/\bfleet_manager_[a-z_]+/g) ?? []));
    expect(read.size).toBeGreaterThan(0);
    for (const name of read) expect(ALERTED_METRICS).toContain(name);
    const metrics = createAgentMetrics({ agent: "openstack", site: "s", satellite: "x" });
    metrics.age.set({ store: "ironic-nodes-overcloud" }, 1);
    const exported = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of Object.values(REFLECTOR_METRICS)) expect(exported).toContain(name);
  });
});

describe.each(Object.entries(CASES))("%s", (alert, cases) => {
  it("has cases where it fires and cases where it must not", () => {
    const expectations = cases.flatMap((c) => c.expect.filter((e) => e.alert === alert));
    expect(expectations.some((e) => e.firing.length > 0)).toBe(true);
    expect(expectations.some((e) => e.firing.length === 0)).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))("promtool test rules: %s", async (_name, c) => {
    const r = await testRules(c.rules, [c]);
    expect(r.code, r.output).toBe(0);
  });
});
