/**
 * NetBox sync benchmark (issue #6): 10,000 devices with 8 interfaces each, served by the
 * NetBox test server (NetBox 4.5's REST API, 1,000 per page). Reports the netbox agent's full
 * read, the hub's apply of the pushed view (first load: creates; again: unchanged; 1 % edited),
 * and, as the same-run baseline, the bare paginated NetBox reads the agent cannot avoid.
 */
import { pino } from "pino";
import { NetboxClient } from "@fm/clients";
import { agentHubClient } from "./agent-client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { netboxReflector, resolveScope } from "../apps/satellite-agents/src/netbox-agent/agent.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import type { AgentContext } from "../apps/satellite-agents/src/runtime/agent.ts";
import { realisticFleet, startNetboxServer } from "@fm/test-support/netbox-server";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";

type Report = (what: string, value: string, note?: string) => void;
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = {
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
} as const;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function netboxSync(
  report: Report,
  devices = Number(process.env.BENCH_NETBOX_DEVICES ?? 10_000),
): Promise<void> {
  const t0 = performance.now();
  const data = realisticFleet({ sites: 1, devicesPerSite: devices, interfacesPerDevice: 8 });
  const nb = await startNetboxServer({ token: TOKEN, data });
  report(
    "(setup) generate the NetBox fleet",
    s(performance.now() - t0),
    `${data.devices.length} devices, ${data.interfaces.length} interfaces`,
  );
  const db = await createTestDatabase();
  await migrate(db.url);
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" });
  try {
    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const post = (path: string, body: unknown) =>
      fetch(`${hub.url}${path}`, {
        method: "POST",
        headers: { ...bearer(admin), "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    const slug = data.sites[0]!.slug;
    const site = (await post("/api/v1/sites/", { slug, name: slug })) as { id: string };
    const hubClient = await agentHubClient(hub.url, admin, {
      satellite: "bench-nb",
      siteIds: [site.id],
      agent: "netbox",
    });
    const netbox = new NetboxClient({ url: nb.url, token: TOKEN });
    const scope = await resolveScope(netbox, slug, data.clusters[0]!.name);
    const ctx = {
      config: {
        NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: MAPPING,
        NETBOX_RESYNC_INTERVAL_S: 0.001,
        NETBOX_PAGE_SIZE: 1000,
      },
      log: pino({ level: "silent" }),
      hub: hubClient,
      site: { id: site.id, slug },
      satellite: "bench-nb",
      metrics: createAgentMetrics({ agent: "netbox", site: slug, satellite: "bench-nb" }),
      now: Date.now,
      signal: new AbortController().signal,
    };
    const spec = netboxReflector(ctx as unknown as AgentContext<never>, netbox, scope);
    const signal = new AbortController().signal;
    const cycle = async () => {
      const c0 = performance.now();
      const items = await spec.list(signal);
      const c1 = performance.now();
      const r = await spec.push(items, new Date(), signal);
      const c2 = performance.now();
      return { read: c1 - c0, push: c2 - c1, total: c2 - c0, r, items: items.length };
    };
    const first = await cycle();
    report(
      `(n) NetBox sync, first load: ${first.items} devices × 8 interfaces`,
      s(first.total),
      `NetBox read ${s(first.read)}, hub push+apply ${s(first.push)}; created ${String(first.r.created)}`,
    );
    const again = await cycle();
    report(
      "(n) NetBox sync, full read, nothing changed",
      s(again.total),
      `NetBox read ${s(again.read)}, hub push+apply ${s(again.push)}; unchanged ${String(again.r.unchanged)}`,
    );
    const inCluster = data.devices.filter((d) => d.cluster === scope.clusterId);
    for (const d of inCluster.slice(0, Math.ceil(inCluster.length / 100))) d.serial = `${d.serial}-X`;
    const edited = await cycle();
    report(
      "(n) NetBox sync, full read, 1 % of devices edited",
      s(edited.total),
      `NetBox read ${s(edited.read)}, hub push+apply ${s(edited.push)}; updated ${String(edited.r.updated)}`,
    );
    const b0 = performance.now();
    await netbox.devices({ cluster_id: scope.clusterId, site_id: scope.siteId });
    await netbox.interfaces({ site_id: scope.siteId });
    report(
      "(n) baseline: the bare NetBox device and interface reads",
      s(performance.now() - b0),
      `sync / bare reads: ${(edited.total / (performance.now() - b0)).toFixed(2)}×`,
    );
  } finally {
    await hub.stop();
    await nb.stop();
    await db.drop();
  }
}
