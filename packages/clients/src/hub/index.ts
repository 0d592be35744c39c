/** The hub client. */
export * from "./hub-client.ts";
