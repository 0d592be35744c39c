/**
 * Input the hub accepted and then failed on with an opaque 500: each is now a 4xx naming the
 * field (or handled), and what was stored stays readable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "../db/client.ts";
import { databaseBefore } from "../testing/migrations.ts";
import { deviceRepo } from "../modules/devices/repo.ts";
import { toDevice } from "../modules/devices/state.ts";
import type { Device } from "@fm/domain";
import { startOAuthTestHub, type TestHub } from "../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../testing/inventory.ts";
import { bearer, clientToken } from "@fm/test-support/process";

let hub: TestHub & { url: string; adminToken: string };
let inv: Inventory;
/** Agent tokens of the satellite serving keflavik, by agent kind. */
let agents: Record<string, string>;
let devices: Device[];

const call = (path: string, init: RequestInit & { token?: string; raw?: string } = {}) =>
  fetch(`${hub.url}${path}`, {
    ...init,
    body: init.raw ?? init.body,
    headers: {
      ...(init.body || init.raw ? { "content-type": "application/json" } : {}),
      ...bearer(init.token ?? hub.adminToken),
      ...(init.headers as Record<string, string>),
    },
  });

/** A 4xx problem+json whose errors name `path`; returns the body. */
async function expectProblem(res: Response, status: number, path: string) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as { errors?: { path: string; message: string }[]; detail: string; code: string };
  expect(body.errors?.map((e) => e.path)).toContain(path);
  return body;
}

