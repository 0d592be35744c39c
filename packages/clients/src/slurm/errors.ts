/**
 * How slurmrestd fails. Answers are JSON with an `errors` array: {error, error_number |
 * error_code | errno, description?, source?}. Failures are mostly HTTP 500, including "no such
 * job" (error_number 2017) and a token slurmctld rejects: 22.05 then says only "Unspecified
 * error" (-1) or, for writes, "Zero Bytes were transmitted or received" (5005), exactly what it
 * says when slurmctld does not answer. Without X-SLURM-USER-NAME and X-SLURM-USER-TOKEN
 * slurmrestd answers 401 "Authentication failure" (text, not JSON). Tokens are never put into
 * errors or messages.
 */
import { SourceApiError, SourceUnavailableError, isOutage } from "../http/http.ts";

/** One entry of slurmrestd's `errors` array, whatever the version calls the fields. */
export interface SlurmErrorEntry {
  error: string | null;
  /** Slurm's error number (error_number / error_code / errno), e.g. 2017 invalid job id. */
  errorNumber: number | null;
  description: string | null;
  source: string | null;
}

/** Slurm error numbers (slurm_errno.h) this client acts on. */
export const SLURM_ERRNO = {
  UNSPECIFIED: -1,
  INVALID_JOB_ID: 2017,
  ZERO_BYTES_TRANSMITTED: 5005,
} as const;

export class SlurmApiError extends SourceApiError {
  constructor(
    status: number,
    readonly errors: SlurmErrorEntry[],
    message: string,
  ) {
    super("slurm", status, message);
    this.name = "SlurmApiError";
  }

  get errorNumbers(): number[] {
    return this.errors.flatMap((e) => (e.errorNumber === null ? [] : [e.errorNumber]));
  }
}

/** No answer from slurmrestd (connection refused or reset, DNS, timeout) after every attempt. */
export class SlurmUnavailableError extends SourceUnavailableError {}

export function isUnknownJob(err: unknown): boolean {
  return err instanceof SlurmApiError && (err.status === 404 || err.errorNumbers.includes(SLURM_ERRNO.INVALID_JOB_ID));
}

export function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === "ECONNREFUSED";
}

/**
 * 5xx that may pass: no Slurm error number, -1 (unspecified: also a silent slurmctld), or a
 * communication/socket error (1000-1999, 5000-5999). Others (e.g. 2017 no such job) are answers.
 */
export function retryable(status: number, errors: SlurmErrorEntry[]): boolean {
  if (isOutage(status, "slurm")) return true;
  if (status !== 500) return false;
  return errors.every(
    (e) =>
      e.errorNumber === null ||
      e.errorNumber === SLURM_ERRNO.UNSPECIFIED ||
      (e.errorNumber >= 1000 && e.errorNumber < 2000) ||
      (e.errorNumber >= 5000 && e.errorNumber < 6000),
  );
}

export function parseErrors(json: unknown): SlurmErrorEntry[] {
  const list = (json as { errors?: unknown } | null | undefined)?.errors;
  if (!Array.isArray(list)) return [];
  return list.map((raw) => {
    const e = (raw ?? {}) as Record<string, unknown>;
    const num = e.error_number ?? e.error_code ?? e.errno;
    const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
    return {
      error: str(e.error),
      errorNumber: typeof num === "number" ? num : null,
      description: str(e.description),
      source: str(e.source),
    };
  });
}

export function errorSummary(errors: SlurmErrorEntry[]): string {
  return errors
    .map((e) => {
      const text =
        e.description && e.error && !e.description.includes(e.error)
          ? `${e.description}: ${e.error}`
          : (e.description ?? e.error ?? "error");
      return e.errorNumber !== null ? `${text} (${e.errorNumber})` : text;
    })
    .join("; ");
}

export function describeFailure(res: Response, text: string, errors: SlurmErrorEntry[]): string {
  if (res.status === 401)
    return `${text.trim().slice(0, 200) || res.statusText}: slurmrestd needs both X-SLURM-USER-NAME and X-SLURM-USER-TOKEN`;
  const summary = errors.length ? errorSummary(errors) : text.trim().slice(0, 300) || res.statusText;
  const opaque =
    res.status === 500 &&
    errors.length > 0 &&
    errors.every(
      (e) => e.errorNumber === SLURM_ERRNO.UNSPECIFIED || e.errorNumber === SLURM_ERRNO.ZERO_BYTES_TRANSMITTED,
    );
  // slurmrestd 22.05 says no more than this when slurmctld rejects the JWT.
  return opaque
    ? `${summary} (slurmctld rejected the request: the token may be invalid, expired or for another user, or slurmctld is not answering)`
    : summary;
}
