import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlurmBootstrapConfig } from "@fm/domain";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory, type Inventory } from "../../testing/inventory.ts";

let hub: TestHub;
let inv: Inventory;
let base: string;
beforeAll(async () => {
  hub = await startTestHub();
  inv = await seedInventory(hub.db.prisma, 2);
  base = `/api/v1/sites/${inv.sites.keflavik}/slurm-bootstrap-configs`;
});
afterAll(() => hub.close());

const userData = Buffer.from("#cloud-config\nruncmd:\n  - [systemctl, start, slurmd]\n").toString("base64");
const counts = async () => ({
  rows: await hub.db.prisma.slurmBootstrapConfig.count(),
  audit: await hub.db.prisma.auditLog.count(),
  events: await hub.db.prisma.inventoryEvent.count(),
});

describe("SLURM bootstrap configs", () => {
  it("creates, reads, replaces with If-Match and deletes, with audit and feed", async () => {
    const created = await hub.app.inject({
      method: "POST",
      url: `${base}/`,
      payload: {
        deviceRoleId: inv.roles["gpu-node"],
        image: "ubuntu-24.04-slurm",
        flavor: "gpu.h100.8",
        gres: "gpu:h100:8",
        userData,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json<SlurmBootstrapConfig>();
    expect(c).toMatchObject({
      siteId: inv.sites.keflavik,
      deviceRoleId: inv.roles["gpu-node"],
      gres: "gpu:h100:8",
      userData,
      version: 1,
    });
    expect(created.headers.location).toBe(`${base}/${c.id}`);

    const listed = (await hub.app.inject({ url: base })).json<{ items: SlurmBootstrapConfig[]; count: number }>();
    expect(listed).toMatchObject({ count: 1, items: [{ id: c.id }] });
    expect(
      (await hub.app.inject({ url: `/api/v1/sites/${inv.sites.stavanger}/slurm-bootstrap-configs/` })).json(),
    ).toMatchObject({ count: 0 });

    const got = await hub.app.inject({ url: `${base}/${c.id}/` });
    expect(got.json()).toEqual(c);
    const replaced = await hub.app.inject({
      method: "PUT",
      url: `${base}/${c.id}/`,
      headers: { "if-match": String(got.headers.etag) },
      payload: { image: "ubuntu-24.04-slurm-v2", flavor: "gpu.h100.8" },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    // PUT replaces: fields not given are cleared.
    expect(replaced.json()).toMatchObject({ image: "ubuntu-24.04-slurm-v2", gres: null, userData: null, version: 2 });
    const stale = await hub.app.inject({
      method: "PUT",
      url: `${base}/${c.id}`,
      headers: { "if-match": String(got.headers.etag) },
      payload: { image: "x", flavor: "y" },
    });
    expect(stale.statusCode).toBe(412);

    const audit = (
      await hub.app.inject({ url: `/api/v1/audit?resourceType=slurm_bootstrap_config&resourceId=${c.id}` })
    ).json<{ items: { action: string; diff: Record<string, { before: unknown; after: unknown }> }[] }>();
    expect(audit.items.map((a) => a.action)).toEqual([
      "slurm_bootstrap_config.create",
      "slurm_bootstrap_config.update",
    ]);
    // user-data may carry credentials: the audit keeps a digest, never the text.
    expect(JSON.stringify(audit.items)).not.toContain(userData);
    expect(String(audit.items[1]!.diff.userData!.before)).toMatch(/^sha256:[0-9a-f]{64}$/);

    const del = await hub.app.inject({ method: "DELETE", url: `${base}/${c.id}/` });
    expect(del.statusCode).toBe(204);
    expect((await hub.app.inject({ url: `${base}/${c.id}` })).statusCode).toBe(404);
    const feed = (await hub.app.inject({ url: "/api/v1/feeds/inventory?limit=1000" })).json<{
      items: { type: string; resourceId: string }[];
    }>();
    expect(feed.items.filter((e) => e.resourceId === c.id).map((e) => e.type)).toEqual([
      "slurm_bootstrap_config.created",
      "slurm_bootstrap_config.updated",
      "slurm_bootstrap_config.deleted",
    ]);
  });

  it("allows one row per (site, role): a second is 409", async () => {
    const body = { deviceRoleId: inv.roles["cpu-node"], image: "img", flavor: "flv" };
    expect((await hub.app.inject({ method: "POST", url: base, payload: body })).statusCode).toBe(201);
    const before = await counts();
    const dup = await hub.app.inject({ method: "POST", url: base, payload: { ...body, image: "other" } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ code: "slurm_bootstrap_config_exists" });
    expect(await counts()).toEqual(before);
    // The same role at another site is another pair.
    expect(
      (
        await hub.app.inject({
          method: "POST",
          url: `/api/v1/sites/${inv.sites.stavanger}/slurm-bootstrap-configs`,
          payload: body,
        })
      ).statusCode,
    ).toBe(201);
  });

  it.each([
    ["gpu8", { gres: "gpu8" }, 400, "body.gres"],
    ["gpu:0", { gres: "gpu:0" }, 400, "body.gres"],
    ["gpu:h100:8,", { gres: "gpu:h100:8," }, 400, "body.gres"],
    ["bad base64", { userData: "not base64!!" }, 400, "body.userData"],
    ["oversized userData", { userData: Buffer.alloc(64 * 1024 + 1, 97).toString("base64") }, 400, "body.userData"],
    ["empty image", { image: "" }, 400, "body.image"],
    ["unknown field", { sshKey: "ssh-ed25519 AAAA" }, 400, "body.sshKey"],
    ["deviceRoleId not a uuid", { deviceRoleId: "gpu-node" }, 400, "body.deviceRoleId"],
    ["unknown role", { deviceRoleId: "0190a5b4-0000-7000-8000-000000000099" }, 422, "body.deviceRoleId"],
  ])("rejects %s and writes nothing", async (_what, override, status, path) => {
    const before = await counts();
    const res = await hub.app.inject({
      method: "POST",
      url: base,
      payload: { deviceRoleId: inv.roles.hypervisor, image: "img", flavor: "flv", ...override },
    });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json<{ errors?: { path: string }[] }>().errors?.map((e) => e.path)).toContain(path);
    expect(await counts()).toEqual(before);
  });

  it("accepts GRES lists and 64 KiB of user-data exactly", async () => {
    const res = await hub.app.inject({
      method: "POST",
      url: base,
      payload: {
        deviceRoleId: inv.roles.hypervisor,
        image: "i",
        flavor: "f",
        gres: "gpu:8,nic:mlx5:2",
        userData: Buffer.alloc(64 * 1024, 97).toString("base64"),
      },
    });
    expect(res.statusCode, res.body).toBe(201);
  });

  it("answers 404 for an unknown site or config", async () => {
    const nowhere = "0190a5b4-0000-7000-8000-000000000042";
    expect((await hub.app.inject({ url: `/api/v1/sites/${nowhere}/slurm-bootstrap-configs` })).json()).toMatchObject({
      status: 404,
      code: "site_not_found",
    });
    expect(
      (
        await hub.app.inject({
          method: "POST",
          url: `/api/v1/sites/${nowhere}/slurm-bootstrap-configs`,
          payload: { deviceRoleId: inv.roles.hypervisor, image: "i", flavor: "f" },
        })
      ).statusCode,
    ).toBe(404);
    expect((await hub.app.inject({ method: "DELETE", url: `${base}/${nowhere}` })).json()).toMatchObject({
      code: "slurm_bootstrap_config_not_found",
    });
  });
});

describe("topology sync", () => {
  it("answers 422 site_not_topology_target for a site without a region, 202 with a listed request otherwise", async () => {
    const no = await hub.app.inject({ method: "POST", url: `/api/v1/sites/${inv.sites.stavanger}/topology-sync/` });
    expect(no.statusCode).toBe(422);
    expect(no.json()).toMatchObject({ code: "site_not_topology_target" });
    expect((await hub.app.inject({ url: `/api/v1/sites/${inv.sites.stavanger}/topology-sync/` })).json()).toMatchObject(
      { count: 0 },
    );

    const yes = await hub.app.inject({
      method: "POST",
      url: `/api/v1/sites/${inv.sites.keflavik}/topology-sync/`,
      payload: { reason: "tray R001-07 removed (node swap)" },
    });
    expect(yes.statusCode, yes.body).toBe(202);
    expect(yes.json()).toMatchObject({
      siteId: inv.sites.keflavik,
      region: "eu-north-ice",
      status: "REQUESTED",
      requestedBy: "local",
      reason: "tray R001-07 removed (node swap)",
    });
    const listed = (await hub.app.inject({ url: `/api/v1/sites/${inv.sites.keflavik}/topology-sync` })).json<{
      items: { id: string }[];
      count: number;
    }>();
    expect(listed.count).toBe(1);
    expect(listed.items[0]!.id).toBe(yes.json<{ id: string }>().id);
    expect(
      (
        await hub.app.inject({
          method: "POST",
          url: "/api/v1/sites/0190a5b4-0000-7000-8000-000000000042/topology-sync",
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await hub.app.inject({
          method: "POST",
          url: `/api/v1/sites/${inv.sites.keflavik}/topology-sync`,
          payload: { force: true },
        })
      ).statusCode,
    ).toBe(400);
  });
});

describe("audit log", () => {
  it("records sites' changes with principal, diff and request id, and filters", async () => {
    const created = await hub.app.inject({
      method: "POST",
      url: "/api/v1/sites",
      headers: { "x-request-id": "audit-site-1" },
      payload: { slug: "audited", name: "A" },
    });
    const id = created.json<{ id: string }>().id;
    await hub.app.inject({ method: "PATCH", url: `/api/v1/sites/${id}`, payload: { name: "B" } });
    await hub.app.inject({ method: "DELETE", url: `/api/v1/sites/${id}` });
    const all = (await hub.app.inject({ url: `/api/v1/audit/?resourceId=${id}` })).json<{
      items: { action: string; requestId: string; diff: Record<string, unknown> }[];
      count: number;
    }>();
    expect(all.items.map((a) => a.action)).toEqual(["site.create", "site.update", "site.delete"]);
    expect(all.items[0]).toMatchObject({
      requestId: "audit-site-1",
      diff: { slug: { before: null, after: "audited" } },
    });
    expect(all.items[1]!.diff).toEqual({ name: { before: "A", after: "B" } });
    expect((await hub.app.inject({ url: "/api/v1/audit?requestId=audit-site-1" })).json()).toMatchObject({ count: 1 });
    expect(
      (await hub.app.inject({ url: `/api/v1/audit?since=${new Date(Date.now() + 60_000).toISOString()}` })).json(),
    ).toMatchObject({ count: 0 });
    expect((await hub.app.inject({ url: "/api/v1/audit?since=now" })).statusCode).toBe(400);
  });

  it("refuses to delete a site that still has devices (409) and changes nothing", async () => {
    const res = await hub.app.inject({ method: "DELETE", url: `/api/v1/sites/${inv.sites.stavanger}` });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: "site_in_use" });
    expect((await hub.app.inject({ url: `/api/v1/sites/${inv.sites.stavanger}` })).statusCode).toBe(200);
  });
});
