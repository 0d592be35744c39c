/**
 * Device rows one at a time or by id (full rows, relations built by PostgreSQL), their locks,
 * creation, single updates and the field history.
 */
import { Conflict } from "@fm/domain";
import { directPrepared, type Db } from "../../../db/client.ts";
import { Prisma } from "../../../generated/prisma/client.ts";
import { bulkInsert, snakeCase } from "../../../db/bulk.ts";
import { translateConstraintErrors } from "../../../db/constraint-errors.ts";
import { lockRow } from "../../../db/lock.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../../db/keyset.ts";
import type { DeviceBase, Observed } from "../../../db/device-columns.ts";
import { OBSERVED_JOIN, OBSERVED_SQL, observationStamps, splitObserved, withObservations } from "./observations.ts";

export const DEVICE_INCLUDE = {
  site: { select: { id: true, slug: true } },
  rack: { select: { id: true, name: true } },
  deviceType: { select: { id: true, slug: true, model: true, cpuArchitecture: true } },
  deviceRole: { select: { id: true, slug: true, deviceClass: true } },
  interfaces: { orderBy: { name: "asc" } },
  observations: true,
} satisfies Prisma.DeviceInclude;

type IncludedRow = Prisma.DeviceGetPayload<{ include: typeof DEVICE_INCLUDE }>;
/** A device with its relations, interfaces and observation times, as one flat row. */
export type DeviceRow = Omit<IncludedRow, "observations"> & Observed;
export type DeviceHistoryRow = Prisma.DeviceHistoryGetPayload<object>;

const HISTORY_COLUMNS = [
  { name: "device_id", type: "uuid" },
  { name: "field", type: "varchar" },
  { name: "source", type: "varchar" },
  { name: "old_value", type: "jsonb" },
  { name: "new_value", type: "jsonb" },
  { name: "principal", type: "varchar" },
  { name: "request_id", type: "varchar" },
  { name: "changed_at", type: "timestamptz" },
] as const;

/**
 * Every scalar column of devices as its Prisma field, from the generated client: a column added
 * to the schema is read with the rest (a hand-kept list missed cordonSource and healthSince, so
 * every impairment cordon read as an operator's).
 */
const DEVICE_FIELDS: readonly (keyof DeviceBase)[] = Object.values(Prisma.DeviceScalarFieldEnum);

/**
 * Full device rows (DEVICE_INCLUDE's shape) in one statement, relations and interfaces built
 * as JSON by PostgreSQL: the ORM's hydration of 10,000 devices with their relations cost
 * seconds. `rackPosition` comes back as the decimal's text (Number() reads it as a Decimal alike).
 */
const FULL_ROWS = `
  SELECT ${DEVICE_FIELDS.map((f) => `d.${snakeCase(f)} AS "${f}"`).join(", ")}, ${OBSERVED_SQL},
         json_build_object('id', s.id, 'slug', s.slug) AS site,
         CASE WHEN r.id IS NULL THEN NULL ELSE json_build_object('id', r.id, 'name', r.name) END AS rack,
         CASE WHEN t.id IS NULL THEN NULL
              ELSE json_build_object('id', t.id, 'slug', t.slug, 'model', t.model, 'cpuArchitecture', t.cpu_architecture) END AS "deviceType",
         CASE WHEN ro.id IS NULL THEN NULL
              ELSE json_build_object('id', ro.id, 'slug', ro.slug, 'deviceClass', ro.device_class) END AS "deviceRole",
         coalesce((SELECT json_agg(json_build_object('id', i.id, 'deviceId', i.device_id, 'name', i.name, 'type', i.type,
                                   'macAddress', i.mac_address, 'ibGuid', i.ib_guid, 'mgmtOnly', i.mgmt_only,
                                   'peerDevice', i.peer_device, 'peerInterface', i.peer_interface, 'netboxId', i.netbox_id)
                                   ORDER BY i.name)
                     FROM device_interfaces i WHERE i.device_id = d.id), '[]') AS interfaces
    FROM devices d JOIN sites s ON s.id = d.site_id
    ${OBSERVED_JOIN}
    LEFT JOIN racks r ON r.id = d.rack_id
    LEFT JOIN device_types t ON t.id = d.device_type_id
    LEFT JOIN device_roles ro ON ro.id = d.device_role_id
   WHERE d.id = ANY($1::uuid[])
   ORDER BY d.id`;

/**
 * On a transaction's own connection when there is one (directQuery): Prisma's mapping of a raw
 * result cost as much as the query for a first load's 50,000 rows. Both read `numeric` as text,
 * pg as the column's scale writes it ("3.0"), Prisma in its shortest form ("3"): written in the
 * shortest form, so the rows are the same whichever path read them.
 */
