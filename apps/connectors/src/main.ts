/** `npm run connector` (CONNECTOR_NAME and the rest from the environment: see README, Connectors). */
import { runConnector } from "./connector.ts";

process.exitCode = await runConnector();
// Sockets of a long-poll cut short by the shutdown must not keep the process alive.
process.exit();
