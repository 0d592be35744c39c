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

/** The token request's form (RFC 6749 4.4.2), as `formFields` and the identity service read it. */
export const TokenRequestFormSchema = z
  .object({
    grant_type: z.literal("client_credentials"),
    scope: z
      .string()
      .optional()
      .describe("Space-separated scopes to narrow the token to; the client's own scopes when left out"),
    client_id: z.string().optional().describe("client_secret_post only (with Basic, the id is in the header)"),
    client_secret: z.string().optional().describe("client_secret_post only: never together with Basic credentials"),
  })
  .meta({ id: "TokenRequest" });

/** What the token endpoint issues (RFC 6749 5.1): a JWT access token. */
export const TokenResponseSchema = z
  .strictObject({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int().positive().describe("Seconds"),
    scope: z.string().describe("Space-separated scopes the token carries"),
  })
  .meta({ id: "TokenResponse" });

/** A refused token request (RFC 6749 5.2), which OAuth clients parse rather than problem+json. */
export const OAuthErrorSchema = z
  .strictObject({
    error: z.enum([
      "invalid_request",
      "invalid_client",
      "invalid_grant",
      "invalid_scope",
      "unsupported_grant_type",
      "temporarily_unavailable",
    ]),
    error_description: z.string(),
  })
  .meta({ id: "OAuthError" });

/** The public keys that verify the hub's tokens (RFC 7517), current and recently retired. */
export const JwksSchema = z
  .strictObject({
    keys: z.array(
      z.looseObject({
        kty: z.string(),
        kid: z.string(),
        alg: z.string(),
        use: z.literal("sig"),
        crv: z.string().optional(),
        x: z.string().optional(),
      }),
    ),
  })
  .meta({ id: "JsonWebKeySet" });

/** Authorization server metadata (RFC 8414), also served as the OpenID discovery document. */
export const AuthorizationServerMetadataSchema = z
  .strictObject({
    issuer: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    subject_types_supported: z.array(z.string()),
    id_token_signing_alg_values_supported: z.array(z.string()),
    token_endpoint_auth_signing_alg_values_supported: z.array(z.string()),
  })
  .meta({ id: "AuthorizationServerMetadata" });

/**
 * These routes answer what their handlers build, byte for byte: the schemas above document them
 * (a test holds real answers to them), they neither validate nor reshape a request or an answer.
 * The token request in particular is refused the OAuth way (`{"error": …}`), not as a 400 problem.
 */
const asBuilt = {
  validatorCompiler: () => (data: unknown) => ({ value: data }),
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
};
const oauthError = (description: string) => ({
  description,
  content: { "application/json": { schema: OAuthErrorSchema } },
});

export function registerOAuth(app: FastifyInstance, { service }: { service: IdentityService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["oauth"];
  const discovery = (operationId: string, summary: string) => ({
    config: { scope: "public" as const },
    ...asBuilt,
    schema: { tags, operationId, summary, response: { 200: AuthorizationServerMetadataSchema, ...errorResponses() } },
  });
  r.get(
    "/.well-known/openid-configuration",
    discovery("getOpenIdConfiguration", "OpenID Connect discovery: the token endpoint, JWKS, grants and scopes"),
    async () => service.metadata(),
  );
  r.get(
    "/.well-known/oauth-authorization-server",
    discovery("getAuthorizationServerMetadata", "OAuth2 authorization server metadata (RFC 8414)"),
    async () => service.metadata(),
  );
  r.get(
    "/oauth/jwks",
    {
      config: { scope: "public" },
      ...asBuilt,
      schema: {
        tags,
        operationId: "getJwks",
        summary: "The public keys that verify the hub's access tokens (cacheable for 5 minutes)",
        response: { 200: JwksSchema, ...errorResponses() },
      },
    },
    async (_req, reply) => {
      reply.header("cache-control", "public, max-age=300");
      // jose types every JWK member optional; the test holds the real set to the schema.
      return service.jwks() as z.infer<typeof JwksSchema>;
    },
  );

  app.register(async (scope) => {
    // Form bodies only here: the rest of the API stays JSON-only.
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 8192 },
      (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    scope.withTypeProvider<ZodTypeProvider>().post(
      "/oauth/token",
      {
        config: { scope: "public" },
        ...asBuilt,
        schema: {
          tags,
          operationId: "issueToken",
          summary: "Issue an access token for a client's credentials (client_credentials grant)",
          description:
            "The client authenticates with HTTP Basic (client_secret_basic: id and secret form-urlencoded, " +
            "then base64) or with client_id and client_secret in the form (client_secret_post), never both. " +
            "Answers carry Cache-Control: no-store. Repeated refusals for a client from one address are " +
            "answered 429 with Retry-After.",
          consumes: ["application/x-www-form-urlencoded"],
          security: [{ clientBasic: [] }, {}],
          body: TokenRequestFormSchema,
          response: {
            200: TokenResponseSchema,
            400: oauthError("invalid_request, invalid_scope or unsupported_grant_type"),
            401: oauthError("invalid_client: unknown client, wrong secret or revoked client"),
            429: oauthError("temporarily_unavailable: too many refused requests; see Retry-After"),
            ...errorResponses(),
          },
        },
      },
      async (request, reply) => {
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
      },
    );
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
        operationId: "getWhoAmI",
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
        operationId: "rotateSigningKey",
        summary: "Rotate the token signing key; tokens signed with the old key stay valid until they expire",
        response: { 200: z.object({ kid: z.string() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.rotateSigningKey(request.ctx),
  );
}
