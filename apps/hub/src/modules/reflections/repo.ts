/**
 * What the reflections write besides the device service's own writes: each (site, source)'s
 * last accepted push, the narrow device reads matching and comparing need, and, for NetBox,
 * the locations, racks, interfaces and new devices it brings. Bulk writes are one statement
 * whatever the number of rows (see `db/bulk.ts`).
 */
import type { NetboxItem } from "@fm/domain";
import { directQuery, type Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { bulkInsert, snakeCase } from "../../db/bulk.ts";
import { isObservedField, type Observed } from "../../db/device-columns.ts";
import { deviceRows, withObservations, type BulkColumn } from "../devices/public.ts";

/** Every device column the NetBox reflection writes, with its PostgreSQL type. */
/** What a device renamed by a push is called for an instant (`parkNames`): U+001F, then a word. */
export const PARKED_NAME_PREFIX = "\u001ffm-renaming:";

export const NETBOX_COLUMNS: readonly BulkColumn[] = [
  { field: "name", type: "varchar" },
  { field: "serial", type: "varchar" },
  { field: "assetTag", type: "varchar" },
  { field: "rackId", type: "uuid" },
  { field: "rackPosition", type: "numeric" },
  { field: "deviceTypeId", type: "uuid" },
  { field: "deviceRoleId", type: "uuid" },
  { field: "netboxId", type: "integer" },
  { field: "netboxStatus", type: "netbox_device_status" },
  { field: "netboxMissing", type: "boolean" },
  { field: "netboxObservedAt", type: "timestamptz" },
  { field: "platformClass", type: "varchar" },
  { field: "tags", type: "text[]" },
  { field: "bmcAddress", type: "varchar" },
];

const INTERFACE_COLUMNS = [
  { name: "device_id", type: "uuid" },
  { name: "name", type: "varchar" },
  { name: "type", type: "varchar" },
  { name: "mac_address", type: "varchar" },
  { name: "ib_guid", type: "varchar" },
  { name: "mgmt_only", type: "boolean" },
  { name: "peer_device", type: "varchar" },
  { name: "peer_interface", type: "varchar" },
  { name: "netbox_id", type: "integer" },
] as const;

/** What matching and comparing an Ironic, SLURM or health item read of every device of the site. */
const ANNOTATION_SELECT = {
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
  slurmNodeName: true,
  slurmState: true,
  slurmStateFlags: true,
  slurmReason: true,
  slurmPartitions: true,
  healthStatus: true,
  healthConditions: true,
  healthSince: true,
} as const satisfies Prisma.DeviceSelect;
/** The columns above and the sources' observation times (device_observations). */
export type AnnotatedDevice = Prisma.DeviceGetPayload<{ select: typeof ANNOTATION_SELECT }> &
  Pick<Observed, "ironicObservedAt" | "slurmObservedAt" | "healthObservedAt">;
/** What every source's matching reads (see annotations.ts `DeviceIndex`). */
const MATCH_FIELDS = ["id", "name", "serial", "ironicNodeUuid", "slurmNodeName"] as const;

/** What matching and comparing a NetBox item read of every device of the site. */
const NETBOX_SELECT = {
  id: true,
  name: true,
  serial: true,
  assetTag: true,
  rackId: true,
  rackPosition: true,
  deviceTypeId: true,
  deviceRoleId: true,
  netboxId: true,
  netboxStatus: true,
  netboxMissing: true,
  observations: { select: { netboxObservedAt: true } },
  platformClass: true,
  tags: true,
  bmcAddress: true,
  interfaces: {
    select: {
      name: true,
      type: true,
      macAddress: true,
      ibGuid: true,
      mgmtOnly: true,
      peerDevice: true,
      peerInterface: true,
      netboxId: true,
    },
  },
} as const satisfies Prisma.DeviceSelect;
export type NetboxDevice = Omit<Prisma.DeviceGetPayload<{ select: typeof NETBOX_SELECT }>, "observations"> &
  Pick<Observed, "netboxObservedAt">;

export type NetboxInterface = NetboxItem["interfaces"][number];
export type NetboxLocation = NonNullable<NetboxItem["location"]>;
export type NetboxRack = NonNullable<NetboxItem["rack"]>;
export type RackRow = Prisma.RackGetPayload<object>;

const interfaceRow = (deviceId: string, i: NetboxInterface) => ({
  device_id: deviceId,
  name: i.name,
  type: i.type,
  mac_address: i.macAddress?.toUpperCase() ?? null,
  ib_guid: i.ibGuid,
  mgmt_only: i.mgmtOnly,
  peer_device: i.peerDevice,
  peer_interface: i.peerInterface,
  netbox_id: i.netboxId,
});

export const reflectionRepo = {
  /**
   * The observed-at of the last accepted push of this (site, source), with its row locked until
   * the caller commits, so pushes of one (site, source) run one after the other; 'epoch' for the
   * source's first push at the site, null when there is no such site. One round trip: the row
   * is made on the first push (the insert's foreign key also holds the site until commit).
   */
  async lockLastPush(db: Db, siteId: string, source: string): Promise<Date | null> {
    const rows = await db.$queryRaw<{ observed_at: Date }[]>`
      INSERT INTO reflection_state AS r (site_id, source, observed_at)
      SELECT s.id, ${source}, 'epoch' FROM sites s WHERE s.id = ${siteId}::uuid
      ON CONFLICT (site_id, source) DO UPDATE SET source = r.source
      RETURNING r.observed_at`;
    return rows[0]?.observed_at ?? null;
  },

  async saveLastPush(db: Db, siteId: string, source: string, observedAt: Date): Promise<void> {
    await db.reflectionState.update({
      where: { siteId_source: { siteId, source } },
      data: { observedAt, appliedAt: new Date() },
    });
  },

  /**
   * Every device of the site with the fields matching needs and the source's own `fields` (an
   * adapter's columns): the other sources' fields are left out (undefined), as a push of one
   * source never looks at them. One plain statement on the transaction's connection: the ORM's
   * hydration of a whole site's rows cost more than the query.
   */
  async annotatedDevices(db: Db, siteId: string, fields: readonly string[]): Promise<AnnotatedDevice[]> {
    const select = new Set<string>([...MATCH_FIELDS, ...fields]);
    for (const f of select)
      if (!(f in ANNOTATION_SELECT) && !isObservedField(f)) throw new Error(`annotatedDevices: ${f} is not readable`);
    const sql = `SELECT ${[...select].map((f) => `${isObservedField(f) ? "o" : "d"}.${snakeCase(f)} AS "${f}"`).join(", ")}
                   FROM devices d LEFT JOIN device_observations o ON o.device_id = d.id WHERE d.site_id = $1::uuid`;
    return (await directQuery<AnnotatedDevice>(db, sql, siteId)).rows;
  },

  /** Which of these Ironic node UUIDs devices of other sites hold. */
  async nodeUuidsHeldElsewhere(db: Db, siteId: string, uuids: string[]): Promise<Set<string>> {
    if (!uuids.length) return new Set();
    // On the transaction's connection: a first load asks about every node of the site at once.
    const { rows } = await directQuery<{ uuid: string }>(
      db,
      `SELECT ironic_node_uuid::text AS uuid FROM devices WHERE ironic_node_uuid = ANY($1::uuid[]) AND site_id <> $2::uuid`,
      uuids,
      siteId,
    );
    return new Set(rows.map((r) => r.uuid));
  },

  async netboxDevices(db: Db, siteId: string): Promise<NetboxDevice[]> {
    return (await db.device.findMany({ where: { siteId }, select: NETBOX_SELECT })).map(withObservations);
  },

  /** Creates the location or brings it up to date; returns its id. */
  async upsertLocation(db: Db, siteId: string, l: NetboxLocation): Promise<string> {
    const row = await db.location.upsert({
      where: { siteId_slug: { siteId, slug: l.slug } },
      update: { name: l.name, netboxId: l.netboxId },
      create: { siteId, ...l },
    });
    return row.id;
  },

  async racks(db: Db, siteId: string): Promise<RackRow[]> {
    return db.rack.findMany({ where: { siteId } });
  },

  /** Creates the rack or brings it up to date; returns its id. */
  async upsertRack(db: Db, siteId: string, rack: NetboxRack, locationId: string | null): Promise<string> {
    const row = await db.rack.upsert({
      where: { siteId_name: { siteId, name: rack.name } },
      update: { netboxId: rack.netboxId, locationId },
      create: { siteId, name: rack.name, netboxId: rack.netboxId, locationId },
    });
    return row.id;
  },

  /**
   * Gives these devices placeholder names (`PARKED_NAME_PREFIX` and the id, unique by their id);
   * the caller gives them their new names in the same transaction, so no reader ever sees one.
   * The prefix begins with U+001F, a control character no name can hold (`ObjectName`, and the
   * hub's door refuses it in any text): no push can name a device so, and so none can collide
   * with a parked name (a NetBox name `~fm-renaming~<id>` once did, and wedged its site's pushes).
   */
  async parkNames(db: Db, ids: string[]): Promise<void> {
    if (!ids.length) return;
    await db.$executeRaw`UPDATE devices SET name = ${PARKED_NAME_PREFIX} || id::text WHERE id = ANY(${ids}::uuid[])`;
  },

  /** Replaces the interfaces of each listed device with the ones given. */
  async replaceInterfaces(db: Db, devices: { deviceId: string; interfaces: NetboxInterface[] }[]): Promise<void> {
    if (!devices.length) return;
    await db.$executeRawUnsafe(
      `DELETE FROM device_interfaces WHERE device_id = ANY($1::uuid[])`,
      devices.map((d) => d.deviceId),
    );
    await this.insertInterfaces(db, devices);
  },

  async insertInterfaces(db: Db, devices: { deviceId: string; interfaces: NetboxInterface[] }[]): Promise<void> {
    await bulkInsert(
      db,
      "device_interfaces",
      INTERFACE_COLUMNS,
      devices.flatMap((d) => d.interfaces.map((i) => interfaceRow(d.deviceId, i))),
    );
  },

  /**
   * New devices at the site: NETBOX_COLUMNS (Prisma field names), their derived status and
   * conditions. Returns each new device's id by name.
   */
  async insertDevices(
    db: Db,
    siteId: string,
    rows: (Record<string, unknown> & { operationalStatus: string; conditions: unknown })[],
  ): Promise<Map<string, string>> {
    const created = await bulkInsert(
      db,
      "devices",
      [
        { name: "site_id", type: "uuid" },
        ...NETBOX_COLUMNS.filter((c) => !isObservedField(c.field)).map((c) => ({
          name: snakeCase(c.field),
          type: c.type,
        })),
        { name: "operational_status", type: "operational_status" },
        { name: "conditions", type: "jsonb" },
      ],
      rows.map((r) => ({
        site_id: siteId,
        ...Object.fromEntries(Object.entries(r).map(([k, v]) => [snakeCase(k), v])),
      })),
      "id, name",
    );
    const ids = new Map((created as { id: string; name: string }[]).map((r) => [r.name, r.id]));
    await deviceRows.stampObserved(
      db,
      rows.map((r) => ({ id: ids.get(r.name as string)!, observed: r as Partial<Observed> })),
    );
    return ids;
  },
};
export type ReflectionRepo = typeof reflectionRepo;