beforeAll(async () => {
  hub = await startOAuthTestHub();
  inv = await seedInventory(hub.db.prisma, 3);
  const created = async (name: string, siteIds: string[]) => {
    const res = await call("/api/v1/satellites/", {
      method: "POST",
      body: JSON.stringify({ name, siteIds, environment: "prod" }),
    });
    const { secrets } = (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
    return Object.fromEntries(
      await Promise.all(secrets.map(async (s) => [s.agent, await clientToken(hub.url, s.clientId, s.clientSecret)])),
    ) as Record<string, string>;
  };
  agents = await created("sys1-ice2", [inv.sites.keflavik]);
  devices = (
    (await (await call(`/api/v1/devices?site=keflavik`)).json()) as {
      items: Device[];
    }
  ).items;
});
afterAll(() => hub.close());

const ironicNode = (name: string, uuid: string) => ({
  uuid,
  name,
  provisionState: "available",
  targetProvisionState: null,
  powerState: "power off",
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
});
const pushIronic = (items: unknown[], observedAt: string, site = inv.sites.keflavik) =>
  call(`/api/v1/sites/${site}/reflections/ironic-overcloud`, {
    method: "PUT",
    token: agents.openstack,
    body: JSON.stringify({ observedAt, complete: true, items }),
  });

describe("timestamps", () => {
  it("refuses a push from year 10000 or from an agent whose clock runs ahead; the device stays readable", async () => {
    const d = devices[0]!;
    const items = [ironicNode(d.name, "0190a5b4-0000-7000-8000-00000000b001")];
    await expectProblem(await pushIronic(items, "9999-12-31T23:59:59-14:00"), 400, "body.observedAt");
    const ahead = new Date(Date.now() + 3600_000).toISOString();
    const skew = await expectProblem(await pushIronic(items, ahead), 422, "body.observedAt");
    expect(skew.code).toBe("clock_skew");
    expect(skew.detail).toMatch(/ahead of the hub's clock/);
    expect((await call(`/api/v1/devices/${d.id}`)).status).toBe(200);
    // Pushes at the right time still go through: nothing from the future was kept.
    expect((await pushIronic(items, new Date().toISOString())).status).toBe(200);
    expect((await call(`/api/v1/devices/${d.id}`)).status).toBe(200);
  });

  it("a device stored as observed in year 10000, before times were bounded, reads again after the migration", async () => {
    // The schema as it was before the migration, with such a device in it.
    const db = await databaseBefore("1764695200000_future_observations.sql");
    try {
      await db.client.query(`WITH s AS (INSERT INTO sites (slug, name) VALUES ('future', 'F') RETURNING id)
                             INSERT INTO devices (site_id, name, ironic_observed_at)
                             SELECT id, 'future-gpu-1', '10000-01-01T13:59:59Z' FROM s`);
      await db.migrate();
      const data = createDatabase(db.url, { poolMax: 1 });
      try {
        const id = (await data.prisma.device.findFirstOrThrow({ where: { name: "future-gpu-1" } })).id;
        const device = toDevice((await deviceRepo.findById(data.prisma, id))!, new Date(), 600_000);
        expect(Math.abs(Date.parse(device.ironic.observedAt!) - Date.now())).toBeLessThan(3600_000);
      } finally {
        await data.close();
      }
    } finally {
      await db.drop();
    }
  });

  it("refuses filters outside what PostgreSQL and JavaScript both represent", async () => {
    await expectProblem(await call("/api/v1/audit?since=0000-01-01T00:00:00Z"), 400, "querystring.since");
    await expectProblem(
      await call("/api/v1/devices?updatedSince=9999-12-31T23:59:59-14:00"),
      400,
      "querystring.updatedSince",
    );
  });
});

describe("strings PostgreSQL cannot store", () => {
  it("NUL bytes in a body, a filter or the unauthenticated token request are a 400 naming the field", async () => {
    await expectProblem(
      await call("/api/v1/sites/", { method: "POST", body: JSON.stringify({ slug: "nul", name: "a\u0000b" }) }),
      400,
      "body.name",
    );
    await expectProblem(await call("/api/v1/devices?name=a%00b"), 400, "querystring.name");
    const token = await fetch(`${hub.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=fleet%00admin&client_secret=x",
    });
    await expectProblem(token, 400, "body.client_id");
  });

  it("a lone UTF-16 surrogate bound for jsonb is a 400 naming the field", async () => {
    const raw = `{"observedAt":"${new Date().toISOString()}","complete":true,"items":[{"name":"${devices[0]!.name}","status":"warning","conditions":[{"name":"gpu","status":"bad","message":"\\ud800"}]}]}`;
    const res = await call(`/api/v1/sites/${inv.sites.keflavik}/reflections/health`, {
      method: "PUT",
      token: agents["health-status"],
      raw,
    });
    await expectProblem(res, 400, "body.items.0.conditions.0.message");
  });

  it("a body without escapes cannot carry either: a lone surrogate's raw bytes arrive as U+FFFD, a pair as itself", async () => {
    // The bytes UTF-8 would give U+D800 (not valid UTF-8), then a raw emoji (a surrogate pair in JavaScript).
    const body = Buffer.concat([
      Buffer.from('{"slug":"raw-bytes","name":"a'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('b 😀"}'),
    ]);
    const res = await call("/api/v1/sites/", { method: "POST", body });
    expect(res.status).toBe(201);
    const site = (await res.json()) as { id: string; name: string };
    expect(site.name).toBe("a\ufffd\ufffd\ufffdb 😀");
    // And stored so: read back from the database.
    expect(((await (await call(`/api/v1/sites/${site.id}`)).json()) as { name: string }).name).toBe(site.name);
  });
});

describe("values past what their column holds", () => {
  it("an integer past int4, a GRES over 255 characters and megabytes of user-data are 400s naming the field", async () => {
    await expectProblem(
      await call("/api/v1/sites/", {
        method: "POST",
        body: JSON.stringify({ slug: "big", name: "Big", netboxSiteId: 2147483648 }),
      }),
      400,
      "body.netboxSiteId",
    );
    const configs = `/api/v1/sites/${inv.sites.keflavik}/slurm-bootstrap-configs`;
    const config = { deviceRoleId: inv.roles["gpu-node"], image: "ubuntu-24.04", flavor: "gpu.large" };
    const gres = `${"gpu:h100:8,".repeat(30)}nic:2`;
    await expectProblem(
      await call(configs, { method: "POST", body: JSON.stringify({ ...config, gres }) }),
      400,
      "body.gres",
    );
    const userData = Buffer.alloc(3 * 1024 * 1024, "#cloud-config\n").toString("base64");
    await expectProblem(
      await call(configs, { method: "POST", body: JSON.stringify({ ...config, userData }) }),
      400,
      "body.userData",
    );
  });
});

describe("the token endpoint", () => {
  it("answers invalid_request to credentials given as JSON arrays", async () => {
    const res = await fetch(`${hub.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: ["fleet-admin"], client_secret: ["x"] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: "invalid_request",
      error_description: expect.stringContaining("client_id"),
    });
  });
});

describe("careless agent pushes", () => {
  it("two interfaces with one name are a 400 naming the second", async () => {
    const iface = (name: string) => ({
      name,
      type: null,
      macAddress: null,
      ibGuid: null,
      mgmtOnly: false,
      peerDevice: null,
      peerInterface: null,
      netboxId: null,
    });
    const item = {
      netboxId: 9001,
      name: "kef-dup-if",
      serial: null,
      assetTag: null,
      status: "staged",
      role: { slug: "gpu-node", name: "GPU node", netboxId: null, deviceClass: "GPU_COMPUTE" },
      deviceType: null,
      location: null,
      rack: null,
      rackPosition: null,
      platformClass: null,
      tags: [],
      bmcAddress: null,
      interfaces: [iface("eth0"), iface("eth0")],
    };
    const res = await call(`/api/v1/sites/${inv.sites.keflavik}/reflections/netbox`, {
      method: "PUT",
      token: agents.netbox,
      body: JSON.stringify({ observedAt: new Date().toISOString(), complete: true, items: [item] }),
    });
    await expectProblem(res, 400, "body.items.0.interfaces.1.name");
  });

  it("two nodes with one UUID are a 400; a node another site's device holds is reported unmatched, not a 500", async () => {
    const [a, b] = devices;
    const uuid = "0190a5b4-0000-7000-8000-00000000b0dd";
    await expectProblem(
      await pushIronic([ironicNode(a!.name, uuid), ironicNode(b!.name, uuid)], new Date().toISOString()),
      400,
      "body.items.1.uuid",
    );
    // A device at stavanger already holds the node (recorded there by its own agent earlier).
    const other = await hub.db.prisma.device.findFirstOrThrow({ where: { siteId: inv.sites.stavanger } });
    await hub.db.prisma.device.update({ where: { id: other.id }, data: { ironicNodeUuid: uuid } });
    const res = await pushIronic([ironicNode(a!.name, uuid)], new Date().toISOString());
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ unmatched: 1, unmatchedItems: [a!.name] });
    const kept = (await (await call(`/api/v1/devices/${other.id}`)).json()) as Device;
    expect(kept.ironic.nodeUuid).toBe(uuid);
  });
});

