/**
 * The Ironic client's two failure classes, so callers can tell them apart (e.g. as a metric
 * label): IronicApiError (Ironic answered, with an error) and IronicUnavailableError (it did
 * not). Their own file so the pager (paging.ts) builds its error without importing the client.
 */
import { SourceApiError, SourceUnavailableError } from "../http/http.ts";

export class IronicApiError extends SourceApiError {
  constructor(
    status: number,
    /** The response body as received (Ironic's error document, or whatever answered). */
    readonly body: string,
    message: string,
  ) {
    super("ironic", status, message);
    this.name = "IronicApiError";
  }
}

/** No answer from Ironic (connection refused or reset, DNS, timeout) after every attempt. */
export class IronicUnavailableError extends SourceUnavailableError {}
