/**
 * A machine's token: the client credentials grant (RFC 6749 section 4.4) against the hub's own
 * token endpoint, the secret read from its file at each request and never kept.
 */
import { readFile, stat } from "node:fs/promises";
import { CliError } from "./errors.ts";
import { EXIT } from "./exit-codes.ts";

/** Files already warned about in this run: a command may read the secret more than once. */
const warned = new Set<string>();

/**
 * The secret in `file`, trimmed. A file others may read is used, with a warning on stderr (ssh
 * refuses such a key; a Kubernetes secret volume mounts files 0644 unless `defaultMode` says
 * otherwise, so refusing would stop every such bot for a mode it cannot always choose).
 */
export async function readSecretFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
    const { mode } = await stat(file);
    if (mode & 0o077 && !warned.has(file)) {
      warned.add(file);
      process.stderr.write(
        `fleetctl: warning: the client secret file ${file} can be read by others (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): chmod 600 ${file}\n`,
      );
    }
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
