/**
 * The two cookies of a web login, read and written by hand (RFC 6265bis): the hub needs nothing
 * else of a cookie library.
 *  - `__Host-fm-session`: the session id. `__Host-` makes the browser refuse it unless it is
 *    Secure, has Path=/ and no Domain (RFC 6265bis §4.1.3.2), so no other host or path can plant
 *    or read one; HttpOnly keeps it from page scripts; SameSite=Strict keeps it off requests that
 *    another site starts.
 *  - `__Host-fm-login.<state>`: one login on its way through the issuer (sealed: the PKCE
 *    verifier, the state, the page to return to), named by its state so that two tabs logging in
 *    at once do not overwrite each other's. SameSite=Lax, because the issuer's redirect back to
 *    /ui/callback is a navigation another site starts; ten minutes at most.
 */
export const SESSION_COOKIE = "__Host-fm-session";
export const LOGIN_COOKIE_PREFIX = "__Host-fm-login.";
/** The cookie of the login with this state, or undefined for a state no login of the hub's has. */
export const loginCookieName = (state: string | undefined) =>
  state && /^[A-Za-z0-9_-]{16,64}$/.test(state) ? LOGIN_COOKIE_PREFIX + state : undefined;
/** How long a login may take at the issuer (s). */
export const LOGIN_COOKIE_MAX_AGE_S = 600;

/** The cookies of a Cookie header (RFC 6265bis §5.7.4), the first of each name. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !out.has(name)) out.set(name, value);
  }
  return out;
}

export interface CookieOptions {
  maxAgeS: number;
  sameSite: "Strict" | "Lax";
}

/** A Set-Cookie value for a `__Host-` cookie; maxAgeS 0 removes it. */
export function hostCookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${value}; Path=/; Max-Age=${o.maxAgeS}; HttpOnly; Secure; SameSite=${o.sameSite}`;
}

export const clearCookie = (name: string, sameSite: CookieOptions["sameSite"] = "Strict") =>
  hostCookie(name, "", { maxAgeS: 0, sameSite });
