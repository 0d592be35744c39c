/**
 * Client secrets. Secrets are random 256-bit values shown once; the hub keeps only scrypt
 * hashes and compares in constant time.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

const scrypt = (secret: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(secret, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** scrypt cost: N=2^15, r=8, p=1 (OWASP's minimum is N=2^17 with p=1 for passwords; these
 * secrets are 256-bit random, so brute force is not the threat a slow hash guards against). */
const PARAMS = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export const generateSecret = (): string => randomBytes(32).toString("base64url");

/**
 * A stored hash of `secret`. With `like`, the salt and cost of that stored hash are reused: a
 * client's new secret shares its previous secret's salt, so one scrypt computation checks a
 * candidate against both during the rotation overlap (the secrets are random, the salt only
 * has to differ between clients).
 */
export async function hashSecret(secret: string, like?: string): Promise<string> {
  const reused = like ? parse(like) : undefined;
  const salt = reused?.salt ?? randomBytes(16);
  const params = reused ? { N: reused.N, r: reused.r, p: reused.p } : { N: PARAMS.N, r: PARAMS.r, p: PARAMS.p };
  const key = await scrypt(secret, salt, 32, { ...params, maxmem: PARAMS.maxmem });
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
  /** What the derived key depends on besides the secret. */
  derivation: string;
}

function parse(stored: string): ParsedHash | undefined {
  const [algo, n, r, p, salt, hash] = stored.split("$");
  if (algo !== "scrypt" || !salt || !hash) return undefined;
  return {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt, "base64url"),
    hash: Buffer.from(hash, "base64url"),
    derivation: `${n}$${r}$${p}$${salt}`,
  };
}

/**
 * Which of the stored hashes `secret` matches (index, or -1), and how many scrypt computations
 * that took: one per distinct salt and cost, so a hash list sharing one salt costs one.
 */
export async function matchSecret(secret: string, stored: string[]): Promise<{ index: number; hashes: number }> {
  const derived = new Map<string, Buffer>();
  let index = -1;
  for (const [i, s] of stored.entries()) {
    const h = parse(s);
    if (!h) continue;
    let key = derived.get(h.derivation);
    if (!key) {
      key = await scrypt(secret, h.salt, h.hash.length, { N: h.N, r: h.r, p: h.p, maxmem: PARAMS.maxmem });
      derived.set(h.derivation, key);
    }
    if (index < 0 && key.length === h.hash.length && timingSafeEqual(key, h.hash)) index = i;
  }
  return { index, hashes: derived.size };
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  return (await matchSecret(secret, [stored])).index === 0;
}

/** A hash no secret matches: verifying against it costs the same as a real one (unknown clients). */
export const DUMMY_HASH = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
