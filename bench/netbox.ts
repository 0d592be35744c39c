/**
 * NetBox sync benchmark: 10,000 devices with 8 interfaces each, served by the NetBox test
 * server (NetBox 4.5's REST API, 1,000 per page). Reports the netbox agent's full read, the
 * hub's apply of the pushed view (first load: creates; again: unchanged; 1 % edited), and, as
 * the same-run baseline, the bare paginated NetBox reads the agent cannot avoid: devices,
 * interfaces (whose link peers and connected endpoints carry the cable peers, and whose
 * mac_addresses carry MACs without a primary), device types and the IPs of management
 * interfaces of devices without an OOB IP, in the same order and batches. Both sides must have read the same pages
 * (endpoint, filters, bytes): the benchmark stops if not. Also reported: NetBox requests per
 * agent cycle, for a full read and for a quiet cycle (change-log poll, nothing changed).
 */
import { pino } from "pino";
import { NetboxClient, type NetboxDevice, type NetboxInterface } from "@fm/clients";
import { agentHubClient } from "./agent-client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { netboxReflector, resolveScope } from "../apps/satellite-agents/src/netbox-agent/agent.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import type { AgentContext } from "../apps/satellite-agents/src/runtime/agent.ts";
import { realisticFleet, startNetboxServer } from "@fm/test-support/netbox-server";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = {
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
} as const;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** A fetch that records each response's request (path and filters) and size. */
function recordingFetch() {
  const pages: string[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    pages.push(`${url.pathname}?${url.searchParams.toString()} ${res.headers.get("content-length")} bytes`);
    return res;
  };
  return { fetch: fetcher, pages };
}

/** "devices 10, interfaces 80, ...": requests by endpoint. */
function pagesByEndpoint(pages: string[]): string {
  const n = new Map<string, number>();
  for (const p of pages) {
    const endpoint = p.replace(/^\/api\/([^?]+)\/\?.*$/, "$1");
    n.set(endpoint, (n.get(endpoint) ?? 0) + 1);
  }
  return [...n].map(([e, k]) => `${e} ${k}`).join(", ");
}

/** The reads of the agent's full read, bare: no mapping, no push. */
async function bareReads(netbox: NetboxClient, scope: { siteId: number; clusterIds: number[] }): Promise<void> {
  const devices: NetboxDevice[] = await netbox.devices({
    cluster_id: scope.clusterIds,
    site_id: scope.siteId,
    exclude: "config_context",
  });
  const ids = new Set(devices.map((d) => d.id));
  const mine = (await netbox.interfaces({ site_id: scope.siteId })).filter((i) => ids.has(i.device.id));
  const mgmt = new Set(mine.filter((i: NetboxInterface) => i.mgmt_only).map((i) => i.device.id));
  const withoutOob = devices.filter((d) => !d.oob_ip && mgmt.has(d.id)).map((d) => d.id);
  const batches = (list: number[]) =>
    Array.from({ length: Math.ceil(list.length / 100) }, (_, k) => list.slice(k * 100, k * 100 + 100));
  await Promise.all([
    netbox.deviceTypes(),
    (async () => {
      for (const b of batches(withoutOob)) await netbox.ipAddresses({ device_id: b });
    })(),
  ]);
}

export async function netboxSync(report: Report, devices = knob("BENCH_NETBOX_DEVICES", 10_000, 50)): Promise<void> {
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
  // The production log level (info: two lines per request), kept unparsed by this process.
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
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
    const agentReads = recordingFetch();
    const netbox = new NetboxClient({ url: nb.url, token: TOKEN, fetch: agentReads.fetch });
    const scope = await resolveScope(netbox, slug, [data.clusters[0]!.name]);
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
      agentReads.pages.length = 0;
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
    const inCluster = data.devices.filter((d) => d.cluster !== null && scope.clusterIds.includes(d.cluster));
    for (const d of inCluster.slice(0, Math.ceil(inCluster.length / 100))) d.serial = `${d.serial}-X`;
    const edited = await cycle();
    report(
      "(n) NetBox sync, full read, 1 % of devices edited",
      s(edited.total),
      `NetBox read ${s(edited.read)}, hub push+apply ${s(edited.push)}; updated ${String(edited.r.updated)}`,
    );
    const fullReadPages = [...agentReads.pages];
    report(
      "(n) NetBox requests per agent cycle, full read",
      String(fullReadPages.length),
      pagesByEndpoint(fullReadPages),
    );
    const quietSpec = netboxReflector(
      { ...ctx, config: { ...ctx.config, NETBOX_RESYNC_INTERVAL_S: 3600 } } as unknown as AgentContext<never>,
      netbox,
      scope,
    );
    // The first list is a full read, the second reads NetBox's release once; the third is steady.
    await quietSpec.list(signal);
    await quietSpec.list(signal);
    agentReads.pages.length = 0;
    await quietSpec.list(signal);
    report(
      "(n) NetBox requests per agent cycle, quiet (change-log poll, nothing changed)",
      String(agentReads.pages.length),
      pagesByEndpoint(agentReads.pages),
    );
    const baseReads = recordingFetch();
    const bare = new NetboxClient({ url: nb.url, token: TOKEN, fetch: baseReads.fetch });
    const b0 = performance.now();
    await bareReads(bare, scope);
    const baseMs = performance.now() - b0;
    const agent = [...fullReadPages].sort();
    const base = [...baseReads.pages].sort();
    if (agent.join("\n") !== base.join("\n"))
      throw new Error(
        `the agent and the baseline read different pages:\n agent only: ${agent.filter((p) => !base.includes(p)).join("\n  ")}\n baseline only: ${base.filter((p) => !agent.includes(p)).join("\n  ")}`,
      );
    report(
      "(n) baseline: the same NetBox reads, bare (no mapping, no push)",
      s(baseMs),
      `sync / bare reads: ${(edited.total / baseMs).toFixed(2)}×; both read the same ${base.length} pages (checked)`,
    );
  } finally {
    await hub.stop();
    await nb.stop();
    await db.drop();
  }
}
