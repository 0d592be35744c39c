/**
 * A person's login without a browser on this machine: the device authorization grant
 * (RFC 8628). The person opens the verification URI elsewhere and enters the user code while
 * this polls the token endpoint at the issuer's interval.
 */
import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import { sendWithRetries, noAnswer } from "../http/index.ts";
import {
  IssuerUnavailableError,
  OAuthError,
  judgeOAuthAnswer,
  requestToken,
  type IssuerMetadata,
  type TokenSet,
} from "./token-endpoint.ts";

/** RFC 8628 3.2; `verification_url` is the name some issuers (Google) use. */
const DeviceAuthorization = z
  .object({
    device_code: z.string().min(1),
    user_code: z.string().min(1),
    verification_uri: z.url().optional(),
    verification_url: z.url().optional(),
    verification_uri_complete: z.url().optional(),
    expires_in: z.coerce.number().positive(),
    interval: z.coerce.number().nonnegative().optional(),
  })
  .refine((d) => d.verification_uri ?? d.verification_url, { message: "verification_uri is required" });

/** RFC 8628 3.5: without an interval, 5 s; slow_down adds 5 s; an outage doubles it, up to a minute. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_MS = 5000;
const MAX_BACKOFF_MS = 60_000;

async function authorizeDevice(o: {
  metadata: IssuerMetadata;
  clientId: string;
  scopes: string[];
  signal?: AbortSignal;
}) {
  const endpoint = o.metadata.deviceAuthorizationEndpoint!;
  const { text } = await sendWithRetries({
    url: endpoint,
    method: "POST",
    form: { client_id: o.clientId, scope: o.scopes.join(" ") },
    headers: () => ({ accept: "application/json" }),
    ...(o.signal ? { signal: o.signal } : {}),
    fetch,
    timeoutMs: 15_000,
    attempts: 3,
    backoffMs: 250,
    judge: judgeOAuthAnswer,
    unavailable: (cause, attempts) =>
      new IssuerUnavailableError(noAnswer("device authorization", endpoint, attempts, cause), attempts, { cause }),
  });
  try {
    return DeviceAuthorization.parse(JSON.parse(text));
  } catch {
    throw new OAuthError("invalid_response", `${endpoint} did not answer a device authorization`);
  }
}

export async function loginWithDeviceCode(o: {
  metadata: IssuerMetadata;
  clientId: string;
  scopes: string[];
  onPrompt: (p: {
    verificationUri: string;
    verificationUriComplete?: string;
    userCode: string;
    expiresIn: number;
  }) => void;
  signal?: AbortSignal;
}): Promise<TokenSet> {
  if (!o.metadata.deviceAuthorizationEndpoint)
    throw new OAuthError("unsupported_grant_type", `${o.metadata.issuer} offers no device authorization`);
  const started = Date.now();
  const d = await authorizeDevice(o);
  const deadline = started + d.expires_in * 1000;
  o.onPrompt({
    verificationUri: (d.verification_uri ?? d.verification_url)!,
    ...(d.verification_uri_complete ? { verificationUriComplete: d.verification_uri_complete } : {}),
    userCode: d.user_code,
    expiresIn: d.expires_in,
  });
  // An interval of 0 would poll without pause: at least a second between polls.
  let intervalMs = Math.max(1, d.interval ?? DEFAULT_INTERVAL_S) * 1000;
  for (;;) {
    // Aborted: the caller's reason, as from every other step, not the timer's AbortError.
    await delay(intervalMs, undefined, o.signal ? { signal: o.signal } : {}).catch((err: unknown) => {
      o.signal?.throwIfAborted();
      throw err;
    });
    if (Date.now() >= deadline)
      throw new OAuthError("expired_token", "the device code expired before the login was approved");
    try {
      // RFC 8628 3.4. One attempt per poll: the loop is the retry, at the issuer's pace.
      return await requestToken(
        o.metadata.tokenEndpoint,
        {
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
          device_code: d.device_code,
          client_id: o.clientId,
        },
        { signal: o.signal, attempts: 1, requested: o.scopes },
      );
    } catch (err) {
      o.signal?.throwIfAborted();
      if (err instanceof OAuthError && err.error === "authorization_pending") continue;
      if (err instanceof OAuthError && err.error === "slow_down") intervalMs += SLOW_DOWN_MS;
      else if (err instanceof IssuerUnavailableError || (err instanceof OAuthError && (err.status ?? 0) >= 500))
        intervalMs = Math.min(intervalMs * 2, MAX_BACKOFF_MS);
      else throw err; // access_denied, expired_token, invalid_grant, ...
    }
  }
}
