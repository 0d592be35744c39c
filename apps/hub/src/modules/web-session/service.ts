/**
 * The web UI's login, held by the hub: the backend-for-frontend pattern of "OAuth 2.0 for
 * Browser-Based Applications" (draft-ietf-oauth-browser-based-apps-26 §6.1). The hub runs the
 * authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636 S256) at the people's issuer,
 * keeps the person's tokens sealed in PostgreSQL (web_sessions), and gives the browser only an
 * HttpOnly cookie naming the session. No token ever reaches page scripts, so a script injected
 * into the UI cannot carry one away; the session survives reloads, new tabs and shared links.
 *
 * A request with the cookie is the person's, with the scopes the hub granted at their last token
 * (the same group and e-mail mapping as a bearer token, `createPersonTokenVerifier`), when:
 *  - it says it comes from the UI (`X-FM-CSRF: 1`: a page of another site cannot send that
 *    header without a CORS preflight the hub never grants) and any Origin it carries is the
 *    hub's own; an unsafe method must carry one (browsers send it on every such fetch);
 *  - the session has not ended: logout, FM_WEB_SESSION_IDLE_S without a request (counted to the
 *    minute), FM_WEB_SESSION_MAX_S after login, or the issuer refusing the refresh token.
 * The access token is renewed with the refresh token a minute before it expires, one renewal
 * per session at a time across replicas (the row is locked): issuers that rotate refresh tokens
 * revoke the whole family when one is replayed (RFC 9700 §4.14.2). An issuer that cannot be
 * reached keeps the session, and is asked again 15 s later.
 */
import { createHash, randomBytes } from "node:crypto";
import { Forbidden, ServiceUnavailable, Unauthorized } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { Principal } from "../../lib/context.ts";
import { decrypt, encrypt } from "../../lib/seal.ts";
import {
  LOGIN_COOKIE_MAX_AGE_S,
  LOGIN_COOKIE_PREFIX,
  SESSION_COOKIE,
  clearCookie,
  loginCookieName,
} from "./cookies.ts";
import type { WebSessionRepo, WebSessionRow } from "./repo.ts";

/** What the service needs of the identity module: discovery of the people's issuer and its token check. */
export interface PeopleIssuer {
  issuer: string;
  discover: () => Promise<{
    authorization_endpoint?: string;
    token_endpoint?: string;
    end_session_endpoint?: string;
  }>;
  verify: (accessToken: string) => Promise<Principal>;
}

export interface WebSessionConfig {
  /** The client id the hub logs people in as at the issuer (FM_WEB_CLIENT_ID). */
  clientId: string;
  /** Seconds without a request after which a session ends (FM_WEB_SESSION_IDLE_S). */
  idleS: number;
  /** Seconds after login at which a session ends whatever happens (FM_WEB_SESSION_MAX_S). */
  maxS: number;
  /** The hub's public origin (from FM_ISSUER_URL); unset: the origin each request was made to. */
  publicOrigin?: string | undefined;
}

export interface WebSessionDeps {
  prisma: PrismaClient;
  repo: WebSessionRepo;
  kek: Buffer;
  people: PeopleIssuer;
  config: WebSessionConfig;
  now?: () => number;
}

/** Renew the access token this long before it expires (ms). */
const RENEW_MARGIN_MS = 60_000;
/** After a renewal that found the issuer unreachable, the next try (ms). */
const RENEW_RETRY_MS = 15_000;
/** The last request is written down at most this often (ms): the idle clock's resolution. */
const TOUCH_EVERY_MS = 60_000;
const ISSUER_TIMEOUT_MS = 5_000;

/** Why a login came back without a session: the code the UI turns into a sentence. */
export type LoginFailure =
  | "login_not_started"
  | "login_expired"
  | "issuer_refused"
  | "exchange_failed"
  | "no_access"
  | "login_service_unavailable";

export class LoginFailed extends Error {
  constructor(
    readonly reason: LoginFailure,
    /** The issuer's own OAuth error code (RFC 6749 §4.1.2.1), when it sent one. */
    readonly issuerError?: string,
    /** The page the login started from, when the failure is of a login this browser started. */
    readonly returnTo = "/ui/",
  ) {
    super(reason);
  }
}

interface PendingLogin {
  state: string;
  verifier: string;
  returnTo: string;
  redirectUri: string;
  expiresAt: number;
}

interface Tokens {
  accessToken: string;
  refreshToken?: string | undefined;
  idToken?: string | undefined;
}

