/** `fleetctl api device ...` */
import {
  DeviceBriefListSchema,
  DeviceHistoryListSchema,
  DeviceListQuerySchema,
  DeviceListSchema,
  DeviceSchema,
  type Device,
  type DeviceBrief,
  type DeviceHistoryEntry,
} from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { renderList, renderOne, statusTone, type View } from "../output.ts";
import { collect, deviceId, output, session, siteId, truncationNote, usageFromIssues } from "./common.ts";

type Row = Device | DeviceBrief;
const netboxStatus = (d: Row) => ("netboxStatus" in d ? d.netboxStatus : d.netbox.status);
const provisionState = (d: Row) => ("provisionState" in d ? d.provisionState : d.ironic.provisionState);

export const DEVICE_VIEW: View<Row> = {
  kind: "device",
  name: (d) => d.name,
  columns: [
    { header: "name", value: (d) => d.name },
    { header: "site", value: (d) => d.site.slug },
    { header: "status", value: (d) => d.operationalStatus, tone: statusTone },
    { header: "cordoned", value: (d) => (d.cordoned ? "yes" : "no"), tone: (t) => (t === "yes" ? "warn" : undefined) },
    { header: "netbox", value: netboxStatus, wide: true },
    { header: "provision", value: provisionState, wide: true },
    { header: "stale", value: (d) => (d.stale ? "yes" : "no"), wide: true },
    { header: "id", value: (d) => d.id, wide: true },
  ],
};

/** The list's filters from the options, checked by the API's own query schema before sending. */
async function deviceQuery(ctx: Ctx, resolveSite: (s: string) => Promise<string>) {
  const o = ctx.opts;
  const query = {
    site: o.site as string | undefined,
    role: o.role as string | undefined,
    deviceClass: o.deviceClass as string | undefined,
    status: o.status as string | undefined,
    provisionState: o.provisionState as string | undefined,
    operationalStatus: o.operationalStatus as string | undefined,
    cordoned: o.cordoned as string | undefined,
    stale: o.stale as string | undefined,
    name: o.name as string | undefined,
    nameExact: o.nameExact as string | undefined,
    serial: o.serial as string | undefined,
    tag: o.tag as string | undefined,
    burnIn: o.burnIn as string | undefined,
    updatedSince: o.updatedSince as string | undefined,
    sort: o.sort as string | undefined,
  };
  const checked = DeviceListQuerySchema.safeParse(query);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  // The hub takes a slug too; resolving it first turns an unknown slug into "no site named" (exit 3).
  if (query.site) query.site = await resolveSite(query.site);
  return query;
}

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const query = await deviceQuery(ctx, (s) => siteId(hub, s));
  if (out.format === "count") {
    // The hub counts the filtered rows; one brief item is all that is fetched.
    const page = await hub.request("GET", "/api/v1/devices/", DeviceBriefListSchema, {
      query: { ...query, limit: 1, brief: true },
    });
    ctx.out(`${page.body.count}\n`);
    return;
  }
  // Tables and names need only the brief representation; json/yaml give the full one unless --brief.
  const brief = out.format === "table" || out.format === "wide" || out.format === "name" || Boolean(ctx.opts.brief);
  const schema = brief ? DeviceBriefListSchema : DeviceListSchema;
  const r = await collect<Row>(
    ctx,
    async (p) =>
      (await hub.request("GET", "/api/v1/devices/", schema, { query: { ...query, ...p, brief: brief || undefined } }))
        .body,
  );
  ctx.out(await renderList(DEVICE_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const d = await hub.request("GET", `/api/v1/devices/${id}/`, DeviceSchema);
  ctx.out(await renderOne(DEVICE_VIEW, d.body, out));
}

const HISTORY_VIEW: View<DeviceHistoryEntry> = {
  kind: "history",
  name: (h) => String(h.id),
  columns: [
    { header: "changed", value: (h) => h.changedAt },
    { header: "field", value: (h) => h.field },
    { header: "old", value: (h) => JSON.stringify(h.oldValue) },
    { header: "new", value: (h) => JSON.stringify(h.newValue) },
    { header: "source", value: (h) => h.source },
    { header: "principal", value: (h) => h.principal, wide: true },
    { header: "request", value: (h) => h.requestId, wide: true },
  ],
};

export async function history(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const r = await collect(
    ctx,
    async (p) =>
      (
        await hub.request("GET", `/api/v1/devices/${id}/history/`, DeviceHistoryListSchema, {
          query: { ...p, field: ctx.opts.field as string | undefined, order: ctx.opts.order as string | undefined },
        })
      ).body,
  );
  ctx.out(await renderList(HISTORY_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export const cordon = (ctx: Ctx) => patch(ctx, { cordoned: true, cordonReason: String(ctx.opts.reason) });
export const uncordon = (ctx: Ctx) => patch(ctx, { cordoned: false });

/**
 * A change of operator fields, with If-Match: the ETag of the device as read just before (or
 * --if-match), so a change made by someone else in between is a 412, never overwritten.
 */
async function patch(ctx: Ctx, body: { cordoned: boolean; cordonReason?: string }): Promise<void> {
  const out = output(ctx);
  if (body.cordonReason !== undefined && !body.cordonReason.trim()) throw new UsageError("--reason must not be empty");
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const etag =
    (ctx.opts.ifMatch as string | undefined) ??
    (await hub.request("GET", `/api/v1/devices/${id}/`, undefined)).headers.get("etag") ??
    undefined;
  const d = await hub.request("PATCH", `/api/v1/devices/${id}/`, DeviceSchema, {
    body,
    headers: etag ? { "if-match": etag } : {},
  });
  ctx.out(await renderOne(DEVICE_VIEW, d.body, out));
}
