/**
 * The discrepancy report through real reflection pushes, over HTTP with the agents' own tokens:
 * each kind appears when the sources disagree and clears when they agree, keeps the time it
 * was first seen while it stays open, and is counted in the summary and on /metrics. Each test
 * has its own site and satellite.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Discrepancy, DiscrepancyList, DiscrepancySummary } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { TEST_ADMIN_SECRET, startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";
import { reconcileDiscrepancies } from "./service.ts";

let hub: TestHub & { url: string; adminToken: string };
beforeAll(async () => {
  hub = await startOAuthTestHub({ staleAfterMs: 600_000 });
});
afterAll(() => hub.close());

interface TestSite {
  id: string;
  slug: string;
  tokens: Record<"openstack" | "slurm" | "health-status", string>;
  deviceId(name: string): Promise<string>;
  push(source: string, items: unknown[], observedAt?: Date): Promise<Response>;
  report(query?: string, token?: string): Promise<Discrepancy[]>;
}

/** A site with gpu nodes `<slug>-gpu-<n>` and a switch NetBox knows, and its satellite's agents. */
async function site(slug: string, gpus = 2): Promise<TestSite> {
  const names = Array.from({ length: gpus }, (_, i) => `${slug}-gpu-${i}`);
  const id = await seedNetboxOnlyDevices(hub.db.prisma, { slug }, [
    ...names.map((name) => ({ name, role: "gpu-node" as const })),
    { name: `${slug}-leaf-0`, role: "leaf-switch" as const },
  ]);
  const res = await fetch(`${hub.url}/api/v1/satellites`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify({ name: `sat-${slug}`, siteIds: [id], environment: "prod" }),
  });
  expect(res.status).toBe(201);
  const secrets = ((await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] })
    .secrets;
  const token = async (agent: string) => {
    const s = secrets.find((x) => x.agent === agent)!;
    return clientToken(hub.url, s.clientId, s.clientSecret);
  };
  const tokens = {
    openstack: await token("openstack"),
    slurm: await token("slurm"),
    "health-status": await token("health-status"),
  };
  const tokenFor = (source: string) =>
    source === "slurm" ? tokens.slurm : source === "health" ? tokens["health-status"] : tokens.openstack;
  return {
    id,
    slug,
    tokens,
    deviceId: async (name) => (await hub.db.prisma.device.findFirstOrThrow({ where: { siteId: id, name } })).id,
    push: (source, items, observedAt = new Date()) =>
      fetch(`${hub.url}/api/v1/sites/${id}/reflections/${source}`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(tokenFor(source)) },
        body: JSON.stringify({ observedAt: observedAt.toISOString(), complete: true, items }),
      }),
    async report(query = "", token = hub.adminToken) {
      const r = await fetch(`${hub.url}/api/v1/sites/${id}/discrepancies/${query}`, { headers: bearer(token) });
      expect(r.status, await r.clone().text()).toBe(200);
      return ((await r.json()) as DiscrepancyList).items;
    },
  };
}

