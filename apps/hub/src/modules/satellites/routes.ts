import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  HEARTBEAT_MAX_BYTES,
  HeartbeatSchema,
  SatelliteAgentParams,
  SatelliteCreateSchema,
  SatelliteCreatedSchema,
  SatelliteListQuerySchema,
  SatelliteListSchema,
  SatelliteNameParams,
  SatelliteSchema,
  RotatedSecretSchema,
} from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { SatelliteService } from "./service.ts";

export function registerSatellites(app: FastifyInstance, { service }: { service: SatelliteService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["satellites"];
  r.get(
    "/api/v1/satellites",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listSatellites",
        summary: "List expected satellites",
        querystring: SatelliteListQuerySchema,
        response: { 200: SatelliteListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.list(request.query),
  );
  r.post(
    "/api/v1/satellites",
    {
      config: { scope: "fleet.admin", idempotent: "sealed" },
      schema: {
        tags,
        operationId: "createSatellite",
        summary: "Expect a satellite: creates one OAuth2 client per agent and shows each secret once",
        body: SatelliteCreateSchema,
        response: { 201: SatelliteCreatedSchema, ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const created = await service.create(request.ctx, request.body);
      reply.code(201).header("location", `/api/v1/satellites/${created.name}`).header("cache-control", "no-store");
      return created;
    },
  );
  r.get(
    "/api/v1/satellites/:name",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getSatellite",
        summary: "A satellite, its agents' clients (never secrets), last token and heartbeat",
        params: SatelliteNameParams,
        response: { 200: SatelliteSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.get(request.params.name),
  );
  r.delete(
    "/api/v1/satellites/:name",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "deleteSatellite",
        summary: "Stop expecting a satellite: its clients and their tokens stop working",
        params: SatelliteNameParams,
        response: { 204: z.undefined().describe("Removed"), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await service.remove(request.ctx, request.params.name);
      return reply.code(204).send();
    },
  );
  r.post(
    "/api/v1/satellites/:name/agents/:agent/rotate-secret",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "rotateAgentSecret",
        summary: "Issue a new secret; the old one keeps working for the rotation overlap",
        params: SatelliteAgentParams,
        response: { 200: RotatedSecretSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      return service.rotateSecret(request.ctx, request.params.name, request.params.agent);
    },
  );
  r.post(
    "/api/v1/satellites/:name/agents/:agent/revoke",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "revokeAgent",
        summary: "Revoke an agent's client: its tokens fail from now on",
        params: SatelliteAgentParams,
        response: { 200: SatelliteSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.revoke(request.ctx, request.params.name, request.params.agent),
  );
  r.post(
    "/api/v1/satellites/:name/agents/:agent/heartbeat",
    {
      config: { scope: "agent" },
      bodyLimit: HEARTBEAT_MAX_BYTES,
      schema: {
        tags,
        operationId: "sendAgentHeartbeat",
        summary: "An agent reports it is alive, with its reflectors' ages",
        params: SatelliteAgentParams,
        body: HeartbeatSchema,
        response: { 204: z.undefined(), ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      await service.heartbeat(request.ctx, request.params.name, request.params.agent, request.body);
      return reply.code(204).send();
    },
  );
}
