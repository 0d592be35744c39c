/** The Prometheus / Mimir query client. */
export * from "./prometheus-client.ts";
