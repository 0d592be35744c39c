/**
 * Per-client state every authenticated request checks (revoked? deleted? which satellite and
 * sites?), cached in memory so the check costs a Map lookup. A change to a client reaches
 * every replica through NOTIFY oauth_clients (a client id, or `*` when a satellite's sites
 * change) and drops the entry at once; entries also expire
 * after a few seconds, bounding the delay if a notification is ever lost.
 */
import type { AgentKind } from "@fm/domain";
import type { PrismaClient } from "../../db/client.ts";
import type { PgListener } from "../../lib/pg-listener.ts";
import { identityRepo } from "./repo.ts";

export interface ClientState {
  clientId: string;
  /** Which client of that id: a client deleted and created again is another instance. */
  instance: number;
  kind: string;
  scopes: string[];
  revokedAt: Date | null;
  satellite: { name: string; siteIds: string[] } | null;
  agentKind: AgentKind | null;
}

const TTL_MS = 5000;

/**
 * The instance of a client that tokens carry (claim `client_instance`): its creation time in
 * milliseconds. A satellite deleted and created again under the same name has new clients with
 * the same ids but another instance, so tokens issued to the old ones stay refused.
 */
export const clientInstance = (client: { createdAt: Date }): number => client.createdAt.getTime();

export class ClientCache {
  private entries = new Map<string, { state: ClientState | null; at: number }>();

  constructor(
    private readonly prisma: PrismaClient,
    listener: PgListener | undefined,
  ) {
    listener?.on("oauth_clients", (clientId) =>
      clientId === "*" ? this.entries.clear() : this.entries.delete(clientId),
    );
    listener?.onReconnect(() => this.entries.clear());
  }

  invalidate(clientId?: string): void {
    if (clientId) this.entries.delete(clientId);
    else this.entries.clear();
  }

  async get(clientId: string): Promise<ClientState | null> {
    const hit = this.entries.get(clientId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.state;
    const row = await identityRepo.findClientState(this.prisma, clientId);
    const state: ClientState | null = row
      ? {
          clientId: row.clientId,
          instance: clientInstance(row),
          kind: row.kind,
          scopes: row.scopes,
          revokedAt: row.revokedAt,
          satellite: row.satellite
            ? { name: row.satellite.name, siteIds: row.satellite.sites.map((s) => s.siteId) }
            : null,
          agentKind: row.agentKind as AgentKind | null,
        }
      : null;
    this.entries.set(clientId, { state, at: Date.now() });
    return state;
  }
}
