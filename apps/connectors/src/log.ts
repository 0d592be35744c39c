/** The connector's logger: pino, one JSON event per line, with the instance name on each. */
import { pino, type Logger } from "pino";
import { LOG_FORMATTERS } from "@fm/domain";

/** Synchronous writes, as the agents do: the last line before an exit must not be lost. */
export function connectorLogger(connector: string, level: string): Logger {
  return pino({ level, formatters: LOG_FORMATTERS, base: { connector } }, pino.destination({ dest: 1, sync: true }));
}

/** An error for a log line: name, message, code; never a request with its headers (tokens). */
export function describeError(err: unknown): { message: string; name?: string; code?: string } {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  const cause = err.cause instanceof Error && err.message === "fetch failed" ? `: ${err.cause.message}` : "";
  return { name: err.name, message: err.message + cause, ...(typeof code === "string" ? { code } : {}) };
}
