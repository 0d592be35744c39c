/**
 * The token of each profile, cached in `<config dir>/tokens/<profile>.json` with mode 0600 in a
 * directory of mode 0700, so a token is never asked for twice while it is valid and nobody else
 * on the machine can read it. Written whole (temp file, then rename).
 */
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { configDir, ensurePrivateDir, ownsConfigDir } from "./config.ts";

export const CachedTokenSchema = z.object({
  /** The hub the token was obtained for: a token of another hub is not used. */
  hub: z.string(),
  kind: z.enum(["person", "machine"]),
  accessToken: z.string(),
  tokenType: z.string().default("Bearer"),
  /** Epoch milliseconds. */
  expiresAt: z.number(),
  /** The scopes the login asked for (undefined: all the caller may have); asked again on renewal. */
  requestedScopes: z.array(z.string()).optional(),
  /** The scopes granted, as the token endpoint said. */
  scope: z.array(z.string()).optional(),
  clientId: z.string(),
  /** Machines: where the secret is read from at each renewal (the secret itself is never cached). */
  clientSecretFile: z.string().optional(),
  /** People: the issuer and the refresh token that renews the access token. */
  issuer: z.string().optional(),
  refreshToken: z.string().optional(),
});
export type CachedToken = z.infer<typeof CachedTokenSchema>;

const tokensDir = (env: NodeJS.ProcessEnv) => join(configDir(env), "tokens");
export const tokenFile = (profile: string, env: NodeJS.ProcessEnv = process.env): string =>
  join(tokensDir(env), `${profile}.json`);

/** The cached token, or undefined when there is none (or the file is not one of ours). */
export async function readToken(
  profile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CachedToken | undefined> {
  let text: string;
  try {
    text = await readFile(tokenFile(profile, env), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = CachedTokenSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function writeToken(profile: string, token: CachedToken, env: NodeJS.ProcessEnv = process.env) {
  await ensurePrivateDir(configDir(env), ownsConfigDir(env));
  await ensurePrivateDir(tokensDir(env));
  const file = tokenFile(profile, env);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(token), { mode: 0o600 });
  await rename(tmp, file);
}

export async function deleteToken(profile: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const file = tokenFile(profile, env);
  try {
    await readFile(file);
  } catch {
    return false;
  }
  await rm(file, { force: true });
  return true;
}
