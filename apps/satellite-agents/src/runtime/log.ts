/** The agents' logger and the one way they put an error into a log line. */
import { pino, type DestinationStream, type Logger } from "pino";
import { LOG_FORMATTERS, type AgentKind } from "@fm/domain";
import type { CommonConfig } from "./config.ts";

/**
 * Synchronous writes: a process exits with process.exit right after its last line ("agent
 * exiting after repeated failures"), the one `kubectl logs --previous` must show; pino's default
 * asynchronous stream could lose it. Agents log a few lines per cycle.
 */
export function agentLogger(
  kind: AgentKind,
  config: Pick<CommonConfig, "LOG_LEVEL" | "FM_SITE">,
  satellite: string,
  destination: DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino(
    { level: config.LOG_LEVEL, formatters: LOG_FORMATTERS, base: { agent: kind, site: config.FM_SITE, satellite } },
    destination,
  );
}

/** Error to log: message and code, never a request with its headers (tokens). */
export function describeError(err: unknown): { message: string; name?: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
    return {
      name: err.name,
      message:
        err.cause instanceof Error && err.message === "fetch failed"
          ? `fetch failed: ${err.cause.message}`
          : err.message,
      ...(typeof code === "string" ? { code } : {}),
    };
  }
  return { message: String(err) };
}
