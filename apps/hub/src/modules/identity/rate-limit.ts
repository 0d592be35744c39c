/**
 * Rate limits of the token endpoint. Only refused requests count, so a busy agent is never
 * limited by its own successes, and they count per (address, client id): guesses at an agent's
 * client id from one host cannot lock that agent out from its own host. An address with many
 * refusals across client ids (a scanner) is slowed down as a whole, except for the clients that
 * succeeded from it recently: a NAT or a shared satellite host keeps serving its real agents.
 * In-process: each replica counts its own share, which bounds the total at replicas × limit.
 */

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

/** How long a client that obtained a token from an address stays exempt from that address's limit. */
const TRUSTED_FOR_MS = 3600_000;
const MAX_TRUSTED = 10_000;

export class TokenRateLimiter {
  private readonly perPair: RateLimiter;
  private readonly perAddress: RateLimiter;
  /** (address, client id) pairs that obtained a token, with when. */
  private readonly trusted = new Map<string, number>();

  /** `limit` refusals a minute per (address, client id); four times that per address. */
  constructor(limit: number, windowMs = 60_000) {
    this.perPair = new RateLimiter(limit, windowMs);
    this.perAddress = new RateLimiter(limit * 4, windowMs);
  }

  /** Seconds this request must wait (0: it may go ahead); counts nothing. */
  wait(address: string, clientId: string | undefined, now = Date.now()): number {
    const pair = `${address} ${clientId ?? ""}`;
    const pairWait = this.perPair.limitedWait(pair, now);
    if (pairWait) return pairWait;
    const trustedAt = this.trusted.get(pair);
    if (trustedAt !== undefined && now - trustedAt < TRUSTED_FOR_MS) return 0;
    return this.perAddress.limitedWait(address, now);
  }

  /** A refused request: counts against its pair and its address. */
  refused(address: string, clientId: string | undefined, now = Date.now()): void {
    this.perPair.hit(`${address} ${clientId ?? ""}`, now);
    this.perAddress.hit(address, now);
  }

  /** A token issued: the pair is exempt from its address's limit for a while. */
  succeeded(address: string, clientId: string, now = Date.now()): void {
    const pair = `${address} ${clientId}`;
    this.trusted.delete(pair);
    this.trusted.set(pair, now);
    // Oldest first (insertion order): drop the oldest once there are too many.
    if (this.trusted.size > MAX_TRUSTED) this.trusted.delete(this.trusted.keys().next().value!);
  }
}
