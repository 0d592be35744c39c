/**
 * How every Fleet Manager process writes its log lines (the hub, every agent, the Temporal
 * worker, the CLIs): pino JSON with the level as a word, `"level":"ERROR"`, so that the
 * runbook's log searches (`|= "ERROR"`) find errors; and, for a request to the hub, the W3C
 * trace id of the request in `trace_id` on every line. Options objects only: this package
 * does not depend on pino.
 */

/** pino's `formatters` option: `"level":"INFO"` instead of `"level":30`. */
export const LOG_FORMATTERS = {
  level: (label: string): { level: string } => ({ level: label.toUpperCase() }),
};

/** The levels as they appear in a log line. */
export type LogLevelWord = "TRACE" | "DEBUG" | "INFO" | "WARN" | "ERROR" | "FATAL";

/** The log field naming a request's trace (32 lowercase hex digits), as the runbook asks for it. */
export const TRACE_ID_FIELD = "trace_id";
