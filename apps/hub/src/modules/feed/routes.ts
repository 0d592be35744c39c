import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { FeedPageSchema, FeedQuerySchema } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { FeedService } from "./service.ts";

export function registerFeed(app: FastifyInstance, { service }: { service: FeedService }): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/api/v1/feeds/inventory",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["feeds"],
        summary: "Inventory change feed: every change to sites, roles, devices and jobs, in one total order",
        description:
          "Events in increasing `position`, gap-free and resumable: keep `nextAfter` and pass it as `?after=`. With `?wait=N` the call waits up to N seconds for an event when none is ready (long-poll).",
        querystring: FeedQuerySchema,
        response: { 200: FeedPageSchema, ...errorResponses(400, 401, 403) },
      },
      // Events are served as they were written. Their shapes are checked where they are written
      // (the change recorder's types, events.int.test.ts); re-validating on the way out would let
      // one event written under an older schema make every later page fail for every reader.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request) => {
      const abort = new AbortController();
      request.raw.once("close", () => abort.abort());
      return service.read(request.query, abort.signal);
    },
  );
}
