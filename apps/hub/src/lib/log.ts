/** The hub's logger: pino JSON, levels as words (@fm/domain's LOG_FORMATTERS), credentials redacted. */
import { pino, type DestinationStream, type Logger } from "pino";
import { LOG_FORMATTERS } from "@fm/domain";

/** Query parameters whose values are credentials (OAuth 2.0, RFC 6749/6750/7636, and the obvious ones). */
export const SECRET_QUERY_PARAMS = [
  "client_secret",
  "access_token",
  "refresh_token",
  "code",
  "code_verifier",
  "password",
  "token",
] as const;

/**
 * `name=value` of a secret parameter in a URL's query, as it appears in a JSON log line: after
 * `?`, `&` or `;` (or at the start of a string), the value up to the next `&`, `#`, space or the
 * end of the JSON string (an escaped `\"` or `\\` is part of the value; `\n` ends it, as in a stack).
 */
const SECRET_IN_QUERY = new RegExp(`([?&;"])(${SECRET_QUERY_PARAMS.join("|")})=(?:\\\\["\\\\/]|[^&#\\s"\\\\])*`, "gi");

/** The line with the value of every secret query parameter replaced by `[redacted]`. */
export function redactSecretsInUrls(line: string): string {
  return line.includes("=") ? line.replace(SECRET_IN_QUERY, "$1$2=[redacted]") : line;
}

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
    // A secret sent in a URL (GET /oauth/token?client_secret=…) is redacted wherever the URL is
    // logged: the request log's req.url, an error's message or stack, any field or message. The
    // whole line is checked, as it is written, so no path can be forgotten.
    hooks: { streamWrite: redactSecretsInUrls },
  };
  return destination ? pino(options, destination) : pino(options);
}
