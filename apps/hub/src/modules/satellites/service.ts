import { keysetPage } from "../../lib/paging.ts";
import {
  AGENT_KINDS,
  Conflict,
  Forbidden,
  NotFound,
  Unprocessable,
  agentClientId,
  agentScope,
  decodeCursor,
  type AgentKind,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { recordChange } from "../../lib/changes.ts";
import type { RequestContext } from "../../lib/context.ts";
import { generateSecret, hashSecret } from "../identity/secrets.ts";

const INCLUDE = {
  sites: { select: { siteId: true } },
  clients: { orderBy: { clientId: "asc" } },
} satisfies Prisma.SatelliteInclude;
type Row = Prisma.SatelliteGetPayload<{ include: typeof INCLUDE }>;
type Ctx = Pick<RequestContext, "principal" | "requestId">;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
export function presentSatellite(s: Row) {
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
      lastTokenAt: iso(c.lastTokenAt),
      lastHeartbeatAt: iso(c.lastHeartbeatAt),
      reflectorAgesSeconds: (c.heartbeat as { reflectors?: Record<string, number> } | null)?.reflectors ?? null,
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
  rotationOverlapMs,
}: {
  prisma: PrismaClient;
  rotationOverlapMs: number;
}) {
  async function load(db: Db, name: string): Promise<Row> {
    const s = await db.satellite.findUnique({ where: { name }, include: INCLUDE });
    if (!s) throw notFound(name);
    return s;
  }

  /**
   * Creates a satellite with one client per agent kind; returns the secrets (shown once).
   * The secrets are hashed (scrypt, CPU-bound) before the transaction opens, so it stays short.
   */
  async function create(
    db: Db,
    ctx: Ctx,
    input: { name: string; siteIds: string[]; environment: string },
    secrets: AgentSecret[],
  ) {
    const sites = await db.site.findMany({ where: { id: { in: input.siteIds } }, select: { id: true } });
    const missing = input.siteIds.filter((id) => !sites.some((s) => s.id === id));
    if (missing.length)
      throw new Unprocessable("unknown_site", `No site with id ${missing.join(", ")}`, {
        errors: missing.map(() => ({ path: "body.siteIds", message: "unknown site" })),
      });
    if (await db.satellite.findUnique({ where: { name: input.name }, select: { id: true } }))
      throw new Conflict("satellite_exists", `A satellite named '${input.name}' already exists`);
    const taken = await db.oAuthClient.findMany({
      where: { clientId: { in: secrets.map((s) => s.clientId) } },
      select: { clientId: true },
    });
    if (taken.length)
      throw new Conflict("client_id_taken", `Client ids already in use: ${taken.map((t) => t.clientId).join(", ")}`);
    const sat = await db.satellite.create({
      data: {
        name: input.name,
        environment: input.environment,
        sites: { create: [...new Set(input.siteIds)].map((siteId) => ({ siteId })) },
        clients: {
          create: secrets.map((s) => ({
            clientId: s.clientId,
            kind: "agent",
            agentKind: s.agent,
            scopes: [agentScope(s.agent), "fleet.read"],
            secretHash: s.secretHash,
          })),
        },
      },
      include: INCLUDE,
    });
    const view = presentSatellite(sat);
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
    create: async (ctx: Ctx, input: { name: string; siteIds: string[]; environment: string }) => {
      const secrets = await agentSecrets(input.name);
      return prisma.$transaction((tx) => create(tx, ctx, input, secrets));
    },
    createIn: create,
    agentSecrets,

    async list(q: { limit: number; cursor?: string | undefined }) {
      const afterId = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, count] = await Promise.all([
        prisma.satellite.findMany({
          where: afterId ? { id: { gt: afterId } } : {},
          orderBy: { id: "asc" },
          take: q.limit + 1,
          include: INCLUDE,
        }),
        prisma.satellite.count(),
      ]);
      return keysetPage(rows, count, q.limit, presentSatellite);
    },

    get: async (name: string) => presentSatellite(await load(prisma, name)),

    /** A new secret; the previous one keeps working for the overlap, so agents roll without downtime. */
    async rotateSecret(ctx: Ctx, name: string, agent: AgentKind) {
      const clientSecret = generateSecret();
      const secretHash = await hashSecret(clientSecret);
      return prisma.$transaction(async (tx) => {
        const { c } = await client(tx, name, agent);
        if (c.revokedAt)
          throw new Conflict(
            "client_revoked",
            `${c.clientId} is revoked; remove and recreate the satellite to re-enable it`,
          );
        const until = new Date(Date.now() + rotationOverlapMs);
        await tx.oAuthClient.update({
          where: { clientId: c.clientId },
          data: { secretHash, previousSecretHash: c.secretHash, previousSecretExpiresAt: until, updatedAt: new Date() },
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
    async revoke(ctx: Ctx, name: string, agent: AgentKind) {
      return prisma.$transaction(async (tx) => {
        const { c } = await client(tx, name, agent);
        if (!c.revokedAt) {
          await tx.oAuthClient.update({
            where: { clientId: c.clientId },
            data: {
              revokedAt: new Date(),
              previousSecretHash: null,
              previousSecretExpiresAt: null,
              updatedAt: new Date(),
            },
          });
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
        return presentSatellite(await load(tx, name));
      });
    },

    async remove(ctx: Ctx, name: string) {
      await prisma.$transaction(async (tx) => {
        const sat = await load(tx, name);
        await tx.satellite.delete({ where: { id: sat.id } }); // its clients go with it (cascade)
        await recordChange(tx, ctx, {
          resourceType: "satellite",
          resourceId: sat.id,
          siteId: null,
          verb: "deleted",
          before: presentSatellite(sat),
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
      await prisma.oAuthClient.update({
        where: { clientId: agentClientId(agent, name) },
        data: { lastHeartbeatAt: new Date(), heartbeat: body },
      });
    },
  };
}
export type SatelliteService = ReturnType<typeof createSatelliteService>;
