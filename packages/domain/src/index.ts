export * from "./errors.ts";
export * from "./problem.ts";
export * from "./common.ts";
export * from "./base64url.ts";
export * from "./cursor.ts";
export * from "./diff.ts";
export * from "./sites.ts";
export * from "./inventory.ts";
export {
  IRONIC_ALLOCATED_STATES,
  IRONIC_ENROLLING_STATES,
  IRONIC_FAILED_STATES,
  HEALTHY_CHECK_STATUSES,
  type DeviceObservations,
} from "./device-observations.ts";
export * from "./slurm-nodes.ts";
export * from "./device-conditions.ts";
export * from "./device-status.ts";
export * from "./devices.ts";
export * from "./slurm-bootstrap.ts";
export * from "./netbox-settings.ts";
export * from "./topology.ts";
export * from "./audit.ts";
export * from "./feed.ts";
export * from "./inventory-records.ts";
export * from "./identity.ts";
export * from "./reflections.ts";
export * from "./discrepancies.ts";
export * from "./burn-in.ts";
export * from "./burn-in-output.ts";
export * from "./jobs.ts";
export * from "./workflows.ts";
export * from "./metrics.ts";
export * from "./logging.ts";
export * from "./impairment.ts";
export * from "./oauth-clients.ts";
export * from "./ib-guid.ts";
export * from "./mac.ts";
export * from "./image-source.ts";
