import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  IdParams,
  SiteCreateSchema,
  SiteListQuerySchema,
  SiteListSchema,
  SitePatchSchema,
  SiteSchema,
} from "@fm/domain";
import { IfMatchHeaders, etagOf } from "../../lib/etag.ts";
import { errorResponses } from "../../lib/openapi.ts";
import type { SiteService } from "./service.ts";

export function registerSites(app: FastifyInstance, { service }: { service: SiteService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["sites"];

  r.get(
    "/api/v1/sites",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listSites",
        summary: "List sites",
        querystring: SiteListQuerySchema,
        response: { 200: SiteListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.list(request.ctx, request.query),
  );

  r.post(
    "/api/v1/sites",
    {
      config: { scope: "fleet.admin", idempotent: true },
      schema: {
        tags,
        operationId: "createSite",
        summary: "Create a site",
        body: SiteCreateSchema,
        response: { 201: SiteSchema, ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const site = await service.create(request.ctx, request.body);
      reply.code(201).header("location", `/api/v1/sites/${site.id}`).header("etag", etagOf(site));
      return site;
    },
  );

  r.get(
    "/api/v1/sites/:id",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getSite",
        summary: "Get a site",
        params: IdParams,
        response: { 200: SiteSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const site = await service.get(request.ctx, request.params.id);
      reply.header("etag", etagOf(site));
      return site;
    },
  );

  r.patch(
    "/api/v1/sites/:id",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "updateSite",
        summary: "Change a site (slug is immutable); honours If-Match",
        params: IdParams,
        headers: IfMatchHeaders,
        body: SitePatchSchema,
        response: { 200: SiteSchema, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const site = await service.update(request.ctx, request.params.id, request.body, request.headers["if-match"]);
      reply.header("etag", etagOf(site));
      return site;
    },
  );

  r.delete(
    "/api/v1/sites/:id",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "deleteSite",
        summary: "Delete a site; honours If-Match",
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: z.undefined().describe("Deleted"), ...errorResponses(400, 401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      await service.remove(request.ctx, request.params.id, request.headers["if-match"]);
      return reply.code(204).send();
    },
  );
}
