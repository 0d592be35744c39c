import type { DeviceClass } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";

export type DeviceRoleRow = Prisma.DeviceRoleGetPayload<object>;
export type DeviceTypeRow = Prisma.DeviceTypeGetPayload<object>;
/** A role with the number of its devices (at one site, when the filter names one). */
export type DeviceRoleCountedRow = DeviceRoleRow & { _count: { devices: number } };

export interface DeviceRoleFilter {
  /** inUse and the device count are counted at this site. */
  siteId?: string | undefined;
  deviceClass?: DeviceClass | undefined;
  inUse?: boolean | undefined;
}

export interface DeviceRoleData {
  slug: string;
  name: string;
  deviceClass: DeviceClass;
  netboxId: number | null;
}

export interface DeviceTypeData {
  slug: string;
  manufacturer: string;
  model: string;
  cpuArchitecture: "x86_64" | "aarch64";
  netboxId: number | null;
}

/** Device roles and types: NetBox's, written by the NetBox reflection, read by everyone. */
export const deviceRoleRepo = {
  async listRoles(db: Db, filter: DeviceRoleFilter, page: PageRequest): Promise<RowPage<DeviceRoleCountedRow>> {
    const devicesAtSite: Prisma.DeviceWhereInput = filter.siteId ? { siteId: filter.siteId } : {};
    const where: Prisma.DeviceRoleWhereInput = {
      ...(filter.deviceClass ? { deviceClass: filter.deviceClass } : {}),
      ...(filter.inUse === true
        ? { devices: { some: devicesAtSite } }
        : filter.inUse === false
          ? { devices: { none: devicesAtSite } }
          : {}),
    };
    return keysetRows(
      {
        findMany: (args) =>
          db.deviceRole.findMany({ ...args, include: { _count: { select: { devices: { where: devicesAtSite } } } } }),
        count: (args) => db.deviceRole.count(args),
      },
      where,
      page,
    );
  },

  async listTypes(db: Db, page: PageRequest): Promise<RowPage<DeviceTypeRow>> {
    return keysetRows(db.deviceType, {}, page);
  },

  /** Every role with its fleet-wide device count, in id order: one statement, for a snapshot. */
  async allRolesCounted(db: Db): Promise<DeviceRoleCountedRow[]> {
    return db.deviceRole.findMany({ include: { _count: { select: { devices: true } } }, orderBy: { id: "asc" } });
  },

  async roleExists(db: Db, id: string): Promise<boolean> {
    return (await db.deviceRole.findUnique({ where: { id }, select: { id: true } })) !== null;
  },

  async findRoleBySlug(db: Db, slug: string): Promise<DeviceRoleRow | null> {
    return db.deviceRole.findUnique({ where: { slug } });
  },

  /** Creates the role unless its slug exists (INSERT ... ON CONFLICT DO NOTHING): the new row, or null. */
  async createRoleIfAbsent(db: Db, data: DeviceRoleData): Promise<DeviceRoleRow | null> {
    const { count } = await db.deviceRole.createMany({ data: [data], skipDuplicates: true });
    return count ? db.deviceRole.findUnique({ where: { slug: data.slug } }) : null;
  },

  async updateRole(db: Db, id: string, data: Omit<DeviceRoleData, "slug">): Promise<DeviceRoleRow> {
    return db.deviceRole.update({ where: { id }, data });
  },

  async findTypeBySlug(db: Db, slug: string): Promise<DeviceTypeRow | null> {
    return db.deviceType.findUnique({ where: { slug } });
  },

  /** Creates the type unless its slug exists (INSERT ... ON CONFLICT DO NOTHING): the new row, or null. */
  async createTypeIfAbsent(db: Db, data: DeviceTypeData): Promise<DeviceTypeRow | null> {
    const { count } = await db.deviceType.createMany({ data: [data], skipDuplicates: true });
    return count ? db.deviceType.findUnique({ where: { slug: data.slug } }) : null;
  },

  async updateType(
    db: Db,
    id: string,
    data: Pick<DeviceTypeData, "manufacturer" | "model" | "netboxId">,
  ): Promise<DeviceTypeRow> {
    return db.deviceType.update({ where: { id }, data });
  },
};
export type DeviceRoleRepo = typeof deviceRoleRepo;
