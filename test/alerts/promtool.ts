/**
 * Alert rule cases written as data and run by the real `promtool test rules` (Prometheus 2.42
 * from Debian, scripts/peers/prometheus.sh). A case gives input series, built here from
 * functions of time so that an incident's shape reads as what happened, and the times at which
 * an alert must be firing (with which labels) or must not be. The expected alerts' labels get
 * the rule's own labels added and their annotations are the rule's: promtool compares both.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parse, stringify } from "yaml";

const exec = promisify(execFile);

export const ALERTS_DIR = resolve(import.meta.dirname, "../../infra/alerts");
export const RULE_FILES = {
  sev1: join(ALERTS_DIR, "fleet-manager-sev1.rules.yml"),
  satellite: join(ALERTS_DIR, "satellite-hub-probe.rules.yml"),
} as const;
export type RuleFile = keyof typeof RULE_FILES;

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  interval: string;
  rules: AlertingRule[];
}

export function ruleGroups(file: RuleFile): RuleGroup[] {
  return (parse(readFileSync(RULE_FILES[file], "utf8")) as { groups: RuleGroup[] }).groups;
}

export function allRules(): (AlertingRule & { file: RuleFile; group: RuleGroup })[] {
  return (Object.keys(RULE_FILES) as RuleFile[]).flatMap((file) =>
    ruleGroups(file).flatMap((group) => group.rules.map((r) => ({ ...r, file, group }))),
  );
}

/** Seconds in a minute and an hour, so that times read as durations. */
export const M = 60;
export const H = 3600;

/** Samples every `step` seconds over [0, end]: `value(t)`, or no sample where it is undefined. */
export function sampled(end: number, step: number, value: (t: number) => number | "stale" | undefined): string {
  const out: string[] = [];
  for (let t = 0; t <= end; t += step) {
    const v = value(t);
    out.push(v === undefined ? "_" : String(v));
  }
  return out.join(" ");
}

/** A counter sampled every `step` seconds whose rate over the step that ends at t is `perSecond(t)`. */
export function counter(end: number, step: number, perSecond: (t: number) => number): string {
  let total = 0;
  return sampled(end, step, (t) => {
    if (t > 0) total += Math.round(perSecond(t) * step);
    return total;
  });
}

/** A restart count (kube-state-metrics' kube_pod_container_status_restarts_total) with a restart at each time. */
export function restarts(end: number, step: number, at: readonly number[]): string {
  return sampled(end, step, (t) => at.filter((r) => r <= t).length);
}

export interface Series {
  series: string;
  values: string;
}

/**
 * What must hold at evaluation times: `firing` lists the label sets of the alert's firing
 * instances (the rule's labels are added), an empty list means not firing.
 */
export interface Expectation {
  alert: string;
  at: readonly number[];
  firing: readonly Record<string, string>[];
}

export interface AlertCase {
  name: string;
  rules: RuleFile;
  /** Seconds between input samples. */
  step: number;
  series: Series[];
  expect: Expectation[];
}

/** Every evaluation time in [from, to] of a group evaluated every `every` seconds. */
export function every(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let t = from; t <= to; t += step) out.push(t);
  return out;
}

/** The promtool test file of `cases`, their expected alerts completed with the rules' labels and annotations. */
export function promtoolTests(file: RuleFile, cases: readonly AlertCase[]): string {
  const [group, ...others] = ruleGroups(file);
  if (!group || others.length) throw new Error(`${file}: expected one rule group`);
  const rule = (name: string) => {
    const r = group.rules.find((x) => x.alert === name);
    if (!r) throw new Error(`${file} has no alert ${name}`);
    return r;
  };
  return stringify({
    rule_files: [RULE_FILES[file]],
    evaluation_interval: group.interval,
    tests: cases.map((c) => ({
      name: c.name,
      interval: `${c.step}s`,
      input_series: c.series,
      alert_rule_test: c.expect.flatMap((e) =>
        e.at.map((t) => ({
          eval_time: `${t}s`,
          alertname: e.alert,
          exp_alerts: e.firing.map((labels) => ({
            exp_labels: { ...labels, ...rule(e.alert).labels },
            exp_annotations: rule(e.alert).annotations,
          })),
        })),
      ),
    })),
  });
}

/** Runs promtool on one test file; resolves with its exit code and output. */
export async function runPromtool(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await exec("promtool", args, { timeout: 120_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (e.code === "ENOENT") throw new Error("promtool is not installed: run scripts/peers/prometheus.sh install");
    return { code: typeof e.code === "number" ? e.code : -1, output: `${e.stdout ?? ""}${e.stderr ?? e.message}` };
  }
}

/** Writes the cases as a promtool test file and runs `promtool test rules` on it. */
export async function testRules(
  file: RuleFile,
  cases: readonly AlertCase[],
): Promise<{ code: number; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), "fm-alerts-"));
  const path = join(dir, `${file}.test.yml`);
  await writeFile(path, promtoolTests(file, cases));
  const result = await runPromtool(["test", "rules", path]);
  return { ...result, output: `${path}\n${result.output}` };
}
