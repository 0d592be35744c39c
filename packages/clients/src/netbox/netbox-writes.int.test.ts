/** NetboxClient's idempotent writes and its retries, against the NetBox test server. */
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { startHttpFront } from "../testing/http-front.ts";
import {
  NetboxApiError,
  NetboxClient,
  NetboxMissingTagsError,
  NetboxUnavailableError,
  NetboxUndefinedCustomFieldError,
} from "./index.ts";

const V1 = "0123456789abcdef0123456789abcdef01234567";

let nb: NetboxServer;
let client: NetboxClient;

beforeAll(async () => {
  nb = await startNetboxServer({ token: V1, data: realisticFleet({ sites: 2, devicesPerSite: 30 }) });
  client = new NetboxClient({ url: nb.url, token: V1, backoffMs: 5, pageSize: 7 });
});
afterAll(() => nb?.stop());

const sent = (front: { seen: Array<{ method: string; path: string }> }) =>
  front.seen.map((r) => `${r.method} ${r.path}`);

describe("NetboxClient writes", () => {
  const since = new Date(Date.now() - 1000);
  const changesOf = (type: string, id: number) =>
    nb.data.objectChanges.filter((c) => c.changed_object_type === type && c.changed_object_id === id);
  const patches = () => nb.requests.filter((r) => r.method === "PATCH").length;
  let deviceId: number;
  let ibId: number;

  beforeAll(() => {
    const device = nb.data.devices.find((d) => d.role === 1 && d.status === "active" && d.site === 2)!;
    deviceId = device.id;
    ibId = nb.data.interfaces.find((i) => i.device === deviceId && i.name === "ib0")!.id;
  });

  it("setDeviceStatus changes once, then reports no change and sends nothing", async () => {
    const first = await client.setDeviceStatus(deviceId, "offline");
    expect(first.changed).toBe(true);
    expect(first.object.status.value).toBe("offline");
    expect(changesOf("dcim.device", deviceId)).toHaveLength(1);
    const sent = patches();
    const again = await client.setDeviceStatus(deviceId, "offline");
    expect(again).toMatchObject({ changed: false, object: { id: deviceId, status: { value: "offline" } } });
    expect(patches()).toBe(sent);
    expect(changesOf("dcim.device", deviceId)).toHaveLength(1);
  });

  it("setPlatformClass sets the custom field and keeps the others", async () => {
    nb.data.customFields["dcim.device"] = ["platform_class", "burn_in_passed"];
    nb.data.devices.find((d) => d.id === deviceId)!.custom_fields.burn_in_passed = true;
    const first = await client.setPlatformClass(deviceId, "gb300-nvl72");
    expect(first.changed).toBe(true);
    expect(first.object.custom_fields).toEqual({ platform_class: "gb300-nvl72", burn_in_passed: true });
    const sent = patches();
    expect((await client.setPlatformClass(deviceId, "gb300-nvl72")).changed).toBe(false);
    expect(patches()).toBe(sent);
    expect(changesOf("dcim.device", deviceId)).toHaveLength(2);
  });

  it("addDeviceTags adds to the existing tags, by slug or id, once", async () => {
    const before = (await client.device(deviceId)).tags.map((t) => t.slug);
    expect(before).toContain("fleet-managed");
    const maintenance = nb.data.tags.find((t) => t.slug === "maintenance")!;
    const first = await client.addDeviceTags(deviceId, ["rma", maintenance.id]);
    expect(first.changed).toBe(true);
    expect(first.object.tags.map((t) => t.slug)).toEqual([...before, "rma", "maintenance"]);
    const sent = patches();
    expect((await client.addDeviceTags(deviceId, ["maintenance", "fleet-managed"])).changed).toBe(false);
    expect(patches()).toBe(sent);
    expect(changesOf("dcim.device", deviceId)).toHaveLength(3);
  });

  it("addDeviceTags refuses tags NetBox does not have, naming them, and writes nothing", async () => {
    const sent = patches();
    const err = await client.addDeviceTags(deviceId, ["maintenance", "no-such-tag", 4242]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetboxMissingTagsError);
    expect(err).toMatchObject({ missing: ["no-such-tag", 4242] });
    expect((err as Error).message).toContain('"no-such-tag"');
    expect(patches()).toBe(sent);
  });

  it("setInterfaceLabel writes an InfiniBand GUID once", async () => {
    const guid = "0x1070fd0300a1b2c3";
    const first = await client.setInterfaceLabel(ibId, guid);
    expect(first).toMatchObject({ changed: true, object: { label: guid, display: `ib0 (${guid})` } });
    const sent = patches();
    expect((await client.setInterfaceLabel(ibId, guid)).changed).toBe(false);
    expect(patches()).toBe(sent);
    expect(changesOf("dcim.interface", ibId)).toHaveLength(1);
  });

  it("objectChanges since a time returns exactly these writes, oldest first", async () => {
    const changes = await client.objectChanges({ since });
    expect(changes.map((c) => [c.changed_object_type, c.changed_object_id, c.action.value])).toEqual([
      ["dcim.device", deviceId, "update"],
      ["dcim.device", deviceId, "update"],
      ["dcim.device", deviceId, "update"],
      ["dcim.interface", ibId, "update"],
    ]);
    expect(changes[0]).toMatchObject({
      prechange_data: { status: "active" },
      postchange_data: { status: "offline" },
      user_name: "fleet-agent",
    });
    expect(changes[3]).toMatchObject({ postchange_data: { label: "0x1070fd0300a1b2c3" } });
    expect(await client.objectChanges({ since, changedObjectType: "dcim.interface" })).toHaveLength(1);
    expect(await client.objectChanges({ since: new Date(Date.now() + 60_000) })).toEqual([]);
    // Device reads reflect the writes' last_updated.
    expect((await client.devices({ last_updated__gte: since })).map((d) => d.id)).toEqual([deviceId]);
  });
});

