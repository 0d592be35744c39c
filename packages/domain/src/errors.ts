/**
 * Typed domain errors. Services throw these; the hub's one error handler turns them into
 * RFC 9457 problem+json. `code` is stable and machine-readable: callers branch on it.
 */
export interface FieldError {
  path: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly title: string;
  readonly code: string;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    code: string,
    detail: string,
    opts: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    if (opts.errors) this.errors = opts.errors;
    if (opts.headers) this.headers = opts.headers;
  }
}

export class BadRequest extends DomainError {
  readonly status = 400;
  readonly title = "Bad Request";
}
export class Unauthorized extends DomainError {
  readonly status = 401;
  readonly title = "Unauthorized";
}
export class Forbidden extends DomainError {
  readonly status = 403;
  readonly title = "Forbidden";
}
export class NotFound extends DomainError {
  readonly status = 404;
  readonly title = "Not Found";
}
export class Conflict extends DomainError {
  readonly status = 409;
  readonly title = "Conflict";
}
/** The resource existed and is gone for good (a feed cursor older than the feed's retention). */
export class Gone extends DomainError {
  readonly status = 410;
  readonly title = "Gone";
}
export class PreconditionFailed extends DomainError {
  readonly status = 412;
  readonly title = "Precondition Failed";
}
export class PreconditionRequired extends DomainError {
  readonly status = 428;
  readonly title = "Precondition Required";
}
export class Unprocessable extends DomainError {
  readonly status = 422;
  readonly title = "Unprocessable Content";
}
export class TooManyRequests extends DomainError {
  readonly status = 429;
  readonly title = "Too Many Requests";
}
export class ServiceUnavailable extends DomainError {
  readonly status = 503;
  readonly title = "Service Unavailable";
}
