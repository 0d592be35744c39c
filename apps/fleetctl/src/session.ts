/**
 * A command's connection to the hub: the resolved profile, a HubClient, and the token it sends,
 * taken from the profile's cache and renewed when it has expired (or the hub answered 401):
 * client credentials again for a machine, the refresh token for a person.
 */
import type { HubClient } from "@fm/clients";
import { resolveProfile, type ResolvedProfile, type Selection } from "./config.ts";
import { CliError } from "./errors.ts";
import { EXIT } from "./exit-codes.ts";
import { machineToken } from "./machine-token.ts";
import { readToken, writeToken, type CachedToken } from "./token-cache.ts";

/** Renew this long before expiry, so a token does not expire on its way to the hub. */
const EARLY_MS = 30_000;

export interface Session {
  profile: ResolvedProfile;
  hub: HubClient;
  /** A valid access token (renewed if needed). */
  token(): Promise<string>;
}

export async function openSession(sel: Selection, env: NodeJS.ProcessEnv = process.env): Promise<Session> {
  const profile = await resolveProfile(sel, env);
  let forceRenew = false;
  const token = async (): Promise<string> => {
    const cached = await readToken(profile.name, env);
    if (!cached || cached.hub !== profile.hub)
      throw new CliError(
        `not logged in to ${profile.hub} (profile ${profile.name})`,
        EXIT.FORBIDDEN,
        loginHint(profile),
      );
    if (!forceRenew && cached.expiresAt - EARLY_MS > Date.now()) return cached.accessToken;
    forceRenew = false;
    return (await renew(profile, cached, env)).accessToken;
  };
  const { HubClient } = await import("@fm/clients");
  const hub = new HubClient({
    baseUrl: profile.hub,
    token,
    maxAttempts: 3,
    onUnauthorized: () => (forceRenew = true),
  });
  return { profile, hub, token };
}

const loginHint = (p: ResolvedProfile) =>
  `run: fleetctl api login${p.name === "default" ? "" : ` --profile ${p.name}`}`;

async function renew(profile: ResolvedProfile, cached: CachedToken, env: NodeJS.ProcessEnv): Promise<CachedToken> {
  if (cached.kind === "machine" && cached.clientSecretFile) {
    const t = await machineToken({
      hub: profile.hub,
      clientId: cached.clientId,
      clientSecretFile: cached.clientSecretFile,
      scopes: cached.requestedScopes,
    });
    const next = { ...cached, ...t };
    await writeToken(profile.name, next, env);
    return next;
  }
  if (cached.kind === "person" && cached.refreshToken && cached.issuer) {
    const { refreshPersonToken } = await import("./person-login.ts");
    const next = await refreshPersonToken(cached);
    await writeToken(profile.name, next, env);
    return next;
  }
  throw new CliError(`the login of profile ${profile.name} has expired`, EXIT.FORBIDDEN, loginHint(profile));
}
