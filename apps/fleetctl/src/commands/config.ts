/** `fleetctl config ...`: profiles in the config file (never a secret: a machine's secret file is named). */
import { resolve as resolvePath } from "node:path";
import type { Ctx } from "../command-kit.ts";
import { PROFILE_NAME, ProfileSchema, configFile, loadConfig, saveConfig, type Profile } from "../config.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import { renderList } from "../output.ts";
import { deleteToken } from "../token-cache.ts";
import { usageFromIssues } from "./common.ts";
import { colorWanted, outputFormat } from "../output.ts";

export async function setProfile(ctx: Ctx): Promise<void> {
  const name = String(ctx.args[0]);
  if (!PROFILE_NAME.test(name))
    throw new UsageError(`profile name ${JSON.stringify(name)}: letters, digits, . _ - only`);
  const config = await loadConfig(ctx.env);
  const o = ctx.opts;
  const given = Object.fromEntries(
    Object.entries({
      hub: o.hub,
      environment: o.env,
      issuer: o.issuer,
      clientId: o.clientId,
      // Kept absolute: later commands run from other folders.
      clientSecretFile: o.clientSecretFile === undefined ? undefined : resolvePath(String(o.clientSecretFile)),
    }).filter(([, v]) => v !== undefined),
  );
  const existing = config.profiles[name];
  if (!existing && given.hub === undefined) throw new UsageError(`a new profile needs --hub`);
  const checked = ProfileSchema.safeParse({ ...existing, ...given });
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  config.profiles[name] = checked.data;
  if (o.use || !config.current) config.current = name;
  await saveConfig(config, ctx.env);
  ctx.err(`Profile ${name} saved in ${configFile(ctx.env)}${config.current === name ? " (current)" : ""}.\n`);
}

export async function use(ctx: Ctx): Promise<void> {
  const name = String(ctx.args[0]);
  const config = await loadConfig(ctx.env);
  if (!config.profiles[name]) throw new CliError(`no profile named ${JSON.stringify(name)}`, EXIT.NOT_FOUND);
  config.current = name;
  await saveConfig(config, ctx.env);
  ctx.err(`Current profile: ${name}.\n`);
}

export async function list(ctx: Ctx): Promise<void> {
  const format = outputFormat(ctx.opts, ["table", "json", "yaml", "name"]);
  const config = await loadConfig(ctx.env);
  const items = Object.entries(config.profiles).map(([name, p]) => ({ name, current: name === config.current, ...p }));
  type Row = Profile & { name: string; current: boolean };
  ctx.out(
    await renderList<Row>(
      {
        kind: "profile",
        name: (p) => p.name,
        columns: [
          { header: "", value: (p) => (p.current ? "*" : " ") },
          { header: "name", value: (p) => p.name },
          { header: "hub", value: (p) => p.hub },
          { header: "env", value: (p) => p.environment },
          {
            header: "login",
            value: (p) => (p.clientSecretFile ? `machine ${p.clientId}` : p.issuer ? `person via ${p.issuer}` : ""),
          },
        ],
      },
      { items, count: items.length },
      { format, color: colorWanted() },
    ),
  );
}

export async function remove(ctx: Ctx): Promise<void> {
  const name = String(ctx.args[0]);
  const config = await loadConfig(ctx.env);
  if (!config.profiles[name]) throw new CliError(`no profile named ${JSON.stringify(name)}`, EXIT.NOT_FOUND);
  delete config.profiles[name];
  if (config.current === name) delete config.current;
  await saveConfig(config, ctx.env);
  await deleteToken(name, ctx.env);
  ctx.err(`Profile ${name} deleted.\n`);
}

export async function path(ctx: Ctx): Promise<void> {
  ctx.out(`${configFile(ctx.env)}\n`);
}
