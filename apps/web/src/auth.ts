/**
 * Logging a person in through the hub's OIDC issuer: authorization code with PKCE (RFC 6749
 * 4.1, RFC 7636 S256), as a public client in the browser (RFC 9700 2.1.1, "OAuth 2.0 for
 * Browser-Based Applications": no client secret, PKCE required, tokens never in storage).
 *
 * Tokens live in this module's memory only: a reload or a new tab logs in again (which an issuer
 * with a session of its own answers without asking). What must survive the round trip to the
 * issuer — the PKCE verifier, the state and the page to return to — waits in sessionStorage and
 * is removed as soon as the issuer redirects back. The access token is renewed with the refresh
 * token a minute before it expires, and once more on a 401 (the hub may have restarted its clock
 * view); an issuer that rotates refresh tokens gets the new one each time. A refresh the issuer
 * refuses (invalid_grant, any 400) forgets the tokens here only: the person's session at the
 * issuer is theirs to end; one that fails otherwise (network, 5xx) keeps them and tries again.
 */
export interface UiConfig {
  issuer: string | null;
  clientId: string;
}

interface IssuerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  end_session_endpoint?: string;
}

interface Tokens {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string | undefined;
  expiresAt: number;
}

export class LoginError extends Error {}

/** The token endpoint's refusal: its HTTP status and OAuth error code (RFC 6749 5.2), if it said one. */
class TokenRefused extends LoginError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(`The login service refused: ${code ?? `HTTP ${status}`}`);
  }
}

/** Scopes asked for: a person gets the part of them the hub's scope mapping allows. */
export const LOGIN_SCOPES = "openid email offline_access fleet.read fleet.operate fleet.admin";
const PENDING_KEY = "fm.login.pending";
const REFRESH_MARGIN_MS = 60_000;
/** After a refresh that failed without a refusal (network, issuer down), the next try. */
const REFRESH_RETRY_MS = 15_000;

let config: UiConfig | undefined;
let metadata: IssuerMetadata | undefined;
let tokens: Tokens | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;
/** Grows on every logout: a token answer asked for before it is dropped, not stored. */
let generation = 0;
const listeners = new Set<() => void>();

const notify = () => listeners.forEach((l) => l());
export const onAuthChange = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
export const isLoggedIn = () => tokens !== undefined;
export const accessToken = () => tokens?.accessToken;

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const randomString = (n = 32) => base64url(crypto.getRandomValues(new Uint8Array(n)));
const redirectUri = () => `${location.origin}/ui/callback`;

export async function loadConfig(): Promise<UiConfig> {
  const res = await fetch("/ui/config.json", { cache: "no-store" });
  if (!res.ok) throw new LoginError(`The hub did not give the UI its configuration (HTTP ${res.status})`);
  config = (await res.json()) as UiConfig;
  return config;
}

async function discover(): Promise<IssuerMetadata> {
  if (metadata) return metadata;
  if (!config?.issuer)
    throw new LoginError("This hub has no OIDC issuer configured (FM_OIDC_ISSUER): people cannot log in");
  const res = await fetch(`${config.issuer}/.well-known/openid-configuration`);
  if (!res.ok) throw new LoginError(`The login service did not answer (HTTP ${res.status})`);
  const m = (await res.json()) as IssuerMetadata;
  // OpenID Connect Discovery 4.3: the document must name the issuer it was asked for.
  if (m.issuer.replace(/\/+$/, "") !== config.issuer.replace(/\/+$/, ""))
    throw new LoginError("The login service named another issuer than the hub's");
  metadata = m;
  return m;
}

/** Goes to the issuer's login page; the browser comes back to /ui/callback. */
export async function startLogin(returnTo: string): Promise<void> {
  const m = await discover();
  const verifier = randomString(48);
  const state = randomString(16);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, returnTo }));
  const url = new URL(m.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: config!.clientId,
    redirect_uri: redirectUri(),
    scope: LOGIN_SCOPES,
    state,
    code_challenge: base64url(digest),
    code_challenge_method: "S256",
  }).toString();
  location.assign(url.toString());
}

