/**
 * Machine OAuth2 clients (connectors, automation). Reads see every client that is not a
 * satellite agent's (the bootstrap admin client too, read-only); writes touch machine clients
 * only. Revocation and scope changes reach every replica's client cache through the
 * oauth_clients trigger (NOTIFY), so they take effect without waiting for its expiry.
 */
import { Conflict, NotFound } from "@fm/domain";
import type { Db } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { translateConstraintErrors } from "../../db/constraint-errors.ts";
import type { PageRequest, RowPage } from "../../db/keyset.ts";

export type ClientRow = Prisma.OAuthClientGetPayload<object>;

const NOT_AGENT = { kind: { not: "agent" } } satisfies Prisma.OAuthClientWhereInput;

const taken = (clientId: string) =>
  new Conflict(
    "client_id_taken",
    `A client with id '${clientId}' already exists (client ids are unique across agents too)`,
  );
/** Removed by a concurrent request between the read and the write. */
const vanished = (clientId: string) => new NotFound("client_not_found", `No client '${clientId}'`);

export const clientRepo = {
  /** A page of non-agent clients in client id order (the keyset runs on the id). */
  async list(db: Db, page: PageRequest): Promise<RowPage<ClientRow & { id: string }>> {
    const after = page.afterId === undefined ? NOT_AGENT : { AND: [NOT_AGENT, { clientId: { gt: page.afterId } }] };
    const [rows, count] = await Promise.all([
      db.oAuthClient.findMany({ where: after, orderBy: { clientId: "asc" }, take: page.limit + 1 }),
      db.oAuthClient.count({ where: NOT_AGENT }),
    ]);
    return { rows: rows.map((r) => ({ ...r, id: r.clientId })), count };
  },

  /** Any client of that id, agents' included (the service says why it will not manage those). */
  async find(db: Db, clientId: string): Promise<ClientRow | null> {
    return db.oAuthClient.findUnique({ where: { clientId } });
  },

  /** Locks the row until the transaction ends, so concurrent rotations and revocations serialise. */
  async lock(db: Db, clientId: string): Promise<void> {
    await db.$executeRaw`SELECT 1 FROM oauth_clients WHERE client_id = ${clientId} FOR UPDATE`;
  },

  async create(
    db: Db,
    input: { clientId: string; scopes: string[]; description: string | null; secretHash: string },
  ): Promise<ClientRow> {
    return db.oAuthClient
      .create({ data: { ...input, kind: "machine" } })
      .catch(translateConstraintErrors({ unique: () => taken(input.clientId) }));
  },

  /** A new current secret; the previous one stays valid until `previousValidUntil`. */
  async rotateSecret(
    db: Db,
    clientId: string,
    secrets: { secretHash: string; previousSecretHash: string; previousValidUntil: Date },
  ): Promise<void> {
    const { count } = await db.oAuthClient.updateMany({
      where: { clientId, kind: "machine" },
      data: {
        secretHash: secrets.secretHash,
        previousSecretHash: secrets.previousSecretHash,
        previousSecretExpiresAt: secrets.previousValidUntil,
        updatedAt: new Date(),
      },
    });
    if (!count) throw vanished(clientId);
  },

  /** Revoked, with no previous secret left to fall back on. */
  async revoke(db: Db, clientId: string): Promise<ClientRow> {
    const { count } = await db.oAuthClient.updateMany({
      where: { clientId, kind: "machine" },
      data: { revokedAt: new Date(), previousSecretHash: null, previousSecretExpiresAt: null, updatedAt: new Date() },
    });
    if (!count) throw vanished(clientId);
    return (await db.oAuthClient.findUnique({ where: { clientId } }))!;
  },

  /** How many live clients other than `clientId` may administer the fleet. */
  async otherLiveAdmins(db: Db, clientId: string): Promise<number> {
    return db.oAuthClient.count({
      where: { clientId: { not: clientId }, revokedAt: null, scopes: { has: "fleet.admin" } },
    });
  },
};
export type ClientRepo = typeof clientRepo;
