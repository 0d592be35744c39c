/** NetboxClient's reads, authentication and permissions against the NetBox test server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { NetboxApiError, NetboxAuthenticationError, NetboxClient, NetboxPermissionError } from "./index.ts";

const V1 = "0123456789abcdef0123456789abcdef01234567";
const V2 = "nbt_4kq2v8r1x9zp.Yh3Jq9m2Wc7Lr5Tn8Vb1Xs4Pd6Fg0KaQe";

let nb: NetboxServer;
let client: NetboxClient;

beforeAll(async () => {
  nb = await startNetboxServer({ token: [V1, V2], data: realisticFleet({ sites: 2, devicesPerSite: 30 }) });
  client = new NetboxClient({ url: nb.url, token: V1, backoffMs: 5, pageSize: 7 });
});
afterAll(() => nb?.stop());

const listRequests = (path: string) => nb.requests.filter((r) => r.method === "GET" && r.path === path);

describe("NetboxClient reads", () => {
  it("pages through every list with a small page size and gets exactly the store's objects", async () => {
    const before = listRequests("/api/dcim/devices/").length;
    const devices = await client.devices();
    expect(devices.map((d) => d.id)).toEqual(nb.data.devices.map((d) => d.id));
    const pages = listRequests("/api/dcim/devices/").slice(before);
    expect(pages).toHaveLength(Math.ceil(nb.data.devices.length / 7));
    expect(pages.map((p) => p.query.offset?.[0] ?? "0")).toEqual(pages.map((_, n) => String(n * 7)));
    expect(pages.every((p) => p.query.limit?.[0] === "7")).toBe(true);

    const big = new NetboxClient({ url: nb.url, token: V1, pageSize: 100 });
    expect((await big.interfaces()).length).toBe(nb.data.interfaces.length);
    expect((await big.cables()).length).toBe(nb.data.cables.length);
    expect((await big.macAddresses()).length).toBe(nb.data.macAddresses.length);
    expect((await big.ipAddresses()).length).toBe(nb.data.ipAddresses.length);
    expect((await client.tags()).length).toBe(nb.data.tags.length);
    expect((await client.sites()).length).toBe(nb.data.sites.length);
    expect((await client.locations()).length).toBe(nb.data.locations.length);
    expect((await client.racks()).length).toBe(nb.data.racks.length);
    expect((await client.deviceTypes()).map((t) => t.model)).toEqual([
      "GB300 NVL72 Compute Tray",
      "SYS-821GE-TNHR HGX H200",
      "PowerEdge R760",
      "SN5600",
    ]);
    expect((await client.deviceRoles()).map((r) => r.slug)).toEqual([
      "gpu-node",
      "cpu-node",
      "hypervisor",
      "leaf-switch",
    ]);
    expect((await client.clusters()).length).toBe(nb.data.clusters.length);
    expect((await client.configContexts()).length).toBe(nb.data.configContexts.length);
  });

  it("parses NetBox's objects, keeping fields it does not name", async () => {
    const [gpu] = await client.devices({ role: "gpu-node" });
    expect(gpu).toMatchObject({
      status: { value: "active" },
      device_type: { model: "GB300 NVL72 Compute Tray", manufacturer: { slug: "nvidia" } },
      site: { slug: "iad1" },
      cluster: { name: "iad1-compute" },
    });
    expect(gpu!.config_context).toMatchObject({
      mlxconfig_config: { LINK_TYPE_P1: "IB" },
      bios_config: { BootMode: "Uefi" },
      firmware_config: { bmc: "25.04-1" },
    });
    expect(gpu).toHaveProperty("console_port_count", 0); // not in the schema, kept
    const ifaces = await client.interfaces({ device_id: gpu!.id });
    const eth0 = ifaces.find((i) => i.name === "eth0")!;
    expect(eth0.mac_address).toBe(eth0.primary_mac_address!.mac_address);
    expect(eth0.link_peers_type).toBe("dcim.interface");
    expect(ifaces.filter((i) => i.type.value === "infiniband-ndr")).toHaveLength(4);
    const [mac] = await client.macAddresses({ interface_id: eth0.id });
    expect(mac).toMatchObject({
      assigned_object_type: "dcim.interface",
      assigned_object_id: eth0.id,
      assigned_object: { name: "eth0", device: { id: gpu!.id } },
    });
  });

  it("follows `next` on the configured URL when NetBox names another host (behind a proxy)", async () => {
    const proxied = await startNetboxServer({
      token: V1,
      data: nb.data,
      publicUrl: "http://netbox.internal.invalid:8443",
    });
    try {
      const page = (await (
        await fetch(`${proxied.url}/api/dcim/devices/?limit=7`, { headers: { authorization: `Token ${V1}` } })
      ).json()) as { next: string };
      expect(page.next).toBe("http://netbox.internal.invalid:8443/api/dcim/devices/?limit=7&offset=7");
      const c = new NetboxClient({ url: `${proxied.url}/api/`, token: V1, pageSize: 7, maxAttempts: 1 });
      expect((await c.devices()).length).toBe(nb.data.devices.length);
    } finally {
      await proxied.stop();
    }
  });

  it("filters by cluster_id, site_id, role, status, name and last_updated__gte; repeated values are ORed", async () => {
    const d = nb.data.devices;
    const byCluster = await client.devices({ cluster_id: 2 });
    expect(byCluster.map((x) => x.id)).toEqual(d.filter((x) => x.cluster === 2).map((x) => x.id));
    expect(byCluster.every((x) => x.cluster?.id === 2)).toBe(true);

    expect((await client.devices({ site_id: 1 })).length).toBe(d.filter((x) => x.site === 1).length);
    expect((await client.devices({ site_id: [1, 2] })).length).toBe(d.length);

    const roles = await client.devices({ role: ["hypervisor", "leaf-switch"] });
    expect(roles.length).toBe(d.filter((x) => x.role === 3 || x.role === 4).length);
    expect(new Set(roles.map((x) => x.role.slug))).toEqual(new Set(["hypervisor", "leaf-switch"]));

    expect((await client.devices({ status: "planned" })).map((x) => x.id)).toEqual(
      d.filter((x) => x.status === "planned").map((x) => x.id),
    );
    expect((await client.devices({ name: d[5]!.name! }))[0]!.id).toBe(d[5]!.id);

    // The fleet's last_updated values are spread over hours: take the middle one.
    const times = d.map((x) => x.last_updated).sort();
    const since = new Date(Date.parse(times[Math.floor(times.length / 2)]!));
    const recent = await client.devices({ last_updated__gte: since });
    expect(recent.length).toBe(d.filter((x) => Date.parse(x.last_updated) >= since.getTime()).length);
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan(d.length);

    const gpu = d.find((x) => x.role === 1)!;
    expect((await client.interfaces({ device_id: gpu.id })).length).toBe(
      nb.data.interfaces.filter((i) => i.device === gpu.id).length,
    );
    expect((await client.interfaces({ site_id: 2 })).length).toBe(
      nb.data.interfaces.filter((i) => d.find((x) => x.id === i.device)!.site === 2).length,
    );
    expect((await client.ipAddresses({ device_id: gpu.id })).length).toBe(2); // primary and out-of-band
    const cables = await client.cables({ device_id: gpu.id });
    expect(cables).toHaveLength(2); // the two uplinks
    expect(cables[0]!.type).toBe("mmf-om4"); // the bare choice value, as NetBox renders it
  });

  it("surfaces NetBox's 400 for a bad filter value at once, without retrying", async () => {
    const before = listRequests("/api/dcim/devices/").length;
    const err = await client.devices({ cluster_id: 999 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetboxApiError);
    expect(err).toMatchObject({
      status: 400,
      message: expect.stringContaining("cluster_id: Select a valid choice. 999 is not one of the available choices."),
    });
    expect(listRequests("/api/dcim/devices/").length).toBe(before + 1);
  });

  it("reads NetBox's status", async () => {
    expect(await client.status()).toMatchObject({ "netbox-version": "4.5.0" });
  });
});

describe("NetboxClient authentication and permissions", () => {
  it("sends v1 tokens as `Token` and v2 tokens as `Bearer`, and both work", async () => {
    const v2 = new NetboxClient({ url: nb.url, token: V2 });
    expect(v2.authorization).toBe(`Bearer ${V2}`);
    expect(client.authorization).toBe(`Token ${V1}`);
    expect((await v2.sites()).length).toBe(nb.data.sites.length);
    expect((await client.sites()).length).toBe(nb.data.sites.length);
  });

  it("throws NetboxAuthenticationError for a wrong token, without retrying", async () => {
    for (const [token, detail] of [
      ["ffffffffffffffffffffffffffffffffffffffff", "Invalid v1 token"],
      ["nbt_4kq2v8r1x9zp.wrong", "Invalid v2 token"],
    ] as const) {
      const before = nb.requests.length;
      const err = await new NetboxClient({ url: nb.url, token, backoffMs: 1 }).sites().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetboxAuthenticationError);
      expect(err).toBeInstanceOf(NetboxApiError);
      expect(err).toMatchObject({ status: 403, message: expect.stringContaining(detail) });
      expect(nb.requests.length).toBe(before + 1);
    }
  });

  it("throws NetboxPermissionError naming the object type when MAC addresses are denied", async () => {
    nb.setDenied(["dcim.macaddress"]);
    try {
      const err = await client.macAddresses().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetboxPermissionError);
      expect(err).toBeInstanceOf(NetboxApiError);
      expect(err).toMatchObject({ status: 403, objectType: "dcim.macaddress", path: "/api/dcim/mac-addresses/" });
      expect((err as Error).message).toContain("dcim.macaddress");
      expect((err as Error).message).toContain("/api/dcim/mac-addresses/");
      expect((err as Error).message).toContain("dcim.view_macaddress");
      expect((err as NetboxApiError).body).toContain("You do not have permission to perform this action.");
      // Everything else still reads.
      expect((await client.interfaces({ device_id: nb.data.devices[3]!.id })).length).toBeGreaterThan(0);
    } finally {
      nb.setDenied([]);
    }
  });
});
