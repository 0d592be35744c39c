import {
  Conflict,
  NotFound,
  decodeSlugCursor,
  encodeCursor,
  type MachineClient,
  type MachineClientCreate,
  type MachineClientList,
  type OAuthClientKind,
} from "@fm/domain";
import type { Db, PrismaClient } from "../../db/client.ts";
import type { ChangeContext } from "../../lib/context.ts";
import { keysetList, type CursorCodec, type PageQuery } from "../../lib/paging.ts";
import { isoOrNull } from "../../lib/timestamps.ts";
import { recordChange } from "../../changes/recorder.ts";
import { generateSecret, hashSecret } from "../../lib/secrets.ts";
import type { ClientRepo, ClientRow } from "./repo.ts";

/** Never the hashes: what an operator may see of a client. */
export function toMachineClient(c: ClientRow): MachineClient {
  return {
    clientId: c.clientId,
    kind: c.kind as OAuthClientKind,
    scopes: c.scopes,
    description: c.description,
    createdAt: c.createdAt.toISOString(),
    revokedAt: isoOrNull(c.revokedAt),
    rotationOverlapUntil:
      c.previousSecretExpiresAt && c.previousSecretExpiresAt > new Date()
        ? c.previousSecretExpiresAt.toISOString()
        : null,
    lastTokenAt: isoOrNull(c.lastTokenAt),
  };
}

const clientIdCursor: CursorCodec<string> = { decode: decodeSlugCursor, encode: encodeCursor };
const notFound = (clientId: string) => new NotFound("client_not_found", `No client '${clientId}'`);

/** Agent and bootstrap clients are read here but changed elsewhere: say where. */
function refuseUnmanaged(c: ClientRow): void {
  if (c.kind === "agent")
    throw new Conflict(
      "agent_client",
      `'${c.clientId}' is a satellite agent's client: rotate or revoke it with /api/v1/satellites/{name}/agents/{agent}/…`,
    );
  if (c.kind !== "machine")
    throw new Conflict(
      "bootstrap_client",
      `'${c.clientId}' is the hub's bootstrap admin client: it is managed by the hub's configuration (FM_BOOTSTRAP_ADMIN_SECRET), not this API`,
    );
}

export function createClientService({
  prisma,
  repo,
  rotationOverlapMs,
  clientsChanged,
}: {
  prisma: PrismaClient;
  repo: ClientRepo;
  rotationOverlapMs: number;
  /** Called once a revocation has committed: this replica's client cache drops it before the response. */
  clientsChanged?: (clientId: string) => void;
}) {
  async function load(db: Db, clientId: string): Promise<ClientRow> {
    const c = await repo.find(db, clientId);
    if (!c) throw notFound(clientId);
    return c;
  }

  /** A machine client, locked for the rest of the transaction. */
  async function managed(tx: Db, clientId: string): Promise<ClientRow> {
    await repo.lock(tx, clientId);
    const c = await load(tx, clientId);
    refuseUnmanaged(c);
    return c;
  }

  return {
    /** A new machine client; its secret is returned once and only its scrypt hash is kept. */
    async create(ctx: ChangeContext, input: MachineClientCreate) {
      const clientSecret = generateSecret();
      // scrypt is CPU work: done before the transaction opens, so it stays short.
      const secretHash = await hashSecret(clientSecret);
      const created = await prisma.$transaction(async (tx) => {
        if (await repo.find(tx, input.clientId))
          throw new Conflict(
            "client_id_taken",
            `A client with id '${input.clientId}' already exists (client ids are unique across agents too)`,
          );
        const row = await repo.create(tx, {
          clientId: input.clientId,
          scopes: input.scopes,
          description: input.description ?? null,
          secretHash,
        });
        const view = toMachineClient(row);
        await recordChange(tx, ctx, {
          resourceType: "oauth_client",
          resourceId: row.clientId,
          siteId: null,
          verb: "created",
          before: null,
          after: view,
          feed: false,
        });
        return view;
      });
      return { ...created, clientSecret };
    },

    async list(query: PageQuery): Promise<MachineClientList> {
      return keysetList<ClientRow & { id: string }, MachineClient, string>(
        query,
        (page) => repo.list(prisma, page),
        toMachineClient,
        clientIdCursor,
      );
    },

    async get(clientId: string): Promise<MachineClient> {
      const c = await load(prisma, clientId);
      if (c.kind === "agent")
        throw new NotFound(
          "agent_client",
          `'${clientId}' is a satellite agent's client: see GET /api/v1/satellites/{name} for its state`,
        );
      return toMachineClient(c);
    },

    /** A new secret; the previous one keeps working for the overlap, so a connector rolls without downtime. */
    async rotateSecret(ctx: ChangeContext, clientId: string) {
      const clientSecret = generateSecret();
      return prisma.$transaction(async (tx) => {
        const c = await managed(tx, clientId);
        if (c.revokedAt)
          throw new Conflict("client_revoked", `'${clientId}' is revoked; create a client under another id instead`);
        // The previous secret's salt: one hash checks a candidate against both during the overlap.
        const secretHash = await hashSecret(clientSecret, c.secretHash);
        const until = new Date(Date.now() + rotationOverlapMs);
        await repo.rotateSecret(tx, clientId, {
          secretHash,
          previousSecretHash: c.secretHash,
          previousValidUntil: until,
        });
        await recordChange(tx, ctx, {
          resourceType: "oauth_client",
          resourceId: clientId,
          siteId: null,
          verb: "updated",
          before: { secretRotatedAt: null },
          after: { secretRotatedAt: new Date().toISOString(), previousSecretValidUntil: until.toISOString() },
          action: "oauth_client.rotate_secret",
          feed: false,
        });
        return { clientId, clientSecret, previousSecretValidUntil: until.toISOString() };
      });
    },

    /** Revoked: no new tokens, and every token already issued fails from now on (on every replica). */
    async revoke(ctx: ChangeContext, clientId: string): Promise<MachineClient> {
      const view = await prisma.$transaction(async (tx) => {
        const c = await managed(tx, clientId);
        if (c.revokedAt) return toMachineClient(c);
        if (c.scopes.includes("fleet.admin") && (await repo.otherLiveAdmins(tx, clientId)) === 0)
          throw new Conflict(
            "last_admin_client",
            `'${clientId}' is the last client that may administer the fleet; create another fleet.admin client first`,
          );
        const row = await repo.revoke(tx, clientId);
        await recordChange(tx, ctx, {
          resourceType: "oauth_client",
          resourceId: clientId,
          siteId: null,
          verb: "updated",
          before: { revoked: false },
          after: { revoked: true },
          action: "oauth_client.revoke",
          feed: false,
        });
        return toMachineClient(row);
      });
      clientsChanged?.(clientId);
      return view;
    },
  };
}
export type ClientService = ReturnType<typeof createClientService>;
