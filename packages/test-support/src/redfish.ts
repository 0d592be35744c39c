/** A Redfish BMC for tests (`@fm/test-support/redfish`): redfish/bmc.ts. */
export * from "./redfish/bmc.ts";
export * from "./redfish/certificate.ts";
