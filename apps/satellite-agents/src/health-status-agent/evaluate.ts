/**
 * From the rules' query results to the `health` reflection: one item per device of the site,
 * `ok` unless a rule's series names it, then the worst severity of its failing rules, with one
 * condition per failing rule (several GPUs failing one rule make one condition, their messages
 * joined). Pure: the agent does the I/O.
 */
import type { HealthItem } from "@fm/domain";
import type { PromSample } from "@fm/clients";
import type { HealthRule } from "./rules.ts";

export interface RuleResult {
  rule: HealthRule;
  samples: PromSample[];
}

const MESSAGE_MAX = 2000;

/** `gpu-node-01:9100` and `gpu-node-01.site.example` name the device `gpu-node-01`. */
export function deviceKeys(labelValue: string): string[] {
  const value = labelValue.trim().toLowerCase();
  const bracketed = /^\[(.*)\](:\d+)?$/.exec(value);
  if (bracketed) return [bracketed[1]!]; // an IPv6 address: no short name
  const host = value.replace(/:\d+$/, "");
  const short = host.split(".")[0]!;
  return short && short !== host ? [host, short] : [host];
}

/** The message template with `{{ $labels.name }}` and `{{ $value }}` filled in. */
export function renderMessage(template: string, sample: PromSample): string {
  return template
    .replace(/\{\{\s*\$labels\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => sample.labels[name] ?? "")
    .replace(/\{\{\s*\$value\s*\}\}/g, () => formatValue(sample.value));
}

const formatValue = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, ""));

/** Items for every device name, in the order given. Series naming no device are counted, not reported. */
export function evaluate(
  deviceNames: readonly string[],
  results: readonly RuleResult[],
): { items: HealthItem[]; unmatchedSeries: number } {
  const byKey = new Map<string, string>();
  for (const name of deviceNames) byKey.set(name.toLowerCase(), name);
  // device name → condition → messages
  const failing = new Map<string, Map<string, { rule: HealthRule; messages: Set<string> }>>();
  let unmatchedSeries = 0;
  for (const { rule, samples } of results) {
    for (const sample of samples) {
      const value = sample.labels[rule.deviceLabel];
      const device =
        value === undefined
          ? undefined
          : deviceKeys(value)
              .map((k) => byKey.get(k))
              .find(Boolean);
      if (!device) {
        unmatchedSeries++;
        continue;
      }
      const conditions = failing.get(device) ?? new Map();
      failing.set(device, conditions);
      const entry = conditions.get(rule.condition) ?? { rule, messages: new Set<string>() };
      conditions.set(rule.condition, entry);
      entry.messages.add(renderMessage(rule.message, sample));
    }
  }
  const items = deviceNames.map((name): HealthItem => {
    const conditions = failing.get(name);
    if (!conditions) return { name, status: "ok", conditions: [] };
    const list = [...conditions.values()].sort((a, b) => a.rule.condition.localeCompare(b.rule.condition));
    return {
      name,
      status: list.some((c) => c.rule.severity === "critical") ? "critical" : "warning",
      conditions: list.map(({ rule, messages }) => ({
        name: rule.condition,
        status: rule.severity,
        message: [...messages].sort().join("; ").slice(0, MESSAGE_MAX),
      })),
    };
  });
  return { items, unmatchedSeries };
}
