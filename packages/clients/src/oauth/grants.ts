/** The grants without a person in the loop: client credentials (machines) and refresh. */
import { requestToken, type IssuerMetadata, type TokenSet } from "./token-endpoint.ts";

/** RFC 6749 2.3.1: client id and secret are form-urlencoded before they are joined and base64'd. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
export const basicAuthorization = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString("base64")}`;

/**
 * The client credentials grant (RFC 6749 4.4.2) with client_secret_basic. `scopes` narrows the
 * token to less than the client may have (`--scope read-only`); asking for more is the issuer's
 * `invalid_scope`. Tried again on an outage: asking twice only issues a second token.
 */
export function clientCredentialsToken(o: {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  signal?: AbortSignal;
}): Promise<TokenSet> {
  return requestToken(
    o.tokenEndpoint,
    { grant_type: "client_credentials", ...(o.scopes?.length ? { scope: o.scopes.join(" ") } : {}) },
    {
      headers: { authorization: basicAuthorization(o.clientId, o.clientSecret) },
      signal: o.signal,
      attempts: 3,
      requested: o.scopes,
    },
  );
}

/**
 * The refresh token grant (RFC 6749 6) for a public client. Sent once: an issuer that rotates
 * refresh tokens has spent this one even when its answer is lost. When the answer carries no new
 * refresh token the old one stays valid (RFC 6749 6), so the returned set keeps it.
 */
export async function refreshToken(o: {
  metadata: IssuerMetadata;
  clientId: string;
  refreshToken: string;
  scopes?: string[];
  signal?: AbortSignal;
}): Promise<TokenSet> {
  const tokens = await requestToken(
    o.metadata.tokenEndpoint,
    {
      grant_type: "refresh_token",
      refresh_token: o.refreshToken,
      client_id: o.clientId,
      ...(o.scopes?.length ? { scope: o.scopes.join(" ") } : {}),
    },
    { signal: o.signal, attempts: 1, requested: o.scopes },
  );
  return { ...tokens, refreshToken: tokens.refreshToken ?? o.refreshToken };
}
