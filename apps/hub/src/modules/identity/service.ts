/**
 * The hub's OAuth2 authorization server: the client credentials grant (RFC 6749 4.4) with
 * client_secret_basic and client_secret_post, RFC 9068 JWT access tokens signed with the
 * current key, and the metadata openid-client discovers (RFC 8414 / OIDC Discovery).
 */
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { Counter, type Registry } from "prom-client";
import { FLEET_SCOPES, AGENT_KINDS, agentScope, expandScopes, type AgentKind } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { RequestContext } from "../../lib/context.ts";
import type { IdentityConfig } from "./authenticator.ts";
import { SIGNING_ALG, type KeyStore } from "./keystore.ts";
import { clientInstance } from "./client-cache.ts";
import { TokenRateLimiter } from "./rate-limit.ts";
import type { IdentityRepo } from "./repo.ts";
import { DUMMY_HASH, matchSecret } from "../../lib/secrets.ts";

/** A token endpoint refusal as RFC 6749 5.2 words it (`{"error": …}`), which OAuth clients parse. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

export interface TokenRequest {
  /** The Authorization header, if any (client_secret_basic). */
  authorization: string | undefined;
  /** The form body (grant_type, scope, and for client_secret_post client_id and client_secret). */
  form: Record<string, string>;
  ip: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
}

export interface IdentityServiceDeps {
  prisma: PrismaClient;
  repo: IdentityRepo;
  config: IdentityConfig;
  keystore: KeyStore;
  /** Refused token requests per (address, client id) and minute; per address four times as many. */
  rateLimitPerMinute: number;
  registry?: Registry;
}

/**
 * The token request's parameters: a form (or a JSON object) of strings. Anything else (a JSON
 * array, a number, a list as a credential) is an invalid_request naming the parameter.
 */
export function formFields(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body))
    throw new OAuthError(400, "invalid_request", "the request body must be a form of parameters");
  for (const [name, value] of Object.entries(body))
    if (typeof value !== "string") throw new OAuthError(400, "invalid_request", `parameter '${name}' must be a string`);
  return body as Record<string, string>;
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

export function createIdentityService({
  prisma,
  repo,
  config,
  keystore,
  rateLimitPerMinute,
  registry,
}: IdentityServiceDeps) {
  const limiter = new TokenRateLimiter(rateLimitPerMinute);
  const hashes = new Counter({
    name: "fleet_manager_client_secret_hashes_total",
    help: "scrypt computations the token endpoint made to check client secrets",
    registers: registry ? [registry] : [],
  });

  /** The client authenticated by the request, or an OAuthError, checked in RFC 6749's order. */
  async function authenticateClient(ctx: RequestContext, request: TokenRequest, clientId: string | undefined) {
    const { form } = request;
    const basic = basicCredentials(request.authorization);
    if (basic === null) throw new OAuthError(401, "invalid_client", "malformed Basic credentials");
    if (basic && ((form.client_id !== undefined && form.client_id !== basic.id) || form.client_secret !== undefined))
      throw new OAuthError(400, "invalid_request", "use one client authentication method");
    const secret = basic?.secret ?? form.client_secret;
    if (form.grant_type !== "client_credentials")
      throw new OAuthError(
        400,
        form.grant_type ? "unsupported_grant_type" : "invalid_request",
        "grant_type must be client_credentials",
      );
    if (!clientId || !secret) throw new OAuthError(401, "invalid_client", "client authentication is required");

    const client = await repo.findClient(prisma, clientId);
    const live = client && !client.revokedAt ? client : undefined;
    const inOverlap =
      live?.previousSecretHash && live.previousSecretExpiresAt && live.previousSecretExpiresAt > new Date();
    // One scrypt computation whatever the client: an unknown client costs what a known one does
    // (no enumeration by timing), and a client inside its rotation overlap, whose two hashes
    // share one salt, what one without an overlap does (no telling a recent rotation).
    const stored = live ? [live.secretHash, ...(inOverlap ? [live.previousSecretHash!] : [])] : [DUMMY_HASH];
    const match = await matchSecret(secret, stored);
    hashes.inc(match.hashes);
    if (!live || match.index < 0) {
      ctx.log.warn({ clientId }, "token request with invalid client credentials");
      throw new OAuthError(401, "invalid_client", "unknown client, wrong secret, or revoked client");
    }
    return live;
  }

  /** The client id a request names (Basic or form), if it names one, and its secret's fingerprint: the rate limit's keys. */
  function namedClient(request: TokenRequest): { clientId: string | undefined; fingerprint: string } {
    const basic = basicCredentials(request.authorization);
    return {
      clientId: basic ? basic.id : request.form.client_id,
      fingerprint: limiter.fingerprint(basic ? basic.secret : request.form.client_secret),
    };
  }

  return {
    /** The authorization server metadata (RFC 8414), also served as the OIDC discovery document. */
    metadata() {
      return {
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
      };
    },

    jwks: () => keystore.jwks(),

    /** Issues an access token for a client credentials request; refusals are OAuthErrors. */
    async issueToken(ctx: RequestContext, request: TokenRequest): Promise<TokenResponse> {
      const { clientId, fingerprint } = namedClient(request);
      const wait = limiter.wait(request.ip, clientId, fingerprint);
      if (wait > 0)
        throw new OAuthError(429, "temporarily_unavailable", "too many refused token requests; retry later", {
          "retry-after": String(wait),
        });
      let client: Awaited<ReturnType<typeof authenticateClient>>;
      let requested: string[];
      try {
        client = await authenticateClient(ctx, request, clientId);
        const { scope } = request.form;
        requested = scope ? scope.split(" ").filter(Boolean) : client.scopes;
        // The same hierarchy as people's narrowing: a fleet.admin client may ask for fleet.read.
        const may = expandScopes(client.scopes);
        const denied = requested.filter((s) => !may.has(s));
        if (denied.length)
          throw new OAuthError(400, "invalid_scope", `not allowed for this client: ${denied.join(" ")}`);
      } catch (err) {
        if (err instanceof OAuthError) limiter.refused(request.ip, clientId, fingerprint);
        throw err;
      }
      limiter.succeeded(request.ip, client.clientId, fingerprint);

      const now = new Date();
      const { kid, privateKey } = keystore.current();
      const token = await new SignJWT({
        client_id: client.clientId,
        client_instance: clientInstance(client),
        scope: requested.join(" "),
      })
        .setProtectedHeader({ alg: SIGNING_ALG, typ: "at+jwt", kid })
        .setIssuer(config.issuer)
        .setAudience(config.audience)
        .setSubject(client.clientId)
        .setIssuedAt()
        .setExpirationTime(Math.floor(now.getTime() / 1000) + config.tokenLifetimeS)
        .setJti(randomUUID())
        .sign(privateKey);
      await repo.markTokenIssued(prisma, client.clientId, now);
      ctx.log.info({ clientId: client.clientId, scopes: requested }, "access token issued");
      return {
        access_token: token,
        token_type: "Bearer",
        expires_in: config.tokenLifetimeS,
        scope: requested.join(" "),
      };
    },

    /** Makes a new signing key current; tokens signed with the old one stay valid until they expire. */
    async rotateSigningKey(ctx: RequestContext): Promise<{ kid: string }> {
      const kid = await keystore.rotate();
      ctx.log.info({ kid }, "signing key rotated");
      return { kid };
    },
  };
}
export type IdentityService = ReturnType<typeof createIdentityService>;
