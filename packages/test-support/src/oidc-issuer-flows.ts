/**
 * The test OIDC issuer's grants: what its authorization, device and token endpoints check and
 * answer. Each check cites the RFC section it follows, so a client that passes here speaks to
 * a real issuer the same way. The RFCs (immutable, so unversioned): https://www.rfc-editor.org/rfc/rfc6749,
 * …/rfc7636 (PKCE), …/rfc8252 (native apps), …/rfc8628 (device grant), …/rfc9068 (JWT access
 * tokens), …/rfc9700 (security BCP); discovery: OpenID Connect Discovery 1.0 incorporating errata
 * set 2, https://openid.net/specs/openid-connect-discovery-1_0.html.
 */
import type { ServerResponse } from "node:http";
import { createHash, randomBytes, randomUUID } from "node:crypto";

export interface TestUser {
  email: string;
  groups?: string[];
  sub?: string;
  /** Any further claims the access token should carry. */
  [claim: string]: unknown;
}

export interface FlowOptions {
  /** Public clients the flows accept (RFC 6749 2.1). Default ["fleetctl"]. */
  clientIds: string[];
  /** The audience of access tokens: the hub's FM_OIDC_AUDIENCE. Default "fleet-manager". */
  audience: string;
  /** Lifetime of access tokens, seconds. Default 600. */
  accessTokenTtlS: number;
  /** The device flow's polling interval, seconds (RFC 8628 3.2). Default 1. */
  deviceIntervalS: number;
  /** How long a device code may be used, seconds (RFC 8628 3.2 expires_in). Default 600. */
  deviceExpiresInS: number;
}

/** A token request as the issuer received it, and what it answered: "tokens" or the error code. */
export interface TokenRequestSeen {
  form: Record<string, string>;
  answer: string;
}

type Sign = (claims: Record<string, unknown>, o: { audience: string; expiresIn: number }) => Promise<string>;

