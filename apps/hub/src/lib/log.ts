/** The hub's logger: pino JSON, levels as words (@fm/domain's LOG_FORMATTERS), credentials redacted. */
import { pino, type DestinationStream, type Logger } from "pino";
import { LOG_FORMATTERS } from "@fm/domain";

export function hubLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    name: "hub",
    level,
    formatters: LOG_FORMATTERS,
    // Never log credentials, whatever a caller sends.
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "*.password", "*.secret", "*.clientSecret"],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
