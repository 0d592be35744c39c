import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createNode, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { freePort } from "@fm/test-support/ports";
import { IronicApiError } from "../ironic/ironic-client.ts";
import {
  CloudConfigError,
  KeystoneAuthError,
  catalogEndpoint,
  ironicClientFor,
  loadCloud,
  type ServiceCatalog,
} from "./openstack-auth.ts";

const SECRET = "s3cr3t-app-cred-value";
const CRED_ID = "423f19a4ac1e4f48bbb4180756e6eb6c";

let ironic: IronicPeer;
let dir: string;

/**
 * A Keystone v3 stand-in speaking the real wire format for application credentials (keystone
 * api-ref samples auth-application-credential-*.json), which also fronts Ironic the way a
 * deployment's keystonemiddleware does: /baremetal/* is forwarded to the real Ironic only with
 * an X-Auth-Token it issued and has not revoked. Ironic itself runs in noauth mode and would
 * ignore the token, so this is where its presence is proven.
 */
const keystone = {
  url: "",
  server: undefined as Server | undefined,
  /** Every body POSTed to /v3/auth/tokens. */
  authBodies: [] as unknown[],
  issued: [] as string[],
  revoked: new Set<string>(),
  /** X-Auth-Token of every request forwarded to Ironic, with its path. */
  ironicCalls: [] as { token: string | undefined; path: string }[],
  expiresAt: new Date("2030-01-01T12:00:00Z"),
  reset() {
    this.authBodies = [];
    this.issued = [];
    this.revoked.clear();
    this.ironicCalls = [];
  },
};

function catalog(base: string): ServiceCatalog {
  return [
    {
      type: "identity",
      name: "keystone",
      id: "408af8b8",
      endpoints: [{ id: "a7b9", interface: "public", region_id: "RegionOne", region: "RegionOne", url: `${base}/v3` }],
    },
    {
      type: "baremetal",
      name: "ironic",
      id: "5d8a3c2f",
      endpoints: [
        { id: "e1", interface: "public", region_id: "RegionOne", region: "RegionOne", url: `${base}/baremetal` },
        {
          id: "e2",
          interface: "internal",
          region_id: "RegionOne",
          region: "RegionOne",
          url: `${base}/baremetal-internal`,
        },
        {
          id: "e3",
          interface: "public",
          region_id: "RegionTwo",
          region: "RegionTwo",
          url: "http://127.0.0.1:9/region-two",
        },
      ],
    },
  ];
}

function isValidAuthBody(body: unknown): boolean {
  const auth = (
    body as {
      auth?: { identity?: { methods?: unknown; application_credential?: Record<string, unknown> }; scope?: unknown };
    }
  ).auth;
  const ac = auth?.identity?.application_credential;
  if (
    !auth ||
    auth.scope !== undefined ||
    JSON.stringify(auth.identity?.methods) !== '["application_credential"]' ||
    !ac
  )
    return false;
  if (typeof ac.id === "string") return Object.keys(ac).sort().join() === "id,secret";
  return (
    typeof ac.name === "string" && typeof ac.user === "object" && Object.keys(ac).sort().join() === "name,secret,user"
  );
}

async function startKeystone(): Promise<void> {
  keystone.server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      };
      const unauthorized = () =>
        json(401, {
          error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." },
        });
      if (req.method === "POST" && req.url === "/v3/auth/tokens") {
        const body: unknown = JSON.parse(raw);
        keystone.authBodies.push(body);
        if (!isValidAuthBody(body))
          return json(400, {
            error: { code: 400, title: "Bad Request", message: "Invalid input for field 'identity'" },
          });
        const ac = (body as { auth: { identity: { application_credential: { secret: string } } } }).auth.identity
          .application_credential;
        if (ac.secret !== SECRET) return unauthorized();
        const token = `gAAAAAB-token-${keystone.issued.length + 1}`;
        keystone.issued.push(token);
        return json(
          201,
          {
            token: {
              methods: ["application_credential"],
              expires_at: keystone.expiresAt.toISOString().replace("Z", "000Z"), // Keystone sends microseconds
              issued_at: "2018-01-15T21:14:05.000000Z",
              project: { id: "231c62fb", name: "site-kef", domain: { id: "default", name: "Default" } },
              application_credential_restricted: true,
              catalog: catalog(keystone.url),
            },
          },
          { "x-subject-token": token },
        );
      }
      const m = /^\/(baremetal|baremetal-internal)(\/.*)$/.exec(req.url ?? "");
      if (m) {
        const token = req.headers["x-auth-token"] as string | undefined;
        keystone.ironicCalls.push({ token, path: req.url! });
        if (!token || !keystone.issued.includes(token) || keystone.revoked.has(token)) return unauthorized();
        void fetch(`${ironic.url}${m[2]}`, {
          method: req.method,
          headers: {
            "x-openstack-ironic-api-version": String(req.headers["x-openstack-ironic-api-version"]),
            ...(raw ? { "content-type": "application/json" } : {}),
          },
          body: raw || undefined,
        }).then(async (r) => {
          res.writeHead(r.status, { "content-type": "application/json" });
          res.end(await r.text());
        });
        return;
      }
      json(404, { error: { code: 404, title: "Not Found", message: "not here" } });
    });
  });
  await new Promise<void>((r) => keystone.server!.listen(0, "127.0.0.1", () => r()));
  keystone.url = `http://127.0.0.1:${(keystone.server.address() as { port: number }).port}`;
}

