/**
 * Access tokens for Kusto from the Microsoft identity platform, OAuth 2.0 client credentials:
 * `POST {authority}/{tenant}/oauth2/v2.0/token` with client_id, client_secret,
 * scope `{cluster}/.default` and grant_type=client_credentials, form-encoded; the answer is
 * `{token_type, expires_in, access_token}`, an error `{error, error_description: "AADSTS…",
 * error_codes, trace_id, correlation_id}` (wire shapes cited in ../testing/SOURCES.md).
 *
 * The token is cached and renewed once 80 % of its life has passed (at least 5 minutes before
 * expiry), or at once after the sink answered 401 (`invalidate`). The secret is read from its
 * file at each grant (a rotated Secret needs no restart) and never logged.
 */
export interface EntraTokenOptions {
  authority: string;
  tenant: string;
  clientId: string;
  secret: () => string;
  scope: string;
  timeoutMs: number;
  now?: () => number;
}

/** The token endpoint refused (bad secret, unknown client) or failed: no token. */
export class TokenError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    /** `AADSTS7000215`, when the answer carried one. */
    readonly aadsts: string | undefined,
  ) {
    super(message);
    this.name = "TokenError";
  }
}

export class EntraTokenSource {
  private cached: { token: string; renewAt: number } | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;
  grants = 0;

  constructor(private readonly o: EntraTokenOptions) {
    this.now = o.now ?? Date.now;
  }

  async get(): Promise<string> {
    if (this.cached && this.now() < this.cached.renewAt) return this.cached.token;
    this.inflight ??= this.grant().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async grant(): Promise<string> {
    const started = this.now();
    const url = `${this.o.authority}/${encodeURIComponent(this.o.tenant)}/oauth2/v2.0/token`;
    const body = new URLSearchParams({
      client_id: this.o.clientId,
      client_secret: this.o.secret(),
      scope: this.o.scope,
      grant_type: "client_credentials",
    });
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body,
        signal: AbortSignal.timeout(this.o.timeoutMs),
      });
    } catch (err) {
      throw new TokenError(`token endpoint did not answer: ${(err as Error).message}`, undefined, undefined);
    }
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // An HTML error page from a proxy: the status says enough.
    }
    if (!res.ok || typeof json.access_token !== "string") {
      const description = typeof json.error_description === "string" ? json.error_description : "";
      const aadsts = /AADSTS\d+/.exec(description)?.[0];
      throw new TokenError(
        `token endpoint answered ${res.status} ${String(json.error ?? "")}${aadsts ? ` ${aadsts}` : ""}`.trim(),
        res.status,
        aadsts,
      );
    }
    this.grants++;
    const lifetimeMs = (Number(json.expires_in) || 3599) * 1000;
    const renewIn = Math.min(lifetimeMs * 0.8, Math.max(0, lifetimeMs - 300_000));
    this.cached = { token: json.access_token, renewAt: started + renewIn };
    return json.access_token;
  }
}
