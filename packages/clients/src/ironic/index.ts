/** The OpenStack Ironic client. */
export * from "./ironic-client.ts";
