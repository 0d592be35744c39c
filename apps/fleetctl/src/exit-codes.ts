/**
 * fleetctl's exit codes, one table for every command (docs/fleetctl.md lists them). Scripts
 * branch on these, so a number never changes meaning.
 */
export const EXIT = {
  OK: 0,
  /** Anything else: the hub did not answer, a 5xx, a broken config file. */
  ERROR: 1,
  /** Bad usage: unknown command or option, a missing or invalid argument (checked before sending). */
  USAGE: 2,
  /** The hub answered 404: no such site, device, job, satellite. */
  NOT_FOUND: 3,
  /** Not logged in, the token was refused (401), or the login's scopes do not allow it (403). */
  FORBIDDEN: 4,
  /** The hub refused the change as it stands: 409 conflict, 412 stale If-Match, 422. */
  CONFLICT: 5,
  /** `job wait`: the job ended FAILED. */
  JOB_FAILED: 10,
  /** `job wait`: the job ended CANCELLED. */
  JOB_CANCELLED: 11,
  /** `job wait`: --timeout passed before the job ended (the job goes on). */
  JOB_TIMEOUT: 12,
  /** `netbox check`: the check found problems to fix before rollout. */
  CHECK_FAILED: 13,
  /** `fleet preflight`: a shortfall, or evidence missing or unreadable (fail-closed): nothing may be created. */
  PREFLIGHT_REFUSED: 14,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code for an HTTP status the hub answered with. */
export function exitForStatus(status: number): ExitCode {
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 401 || status === 403) return EXIT.FORBIDDEN;
  if (status === 409 || status === 412 || status === 422) return EXIT.CONFLICT;
  if (status === 400) return EXIT.USAGE;
  return EXIT.ERROR;
}
