import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  IdParams,
  JobReportSchema,
  JobCreateSchema,
  JobListQuerySchema,
  JobListSchema,
  JobSchema,
  JobSignalCreateSchema,
} from "@fm/domain";
import { etagOf } from "../../lib/etag.ts";
import { errorResponses } from "../../lib/openapi.ts";
import type { JobService } from "./service.ts";

export function registerJobs(app: FastifyInstance, { service }: { service: JobService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["jobs"];
  r.get(
    "/api/v1/jobs",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "listJobs",
        summary: "List jobs (?status=&kind=&site=&device=)",
        querystring: JobListQuerySchema,
        response: { 200: JobListSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.list(request.query),
  );
  r.post(
    "/api/v1/jobs",
    {
      config: { scope: "fleet.operate", idempotent: true },
      schema: {
        tags,
        operationId: "createJob",
        summary:
          "Create a job on devices of one site; params are validated per kind; a device has at most one active job",
        body: JobCreateSchema,
        response: { 201: JobSchema, ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const job = await service.create(request.ctx, request.body);
      reply.code(201).header("location", `/api/v1/jobs/${job.id}`).header("etag", etagOf(job));
      return job;
    },
  );
  r.get(
    "/api/v1/jobs/:id",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags,
        operationId: "getJob",
        summary: "A job with its steps, progress and error",
        params: IdParams,
        response: { 200: JobSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const job = await service.get(request.params.id);
      reply.header("etag", etagOf(job));
      return job;
    },
  );
  r.post(
    "/api/v1/jobs/:id/cancel",
    {
      config: { scope: "fleet.operate" },
      schema: {
        tags,
        operationId: "cancelJob",
        summary:
          "Cancel a job: PENDING ends CANCELLED at once, a running one becomes CANCELLING until its workflow stops",
        params: IdParams,
        response: { 200: JobSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => service.cancel(request.ctx, request.params.id),
  );
  r.post(
    "/api/v1/jobs/:id/signal",
    {
      config: { scope: "fleet.operate" },
      schema: {
        tags,
        operationId: "signalJob",
        summary:
          "Tell a job waiting for an operator (REPAIR) the outcome: repaired (re-test, then release) or failed; the same signal twice changes nothing",
        params: IdParams,
        body: JobSignalCreateSchema,
        response: { 200: JobSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => service.signal(request.ctx, request.params.id, request.body),
  );
  r.post(
    "/api/v1/jobs/:id/report",
    {
      config: { scope: "agent" },
      schema: {
        tags,
        operationId: "reportJob",
        summary:
          "Workflow agent / Temporal worker only: report a job's status, steps, progress, error and what it observed of its devices",
        params: IdParams,
        body: JobReportSchema,
        response: { 200: JobSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => service.report(request.ctx, request.params.id, request.body),
  );
}
