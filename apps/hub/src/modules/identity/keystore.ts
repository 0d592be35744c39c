/**
 * Token signing keys (EdDSA / Ed25519, each with a `kid`). Persisted encrypted, so tokens
 * stay valid across restarts and replicas; rotation makes a new key current and keeps the
 * old one published (JWKS) and accepted until every token it signed has expired.
 */
import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type { FastifyBaseLogger } from "fastify";
import type { PrismaClient } from "../../db/client.ts";
import { Counter, type Registry } from "prom-client";
import type { PgListener } from "../../lib/pg-listener.ts";
import { SIGNING_KEYS_CHANNEL, identityRepo, type NewSigningKey, type SigningKeyRow } from "./repo.ts";
import { decrypt, encrypt } from "../../lib/seal.ts";

export const SIGNING_ALG = "EdDSA";

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
  privateKey: CryptoKey | undefined;
  retiredAt: Date | null;
}

/** A kid this hub could have made (`newKey`): anything else is refused without a look at the table. */
const KID_PATTERN = /^\d{4}-\d{2}-\d{2}-[0-9a-f]{12}$/;

/** Unknown kids reload the table at most this often, one reload at a time (single-flight). */
export const KEY_RELOAD_MIN_INTERVAL_MS = 10_000;

/** Retired keys are deleted once nothing they signed can still be valid: lifetime plus this margin. */
const RETIRED_KEY_MARGIN_MS = 3600_000;

export interface KeyStoreMetrics {
  /** Reads of the signing key table. */
  loads: Counter;
  /** Private keys decrypted. */
  decryptions: Counter;
}

export function keyStoreMetrics(registry: Registry): KeyStoreMetrics {
  return {
    loads: new Counter({
      name: "fleet_manager_signing_key_loads_total",
      help: "Reads of the signing key table (start, rotation, a token with a kid not seen yet)",
      registers: [registry],
    }),
    decryptions: new Counter({
      name: "fleet_manager_signing_key_decryptions_total",
      help: "Signing private keys decrypted (a new current key)",
      registers: [registry],
    }),
  };
}

export class KeyStore {
  private keys: LoadedKey[] = [];
  private reloading: Promise<void> | undefined;
  private lastLoadAt = 0;
  /** The load in progress: loads run one after another, so a later one's view is never overwritten by an earlier one's. */
  private loads: Promise<void> = Promise.resolve();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly kek: Buffer,
    /** Longest token lifetime: a retired key is published this long after retirement. */
    private readonly tokenLifetimeMs: number,
    private readonly metrics?: KeyStoreMetrics,
  ) {}

  /**
   * Loads the keys, creating the first one on an empty database (safe against a racing
   * replica). Keys already loaded are kept as they are: only a key not seen before is
   * imported, and a private key is decrypted only for a new current key. Loads started together
   * (start-up, another replica's rotation, an unknown kid) run in turn.
   */
  load(): Promise<void> {
    const next = this.loads.then(() => this.loadNow());
    this.loads = next.catch(() => undefined);
    return next;
  }

  private async loadNow(): Promise<void> {
    this.lastLoadAt = Date.now();
    this.metrics?.loads.inc();
    let rows = await identityRepo.signingKeys(this.prisma);
    if (!rows.some((r) => r.retiredAt === null)) {
      await identityRepo.ensureCurrentSigningKey(this.prisma, () => this.newKey());
      rows = await identityRepo.signingKeys(this.prisma);
    }
    const known = new Map(this.keys.map((k) => [k.kid, k]));
    this.keys = await Promise.all(
      rows.map(async (r) => {
        const had = known.get(r.kid);
        const privateKey = r.retiredAt ? undefined : (had?.privateKey ?? (await this.decryptPrivate(r)));
        if (had) return { ...had, privateKey, retiredAt: r.retiredAt };
        return {
          kid: r.kid,
          publicJwk: r.publicJwk as JWK,
          publicKey: (await importJWK(r.publicJwk as JWK, SIGNING_ALG)) as CryptoKey,
          privateKey,
          retiredAt: r.retiredAt,
        };
      }),
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

  private async decryptPrivate(r: SigningKeyRow): Promise<CryptoKey> {
    this.metrics?.decryptions.inc();
    return (await importJWK(JSON.parse(decrypt(this.kek, r.privateJwkEncrypted)) as JWK, SIGNING_ALG)) as CryptoKey;
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

  /**
   * Makes a new key current; the old one verifies (and is published) until its tokens expire.
   * Keys retired long enough ago that nothing they signed can be valid are deleted.
   */
  async rotate(): Promise<string> {
    const data = await this.newKey();
    const now = new Date();
    await identityRepo.rotateSigningKey(
      this.prisma,
      data,
      now,
      new Date(now.getTime() - this.tokenLifetimeMs - RETIRED_KEY_MARGIN_MS),
    );
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

  /**
   * The verification key for a kid, or undefined (unknown, or retired long enough ago). A kid
   * not loaded may be another replica's new key: the table is read again, but only for a kid
   * this hub could have made, by one caller at a time, and at most every
   * KEY_RELOAD_MIN_INTERVAL_MS, so forged kids cannot turn into database work.
   */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    const find = () => this.published().find((x) => x.kid === kid)?.publicKey;
    const k = find();
    if (k || !kid || !KID_PATTERN.test(kid)) return k;
    if (!this.reloading && Date.now() - this.lastLoadAt >= KEY_RELOAD_MIN_INTERVAL_MS) {
      this.reloading = this.load().finally(() => (this.reloading = undefined));
    }
    if (this.reloading) await this.reloading.catch(() => undefined);
    return find();
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.published().map((k) => k.publicJwk) };
  }
}
