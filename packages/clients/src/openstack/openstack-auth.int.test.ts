/** An IronicClient for a cloud, against a Keystone stand-in in front of a real Ironic. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createNode, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { IronicApiError } from "../ironic/ironic-client.ts";
import {
  KEYSTONE_SECRET,
  KEYSTONE_CREDENTIAL_ID,
  appCredentialCloud,
  startKeystoneServer,
  type KeystoneServer,
} from "../testing/keystone-server.ts";
import { ironicClientFor, loadCloud, openstackFor } from "./index.ts";

let ironic: IronicPeer;
let keystone: KeystoneServer;
let dir: string;

beforeAll(async () => {
  [ironic, keystone, dir] = await Promise.all([
    startIronic(),
    startKeystoneServer(),
    mkdtemp(join(tmpdir(), "clouds-")),
  ]);
  keystone.ironicUrl = ironic.url;
  for (const name of ["kef-1", "kef-2", "kef-3"]) await createNode(ironic.url, { name });
});
afterAll(async () => {
  await ironic?.stop();
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

describe("auth_type none against the real Ironic", () => {
  it("reaches Ironic at baremetal_endpoint_override, with or without /v1", async () => {
    const file = await cloudsFile(
      "none.yaml",
      `clouds:
  overridden:
    auth_type: none
    auth:
      endpoint: http://127.0.0.1:9/unused
    baremetal_endpoint_override: ${ironic.url}/v1
`,
    );
    const client = await ironicClientFor(loadCloud(file, "overridden"));
    expect((await client.listNodes()).map((n) => n.name).sort()).toEqual(["kef-1", "kef-2", "kef-3"]);
  });
});

describe("v3applicationcredential against a Keystone stand-in and the real Ironic", () => {
  it("authenticates with the documented body, takes Ironic from the catalog and sends the token", async () => {
    const client = await ironicClientFor(loadCloud(await cloudsFile("ac.yaml", appCloud()), "kef"));
    expect(client.endpoint).toBe(`${keystone.url}/baremetal`);
    expect(keystone.authBodies).toEqual([
      {
        auth: {
          identity: {
            methods: ["application_credential"],
            application_credential: { id: KEYSTONE_CREDENTIAL_ID, secret: KEYSTONE_SECRET },
          },
        },
      },
    ]);

    const nodes = await client.listNodes({ limit: 2 });
    expect(nodes.map((n) => n.name).sort()).toEqual(["kef-1", "kef-2", "kef-3"]);
    await client.setMaintenance("kef-1", "via keystone");
    expect(await client.getNode("kef-1")).toMatchObject({ maintenance: true, maintenance_reason: "via keystone" });
    await client.clearMaintenance("kef-1");

    // Two pages, PUT, GET, DELETE: all through the stand-in with the one token; Keystone hit once.
    expect(keystone.ironicCalls).toHaveLength(5);
    expect(new Set(keystone.ironicCalls.map((c) => c.token))).toEqual(new Set(["gAAAAAB-token-1"]));
    expect(keystone.authBodies).toHaveLength(1);
  });

  it("identifies a credential by name and user", async () => {
    const file = await cloudsFile(
      "byname.yaml",
      `clouds:
  kef:
    auth_type: v3applicationcredential
    auth:
      auth_url: ${keystone.url}
      application_credential_name: monitoring
      username: fleet-agent
      user_domain_name: Default
      application_credential_secret: ${KEYSTONE_SECRET}
    region_name: RegionOne
    interface: internal
`,
    );
    const client = await ironicClientFor(loadCloud(file));
    // auth_url without /v3 gets it added; interface internal picks the internal endpoint.
    expect(client.endpoint).toBe(`${keystone.url}/baremetal-internal`);
    expect(keystone.authBodies).toEqual([
      {
        auth: {
          identity: {
            methods: ["application_credential"],
            application_credential: {
              name: "monitoring",
              user: { name: "fleet-agent", domain: { name: "Default" } },
              secret: KEYSTONE_SECRET,
            },
          },
        },
      },
    ]);
    expect(await client.listNodes()).toHaveLength(3);
    expect(keystone.ironicCalls.map((c) => c.path)).toEqual(["/baremetal-internal/v1/nodes?detail=true&limit=1000"]);
  });

  it("caches the token until 60 s before expires_at, then fetches a new one", async () => {
    const expiry = keystone.expiresAt.getTime();
    let now = expiry - 120_000;
    const client = await ironicClientFor(loadCloud(await cloudsFile("clock.yaml", appCloud())), {
      keystone: { now: () => now },
    });
    await client.listNodes();
    now = expiry - 61_000; // still more than the margin left
    await client.getNode("kef-2");
    expect(keystone.authBodies).toHaveLength(1);
    now = expiry - 59_000; // inside the margin: refresh before use
    await client.getNode("kef-3");
    expect(keystone.authBodies).toHaveLength(2);
    expect(keystone.ironicCalls.map((c) => c.token)).toEqual(["gAAAAAB-token-1", "gAAAAAB-token-1", "gAAAAAB-token-2"]);
  });

  it("fetches a new token when Ironic rejects a revoked one", async () => {
    const client = await ironicClientFor(loadCloud(await cloudsFile("revoke.yaml", appCloud())));
    await client.getNode("kef-1");
    keystone.revoked.add("gAAAAAB-token-1");
    expect(await client.getNode("kef-2")).toMatchObject({ name: "kef-2" });
    expect(keystone.ironicCalls.map((c) => c.token)).toEqual(["gAAAAAB-token-1", "gAAAAAB-token-1", "gAAAAAB-token-2"]);
    // A token Keystone keeps issuing but Ironic keeps refusing is an error, not a loop.
    keystone.revoked.add("gAAAAAB-token-2");
    keystone.revoked.add("gAAAAAB-token-3");
    await expect(client.getNode("kef-3")).rejects.toSatisfy((e) => e instanceof IronicApiError && e.status === 401);
  });

  it("baremetal_endpoint_override wins over the catalog; the token is still sent", async () => {
    const file = await cloudsFile(
      "override.yaml",
      appCloud(`    baremetal_endpoint_override: ${keystone.url}/baremetal-internal\n`).replace(
        "    region_name: RegionOne\n",
        "",
      ),
    );
    const client = await ironicClientFor(loadCloud(file));
    expect(client.endpoint).toBe(`${keystone.url}/baremetal-internal`);
    expect(await client.listNodes()).toHaveLength(3);
    expect(keystone.ironicCalls).toEqual([
      { token: "gAAAAAB-token-1", path: "/baremetal-internal/v1/nodes?detail=true&limit=1000" },
    ]);
  });
});

describe("the cloud's Keystone session: a project's id by name", () => {
  it("resolves a name to its id with the credential's token, and refuses an unknown or ambiguous name", async () => {
    keystone.projects = [
      { id: "231c62fb", name: "site-kef", domain_id: "default" },
      { id: "9f1e0c3a5b7d4e21", name: "kef-baremetal", domain_id: "default" },
      { id: "aa01", name: "twice", domain_id: "default" },
      { id: "aa02", name: "twice", domain_id: "other" },
    ];
    const { keystone: session } = await openstackFor(loadCloud(await cloudsFile("projects.yaml", appCloud())));
    expect(await session!.projectId("kef-baremetal")).toBe("9f1e0c3a5b7d4e21");
    await expect(session!.projectId("nope")).rejects.toThrow(/no project named "nope"/);
    await expect(session!.projectId("twice")).rejects.toThrow(/2 projects named "twice" \(domains default, other\)/);
    // A token revoked early is replaced once.
    keystone.revoked.add("gAAAAAB-token-1");
    expect(await session!.projectId("site-kef")).toBe("231c62fb");
    expect(keystone.issued).toEqual(["gAAAAAB-token-1", "gAAAAAB-token-2"]);
  });

  it("auth_type none has no Keystone session", async () => {
    const file = await cloudsFile(
      "none-session.yaml",
      `clouds:\n  plain:\n    auth_type: none\n    baremetal_endpoint_override: ${ironic.url}\n`,
    );
    expect((await openstackFor(loadCloud(file, "plain"))).keystone).toBeUndefined();
  });
});
