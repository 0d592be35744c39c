/**
 * OAuth2 clients as the token endpoint and the authenticator read them, the bootstrap admin
 * client, and the token signing keys. Satellites' agent clients are written by the satellites
 * repo, with their satellite.
 */
import type { Db, PrismaClient } from "../../db/client.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import { constraintViolation } from "../../db/constraint-errors.ts";

export type OAuthClientRow = Prisma.OAuthClientGetPayload<object>;
export type SigningKeyRow = Prisma.SigningKeyGetPayload<object>;
export type NewSigningKey = Prisma.SigningKeyCreateInput;

const CLIENT_STATE_INCLUDE = {
  satellite: { include: { sites: { select: { siteId: true } } } },
} satisfies Prisma.OAuthClientInclude;
export type ClientStateRow = Prisma.OAuthClientGetPayload<{ include: typeof CLIENT_STATE_INCLUDE }>;

/** Advisory-lock key under which the first signing key is created. */
const FIRST_KEY_LOCK = "7380946367040729458";
/** The notification channel of signing-key changes (payload: the new current kid). */
export const SIGNING_KEYS_CHANNEL = "signing_keys";

export const identityRepo = {
  async findClient(db: Db, clientId: string): Promise<OAuthClientRow | null> {
    return db.oAuthClient.findUnique({ where: { clientId } });
  },

  /** A client with its satellite and that satellite's sites: what every request checks. */
  async findClientState(db: Db, clientId: string): Promise<ClientStateRow | null> {
    return db.oAuthClient.findUnique({ where: { clientId }, include: CLIENT_STATE_INCLUDE });
  },

  async markTokenIssued(db: Db, clientId: string, at: Date): Promise<void> {
    await db.oAuthClient.update({ where: { clientId }, data: { lastTokenAt: at } });
  },

  async adminClientExists(db: Db): Promise<boolean> {
    return (await db.oAuthClient.findFirst({ where: { kind: "admin" }, select: { clientId: true } })) !== null;
  },

  /** Creates the admin client; false when one with that id exists already (another replica won). */
  async createAdminClient(db: Db, data: { clientId: string; scopes: string[]; secretHash: string }): Promise<boolean> {
    try {
      await db.oAuthClient.create({ data: { ...data, kind: "admin" } });
      return true;
    } catch (err) {
      if (constraintViolation(err)?.kind === "unique") return false;
      throw err;
    }
  },

  async signingKeys(db: Db): Promise<SigningKeyRow[]> {
    return db.signingKey.findMany({ orderBy: { createdAt: "asc" } });
  },

  /** Creates a current key unless one exists; replicas starting together create one between them. */
  async ensureCurrentSigningKey(prisma: PrismaClient, newKey: () => Promise<NewSigningKey>): Promise<void> {
    await prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_KEY_LOCK}::bigint)`;
      if ((await tx.signingKey.count({ where: { retiredAt: null } })) === 0)
        await tx.signingKey.create({ data: await newKey() });
    });
  },

  /**
   * Retires the current key and makes `key` current, atomically, deleting keys retired before
   * `forgetBefore`; every replica hears of it on commit (NOTIFY signing_keys) and reloads its keys.
   */
  async rotateSigningKey(prisma: PrismaClient, key: NewSigningKey, at: Date, forgetBefore: Date): Promise<void> {
    await prisma.$transaction([
      prisma.signingKey.deleteMany({ where: { retiredAt: { lt: forgetBefore } } }),
      prisma.signingKey.updateMany({ where: { retiredAt: null }, data: { retiredAt: at } }),
      prisma.signingKey.create({ data: key }),
      prisma.$executeRaw`SELECT pg_notify(${SIGNING_KEYS_CHANNEL}, ${key.kid})`,
    ]);
  },
};
export type IdentityRepo = typeof identityRepo;
