/** `fleetctl api slurm-config ...`: a site's SLURM bootstrap configs; user data from a file. */
import { readFile } from "node:fs/promises";
import {
  DeviceRoleListSchema,
  SlurmBootstrapConfigCreateSchema,
  SlurmBootstrapConfigListSchema,
  SlurmBootstrapConfigReplaceSchema,
  SlurmBootstrapConfigSchema,
  USER_DATA_MAX_BYTES,
  type SlurmBootstrapConfig,
} from "@fm/domain";
import type { HubClient } from "@fm/clients";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { renderList, renderOne, type View } from "../output.ts";
import { collect, isUuid, notFound, output, session, siteId, truncationNote, usageFromIssues } from "./common.ts";

const VIEW: View<SlurmBootstrapConfig> = {
  kind: "slurm-config",
  name: (c) => c.id,
  columns: [
    { header: "id", value: (c) => c.id },
    { header: "role", value: (c) => c.deviceRoleId },
    { header: "image", value: (c) => c.image },
    { header: "flavor", value: (c) => c.flavor },
    { header: "gres", value: (c) => c.gres },
    { header: "user data", value: (c) => (c.userData ? "yes" : "no"), wide: true },
  ],
};

const base = (site: string) => `/api/v1/sites/${site}/slurm-bootstrap-configs/`;

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const site = await siteId(hub, String(ctx.opts.site));
  const r = await collect(
    ctx,
    async (p) => (await hub.request("GET", base(site), SlurmBootstrapConfigListSchema, { query: p })).body,
  );
  ctx.out(await renderList(VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const site = await siteId(hub, String(ctx.opts.site));
  const c = await hub.request("GET", `${base(site)}${configId(ctx)}/`, SlurmBootstrapConfigSchema);
  ctx.out(await renderOne(VIEW, c.body, out));
}

/** The user data file, base64 as the API takes it; too large a file is refused before sending. */
async function userData(file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new UsageError(`cannot read --user-data-file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (bytes.length > USER_DATA_MAX_BYTES)
    throw new UsageError(
      `--user-data-file ${file} is ${bytes.length} bytes; at most ${USER_DATA_MAX_BYTES} are allowed`,
    );
  return bytes.toString("base64");
}

async function fields(ctx: Ctx) {
  const o = ctx.opts;
  const ud = await userData(o.userDataFile as string | undefined);
  return {
    image: o.image as string,
    flavor: o.flavor as string,
    ...(o.gres !== undefined ? { gres: o.gres as string } : {}),
    ...(ud !== undefined ? { userData: ud } : {}),
  };
}

async function roleId(hub: HubClient, slugOrId: string): Promise<string> {
  if (isUuid(slugOrId)) return slugOrId;
  const roles = await hub.request("GET", "/api/v1/device-roles/", DeviceRoleListSchema, { query: { limit: 1000 } });
  const role = roles.body.items.find((r) => r.slug === slugOrId);
  if (!role) throw notFound("device role", slugOrId);
  return role.id;
}

export async function create(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const f = await fields(ctx);
  // The fields are checked before anything is sent; the role is checked with a placeholder id.
  const checked = SlurmBootstrapConfigCreateSchema.safeParse({ ...f, deviceRoleId: crypto.randomUUID() });
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  const site = await siteId(hub, String(ctx.opts.site));
  const body = { ...f, deviceRoleId: await roleId(hub, String(ctx.opts.role)) };
  const c = await hub.request("POST", base(site), SlurmBootstrapConfigSchema, {
    body,
    headers: { "idempotency-key": crypto.randomUUID() },
  });
  ctx.out(await renderOne(VIEW, c.body, out));
}

export async function replace(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const body = await fields(ctx);
  const checked = SlurmBootstrapConfigReplaceSchema.safeParse(body);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  const path = `${base(await siteId(hub, String(ctx.opts.site)))}${configId(ctx)}/`;
  const etag =
    (ctx.opts.ifMatch as string | undefined) ?? (await hub.request("GET", path, undefined)).headers.get("etag");
  const c = await hub.request("PUT", path, SlurmBootstrapConfigSchema, {
    body,
    headers: etag ? { "if-match": etag } : {},
  });
  ctx.out(await renderOne(VIEW, c.body, out));
}

export async function remove(ctx: Ctx): Promise<void> {
  const { hub } = await session(ctx);
  const path = `${base(await siteId(hub, String(ctx.opts.site)))}${configId(ctx)}/`;
  const etag =
    (ctx.opts.ifMatch as string | undefined) ?? (await hub.request("GET", path, undefined)).headers.get("etag");
  await hub.request("DELETE", path, undefined, { headers: etag ? { "if-match": etag } : {} });
  ctx.out(`slurm-config/${configId(ctx)} deleted\n`);
}

function configId(ctx: Ctx): string {
  const id = String(ctx.args[0]);
  if (!isUuid(id)) throw new UsageError(`${JSON.stringify(id)} is not a config id (a UUID)`);
  return id;
}
