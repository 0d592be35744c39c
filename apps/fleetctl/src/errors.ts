/**
 * Errors a command raises on purpose, and how any error is told to the user: on stderr, one
 * line saying what went wrong, then the hub's problem detail (code, fields, request id) when
 * there is one. Never a stack trace for an expected failure, never a token or a secret.
 */
import { EXIT, exitForStatus, type ExitCode } from "./exit-codes.ts";

/** A failure fleetctl explains itself, with the exit code it ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.ERROR,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Bad usage found before anything was sent (exit 2). */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.USAGE, hint);
    this.name = "UsageError";
  }
}

interface ProblemLike {
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: { path: string; message: string }[] | undefined;
}
/** What the hub client's errors carry; matched by shape so this module loads no client code. */
interface HubErrorLike {
  name: string;
  status: number;
  problem?: ProblemLike | undefined;
  message: string;
}
const isHubError = (e: unknown): e is HubErrorLike =>
  e instanceof Error && e.name === "HubApiError" && typeof (e as { status?: unknown }).status === "number";

/** What to add when the hub refused for lack of scope or login: the way out. */
function hintFor(status: number, code: string | undefined): string | undefined {
  if (code === "insufficient_scope")
    return "your login does not allow this: log in with a wider scope (fleetctl api login --scope operate|admin)";
  if (status === 401) return "log in again: fleetctl api login";
  if (code === "etag_mismatch")
    return "someone changed it since it was read: read it again (get) and retry if the change still applies";
  return undefined;
}

export interface Rendered {
  text: string;
  exitCode: ExitCode;
}

/** The stderr text and exit code for any error a command ended with. */
export function renderError(err: unknown): Rendered {
  if (isHubError(err)) {
    const p = err.problem;
    if (!p) return { text: `error: ${err.message}\n`, exitCode: exitForStatus(err.status) };
    const lines = [`error: ${p.title} (${p.status} ${p.code}): ${p.detail}`];
    for (const e of p.errors ?? []) lines.push(`  ${e.path}: ${e.message}`);
    const hint = hintFor(p.status, p.code);
    if (hint) lines.push(`hint: ${hint}`);
    lines.push(`request id: ${p.requestId}`);
    return { text: `${lines.join("\n")}\n`, exitCode: exitForStatus(p.status) };
  }
  if (err instanceof CliError)
    return { text: `error: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ""}`, exitCode: err.exitCode };
  if (err instanceof Error && err.name === "HubUnavailableError")
    return { text: `error: ${err.message}\n`, exitCode: EXIT.ERROR };
  const message = err instanceof Error ? err.message : String(err);
  return { text: `error: ${message}\n`, exitCode: EXIT.ERROR };
}