const ironicNode = (uuid: string, name: string | null, provisionState = "available") => ({
  uuid,
  name,
  provisionState,
  targetProvisionState: null,
  powerState: "power off",
  maintenance: false,
  maintenanceReason: null,
  lastError: null,
  fault: null,
});
const slurmNode = (name: string, state: string, flags: string[] = [], reason: string | null = null) => ({
  name,
  state,
  flags,
  reason,
  partitions: ["gpu"],
});
const healthItem = (name: string, status: string) => ({ name, status, conditions: [] });
const kinds = (items: Discrepancy[]) => items.map((d) => `${d.kind}:${d.name}`).sort();
const uuid = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, "0")}`;

async function patchDevice(id: string, body: Record<string, unknown>) {
  const r = await fetch(`${hub.url}/api/v1/devices/${id}`, {
    method: "PATCH",
    headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
    body: JSON.stringify(body),
  });
  expect(r.status, await r.clone().text()).toBe(200);
}

describe("Ironic against NetBox", () => {
  it("an active gpu node without an Ironic node, and an Ironic node matching no device, appear and clear", async () => {
    const s = await site("ir-match");
    // Before Ironic ever reports for the site, NetBox alone is no disagreement.
    expect(await s.report()).toEqual([]);

    const first = new Date();
    expect(
      (await s.push("ironic-overcloud", [ironicNode(uuid(1), "ir-match-gpu-0"), ironicNode(uuid(9), "stray")])).status,
    ).toBe(200);
    const open = await s.report();
    expect(kinds(open)).toEqual(["ironic_node_unmatched:stray", "netbox_active_without_ironic_node:ir-match-gpu-1"]);
    const missing = open.find((d) => d.kind === "netbox_active_without_ironic_node")!;
    expect(missing).toMatchObject({
      siteId: s.id,
      deviceId: await s.deviceId("ir-match-gpu-1"),
      observed: { "netbox.status": "active", "ironic.node": null },
    });
    expect(open.find((d) => d.kind === "ironic_node_unmatched")).toMatchObject({
      deviceId: null,
      observed: { "ironic-overcloud.node": "stray", "hub.device": null },
    });
    expect(Date.parse(missing.since)).toBeGreaterThanOrEqual(first.getTime() - 1000);

    // Still open after another push: the same row, first seen at the first push.
    expect(
      (await s.push("ironic-overcloud", [ironicNode(uuid(1), "ir-match-gpu-0"), ironicNode(uuid(9), "stray")])).status,
    ).toBe(200);
    expect(await s.report()).toEqual(open);

    // The sources agree: Ironic lists the missing node and no longer the stray one.
    const agree = [ironicNode(uuid(1), "ir-match-gpu-0"), ironicNode(uuid(2), "ir-match-gpu-1")];
    expect((await s.push("ironic-overcloud", agree)).status).toBe(200);
    expect(await s.report()).toEqual([]);
  });

  it("a device that arrived by a path that judged nothing (a bulk import) is judged by the next Ironic push", async () => {
    const s = await site("ir-late", 1);
    expect((await s.push("ironic-overcloud", [ironicNode(uuid(61), "ir-late-gpu-0")])).status).toBe(200);
    expect(await s.report()).toEqual([]);
    // Written straight into the table, as the demo seed and the bench loaders do: no reconcile ran.
    await seedNetboxOnlyDevices(hub.db.prisma, { slug: "ir-late" }, [{ name: "ir-late-gpu-9", role: "gpu-node" }]);
    expect(await s.report()).toEqual([]);
    // Not the source's first push at the site, and the push does not list it: still its verdict.
    expect((await s.push("ironic-overcloud", [ironicNode(uuid(61), "ir-late-gpu-0")])).status).toBe(200);
    expect(kinds(await s.report())).toEqual(["netbox_active_without_ironic_node:ir-late-gpu-9"]);
  });

  it("Ironic available while NetBox says staged appears, and clears once Ironic deploys it", async () => {
    const s = await site("ir-staged", 1);
    await hub.db.prisma.device.updateMany({ where: { siteId: s.id }, data: { netboxStatus: "staged" } });
    expect((await s.push("ironic-overcloud", [ironicNode(uuid(11), "ir-staged-gpu-0", "available")])).status).toBe(200);
    expect(await s.report()).toEqual([
      expect.objectContaining({
        kind: "ironic_available_netbox_staged",
        name: "ir-staged-gpu-0",
        observed: { "netbox.status": "staged", "ironic.provisionState": "available", "ironic.node": uuid(11) },
      }),
    ]);
    expect((await s.push("ironic-overcloud", [ironicNode(uuid(11), "ir-staged-gpu-0", "active")])).status).toBe(200);
    expect(await s.report()).toEqual([]);
  });
});

describe("SLURM against the hub", () => {
  it("a hand-made drain on an uncordoned device appears, clears on cordon, and the hub's own drain is none", async () => {
    const s = await site("sl-drain", 1);
    const name = "sl-drain-gpu-0";
    const id = await s.deviceId(name);
    expect(
      (await s.push("slurm", [slurmNode(name, "IDLE", ["DRAIN"], "bad dimm"), slurmNode("ghost-1", "IDLE")])).status,
    ).toBe(200);
    const open = await s.report();
    expect(kinds(open)).toEqual(["slurm_drained_externally:sl-drain-gpu-0", "slurm_node_unmatched:ghost-1"]);
    expect(open.find((d) => d.kind === "slurm_node_unmatched")).toMatchObject({ deviceId: null });
    expect(open.find((d) => d.kind === "slurm_drained_externally")).toMatchObject({
      deviceId: id,
      observed: { "slurm.state": "IDLE+DRAIN", "slurm.reason": "bad dimm", "hub.cordoned": "false" },
    });

    // The operator cordons the device in the hub: it is no longer allocatable, the drain agrees.
    await patchDevice(id, { cordoned: true, cordonReason: "bad dimm" });
    expect(kinds(await s.report())).toEqual(["slurm_node_unmatched:ghost-1"]);
    await patchDevice(id, { cordoned: false });
    expect(kinds(await s.report())).toEqual([
      "slurm_drained_externally:sl-drain-gpu-0",
      "slurm_node_unmatched:ghost-1",
    ]);

    // A drain the hub made (its reason prefix) is not someone else's; the ghost node is gone.
    expect((await s.push("slurm", [slurmNode(name, "IDLE", ["DRAIN"], "fleet-manager cordon: bad dimm")])).status).toBe(
      200,
    );
    expect(await s.report()).toEqual([]);
  });

  it("a SLURM push leaves the Ironic source's unmatched nodes as they are", async () => {
    const s = await site("sl-keeps", 1);
    expect(
      (await s.push("ironic-overcloud", [ironicNode(uuid(21), "sl-keeps-gpu-0"), ironicNode(uuid(22), "orphan")]))
        .status,
    ).toBe(200);
    expect((await s.push("slurm", [slurmNode("sl-keeps-gpu-0", "IDLE")])).status).toBe(200);
    expect(kinds(await s.report())).toEqual(["ironic_node_unmatched:orphan"]);
  });
});

describe("health and staleness", () => {
  it("health critical on an uncordoned device appears and clears when it is cordoned", async () => {
    const s = await site("hl-crit", 1);
    const id = await s.deviceId("hl-crit-gpu-0");
    expect((await s.push("health", [healthItem("hl-crit-gpu-0", "critical")])).status).toBe(200);
    expect(await s.report()).toEqual([
      expect.objectContaining({
        kind: "health_critical_not_cordoned",
        deviceId: id,
        observed: { "health.status": "critical", "hub.cordoned": "false" },
      }),
    ]);
    await patchDevice(id, { cordoned: true, cordonReason: "xid 79" });
    expect(await s.report()).toEqual([]);
  });

  it("a device no source has observed for longer than the staleness window appears, since its last observation + window", async () => {
    const s = await site("st-old", 1);
    const lastSeen = new Date(Date.now() - 3600_000);
    await hub.db.prisma.deviceObservation.updateMany({
      where: { device: { siteId: s.id, name: "st-old-gpu-0" } },
      data: { netboxObservedAt: lastSeen },
    });
    const id = await s.deviceId("st-old-gpu-0");
    const open = await s.report("?kind=unobserved");
    expect(open).toEqual([
      {
        id,
        siteId: s.id,
        kind: "unobserved",
        deviceId: id,
        name: "st-old-gpu-0",
        observed: { "hub.lastObservedAt": lastSeen.toISOString() },
        since: new Date(lastSeen.getTime() + 600_000).toISOString(),
      },
    ]);
    // SLURM observes it: it is seen again.
    expect((await s.push("slurm", [slurmNode("st-old-gpu-0", "IDLE")])).status).toBe(200);
    expect(await s.report("?kind=unobserved")).toEqual([]);
  });
});

describe("a push derives again only the devices it touched", () => {
  it("after every push and cordon of a seeded random sequence, the kept set is what deriving the whole site gives", async () => {
    const gpus = 8;
    const s = await site("scope", gpus);
    const names = Array.from({ length: gpus }, (_, i) => `scope-gpu-${i}`);
    const ids = await Promise.all(names.map((n) => s.deviceId(n)));
    // A small deterministic generator (mulberry32): a failure names its seed and step.
    let seed = 20261204;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const some = () => names.filter(() => rand() < 0.7);
    const kept = async () =>
      (
        await hub.db.prisma.discrepancy.findMany({
          where: { siteId: s.id },
          select: { kind: true, subject: true, observed: true, firstSeenAt: true },
        })
      )
        .map((r) => JSON.stringify(r))
        .sort();
    // Deriving the whole site again, in a transaction rolled back: what the kept set should be.
    const whole = async () => {
      let rows: string[] = [];
      await hub.db.prisma
        .$transaction(async (tx) => {
          await reconcileDiscrepancies(tx, s.id, new Date());
          rows = (
            await tx.discrepancy.findMany({
              where: { siteId: s.id },
              select: { kind: true, subject: true, observed: true, firstSeenAt: true },
            })
          )
            .map((r) => JSON.stringify(r))
            .sort();
          throw new Error("rolled back");
        })
        .catch((err: unknown) => {
          if ((err as Error).message !== "rolled back") throw err;
        });
      return rows;
    };
    let opened = 0;
    for (let step = 0; step < 40; step++) {
      const action = pick(["ironic", "slurm", "health", "cordon"] as const);
      const items =
        action === "ironic"
          ? some().map((n) => ironicNode(uuid(100 + names.indexOf(n)), n, pick(["available", "active"])))
          : action === "slurm"
            ? some().map((n) => slurmNode(n, "IDLE", rand() < 0.4 ? ["DRAIN"] : [], "hand drain"))
            : some().map((n) => healthItem(n, pick(["ok", "critical"])));
      if (action !== "cordon")
        expect((await s.push(action === "ironic" ? "ironic-overcloud" : action, items)).status).toBe(200);
      else {
        const id = pick(ids);
        const device = await hub.db.prisma.device.findUniqueOrThrow({ where: { id } });
        await patchDevice(id, device.cordoned ? { cordoned: false } : { cordoned: true, cordonReason: "scope test" });
      }
      const now = await kept();
      expect(now, `seed 20261204, step ${step} (${action})`).toEqual(await whole());
      opened = Math.max(opened, now.length);
    }
    // The sequence did open discrepancies of several kinds on the way (the comparison was not of empty sets).
    expect(opened).toBeGreaterThan(2);
  });
});

describe("a role's new device class", () => {
  it("opens and closes the Ironic discrepancies of every site with devices of that role", async () => {
    // Several sites with gpu-node devices (this file's other sites have them too): each is derived again.
    const sites = [await site("reclass", 1), await site("reclass-b", 1), await site("reclass-c", 1)];
    const settings = (mapping: Record<string, string>) =>
      fetch(`${hub.url}/api/v1/netbox/settings`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(hub.adminToken) },
        body: JSON.stringify({ deviceFilters: [], deviceRoleClassMapping: mapping }),
      });
    const reports = async () => Promise.all(sites.map(async (s) => kinds(await s.report())));
    const open = sites.map((s) => [`netbox_active_without_ironic_node:${s.slug}-gpu-0`]);
    for (const s of sites) expect((await s.push("ironic-overcloud", [])).status).toBe(200);
    expect(await reports()).toEqual(open);
    try {
      // gpu-node devices are no longer ones Ironic must know: no disagreement at any of the sites.
      expect((await settings({ "gpu-node": "OTHER" })).status).toBe(200);
      expect(await reports()).toEqual(sites.map(() => []));
    } finally {
      expect((await settings({ "gpu-node": "GPU_COMPUTE" })).status).toBe(200);
    }
    expect(await reports()).toEqual(open);
  });
});

describe("reading the report", () => {
  it("pages with a cursor, counts per kind fleet-wide and on /metrics, and a read-only caller reads it", async () => {
    const s = await site("rd-page", 3);
    await hub.db.prisma.device.updateMany({ where: { siteId: s.id }, data: { netboxStatus: "staged" } });
    const nodes = [0, 1, 2].map((n) => ironicNode(uuid(31 + n), `rd-page-gpu-${n}`));
    expect((await s.push("ironic-overcloud", [...nodes, ironicNode(uuid(40), "loose")])).status).toBe(200);

    const readOnly = await clientToken(hub.url, "fleet-admin", TEST_ADMIN_SECRET, "fleet.read");
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await fetch(
        `${hub.url}/api/v1/sites/${s.id}/discrepancies?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        {
          headers: bearer(readOnly),
        },
      );
      expect(r.status).toBe(200);
      const page = (await r.json()) as DiscrepancyList;
      expect(page.count).toBe(4);
      seen.push(...page.items.map((d) => `${d.kind}:${d.name}`));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([
      "ironic_available_netbox_staged:rd-page-gpu-0",
      "ironic_available_netbox_staged:rd-page-gpu-1",
      "ironic_available_netbox_staged:rd-page-gpu-2",
      "ironic_node_unmatched:loose",
    ]);

    const summary = (await (
      await fetch(`${hub.url}/api/v1/discrepancies/summary`, { headers: bearer(readOnly) })
    ).json()) as DiscrepancySummary;
    expect(summary.sites.find((x) => x.slug === "rd-page")).toEqual({
      siteId: s.id,
      slug: "rd-page",
      total: 4,
      byKind: { ironic_available_netbox_staged: 3, ironic_node_unmatched: 1 },
    });
    expect(summary.byKind.ironic_available_netbox_staged).toBeGreaterThanOrEqual(3);
    expect(summary.total).toBe(Object.values(summary.byKind).reduce((a, b) => a + b, 0));

    const metrics = await (await fetch(`${hub.url}/metrics`)).text();
    expect(metrics).toContain('fleet_manager_discrepancies{site="rd-page",kind="ironic_available_netbox_staged"} 3');
    expect(metrics).toContain('fleet_manager_discrepancies{site="rd-page",kind="ironic_node_unmatched"} 1');
  });

  it("answers 404 for an unknown site and 400 for an unknown kind", async () => {
    const unknown = await fetch(`${hub.url}/api/v1/sites/${uuid(99)}/discrepancies`, {
      headers: bearer(hub.adminToken),
    });
    expect(unknown.status).toBe(404);
    const s = await site("rd-bad", 1);
    const bad = await fetch(`${hub.url}/api/v1/sites/${s.id}/discrepancies?kind=nope`, {
      headers: bearer(hub.adminToken),
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/problem\+json/);
  });
});

