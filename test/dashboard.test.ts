/**
 * The "Fleet Manager — SEV-1" dashboard (infra/dashboards/) against the alert rules
 * (infra/alerts/): one panel per alert, named by the alert's `dashboard_panel`, whose queries
 * are the alert's and whose red lines are the alert's thresholds, so that what the on-call
 * engineer sees crossing the line is what pages.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allRules } from "./alerts/promtool.ts";

interface Thresholds {
  mode: string;
  steps: { color: string; value: number | null }[];
}
interface Panel {
  title: string;
  type: string;
  targets: { refId: string; expr: string }[];
  fieldConfig: {
    defaults: { thresholds: Thresholds; custom: { thresholdsStyle: { mode: string } } };
    overrides: { matcher: { id: string; options: string }; properties: { id: string; value: unknown }[] }[];
  };
}

const DASHBOARD = JSON.parse(
  readFileSync(join(import.meta.dirname, "../infra/dashboards/fleet-manager-sev1.json"), "utf8"),
) as { title: string; panels: Panel[] };

const squash = (q: string) => q.replace(/\s+/g, " ").trim();

/**
 * The alert's conditions: each operand of a top-level `or` with the threshold it is compared
 * against. An operand without a comparison (absent(...), a presence test with `unless`) fires
 * whenever it has a value, which is 1: its line is drawn at 1.
 */
function conditions(expr: string): { query: string; threshold: number }[] {
  const operands = / unless /.test(expr) ? [expr] : squash(expr).split(/ or /);
  return operands.map((o) => {
    const m = /^(.*?)\s*(?:>=|<=|>|<)\s*([0-9.]+)$/.exec(squash(o));
    return m ? { query: m[1]!, threshold: Number(m[2]) } : { query: squash(o), threshold: 1 };
  });
}

/** The red line drawn for one query of a panel: its override's thresholds, else the panel's. */
function redLine(panel: Panel, refId: string): number | undefined {
  const props = panel.fieldConfig.overrides.find(
    (o) => o.matcher.id === "byFrameRefID" && o.matcher.options === refId,
  )?.properties;
  const thresholds = (props?.find((p) => p.id === "thresholds")?.value ??
    panel.fieldConfig.defaults.thresholds) as Thresholds;
  const style = (props?.find((p) => p.id === "custom.thresholdsStyle")?.value ??
    panel.fieldConfig.defaults.custom.thresholdsStyle) as { mode: string };
  if (!style.mode.startsWith("line")) return undefined;
  return thresholds.steps.find((s) => s.color === "red" && s.value !== null)?.value ?? undefined;
}

describe("the Fleet Manager — SEV-1 dashboard", () => {
  const rules = allRules();

  it("is the runbook's dashboard, with one time-series panel per alert and no other", () => {
    expect(DASHBOARD.title).toBe("Fleet Manager — SEV-1");
    expect(DASHBOARD.panels.map((p) => p.title).sort()).toEqual(rules.map((r) => r.annotations.dashboard_panel).sort());
    expect(new Set(DASHBOARD.panels.map((p) => p.type))).toEqual(new Set(["timeseries"]));
  });

  it.each(rules.map((r) => [r.alert, r] as const))(
    "%s: its panel plots each of its conditions with the threshold as a red line",
    (_alert, rule) => {
      const panel = DASHBOARD.panels.find((p) => p.title === rule.annotations.dashboard_panel)!;
      expect(panel).toBeDefined();
      const wanted = conditions(rule.expr);
      expect(panel.targets).toHaveLength(wanted.length);
      for (const { query, threshold } of wanted) {
        const target = panel.targets.find((t) => squash(t.expr) === query);
        expect(target, `no query ${query}`).toBeDefined();
        expect(redLine(panel, target!.refId), query).toBe(threshold);
      }
    },
  );

  it("reads an alert's conditions: comparisons, and operands that fire by being present", () => {
    expect(conditions('max by (c) (a{x=~"a.+"})\n  >= 3\n  or max by (c) (b) > 600')).toEqual([
      { query: 'max by (c) (a{x=~"a.+"})', threshold: 3 },
      { query: "max by (c) (b)", threshold: 600 },
    ]);
    expect(conditions("sum(rate(r[5m])) < 5 or absent(r)")).toEqual([
      { query: "sum(rate(r[5m]))", threshold: 5 },
      { query: "absent(r)", threshold: 1 },
    ]);
    expect(conditions("present_over_time(p[1d]) unless present_over_time(p[15m])")).toEqual([
      { query: "present_over_time(p[1d]) unless present_over_time(p[15m])", threshold: 1 },
    ]);
  });
});
