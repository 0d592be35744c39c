/**
 * Standard Webhooks 1.0 signatures (https://www.standardwebhooks.com/, spec
 * github.com/standard-webhooks/standard-webhooks spec/standard-webhooks.md, v1.0.0): headers
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated
 * list of `v1,<base64 HMAC-SHA256>` over `{id}.{timestamp}.{body}`, keyed with the secret's
 * bytes (`whsec_` + base64). Used by the sender and by the test receiver.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  if (key.length < 24) throw new Error("a webhook secret is whsec_ followed by at least 24 base64 bytes");
  return key;
}

export function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** True when one of the signatures matches and the timestamp is within `toleranceS` of now. */
export function verify(
  key: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  body: string,
  nowS = Math.floor(Date.now() / 1000),
  toleranceS = 300,
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowS - Number(timestamp)) > toleranceS) return false;
  const expected = Buffer.from(sign(key, id, Number(timestamp), body).slice(3), "base64");
  return signature.split(" ").some((s) => {
    const [version, value] = s.split(",", 2);
    if (version !== "v1" || !value) return false;
    const got = Buffer.from(value, "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
