/** People's logins through the OIDC issuer: filled in once the shared OAuth library is merged. */
import { CliError } from "./errors.ts";
import { EXIT } from "./exit-codes.ts";
import type { CachedToken } from "./token-cache.ts";

export async function refreshPersonToken(cached: CachedToken): Promise<CachedToken> {
  throw new CliError(`the login of ${cached.clientId} has expired`, EXIT.FORBIDDEN, "run: fleetctl api login");
}

export async function loginPerson(
  _ctx: unknown,
  profile: { issuer?: string; clientId?: string },
  _scopes: string[] | undefined,
): Promise<CachedToken> {
  if (!profile.issuer || !profile.clientId)
    throw new CliError("a person's login needs the profile's --issuer and --client-id", EXIT.USAGE);
  throw new CliError("people's login is not available in this build", EXIT.ERROR);
}