async function tokenRequest(form: Record<string, string>): Promise<Tokens> {
  const m = await discover();
  const res = await fetch(m.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form, client_id: config!.clientId }),
    redirect: "error",
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof body.access_token !== "string")
    throw new TokenRefused(res.status, typeof body.error === "string" ? body.error : undefined);
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 300;
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : tokens?.refreshToken,
    idToken: typeof body.id_token === "string" ? body.id_token : tokens?.idToken,
    expiresAt: Date.now() + expiresIn * 1000,
  };
}

function store(next: Tokens) {
  tokens = next;
  scheduleRefresh();
  notify();
}

function scheduleRefresh(delay?: number) {
  clearTimeout(refreshTimer);
  if (!tokens?.refreshToken) return;
  const wait = delay ?? Math.max(1000, tokens.expiresAt - Date.now() - REFRESH_MARGIN_MS);
  refreshTimer = setTimeout(() => void refresh(), wait);
}

/**
 * A new access token from the refresh token. False when there is none: the issuer refused it
 * (the tokens are forgotten here, the issuer's session is left alone) or could not be reached
 * (the tokens are kept, and the refresh is tried again shortly). A logout meanwhile wins: the
 * answer to a refresh asked for before it is dropped.
 */
export function refresh(): Promise<boolean> {
  if (!tokens?.refreshToken) return Promise.resolve(false);
  const asked = generation;
  refreshing ??= tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refreshToken })
    .then((next) => {
      if (asked !== generation) return false;
      store(next);
      return true;
    })
    .catch((e: unknown) => {
      if (asked !== generation) return false;
      if (e instanceof TokenRefused && (e.status === 400 || e.code === "invalid_grant")) forget();
      else scheduleRefresh(REFRESH_RETRY_MS);
      return false;
    })
    .finally(() => (refreshing = undefined));
  return refreshing;
}

/**
 * On /ui/callback: checks the state against the login this tab started (a forged redirect
 * changes nothing), exchanges the code once, and answers where to go next.
 */
export function completeLogin(search: string): Promise<string> {
  // Once per redirect: a second call (a re-mounted component) shares the first's outcome.
  if (completing?.search !== search) completing = { search, outcome: exchangeCode(search) };
  return completing.outcome;
}
let completing: { search: string; outcome: Promise<string> } | undefined;

async function exchangeCode(search: string): Promise<string> {
  const q = new URLSearchParams(search);
  const raw = sessionStorage.getItem(PENDING_KEY);
  const pending = raw ? (JSON.parse(raw) as { verifier: string; state: string; returnTo: string }) : undefined;
  if (!pending || q.get("state") !== pending.state)
    throw new LoginError("This login was not started here, or has already been used: log in again");
  sessionStorage.removeItem(PENDING_KEY);
  const error = q.get("error");
  if (error) throw new LoginError(`The login service said: ${q.get("error_description") ?? error}`);
  const code = q.get("code");
  if (!code) throw new LoginError("The login service sent no code");
  const asked = generation;
  const next = await tokenRequest({
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri(),
    code_verifier: pending.verifier,
  });
  if (asked === generation) store(next);
  return pending.returnTo.startsWith("/ui/") ? pending.returnTo : "/ui/";
}

/** Drops the tokens in this tab only (the issuer's session stays as it is). */
function forget(): void {
  generation++;
  clearTimeout(refreshTimer);
  tokens = undefined;
  notify();
}

/** Forgets the tokens; with an issuer that offers RP-initiated logout, ends its session too. */
export function logout(): void {
  const idToken = tokens?.idToken;
  forget();
  if (metadata?.end_session_endpoint && idToken) {
    const url = new URL(metadata.end_session_endpoint);
    url.search = new URLSearchParams({
      id_token_hint: idToken,
      post_logout_redirect_uri: `${location.origin}/ui/`,
    }).toString();
    location.assign(url.toString());
  }
}
