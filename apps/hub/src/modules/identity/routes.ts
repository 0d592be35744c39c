/**
 * The hub's OAuth2 authorization server: client credentials grant (RFC 6749 4.4) with
 * client_secret_basic and client_secret_post, RFC 9068 JWT access tokens, JWKS, and the
 * discovery documents openid-client uses (RFC 8414 / OIDC Discovery). Errors here follow
 * RFC 6749 5.2 (`{"error": …}`), which OAuth clients parse, rather than problem+json.
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { SignJWT } from "jose";
import { z } from "zod";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { errorResponses } from "../../lib/openapi.ts";
import { FLEET_SCOPES, AGENT_KINDS, agentScope, type AgentKind } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { IdentityConfig } from "./authenticator.ts";
import type { KeyStore } from "./keystore.ts";
import { SIGNING_ALG } from "./keystore.ts";
import { RateLimiter } from "./rate-limit.ts";
import { DUMMY_HASH, verifySecret } from "./secrets.ts";

export interface OAuthDeps {
  prisma: PrismaClient;
  config: IdentityConfig;
  keystore: KeyStore;
  rateLimitPerMinute: number;
}

function oauthError(reply: FastifyReply, status: number, error: string, description: string) {
  reply.header("cache-control", "no-store").header("pragma", "no-cache");
  if (error === "invalid_client") reply.header("www-authenticate", 'Basic realm="fleet-manager", charset="UTF-8"');
  return reply
    .code(status)
    .type("application/json")
    .serializer(JSON.stringify)
    .send({ error, error_description: description });
}

/** RFC 6749 2.3.1: the Basic credentials are form-urlencoded before base64. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null | undefined {
  if (!header) return undefined;
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) return null;
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, " ")),
      secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, " ")),
    };
  } catch {
    return null;
  }
}

export function registerOAuth(app: FastifyInstance, { prisma, config, keystore, rateLimitPerMinute }: OAuthDeps): void {
  const perClient = new RateLimiter(rateLimitPerMinute);
  const perAddress = new RateLimiter(rateLimitPerMinute * 4);
  const metadata = () => ({
    issuer: config.issuer,
    token_endpoint: `${config.issuer}/oauth/token`,
    jwks_uri: `${config.issuer}/oauth/jwks`,
    grant_types_supported: ["client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    scopes_supported: [...FLEET_SCOPES, ...Object.keys(AGENT_KINDS).map((k) => agentScope(k as AgentKind))],
    response_types_supported: ["token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_signing_alg_values_supported: [SIGNING_ALG],
  });
  const hidden = { hide: true };
  app.get("/.well-known/openid-configuration", { config: { scope: "public" }, schema: hidden }, async () => metadata());
  app.get("/.well-known/oauth-authorization-server", { config: { scope: "public" }, schema: hidden }, async () =>
    metadata(),
  );
  app.get("/oauth/jwks", { config: { scope: "public" }, schema: hidden }, async (_req, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return keystore.jwks();
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
    scope.post("/oauth/token", { config: { scope: "public" }, schema: hidden }, async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string>;
      const basic = basicCredentials(request.headers.authorization);
      if (basic === null) return oauthError(reply, 401, "invalid_client", "malformed Basic credentials");
      if (
        basic &&
        ((form.client_id !== undefined && form.client_id !== basic.id) || form.client_secret !== undefined)
      ) {
        return oauthError(reply, 400, "invalid_request", "use one client authentication method");
      }
      const clientId = basic?.id ?? form.client_id;
      const secret = basic?.secret ?? form.client_secret;
      const wait = Math.max(perAddress.hit(request.ip), clientId ? perClient.hit(clientId) : 0);
      if (wait > 0) {
        reply.header("retry-after", String(wait));
        return oauthError(reply, 429, "temporarily_unavailable", "too many token requests; retry later");
      }
      if (form.grant_type !== "client_credentials")
        return oauthError(
          reply,
          400,
          form.grant_type ? "unsupported_grant_type" : "invalid_request",
          "grant_type must be client_credentials",
        );
      if (!clientId || !secret) return oauthError(reply, 401, "invalid_client", "client authentication is required");

      const client = await prisma.oAuthClient.findUnique({ where: { clientId } });
      const now = new Date();
      let ok = false;
      if (!client || client.revokedAt) {
        await verifySecret(secret, DUMMY_HASH); // same cost as a real check: no client enumeration by timing
      } else {
        ok = await verifySecret(secret, client.secretHash);
        if (!ok && client.previousSecretHash && client.previousSecretExpiresAt && client.previousSecretExpiresAt > now)
          ok = await verifySecret(secret, client.previousSecretHash);
      }
      if (!ok || !client) {
        request.log.warn({ clientId }, "token request with invalid client credentials");
        return oauthError(reply, 401, "invalid_client", "unknown client, wrong secret, or revoked client");
      }
      const requested = form.scope ? form.scope.split(" ").filter(Boolean) : client.scopes;
      const denied = requested.filter((s) => !client.scopes.includes(s));
      if (denied.length)
        return oauthError(reply, 400, "invalid_scope", `not allowed for this client: ${denied.join(" ")}`);

      const { kid, privateKey } = keystore.current();
      const token = await new SignJWT({ client_id: client.clientId, scope: requested.join(" ") })
        .setProtectedHeader({ alg: SIGNING_ALG, typ: "at+jwt", kid })
        .setIssuer(config.issuer)
        .setAudience(config.audience)
        .setSubject(client.clientId)
        .setIssuedAt()
        .setExpirationTime(Math.floor(now.getTime() / 1000) + config.tokenLifetimeS)
        .setJti(randomUUID())
        .sign(privateKey);
      await prisma.oAuthClient.update({ where: { clientId }, data: { lastTokenAt: now } });
      request.log.info({ clientId, scopes: requested }, "access token issued");
      reply.header("cache-control", "no-store").header("pragma", "no-cache");
      return {
        access_token: token,
        token_type: "Bearer",
        expires_in: config.tokenLifetimeS,
        scope: requested.join(" "),
      };
    });
  });
}

export function registerSigningKeyRotation(app: FastifyInstance, { keystore }: { keystore: KeyStore }): void {
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
    async (request) => {
      const kid = await keystore.rotate();
      request.log.info({ kid }, "signing key rotated");
      return { kid };
    },
  );
}