describe("the fleet-wide list", () => {
  /** Two sites: `fl-a` with a staged gpu node Ironic offers and a stray Ironic node, `fl-b` with a hand drain. */
  async function twoSites() {
    const a = await site("fl-a", 2);
    await hub.db.prisma.device.updateMany({ where: { siteId: a.id }, data: { netboxStatus: "staged" } });
    expect(
      (
        await a.push("ironic-overcloud", [
          ironicNode(uuid(71), "fl-a-gpu-0"),
          ironicNode(uuid(72), "fl-a-gpu-1"),
          ironicNode(uuid(73), "fl-a-stray"),
        ])
      ).status,
    ).toBe(200);
    const b = await site("fl-b", 1);
    expect((await b.push("slurm", [slurmNode("fl-b-gpu-0", "IDLE", ["DRAIN"], "bad psu")])).status).toBe(200);
    return { a, b };
  }
  const list = async (query: string, token = hub.adminToken) => {
    const r = await fetch(`${hub.url}/api/v1/discrepancies${query}`, { headers: bearer(token) });
    expect(r.status, await r.clone().text()).toBe(200);
    return (await r.json()) as DiscrepancyList;
  };
  const names = (l: DiscrepancyList) => l.items.map((d) => `${d.kind}:${d.name}`).sort();

  it("filters by several sites, several kinds and a name, and a read-only caller pages through it", async () => {
    const { a, b } = await twoSites();
    expect(names(await list("?site=fl-a,fl-b"))).toEqual([
      "ironic_available_netbox_staged:fl-a-gpu-0",
      "ironic_available_netbox_staged:fl-a-gpu-1",
      "ironic_node_unmatched:fl-a-stray",
      "slurm_drained_externally:fl-b-gpu-0",
    ]);
    // A site by id and another by slug; one kind of each site's.
    expect(names(await list(`?site=${a.id},fl-b&kind=ironic_node_unmatched,slurm_drained_externally`))).toEqual([
      "ironic_node_unmatched:fl-a-stray",
      "slurm_drained_externally:fl-b-gpu-0",
    ]);
    expect(names(await list("?site=fl-b&kind=ironic_node_unmatched"))).toEqual([]);
    // The name search: a case-insensitive substring, its LIKE characters taken literally.
    expect(names(await list("?site=fl-a,fl-b&name=GPU-1"))).toEqual(["ironic_available_netbox_staged:fl-a-gpu-1"]);
    expect(names(await list("?site=fl-a,fl-b&name=gpu_"))).toEqual([]);
    expect(names(await list("?site=fl-a,fl-b&name=%25"))).toEqual([]);
    const one = (await list("?site=fl-b")).items[0]!;
    expect(one).toMatchObject({
      siteId: b.id,
      deviceId: await b.deviceId("fl-b-gpu-0"),
      observed: { "slurm.state": "IDLE+DRAIN", "slurm.reason": "bad psu", "hub.cordoned": "false" },
    });

    // Every site unless told: both sites' rows are among the fleet's, paged with the exact count.
    const readOnly = await clientToken(hub.url, "fleet-admin", TEST_ADMIN_SECRET, "fleet.read");
    const seen: string[] = [];
    let cursor: string | null = null;
    let count = -1;
    do {
      const page: DiscrepancyList = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`, readOnly);
      expect(page.items.length).toBeLessThanOrEqual(2);
      count = page.count;
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.length).toBe(count);
    expect(new Set(seen).size).toBe(count);
    const both = await list("?site=fl-a,fl-b");
    for (const d of both.items) expect(seen).toContain(d.id);
  });

  it("answers 400 problem+json naming the parameter for an unknown site, an unknown kind or an empty list", async () => {
    await site("fl-bad", 1);
    for (const [query, param, text] of [
      ["?site=fl-bad,nowhere", "querystring.site", /nowhere/],
      ["?kind=ironic_node_unmatched,nope", "querystring.kind", /nope/],
      ["?kind=,", "querystring.kind", /comma-separated/],
      ["?limit=0", "querystring.limit", /./],
    ] as const) {
      const r = await fetch(`${hub.url}/api/v1/discrepancies${query}`, { headers: bearer(hub.adminToken) });
      expect(r.status, query).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
      const body = (await r.json()) as { detail: string; errors?: { path?: string; message: string }[] };
      expect(
        body.errors?.map((e) => e.path),
        query,
      ).toContain(param);
      expect(JSON.stringify(body), query).toMatch(text);
    }
  });

  it("is refused without a token and is in the OpenAPI document with its filters", async () => {
    expect((await fetch(`${hub.url}/api/v1/discrepancies`)).status).toBe(401);
    const doc = (await (await fetch(`${hub.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string }[] } }>;
    };
    expect(doc.paths["/api/v1/discrepancies"]?.get?.parameters?.map((p) => p.name).sort()).toEqual([
      "cursor",
      "kind",
      "limit",
      "name",
      "site",
    ]);
  });
});
