/**
 * Token signing keys (EdDSA / Ed25519, each with a `kid`). Persisted encrypted, so tokens
 * stay valid across restarts and replicas; rotation makes a new key current and keeps the
 * old one published (JWKS) and accepted until every token it signed has expired.
 */
import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type { FastifyBaseLogger } from "fastify";
import type { PrismaClient } from "../../db/client.ts";
import type { PgListener } from "../../lib/pg-listener.ts";
import { SIGNING_KEYS_CHANNEL, identityRepo, type NewSigningKey } from "./repo.ts";
import { decrypt, encrypt } from "../../lib/seal.ts";

export const SIGNING_ALG = "EdDSA";

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
  privateKey: CryptoKey | undefined;
  retiredAt: Date | null;
}

export class KeyStore {
  private keys: LoadedKey[] = [];

  constructor(
    private readonly prisma: PrismaClient,
    private readonly kek: Buffer,
    /** Longest token lifetime: a retired key is published this long after retirement. */
    private readonly tokenLifetimeMs: number,
  ) {}

  /** Loads the keys, creating the first one on an empty database (safe against a racing replica). */
  async load(): Promise<void> {
    let rows = await identityRepo.signingKeys(this.prisma);
    if (!rows.some((r) => r.retiredAt === null)) {
      await identityRepo.ensureCurrentSigningKey(this.prisma, () => this.newKey());
      rows = await identityRepo.signingKeys(this.prisma);
    }
    this.keys = await Promise.all(
      rows.map(async (r) => ({
        kid: r.kid,
        publicJwk: r.publicJwk as JWK,
        publicKey: (await importJWK(r.publicJwk as JWK, SIGNING_ALG)) as CryptoKey,
        privateKey: r.retiredAt
          ? undefined
          : ((await importJWK(JSON.parse(decrypt(this.kek, r.privateJwkEncrypted)) as JWK, SIGNING_ALG)) as CryptoKey),
        retiredAt: r.retiredAt,
      })),
    );
  }

  /**
   * Follows rotations made by other replicas: reloads on their notification, and after the
   * listener reconnects (a notification sent while it was away is lost). Without this a replica
   * would sign with the retired key until restarted, and its tokens would fail elsewhere once
   * the retired key stops being accepted.
   */
  follow(listener: PgListener, log: FastifyBaseLogger): void {
    const reload = () =>
      void this.load().catch((err: unknown) =>
        log.warn(
          { err: (err as Error).message },
          "reloading signing keys failed; the next rotation or unknown kid retries",
        ),
      );
    listener.on(SIGNING_KEYS_CHANNEL, reload);
    listener.onReconnect(reload);
  }

  private async newKey(): Promise<NewSigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { crv: "Ed25519", extractable: true });
    const kid = `${new Date().toISOString().slice(0, 10)}-${randomBytes(6).toString("hex")}`;
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: "sig" };
    return {
      kid,
      alg: SIGNING_ALG,
      publicJwk,
      privateJwkEncrypted: encrypt(this.kek, JSON.stringify(await exportJWK(privateKey))),
    };
  }

  /** Makes a new key current; the old one verifies (and is published) until its tokens expire. */
  async rotate(): Promise<string> {
    const data = await this.newKey();
    await identityRepo.rotateSigningKey(this.prisma, data, new Date());
    await this.load();
    return data.kid;
  }

  current(): { kid: string; privateKey: CryptoKey } {
    const k = [...this.keys].reverse().find((x) => x.privateKey);
    if (!k?.privateKey) throw new Error("no signing key loaded");
    return { kid: k.kid, privateKey: k.privateKey };
  }

  private published(now = Date.now()): LoadedKey[] {
    return this.keys.filter((k) => !k.retiredAt || k.retiredAt.getTime() + this.tokenLifetimeMs > now);
  }

  /** The verification key for a kid, or undefined (unknown, or retired long enough ago). */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    let k = this.published().find((x) => x.kid === kid);
    if (!k && kid) {
      await this.load(); // another replica may have rotated
      k = this.published().find((x) => x.kid === kid);
    }
    return k?.publicKey;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.published().map((k) => k.publicJwk) };
  }
}
