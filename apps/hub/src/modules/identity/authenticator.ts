/**
 * Turns a bearer token into a principal. Two issuers are trusted:
 *  - the hub itself (client-credentials tokens for agents and automation): EdDSA-signed
 *    RFC 9068 access tokens (`typ: at+jwt`), checked for issuer, audience, expiry and the
 *    key id, then against the client's current state (revoked or removed: refused at once);
 *  - one external OIDC issuer for people (FM_OIDC_ISSUER), whose claims map to scopes, narrowed
 *    to what the token's `scope` claim asked for (`narrowScopes`).
 * Anything else — no signature, HS256, another issuer or audience, an expired token — is 401.
 */
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from "jose";
import { Unauthorized, agentScope, expandScopes, narrowScopes, scopeWords, type AgentKind } from "@fm/domain";
import type { Authenticator } from "../../plugins/request-context.ts";
import type { Principal } from "../../lib/context.ts";
import type { ClientCache } from "./client-cache.ts";
import type { KeyStore } from "./keystore.ts";
import { SIGNING_ALG } from "./keystore.ts";

export interface ScopeMapping {
  /** Email domain (after @) -> scopes, e.g. {"example.com": ["fleet.read"]} */
  emailDomains?: Record<string, string[]>;
  /** Group name -> scopes, e.g. {"fleet-operators": ["fleet.operate"]} */
  groups?: Record<string, string[]>;
  /** Claim holding the groups (default "groups"). */
  groupsClaim?: string;
}

export interface ExternalIssuer {
  issuer: string;
  audience: string;
  mapping: ScopeMapping;
}

export interface IdentityConfig {
  /** This hub's issuer URL; set at listen time when not configured. */
  issuer: string;
  audience: string;
  tokenLifetimeS: number;
  external?: ExternalIssuer | undefined;
}

const invalid = (detail: string, cause?: unknown) =>
  new Unauthorized("invalid_token", detail, {
    headers: { "www-authenticate": `Bearer error="invalid_token", error_description="${detail.replace(/"/g, "'")}"` },
    cause,
  });

/**
 * A token the JWT library refused, as the caller is told: one stable sentence per kind of
 * refusal a client can act on (an expired token is renewed; anything else is a wrong token).
 * The library's own reason ("alg" header value not allowed, which claim failed, an unknown key
 * id) tells a prober what the hub checks and in what order, so it goes to the log only
 * (`logTokenRejection`), never into the body or `WWW-Authenticate`.
 */
export function tokenRejected(err: unknown): Unauthorized {
  const code = (err as { code?: unknown } | undefined)?.code;
  return invalid(code === "ERR_JWT_EXPIRED" ? "the token has expired" : "the token could not be verified", err);
}

export function scopesFromClaims(claims: JWTPayload, mapping: ScopeMapping): string[] {
  const scopes = new Set<string>();
  const email = typeof claims.email === "string" ? claims.email.toLowerCase() : undefined;
  const emailVerified = claims.email_verified !== false;
  const domain = email && emailVerified ? email.split("@")[1] : undefined;
  for (const s of (domain && mapping.emailDomains?.[domain]) || []) scopes.add(s);
  const groups = claims[mapping.groupsClaim ?? "groups"];
  if (Array.isArray(groups)) for (const g of groups) for (const s of mapping.groups?.[String(g)] ?? []) scopes.add(s);
  return [...scopes];
}

/** A person's access token from the external issuer, checked, as the principal the scope mapping makes of it. */
export type PersonTokenVerifier = (token: string) => Promise<Principal>;

/**
 * The issuer's OpenID Provider Metadata (OpenID Connect Discovery 1.0 §3), fetched once; the
 * document must name the issuer it was asked for (§4.3).
 */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  end_session_endpoint?: string;
}

export function createIssuerDiscovery(issuer: string): () => Promise<IssuerMetadata> {
  let found: Promise<IssuerMetadata> | undefined;
  return () =>
    (found ??= (async () => {
      const res = await fetch(
        new URL(".well-known/openid-configuration", issuer.endsWith("/") ? issuer : `${issuer}/`),
        { signal: AbortSignal.timeout(5000) },
      );
      if (!res.ok) throw new Error(`OIDC discovery of ${issuer} failed: ${res.status}`);
      const meta = (await res.json()) as IssuerMetadata;
      if (meta.issuer?.replace(/\/+$/, "") !== issuer.replace(/\/+$/, ""))
        throw new Error(`OIDC discovery of ${issuer} named another issuer (${String(meta.issuer)})`);
      return meta;
    })().catch((err: unknown) => {
      found = undefined; // asked again next time: the issuer may be back
      throw err;
    }));
}

