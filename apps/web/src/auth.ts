/**
 * Who is logged in. The hub holds the person's tokens (the backend-for-frontend pattern of
 * "OAuth 2.0 for Browser-Based Applications"); this page holds none, only the HttpOnly session
 * cookie the browser sends with every call, which page scripts cannot read. So:
 *  - on load the UI asks the hub who is logged in (`GET /api/v1/whoami`): a reload, a new tab
 *    and a shared link find the same session;
 *  - **Log in** is a navigation to the hub's /ui/login, which sends the browser to the issuer and
 *    back to the page it started from;
 *  - **Log out** asks the hub to end the session (and, when the issuer offers it, goes on to
 *    end the issuer's session too);
 *  - any call the hub answers 401 (a logout in another tab, an idle or expired session, a
 *    refresh token the issuer refused) shows the login page, which returns to the same page.
 */
import { WEB_CSRF_HEADER } from "@fm/domain";

export interface UiConfig {
  issuer: string | null;
  clientId: string;
}

export class LoginError extends Error {}

type State = "unknown" | "in" | "out";
let state: State = "unknown";
/** Why the person is on the login page, when something ended their session while they used the UI. */
let endedBecause: string | undefined;
const listeners = new Set<() => void>();
const set = (next: State, because?: string) => {
  if (state === next && endedBecause === because) return;
  state = next;
  endedBecause = because;
  listeners.forEach((l) => l());
};

export const onAuthChange = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
export const authState = (): State => state;
export const sessionEndedBecause = () => endedBecause;

export async function loadConfig(): Promise<UiConfig> {
  const res = await fetch("/ui/config.json", { cache: "no-store" });
  if (!res.ok) throw new LoginError(`The hub did not give the UI its configuration (HTTP ${res.status})`);
  return (await res.json()) as UiConfig;
}

/**
 * The hub answered 401 to a call: the session is over. The hub says why when it ended the
 * session itself (idle, maximum length, the issuer's refusal); a call with no cookie at all
 * means it was ended elsewhere (a logout in another tab).
 */
export function sessionEnded(code: string | undefined, detail: string): void {
  if (state !== "in") return set("out", endedBecause);
  set(
    "out",
    code === "session_ended" ? detail : "Your session has ended (logged out in another tab or window): log in again.",
  );
}
/** The hub answered whoami: the person is logged in. */
export const sessionFound = () => set("in");

/** Goes to the hub's login, which returns to `returnTo` (a page of the UI) once the issuer has answered. */
export function startLogin(returnTo: string): void {
  location.assign(`/ui/login?${new URLSearchParams({ returnTo }).toString()}`);
}

/** What `?login_error=` on the page the hub sent a failed login back to means. */
export function loginErrorMessage(search: URLSearchParams): string | undefined {
  const reason = search.get("login_error");
  if (!reason) return undefined;
  const issuerError = search.get("issuer_error");
  switch (reason) {
    case "login_not_started":
      return "This login was not started in this browser, or has already been used: log in again.";
    case "login_expired":
      return "The login took longer than ten minutes: log in again.";
    case "issuer_refused":
      return `The login service did not let you in${issuerError ? ` (${issuerError})` : ""}.`;
    case "exchange_failed":
      return "The login service's answer could not be used: log in again.";
    case "no_access":
      return "Your account has no access to this fleet: ask an administrator for a group the hub maps to fleet.read.";
    case "login_service_unavailable":
      return "The login service cannot be reached: try again shortly.";
    default:
      return "The login did not succeed: log in again.";
  }
}

/** Ends the session at the hub; with an issuer that offers RP-initiated logout, goes on to end its session too. */
export async function logout(): Promise<void> {
  const res = await fetch("/ui/logout", {
    method: "POST",
    headers: { [WEB_CSRF_HEADER]: "1" },
    cache: "no-store",
    signal: AbortSignal.timeout(10_000),
  }).catch(() => undefined);
  // Not logged out until the hub says so: a cookie the hub still honours would log the person in again.
  if (!res || res.status >= 500) throw new LoginError("The hub could not be reached to end the session: try again.");
  const { endSessionUrl } = res.ok ? ((await res.json()) as { endSessionUrl: string | null }) : { endSessionUrl: null };
  set("out");
  if (endSessionUrl) location.assign(endSessionUrl);
}
