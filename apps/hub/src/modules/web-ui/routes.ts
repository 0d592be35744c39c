/**
 * GET /ui/…: the operators' web UI (a single-page app). Public like /docs: the page holds no
 * data, it logs the person in through the OIDC issuer and calls /api/v1 with their token.
 *  - /ui/assets/<hashed name>: cached for a year, immutable; the build's precompressed `.br` or
 *    `.gz` variant when Accept-Encoding takes it (`Vary: Accept-Encoding` on every asset);
 *  - /ui/config.json: the issuer and client id the SPA logs in with, never cached;
 *  - any other /ui/ path: index.html (the SPA routes in the browser), revalidated every time;
 *    but a path under assets/ or whose last segment names a file (has an extension) is a 404:
 *    a missing script or icon answered with the page would be cached and run as the wrong type;
 *  - every error answer (a 404 above all) is `no-store`, so a fixed build is seen at once;
 *  - a hub whose UI was not built answers 404 problem+json `web_ui_not_built` saying how to build it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { NotFound } from "@fm/domain";
import type { WebFile, WebUiService } from "./service.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";

export function registerWebUi(app: FastifyInstance, { service }: { service: WebUiService }): void {
  const publicRoute = { config: { scope: "public" as const }, schema: { hide: true } };

  app.register(async (scope) => {
    // Every answer under /ui carries the policy, errors included.
    scope.addHook("onSend", async (_request, reply, payload) => {
      reply.headers(service.headers);
      if (reply.statusCode >= 400) reply.header("cache-control", "no-store");
      return payload;
    });

    const send = (reply: FastifyReply, file: WebFile, cacheControl: string) =>
      reply.header("cache-control", cacheControl).type(file.type).send(file.body);

    const index = async (request: FastifyRequest, reply: FastifyReply) => {
      const rest = (request.params as { "*"?: string })["*"] ?? "";
      if (rest === "assets" || rest.startsWith("assets/") || /\.[A-Za-z0-9]+$/.test(rest.split("/").pop() ?? ""))
        throw new NotFound("web_asset_not_found", "No such file in this build of the web UI");
      const file = await service.index();
      if (!file)
        throw new NotFound(
          "web_ui_not_built",
          "The web UI has not been built on this hub: run `npm run build` (it writes apps/web/dist), or set FM_WEB_DIR",
        );
      return send(reply, file, "no-cache");
    };

    scope.get("/ui/config.json", publicRoute, async (_request, reply) => {
      reply.header("cache-control", "no-store");
      return service.clientConfig();
    });
    scope.get<{ Params: { name: string } }>("/ui/assets/:name", publicRoute, async (request, reply) => {
      const file = await service.asset(request.params.name, request.headers["accept-encoding"]);
      if (!file) throw new NotFound("web_asset_not_found", "No such asset in this build of the web UI");
      reply.header("vary", "accept-encoding");
      if (file.encoding) reply.header("content-encoding", file.encoding);
      return send(reply, file, IMMUTABLE);
    });
    // The router ignores trailing slashes: this is /ui as well.
    scope.get("/ui/", publicRoute, index);
    scope.get("/ui/*", publicRoute, index);
  });
}
