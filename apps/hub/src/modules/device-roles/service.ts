import type { DeviceRole, DeviceRoleList, DeviceRoleListQuery, DeviceType, DeviceTypeList } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import { keysetList, type PageQuery } from "../../lib/paging.ts";
import { resolveSiteId } from "../sites/public.ts";
import type { DeviceRoleCountedRow, DeviceRoleRepo, DeviceTypeRow } from "./repo.ts";

export function toDeviceRole({ _count, createdAt: _c, updatedAt: _u, ...role }: DeviceRoleCountedRow): DeviceRole {
  return { ...role, deviceCount: _count.devices, inUse: _count.devices > 0 };
}

export function toDeviceType({ createdAt: _c, updatedAt: _u, ...type }: DeviceTypeRow): DeviceType {
  return type;
}

/**
 * Device roles and types are NetBox's (the NetBox reflection creates them); the hub serves them
 * read-only. `inUse` tells an agent which Ironic instances its site needs.
 */
export function createDeviceRoleService({ prisma, repo }: { prisma: PrismaClient; repo: DeviceRoleRepo }) {
  return {
    async listRoles(query: DeviceRoleListQuery): Promise<DeviceRoleList> {
      const siteId = query.site ? await resolveSiteId(prisma, query.site, "site") : undefined;
      const filter = { siteId, deviceClass: query.deviceClass, inUse: query.inUse };
      return keysetList(query, (page) => repo.listRoles(prisma, filter, page), toDeviceRole);
    },

    async listTypes(query: PageQuery): Promise<DeviceTypeList> {
      return keysetList(query, (page) => repo.listTypes(prisma, page), toDeviceType);
    },
  };
}
export type DeviceRoleService = ReturnType<typeof createDeviceRoleService>;
