/** Typed clients, one folder per source. */
export * from "./hub/index.ts";
export * from "./ironic/index.ts";
export * from "./nova/index.ts";
export * from "./openstack/index.ts";
export * from "./netbox/index.ts";
export * from "./slurm/index.ts";
export * from "./prometheus/index.ts";
export * from "./oauth/index.ts";
export {
  SourceApiError,
  SourceUnavailableError,
  isOutage,
  retryAfterMs,
  statusClass,
  statusRow,
  type SourceName,
  type StatusClass,
  type StatusRow,
} from "./http/index.ts";
export { backoffDelay, sleep as sleepUnlessAborted } from "./http/backoff.ts";
export { TokenSource, type TokenSourceOptions } from "./oauth/token-source.ts";
