/**
 * People's logins through the OIDC issuer the hub trusts (the library in @fm/clients): the
 * authorization code grant with PKCE on a loopback redirect when a browser can be opened, the
 * device authorization grant with --device-code or when none can (and the issuer offers it).
 * `openid offline_access` are always asked for, so the login comes with a refresh token; the
 * fleet scopes only when --scope narrows the login (the hub then grants what the person's
 * mapping allows of them).
 */
import { spawn } from "node:child_process";
import type { Ctx } from "./command-kit.ts";
import type { ResolvedProfile } from "./config.ts";
import { CliError, UsageError } from "./errors.ts";
import { EXIT } from "./exit-codes.ts";
import type { CachedToken } from "./token-cache.ts";

const BASE_SCOPES = ["openid", "offline_access"];

/** How the URL reaches a browser: $BROWSER, else xdg-open on a desktop session; undefined: none. */
export function browserCommand(env: NodeJS.ProcessEnv): string | undefined {
  if (env.BROWSER) return env.BROWSER;
  if (process.platform === "darwin") return "open";
  return env.DISPLAY || env.WAYLAND_DISPLAY ? "xdg-open" : undefined;
}

/**
 * $BROWSER as the convention has it: a command with its arguments (`firefox --new-window`), `%s`
 * standing for the URL where it is given, else the URL last. Split on blanks, never through a
 * shell: the URL carries the state and the PKCE challenge.
 */
export function browserArgv(command: string, url: string): string[] {
  const words = command.trim().split(/\s+/).filter(Boolean);
  return words.some((w) => w.includes("%s")) ? words.map((w) => w.replaceAll("%s", url)) : [...words, url];
}

/** Starts the browser; `failed` is told at once if it cannot start or exits with a failure. */
function openWith(command: string, url: string, failed: (why: string) => void): void {
  const [bin, ...args] = browserArgv(command, url);
  const p = spawn(bin!, args, { stdio: "ignore", detached: true });
  p.on("error", (err: NodeJS.ErrnoException) => failed(err.code ?? err.message));
  p.on("exit", (code, signal) => {
    if (code !== 0) failed(signal ? `killed by ${signal}` : `exit ${code}`);
  });
  p.unref();
}

/** Why the browser login was given up: the browser did not start. */
class BrowserFailed extends Error {}

async function oauthCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  const { OAuthError } = await import("@fm/clients");
  try {
    return await call();
  } catch (err) {
    if (err instanceof OAuthError)
      throw new CliError(
        `${what} refused: ${err.error}${err.description ? ` (${err.description})` : ""}`,
        EXIT.FORBIDDEN,
      );
    throw new CliError(`${what} failed: ${(err as Error).message}`);
  }
}

export async function loginPerson(
  ctx: Ctx,
  profile: ResolvedProfile,
  fleetScopes: string[] | undefined,
): Promise<CachedToken> {
  const issuer = (ctx.opts.issuer as string | undefined) ?? profile.issuer;
  const clientId = (ctx.opts.clientId as string | undefined) ?? profile.clientId;
  if (!issuer || !clientId)
    throw new UsageError(
      `profile ${profile.name} has no OIDC issuer and client id to log a person in with`,
      "fleetctl config set-profile <name> --issuer <url> --client-id <id>, or --client-id with --client-secret-file for a machine",
    );
  const oauth = await import("@fm/clients");
  const metadata = await oauthCall(`discovery of ${issuer}`, () => oauth.discoverIssuer(issuer));
  const scopes = [...BASE_SCOPES, ...(fleetScopes ?? [])];
  const browser = browserCommand(ctx.env);
  const device = Boolean(ctx.opts.deviceCode) || !browser || !metadata.authorizationEndpoint;
  if (device && !metadata.deviceAuthorizationEndpoint)
    throw new CliError(
      `the issuer ${issuer} offers no device authorization`,
      EXIT.USAGE,
      ctx.opts.deviceCode ? "log in without --device-code, in a browser" : "set $BROWSER to a browser command",
    );
  const deviceLogin = () =>
    oauthCall("the device login", () =>
      oauth.loginWithDeviceCode({
        metadata,
        clientId,
        scopes,
        onPrompt: (p) =>
          ctx.err(
            `To log in, open ${p.verificationUriComplete ?? p.verificationUri} and enter the code ${p.userCode}` +
              ` (it expires in ${Math.round(p.expiresIn / 60)} min).\n`,
          ),
      }),
    );
  const browserLogin = async () => {
    const gaveUp = new AbortController();
    try {
      return await oauthCall("the browser login", () =>
        oauth.loginWithAuthorizationCode({
          metadata,
          clientId,
          scopes,
          signal: gaveUp.signal,
          openUrl: (url) => {
            ctx.err(`Opening the login page; if no browser opens, go to:\n  ${url}\n`);
            openWith(browser!, url, (why) => gaveUp.abort(new BrowserFailed(why)));
          },
        }),
      );
    } catch (err) {
      const reason: unknown = gaveUp.signal.reason;
      if (!(reason instanceof BrowserFailed)) throw err;
      if (!metadata.deviceAuthorizationEndpoint)
        throw new CliError(`the browser (${browser}) did not start (${reason.message})`, EXIT.ERROR);
      ctx.err(`The browser (${browser}) did not start (${reason.message}): logging in with a device code instead.\n`);
      return deviceLogin();
    }
  };
  const t = device ? await deviceLogin() : await browserLogin();
  return {
    hub: profile.hub,
    kind: "person",
    accessToken: t.accessToken,
    tokenType: t.tokenType,
    expiresAt: t.expiresAt,
    requestedScopes: fleetScopes,
    scope: t.scope?.filter((s) => s.startsWith("fleet.")),
    clientId,
    issuer,
    refreshToken: t.refreshToken,
  };
}

/** A new access token from the refresh token (the issuer may rotate it: the new one is kept). */
export async function refreshPersonToken(cached: CachedToken): Promise<CachedToken> {
  const oauth = await import("@fm/clients");
  const metadata = await oauthCall(`discovery of ${cached.issuer}`, () => oauth.discoverIssuer(cached.issuer!));
  const scopes = cached.requestedScopes ? [...BASE_SCOPES, ...cached.requestedScopes] : undefined;
  const t = await oauthCall("renewing the login", () =>
    oauth.refreshToken({ metadata, clientId: cached.clientId, refreshToken: cached.refreshToken!, scopes }),
  ).catch((err: CliError) => {
    throw new CliError(err.message, EXIT.FORBIDDEN, "log in again: fleetctl api login");
  });
  return {
    ...cached,
    accessToken: t.accessToken,
    tokenType: t.tokenType,
    expiresAt: t.expiresAt,
    scope: t.scope?.filter((s) => s.startsWith("fleet.")) ?? cached.scope,
    refreshToken: t.refreshToken ?? cached.refreshToken,
  };
}
