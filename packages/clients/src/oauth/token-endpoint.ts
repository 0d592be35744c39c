/**
 * What every grant shares: the issuer's metadata (discovery), the token request, its answer as
 * a TokenSet and its refusals as OAuthError. No secret, code or token ever goes into an error
 * message: a refusal carries only the issuer's own `error` and `error_description`.
 */
import { z } from "zod";
import {
  SourceUnavailableError,
  isOutage,
  noAnswer,
  retryAfterMs,
  sendWithRetries,
  type Verdict,
} from "../http/index.ts";

export interface TokenSet {
  accessToken: string;
  tokenType: string;
  /** When the access token expires, epoch ms (measured from when it was asked for). */
  expiresAt: number;
  refreshToken?: string;
  idToken?: string;
  scope?: string[];
}

export interface IssuerMetadata {
  issuer: string;
  authorizationEndpoint?: string;
  tokenEndpoint: string;
  deviceAuthorizationEndpoint?: string;
}

/**
 * A refusal in OAuth's words: an error response of the token endpoint (RFC 6749 5.2), of the
 * authorization endpoint (4.1.2.1) or of the device flow (RFC 8628 3.5); also `invalid_response`
 * (an answer that is not OAuth), `invalid_state` (a redirect this login did not ask for) and
 * `timeout` (nobody came back from the browser in time).
 */
export class OAuthError extends Error {
  readonly error: string;
  readonly description?: string;
  readonly status?: number;
  constructor(error: string, description?: string, status?: number) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
    this.error = error;
    if (description !== undefined) this.description = description;
    if (status !== undefined) this.status = status;
  }
}

/** No answer from the issuer (refused, reset, timed out) after every attempt. */
export class IssuerUnavailableError extends SourceUnavailableError {}

const REQUEST_TIMEOUT_MS = 15_000;
/** An issuer that omits expires_in (it is only RECOMMENDED, RFC 6749 5.1): assume a short life. */
const DEFAULT_LIFETIME_S = 300;

/** RFC 6749 5.2. error_description is bounded: it is shown to people, not stored. */
const ErrorBody = z.object({ error: z.string().min(1).max(200), error_description: z.string().optional() });

/** RFC 6749 5.1; expires_in as a string too, which some issuers send. */
const TokenBody = z.object({
  access_token: z.string().min(1),
  token_type: z.string().min(1),
  expires_in: z.coerce.number().positive().optional(),
  refresh_token: z.string().min(1).optional(),
  id_token: z.string().min(1).optional(),
  scope: z.string().optional(),
});

function refusal(res: Response, text: string): OAuthError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const parsed = ErrorBody.safeParse(body);
  if (parsed.success)
    return new OAuthError(parsed.data.error, parsed.data.error_description?.slice(0, 500), res.status);
  return new OAuthError("invalid_response", `HTTP ${res.status} without an OAuth error body`, res.status);
}

/** Outages (5xx, 429, no answer) are tried again when the request may be repeated; refusals never. */
export function judgeOAuthAnswer(res: Response, text: string): Verdict<OAuthError> {
  if (res.ok) return { kind: "ok" };
  // Requests that carry a code, a verifier or a refresh token are never sent on to wherever a
  // redirect points (they are made with redirect: "manual"): RFC 6749 3.2 names one endpoint.
  if (res.status >= 300 && res.status < 400)
    return {
      kind: "fail",
      error: new OAuthError("invalid_response", `HTTP ${res.status}: the endpoint redirects, and is not followed`),
    };
  const error = refusal(res, text);
  if (isOutage(res.status, "oauth"))
    return { kind: "retry", error, afterMs: retryAfterMs(res.headers.get("retry-after")) };
  return { kind: "fail", error };
}

export interface TokenRequestOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** 1 for requests that must not be repeated (a code is used once, a refresh token rotates). */
  attempts: number;
  /** The scopes asked for: the token's scope when the issuer does not say (RFC 6749 5.1). */
  requested?: string[] | undefined;
}

