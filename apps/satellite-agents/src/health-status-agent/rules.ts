/**
 * Health rules: each a PromQL expression whose result series are problems, the label naming the
 * device, the condition it sets, a severity and a message template (`{{ $labels.x }}`,
 * `{{ $value }}`, as in Prometheus alert templates). Read from a YAML or JSON file
 * (HEALTH_RULES_FILE), else the defaults below.
 *
 * The defaults use the exporters' own metric names:
 * - node exporter: `up` of its scrape job; `node_infiniband_state_id{device,port}` (infiniband
 *   collector, prometheus/node_exporter `collector/infiniband_linux.go`: 1 down, 2 init,
 *   3 armed, 4 active, 5 active defer).
 * - DCGM exporter (NVIDIA/dcgm-exporter `etc/default-counters.csv`, labels `gpu`, `UUID`,
 *   `device`, `modelName`, `Hostname`): `DCGM_FI_DEV_XID_ERRORS` (gauge, value of the last XID
 *   error encountered: a change is a new XID), `DCGM_FI_DEV_GPU_TEMP` (°C); one series per GPU
 *   the driver sees, so fewer series than the device has GPUs is a GPU fallen off the bus.
 * The node exporter's `instance` is `host:port`; the device is the host part (see ./evaluate.ts).
 */
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export const HealthRuleSchema = z.strictObject({
  /** Condition name on the device, e.g. `GpuXidErrors`. */
  condition: z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,99}$/, "a name of letters and digits, starting with a letter"),
  /** PromQL returning an instant vector: one series per problem. */
  expr: z.string().min(1).max(10_000),
  /** The label whose value names the device (host:port and FQDNs are matched on the host name). */
  deviceLabel: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a Prometheus label name"),
  severity: z.enum(["warning", "critical"]),
  message: z.string().min(1).max(500),
});
export type HealthRule = z.infer<typeof HealthRuleSchema>;

export const HealthRulesFileSchema = z
  .strictObject({ rules: z.array(HealthRuleSchema).min(1).max(200) })
  .refine((f) => new Set(f.rules.map((r) => r.condition)).size === f.rules.length, {
    message: "each rule needs its own condition name",
  });

/** GPUs a GPU_COMPUTE device has, for the default "fallen off the bus" rule. */
const GPUS_PER_DEVICE = 8;

export const DEFAULT_RULES: readonly HealthRule[] = [
  {
    condition: "NodeExporterDown",
    expr: 'up{job="node"} == 0',
    deviceLabel: "instance",
    severity: "critical",
    message: "node exporter on {{ $labels.instance }} is not answering scrapes",
  },
  {
    condition: "GpuXidErrors",
    expr: "DCGM_FI_DEV_XID_ERRORS > 0 and changes(DCGM_FI_DEV_XID_ERRORS[10m]) > 0",
    deviceLabel: "Hostname",
    severity: "critical",
    message: "GPU {{ $labels.gpu }} reported XID {{ $value }} in the last 10 minutes",
  },
  {
    condition: "GpuTemperatureHigh",
    expr: "DCGM_FI_DEV_GPU_TEMP > 90",
    deviceLabel: "Hostname",
    severity: "warning",
    message: "GPU {{ $labels.gpu }} at {{ $value }} °C (over 90 °C)",
  },
  {
    condition: "GpuMissing",
    expr: `count by (Hostname) (DCGM_FI_DEV_GPU_TEMP) < ${GPUS_PER_DEVICE}`,
    deviceLabel: "Hostname",
    severity: "critical",
    message: `only {{ $value }} of ${GPUS_PER_DEVICE} GPUs visible: a GPU has fallen off the bus`,
  },
  {
    condition: "InfinibandPortDown",
    expr: "node_infiniband_state_id != 4",
    deviceLabel: "instance",
    severity: "critical",
    message: "InfiniBand port {{ $labels.device }}/{{ $labels.port }} is not active (state {{ $value }})",
  },
];

export class RulesFileError extends Error {}

/** The rules of a YAML or JSON file (`rules: [...]`), every problem named. */
export async function loadRules(file: string): Promise<HealthRule[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new RulesFileError(`${file}: cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text); // JSON is YAML
  } catch (err) {
    throw new RulesFileError(`${file}: not YAML or JSON: ${(err as Error).message}`);
  }
  const parsed = HealthRulesFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new RulesFileError(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ")}`,
    );
  return parsed.data.rules;
}
