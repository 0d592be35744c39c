import {
  AGENT_KINDS,
  Conflict,
  Forbidden,
  HEARTBEAT_MAX_REFLECTORS,
  NotFound,
  Unprocessable,
  agentClientId,
  type AgentKind,
  type Satellite,
  type SatelliteList,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { ChangeContext, RequestContext } from "../../lib/context.ts";
import { keysetList, type PageQuery } from "../../lib/paging.ts";
import { recordChange } from "../../changes/recorder.ts";
import { generateSecret, hashSecret } from "../../lib/secrets.ts";
import { siteRows } from "../sites/public.ts";
import type { SatelliteRepo, SatelliteRow } from "./repo.ts";
import { isoOrNull } from "../../lib/timestamps.ts";

/** A stored heartbeat's reflector ages, at most HEARTBEAT_MAX_REFLECTORS of them (older rows were not bounded). */
function reflectorAges(heartbeat: unknown): Record<string, number> | null {
  const reflectors = (heartbeat as { reflectors?: Record<string, number> } | null)?.reflectors;
  if (!reflectors) return null;
  return Object.fromEntries(Object.entries(reflectors).slice(0, HEARTBEAT_MAX_REFLECTORS));
}

export function toSatellite(s: SatelliteRow): Satellite {
  return {
    id: s.id,
    name: s.name,
    environment: s.environment,
    siteIds: s.sites.map((x) => x.siteId),
    createdAt: s.createdAt.toISOString(),
    clients: s.clients.map((c) => ({
      agent: c.agentKind as AgentKind,
      clientId: c.clientId,
      scopes: c.scopes,
      revoked: c.revokedAt !== null,
      rotationOverlapUntil:
        c.previousSecretExpiresAt && c.previousSecretExpiresAt > new Date()
          ? c.previousSecretExpiresAt.toISOString()
          : null,
      lastTokenAt: isoOrNull(c.lastTokenAt),
      lastHeartbeatAt: isoOrNull(c.lastHeartbeatAt),
      reflectorAgesSeconds: reflectorAges(c.heartbeat),
    })),
  };
}

const notFound = (name: string) => new NotFound("satellite_not_found", `No satellite '${name}'`);

/** Expected satellites and their agents' OAuth2 clients (rollout guide: "Enable the Hub to Accept the Satellite"). */
interface AgentSecret {
  agent: AgentKind;
  clientId: string;
  clientSecret: string;
  secretHash: string;
}

/** One new secret per agent kind, with its hash. */
async function agentSecrets(satellite: string): Promise<AgentSecret[]> {
  return Promise.all(
    (Object.keys(AGENT_KINDS) as AgentKind[]).map(async (agent) => {
      const clientSecret = generateSecret();
      return {
        agent,
        clientId: agentClientId(agent, satellite),
        clientSecret,
        secretHash: await hashSecret(clientSecret),
      };
    }),
  );
}

export function createSatelliteService({
  prisma,
  repo,
  rotationOverlapMs,
  clientsChanged,
}: {
  prisma: PrismaClient;
  repo: SatelliteRepo;
  rotationOverlapMs: number;
  /**
   * Called once a revocation or removal has committed: this replica's cache of client state
   * drops it at once, before the response, rather than when its NOTIFY arrives (other
   * replicas still learn it from the NOTIFY).
   */
  clientsChanged?: () => void;
}) {
  async function committed<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    const result = await prisma.$transaction(work);
    clientsChanged?.();
    return result;
  }

  async function load(db: Db, name: string): Promise<SatelliteRow> {
    const s = await repo.findByName(db, name);
    if (!s) throw notFound(name);
    return s;
  }

  /**
   * Creates a satellite with one client per agent kind; returns the secrets (shown once).
   * The secrets are hashed (scrypt, CPU-bound) before the transaction opens, so it stays short.
   */
  async function create(
    db: Db,
    ctx: ChangeContext,
    input: { name: string; siteIds: string[]; environment: string },
    secrets: AgentSecret[],
  ) {
    const known = await siteRows.existingIds(db, input.siteIds);
    const missing = input.siteIds.filter((id) => !known.includes(id));
    if (missing.length)
      throw new Unprocessable("unknown_site", `No site with id ${missing.join(", ")}`, {
        errors: missing.map(() => ({ path: "body.siteIds", message: "unknown site" })),
      });
    if (await repo.exists(db, input.name))
      throw new Conflict("satellite_exists", `A satellite named '${input.name}' already exists`);
    const taken = await repo.takenClientIds(
      db,
      secrets.map((s) => s.clientId),
    );
    if (taken.length) throw new Conflict("client_id_taken", `Client ids already in use: ${taken.join(", ")}`);
    const sat = await repo.create(db, { ...input, clients: secrets });
    const view = toSatellite(sat);
    await recordChange(db, ctx, {
      resourceType: "satellite",
      resourceId: sat.id,
      siteId: null,
      verb: "created",
      before: null,
      after: view,
      feed: false,
    });
    return {
      ...view,
      secrets: secrets.map(({ agent, clientId, clientSecret }) => ({ agent, clientId, clientSecret })),
    };
  }

  async function client(db: Db, name: string, agent: AgentKind) {
    const sat = await load(db, name);
    const c = sat.clients.find((x) => x.agentKind === agent);
    if (!c) throw new NotFound("agent_client_not_found", `Satellite '${name}' has no ${agent} client`);
    return { sat, c };
  }

  return {
    create: async (ctx: ChangeContext, input: { name: string; siteIds: string[]; environment: string }) => {
      const secrets = await agentSecrets(input.name);
      return prisma.$transaction((tx) => create(tx, ctx, input, secrets));
    },
    createIn: create,
    agentSecrets,

    async list(query: PageQuery): Promise<SatelliteList> {
      return keysetList(query, (page) => repo.list(prisma, page), toSatellite);
    },

    get: async (name: string) => toSatellite(await load(prisma, name)),

    /** A new secret; the previous one keeps working for the overlap, so agents roll without downtime. */
    async rotateSecret(ctx: ChangeContext, name: string, agent: AgentKind) {
      const clientSecret = generateSecret();
      return prisma.$transaction(async (tx) => {
        const { c } = await client(tx, name, agent);
        // The previous secret's salt: one hash checks a candidate against both during the overlap.
        const secretHash = await hashSecret(clientSecret, c.secretHash);
        if (c.revokedAt)
          throw new Conflict(
            "client_revoked",
            `${c.clientId} is revoked; remove and recreate the satellite to re-enable it`,
          );
        const until = new Date(Date.now() + rotationOverlapMs);
        await repo.rotateClientSecret(tx, c.clientId, {
          secretHash,
          previousSecretHash: c.secretHash,
          previousValidUntil: until,
        });
        await recordChange(tx, ctx, {
          resourceType: "oauth_client",
          resourceId: c.clientId,
          siteId: null,
          verb: "updated",
          before: { secretRotatedAt: null },
          after: { secretRotatedAt: new Date().toISOString(), previousSecretValidUntil: until.toISOString() },
          action: "oauth_client.rotate_secret",
          feed: false,
        });
        return { agent, clientId: c.clientId, clientSecret, previousSecretValidUntil: until.toISOString() };
      });
    },

    /** Revoked: no new tokens, and every token already issued fails from now on. */
    async revoke(ctx: ChangeContext, name: string, agent: AgentKind) {
      return committed(async (tx) => {
        const { c } = await client(tx, name, agent);
        if (!c.revokedAt) {
          await repo.revokeClient(tx, c.clientId);
          await recordChange(tx, ctx, {
            resourceType: "oauth_client",
            resourceId: c.clientId,
            siteId: null,
            verb: "updated",
            before: { revoked: false },
            after: { revoked: true },
            action: "oauth_client.revoke",
            feed: false,
          });
        }
        return toSatellite(await load(tx, name));
      });
    },

    async remove(ctx: ChangeContext, name: string) {
      await committed(async (tx) => {
        const sat = await load(tx, name);
        await repo.delete(tx, sat.id);
        await recordChange(tx, ctx, {
          resourceType: "satellite",
          resourceId: sat.id,
          siteId: null,
          verb: "deleted",
          before: toSatellite(sat),
          after: null,
          feed: false,
        });
      });
    },

    async heartbeat(
      ctx: RequestContext,
      name: string,
      agent: AgentKind,
      body: { reflectors: Record<string, number>; version?: string | undefined },
    ) {
      const me = ctx.principal.agent;
      if (!me || me.satellite !== name || me.kind !== agent)
        throw new Forbidden("not_this_agent", "An agent may only report its own heartbeat");
      await repo.recordHeartbeat(prisma, agentClientId(agent, name), body);
    },
  };
}
export type SatelliteService = ReturnType<typeof createSatelliteService>;
