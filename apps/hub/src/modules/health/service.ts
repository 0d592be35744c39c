import { ServiceUnavailable } from "@fm/domain";
import type { FastifyBaseLogger } from "fastify";
import type { PrismaClient } from "../../db/client.ts";
import type { HealthRepo } from "./repo.ts";

export interface HealthServiceDeps {
  prisma: PrismaClient;
  repo: HealthRepo;
  readinessTimeoutMs: number;
  /** True once shutdown started: the load balancer should stop sending new requests. */
  isShuttingDown(): boolean;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
}

/** Liveness: the process serves. Readiness: it can do useful work (database reachable, not stopping). */
export function createHealthService({ prisma, repo, readinessTimeoutMs, isShuttingDown }: HealthServiceDeps) {
  return {
    async readiness(log: FastifyBaseLogger): Promise<{ status: "ok" }> {
      if (isShuttingDown()) throw new ServiceUnavailable("shutting_down", "The hub is shutting down");
      try {
        await withTimeout(repo.ping(prisma), readinessTimeoutMs);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "readiness check failed: database unreachable");
        throw new ServiceUnavailable("database_unavailable", "The database is unreachable");
      }
      return { status: "ok" };
    },
  };
}
export type HealthService = ReturnType<typeof createHealthService>;