describe("NetboxClient against NetBox 4.5.0, which drops an undefined custom field from a write and answers 200", () => {
  it("setPlatformClass refuses, naming the field, instead of reporting a change NetBox never stored", async () => {
    const nb45 = await startNetboxServer({
      token: V1,
      version: "4.5.0",
      data: realisticFleet({ sites: 1, devicesPerSite: 6 }),
    });
    try {
      const c = new NetboxClient({ url: nb45.url, token: V1, backoffMs: 5 });
      nb45.data.customFields["dcim.device"] = ["burn_in_passed"];
      const device = nb45.data.devices[0]!;
      delete device.custom_fields.platform_class;
      const err = await c.setPlatformClass(device.id, "gb300-nvl72").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetboxUndefinedCustomFieldError);
      expect((err as Error).message).toContain("custom field 'platform_class' on dcim.device");
      expect(nb45.requests.filter((r) => r.method === "PATCH")).toHaveLength(0);

      // Defined when read, deleted before the PATCH: NetBox answers 200 without it, and that is caught too.
      nb45.data.customFields["dcim.device"] = ["platform_class", "burn_in_passed"];
      device.custom_fields.platform_class = null;
      const patch = c.patch.bind(c);
      c.patch = ((...args: Parameters<typeof patch>) => {
        nb45.data.customFields["dcim.device"] = ["burn_in_passed"];
        return patch(...args);
      }) as typeof c.patch;
      expect(await c.setPlatformClass(device.id, "gb300-nvl72").catch((e: unknown) => e)).toBeInstanceOf(
        NetboxUndefinedCustomFieldError,
      );
      expect(device.custom_fields.platform_class).toBeUndefined();
    } finally {
      await nb45.stop();
    }
  });
});

describe("NetboxClient retries", () => {
  it("retries a GET after a 503 and a dropped connection, then succeeds", async () => {
    const front = await startHttpFront(nb.url, [503, "drop"]);
    try {
      const c = new NetboxClient({ url: front.url, token: V1, backoffMs: 5 });
      const device = await c.device(3);
      expect(device.id).toBe(3);
      expect(sent(front)).toEqual(["GET /api/dcim/devices/3/", "GET /api/dcim/devices/3/", "GET /api/dcim/devices/3/"]);
    } finally {
      await front.close();
    }
  });

  it("retries a PATCH after a 502 (it carries the whole value) and records one change", async () => {
    const iface = nb.data.interfaces.find((i) => i.name === "ib1")!;
    // The read goes through; the PATCH meets a 502 once (a proxy that lost NetBox for a moment).
    let patchesSeen = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method === "PATCH" && patchesSeen++ === 0)
        return new Response("<h1>502 Bad Gateway</h1>", { status: 502 });
      return fetch(input, init);
    };
    const c = new NetboxClient({ url: nb.url, token: V1, backoffMs: 5, fetch: flaky });
    const result = await c.setInterfaceLabel(iface.id, "0x1070fd0300a1b2c4");
    expect(result).toMatchObject({ changed: true, object: { label: "0x1070fd0300a1b2c4" } });
    expect(patchesSeen).toBe(2);
    expect(
      nb.data.objectChanges.filter(
        (x) => x.changed_object_id === iface.id && x.changed_object_type === "dcim.interface",
      ),
    ).toHaveLength(1);
    expect((await client.interface(iface.id)).label).toBe("0x1070fd0300a1b2c4");
  });

  it("gives up after maxAttempts with NetBox's last answer, or NetboxUnavailableError when nothing answers", async () => {
    const front = await startHttpFront(nb.url, [503, 503, 503]);
    try {
      const c = new NetboxClient({ url: front.url, token: V1, backoffMs: 1, maxAttempts: 3 });
      const err = await c.sites().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetboxApiError);
      expect(err).toMatchObject({ status: 503 });
      expect(front.seen).toHaveLength(3);
    } finally {
      await front.close();
    }
    const down = new NetboxClient({ url: front.url, token: V1, backoffMs: 1, maxAttempts: 2 });
    const err = await down.sites().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetboxUnavailableError);
    expect(err).toMatchObject({ attempts: 2, message: expect.stringContaining("ECONNREFUSED") });
  });

  it("times out a request that does not answer", async () => {
    const hang = createServer(() => {});
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", () => r()));
    try {
      const { port } = hang.address() as { port: number };
      const c = new NetboxClient({
        url: `http://127.0.0.1:${port}`,
        token: V1,
        timeoutMs: 100,
        maxAttempts: 2,
        backoffMs: 1,
      });
      const err = await c.status().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetboxUnavailableError);
      expect((err as Error).message).toContain("timed out");
    } finally {
      hang.closeAllConnections();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  });
});
