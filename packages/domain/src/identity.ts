import { z } from "zod";
import { Slug, Timestamp, Uuid, PageQuery, listOf } from "./common.ts";

export const FLEET_SCOPES = ["fleet.read", "fleet.operate", "fleet.admin"] as const;
export type FleetScope = (typeof FLEET_SCOPES)[number];

/** Higher scopes include the lower ones: an admin may operate, an operator may read. */
export const FLEET_SCOPES_SATISFYING: Record<FleetScope, readonly FleetScope[]> = {
  "fleet.read": ["fleet.read", "fleet.operate", "fleet.admin"],
  "fleet.operate": ["fleet.operate", "fleet.admin"],
  "fleet.admin": ["fleet.admin"],
};

const isFleetScope = (s: string): s is FleetScope => (FLEET_SCOPES as readonly string[]).includes(s);

/** Every scope `granted` carries, the fleet scopes it includes written out (fleet.admin: all three). */
export function expandScopes(granted: Iterable<string>): Set<string> {
  const all = new Set(granted);
  for (const needed of FLEET_SCOPES) if (FLEET_SCOPES_SATISFYING[needed].some((s) => all.has(s))) all.add(needed);
  return all;
}

/**
 * The scopes a token's claim names: a space-separated string (RFC 9068 2.2.3; any whitespace
 * counts), a list of them, or several claims at once (`[scope, scp]`: a token that carries both
 * asks for the union). An issuer that prefixes its API's scopes (Entra ID's
 * `api://<app>/fleet.read`) names the fleet scope after the last slash.
 */
export function scopeWords(claim: unknown): string[] {
  if (typeof claim === "string")
    return claim
      .split(/\s+/)
      .filter(Boolean)
      .map((w) => {
        const last = w.slice(w.lastIndexOf("/") + 1);
        return isFleetScope(last) ? last : w;
      });
  if (Array.isArray(claim)) return claim.flatMap(scopeWords);
  return [];
}

/**
 * A person's effective scopes. The scope mapping says what a person MAY do; the access token's
 * `scope` claim (space-separated, RFC 9068 2.2.3) says what they asked for at login, e.g. only
 * fleet.read for a look around (`fleetctl api login --scope read-only`). A token that asks for
 * any fleet.* scope gets the part of its request the mapping allows (asking for more than the
 * mapping grants gains nothing); a token that names no fleet.* scope (an issuer that does not
 * pass the scope through) gets the mapping's scopes as they are.
 */
export function narrowScopes(mapped: Iterable<string>, tokenScope: unknown): string[] {
  const requested = scopeWords(tokenScope);
  const granted = [...new Set(mapped)];
  if (!requested.some(isFleetScope)) return granted;
  const allowed = expandScopes(granted);
  return [...new Set(requested.filter((s) => allowed.has(s)))];
}

/**
 * The agents of a satellite. Each has its own OAuth2 client, `<clientPrefix>-<satellite>`;
 * the OpenStack agent keeps the `ironic-agent-` wire identity its deployments already use.
 */
export const AGENT_KINDS = {
  openstack: { clientPrefix: "ironic-agent", sources: ["ironic-overcloud", "ironic-undercloud"] },
  slurm: { clientPrefix: "slurm-agent", sources: ["slurm"] },
  workflow: { clientPrefix: "workflow-agent", sources: [] },
  netbox: { clientPrefix: "netbox-agent", sources: ["netbox"] },
  "health-status": { clientPrefix: "health-status-agent", sources: ["health"] },
  "temporal-worker": { clientPrefix: "temporal-worker", sources: [] },
} as const satisfies Record<string, { clientPrefix: string; sources: readonly string[] }>;
export type AgentKind = keyof typeof AGENT_KINDS;
export const AgentKindSchema = z.enum(Object.keys(AGENT_KINDS) as [AgentKind, ...AgentKind[]]);

/** The scope an agent's token carries, besides fleet.read. */
export const agentScope = (kind: AgentKind): string => `agent:${kind}`;
export const agentClientId = (kind: AgentKind, satellite: string): string =>
  `${AGENT_KINDS[kind].clientPrefix}-${satellite}`;

/** What an authenticated agent is: one satellite, one kind, the sites that satellite serves. */
export interface AgentIdentity {
  satellite: string;
  kind: AgentKind;
  siteIds: readonly string[];
}

/**
 * May this agent write this source's state at this site? Only for the sites its satellite
 * serves, and only its own source (OpenStack: ironic-*, SLURM: slurm, health: health,
 * NetBox: netbox). The reflection endpoint enforces this for every push.
 */
export function agentMayWriteSource(agent: AgentIdentity, siteId: string, source: string): boolean {
  return agent.siteIds.includes(siteId) && (AGENT_KINDS[agent.kind].sources as readonly string[]).includes(source);
}