/** A token request (RFC 6749 4.1.3, 4.4.2, 6; RFC 8628 3.4): its answer as a TokenSet. */
export async function requestToken(
  endpoint: string,
  form: Record<string, string>,
  o: TokenRequestOptions,
): Promise<TokenSet> {
  const askedAt = Date.now();
  const { text } = await sendWithRetries({
    url: endpoint,
    method: "POST",
    form,
    redirect: "manual",
    headers: () => ({ accept: "application/json", ...o.headers }),
    signal: o.signal,
    fetch,
    timeoutMs: REQUEST_TIMEOUT_MS,
    attempts: o.attempts,
    backoffMs: 250,
    judge: judgeOAuthAnswer,
    unavailable: (cause, attempts) =>
      new IssuerUnavailableError(noAnswer("token request", endpoint, attempts, cause), attempts, { cause }),
  });
  let body: z.infer<typeof TokenBody>;
  try {
    body = TokenBody.parse(JSON.parse(text));
  } catch {
    throw new OAuthError("invalid_response", `the token endpoint ${endpoint} answered something that is not a token`);
  }
  const scope = body.scope !== undefined ? body.scope.split(" ").filter(Boolean) : o.requested;
  return {
    accessToken: body.access_token,
    tokenType: body.token_type,
    expiresAt: askedAt + (body.expires_in ?? DEFAULT_LIFETIME_S) * 1000,
    ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    ...(body.id_token ? { idToken: body.id_token } : {}),
    ...(scope ? { scope } : {}),
  };
}

/**
 * An endpoint that receives codes, verifiers and tokens is https (RFC 6749 3.1, 3.2; RFC 8414
 * 2), or plain http only on this machine's loopback (a development or test issuer).
 */
export const isSafeEndpoint = (url: string): boolean => {
  try {
    const u = new URL(url);
    return (
      u.protocol === "https:" || (u.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(u.hostname))
    );
  } catch {
    return false;
  }
};
const Endpoint = z.url().refine(isSafeEndpoint, "must be https (or http on the loopback)");

const Metadata = z.object({
  issuer: z.string().min(1),
  authorization_endpoint: Endpoint.optional(),
  token_endpoint: Endpoint,
  device_authorization_endpoint: Endpoint.optional(),
});

const trimSlash = (s: string) => s.replace(/\/+$/, "");

/**
 * The issuer's endpoints, from OpenID Connect Discovery 1.0 section 4
 * (`<issuer>/.well-known/openid-configuration`), else RFC 8414 section 3
 * (`/.well-known/oauth-authorization-server` inserted before the issuer's path). The document
 * must name the issuer asked for (OIDC Discovery 4.3, RFC 8414 3.3): a trailing slash aside,
 * anything else could be a document about another issuer.
 */
export async function discoverIssuer(issuer: string, opts: { signal?: AbortSignal } = {}): Promise<IssuerMetadata> {
  let base: URL;
  try {
    base = new URL(trimSlash(issuer));
  } catch {
    throw new OAuthError("invalid_request", `the issuer '${issuer}' is not a URL`);
  }
  const path = base.pathname === "/" ? "" : base.pathname;
  const candidates = [
    `${base.origin}${path}/.well-known/openid-configuration`,
    `${base.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  for (const url of candidates) {
    const { res, text } = await sendWithRetries({
      url,
      method: "GET",
      headers: () => ({ accept: "application/json" }),
      ...(opts.signal ? { signal: opts.signal } : {}),
      fetch,
      timeoutMs: REQUEST_TIMEOUT_MS,
      attempts: 3,
      backoffMs: 250,
      judge: (r, t): Verdict<OAuthError> => (r.ok || r.status === 404 ? { kind: "ok" } : judgeOAuthAnswer(r, t)),
      unavailable: (cause, attempts) =>
        new IssuerUnavailableError(noAnswer("discovery", url, attempts, cause), attempts, { cause }),
    });
    if (res.status === 404) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new OAuthError("invalid_response", `${url} is not an issuer metadata document`);
    }
    const parsed = Metadata.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new OAuthError("invalid_response", `${url}: ${issue.path.join(".") || "document"} ${issue.message}`);
    }
    const meta = parsed.data;
    if (trimSlash(meta.issuer) !== trimSlash(issuer))
      throw new OAuthError("invalid_response", `${url} describes the issuer '${meta.issuer}', not '${issuer}'`);
    return {
      issuer: meta.issuer,
      tokenEndpoint: meta.token_endpoint,
      ...(meta.authorization_endpoint ? { authorizationEndpoint: meta.authorization_endpoint } : {}),
      ...(meta.device_authorization_endpoint
        ? { deviceAuthorizationEndpoint: meta.device_authorization_endpoint }
        : {}),
    };
  }
  throw new OAuthError("invalid_response", `${issuer} publishes no issuer metadata`, 404);
}