export function json(res: ServerResponse, status: number, body: unknown): void {
  // RFC 6749 5.1: token responses must not be cached.
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" });
  res.end(JSON.stringify(body));
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function page(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><title>Test issuer</title><p>${escape(text)}</p>`);
}

interface Answer {
  status: number;
  body: object;
}
/** RFC 6749 5.2: `{"error", "error_description"}`; invalid_client is a 401. */
const refuse = (error: string, description: string): Answer => ({
  status: error === "invalid_client" ? 401 : 400,
  body: { error, error_description: description },
});
const oauthError = (res: ServerResponse, error: string, description: string) => {
  const a = refuse(error, description);
  json(res, a.status, a.body);
};

const base64url = (b: Buffer) => b.toString("base64url");
/** RFC 8628 6.1: eight characters from an alphabet without vowels or look-alikes, shown as XXXX-XXXX. */
function userCode(): string {
  const alphabet = "BCDFGHJKLMNPQRSTVWXZ";
  const chars = [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

/** RFC 8252 7.3 (and 8.3: IP literals, not "localhost"): http on a loopback address, any port. */
function isLoopbackRedirect(uri: string | null): boolean {
  if (!uri) return false;
  try {
    const u = new URL(uri);
    return u.protocol === "http:" && (u.hostname === "127.0.0.1" || u.hostname === "[::1]") && !u.hash;
  } catch {
    return false;
  }
}

interface CodeGrant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  user: TestUser;
  expiresAt: number;
}
interface DeviceGrant {
  clientId: string;
  userCode: string;
  scope: string;
  expiresAt: number;
  intervalMs: number;
  lastPollAt: number;
  state: "pending" | "approved" | "denied" | "used";
  user?: TestUser;
}
interface RefreshGrant {
  clientId: string;
  scope: string;
  user: TestUser;
  family: string;
  used: boolean;
}

export function createFlows(o: FlowOptions, deps: { issuer: () => string; sign: Sign }) {
  let current: TestUser | undefined;
  let slowDowns = 0;
  let throttles = 0;
  const codes = new Map<string, CodeGrant>();
  const devices = new Map<string, DeviceGrant>();
  const byUserCode = new Map<string, string>();
  const refreshTokens = new Map<string, RefreshGrant>();
  const revokedFamilies = new Set<string>();
  const tokenRequests: TokenRequestSeen[] = [];

  async function issue(g: { clientId: string; scope: string; user: TestUser; family?: string }): Promise<Answer> {
    const { email, groups, sub, ...extra } = g.user;
    const claims = {
      ...extra,
      email,
      groups: groups ?? [],
      sub: sub ?? email,
      scope: g.scope,
      client_id: g.clientId,
      jti: randomUUID(),
    };
    const refresh = base64url(randomBytes(32));
    refreshTokens.set(refresh, { ...g, family: g.family ?? randomUUID(), used: false });
    const scopes = g.scope.split(" ");
    const body = {
      access_token: await deps.sign(claims, { audience: o.audience, expiresIn: nowS() + o.accessTokenTtlS }),
      token_type: "Bearer",
      expires_in: o.accessTokenTtlS,
      refresh_token: refresh,
      scope: g.scope,
      ...(scopes.includes("openid")
        ? { id_token: await deps.sign({ email, sub: sub ?? email }, { audience: g.clientId, expiresIn: nowS() + 600 }) }
        : {}),
    };
    return { status: 200, body };
  }

  /** RFC 6749 4.1.1 / 4.1.2; PKCE required and S256 only (RFC 7636 4.3, 4.4.1). */
  function authorize(q: URLSearchParams, res: ServerResponse): void {
    const clientId = q.get("client_id");
    const redirectUri = q.get("redirect_uri");
    // 4.1.2.1: with an unknown client or a bad redirect URI, tell the user, never redirect.
    if (!clientId || !o.clientIds.includes(clientId)) return page(res, 400, "Unknown client.");
    if (!isLoopbackRedirect(redirectUri)) return page(res, 400, "The redirect URI must be a loopback http URL.");
    const back = (params: Record<string, string>) => {
      const to = new URL(redirectUri!);
      for (const [k, v] of Object.entries(params)) to.searchParams.set(k, v);
      const state = q.get("state");
      if (state !== null) to.searchParams.set("state", state);
      res.writeHead(302, { location: to.toString() }).end();
    };
    if (q.get("response_type") !== "code")
      return back({ error: "unsupported_response_type", error_description: "only response_type=code" });
    const challenge = q.get("code_challenge");
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return back({ error: "invalid_request", error_description: "code_challenge (S256) is required" });
    if (q.get("code_challenge_method") !== "S256")
      return back({ error: "invalid_request", error_description: "transform algorithm not supported" });
    const hint = q.get("login_hint");
    const user = current ?? (hint ? { email: hint } : undefined);
    if (!user) return back({ error: "access_denied", error_description: "the user declined" });
    const code = base64url(randomBytes(24));
    codes.set(code, {
      clientId,
      redirectUri: redirectUri!,
      challenge,
      scope: q.get("scope") ?? "",
      user,
      expiresAt: Date.now() + 60_000,
    });
    back({ code });
  }

  /** RFC 8628 3.1 / 3.2. */
  function deviceAuthorization(form: Record<string, string>, res: ServerResponse): void {
    if (!form.client_id || !o.clientIds.includes(form.client_id))
      return oauthError(res, "invalid_client", "unknown client");
    const deviceCode = base64url(randomBytes(32));
    const code = userCode();
    const now = Date.now();
    devices.set(deviceCode, {
      clientId: form.client_id,
      userCode: code,
      scope: form.scope ?? "",
      expiresAt: now + o.deviceExpiresInS * 1000,
      intervalMs: o.deviceIntervalS * 1000,
      lastPollAt: 0,
      state: "pending",
    });
    byUserCode.set(code, deviceCode);
    const uri = `${deps.issuer()}/device`;
    json(res, 200, {
      device_code: deviceCode,
      user_code: code,
      verification_uri: uri,
      verification_uri_complete: `${uri}?user_code=${encodeURIComponent(code)}`,
      expires_in: o.deviceExpiresInS,
      interval: o.deviceIntervalS,
    });
  }

  function pendingDevice(code: string): DeviceGrant {
    const d = devices.get(byUserCode.get(code) ?? "");
    if (!d || d.state !== "pending" || d.expiresAt <= Date.now())
      throw new Error(`no pending device authorization ${code}`);
    return d;
  }

  /** The verification page (RFC 8628 3.3): opening the complete URI signs in as the configured user. */
  function devicePage(q: URLSearchParams, res: ServerResponse): void {
    const code = q.get("user_code");
    if (!code) return page(res, 200, "Enter the code your device shows.");
    let d: DeviceGrant;
    try {
      d = pendingDevice(code);
    } catch {
      return page(res, 404, "That code is unknown or has expired.");
    }
    if (!current) {
      d.state = "denied";
      return page(res, 403, "Access denied.");
    }
    Object.assign(d, { state: "approved", user: current });
    page(res, 200, "Device approved. You may close this window.");
  }

  async function token(form: Record<string, string>, res: ServerResponse): Promise<void> {
    const answer = await tokenAnswer(form);
    const error = (answer.body as { error?: string }).error;
    tokenRequests.push({ form: { ...form }, answer: error ?? "tokens" });
    json(res, answer.status, answer.body);
  }

  async function tokenAnswer(form: Record<string, string>): Promise<Answer> {
    const clientId = form.client_id;
    // RFC 6749 3.2.1: a public client identifies itself with client_id.
    if (!clientId || !o.clientIds.includes(clientId)) return refuse("invalid_client", "unknown client");
    switch (form.grant_type) {
      case "authorization_code": {
        const g = form.code ? codes.get(form.code) : undefined;
        if (form.code) codes.delete(form.code); // 4.1.2: a code is used once
        if (!form.code_verifier || !form.redirect_uri) return refuse("invalid_request", "missing parameter");
        if (!g || g.expiresAt <= Date.now() || g.clientId !== clientId)
          return refuse("invalid_grant", "unknown, used or expired code");
        // 4.1.3: the redirect_uri must be the one the authorization request used.
        if (g.redirectUri !== form.redirect_uri) return refuse("invalid_grant", "redirect_uri mismatch");
        // RFC 7636 4.6: BASE64URL(SHA256(code_verifier)) == code_challenge.
        if (base64url(createHash("sha256").update(form.code_verifier).digest()) !== g.challenge)
          return refuse("invalid_grant", "PKCE verification failed");
        return issue(g);
      }
      case "refresh_token": {
        const g = form.refresh_token ? refreshTokens.get(form.refresh_token) : undefined;
        if (!g || g.clientId !== clientId) return refuse("invalid_grant", "unknown refresh token");
        // RFC 9700 4.14.2: a rotated-out refresh token used again means it leaked: revoke its family.
        if (g.used) revokedFamilies.add(g.family);
        if (revokedFamilies.has(g.family)) return refuse("invalid_grant", "refresh token revoked");
        g.used = true;
        // RFC 6749 6: a narrower scope may be asked for, never a wider one.
        const granted = g.scope.split(" ");
        const asked = form.scope?.split(" ").filter(Boolean);
        if (asked?.some((s) => !granted.includes(s))) return refuse("invalid_scope", "more than the original grant");
        return issue({ ...g, scope: asked ? asked.join(" ") : g.scope });
      }
      case "urn:ietf:params:oauth:grant-type:device_code": {
        const d = form.device_code ? devices.get(form.device_code) : undefined;
        if (!d || d.clientId !== clientId) return refuse("invalid_grant", "unknown device code");
        const now = Date.now();
        if (d.expiresAt <= now) return refuse("expired_token", "the device code has expired");
        // RFC 8628 3.5: polling faster than the interval, or told to by the test: slow down by 5 s.
        const early = now - d.lastPollAt < d.intervalMs - 250;
        d.lastPollAt = now;
        // A rate limiter in front of the issuer (HTTP 429, RFC 6585 4): a client that does not
        // back off as for slow_down polls early next, and is told slow_down.
        if (throttles > 0 && !early) {
          throttles--;
          d.intervalMs += 5000;
          return { status: 429, body: { error: "temporarily_unavailable", error_description: "too many requests" } };
        }
        if (slowDowns > 0 || early) {
          slowDowns = Math.max(0, slowDowns - 1);
          d.intervalMs += 5000;
          return refuse("slow_down", "polling too fast");
        }
        if (d.state === "pending") return refuse("authorization_pending", "waiting for the user");
        if (d.state === "denied") return refuse("access_denied", "the user declined");
        if (d.state === "used") return refuse("invalid_grant", "the device code was used");
        d.state = "used";
        return issue({ clientId, scope: d.scope, user: d.user! });
      }
      default:
        return refuse(
          form.grant_type ? "unsupported_grant_type" : "invalid_request",
          "grant_type must be authorization_code, refresh_token or device_code",
        );
    }
  }

  return {
    authorize,
    deviceAuthorization,
    devicePage,
    token,
    tokenRequests: tokenRequests as ReadonlyArray<TokenRequestSeen>,
    setUser(user: TestUser | undefined) {
      current = user;
    },
    approveDevice(code: string, user?: TestUser) {
      const u = user ?? current;
      if (!u) throw new Error("approveDevice: no user (pass one or call setUser)");
      Object.assign(pendingDevice(code), { state: "approved", user: u });
    },
    denyDevice(code: string) {
      pendingDevice(code).state = "denied";
    },
    slowDownNext(polls: number) {
      slowDowns = polls;
    },
    throttleNext(polls: number) {
      throttles = polls;
    },
  };
}

const nowS = () => Math.floor(Date.now() / 1000);
