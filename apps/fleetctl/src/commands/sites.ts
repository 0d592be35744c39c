/** `fleetctl api site ...` */
import { SiteCreateSchema, SiteListSchema, SitePatchSchema, SiteSchema, type Site } from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { renderList, renderOne, statusTone, type View } from "../output.ts";
import { bool, collect, output, session, siteId, truncationNote, usageFromIssues } from "./common.ts";

const SITE_VIEW: View<Site> = {
  kind: "site",
  name: (s) => s.slug,
  columns: [
    { header: "slug", value: (s) => s.slug },
    { header: "name", value: (s) => s.name },
    { header: "region", value: (s) => s.region },
    {
      header: "reporting",
      value: (s) => s.conditions.find((c) => c.type === "Reporting")?.status,
      tone: statusTone,
    },
    {
      header: "slurm",
      value: (s) => (s.openstackSlurmEnabled ? "via openstack" : s.slurmEnabled ? "yes" : "no"),
      wide: true,
    },
    { header: "netbox site", value: (s) => s.netboxSiteId, wide: true },
    { header: "id", value: (s) => s.id, wide: true },
  ],
};

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const filters = { slug: ctx.opts.slug, region: ctx.opts.region, q: ctx.opts.q } as Record<string, string | undefined>;
  const r = await collect(
    ctx,
    async (p) => (await hub.request("GET", "/api/v1/sites/", SiteListSchema, { query: { ...filters, ...p } })).body,
  );
  ctx.out(await renderList(SITE_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const id = await siteId(hub, String(ctx.args[0]));
  ctx.out(await renderOne(SITE_VIEW, (await hub.request("GET", `/api/v1/sites/${id}/`, SiteSchema)).body, out));
}

/** The site fields the options set (only those given). */
function fields(ctx: Ctx): Record<string, unknown> {
  const o = ctx.opts;
  const int = (v: unknown, flag: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n)) throw new UsageError(`${flag} must be an integer`);
    return n;
  };
  const f: Record<string, unknown> = {
    name: o.name,
    region: o.region === "" ? null : o.region,
    netboxSiteId: int(o.netboxSiteId, "--netbox-site-id"),
    netboxClusterId: int(o.netboxClusterId, "--netbox-cluster-id"),
    slurmEnabled: bool(o.slurmEnabled),
    openstackSlurmEnabled: bool(o.openstackSlurmEnabled),
    configureDhcp: bool(o.configureDhcp),
    platformClassActivityReady: bool(o.platformClassActivityReady),
  };
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined));
}

export async function create(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const body = { slug: ctx.opts.slug, ...fields(ctx) };
  const checked = SiteCreateSchema.safeParse(body);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  const site = await hub.request("POST", "/api/v1/sites/", SiteSchema, {
    body,
    headers: { "idempotency-key": crypto.randomUUID() },
  });
  ctx.out(await renderOne(SITE_VIEW, site.body, out));
}

export async function update(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const body = fields(ctx);
  const checked = SitePatchSchema.safeParse(body);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  const id = await siteId(hub, String(ctx.args[0]));
  const etag = (ctx.opts.ifMatch as string | undefined) ?? (await hub.getSite(id)).etag ?? undefined;
  const site = await hub.request("PATCH", `/api/v1/sites/${id}/`, SiteSchema, {
    body,
    headers: etag ? { "if-match": etag } : {},
  });
  ctx.out(await renderOne(SITE_VIEW, site.body, out));
}

export async function remove(ctx: Ctx): Promise<void> {
  const { hub } = await session(ctx);
  const id = await siteId(hub, String(ctx.args[0]));
  const etag = (ctx.opts.ifMatch as string | undefined) ?? (await hub.getSite(id)).etag ?? undefined;
  await hub.deleteSite(id, etag);
  ctx.out(`site/${String(ctx.args[0])} deleted\n`);
}
