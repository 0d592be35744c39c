/**
 * Reflections: a source's complete view of one site, pushed by its agent. Items are matched
 * to devices (Ironic: node UUID, then name, then serial; SLURM: node name, then device name;
 * health: device name); only what changed is written, in one transaction, through the device
 * service (history, audit, feed). Devices the source observed before and no longer lists have
 * that source's fields cleared (`missing`). A push older than the last accepted one for the
 * (site, source) is refused, so a slow retry cannot overwrite newer state.
 */
import { BadRequest, Conflict, Forbidden, agentMayWriteSource, itemSchemaFor } from "@fm/domain";
import type { HealthItem, IronicItem, NetboxItem, ReflectionBody, ReflectionResult, ReflectionSource, SlurmItem } from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import type { BulkColumn, DeviceBase as DeviceRow } from "../devices/repo.ts";
import { differs, type DeviceService } from "../devices/service.ts";
import { requireSite } from "../sites/repo.ts";
import { applyNetbox } from "./netbox.ts";

type Changes = Parameters<DeviceService["apply"]>[3];
const OBSERVED_COLUMN = { ironic: "ironic_observed_at", slurm: "slurm_observed_at", health: "health_observed_at" } as const;

interface SourceAdapter {
  kind: keyof typeof OBSERVED_COLUMN;
  /** Every device column this source writes (its fields, and its observed-at). */
  columns: readonly BulkColumn[];
  key(item: unknown): string;
  match(item: unknown, devices: DeviceIndex): DeviceRow | undefined;
  changes(item: unknown): Changes;
  observedBefore(d: DeviceRow): boolean;
  cleared: Changes;
  observedField: "ironicObservedAt" | "slurmObservedAt" | "healthObservedAt";
}

/** What matching and comparing read of every device of the site. */
const NARROW_SELECT = {
  id: true,
  name: true,
  serial: true,
  ironicInstance: true,
  ironicNodeUuid: true,
  ironicProvisionState: true,
  ironicTargetProvisionState: true,
  ironicPowerState: true,
  ironicMaintenance: true,
  ironicMaintenanceReason: true,
  ironicLastError: true,
  ironicFault: true,
  ironicObservedAt: true,
  slurmNodeName: true,
  slurmState: true,
  slurmStateFlags: true,
  slurmReason: true,
  slurmPartitions: true,
  slurmObservedAt: true,
  healthStatus: true,
  healthConditions: true,
  healthObservedAt: true,
} as const satisfies Prisma.DeviceSelect;

class DeviceIndex {
  readonly byName = new Map<string, DeviceRow>();
  readonly byNode = new Map<string, DeviceRow>();
  readonly bySerial = new Map<string, DeviceRow>();
  readonly bySlurm = new Map<string, DeviceRow>();
  constructor(readonly all: DeviceRow[]) {
    for (const d of all) {
      this.byName.set(d.name, d);
      if (d.ironicNodeUuid) this.byNode.set(d.ironicNodeUuid, d);
      if (d.serial) this.bySerial.set(d.serial, d);
      if (d.slurmNodeName) this.bySlurm.set(d.slurmNodeName, d);
    }
  }
}

function ironic(instance: "overcloud" | "undercloud"): SourceAdapter {
  return {
    kind: "ironic",
    observedField: "ironicObservedAt",
    columns: [
      { field: "ironicInstance", type: "varchar" },
      { field: "ironicNodeUuid", type: "uuid" },
      { field: "ironicProvisionState", type: "varchar" },
      { field: "ironicTargetProvisionState", type: "varchar" },
      { field: "ironicPowerState", type: "varchar" },
      { field: "ironicMaintenance", type: "boolean" },
      { field: "ironicMaintenanceReason", type: "text" },
      { field: "ironicLastError", type: "text" },
      { field: "ironicFault", type: "varchar" },
      { field: "ironicObservedAt", type: "timestamptz" },
    ],
    key: (i) => (i as IronicItem).name ?? (i as IronicItem).uuid,
    match: (i, idx) => {
      const n = i as IronicItem;
      return idx.byNode.get(n.uuid) ?? (n.name ? idx.byName.get(n.name) : undefined) ?? (n.serial ? idx.bySerial.get(n.serial) : undefined);
    },
    changes: (i) => {
      const n = i as IronicItem;
      return {
        ironicInstance: instance,
        ironicNodeUuid: n.uuid,
        ironicProvisionState: n.provisionState,
        ironicTargetProvisionState: n.targetProvisionState,
        ironicPowerState: n.powerState,
        ironicMaintenance: n.maintenance,
        ironicMaintenanceReason: n.maintenanceReason,
        ironicLastError: n.lastError,
        ironicFault: n.fault,
      };
    },
    observedBefore: (d) => d.ironicInstance === instance && d.ironicObservedAt !== null,
    cleared: { ironicInstance: null, ironicNodeUuid: null, ironicProvisionState: null, ironicTargetProvisionState: null, ironicPowerState: null, ironicMaintenance: null, ironicMaintenanceReason: null, ironicLastError: null, ironicFault: null, ironicObservedAt: null },
  };
}

