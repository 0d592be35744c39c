/** `fleetctl api login|logout|whoami|token` */
import { resolve as resolvePath } from "node:path";
import { WhoAmISchema } from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { resolveProfile, type ResolvedProfile } from "../config.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import { machineToken } from "../machine-token.ts";
import { renderOne } from "../output.ts";
import { parseScopeOption } from "../scopes.ts";
import { openSession } from "../session.ts";
import { terminalSafe } from "../terminal-text.ts";
import { deleteToken, readToken, writeToken } from "../token-cache.ts";
import { output } from "./common.ts";

const profileOf = (ctx: Ctx) =>
  resolveProfile({ profile: ctx.opts.profile as string | undefined, hub: ctx.opts.hub as string | undefined }, ctx.env);

export async function login(ctx: Ctx): Promise<void> {
  const scopes = parseScopeOption(ctx.opts.scope as string | undefined);
  const profile = await profileOf(ctx);
  const given = (ctx.opts.clientSecretFile as string | undefined) ?? profile.clientSecretFile;
  // Kept absolute: the token is renewed from whatever folder the next command runs in.
  const secretFile = given === undefined ? undefined : resolvePath(given);
  if (secretFile) {
    const clientId = (ctx.opts.clientId as string | undefined) ?? profile.clientId;
    if (!clientId) throw new UsageError("a machine login needs --client-id with --client-secret-file");
    const t = await machineToken({ hub: profile.hub, clientId, clientSecretFile: secretFile, scopes });
    await writeToken(
      profile.name,
      { hub: profile.hub, kind: "machine", ...t, requestedScopes: scopes, clientId, clientSecretFile: secretFile },
      ctx.env,
    );
    ctx.err(`Logged in to ${profile.hub} as ${clientId}${scopeNote(t.scope)} (profile ${profile.name}).\n`);
    return;
  }
  const { loginPerson } = await import("../person-login.ts");
  const cached = await loginPerson(ctx, profile, scopes);
  await writeToken(profile.name, cached, ctx.env);
  ctx.err(
    `Logged in to ${profile.hub} as ${subjectOf(cached.accessToken)}${scopeNote(cached.scope)} (profile ${profile.name}).\n`,
  );
}

const scopeNote = (scope: string[] | undefined) => (scope?.length ? ` with ${scope.join(" ")}` : "");

export async function logout(ctx: Ctx): Promise<void> {
  const profile = await profileOf(ctx);
  const had = await deleteToken(profile.name, ctx.env);
  ctx.err(had ? `Logged out of profile ${profile.name}.\n` : `Profile ${profile.name} was not logged in.\n`);
}

/** The token's claims, read without verifying them: the hub verifies, this only shows. */
export function claimsOf(token: string): Record<string, unknown> {
  const part = token.split(".")[1];
  if (!part) return {};
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}
const subjectOf = (token: string) => {
  const c = claimsOf(token);
  return String(c.email ?? c.client_id ?? c.sub ?? "unknown");
};

/**
 * Who the hub says the cached login is, and the scopes it actually grants (GET /api/v1/whoami):
 * a person's login may ask for a scope the hub's mapping does not give them. The token is
 * renewed on the way if it must be; what the cache holds (expiry, renewal) is shown beside.
 */
export async function whoami(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const profile: ResolvedProfile = await profileOf(ctx);
  const before = await readToken(profile.name, ctx.env);
  if (!before || before.hub !== profile.hub)
    throw new CliError(
      `not logged in to ${profile.hub} (profile ${profile.name})`,
      EXIT.FORBIDDEN,
      "run: fleetctl api login",
    );
  const s = await openSession(
    { profile: ctx.opts.profile as string | undefined, hub: ctx.opts.hub as string | undefined },
    ctx.env,
  );
  const granted = (await s.hub.request("GET", "/api/v1/whoami", WhoAmISchema)).body;
  const cached = (await readToken(profile.name, ctx.env)) ?? before;
  const who = {
    profile: profile.name,
    hub: profile.hub,
    environment: profile.environment,
    kind: cached.kind,
    subject: subjectOf(cached.accessToken),
    principal: granted.principal,
    scopes: granted.scopes,
    requestedScopes: cached.kind === "person" ? (cached.requestedScopes ?? null) : (cached.scope ?? null),
    expiresAt: new Date(cached.expiresAt).toISOString(),
    expired: cached.expiresAt <= Date.now(),
    renewable: cached.kind === "machine" ? Boolean(cached.clientSecretFile) : Boolean(cached.refreshToken),
  };
  if (out.format !== "table") {
    ctx.out(await renderOne({ kind: "whoami", name: () => who.subject, columns: [] }, who, out));
    return;
  }
  const rows = Object.entries(who).map(
    ([k, v]) =>
      `${`${k}:`.padEnd(16)} ${v === null ? "(none asked for: what the hub's scope mapping grants)" : Array.isArray(v) ? v.join(" ") : terminalSafe(String(v))}`,
  );
  ctx.out(`${rows.join("\n")}\n`);
}

/** Prints the access token, as `gh auth token` does: asked for, so shown. */
export async function token(ctx: Ctx): Promise<void> {
  const s = await openSession(
    { profile: ctx.opts.profile as string | undefined, hub: ctx.opts.hub as string | undefined },
    ctx.env,
  );
  ctx.out(`${await s.token()}\n`);
}
