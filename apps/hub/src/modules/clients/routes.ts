import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  ClientIdParams,
  MachineClientCreateSchema,
  MachineClientCreatedSchema,
  MachineClientListQuerySchema,
  MachineClientListSchema,
  MachineClientRotatedSchema,
  MachineClientSchema,
} from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { ClientService } from "./service.ts";

/** Machine OAuth2 clients: only fleet admins see or change them, since a client is a credential. */
export function registerClients(app: FastifyInstance, { service }: { service: ClientService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["clients"];
  r.get(
    "/api/v1/clients",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "listClients",
        summary: "List OAuth2 clients other than satellites' agents (never their secrets)",
        querystring: MachineClientListQuerySchema,
        response: { 200: MachineClientListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.list(request.query),
  );
  r.post(
    "/api/v1/clients",
    {
      config: { scope: "fleet.admin", idempotent: "sealed" },
      schema: {
        tags,
        operationId: "createClient",
        summary: "Create a machine client (connector, automation) with fleet scopes; its secret is shown once",
        body: MachineClientCreateSchema,
        response: { 201: MachineClientCreatedSchema, ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const created = await service.create(request.ctx, request.body);
      reply.code(201).header("location", `/api/v1/clients/${created.clientId}`).header("cache-control", "no-store");
      return created;
    },
  );
  r.get(
    "/api/v1/clients/:clientId",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "getClient",
        summary: "An OAuth2 client: scopes, description, revocation, last token (never its secret)",
        params: ClientIdParams,
        response: { 200: MachineClientSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.get(request.params.clientId),
  );
  r.post(
    "/api/v1/clients/:clientId/rotate-secret",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "rotateClientSecret",
        summary: "Issue a new secret; the old one keeps working for the rotation overlap",
        params: ClientIdParams,
        response: { 200: MachineClientRotatedSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      return service.rotateSecret(request.ctx, request.params.clientId);
    },
  );
  r.post(
    "/api/v1/clients/:clientId/revoke",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags,
        operationId: "revokeClient",
        summary: "Revoke a machine client: its tokens fail from now on",
        params: ClientIdParams,
        response: { 200: MachineClientSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => service.revoke(request.ctx, request.params.clientId),
  );
}
