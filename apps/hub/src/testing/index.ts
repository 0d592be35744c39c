/** The hub's test harness, for its own tests and for the clients', agents' and end-to-end tests. */
export * from "./test-hub.ts";
export * from "./inventory.ts";
