/** Expected satellites, the sites each serves, and its agents' OAuth2 clients (created and removed with it). */
import { Conflict, NotFound, agentScope, type AgentKind } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { translateConstraintErrors } from "../../db/constraint-errors.ts";
import { keysetRows, type PageRequest, type RowPage } from "../../db/keyset.ts";

const INCLUDE = {
  sites: { select: { siteId: true } },
  clients: { orderBy: { clientId: "asc" } },
} satisfies Prisma.SatelliteInclude;
export type SatelliteRow = Prisma.SatelliteGetPayload<{ include: typeof INCLUDE }>;

export interface NewSatellite {
  name: string;
  environment: string;
  siteIds: string[];
  clients: { agent: AgentKind; clientId: string; secretHash: string }[];
}

/** The satellite (or its client) was removed by a concurrent request. */
const vanished = () => new NotFound("satellite_not_found", "The satellite was removed meanwhile");

export const satelliteRepo = {
  async list(db: Db, page: PageRequest): Promise<RowPage<SatelliteRow>> {
    return keysetRows(
      {
        findMany: (args) => db.satellite.findMany({ ...args, include: INCLUDE }),
        count: (args) => db.satellite.count(args),
      },
      {},
      page,
    );
  },

  async findByName(db: Db, name: string): Promise<SatelliteRow | null> {
    return db.satellite.findUnique({ where: { name }, include: INCLUDE });
  },

  async exists(db: Db, name: string): Promise<boolean> {
    return (await db.satellite.findUnique({ where: { name }, select: { id: true } })) !== null;
  },

  /** Those of `clientIds` some client already has. */
  async takenClientIds(db: Db, clientIds: string[]): Promise<string[]> {
    const taken = await db.oAuthClient.findMany({ where: { clientId: { in: clientIds } }, select: { clientId: true } });
    return taken.map((t) => t.clientId);
  },

  /** The satellite with one agent client per entry of `clients` (scopes: its agent scope and fleet.read). */
  async create(db: Db, input: NewSatellite): Promise<SatelliteRow> {
    return db.satellite
      .create({
        data: {
          name: input.name,
          environment: input.environment,
          sites: { create: [...new Set(input.siteIds)].map((siteId) => ({ siteId })) },
          clients: {
            create: input.clients.map((c) => ({
              clientId: c.clientId,
              kind: "agent",
              agentKind: c.agent,
              scopes: [agentScope(c.agent), "fleet.read"],
              secretHash: c.secretHash,
            })),
          },
        },
        include: INCLUDE,
      })
      .catch(
        translateConstraintErrors({
          unique: (v) =>
            v.constraint.includes("satellites")
              ? new Conflict("satellite_exists", `A satellite named '${input.name}' already exists`)
              : new Conflict("client_id_taken", "A client id of this satellite's agents is already in use"),
        }),
      );
  },

  /** Replaces the satellite's sites (a trigger clears every replica's client cache). */
  async replaceSites(db: Db, satelliteId: string, siteIds: string[]): Promise<void> {
    await db.satelliteSite.deleteMany({ where: { satelliteId } });
    await db.satelliteSite.createMany({ data: siteIds.map((siteId) => ({ satelliteId, siteId })) });
  },

  async delete(db: Db, id: string): Promise<void> {
    // Its clients go with it (cascade). Removed meanwhile by another request: not found.
    const { count } = await db.satellite.deleteMany({ where: { id } });
    if (!count) throw vanished();
  },

  /** A new current secret; the previous one stays valid until `previousValidUntil`. */
  async rotateClientSecret(
    db: Db,
    clientId: string,
    secrets: { secretHash: string; previousSecretHash: string; previousValidUntil: Date },
  ): Promise<void> {
    const { count } = await db.oAuthClient.updateMany({
      where: { clientId },
      data: {
        secretHash: secrets.secretHash,
        previousSecretHash: secrets.previousSecretHash,
        previousSecretExpiresAt: secrets.previousValidUntil,
        updatedAt: new Date(),
      },
    });
    if (!count) throw vanished();
  },

  /** Revoked, with no previous secret left to fall back on. */
  async revokeClient(db: Db, clientId: string): Promise<void> {
    const { count } = await db.oAuthClient.updateMany({
      where: { clientId },
      data: { revokedAt: new Date(), previousSecretHash: null, previousSecretExpiresAt: null, updatedAt: new Date() },
    });
    if (!count) throw vanished();
  },

  /** The agent's satellite may have been removed since its token was checked: not found, then. */
  async recordHeartbeat(db: Db, clientId: string, heartbeat: Prisma.InputJsonObject): Promise<void> {
    const { count } = await db.oAuthClient.updateMany({
      where: { clientId },
      data: { lastHeartbeatAt: new Date(), heartbeat },
    });
    if (!count) throw vanished();
  },
};
export type SatelliteRepo = typeof satelliteRepo;