const slurm: SourceAdapter = {
  kind: "slurm",
  observedField: "slurmObservedAt",
  columns: [
    { field: "slurmNodeName", type: "varchar" },
    { field: "slurmState", type: "varchar" },
    { field: "slurmStateFlags", type: "text[]" },
    { field: "slurmReason", type: "text" },
    { field: "slurmPartitions", type: "text[]" },
    { field: "slurmObservedAt", type: "timestamptz" },
  ],
  key: (i) => (i as SlurmItem).name,
  match: (i, idx) => idx.bySlurm.get((i as SlurmItem).name) ?? idx.byName.get((i as SlurmItem).name),
  changes: (i) => {
    const n = i as SlurmItem;
    return { slurmNodeName: n.name, slurmState: n.state, slurmStateFlags: n.flags, slurmReason: n.reason, slurmPartitions: n.partitions };
  },
  observedBefore: (d) => d.slurmObservedAt !== null,
  cleared: { slurmNodeName: null, slurmState: null, slurmStateFlags: [], slurmReason: null, slurmPartitions: [], slurmObservedAt: null },
};

const health: SourceAdapter = {
  kind: "health",
  observedField: "healthObservedAt",
  columns: [
    { field: "healthStatus", type: "varchar" },
    { field: "healthConditions", type: "jsonb" },
    { field: "healthObservedAt", type: "timestamptz" },
  ],
  key: (i) => (i as HealthItem).name,
  match: (i, idx) => idx.byName.get((i as HealthItem).name),
  changes: (i) => ({ healthStatus: (i as HealthItem).status, healthConditions: (i as HealthItem).conditions }),
  observedBefore: (d) => d.healthObservedAt !== null,
  cleared: { healthStatus: null, healthConditions: null as unknown as undefined, healthObservedAt: null },
};

function adapterFor(source: ReflectionSource): SourceAdapter {
  if (source === "ironic-overcloud") return ironic("overcloud");
  if (source === "ironic-undercloud") return ironic("undercloud");
  if (source === "slurm") return slurm;
  if (source === "health") return health;
  throw new BadRequest("source_not_supported", `Source '${source}' has no annotation adapter`);
}

function parseItems(source: ReflectionSource, items: unknown[]): unknown[] {
  const schema = itemSchemaFor(source);
  if (!schema) return items;
  const errors: { path: string; message: string }[] = [];
  const parsed = items.map((item, n) => {
    const r = schema.safeParse(item);
    if (!r.success) for (const issue of r.error.issues.slice(0, 5)) if (errors.length < 50) errors.push({ path: ["body", "items", n, ...issue.path].join("."), message: issue.message });
    return r.success ? r.data : undefined;
  });
  if (errors.length) throw new BadRequest("validation_failed", `${errors.length} invalid item field(s); first: ${errors[0]!.path}: ${errors[0]!.message}`, { errors });
  return parsed;
}