/** What the request says about itself, for the checks above. */
export interface SessionRequest {
  method: string;
  cookies: Map<string, string>;
  origin: string | undefined;
  csrf: string | undefined;
  /** The Host the request was made to (`hub.example.com`, `127.0.0.1:8080`). */
  host: string | undefined;
  /** The origin the request was made to (`http://host:port`; behind a proxy, its scheme may be the proxy's). */
  requestOrigin: string;
}

const hashOf = (id: string) => createHash("sha256").update(id).digest("hex");
const random = (bytes: number) => randomBytes(bytes).toString("base64url");
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const OAUTH_ERROR_CODE = /^[a-z_]{1,40}$/;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const hostOf = (origin: string) => {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
};

/** Scopes asked for at the issuer: a person gets the part of them the hub's scope mapping allows. */
export const LOGIN_SCOPES = "openid email offline_access fleet.read fleet.operate fleet.admin";

/** Where a login may return to: a page of the UI, on this hub, never the login's own routes. */
export function safeReturnTo(returnTo: string | undefined): string {
  if (!returnTo || !returnTo.startsWith("/ui/") || returnTo.includes("\\")) return "/ui/";
  const url = new URL(returnTo, "http://hub.invalid");
  if (url.origin !== "http://hub.invalid" || !url.pathname.startsWith("/ui/")) return "/ui/";
  if (/^\/ui\/(login|callback|logout)\/?$/.test(url.pathname)) return "/ui/";
  return url.pathname + url.search;
}

class TokenRefused extends Error {}

