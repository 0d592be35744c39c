/** The Nova compute API test server, driving the real test Ironic as Nova's Ironic driver would. */
export * from "./nova/server.ts";
export { NO_VALID_HOST, type Flavor } from "./nova/driver.ts";
