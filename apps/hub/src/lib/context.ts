import type { FastifyBaseLogger } from "fastify";

export const SCOPES = ["fleet.read", "fleet.operate", "fleet.admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** Higher scopes include the lower ones: an admin may operate, an operator may read. */
const IMPLIED: Record<Scope, readonly Scope[]> = {
  "fleet.read": ["fleet.read", "fleet.operate", "fleet.admin"],
  "fleet.operate": ["fleet.operate", "fleet.admin"],
  "fleet.admin": ["fleet.admin"],
};

export function hasScope(principal: Principal, needed: string): boolean {
  const satisfiedBy = IMPLIED[needed as Scope] ?? [needed];
  return satisfiedBy.some((s) => principal.scopes.has(s));
}

/** Who is calling. Authentication (issue #4) resolves one per request; routes never parse tokens. */
export interface Principal {
  /** Stable identifier recorded in audit rows and idempotency keys, e.g. a client id. */
  id: string;
  kind: "local" | "client" | "person" | "agent";
  scopes: ReadonlySet<string>;
}

/** Everything a service needs to know about the request it serves. */
export interface RequestContext {
  requestId: string;
  principal: Principal;
  log: FastifyBaseLogger;
}

/** Route-level declaration of the scope a route needs (`config: { scope }`). */
export interface RouteAuthConfig {
  scope?: Scope | "public";
  /** A mutating POST that honours the Idempotency-Key header. */
  idempotent?: boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging
  interface FastifyContextConfig extends RouteAuthConfig {}
}
