import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  DeviceBriefListSchema,
  DeviceCountQuerySchema,
  DeviceCountsSchema,
  DeviceHistoryListSchema,
  DeviceHistoryQuerySchema,
  DeviceListQuerySchema,
  DeviceListSchema,
  DevicePatchSchema,
  DeviceSchema,
  IdParams,
} from "@fm/domain";
import { IfMatchHeaders, etagOf } from "../../lib/etag.ts";
import { errorResponses } from "../../lib/openapi.ts";
import type { DeviceService } from "./service.ts";

export function registerDevices(app: FastifyInstance, { service }: { service: DeviceService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["devices"];
  r.get(
    "/api/v1/devices",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listDevices",
        summary: "List devices (brief=true: names, sites and states only)",
        querystring: DeviceListQuerySchema,
        response: { 200: DeviceListSchema.or(DeviceBriefListSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      // Typed by construction (toDeviceJson, toDeviceBrief): checking 100 representations against
      // the schema again on every page cost a tenth of the route's time, and copied the page.
      if (request.query.brief) {
        reply.serializer(JSON.stringify);
        return service.listBrief(request.ctx, request.query);
      }
      // The page's JSON text, sent as bytes: Fastify would otherwise measure the text for its
      // content-length and the socket encode it again.
      const json = await service.listJson(request.ctx, request.query);
      // (The route's schema types the payload as the page object; these are its bytes.)
      return reply.type("application/json; charset=utf-8").send(Buffer.from(json) as never);
    },
  );
  r.get(
    "/api/v1/devices/counts",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "countDevices",
        summary: "Exact device counts for the list's filters, grouped by site and/or operational status",
        querystring: DeviceCountQuerySchema,
        response: { 200: DeviceCountsSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.counts(request.ctx, request.query),
  );
  r.get(
    "/api/v1/devices/:id",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getDevice",
        summary: "Get a device",
        params: IdParams,
        response: { 200: DeviceSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const device = await service.get(request.ctx, request.params.id);
      reply.header("etag", etagOf(device));
      return device;
    },
  );
  r.patch(
    "/api/v1/devices/:id",
    {
      config: { scope: "fleet.operate" },
      schema: {
        tags,
        operationId: "updateDevice",
        summary: "Change operator fields (cordon with a reason, uncordon, notes); honours If-Match",
        params: IdParams,
        headers: IfMatchHeaders,
        body: DevicePatchSchema,
        response: { 200: DeviceSchema, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const device = await service.patch(request.ctx, request.params.id, request.body, request.headers["if-match"]);
      reply.header("etag", etagOf(device));
      return device;
    },
  );
  r.get(
    "/api/v1/devices/:id/history",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listDeviceHistory",
        summary:
          "Every change of a device's provision state, operational status, SLURM state, health, cordon and NetBox status",
        params: IdParams,
        querystring: DeviceHistoryQuerySchema,
        response: { 200: DeviceHistoryListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.history(request.ctx, request.params.id, request.query),
  );
}
