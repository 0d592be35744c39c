/** The backoff every process shares lives with the clients (@fm/clients), so the connectors use the same one. */
export { backoffDelay, sleepUnlessAborted as sleep } from "@fm/clients";
