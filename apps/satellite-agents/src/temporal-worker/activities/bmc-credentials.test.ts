import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BmcCredentialsError, directoryCredentials } from "./bmc-credentials.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "bmc-creds-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function item(name: string, files: Record<string, string>) {
  await mkdir(join(dir, name), { recursive: true });
  for (const [f, v] of Object.entries(files)) await writeFile(join(dir, name, f), v);
}

describe("directoryCredentials", () => {
  it("takes the device's own item before the site's, and trims one trailing newline", async () => {
    await item("site-bmc", { username: "admin", password: "site-pass\n" });
    await item("gpu007-bmc", { username: "root", password: "own pass " });
    const source = directoryCredentials(dir);
    expect(await source.forDevice("gpu007")).toEqual({ username: "root", password: "own pass " });
    expect(await source.forDevice("gpu008")).toEqual({ username: "admin", password: "site-pass" });
  });

  it("reads the files on every lookup: a rotated secret is used without a restart", async () => {
    await item("site-bmc", { username: "admin", password: "one" });
    const source = directoryCredentials(dir);
    expect((await source.forDevice("gpu001")).password).toBe("one");
    await writeFile(join(dir, "site-bmc", "password"), "two");
    expect((await source.forDevice("gpu001")).password).toBe("two");
  });

  it("names what is missing, never a value", async () => {
    const source = directoryCredentials(dir);
    await expect(source.forDevice("gpu001")).rejects.toThrow(
      new BmcCredentialsError(
        `no BMC credentials for gpu001: neither gpu001-bmc/ nor site-bmc/ in ${dir} holds username and password`,
      ),
    );
    await item("gpu002-bmc", { password: "half-there" });
    const err = await source.forDevice("gpu002").then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(BmcCredentialsError);
    expect(err?.message).toBe(`BMC credentials item gpu002-bmc in ${dir} needs both username and password, non-empty`);
    expect(err?.message).not.toContain("half-there");
  });

  it("refuses a device name that would leave the directory", async () => {
    await item("site-bmc", { username: "admin", password: "x" });
    for (const name of ["../etc", "a/b", ".hidden", ""])
      await expect(directoryCredentials(dir).forDevice(name)).rejects.toThrow(/cannot name a BMC credentials item/);
  });
});