export function createReflectionService({ prisma, devices }: { prisma: PrismaClient; devices: DeviceService }) {
  return {
    async apply(ctx: RequestContext, siteId: string, source: ReflectionSource, body: ReflectionBody): Promise<ReflectionResult> {
      const agent = ctx.principal.agent;
      if (!agent || !agentMayWriteSource(agent, siteId, source)) {
        throw new Forbidden("reflection_not_allowed", `This agent may not write '${source}' state at this site`);
      }
      const items = parseItems(source, body.items);
      const observedAt = new Date(body.observedAt);
      return prisma.$transaction(
        async (tx) => {
          const t0 = performance.now();
          const phases: Record<string, number> = {};
          const mark = (name: string) => (phases[name] = Math.round(performance.now() - t0));
          await requireSite(tx, siteId);
          await checkNotStale(tx, siteId, source, observedAt);
          if (source === "netbox") {
            const r = await applyNetbox(tx, ctx, devices, siteId, items as NetboxItem[], observedAt);
            await tx.reflectionState.upsert({ where: { siteId_source: { siteId, source } }, update: { observedAt, appliedAt: new Date() }, create: { siteId, source, observedAt } });
            mark("totalMs");
            ctx.log.info({ siteId, source, ...r, unmatchedItems: undefined, ...phases }, "reflection applied");
            return r;
          }
          const adapter = adapterFor(source);
          // Only the columns matching and comparing need: most devices of most pushes are
          // unchanged, and their full rows (conditions, tags, notes …) are never looked at.
          const narrow = (await tx.device.findMany({ where: { siteId }, select: NARROW_SELECT })) as unknown as DeviceRow[];
          const index = new DeviceIndex(narrow);
          mark("readMs");
          const result: ReflectionResult = { created: 0, updated: 0, unchanged: 0, missing: 0, unmatched: 0, unmatchedItems: [] };
          const seen = new Set<string>();
          const entries: { current: DeviceRow; changes: Changes }[] = [];
          for (const item of items) {
            const device = adapter.match(item, index);
            if (!device || seen.has(device.id)) {
              result.unmatched++;
              if (result.unmatchedItems.length < 100) result.unmatchedItems.push(adapter.key(item));
              continue;
            }
            seen.add(device.id);
            // Compared as if already observed now: observing alone is not a change to record.
            const changes = adapter.changes(item);
            if (differs({ ...device, [adapter.observedField]: observedAt }, changes)) entries.push({ current: device, changes });
            else result.unchanged++;
          }
          const missing = index.all.filter((d) => !seen.has(d.id) && adapter.observedBefore(d)).map((d) => ({ current: d, changes: adapter.cleared }));
          mark("matchMs");
          // Full rows for the devices that change: their status is derived from every field.
          const full = new Map<string, DeviceRow>();
          const ids = [...entries, ...missing].map((e) => e.current.id);
          for (let i = 0; i < ids.length; i += 10_000) for (const row of await tx.device.findMany({ where: { id: { in: ids.slice(i, i + 10_000) } } })) full.set(row.id, row);
          const withFull = (list: { current: DeviceRow; changes: Changes }[], observed: Date | null) =>
            list.map((e) => ({ current: observed ? ({ ...full.get(e.current.id)!, [adapter.observedField]: observed } as DeviceRow) : full.get(e.current.id)!, changes: e.changes }));
          mark("fullReadMs");
          // Missing first: a node UUID a vanished device held may now belong to another device.
          await devices.applyMany(tx, ctx, withFull(missing, null), source, adapter.columns);
          result.missing = missing.length;
          result.updated = await devices.applyMany(tx, ctx, withFull(entries, observedAt), source, adapter.columns);
          result.unchanged += entries.length - result.updated;
          mark("writeMs");
          if (seen.size) await tx.$executeRawUnsafe(`UPDATE devices SET ${OBSERVED_COLUMN[adapter.kind]} = $1 WHERE id = ANY($2::uuid[])`, observedAt, [...seen]);
          mark("observedMs");
          await tx.reflectionState.upsert({ where: { siteId_source: { siteId, source } }, update: { observedAt, appliedAt: new Date() }, create: { siteId, source, observedAt } });
          ctx.log.info({ siteId, source, ...result, unmatchedItems: undefined, ...phases }, "reflection applied");
          return result;
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
    },
  };
}

async function checkNotStale(tx: Db, siteId: string, source: string, observedAt: Date): Promise<void> {
  // Serialise pushes of one (site, source): the row lock holds until this push commits.
  await tx.$executeRaw`INSERT INTO reflection_state (site_id, source, observed_at) VALUES (${siteId}::uuid, ${source}, 'epoch') ON CONFLICT DO NOTHING`;
  const rows = await tx.$queryRaw<{ observed_at: Date }[]>`SELECT observed_at FROM reflection_state WHERE site_id = ${siteId}::uuid AND source = ${source} FOR UPDATE`;
  const last = rows[0]?.observed_at;
  if (last && last.getTime() > observedAt.getTime()) {
    throw new Conflict("stale_reflection", `A newer push (observed at ${last.toISOString()}) was already applied for this site and source`);
  }
}
export type ReflectionService = ReturnType<typeof createReflectionService>;
export type { Prisma };
