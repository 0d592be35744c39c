import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ServiceUnavailable } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";

export interface HealthDeps {
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase(): Promise<void>;
  readinessTimeoutMs: number;
  /** True once shutdown started: the load balancer should stop sending new requests. */
  isShuttingDown(): boolean;
}

const Status = z.object({ status: z.literal("ok") });

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
}

/** /healthz: the process serves. /readyz: it can do useful work (database reachable). */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get("/healthz", { schema: { tags: ["operations"], summary: "Liveness", response: { 200: Status } } }, async () => ({
    status: "ok" as const,
  }));
  r.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        summary: "Readiness: 503 while the database is unreachable or the hub is shutting down",
        response: { 200: Status, ...errorResponses(503) },
      },
    },
    async (request) => {
      if (deps.isShuttingDown()) throw new ServiceUnavailable("shutting_down", "The hub is shutting down");
      try {
        await withTimeout(deps.pingDatabase(), deps.readinessTimeoutMs);
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, "readiness check failed: database unreachable");
        throw new ServiceUnavailable("database_unavailable", "The database is unreachable");
      }
      return { status: "ok" as const };
    },
  );
}
