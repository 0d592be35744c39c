/** The NetBox test server (`@fm/test-support/netbox-server`): see netbox-server/index.ts. */
export * from "./netbox-server/index.ts";
