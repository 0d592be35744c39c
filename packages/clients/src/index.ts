export * from "./hub-client.ts";
export * from "./ironic-client.ts";
export * from "./openstack-auth.ts";
export * from "./netbox-client.ts";
export * from "./slurm-client.ts";
export { SourceUnavailableError } from "./http.ts";
