import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  SiteConfigParams,
  SiteIdParams,
  SlurmBootstrapConfigCreateSchema,
  SlurmBootstrapConfigListQuerySchema,
  SlurmBootstrapConfigListSchema,
  SlurmBootstrapConfigReplaceSchema,
  SlurmBootstrapConfigSchema,
} from "@fm/domain";
import { IfMatchHeaders, etagOf } from "../../lib/etag.ts";
import { errorResponses } from "../../lib/openapi.ts";
import type { SlurmBootstrapService } from "./service.ts";

export function registerSlurmBootstrap(app: FastifyInstance, { service }: { service: SlurmBootstrapService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["slurm-bootstrap-configs"];
  const base = "/api/v1/sites/:site_id/slurm-bootstrap-configs";
  r.get(
    base,
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listSlurmBootstrapConfigs",
        summary: "List a site's SLURM bootstrap configs",
        params: SiteIdParams,
        querystring: SlurmBootstrapConfigListQuerySchema,
        response: { 200: SlurmBootstrapConfigListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.list(request.params.site_id, request.query),
  );
  r.post(
    base,
    {
      config: { scope: "fleet.admin", idempotent: true },
      schema: {
        tags,
        operationId: "createSlurmBootstrapConfig",
        summary: "Create the SLURM bootstrap config of a (site, device role)",
        params: SiteIdParams,
        body: SlurmBootstrapConfigCreateSchema,
        response: { 201: SlurmBootstrapConfigSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const c = await service.create(request.ctx, request.params.site_id, request.body);
      reply
        .code(201)
        .header("location", `/api/v1/sites/${c.siteId}/slurm-bootstrap-configs/${c.id}`)
        .header("etag", etagOf(c));
      return c;
    },
  );
  r.get(
    `${base}/:id`,
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getSlurmBootstrapConfig",
        summary: "Get a SLURM bootstrap config",
        params: SiteConfigParams,
        response: { 200: SlurmBootstrapConfigSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const c = await service.get(request.params.site_id, request.params.id);
      reply.header("etag", etagOf(c));
      return c;
    },
  );
  r.put(
    `${base}/:id`,
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "replaceSlurmBootstrapConfig",
        summary: "Replace a SLURM bootstrap config; honours If-Match",
        params: SiteConfigParams,
        headers: IfMatchHeaders,
        body: SlurmBootstrapConfigReplaceSchema,
        response: { 200: SlurmBootstrapConfigSchema, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const c = await service.replace(
        request.ctx,
        request.params.site_id,
        request.params.id,
        request.body,
        request.headers["if-match"],
      );
      reply.header("etag", etagOf(c));
      return c;
    },
  );
  r.delete(
    `${base}/:id`,
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "deleteSlurmBootstrapConfig",
        summary: "Delete a SLURM bootstrap config; honours If-Match",
        params: SiteConfigParams,
        headers: IfMatchHeaders,
        response: { 204: z.undefined().describe("Deleted"), ...errorResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await service.remove(request.ctx, request.params.site_id, request.params.id, request.headers["if-match"]);
      return reply.code(204).send();
    },
  );
}
