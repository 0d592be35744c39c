/** The OpenStack Ironic client. */
export * from "./ironic-client.ts";
export * from "./ironic-port.ts";
export * from "./ironic-inventory.ts";
