/** clouds.yaml parsing, and Keystone application credentials against a Keystone stand-in (no Ironic). */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "@fm/test-support/ports";
import {
  KEYSTONE_CREDENTIAL_ID,
  KEYSTONE_SECRET,
  appCredentialCloud,
  keystoneCatalog,
  startKeystoneServer,
  type KeystoneServer,
} from "../testing/keystone-server.ts";
import { CloudConfigError, KeystoneAuthError, catalogEndpoint, ironicClientFor, loadCloud } from "./index.ts";

let keystone: KeystoneServer;
let dir: string;

beforeAll(async () => {
  [keystone, dir] = await Promise.all([startKeystoneServer(), mkdtemp(join(tmpdir(), "clouds-"))]);
});
afterAll(async () => {
  await keystone?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => keystone.reset());

async function cloudsFile(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}
const appCloud = (extra = "", secret = KEYSTONE_SECRET) => appCredentialCloud(keystone.url, extra, secret);
const IRONIC = "http://127.0.0.1:6385";

describe("loadCloud", () => {
  it("auth_type none: the endpoint is baremetal_endpoint_override, else auth.endpoint", async () => {
    const file = await cloudsFile(
      "none.yaml",
      `clouds:
  standalone:
    auth_type: none
    auth:
      endpoint: ${IRONIC}
  overridden:
    auth_type: none
    auth:
      endpoint: http://127.0.0.1:9/unused
    baremetal_endpoint_override: ${IRONIC}/v1
`,
    );
    expect(loadCloud(file, "standalone")).toMatchObject({
      name: "standalone",
      authType: "none",
      endpoint: IRONIC,
      interface: "public",
    });
    expect(loadCloud(file, "overridden")).toMatchObject({ authType: "none", endpoint: `${IRONIC}/v1` });
    // Ironic's client takes the endpoint without its version.
    expect((await ironicClientFor(loadCloud(file, "overridden"))).endpoint).toBe(IRONIC);
  });

  it("takes the only cloud when none is named", async () => {
    const file = await cloudsFile("one.yaml", appCloud());
    expect(loadCloud(file)).toMatchObject({
      name: "kef",
      authType: "v3applicationcredential",
      authUrl: `${keystone.url}/v3`,
      regionName: "RegionOne",
      credential: { id: KEYSTONE_CREDENTIAL_ID },
    });
  });

  it("says which file cannot be read", () => {
    const missing = join(dir, "nope.yaml");
    expect(() => loadCloud(missing)).toThrow(new CloudConfigError(`cannot read clouds file ${missing}: no such file`));
    expect(() => loadCloud(dir)).toThrow(`cannot read clouds file ${dir}: EISDIR`);
  });

  it("reports bad YAML by position, without quoting the line (it may hold a secret)", async () => {
    const file = await cloudsFile(
      "bad.yaml",
      `clouds:\n  kef:\n    auth:\n      application_credential_secret: "${KEYSTONE_SECRET}\n    region_name: [\n`,
    );
    const err = (() => {
      try {
        loadCloud(file);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(CloudConfigError);
    expect(err!.message).toMatch(
      new RegExp(`^cannot parse clouds file ${file}: invalid YAML \\(MISSING_CHAR at line \\d+, column \\d+\\)$`),
    );
    expect(err!.message).not.toContain(KEYSTONE_SECRET);
  });

  it("names the available clouds when the one asked for is missing or none is named among several", async () => {
    const file = await cloudsFile(
      "two.yaml",
      `${appCloud()}  other:\n    auth_type: none\n    auth:\n      endpoint: http://127.0.0.1:1\n`,
    );
    expect(() => loadCloud(file, "nope")).toThrow(`cloud "nope" is not in ${file}; available: "kef", "other"`);
    expect(() => loadCloud(file)).toThrow(
      `${file} holds several clouds: name one (--cloud or OS_CLOUD); available: "kef", "other"`,
    );
    const empty = await cloudsFile("empty.yaml", "clouds: {}\n");
    expect(() => loadCloud(empty)).toThrow(`${empty} holds no cloud: name one (--cloud or OS_CLOUD); available: none`);
    const notClouds = await cloudsFile("not.yaml", "- a\n- b\n");
    expect(() => loadCloud(notClouds)).toThrow(`clouds file ${notClouds} has no \`clouds:\` map`);
  });

  it("rejects unsupported or incomplete clouds without echoing values", async () => {
    const password = await cloudsFile(
      "password.yaml",
      `clouds:\n  p:\n    auth_type: password\n    auth:\n      password: ${KEYSTONE_SECRET}\n`,
    );
    expect(() => loadCloud(password)).toThrow(
      `cloud "p" in ${password}: auth_type "password" is not supported (supported: none, v3applicationcredential)`,
    );
    const noSecret = await cloudsFile(
      "nosecret.yaml",
      `clouds:\n  k:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://k/v3\n      application_credential_id: x\n`,
    );
    expect(() => loadCloud(noSecret)).toThrow(
      "`auth.application_credential_secret` is required for auth_type v3applicationcredential",
    );
    const numeric = await cloudsFile("numeric.yaml", appCloud("", "1234567890123"));
    expect(() => loadCloud(numeric)).toThrow(
      new CloudConfigError(`cloud "kef" in ${numeric}: \`auth.application_credential_secret\` must be a string`),
    );
    const nameOnly = await cloudsFile(
      "nameonly.yaml",
      `clouds:\n  k:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://k/v3\n      application_credential_name: mon\n      application_credential_secret: ${KEYSTONE_SECRET}\n`,
    );
    expect(() => loadCloud(nameOnly)).toThrow(
      "needs `auth.user_id`, or `auth.username` with `auth.user_domain_name` or `auth.user_domain_id`",
    );
    const noEndpoint = await cloudsFile("noendpoint.yaml", "clouds:\n  n:\n    auth_type: none\n");
    expect(() => loadCloud(noEndpoint)).toThrow(
      "auth_type none needs `baremetal_endpoint_override` or `auth.endpoint`",
    );
  });

  it("never prints the secret of a loaded cloud", async () => {
    const cloud = loadCloud(await cloudsFile("print.yaml", appCloud()));
    expect(JSON.stringify(cloud)).not.toContain(KEYSTONE_SECRET);
    expect(inspect(cloud, { depth: 10 })).not.toContain(KEYSTONE_SECRET);
    expect(`${(cloud as { credential: { secret: unknown } }).credential.secret}`).toBe("[redacted]");
  });
});

describe("v3applicationcredential against a Keystone stand-in", () => {
  it("a wrong secret is a KeystoneAuthError 401 that names the credential, not the secret", async () => {
    const wrong = "wrong-secret-value";
    const err = await ironicClientFor(loadCloud(await cloudsFile("wrong.yaml", appCloud("", wrong)))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KeystoneAuthError);
    expect(err).toMatchObject({ status: 401 });
    expect((err as Error).message).toBe(
      `Keystone at ${keystone.url}/v3/auth/tokens rejected application credential ${KEYSTONE_CREDENTIAL_ID} (401): The request you have made requires authentication.`,
    );
    expect((err as Error).message).not.toContain(wrong);
  });

  it("an unreachable Keystone is a KeystoneAuthError without a status", async () => {
    const port = await freePort();
    const file = await cloudsFile("down.yaml", appCloud().replace(keystone.url, `http://127.0.0.1:${port}`));
    const err = await ironicClientFor(loadCloud(file)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeystoneAuthError);
    expect(err).toMatchObject({
      status: undefined,
      message: `cannot reach Keystone at http://127.0.0.1:${port}/v3/auth/tokens: ECONNREFUSED`,
    });
  });

  it("without region_name, several regions are an error rather than a guess", async () => {
    const file = await cloudsFile("noregion.yaml", appCloud().replace("    region_name: RegionOne\n", ""));
    await expect(ironicClientFor(loadCloud(file))).rejects.toThrow(
      new CloudConfigError(
        `cloud "kef" in ${file}: the service catalog has public baremetal endpoints in several regions (RegionOne, RegionTwo): set region_name`,
      ),
    );
  });
});

describe("catalogEndpoint", () => {
  const cat = keystoneCatalog("http://k");
  it("picks by interface and region, and explains what is missing", () => {
    expect(catalogEndpoint(cat, "baremetal", "public", "RegionTwo")).toBe("http://127.0.0.1:9/region-two");
    expect(catalogEndpoint(cat, "baremetal", "internal")).toBe("http://k/baremetal-internal");
    expect(() => catalogEndpoint(cat, "baremetal", "admin")).toThrow(
      "no admin baremetal endpoint (it has: public@RegionOne, internal@RegionOne, public@RegionTwo)",
    );
    expect(() => catalogEndpoint(cat, "compute", "public")).toThrow("no compute service (it has: identity, baremetal)");
  });
});
