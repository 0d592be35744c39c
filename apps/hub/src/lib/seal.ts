/**
 * At-rest encryption under the key encryption key (FM_KEY_ENCRYPTION_KEY): AES-256-GCM with a
 * random IV, so the database alone never yields what is sealed (signing keys, recorded
 * responses that carry client secrets).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export function encrypt(kek: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", kek, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(
    ".",
  );
}

export function decrypt(kek: Buffer, sealed: string): string {
  const [v, iv, tag, body] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || !body) throw new Error("unknown encryption format");
  const decipher = createDecipheriv("aes-256-gcm", kek, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}
