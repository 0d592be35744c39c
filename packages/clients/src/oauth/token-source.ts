/**
 * OAuth2 client credentials (RFC 6749 §4.4) through openid-client: discovery of the hub's
 * authorization server, then the grant. The token is cached and fetched again when 80 % of its
 * lifetime has passed (at least 30 s before expiry), so requests never carry a token about to
 * expire; a 401 from the hub drops it at once (`invalidate`). Concurrent callers share one
 * in-flight grant. The secret stays inside openid-client's configuration and is never logged.
 */
import * as oidc from "openid-client";

export interface TokenSourceOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  timeoutMs?: number;
  now?: () => number;
}

export class TokenSource {
  private config: oidc.Configuration | undefined;
  private cached: { token: string; refreshAt: number } | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: TokenSourceOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** A valid access token, from the cache or a fresh grant. */
  async get(): Promise<string> {
    if (this.cached && this.now() < this.cached.refreshAt) return this.cached.token;
    this.inflight ??= this.grant().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async grant(): Promise<string> {
    const issuer = new URL(this.opts.issuer);
    // Plain HTTP is allowed only because in-cluster and test hubs run without TLS; production
    // charts point FM_HUB_URL at the HTTPS ingress.
    const execute = issuer.protocol === "http:" ? [oidc.allowInsecureRequests] : [];
    this.config ??= await oidc.discovery(
      issuer,
      this.opts.clientId,
      undefined,
      oidc.ClientSecretBasic(this.opts.clientSecret),
      {
        execute,
        timeout: Math.ceil((this.opts.timeoutMs ?? 30_000) / 1000),
      },
    );
    const started = this.now();
    const tokens = await oidc.clientCredentialsGrant(this.config, this.opts.scope ? { scope: this.opts.scope } : {});
    const lifetimeMs = (tokens.expires_in ?? 300) * 1000;
    const refreshIn = Math.min(lifetimeMs * 0.8, Math.max(0, lifetimeMs - 30_000));
    this.cached = { token: tokens.access_token, refreshAt: started + refreshIn };
    return tokens.access_token;
  }
}
