/** What the runtime's tests share: reading one sample back from an agent's metrics registry. */
import type { AgentMetrics } from "./metrics.ts";

/** The value of the first sample of `name` whose labels include `labels`, or undefined. */
export async function metricValue(
  metrics: AgentMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value;
}
