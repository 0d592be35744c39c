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
import type { HubClient } from "@fm/clients";
import type { Ctx } from "../command-kit.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import { age, renderList, renderOne, statusTone, type OutputOptions, type View } from "../output.ts";
import { terminalSafe } from "../terminal-text.ts";
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
    // The brief representation carries no createdAt: a device's age is that of its last change.
    { header: "age", value: (d) => age(d.updatedAt) },
    { header: "id", value: (d) => d.id, wide: true },
  ],
};

/** The list's filters from the options, checked by the API's own query schema before sending. */
async function deviceQuery(ctx: Ctx, resolveSite: (s: string) => Promise<string>) {
  const o = ctx.opts;
  const query = {
    site: o.site as string | undefined,
    role: o.role as string | undefined,
    // Enum filters as people type them: any case (failed, FAILED), several comma-separated
    // (IMPAIRED,FAILED); the API's schema reads and checks each value, as the hub does.
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
    page: o.page as string | undefined,
  };
  if (query.page !== undefined && o.all) throw new UsageError("--page shows one page: it cannot be used with --all");
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

/** "clean failed nvme3n1, RMA" (by ada@example.com, 2026-12-05T10:00:00Z, 2h ago): terminal-safe. */
export function cordonSummary(d: Device): string {
  const reason = d.cordonReason ? JSON.stringify(d.cordonReason) : "(no reason given)";
  const who = [
    d.cordonedBy ? `by ${d.cordonedBy}` : undefined,
    d.cordonedAt ? `at ${d.cordonedAt} (${age(d.cordonedAt)} ago)` : undefined,
  ]
    .filter(Boolean)
    .join(" ");
  return terminalSafe(
    `${reason}${who ? ` ${who}` : ""}${d.cordonSource === "impairment" ? ", by the hub (health critical)" : ""}`,
  );
}

/** The device as read, with its ETag (--if-match, when given, is sent instead: the caller's own read). */
async function readForChange(ctx: Ctx, hub: HubClient, id: string) {
  const r = await hub.request("GET", `/api/v1/devices/${id}/`, DeviceSchema);
  const etag = (ctx.opts.ifMatch as string | undefined) ?? r.headers.get("etag") ?? undefined;
  return { device: r.body, etag };
}

/**
 * Cordons with a reason. A device already cordoned keeps its reason unless --overwrite (kubectl's
 * `annotate --overwrite`): the refusal names the reason, who and when (exit 5). The PATCH carries
 * If-Match of the device as read, so a cordon someone set in between is a 412, never replaced.
 */
export async function cordon(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const reason = String(ctx.opts.reason);
  if (!reason.trim()) throw new UsageError("--reason must not be empty");
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const { device, etag } = await readForChange(ctx, hub, id);
  if (device.cordoned && !ctx.opts.overwrite)
    throw new CliError(
      `device ${terminalSafe(device.name)} is already cordoned: ${cordonSummary(device)}`,
      EXIT.CONFLICT,
      "--overwrite replaces the reason",
    );
  await patch(ctx, hub, id, etag, { cordoned: true, cordonReason: reason }, out);
}

/**
 * Uncordons, saying which cordon it removes. On a terminal it asks first unless --yes; with no
 * terminal on stdin there is no one to ask, so --yes is required (a usage error otherwise).
 */
export async function uncordon(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const { device, etag } = await readForChange(ctx, hub, id);
  const name = terminalSafe(device.name);
  if (!device.cordoned) {
    ctx.err(`device ${name} is not cordoned: nothing to do\n`);
    ctx.out(await renderOne(DEVICE_VIEW, device, out));
    return;
  }
  ctx.err(`device ${name} is cordoned: ${cordonSummary(device)}\n`);
  if (!ctx.opts.yes) {
    if (!process.stdin.isTTY)
      throw new UsageError(
        `uncordon asks for confirmation and stdin is not a terminal`,
        `pass --yes to uncordon ${name} without asking`,
      );
    if (!(await confirm(`Uncordon ${name} and remove this reason? [y/N] `)))
      throw new CliError(`not uncordoned: ${name} stays cordoned`, EXIT.ERROR);
  }
  await patch(ctx, hub, id, etag, { cordoned: false }, out);
}

/** One line read from the terminal: yes only for y or yes. */
async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y|yes)$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

async function patch(
  ctx: Ctx,
  hub: HubClient,
  id: string,
  etag: string | undefined,
  body: { cordoned: boolean; cordonReason?: string },
  out: OutputOptions,
): Promise<void> {
  const d = await hub.request("PATCH", `/api/v1/devices/${id}/`, DeviceSchema, {
    body,
    headers: etag ? { "if-match": etag } : {},
  });
  ctx.out(await renderOne(DEVICE_VIEW, d.body, out));
}