async function fullRows(db: Db, ids: string[], lock: boolean): Promise<DeviceRow[]> {
  if (!ids.length) return [];
  const { rows } = await directPrepared<DeviceRow>(
    db,
    lock ? "devices-full-rows-locked" : "devices-full-rows",
    // FOR NO KEY UPDATE: see db/lock.ts.
    lock ? `${FULL_ROWS} FOR NO KEY UPDATE OF d` : FULL_ROWS,
    ids,
  );
  for (const r of rows) if (r.rackPosition !== null) r.rackPosition = String(Number(r.rackPosition)) as never;
  return rows;
}

export const deviceRows = {
  async exists(db: Db, id: string): Promise<boolean> {
    return (await db.device.findUnique({ where: { id }, select: { id: true } })) !== null;
  },
  async findById(db: Db, id: string): Promise<DeviceRow | null> {
    const row = await db.device.findUnique({ where: { id }, include: DEVICE_INCLUDE });
    return row && withObservations(row);
  },
  async lockById(db: Db, id: string): Promise<DeviceRow | null> {
    return (await lockRow(db, "devices", id)) ? deviceRows.findById(db, id) : null;
  },
  async update(db: Db, id: string, data: Prisma.DeviceUncheckedUpdateInput & Partial<Observed>): Promise<DeviceRow> {
    const { row, observed } = splitObserved(data);
    return db.device
      .update({
        where: { id },
        data: {
          ...row,
          ...(Object.keys(observed).length ? { observations: { update: observed } } : {}),
          version: { increment: 1 },
          updatedAt: new Date(),
        },
        include: DEVICE_INCLUDE,
      })
      .then(withObservations)
      .catch(
        translateConstraintErrors({
          unique: (v) =>
            v.constraint.includes("ironic_node_uuid")
              ? new Conflict(
                  "ironic_node_taken",
                  `Ironic node ${String(data.ironicNodeUuid)} is already recorded on another device`,
                )
              : undefined,
        }),
      );
  },
  /** Full rows of these devices, in id order (one array parameter, whatever their number). */
  async findByIds(db: Db, ids: string[]): Promise<DeviceRow[]> {
    return fullRows(db, ids, false);
  },
  /** findByIds, with the rows locked until the transaction ends: no one changes them meanwhile. */
  async lockByIds(db: Db, ids: string[]): Promise<DeviceRow[]> {
    return fullRows(db, ids, true);
  },
  /**
   * Creates those of these devices that do not exist yet (a site's names are unique), each with
   * its observation times; returns the ones it created.
   */
  async createMany(
    db: Db,
    rows: (Prisma.DeviceCreateManyInput & Partial<Observed>)[],
  ): Promise<{ id: string; siteId: string; name: string }[]> {
    const key = (r: { siteId: string; name: string }) => `${r.siteId}/${r.name}`;
    const split = new Map(rows.map((r) => [key(r), splitObserved(r)]));
    const created = await db.device.createManyAndReturn({
      data: [...split.values()].map((s) => s.row),
      skipDuplicates: true,
      select: { id: true, siteId: true, name: true },
    });
    await observationStamps.stampObserved(
      db,
      created.map((c) => ({ id: c.id, observed: split.get(key(c))!.observed })),
    );
    return created;
  },
  async create(db: Db, data: Prisma.DeviceUncheckedCreateInput & Partial<Observed>): Promise<DeviceRow> {
    // The device's observation row comes with it (a trigger); its times are then written in place.
    const { row, observed } = splitObserved(data);
    const created = await db.device.create({ data: row, select: { id: true } });
    await observationStamps.stampObserved(db, [{ id: created.id, observed }]);
    return (await deviceRows.findById(db, created.id))!;
  },
  async addHistory(db: Db, entries: Prisma.DeviceHistoryCreateManyInput[]): Promise<void> {
    await bulkInsert(
      db,
      "device_history",
      HISTORY_COLUMNS,
      entries.map((e) => ({
        device_id: e.deviceId,
        field: e.field,
        source: e.source,
        old_value: e.oldValue ?? null,
        new_value: e.newValue ?? null,
        principal: e.principal ?? null,
        request_id: e.requestId ?? null,
        changed_at: e.changedAt ?? new Date(),
      })),
    );
  },
  async history(
    db: Db,
    deviceId: string,
    field: string | undefined,
    page: PageRequest<bigint>,
  ): Promise<RowPage<DeviceHistoryRow>> {
    return keysetRows(db.deviceHistory, { deviceId, ...(field ? { field } : {}) }, page);
  },
};
