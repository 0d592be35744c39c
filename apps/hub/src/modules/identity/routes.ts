/**
 * The OAuth2 endpoints (token, JWKS, discovery) and signing-key rotation. Errors of the token
 * endpoint follow RFC 6749 5.2 (`{"error": …}`), which OAuth clients parse, rather than
 * problem+json.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { WhoAmISchema, expandScopes } from "@fm/domain";
import { errorResponses } from "../../lib/openapi.ts";
import { OAuthError, formFields, type IdentityService } from "./service.ts";

function sendOAuthError(reply: FastifyReply, err: OAuthError) {
  reply.header("cache-control", "no-store").header("pragma", "no-cache").headers(err.headers);
  if (err.error === "invalid_client") reply.header("www-authenticate", 'Basic realm="fleet-manager", charset="UTF-8"');
  return reply
    .code(err.status)
    .type("application/json")
    .serializer(JSON.stringify)
    .send({ error: err.error, error_description: err.message });
}

export function registerOAuth(app: FastifyInstance, { service }: { service: IdentityService }): void {
  const hidden = { hide: true };
  const publicRoute = { config: { scope: "public" as const }, schema: hidden };
  app.get("/.well-known/openid-configuration", publicRoute, async () => service.metadata());
  app.get("/.well-known/oauth-authorization-server", publicRoute, async () => service.metadata());
  app.get("/oauth/jwks", publicRoute, async (_req, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return service.jwks();
  });

  app.register(async (scope) => {
    // Form bodies only here: the rest of the API stays JSON-only.
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 8192 },
      (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    scope.post("/oauth/token", publicRoute, async (request, reply) => {
      try {
        const token = await service.issueToken(request.ctx, {
          authorization: request.headers.authorization,
          form: formFields(request.body),
          ip: request.ip,
        });
        reply.header("cache-control", "no-store").header("pragma", "no-cache");
        return token;
      } catch (err) {
        if (err instanceof OAuthError) return sendOAuthError(reply, err);
        throw err;
      }
    });
  });
}

/** GET /api/v1/whoami: what the UI shows and hides follows the scopes the hub grants, not what a token asked for. */
export function registerWhoAmI(app: FastifyInstance): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/api/v1/whoami",
    {
      config: { scope: "fleet.read" },
      schema: {
        tags: ["identity"],
        summary: "Who the caller is and the scopes the hub grants them",
        response: { 200: WhoAmISchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { id, kind, scopes } = request.ctx.principal;
      return { principal: id, kind, scopes: [...expandScopes(scopes)].filter((s) => s.startsWith("fleet.")).sort() };
    },
  );
}

export function registerSigningKeyRotation(app: FastifyInstance, { service }: { service: IdentityService }): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    "/api/v1/admin/signing-keys/rotate",
    {
      config: { scope: "fleet.admin" },
      schema: {
        tags: ["identity"],
        summary: "Rotate the token signing key; tokens signed with the old key stay valid until they expire",
        response: { 200: z.object({ kid: z.string() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.rotateSigningKey(request.ctx),
  );
}
