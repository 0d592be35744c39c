import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { NetboxSettingsInputSchema, NetboxSettingsSchema } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { NetboxSettingsService } from "./service.ts";

export function registerNetboxSettings(app: FastifyInstance, { service }: { service: NetboxSettingsService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["netbox"];
  r.get(
    "/api/v1/netbox/settings",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getNetboxSettings",
        summary: "The NetBox settings of every netbox agent: clusters per site, role -> device class",
        response: { 200: NetboxSettingsSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async () => service.get(),
  );
  r.put(
    "/api/v1/netbox/settings",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "replaceNetboxSettings",
        summary: "Replace the NetBox settings; re-classes the roles the mapping names (audited, feed)",
        body: NetboxSettingsInputSchema,
        response: { 200: NetboxSettingsSchema, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => service.put(request.ctx, request.body),
  );
}