export function createPersonTokenVerifier(
  external: ExternalIssuer,
  discover: () => Promise<IssuerMetadata> = createIssuerDiscovery(external.issuer),
): PersonTokenVerifier {
  let externalJwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  async function externalKeys() {
    externalJwks ??= createRemoteJWKSet(new URL((await discover()).jwks_uri), {
      cooldownDuration: 30_000,
      cacheMaxAge: 600_000,
    });
    return externalJwks;
  }
  return async (token) => {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await externalKeys(), {
        issuer: external.issuer,
        audience: external.audience,
        algorithms: ["RS256", "ES256", "EdDSA", "PS256"],
        clockTolerance: 30,
      }));
    } catch (err) {
      throw tokenRejected(err);
    }
    const who = typeof claims.email === "string" ? claims.email : String(claims.sub);
    // RFC 9068 names the claim `scope`; Entra ID's access tokens carry the same list as `scp`;
    // both count, so an empty `scope` beside a narrowing `scp` cannot widen the token
    // (https://learn.microsoft.com/en-us/entra/identity-platform/access-token-claims-reference).
    const scopes = narrowScopes(scopesFromClaims(claims, external.mapping), [claims.scope, claims.scp]);
    return { id: `person:${who}`, kind: "person", scopes: new Set(scopes) };
  };
}

export function createOAuthAuthenticator(
  config: IdentityConfig,
  keystore: KeyStore,
  clients: ClientCache,
  person: PersonTokenVerifier | undefined = config.external && createPersonTokenVerifier(config.external),
): Authenticator {
  const external = config.external;

  async function local(token: string): Promise<Principal> {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(
        token,
        async (header) => {
          const key = await keystore.verificationKey(header.kid);
          if (!key) throw new Error(`unknown signing key '${header.kid ?? ""}'`);
          return key;
        },
        {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: [SIGNING_ALG],
          typ: "at+jwt",
          requiredClaims: ["exp", "iat", "jti", "sub", "client_id", "client_instance"],
          clockTolerance: 5,
        },
      ));
    } catch (err) {
      throw tokenRejected(err);
    }
    const clientId = String(claims.client_id);
    const state = await clients.get(clientId);
    if (!state || state.instance !== claims.client_instance) throw invalid("the client of this token no longer exists");
    if (state.revokedAt) throw invalid("the client of this token has been revoked");
    // What the client may still do (its scopes may have shrunk since), the lower fleet scopes
    // its higher ones include counted (a fleet.admin client's read-only token).
    const may = expandScopes(state.scopes);
    const scopes = new Set(scopeWords(claims.scope).filter((s) => may.has(s)));
    if (state.kind === "agent" && state.satellite && state.agentKind) {
      const kind: AgentKind = state.agentKind;
      if (!scopes.has(agentScope(kind))) throw invalid("agent token without its agent scope");
      return {
        id: clientId,
        kind: "agent",
        scopes,
        agent: { satellite: state.satellite.name, kind, siteIds: state.satellite.siteIds },
      };
    }
    return { id: clientId, kind: "client", scopes };
  }

  return async (request) => {
    const header = request.headers.authorization;
    if (!header) return undefined;
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
    if (!match) throw invalid("expected 'Authorization: Bearer <token>'");
    const token = match[1]!;
    let iss: string | undefined;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      throw invalid("malformed token");
    }
    try {
      if (iss === config.issuer) return await local(token);
      if (external && person && iss === external.issuer) return await person(token);
    } catch (err) {
      // Why the library refused it, for whoever reads the hub's log; the caller got a stable detail.
      if (err instanceof Unauthorized && err.cause instanceof Error)
        request.log.info(
          { reason: err.cause.message, code: (err.cause as { code?: string }).code },
          "bearer token rejected",
        );
      throw err;
    }
    throw invalid("token from an untrusted issuer");
  };
}
