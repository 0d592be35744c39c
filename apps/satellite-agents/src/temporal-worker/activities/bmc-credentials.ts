/**
 * BMC credentials from a mounted directory, the way Kubernetes mounts a Secret (or a projected
 * volume of several): `<dir>/<device>-bmc/{username,password}` for a device of its own, else the
 * site's `<dir>/site-bmc/{username,password}`. The names follow the operators vault's `*-bmc`
 * items. Files are read on every lookup, so a rotated Secret needs no restart.
 *
 * Only the activity that writes a node's driver_info resolves them, from the device's name: no
 * workflow input, output or history ever holds one, and no message built here names a value.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface BmcCredentials {
  username: string;
  password: string;
}

/** Where credentials come from, by device name. */
export interface BmcCredentialSource {
  /** The device's credentials; rejects with a BmcCredentialsError naming what is missing. */
  forDevice(deviceName: string): Promise<BmcCredentials>;
}

export class BmcCredentialsError extends Error {
  override name = "BmcCredentialsError";
}

/** The directory item a site-wide default lives in. */
export const SITE_BMC_ITEM = "site-bmc";

/** A device name usable as one path segment (NetBox names may hold anything). */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function directoryCredentials(dir: string): BmcCredentialSource {
  return {
    async forDevice(deviceName) {
      if (!SAFE_NAME.test(deviceName))
        throw new BmcCredentialsError(`device name ${JSON.stringify(deviceName)} cannot name a BMC credentials item`);
      const own = await readItem(dir, `${deviceName}-bmc`);
      if (own) return own;
      const site = await readItem(dir, SITE_BMC_ITEM);
      if (site) return site;
      throw new BmcCredentialsError(
        `no BMC credentials for ${deviceName}: neither ${deviceName}-bmc/ nor ${SITE_BMC_ITEM}/ in ${dir} holds username and password`,
      );
    },
  };
}

/** The item's credentials; undefined when the item is absent; an error when it is half there. */
async function readItem(dir: string, item: string): Promise<BmcCredentials | undefined> {
  const [username, password] = await Promise.all(
    ["username", "password"].map((f) => readSecretFile(join(dir, item, f))),
  );
  if (username === undefined && password === undefined) return undefined;
  if (!username || !password)
    throw new BmcCredentialsError(`BMC credentials item ${item} in ${dir} needs both username and password, non-empty`);
  return { username, password };
}

async function readSecretFile(path: string): Promise<string | undefined> {
  try {
    // A Secret's value has no trailing newline, a file written by hand usually has one.
    return (await readFile(path, "utf8")).replace(/\r?\n$/, "");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new BmcCredentialsError(
      `cannot read BMC credentials item file ${path}: ${(err as NodeJS.ErrnoException).code}`,
    );
  }
}
