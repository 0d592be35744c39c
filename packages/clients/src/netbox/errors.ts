/**
 * How NetBox fails, as this client reports it. Authentication failures are 403, not 401 (DRF
 * takes the WWW-Authenticate header from the first authentication class, SessionAuthentication,
 * which has none), with a `detail` such as "Invalid v1 token"; a missing model permission is 403
 * "You do not have permission to perform this action." Both surface as NetboxApiError
 * subclasses, told apart by the detail.
 */
import { z } from "zod";
import { SourceApiError, SourceUnavailableError } from "../http/http.ts";

export class NetboxApiError extends SourceApiError {
  constructor(
    status: number,
    /** The response body as received. */
    readonly body: string,
    message: string,
  ) {
    super("netbox", status, message);
    this.name = "NetboxApiError";
  }
}

/** 403 from a token whose user lacks the model permission (e.g. dcim.view_macaddress). */
export class NetboxPermissionError extends NetboxApiError {
  constructor(
    status: number,
    body: string,
    message: string,
    /** "dcim.macaddress": the object type the path serves. */
    readonly objectType: string,
    readonly path: string,
  ) {
    super(status, body, message);
    this.name = "NetboxPermissionError";
  }
}

/** 403 (or a proxy's 401) because the token is missing, malformed, unknown, expired or disabled. */
export class NetboxAuthenticationError extends NetboxApiError {
  constructor(status: number, body: string, message: string) {
    super(status, body, message);
    this.name = "NetboxAuthenticationError";
  }
}

/**
 * A custom field NetBox does not define for the object type. NetBox >= 4.4.10 drops such a field
 * from a write and answers 200, so a write of it is refused here instead of reporting a change
 * that was never stored.
 */
export class NetboxUndefinedCustomFieldError extends Error {
  constructor(
    readonly field: string,
    readonly objectType: string,
  ) {
    super(
      `NetBox does not define the custom field '${field}' on ${objectType}: create it (Customization → Custom Fields, object type ${objectType}) before Fleet Manager records it`,
    );
    this.name = "NetboxUndefinedCustomFieldError";
  }
}

/** No answer from NetBox (connection refused or reset, DNS, timeout) after every attempt. */
export class NetboxUnavailableError extends SourceUnavailableError {}

/** addDeviceTags was given tags NetBox does not have; it does not create them. */
export class NetboxMissingTagsError extends Error {
  constructor(readonly missing: Array<string | number>) {
    super(
      `NetBox has no tag ${missing.map((t) => (typeof t === "number" ? `#${t}` : `"${t}"`)).join(", ")}: create the tag(s) in NetBox first`,
    );
    this.name = "NetboxMissingTagsError";
  }
}

/**
 * Details NetBox gives for authentication, as opposed to authorization, failures: DRF's own
 * (no credentials, 4.2's "Invalid token header. ...") and NetBox's TokenAuthentication at 4.2
 * and 4.5 (netbox/netbox/api/authentication.py: malformed header, unparsable v2 token, unknown
 * token, allowed-IP refusal, disabled, expired, inactive user).
 */
const AUTHENTICATION_FAILURE =
  /^(Authentication credentials were not provided|Invalid (v[12] )?token|Invalid token header|Invalid authorization header|Token (expired|disabled)|User inactive|Source IP .* is not (permitted|allowed)|Client IP address could not be determined)/i;

/** What to do about an authentication failure, by its detail. */
function authenticationHint(detail: string, token: string): string {
  if (/^(Source|Client) IP/i.test(detail))
    return "the token's Allowed IPs in NetBox do not admit this client's address (as NetBox sees it, behind any proxy)";
  if (/^Invalid (authorization|token) header/i.test(detail))
    return "the Authorization header is malformed: a v1 token is sent as `Token <40 hex>`, a v2 token as `Bearer nbt_<key>.<secret>` (NetBox >= 4.5)";
  const scheme = token.startsWith("nbt_") ? "a v2 token (Bearer nbt_...)" : "a v1 token (Token ...)";
  return `NetBox rejected ${scheme}`;
}

/** The error for a NetBox answer that is not a success, by status and detail. */
export function netboxError(
  answer: { status: number; text: string; statusText: string },
  request: { method: string; path: string },
  netbox: { url: string; token: string },
): NetboxApiError {
  const { status, text } = answer;
  const { method, path } = request;
  const detail = netboxErrorMessage(text) ?? answer.statusText;
  const pathOnly = path.replace(/\?.*$/, "");
  if (status === 401 || (status === 403 && AUTHENTICATION_FAILURE.test(detail))) {
    return new NetboxAuthenticationError(
      status,
      text,
      `${method} ${pathOnly} -> ${status} ${detail} (NetBox at ${netbox.url}: ${authenticationHint(detail, netbox.token)})`,
    );
  }
  if (status === 403) {
    const objectType = objectTypeForPath(pathOnly);
    const [app, model] = objectType.split(".");
    return new NetboxPermissionError(
      status,
      text,
      `${method} ${pathOnly} -> 403 ${detail} (the token's user needs the ${app}.${method === "GET" ? "view" : "change"}_${model} permission on ${objectType})`,
      objectType,
      pathOnly,
    );
  }
  return new NetboxApiError(status, text, `${method} ${pathOnly} -> ${status} ${detail}`);
}

/** Model names of list endpoints whose name is not simply the plural without "s"/"es". */
const OBJECT_TYPE_EXCEPTIONS: Record<string, string> = {
  "core/object-changes": "core.objectchange",
  "extras/config-contexts": "extras.configcontext",
};

/** "/api/dcim/mac-addresses/12/" -> "dcim.macaddress", as NetBox names object types (app_label.model). */
export function objectTypeForPath(path: string): string {
  const m = /^\/?(?:api\/)?([a-z-]+)\/([a-z-]+)/.exec(path.replace(/^\/+/, ""));
  if (!m) return path;
  const [, app, plural] = m as unknown as [string, string, string];
  const exception = OBJECT_TYPE_EXCEPTIONS[`${app}/${plural}`];
  if (exception) return exception;
  const singular = plural.endsWith("sses") ? plural.slice(0, -2) : plural.endsWith("s") ? plural.slice(0, -1) : plural;
  return `${app}.${singular.replace(/-/g, "")}`;
}

const DetailSchema = z.looseObject({ detail: z.string() });

/**
 * The readable part of a NetBox error body: DRF's `{"detail": "..."}`, or a validation error
 * `{"field": ["message", ...]}` (filters and writes), or NetBox's 500 page
 * `{"error": "...", "exception": "..."}`.
 */
export function netboxErrorMessage(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 300) || undefined;
  }
  const detail = DetailSchema.safeParse(doc);
  if (detail.success) return detail.data.detail;
  if (doc && typeof doc === "object" && !Array.isArray(doc)) {
    const o = doc as Record<string, unknown>;
    if (typeof o.error === "string") return typeof o.exception === "string" ? `${o.exception}: ${o.error}` : o.error;
    const parts = Object.entries(o).map(
      ([k, v]) =>
        `${k}: ${Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(" ") : JSON.stringify(v)}`,
    );
    if (parts.length) return parts.join("; ");
  }
  return text.trim().slice(0, 300) || undefined;
}