describe("what an agent may store", () => {
  it("a heartbeat of 300,000 reflector keys is 413, of 65 a 400; satellite listings stay small", async () => {
    const heartbeat = (n: number) =>
      call("/api/v1/satellites/sys1-ice2/agents/openstack/heartbeat", {
        method: "POST",
        token: agents.openstack,
        body: JSON.stringify({
          reflectors: Object.fromEntries(Array.from({ length: n }, (_, i) => [`store-${i}`, i])),
        }),
      });
    expect((await heartbeat(300_000)).status).toBe(413);
    await expectProblem(await heartbeat(65), 400, "body.reflectors");
    expect((await heartbeat(64)).status).toBe(204);
    const listing = await call("/api/v1/satellites");
    expect(listing.status).toBe(200);
    expect((await listing.text()).length).toBeLessThan(16 * 1024);
  });
});

describe("JSON bodies", () => {
  const post = (raw: string) =>
    call("/api/v1/sites/", { method: "POST", raw, headers: { "content-type": "application/json" } });
  const sites = async () =>
    ((await (await call("/api/v1/sites/?limit=500")).json()) as { items: { slug: string; name: string }[] }).items;

  it("refuses a __proto__ key or a constructor.prototype, spelled plainly or escaped, with a 400 and writes nothing", async () => {
    for (const raw of [
      '{"slug":"poison-a","name":"a","__proto__":{"admin":true}}',
      '{"slug":"poison-b","name":"b","\\u005f_proto__":{"admin":true}}',
      '{"slug":"poison-c","name":"c","constructor":{"prototype":{"admin":true}}}',
      '{"slug":"poison-d","name":"d","\\u0063onstructor":{"prototype":{"admin":true}}}',
    ]) {
      const res = await post(raw);
      expect(res.status, raw).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      // Refused by the parser, before the schema (which would answer validation_failed).
      expect(((await res.json()) as { code: string }).code).toBe("malformed_json");
    }
    expect((await sites()).filter((s) => s.slug.startsWith("poison-"))).toEqual([]);
  });

  it("parses escapes and the words alone as JSON, and names an empty or broken body in a 400", async () => {
    expect((await post('{"slug":"escaped","name":"Reykjav\\u00edk constructor"}')).status).toBe(201);
    expect((await sites()).find((s) => s.slug === "escaped")?.name).toBe("Reykjavík constructor");
    for (const raw of ["", '{"slug":', "[1,"]) {
      const res = await post(raw);
      expect(res.status, raw).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/JSON|body/i);
    }
  });
});
