import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { DeviceRoleListQuerySchema, DeviceRoleListSchema, DeviceTypeListSchema, PageQuery } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { DeviceRoleService } from "./service.ts";

export function registerDeviceRoles(app: FastifyInstance, { service }: { service: DeviceRoleService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/api/v1/device-roles",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["inventory"],
        operationId: "listDeviceRoles",
        summary: "List device roles with their device class",
        querystring: DeviceRoleListQuerySchema,
        response: { 200: DeviceRoleListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.listRoles(request.query),
  );
  r.get(
    "/api/v1/device-types",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["inventory"],
        operationId: "listDeviceTypes",
        summary: "List device types",
        querystring: PageQuery,
        response: { 200: DeviceTypeListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.listTypes(request.query),
  );
}
