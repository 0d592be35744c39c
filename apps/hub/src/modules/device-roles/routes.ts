import { keysetPage } from "../../lib/paging.ts";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  DeviceRoleListQuerySchema,
  DeviceRoleListSchema,
  DeviceTypeListSchema,
  PageQuery,
  decodeCursor,
} from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { errorResponses } from "../../lib/openapi.ts";
import { resolveSiteId } from "../sites/repo.ts";

/**
 * Device roles and types are NetBox's (the NetBox agent creates them); the hub serves them
 * read-only. `inUse` tells an agent which Ironic instances its site needs.
 */
export function registerDeviceRoles(app: FastifyInstance, { prisma }: { prisma: PrismaClient }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/api/v1/device-roles",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["inventory"],
        summary: "List device roles with their device class",
        querystring: DeviceRoleListQuerySchema,
        response: { 200: DeviceRoleListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const siteId = q.site ? await resolveSiteId(prisma, q.site, "site") : undefined;
      const devicesAtSite: Prisma.DeviceWhereInput = siteId ? { siteId } : {};
      const where: Prisma.DeviceRoleWhereInput = {
        ...(q.deviceClass ? { deviceClass: q.deviceClass } : {}),
        ...(q.inUse === true
          ? { devices: { some: devicesAtSite } }
          : q.inUse === false
            ? { devices: { none: devicesAtSite } }
            : {}),
      };
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.deviceRole.findMany({
          where: afterId ? { AND: [where, { id: { gt: afterId } }] } : where,
          orderBy: { id: "asc" },
          take: q.limit + 1,
          include: { _count: { select: { devices: { where: devicesAtSite } } } },
        }),
        prisma.deviceRole.count({ where }),
      ]);
      return keysetPage(rows, count, q.limit, ({ _count, createdAt: _c, updatedAt: _u, ...role }) => ({
        ...role,
        deviceCount: _count.devices,
        inUse: _count.devices > 0,
      }));
    },
  );
  r.get(
    "/api/v1/device-types",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["inventory"],
        summary: "List device types",
        querystring: PageQuery,
        response: { 200: DeviceTypeListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.deviceType.findMany({
          where: afterId ? { id: { gt: afterId } } : {},
          orderBy: { id: "asc" },
          take: q.limit + 1,
        }),
        prisma.deviceType.count(),
      ]);
      return keysetPage(rows, count, q.limit, ({ createdAt: _c, updatedAt: _u, ...t }) => t);
    },
  );
}
