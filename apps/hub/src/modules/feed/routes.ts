import type { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  FeedPageSchema,
  FeedQuerySchema,
  INVENTORY_SNAPSHOT_CONTENT_TYPE,
  INVENTORY_SNAPSHOT_PATH,
  InventorySnapshotLineSchema,
  InventorySnapshotQuerySchema,
  ServiceUnavailable,
  TooManyRequests,
} from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import type { FeedService } from "./service.ts";
import type { SnapshotService } from "./snapshot.ts";

export function registerFeed(
  app: FastifyInstance,
  { service, snapshots }: { service: FeedService; snapshots: SnapshotService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/api/v1/feeds/inventory",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["feeds"],
        operationId: "readInventoryFeed",
        summary: "Inventory change feed: every change to sites, roles, devices and jobs, in one total order",
        description:
          "Events in increasing `position`, gap-free and resumable: keep `nextAfter` and pass it as `?after=`. With `?wait=N` the call waits up to N seconds for an event when none is ready (long-poll). `head` is the highest position given: `head - nextAfter` is the reader's lag. Events are kept for the hub's retention (FM_FEED_RETENTION_S); a cursor older than that answers 410 `feed_cursor_expired`: read the snapshot and continue from its position.",
        querystring: FeedQuerySchema,
        response: { 200: FeedPageSchema, ...errorResponses(400, 401, 403, 404, 410, 503) },
      },
    },
    async (request, reply) => {
      const abort = new AbortController();
      request.raw.once("close", () => abort.abort());
      // Events are served as they were written, as PostgreSQL wrote the page's text (repo.ts).
      // Their shapes are checked where they are written (the change recorder's types,
      // events.int.test.ts); re-validating on the way out would let one event written under an
      // older schema make every later page fail for every reader. Sent as bytes: Fastify would
      // otherwise measure the text for its content-length and the socket encode it again.
      const json = await service.readJson(request.query, abort.signal);
      // (The route's schema types the payload as the page object; these are its bytes.)
      return reply.type("application/json; charset=utf-8").send(Buffer.from(json) as never);
    },
  );
  r.get(
    INVENTORY_SNAPSHOT_PATH,
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["feeds"],
        operationId: "getInventorySnapshot",
        summary: "Inventory snapshot (NDJSON): every site, device role and device as of one feed position",
        description:
          "Streams `application/x-ndjson`: a `snapshot` line with `position`, then one line per site, device role and device (each as its own GET returns it), then `end` with the number of resource lines. The data is exactly the feed up to `position`: continue with `GET /api/v1/feeds/inventory?after=<position>`. A stream without its `end` line is incomplete. `?site=` (repeatable) limits it to those sites' devices. One snapshot streams per caller at a time (a second is 429 `snapshot_already_streaming`); people share all but one of the hub's snapshot slots, kept for machine clients such as the connectors (503 `snapshots_busy`, with Retry-After); a reader that takes nothing for a minute is cut short.",
        querystring: InventorySnapshotQuerySchema,
        response: {
          200: {
            description: "One JSON document per line",
            content: { [INVENTORY_SNAPSHOT_CONTENT_TYPE]: { schema: InventorySnapshotLineSchema } },
          },
          ...errorResponses(400, 401, 403, 404, 429, 503),
        },
      },
    },
    async (request, reply) => {
      let stream: Readable;
      try {
        stream = await snapshots.open(request.query, request.ctx.principal);
      } catch (err) {
        if (err instanceof ServiceUnavailable || err instanceof TooManyRequests) reply.header("retry-after", "10");
        throw err;
      }
      // The reader went away: stop reading the database for it.
      reply.raw.once("close", () => stream.destroy());
      // The declared 200 schema describes each line; the body is their stream, sent as it is read.
      return reply.type(INVENTORY_SNAPSHOT_CONTENT_TYPE).send(stream as never);
    },
  );
}