async function cloudsFile(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

const appCredCloud = (extra = "", secret = SECRET) => `clouds:
  kef:
    auth_type: v3applicationcredential
    auth:
      auth_url: ${keystone.url}/v3
      application_credential_id: ${CRED_ID}
      application_credential_secret: ${secret}
    region_name: RegionOne
${extra}`;

beforeAll(async () => {
  [ironic, dir] = await Promise.all([startIronic(), mkdtemp(join(tmpdir(), "clouds-")), startKeystone()]).then(
    ([i, d]) => [i, d] as const,
  );
  for (const name of ["kef-1", "kef-2", "kef-3"]) await createNode(ironic.url, { name });
});
afterAll(async () => {
  await ironic?.stop();
  await new Promise((r) => keystone.server?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => keystone.reset());

describe("loadCloud", () => {
  it("auth_type none: the endpoint is baremetal_endpoint_override, else auth.endpoint", async () => {
    const file = await cloudsFile(
      "none.yaml",
      `clouds:
  standalone:
    auth_type: none
    auth:
      endpoint: ${ironic.url}
  overridden:
    auth_type: none
    auth:
      endpoint: http://127.0.0.1:9/unused
    baremetal_endpoint_override: ${ironic.url}/v1
`,
    );
    expect(loadCloud(file, "standalone")).toMatchObject({
      name: "standalone",
      authType: "none",
      endpoint: ironic.url,
      interface: "public",
    });
    expect(loadCloud(file, "overridden")).toMatchObject({ authType: "none", endpoint: `${ironic.url}/v1` });
    const client = await ironicClientFor(loadCloud(file, "overridden"));
    expect((await client.listNodes()).map((n) => n.name).sort()).toEqual(["kef-1", "kef-2", "kef-3"]);
  });

  it("takes the only cloud when none is named", async () => {
    const file = await cloudsFile("one.yaml", appCredCloud());
    expect(loadCloud(file)).toMatchObject({
      name: "kef",
      authType: "v3applicationcredential",
      authUrl: `${keystone.url}/v3`,
      regionName: "RegionOne",
      credential: { id: CRED_ID },
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
      `clouds:\n  kef:\n    auth:\n      application_credential_secret: "${SECRET}\n    region_name: [\n`,
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
    expect(err!.message).not.toContain(SECRET);
  });

  it("names the available clouds when the one asked for is missing or none is named among several", async () => {
    const file = await cloudsFile(
      "two.yaml",
      `${appCredCloud()}  other:\n    auth_type: none\n    auth:\n      endpoint: http://127.0.0.1:1\n`,
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
      `clouds:\n  p:\n    auth_type: password\n    auth:\n      password: ${SECRET}\n`,
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
    const numeric = await cloudsFile("numeric.yaml", appCredCloud("", "1234567890123"));
    expect(() => loadCloud(numeric)).toThrow(
      new CloudConfigError(`cloud "kef" in ${numeric}: \`auth.application_credential_secret\` must be a string`),
    );
    const nameOnly = await cloudsFile(
      "nameonly.yaml",
      `clouds:\n  k:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://k/v3\n      application_credential_name: mon\n      application_credential_secret: ${SECRET}\n`,
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
    const cloud = loadCloud(await cloudsFile("print.yaml", appCredCloud()));
    expect(JSON.stringify(cloud)).not.toContain(SECRET);
    expect(inspect(cloud, { depth: 10 })).not.toContain(SECRET);
    expect(`${(cloud as { credential: { secret: unknown } }).credential.secret}`).toBe("[redacted]");
  });
});

describe("v3applicationcredential against a Keystone stand-in and the real Ironic", () => {
  it("authenticates with the documented body, takes Ironic from the catalog and sends the token", async () => {
    const client = await ironicClientFor(loadCloud(await cloudsFile("ac.yaml", appCredCloud()), "kef"));
    expect(client.endpoint).toBe(`${keystone.url}/baremetal`);
    expect(keystone.authBodies).toEqual([
      {
        auth: {
          identity: { methods: ["application_credential"], application_credential: { id: CRED_ID, secret: SECRET } },
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
      application_credential_secret: ${SECRET}
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
              secret: SECRET,
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
    const client = await ironicClientFor(loadCloud(await cloudsFile("clock.yaml", appCredCloud())), {
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
    const client = await ironicClientFor(loadCloud(await cloudsFile("revoke.yaml", appCredCloud())));
    await client.getNode("kef-1");
    keystone.revoked.add("gAAAAAB-token-1");
    expect(await client.getNode("kef-2")).toMatchObject({ name: "kef-2" });
    expect(keystone.ironicCalls.map((c) => c.token)).toEqual(["gAAAAAB-token-1", "gAAAAAB-token-1", "gAAAAAB-token-2"]);
    // A token Keystone keeps issuing but Ironic keeps refusing is an error, not a loop.
    keystone.revoked.add("gAAAAAB-token-2");
    keystone.revoked.add("gAAAAAB-token-3");
    await expect(client.getNode("kef-3")).rejects.toSatisfy((e) => e instanceof IronicApiError && e.status === 401);
  });

  it("a wrong secret is a KeystoneAuthError 401 that names the credential, not the secret", async () => {
    const wrong = "wrong-secret-value";
    const err = await ironicClientFor(loadCloud(await cloudsFile("wrong.yaml", appCredCloud("", wrong)))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KeystoneAuthError);
    expect(err).toMatchObject({ status: 401 });
    expect((err as Error).message).toBe(
      `Keystone at ${keystone.url}/v3/auth/tokens rejected application credential ${CRED_ID} (401): The request you have made requires authentication.`,
    );
    expect((err as Error).message).not.toContain(wrong);
  });

  it("an unreachable Keystone is a KeystoneAuthError without a status", async () => {
    const port = await freePort();
    const file = await cloudsFile("down.yaml", appCredCloud().replace(keystone.url, `http://127.0.0.1:${port}`));
    const err = await ironicClientFor(loadCloud(file)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeystoneAuthError);
    expect(err).toMatchObject({
      status: undefined,
      message: `cannot reach Keystone at http://127.0.0.1:${port}/v3/auth/tokens: ECONNREFUSED`,
    });
  });

  it("baremetal_endpoint_override wins over the catalog; the token is still sent", async () => {
    const file = await cloudsFile(
      "override.yaml",
      appCredCloud(`    baremetal_endpoint_override: ${keystone.url}/baremetal-internal\n`).replace(
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

  it("without region_name, several regions are an error rather than a guess", async () => {
    const file = await cloudsFile("noregion.yaml", appCredCloud().replace("    region_name: RegionOne\n", ""));
    await expect(ironicClientFor(loadCloud(file))).rejects.toThrow(
      new CloudConfigError(
        `cloud "kef" in ${file}: the service catalog has public baremetal endpoints in several regions (RegionOne, RegionTwo): set region_name`,
      ),
    );
  });
});

describe("catalogEndpoint", () => {
  const cat = catalog("http://k");
  it("picks by interface and region, and explains what is missing", () => {
    expect(catalogEndpoint(cat, "baremetal", "public", "RegionTwo")).toBe("http://127.0.0.1:9/region-two");
    expect(catalogEndpoint(cat, "baremetal", "internal")).toBe("http://k/baremetal-internal");
    expect(() => catalogEndpoint(cat, "baremetal", "admin")).toThrow(
      "no admin baremetal endpoint (it has: public@RegionOne, internal@RegionOne, public@RegionTwo)",
    );
    expect(() => catalogEndpoint(cat, "compute", "public")).toThrow("no compute service (it has: identity, baremetal)");
  });
});
