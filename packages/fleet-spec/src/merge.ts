/**
 * `defaults` deep-merged under every cluster. Objects merge key by key; anything else (a
 * number, a string, a list, `null`) from the cluster replaces the default. Two exceptions:
 *  - a block the cluster disables (`kuberay: {enabled: false}`) replaces the default block
 *    whole, so no enabled-only setting of the default survives into a disabled policy (the
 *    seed's "a disabled block replaces enabled defaults atomically");
 *  - maps whose keys are data, not settings (`gpu_driver_package_repositories`), are replaced
 *    whole, so a cluster can declare fewer repositories than the default.
 */
const REPLACED_WHOLE = new Set(["gpu_driver_package_repositories", "mk8s", "soperator"]);

export type Plain = Record<string, unknown>;
export const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

export function deepMerge(base: unknown, over: unknown, key?: string): unknown {
  if (over === undefined) return base;
  if (!isPlain(over) || !isPlain(base)) return over;
  if (over.enabled === false || (key !== undefined && REPLACED_WHOLE.has(key))) return over;
  const out: Plain = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v, k);
  return out;
}
