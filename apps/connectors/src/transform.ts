/**
 * Feed events and snapshot lines to inventory records (@fm/domain InventoryRecordSchema): pure,
 * table-tested. Only sites and devices of the instance's sites become records; everything else
 * in the feed (jobs, roles, settings) is skipped. A record id names the instance, the feed
 * position (or the snapshot's) and the resource, so a page read again after a crash yields the
 * same ids and the receiver de-duplicates.
 */
import {
  INVENTORY_RECORD_SCHEMA_VERSION,
  type Device,
  type InventoryEvent,
  type InventoryRecord,
  type SiteRecord,
} from "@fm/domain";
import type { Enqueue } from "./queue/store.ts";

export interface TransformContext {
  connector: string;
  /** Ids of the sites this instance ships. */
  siteIds: ReadonlySet<string>;
}

interface Origin {
  /** `42` for feed position 42, `snapshot-42` for the snapshot taken at 42. */
  tag: string;
  position: string;
  changedAt: string;
  op: "upsert" | "delete";
}

export function recordsOfEvent(e: InventoryEvent, ctx: TransformContext): Enqueue[] {
  const origin = (op: Origin["op"]): Origin => ({ tag: e.position, position: e.position, changedAt: e.occurredAt, op });
  switch (e.type) {
    case "site.created":
    case "site.updated":
    case "site.deleted":
      if (!ctx.siteIds.has(e.data.id)) return [];
      return [siteRecord(e.data, origin(e.type === "site.deleted" ? "delete" : "upsert"), ctx)];
    case "device.created":
    case "device.updated":
      if (!ctx.siteIds.has(e.data.site.id)) return [];
      return [deviceRecord(e.data, origin("upsert"), ctx)];
    default:
      return [];
  }
}

export function recordsOfSnapshot(
  line: { kind: "site"; data: SiteRecord } | { kind: "device"; data: Device },
  snapshot: { position: string; takenAt: string },
  ctx: TransformContext,
): Enqueue[] {
  const origin: Origin = {
    tag: `snapshot-${snapshot.position}`,
    position: snapshot.position,
    changedAt: snapshot.takenAt,
    op: "upsert",
  };
  if (line.kind === "site") return ctx.siteIds.has(line.data.id) ? [siteRecord(line.data, origin, ctx)] : [];
  return ctx.siteIds.has(line.data.site.id) ? [deviceRecord(line.data, origin, ctx)] : [];
}

function common(o: Origin, ctx: TransformContext, resource: string, id: string) {
  return {
    schemaVersion: INVENTORY_RECORD_SCHEMA_VERSION,
    recordId: `${ctx.connector}:${o.tag}:${resource}:${id}`,
    connector: ctx.connector,
    op: o.op,
    feedPosition: o.position,
    changedAt: o.changedAt,
  } as const;
}

function siteRecord(s: SiteRecord, o: Origin, ctx: TransformContext): Enqueue {
  const record: InventoryRecord = {
    ...common(o, ctx, "site", s.id),
    kind: "site",
    siteId: s.id,
    siteSlug: s.slug,
    name: s.name,
    region: s.region,
  };
  return { record, resourceKey: `site:${s.id}` };
}

function deviceRecord(d: Device, o: Origin, ctx: TransformContext): Enqueue {
  const record: InventoryRecord = {
    ...common(o, ctx, "device", d.id),
    kind: "device",
    deviceId: d.id,
    siteId: d.site.id,
    siteSlug: d.site.slug,
    name: d.name,
    serial: d.serial,
    assetTag: d.assetTag,
    rack: d.rack?.name ?? null,
    rackPosition: d.rack?.position ?? null,
    model: d.deviceType?.model ?? null,
    cpuArchitecture: d.deviceType?.cpuArchitecture ?? null,
    role: d.role?.slug ?? null,
    deviceClass: d.role?.deviceClass ?? null,
    platformClass: d.platformClass,
    netboxStatus: d.netbox.status,
    provisionState: d.ironic.provisionState,
    powerState: d.ironic.powerState,
    healthStatus: d.health.status,
    operationalStatus: d.operationalStatus,
    cordoned: d.cordoned,
    version: d.version,
  };
  return { record, resourceKey: `device:${d.id}` };
}
