export * from "./hub/hub-client.ts";
export * from "./ironic/ironic-client.ts";
export * from "./openstack/index.ts";
export * from "./netbox/index.ts";
export * from "./slurm/index.ts";
export { SourceUnavailableError } from "./http/http.ts";
