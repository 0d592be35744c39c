/**
 * Rate limits of the token endpoint. Only refused requests count, so a busy agent is never
 * limited by its own successes. They count per (address, client id, secret fingerprint): a
 * secret refused `limit` times from an address is refused unread there for the rest of the
 * minute, while the wrong secrets someone else sends from the same address (a shared NAT, or an
 * ingress whose address every caller has unless FM_TRUST_PROXY names it) do not lock out the
 * right one. Guessing many secrets is bounded by two higher caps: per (address, client id)
 * (twice the limit) and per address (four times). Neither applies to a (address, client id,
 * fingerprint) that obtained a token in the last hour, so an agent that renews its token keeps
 * renewing it however many guesses are made at its client id. The fingerprint is a truncated
 * HMAC of the presented secret under a key made for this process: never the secret, never
 * logged, meaningless outside the process. In-process: each replica counts its own share, which
 * bounds the total at replicas × limit.
 */
import { createHmac, randomBytes } from "node:crypto";

/** Fixed-window counters per key. */
export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts a hit; returns seconds to wait when over the limit, else 0. */
  hit(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      this.windows.set(key, { start: now, count: 1 });
      if (this.windows.size > 10_000) this.sweep(now);
      return 0;
    }
    w.count++;
    return this.wait(key, now);
  }

  /** After more than `limit` hits: seconds until the window ends; else 0. Counts nothing. */
  wait(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs || w.count <= this.limit) return 0;
    return Math.ceil((w.start + this.windowMs - now) / 1000);
  }

  /** Once `limit` hits were counted: seconds until the window ends; else 0. Counts nothing. */
  limitedWait(key: string, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs || w.count < this.limit) return 0;
    return Math.ceil((w.start + this.windowMs - now) / 1000);
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}

/** How long a (address, client id, secret) that obtained a token stays exempt from the higher caps. */
const TRUSTED_FOR_MS = 3600_000;
const MAX_TRUSTED = 10_000;

export class TokenRateLimiter {
  private readonly perSecret: RateLimiter;
  private readonly perPair: RateLimiter;
  private readonly perAddress: RateLimiter;
  /** (address, client id, fingerprint) that obtained a token, with when. */
  private readonly trusted = new Map<string, number>();
  private readonly fingerprintKey = randomBytes(32);

  /**
   * `limit` refusals a minute per (address, client id, secret); twice that per (address, client
   * id) and four times that per address, for the secrets that did not obtain a token recently.
   */
  constructor(limit: number, windowMs = 60_000) {
    this.perSecret = new RateLimiter(limit, windowMs);
    this.perPair = new RateLimiter(limit * 2, windowMs);
    this.perAddress = new RateLimiter(limit * 4, windowMs);
  }

  /** A short keyed digest of a presented secret (none: ""); the secret itself is never kept. */
  fingerprint(secret: string | undefined): string {
    if (!secret) return "";
    return createHmac("sha256", this.fingerprintKey).update(secret).digest("base64url").slice(0, 16);
  }

  /** Seconds this request must wait (0: it may go ahead); counts nothing. */
  wait(address: string, clientId: string | undefined, fingerprint: string, now = Date.now()): number {
    const pair = `${address} ${clientId ?? ""}`;
    const triple = `${pair} ${fingerprint}`;
    const secretWait = this.perSecret.limitedWait(triple, now);
    if (secretWait) return secretWait;
    const trustedAt = this.trusted.get(triple);
    if (trustedAt !== undefined && now - trustedAt < TRUSTED_FOR_MS) return 0;
    return this.perPair.limitedWait(pair, now) || this.perAddress.limitedWait(address, now);
  }

  /** A refused request: counts against its secret, its pair and its address. */
  refused(address: string, clientId: string | undefined, fingerprint: string, now = Date.now()): void {
    const pair = `${address} ${clientId ?? ""}`;
    this.perSecret.hit(`${pair} ${fingerprint}`, now);
    this.perPair.hit(pair, now);
    this.perAddress.hit(address, now);
  }

  /** A token issued: this secret from this address is exempt from the pair's and the address's caps for a while. */
  succeeded(address: string, clientId: string, fingerprint: string, now = Date.now()): void {
    const triple = `${address} ${clientId} ${fingerprint}`;
    this.trusted.delete(triple);
    this.trusted.set(triple, now);
    // Oldest first (insertion order): drop the oldest once there are too many.
    if (this.trusted.size > MAX_TRUSTED) this.trusted.delete(this.trusted.keys().next().value!);
  }
}