export function createWebSessionService(deps: WebSessionDeps) {
  const { prisma, repo, kek, people, config } = deps;
  const now = deps.now ?? Date.now;
  const seal = (value: unknown) => encrypt(kek, JSON.stringify(value));
  const unseal = <T>(sealed: string) => JSON.parse(decrypt(kek, sealed)) as T;
  const renewing = new Map<string, Promise<WebSessionRow>>();
  const unreachableUntil = new Map<string, number>();

  const ended = (detail: string) =>
    new Unauthorized("session_ended", detail, { headers: { "set-cookie": clearCookie(SESSION_COOKIE) } });
  const unavailable = () =>
    new ServiceUnavailable(
      "login_service_unavailable",
      "The login service cannot be reached to renew this session: try again shortly",
      { headers: { "retry-after": String(RENEW_RETRY_MS / 1000) } },
    );

  async function endpoints() {
    let meta: Awaited<ReturnType<PeopleIssuer["discover"]>>;
    try {
      meta = await people.discover();
    } catch {
      throw new LoginFailed("login_service_unavailable");
    }
    if (!meta.authorization_endpoint || !meta.token_endpoint) throw new LoginFailed("login_service_unavailable");
    return { ...meta, authorization_endpoint: meta.authorization_endpoint, token_endpoint: meta.token_endpoint };
  }

  /** One token request; TokenRefused when the issuer said no (any 4xx), other errors when it could not answer. */
  async function tokenRequest(form: Record<string, string>): Promise<{ tokens: Tokens; expiresAt: number }> {
    const { token_endpoint } = await endpoints();
    const res = await fetch(token_endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ ...form, client_id: config.clientId }),
      redirect: "error",
      signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status >= 400 && res.status < 500) throw new TokenRefused(String(body.error ?? res.status));
    if (!res.ok || typeof body.access_token !== "string") throw new Error(`token endpoint answered ${res.status}`);
    const expiresIn = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : 300;
    return {
      tokens: {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
        idToken: typeof body.id_token === "string" ? body.id_token : undefined,
      },
      expiresAt: now() + expiresIn * 1000,
    };
  }

  const principalOf = (row: WebSessionRow): Principal => ({
    id: row.principal,
    kind: "person",
    scopes: new Set(row.scopes),
  });

  /** Renews the session's access token; the row as it is afterwards. */
  async function renew(row: WebSessionRow): Promise<WebSessionRow> {
    const outcome = await prisma.$transaction(
      async (tx): Promise<{ row: WebSessionRow } | { ended: string } | { unreachable: true }> => {
        const locked = await repo.findForUpdate(tx, row.idHash);
        if (!locked) return { ended: "This session has ended: log in again" };
        // Another request (here or on another replica) renewed it while this one waited.
        if (locked.accessExpiresAt.getTime() - RENEW_MARGIN_MS > now()) return { row: locked };
        const tokens = unseal<Tokens>(locked.tokensSealed);
        if (!tokens.refreshToken) return { ended: "The login service gave no refresh token: log in again" };
        let next: Awaited<ReturnType<typeof tokenRequest>>;
        try {
          next = await tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refreshToken });
        } catch (err) {
          if (err instanceof TokenRefused)
            return { ended: `The login service ended this session (${err.message}): log in again` };
          return { unreachable: true };
        }
        const who = await people.verify(next.tokens.accessToken);
        const renewed = {
          principal: who.id,
          scopes: [...who.scopes],
          tokensSealed: seal({
            ...next.tokens,
            refreshToken: next.tokens.refreshToken ?? tokens.refreshToken,
            idToken: next.tokens.idToken ?? tokens.idToken,
          }),
          accessExpiresAt: new Date(next.expiresAt),
        };
        await repo.renewed(tx, row.idHash, renewed);
        return { row: { ...locked, ...renewed } };
      },
      { timeout: ISSUER_TIMEOUT_MS * 3, maxWait: ISSUER_TIMEOUT_MS },
    );
    if ("row" in outcome) return outcome.row;
    if ("ended" in outcome) {
      await repo.remove(prisma, row.idHash);
      throw ended(outcome.ended);
    }
    unreachableUntil.set(row.idHash, now() + RENEW_RETRY_MS);
    if (row.accessExpiresAt.getTime() > now()) return row;
    throw unavailable();
  }

  function renewOnce(row: WebSessionRow): Promise<WebSessionRow> {
    let p = renewing.get(row.idHash);
    if (!p) {
      p = renew(row).finally(() => renewing.delete(row.idHash));
      renewing.set(row.idHash, p);
    }
    return p;
  }

  /** The origin checks every cookie-carrying request passes (CSRF, draft §6.1.3.2). */
  function checkCsrf(r: SessionRequest): void {
    if (r.csrf !== "1")
      throw new Forbidden(
        "csrf_refused",
        `A request that logs in with the session cookie must carry the header X-FM-CSRF: 1 (the web UI sends it)`,
      );
    if (r.origin !== undefined && r.origin !== config.publicOrigin && hostOf(r.origin) !== r.host)
      throw new Forbidden("csrf_refused", `This request comes from ${r.origin}, not from this hub's web UI`);
    if (r.origin === undefined && !SAFE_METHODS.has(r.method))
      throw new Forbidden("csrf_refused", `A ${r.method} with the session cookie must say its Origin`);
  }

  return {
    /** The origin the issuer sends people back to (`<origin>/ui/callback`). */
    originOf: (requestOrigin: string) => config.publicOrigin ?? requestOrigin,

    /**
     * Starts a login: where to send the browser (the issuer's authorization endpoint) and the
     * cookie that carries this login's PKCE verifier and state until it comes back.
     */
    async beginLogin(requestOrigin: string, returnTo: string | undefined) {
      const { authorization_endpoint } = await endpoints();
      const pending: PendingLogin = {
        state: random(24),
        verifier: random(48),
        returnTo: safeReturnTo(returnTo),
        redirectUri: `${config.publicOrigin ?? requestOrigin}/ui/callback`,
        expiresAt: now() + LOGIN_COOKIE_MAX_AGE_S * 1000,
      };
      const url = new URL(authorization_endpoint);
      for (const [k, v] of Object.entries({
        response_type: "code",
        client_id: config.clientId,
        redirect_uri: pending.redirectUri,
        scope: LOGIN_SCOPES,
        state: pending.state,
        code_challenge: createHash("sha256").update(pending.verifier).digest("base64url"),
        code_challenge_method: "S256",
      }))
        url.searchParams.set(k, v);
      return { location: url.toString(), cookie: { name: LOGIN_COOKIE_PREFIX + pending.state, value: seal(pending) } };
    },

    /**
     * The issuer's redirect back: checks that this browser started this login (its cookie, by
     * state), exchanges the code once, and opens a session. LoginFailed says why not.
     */
    async completeLogin(query: Record<string, string | undefined>, cookies: Map<string, string>) {
      const state = query.state ?? "";
      const loginCookie = loginCookieName(state);
      const sealed = loginCookie ? cookies.get(loginCookie) : undefined;
      let pending: PendingLogin | undefined;
      try {
        pending = sealed ? unseal<PendingLogin>(sealed) : undefined;
      } catch {
        pending = undefined;
      }
      if (!loginCookie || !pending || pending.state !== state) throw new LoginFailed("login_not_started");
      const { returnTo } = pending;
      if (pending.expiresAt <= now()) throw new LoginFailed("login_expired", undefined, returnTo);
      if (query.error)
        throw new LoginFailed("issuer_refused", OAUTH_ERROR_CODE.test(query.error) ? query.error : undefined, returnTo);
      if (!query.code) throw new LoginFailed("exchange_failed", undefined, returnTo);
      let got: Awaited<ReturnType<typeof tokenRequest>>;
      try {
        got = await tokenRequest({
          grant_type: "authorization_code",
          code: query.code,
          redirect_uri: pending.redirectUri,
          code_verifier: pending.verifier,
        });
      } catch (err) {
        if (err instanceof LoginFailed) throw new LoginFailed(err.reason, err.issuerError, returnTo);
        throw new LoginFailed(
          err instanceof TokenRefused ? "exchange_failed" : "login_service_unavailable",
          undefined,
          returnTo,
        );
      }
      let who: Principal;
      try {
        who = await people.verify(got.tokens.accessToken);
      } catch {
        throw new LoginFailed("exchange_failed", undefined, returnTo);
      }
      if (who.scopes.size === 0) throw new LoginFailed("no_access", undefined, returnTo);
      const id = random(32);
      const at = now();
      await repo.sweep(prisma, new Date(at), new Date(at - config.idleS * 1000));
      await repo.create(prisma, {
        idHash: hashOf(id),
        principal: who.id,
        scopes: [...who.scopes],
        tokensSealed: seal(got.tokens),
        accessExpiresAt: new Date(got.expiresAt),
        createdAt: new Date(at),
        lastSeenAt: new Date(at),
        expiresAt: new Date(at + config.maxS * 1000),
      });
      return { sessionId: id, returnTo, loginCookie, principal: who.id };
    },

    /**
     * The person of a request that carries the session cookie (undefined when it carries none).
     * Refuses a request that fails the CSRF checks (403) and a session that has ended (401).
     */
    async authenticate(r: SessionRequest): Promise<Principal | undefined> {
      const id = r.cookies.get(SESSION_COOKIE);
      if (id === undefined) return undefined;
      checkCsrf(r);
      if (!SESSION_ID.test(id)) throw ended("This session has ended: log in again");
      let row = await repo.find(prisma, hashOf(id));
      if (!row) throw ended("This session has ended: log in again");
      const at = now();
      if (row.expiresAt.getTime() <= at || row.lastSeenAt.getTime() + config.idleS * 1000 <= at) {
        await repo.remove(prisma, row.idHash);
        throw ended(
          row.expiresAt.getTime() <= at
            ? "This session reached its maximum length: log in again"
            : "This session ended after a time without use: log in again",
        );
      }
      if (row.accessExpiresAt.getTime() - RENEW_MARGIN_MS <= at) {
        const waitUntil = unreachableUntil.get(row.idHash);
        if (waitUntil === undefined || waitUntil <= at) {
          unreachableUntil.delete(row.idHash);
          row = await renewOnce(row);
        } else if (row.accessExpiresAt.getTime() <= at) throw unavailable();
      }
      if (row.lastSeenAt.getTime() + TOUCH_EVERY_MS <= at) await repo.touch(prisma, row.idHash, new Date(at));
      return principalOf(row);
    },

    /**
     * Ends the session of the cookie (if any, after the CSRF checks): where to send the browser
     * next to end the issuer's session too, when the issuer offers RP-initiated logout.
     */
    async logout(r: SessionRequest): Promise<{ endSessionUrl: string | null }> {
      checkCsrf(r);
      const id = r.cookies.get(SESSION_COOKIE);
      if (!id || !SESSION_ID.test(id)) return { endSessionUrl: null };
      const row = await repo.find(prisma, hashOf(id));
      if (!row) return { endSessionUrl: null };
      await repo.remove(prisma, row.idHash);
      const idToken = unseal<Tokens>(row.tokensSealed).idToken;
      const endSession = await people
        .discover()
        .then((m) => m.end_session_endpoint)
        .catch(() => undefined);
      if (!endSession || !idToken) return { endSessionUrl: null };
      const url = new URL(endSession);
      url.searchParams.set("id_token_hint", idToken);
      url.searchParams.set("post_logout_redirect_uri", `${config.publicOrigin ?? r.requestOrigin}/ui/`);
      return { endSessionUrl: url.toString() };
    },

    /** Seconds a session cookie lives in the browser: the session's maximum length. */
    cookieMaxAgeS: config.maxS,
  };
}
export type WebSessionService = ReturnType<typeof createWebSessionService>;
