import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createNode,
  failClean,
  setProvisionState,
  startIronic,
  waitForProvisionState,
  type IronicPeer,
  type RawIronicNode,
} from "@fm/test-support/ironic";
import { freePort } from "@fm/test-support/ports";
import { IronicApiError, IronicClient, IronicUnavailableError, ironicErrorMessage } from "./ironic-client.ts";

let ironic: IronicPeer;
let client: IronicClient;
/** name -> node, as created */
const created = new Map<string, RawIronicNode>();

beforeAll(async () => {
  ironic = await startIronic();
  client = new IronicClient({ endpoint: ironic.url, backoffMs: 20 });
  for (let i = 0; i < 7; i++) {
    const node = await createNode(ironic.url, { name: `int-${i}`, properties: { cpus: 8 + i } });
    created.set(node.name!, node);
  }
  // Spread the nodes over real states: int-0 manageable, int-1 available (via automated
  // cleaning), int-2 clean failed in maintenance; the rest stay in enroll.
  const uuid = (name: string) => created.get(name)!.uuid;
  for (const name of ["int-0", "int-1", "int-2"]) await setProvisionState(ironic.url, uuid(name), "manage");
  for (const name of ["int-0", "int-1", "int-2"]) await waitForProvisionState(ironic.url, uuid(name), "manageable");
  await setProvisionState(ironic.url, uuid("int-1"), "provide");
  await waitForProvisionState(ironic.url, uuid("int-1"), "available");
  await failClean(ironic.url, uuid("int-2"));
});
afterAll(() => ironic?.stop());

/**
 * A stand-in in front of the real Ironic: records each request's headers and answers with
 * `script` while it lasts (a status per request), then forwards to Ironic.
 */
async function frontOfIronic(
  script: number[],
): Promise<{ url: string; seen: IncomingHttpHeaders[]; paths: string[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    paths.push(req.url!);
    const status = script.shift();
    if (status !== undefined) {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error_message: JSON.stringify({ faultcode: "Server", faultstring: `scripted ${status}`, debuginfo: null }),
        }),
      );
      return;
    }
    void fetch(`${ironic.url}${req.url}`, {
      headers: { "x-openstack-ironic-api-version": String(req.headers["x-openstack-ironic-api-version"] ?? "") },
    }).then(async (r) => {
      res.writeHead(r.status, { "content-type": "application/json" });
      res.end(await r.text());
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, paths, close: () => new Promise((r) => server.close(() => r())) };
}

