export * from "./hub-client.ts";
