import { randomBytes } from "node:crypto";
import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The key that encrypts signing keys at rest: FM_KEY_ENCRYPTION_KEY, or one generated once
 * into FM_DATA_DIR/kek.secret (0600) for the embedded quick start. Production sets the
 * variable from its secret store, so the database alone never yields a signing key.
 */
export async function loadKeyEncryptionKey(fromEnv: string | undefined, dataDir: string): Promise<Buffer> {
  if (fromEnv) return Buffer.from(fromEnv, "base64");
  const file = join(dataDir, "kek.secret");
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing) return Buffer.from(existing.trim(), "base64");
  await mkdir(dataDir, { recursive: true, mode: 0o711 });
  const key = randomBytes(32);
  try {
    const fh = await open(file, "wx", 0o600);
    await fh.writeFile(key.toString("base64"));
    await fh.close();
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return Buffer.from((await readFile(file, "utf8")).trim(), "base64"); // another hub process wrote it first
  }
}
