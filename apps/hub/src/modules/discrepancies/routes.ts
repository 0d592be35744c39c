import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  DiscrepancyFleetQuerySchema,
  DiscrepancyListQuerySchema,
  DiscrepancyListSchema,
  DiscrepancySummarySchema,
  IdParams,
} from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { DiscrepancyService } from "./service.ts";

export function registerDiscrepancies(app: FastifyInstance, { service }: { service: DiscrepancyService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["discrepancies"];

  r.get(
    "/api/v1/sites/:id/discrepancies",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listSiteDiscrepancies",
        summary: "Devices and items of a site on which the sources disagree, with the values seen and since when",
        params: IdParams,
        querystring: DiscrepancyListQuerySchema,
        response: { 200: DiscrepancyListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.list(request.ctx, request.params.id, request.query),
  );

  r.get(
    "/api/v1/discrepancies",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listDiscrepancies",
        summary: "Open discrepancies fleet-wide, filtered by sites, kinds and a name, paged in id order",
        querystring: DiscrepancyFleetQuerySchema,
        response: { 200: DiscrepancyListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.fleetList(request.ctx, request.query),
  );

  r.get(
    "/api/v1/discrepancies/summary",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getDiscrepancySummary",
        summary: "Open discrepancies fleet-wide: the total, per kind and per site",
        response: { 200: DiscrepancySummarySchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.summary(request.ctx),
  );
}
