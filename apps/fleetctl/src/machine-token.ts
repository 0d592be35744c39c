/**
 * A machine's token: the client credentials grant (RFC 6749 section 4.4) against the hub's own
 * token endpoint, the secret read from its file at each request and never kept.
 */
import { readFile } from "node:fs/promises";
import { CliError } from "./errors.ts";
import { EXIT } from "./exit-codes.ts";

export async function readSecretFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new CliError(
      `cannot read the client secret file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  const secret = text.trim();
  if (!secret) throw new CliError(`the client secret file ${file} is empty`);
  return secret;
}

export interface IssuedToken {
  accessToken: string;
  tokenType: string;
  expiresAt: number;
  scope?: string[];
}

/** The hub's answer to a client credentials request, or a CliError saying why not (exit 4). */
export async function machineToken(o: {
  hub: string;
  clientId: string;
  clientSecretFile: string;
  scopes?: string[];
}): Promise<IssuedToken> {
  const secret = await readSecretFile(o.clientSecretFile);
  const { clientCredentialsToken, OAuthError } = await import("@fm/clients");
  try {
    const t = await clientCredentialsToken({
      tokenEndpoint: `${o.hub}/oauth/token`,
      clientId: o.clientId,
      clientSecret: secret,
      scopes: o.scopes,
    });
    return { accessToken: t.accessToken, tokenType: t.tokenType, expiresAt: t.expiresAt, scope: t.scope };
  } catch (err) {
    if (err instanceof OAuthError)
      throw new CliError(
        `the hub refused the login of ${o.clientId}: ${err.error}${err.description ? ` (${err.description})` : ""}`,
        EXIT.FORBIDDEN,
      );
    throw new CliError(`cannot reach the hub's token endpoint at ${o.hub}: ${(err as Error).message}`);
  }
}
