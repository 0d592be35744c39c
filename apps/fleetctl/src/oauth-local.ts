/**
 * Client credentials grant (RFC 6749 4.4, client_secret_basic) until the shared OAuth library
 * in @fm/clients is merged; same signature as its `clientCredentialsToken`.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description?: string,
    readonly status?: number,
  ) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
  }
}

export async function clientCredentialsToken(o: {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  signal?: AbortSignal;
}): Promise<{ accessToken: string; tokenType: string; expiresAt: number; scope?: string[] }> {
  const basic = Buffer.from(`${encodeURIComponent(o.clientId)}:${encodeURIComponent(o.clientSecret)}`).toString(
    "base64",
  );
  const res = await fetch(o.tokenEndpoint, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      ...(o.scopes?.length ? { scope: o.scopes.join(" ") } : {}),
    }),
    signal: o.signal,
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof body.access_token !== "string")
    throw new OAuthError(
      typeof body.error === "string" ? body.error : `http_${res.status}`,
      typeof body.error_description === "string" ? body.error_description : undefined,
      res.status,
    );
  return {
    accessToken: body.access_token,
    tokenType: typeof body.token_type === "string" ? body.token_type : "Bearer",
    expiresAt: Date.now() + Number(body.expires_in ?? 600) * 1000,
    scope: typeof body.scope === "string" ? body.scope.split(" ").filter(Boolean) : undefined,
  };
}
