/**
 * A site the hub's NetBox settings name and the hub does not have yet: the hub process creates
 * it at start from FM_NETBOX_DEVICE_FILTERS (before FM_EXPECTED_SATELLITES, whose satellite for it
 * is then created), and `npm run agent -- netbox` starts against it (no NETBOX_CLUSTER: the
 * clusters come from the hub) and names it with NetBox's name and ids as it pushes the devices.
 * The NetBox token holds exactly the rollout guide's permissions plus the ones docs/agents.md adds.
 */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import type { Device, Site } from "@fm/domain";
import { startAgent, type AgentProcess } from "@fm/test-support/agents";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { eventually } from "@fm/test-support/wait";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
/** The rollout guide's "Required NetBox Object Permissions" table: its reads, and its writes. */
const GUIDE_PERMISSIONS = [
  ...["site", "location", "rack", "devicetype", "devicerole", "device", "interface", "cable", "macaddress"],
  ...["module", "consoleport", "consoleserverport"],
]
  .map((m) => `dcim.view_${m}`)
  .concat(["ipam.view_ipaddress", "ipam.view_prefix", "extras.view_tag"])
  .concat([
    "dcim.change_device",
    "dcim.change_interface",
    "dcim.add_macaddress",
    "dcim.add_cable",
    "dcim.delete_cable",
  ]);
/** What docs/agents.md ("NetBox token permissions") adds to the guide's table. */
const DOCUMENTED_ADDITIONS = ["core.view_objectchange", "virtualization.view_cluster", "extras.view_configcontext"];
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

let hub: HubProcess;
let admin: string;
let nb: NetboxServer;
let agent: AgentProcess;

const api = async <T>(path: string, method = "GET") => {
  const res = await fetch(`${hub.url}${path}`, { method, headers: bearer(admin) });
  return (await res.json()) as T;
};

beforeAll(async () => {
  nb = await startNetboxServer({
    token: TOKEN,
    data: realisticFleet({ sites: 2, devicesPerSite: 12 }),
    permissions: [...GUIDE_PERMISSIONS, ...DOCUMENTED_ADDITIONS],
  });
  cleanups.push(() => nb.stop());
  const db = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => db.drop());
  hub = await startHub({
    DATABASE_URL: db.url,
    FM_NETBOX_DEVICE_FILTERS: JSON.stringify([{ site: "iad1", clusters: ["iad1-compute"] }]),
    FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify({ "gpu-node": "GPU_COMPUTE" }),
    FM_EXPECTED_SATELLITES: JSON.stringify([{ name: "sys3-iad1", sites: ["iad1"], environment: "dev" }]),
  });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
}, 120_000);

it("creates the site from the settings at start, its satellite too, and the agent names it from NetBox and ingests its devices", async () => {
  const [site] = (await api<{ items: Site[] }>("/api/v1/sites/?slug=iad1")).items;
  expect(site).toMatchObject({ slug: "iad1", name: "iad1", netboxSiteId: null });
  // The expected satellite naming the site was created (not skipped): its secrets are issued by rotation.
  const creds = await api<{ clientId: string; clientSecret: string }>(
    "/api/v1/satellites/sys3-iad1/agents/netbox/rotate-secret",
    "POST",
  );
  expect(creds.clientId).toBe("netbox-agent-sys3-iad1");

  agent = await startAgent("netbox", {
    FM_HUB_URL: hub.url,
    FM_CLIENT_ID: creds.clientId,
    FM_CLIENT_SECRET: creds.clientSecret,
    FM_SITE: "iad1",
    FM_REFLECT_INTERVAL_S: "1",
    FM_BACKOFF_BASE_MS: "250",
    FM_BACKOFF_MAX_S: "2",
    NETBOX_URL: nb.url,
    NETBOX_TOKEN: TOKEN,
    NETBOX_RESYNC_INTERVAL_S: "3600",
  });
  cleanups.push(() => agent.stop("SIGKILL"));

  const nbSite = nb.data.sites.find((s) => s.slug === "iad1")!;
  const nbCluster = nb.data.clusters.find((c) => c.name === "iad1-compute")!;
  const want = nb.data.devices.filter((d) => d.site === nbSite.id && d.cluster === nbCluster.id);
  expect(want.length).toBeGreaterThan(3);
  const got = await eventually(async () => {
    const d = (await api<{ items: Device[] }>("/api/v1/devices/?site=iad1&limit=1000")).items;
    expect(d.length).toBe(want.length);
    return d;
  }, 30_000);
  expect(got.map((d) => d.netbox.id).sort()).toEqual(want.map((d) => d.id).sort());
  expect(await api<Site>(`/api/v1/sites/${site!.id}`)).toMatchObject({
    slug: "iad1",
    name: nbSite.name,
    netboxSiteId: nbSite.id,
    netboxClusterId: nbCluster.id,
  });
  expect(nbSite.name).not.toBe("iad1");
  // With exactly those permissions nothing the agent reads is refused: not its full read (above),
  // nor the change-log and MAC polls of the cycles after it.
  const polls = () => nb.requests.filter((r) => r.path === "/api/core/object-changes/").length;
  await eventually(async () => expect(polls()).toBeGreaterThanOrEqual(2), 30_000);
  const refused = await agent.metric("fleet_manager_reflector_errors_total", {
    store: "netbox-devices",
    reason: "netbox_permission",
  });
  expect(refused ?? 0).toBe(0);
}, 90_000);
