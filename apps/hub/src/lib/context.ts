import type { FastifyBaseLogger } from "fastify";
import { FLEET_SCOPES, FLEET_SCOPES_SATISFYING, type AgentIdentity, type FleetScope } from "@fm/domain";

export const SCOPES = FLEET_SCOPES;
export type Scope = FleetScope;

export function hasScope(principal: Principal, needed: string): boolean {
  if (needed === "agent") return principal.kind === "agent" && principal.agent !== undefined;
  const satisfiedBy = FLEET_SCOPES_SATISFYING[needed as Scope] ?? [needed];
  return satisfiedBy.some((s) => principal.scopes.has(s));
}

/** Who is calling. The authenticator resolves one per request; routes never parse tokens. */
export interface Principal {
  /** Stable identifier recorded in audit rows and idempotency keys, e.g. a client id. */
  id: string;
  kind: "local" | "client" | "person" | "agent";
  scopes: ReadonlySet<string>;
  /** Set for satellite agents: their satellite, agent kind and the sites they serve. */
  agent?: AgentIdentity;
}

/** Everything a service needs to know about the request it serves. */
export interface RequestContext {
  requestId: string;
  principal: Principal;
  log: FastifyBaseLogger;
}

/** Who a change is recorded under: the caller and its request (audit records, feed events, history). */
export type ChangeContext = Pick<RequestContext, "principal" | "requestId">;

/** Route-level declaration of the scope a route needs (`config: { scope }`). */
export interface RouteAuthConfig {
  /** fleet.* for people and automation; "agent" for routes only satellite agents call. */
  scope?: Scope | "agent" | "public";
  /**
   * A mutating POST that honours the Idempotency-Key header. `"sealed"`: its response carries
   * secrets, so the recorded copy a repeat is answered with is kept encrypted.
   */
  idempotent?: boolean | "sealed";
}

declare module "fastify" {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging
  interface FastifyContextConfig extends RouteAuthConfig {}
}