describe("IronicClient against a real Ironic", () => {
  it("lists every node across pages, with their provision states", async () => {
    const nodes = await client.listNodes({ limit: 3 });
    expect(nodes).toHaveLength(7);
    expect(new Set(nodes.map((n) => n.uuid)).size).toBe(7);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    expect(byName.get("int-0")).toMatchObject({
      provision_state: "manageable",
      maintenance: false,
      driver: "fake-hardware",
    });
    expect(byName.get("int-1")).toMatchObject({ provision_state: "available", maintenance: false });
    expect(byName.get("int-2")).toMatchObject({
      provision_state: "clean failed",
      maintenance: true,
      fault: "clean failure",
    });
    expect(byName.get("int-2")!.last_error).toContain("apply_configuration");
    for (const name of ["int-3", "int-4", "int-5", "int-6"]) expect(byName.get(name)!.provision_state).toBe("enroll");
    // Detail fields: only present because the microversion header was sent (?detail needs 1.43).
    expect(byName.get("int-4")!.properties).toEqual({ cpus: 12 });
    expect(byName.get("int-4")).toHaveProperty("conductor_group", "");
    expect(byName.get("int-4")).toHaveProperty("driver_info"); // a field the schema does not name, kept
  });

  it("lists only the fields asked for (plus uuid, and the links Ironic adds), across pages", async () => {
    const nodes = await client.listNodes({ limit: 2, fields: ["name", "provision_state"] });
    expect(nodes).toHaveLength(7);
    // Every node, on the first page and on the three after it (Ironic adds its links).
    for (const node of nodes) {
      const name = String(node.name);
      expect(Object.keys(node).sort(), name).toEqual(["links", "name", "provision_state", "uuid"]);
      expect(node.uuid, name).toBe(created.get(name)?.uuid);
    }
  });

  it("reads a node by UUID and by name", async () => {
    const byUuid = await client.getNode(created.get("int-5")!.uuid);
    expect(byUuid).toMatchObject({ name: "int-5", provision_state: "enroll", properties: { cpus: 13 } });
    expect(await client.getNode("int-5")).toEqual(byUuid);
  });

  it("sets and clears maintenance", async () => {
    const id = created.get("int-3")!.uuid;
    await client.setMaintenance(id, "disk 3 SMART failure");
    expect(await client.getNode(id)).toMatchObject({ maintenance: true, maintenance_reason: "disk 3 SMART failure" });
    await client.setMaintenance(id, "replaced reason"); // idempotent, reason updated
    expect((await client.getNode(id)).maintenance_reason).toBe("replaced reason");
    await client.clearMaintenance(id);
    expect(await client.getNode(id)).toMatchObject({ maintenance: false, maintenance_reason: null });
  });

  it("turns Ironic's error document into IronicApiError with a readable message", async () => {
    const err = await client.getNode("no-such-node").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IronicApiError);
    expect(err).toMatchObject({ status: 404 });
    expect((err as Error).message).toBe("GET /v1/nodes/no-such-node -> 404 Node no-such-node could not be found.");
    expect((err as IronicApiError).body).toContain("error_message");
  });

  it("throws IronicUnavailableError when nothing listens, after every attempt", async () => {
    const port = await freePort();
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const down = new IronicClient({
      endpoint: `http://127.0.0.1:${port}`,
      backoffMs: 5,
      maxAttempts: 3,
      fetch: counting,
    });
    const err = await down.listNodes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IronicUnavailableError);
    expect(err).not.toBeInstanceOf(IronicApiError);
    expect((err as Error).message).toContain("ECONNREFUSED");
    expect((err as IronicUnavailableError).attempts).toBe(3);
    expect(calls).toBe(3);
  });

  it("retries 503 and 429 and then returns the real list; sends the microversion and no token", async () => {
    const front = await frontOfIronic([503, 503]);
    try {
      const nodes = await new IronicClient({ endpoint: `${front.url}/v1/`, backoffMs: 5 }).listNodes({ limit: 5 });
      expect(nodes.map((n) => n.name).sort()).toEqual([...created.keys()].sort());
      // 2 scripted failures + 2 pages; the second page is asked for with the first page's marker.
      expect(front.paths).toHaveLength(4);
      expect(front.paths[3]).toMatch(/[?&]marker=[0-9a-f-]{36}/);
      for (const h of front.seen) {
        expect(h["x-openstack-ironic-api-version"]).toBe("1.82");
        expect(h.accept).toBe("application/json");
        expect(h["x-auth-token"]).toBeUndefined();
      }
    } finally {
      await front.close();
    }
    const front429 = await frontOfIronic([429]);
    try {
      expect(await new IronicClient({ endpoint: front429.url, backoffMs: 5 }).getNode("int-6")).toMatchObject({
        name: "int-6",
      });
      expect(front429.paths).toHaveLength(2);
    } finally {
      await front429.close();
    }
  });

  it("gives up on persistent 5xx with the last IronicApiError, and does not retry other 4xx", async () => {
    const front = await frontOfIronic([503, 503, 503, 503, 400]);
    try {
      const c = new IronicClient({ endpoint: front.url, backoffMs: 5, maxAttempts: 4 });
      const err = await c.listNodes().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IronicApiError);
      expect(err).toMatchObject({ status: 503, message: "GET /v1/nodes -> 503 scripted 503" });
      expect(front.paths).toHaveLength(4);
      await expect(c.clearMaintenance("int-6")).rejects.toMatchObject({ status: 400 });
      expect(front.paths).toHaveLength(5);
    } finally {
      await front.close();
    }
  });

  it("reads the message out of other error shapes", () => {
    expect(
      ironicErrorMessage(
        JSON.stringify({
          error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." },
        }),
      ),
    ).toBe("The request you have made requires authentication.");
    expect(ironicErrorMessage(JSON.stringify({ error_message: "plain text" }))).toBe("plain text");
    expect(ironicErrorMessage("<html>Bad Gateway</html>")).toBe("<html>Bad Gateway</html>");
    expect(ironicErrorMessage("")).toBeUndefined();
  });
});
