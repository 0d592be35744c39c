/**
 * fleetctl's configuration: profiles, each a hub and how to log in to it, in
 * `$XDG_CONFIG_HOME/fleetctl/config.yaml` (default `~/.config/fleetctl/config.yaml`;
 * `FLEETCTL_CONFIG` names another file). Tokens are cached beside it (token-cache.ts).
 *
 *   current: prod
 *   profiles:
 *     prod: { hub: https://api.fleet.example.com, environment: prod,
 *             issuer: https://login.example.com, clientId: fleetctl }          # a person
 *     ci:   { hub: https://api.fleet.example.com, environment: prod,
 *             clientId: ci-bot, clientSecretFile: /run/secrets/ci-bot }        # a machine
 *
 * The file never holds a secret: a machine's secret stays in its own file, named here.
 */
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { EnvironmentSchema } from "@fm/domain";
import { CliError, UsageError } from "./errors.ts";

const HttpUrl = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ""));

export const ProfileSchema = z.strictObject({
  /** The hub's base URL (without /api/v1). */
  hub: HttpUrl,
  environment: EnvironmentSchema.default("dev"),
  /** People: the OIDC issuer the hub trusts. */
  issuer: HttpUrl.optional(),
  /** People: fleetctl's public client id at the issuer. Machines: the hub OAuth2 client id. */
  clientId: z.string().min(1).optional(),
  /** Machines: a file holding the client secret (read at each token request, never copied). */
  clientSecretFile: z.string().min(1).optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;

export const ConfigSchema = z.strictObject({
  current: z.string().optional(),
  profiles: z.record(z.string(), ProfileSchema).default({}),
});
export type Config = z.infer<typeof ConfigSchema>;

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Where fleetctl keeps its files (mode 0700). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLEETCTL_CONFIG) return dirname(env.FLEETCTL_CONFIG);
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "fleetctl");
}
export const configFile = (env: NodeJS.ProcessEnv = process.env): string =>
  env.FLEETCTL_CONFIG || join(configDir(env), "config.yaml");

export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const file = configFile(env);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (err) {
    throw new CliError(`${file} is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new CliError(
      `${file} is not a fleetctl config: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ")}`,
      undefined,
      "fix it, or set profiles again with fleetctl config set-profile",
    );
  return parsed.data;
}

/** Writes the config whole (temp file, then rename): a crash never leaves half a file. */
export async function saveConfig(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const file = configFile(env);
  await ensurePrivateDir(dirname(file), ownsConfigDir(env));
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, stringify(config), { mode: 0o600 });
  await rename(tmp, file);
}

/**
 * Creates the directory with mode 0700, and narrows an existing one to 0700 when it is
 * fleetctl's own (`narrow`): a folder the user named through FLEETCTL_CONFIG (their home, a
 * shared project folder) is theirs, and keeps its mode; the token folder inside is fleetctl's.
 */
export async function ensurePrivateDir(dir: string, narrow = true): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (narrow) await chmod(dir, 0o700);
}

/** Whether the config folder is fleetctl's own (the default) rather than where FLEETCTL_CONFIG put it. */
export const ownsConfigDir = (env: NodeJS.ProcessEnv = process.env): boolean => !env.FLEETCTL_CONFIG;

export interface Selection {
  /** --profile */
  profile?: string;
  /** --hub: overrides the profile's hub (or stands alone without a config). */
  hub?: string;
}

export interface ResolvedProfile extends Profile {
  name: string;
}

/**
 * The profile a command runs with: --profile, else FLEETCTL_PROFILE, else the config's current
 * one, else `default`. --hub overrides its hub URL; without any profile, --hub alone works for
 * calls that need no login (or with a token from a previous login to that profile name).
 */
export async function resolveProfile(sel: Selection, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedProfile> {
  const config = await loadConfig(env);
  const name = sel.profile ?? env.FLEETCTL_PROFILE ?? config.current ?? "default";
  const found = config.profiles[name];
  const hub = sel.hub ?? env.FLEETCTL_HUB;
  if (found) return { ...found, ...(hub ? { hub: parseHub(hub) } : {}), name };
  if (sel.profile || env.FLEETCTL_PROFILE) {
    const known = Object.keys(config.profiles);
    throw new UsageError(
      `no profile named "${name}" in ${configFile(env)}`,
      known.length ? `profiles: ${known.join(", ")}` : "create one with fleetctl config set-profile <name> --hub <url>",
    );
  }
  if (!hub)
    throw new UsageError(
      "no hub configured",
      "pass --hub <url>, or create a profile: fleetctl config set-profile <name> --hub <url>",
    );
  return { name, hub: parseHub(hub), environment: "dev" };
}

export function parseHub(hub: string): string {
  const r = HttpUrl.safeParse(hub);
  if (!r.success) throw new UsageError(`--hub must be an http(s) URL, got ${JSON.stringify(hub)}`);
  return r.data;
}
