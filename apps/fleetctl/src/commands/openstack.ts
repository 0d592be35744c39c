/**
 * `fleetctl openstack auth --deployment <d> --env <e>`: `export OS_*=...` lines for the
 * deployment's Ironic, from its clouds.yaml, to `eval` before `openstack baremetal ...`.
 *
 * The clouds.yaml is, in order: --clouds-file; the file
 * `$FLEETCTL_CLOUDS_DIR/<env>/<deployment>/<instance>-clouds.yaml` (default dir
 * `<config dir>/clouds`); else the 1Password document `openstack-<instance>`, read with
 * `op document get`, never written to disk but a private temporary file removed at once. The
 * document is looked for in the site operators' vault `Fleet Manager <deployment>-operators <env>`
 * (the one the runbook has operators sign in to), then in the runtime vault
 * `Fleet Manager <deployment> <env>` (where the rollout guide stores it): each person reads it
 * from the vault their group can open.
 *
 * Variables (python-openstackclient and the standalone `baremetal` CLI read them; every OS_<KEY>
 * is clouds.yaml's <key>):
 *  - auth_type none: OS_AUTH_TYPE=none and OS_ENDPOINT, the standalone Ironic's URL
 *    (https://docs.openstack.org/python-ironicclient/zed/cli/standalone.html);
 *  - v3applicationcredential: OS_AUTH_TYPE, OS_AUTH_URL, OS_APPLICATION_CREDENTIAL_ID or
 *    _NAME with OS_USER_ID / OS_USERNAME and OS_USER_DOMAIN_ID / _NAME, and
 *    OS_APPLICATION_CREDENTIAL_SECRET, plus OS_BAREMETAL_ENDPOINT_OVERRIDE when the cloud has one
 *    (https://docs.openstack.org/openstacksdk/latest/user/config/configuration.html);
 *  - OS_REGION_NAME and OS_INTERFACE when set. OS_CLOUD is unset so these win.
 */
import { spawn } from "node:child_process";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CloudConfigError, loadCloud, type Cloud } from "@fm/clients";
import type { Ctx } from "../command-kit.ts";
import { configDir } from "../config.ts";
import { CliError } from "../errors.ts";

/** A value in single quotes, safe for any POSIX shell whatever it holds. */
export const shellQuote = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/** The export lines for a cloud (the secret included: that is what the lines are for). */
export function exportLines(cloud: Cloud): string {
  const vars: [string, string | undefined][] = [];
  if (cloud.authType === "none") vars.push(["OS_AUTH_TYPE", "none"], ["OS_ENDPOINT", cloud.endpoint]);
  else {
    vars.push(["OS_AUTH_TYPE", "v3applicationcredential"], ["OS_AUTH_URL", cloud.authUrl]);
    const c = cloud.credential;
    if ("id" in c) vars.push(["OS_APPLICATION_CREDENTIAL_ID", c.id]);
    else {
      vars.push(["OS_APPLICATION_CREDENTIAL_NAME", c.name]);
      if ("id" in c.user) vars.push(["OS_USER_ID", c.user.id]);
      else {
        vars.push(["OS_USERNAME", c.user.name]);
        const d = c.user.domain;
        vars.push("id" in d ? ["OS_USER_DOMAIN_ID", d.id] : ["OS_USER_DOMAIN_NAME", d.name]);
      }
    }
    vars.push(["OS_APPLICATION_CREDENTIAL_SECRET", c.secret.reveal()]);
    vars.push(["OS_BAREMETAL_ENDPOINT_OVERRIDE", cloud.endpointOverride]);
  }
  vars.push(["OS_REGION_NAME", cloud.regionName], ["OS_INTERFACE", cloud.interface]);
  const lines = ["unset OS_CLOUD"];
  for (const [k, v] of vars) if (v !== undefined) lines.push(`export ${k}=${shellQuote(v)}`);
  return `${lines.join("\n")}\n`;
}

const exists = (f: string) =>
  access(f).then(
    () => true,
    () => false,
  );

/** `op` ran and refused (no such vault or item, no access, not signed in). */
class OpRefused extends CliError {}

/** `op document get` (1Password CLI), its output kept in memory. */
function opDocument(item: string, vault: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn("op", ["document", "get", item, "--vault", vault], { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    p.stdout.on("data", (d: Buffer) => out.push(d));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", (e: NodeJS.ErrnoException) =>
      reject(new CliError(e.code === "ENOENT" ? "the 1Password CLI (op) is not installed" : e.message)),
    );
    p.on("exit", (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString("utf8"))
        : reject(new OpRefused(`op document get ${item} --vault '${vault}' failed: ${err.trim().split("\n")[0]}`)),
    );
  });
}

/** The vaults a deployment's clouds document is looked for in, in order. */
const opVaults = (deployment: string, env: string): string[] => [
  `Fleet Manager ${deployment}-operators ${env}`,
  `Fleet Manager ${deployment} ${env}`,
];

/** The document from the first vault that gives it; when none does, every vault's answer. */
async function fromVaults(item: string, vaults: string[]): Promise<string> {
  const failures: string[] = [];
  for (const vault of vaults) {
    try {
      return await opDocument(item, vault);
    } catch (err) {
      if (!(err instanceof OpRefused)) throw err;
      failures.push(err.message);
    }
  }
  throw new CliError(`no clouds document ${item} in 1Password:\n  ${failures.join("\n  ")}`);
}

export async function auth(ctx: Ctx): Promise<void> {
  const cloud = await deploymentCloud(ctx);
  if (process.stdout.isTTY) ctx.err(`# prints a secret: use it as eval "$(fleetctl openstack auth ...)"\n`);
  ctx.out(exportLines(cloud));
}

/**
 * The deployment's Ironic cloud from --deployment, --env, --instance, --clouds-file and --cloud
 * (also for other commands that talk to the deployment's Ironic).
 */
export async function deploymentCloud(ctx: Ctx): Promise<Cloud> {
  const { deployment, env, instance, cloud: cloudName } = ctx.opts as Record<string, string>;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(deployment!))
    throw new CliError(`--deployment ${JSON.stringify(deployment)} is not a deployment name`, 2);
  const given = ctx.opts.cloudsFile as string | undefined;
  const dir = ctx.env.FLEETCTL_CLOUDS_DIR || join(configDir(ctx.env), "clouds");
  const local = join(dir, env!, deployment!, `${instance}-clouds.yaml`);
  let cloud: Cloud;
  try {
    if (given || (await exists(local))) cloud = loadCloud(given ?? local, cloudName);
    else {
      const text = await fromVaults(`openstack-${instance}`, opVaults(deployment!, env!));
      const tmp = await mkdtemp(join(tmpdir(), "fleetctl-"));
      try {
        const file = join(tmp, "clouds.yaml");
        await writeFile(file, text, { mode: 0o600 });
        cloud = loadCloud(file, cloudName);
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
    }
  } catch (err) {
    if (err instanceof CloudConfigError) throw new CliError(err.message);
    throw err;
  }
  return cloud;
}