/** May this agent act on state of this site at all (jobs, heartbeats)? */
export const agentServesSite = (agent: AgentIdentity, siteId: string): boolean => agent.siteIds.includes(siteId);

/**
 * The deployment environments, as the rollout guide names them (clusters `fleet-mgr-{env}-{deployment}`,
 * 1Password vaults `Fleet Manager {deployment} {env}`, Vault paths `fleet-manager/data/{env}/…`).
 */
/** Who the hub says the caller is, and the scopes it grants them (a person's come from the scope mapping). */
export const WhoAmISchema = z
  .object({
    principal: z.string().describe("What audit entries record: a client id, or person:<email>"),
    kind: z.enum(["local", "client", "person", "agent"]),
    scopes: z.array(z.string()).describe("Granted scopes, each implied one included (fleet.admin lists all three)"),
  })
  .meta({ id: "WhoAmI" });
export type WhoAmI = z.infer<typeof WhoAmISchema>;

export const ENVIRONMENTS = ["dev", "stg", "prod"] as const;
export const EnvironmentSchema = z.enum(ENVIRONMENTS);
export type Environment = z.infer<typeof EnvironmentSchema>;

export const SatelliteCreateSchema = z
  .strictObject({
    name: Slug.describe("Deployment slug, e.g. sys1-ice2"),
    siteIds: z.array(Uuid).min(1).max(100),
    environment: EnvironmentSchema,
  })
  .meta({ id: "SatelliteCreate" });

export const AgentClientSchema = z
  .object({
    agent: AgentKindSchema,
    clientId: z.string(),
    scopes: z.array(z.string()),
    revoked: z.boolean(),
    rotationOverlapUntil: Timestamp.nullable().describe("The previous secret keeps working until then"),
    lastTokenAt: Timestamp.nullable(),
    lastHeartbeatAt: Timestamp.nullable(),
    reflectorAgesSeconds: z
      .record(z.string(), z.number())
      .nullable()
      .describe("Per reflector store, seconds since its last success, as of the last heartbeat"),
  })
  .meta({ id: "AgentClient" });

export const SatelliteSchema = z
  .object({
    id: Uuid,
    name: z.string(),
    environment: z.string(),
    siteIds: z.array(Uuid),
    clients: z.array(AgentClientSchema),
    createdAt: Timestamp,
  })
  .meta({ id: "Satellite" });
export type Satellite = z.infer<typeof SatelliteSchema>;
export const SatelliteListSchema = listOf(SatelliteSchema).meta({ id: "SatelliteList" });
export type SatelliteList = z.infer<typeof SatelliteListSchema>;
export const SatelliteListQuerySchema = PageQuery;

export const IssuedSecretSchema = z.object({
  agent: AgentKindSchema,
  clientId: z.string(),
  clientSecret: z.string().describe("Shown once; store it in the satellite's vault"),
});
/** A rotated agent secret, shown once; the previous one works until `previousSecretValidUntil`. */
export const RotatedSecretSchema = z
  .object({
    agent: AgentKindSchema,
    clientId: z.string(),
    clientSecret: z.string(),
    previousSecretValidUntil: z.string(),
  })
  .meta({ id: "RotatedSecret" });

export const SatelliteCreatedSchema = SatelliteSchema.extend({ secrets: z.array(IssuedSecretSchema) }).meta({
  id: "SatelliteCreated",
});

/** What an agent may store with a heartbeat: every satellite listing carries it. */
export const HEARTBEAT_MAX_REFLECTORS = 64;
export const HEARTBEAT_MAX_BYTES = 16 * 1024;

export const HeartbeatSchema = z
  .strictObject({
    reflectors: z
      .record(z.string().min(1).max(100), z.number().min(0).max(1e9))
      .refine((r) => Object.keys(r).length <= HEARTBEAT_MAX_REFLECTORS, {
        message: `at most ${HEARTBEAT_MAX_REFLECTORS} reflector stores`,
      })
      .describe(`Seconds since each reflector store's last success (at most ${HEARTBEAT_MAX_REFLECTORS})`)
      .default({}),
    version: z.string().max(100).optional(),
  })
  .meta({ id: "Heartbeat" });
export const SatelliteAgentParams = z.strictObject({ name: Slug, agent: AgentKindSchema });
export const SatelliteNameParams = z.strictObject({ name: Slug });

/**
 * The header every call of the web UI carries beside its session cookie: the hub refuses a
 * cookie without it (403 csrf_refused). A page of another site cannot add a header to a
 * request to the hub without a CORS preflight, which the hub never grants.
 */
export const WEB_CSRF_HEADER = "x-fm-csrf";
