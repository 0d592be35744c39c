/**
 * The SLURM agent's cycle for 10,000 nodes, compared in the same run with a baseline.
 *
 * slurmrestd cannot serve 10,000 nodes here (each is a slurmd), so a fixture server answers
 * `GET /slurm/v0.0.43/nodes` with nodes shaped as SchedMD's v0.0.43 OpenAPI document describes
 * `v0.0.43_node` (see packages/clients/src/slurm/versions.ts for the source), with the usual
 * fields beside the ones the agent reads, and takes `POST /slurm/v0.0.43/node/{name}` drains.
 *
 * - agent: the real reflector (`slurmReflector`): list and parse, map to devices
 *   (deviceNamePrefix), cordon check (the hub's cordoned devices; 10 of them, drained through
 *   the REST node update on the first cycle), push and hub apply; first load, unchanged, 1 %
 *   of the nodes changed (medians of 3).
 * - baseline: the bare list (fetch and JSON.parse, no validation) and one push of the same
 *   items, the hub's apply of the same changes included: what any agent must do at the least.
 *   Both sides are checked to produce the same items before anything is timed.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { SlurmClient } from "@fm/clients";
import type { SlurmItem } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { seedNetboxOnlyDevices } from "../apps/hub/src/testing/inventory.ts";
import type { AgentContext } from "../apps/satellite-agents/src/runtime/agent.ts";
import { createAgentMetrics } from "../apps/satellite-agents/src/runtime/metrics.ts";
import { slurmReflector } from "../apps/satellite-agents/src/slurm-agent/agent.ts";
import { restDrainer } from "../apps/satellite-agents/src/slurm-agent/drain.ts";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, clientToken, startHub } from "@fm/test-support/process";
import { agentHubClient } from "./agent-client.ts";
import { ROUNDS, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const NODES = knob("BENCH_SLURM_NODES", 10_000, 50);
const PREFIX = "bench-";
const API = "v0.0.43";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

interface FixtureNode {
  name: string;
  state: string[];
  reason: string;
  partitions: string[];
}

/** A slurmrestd stand-in holding `nodes`, which the benchmark changes between cycles. */
async function fixtureSlurmrestd(nodes: Map<string, FixtureNode>): Promise<{ url: string; close(): Promise<void> }> {
  const meta = {
    plugin: { type: "openapi/slurmctld", name: "Slurm OpenAPI slurmctld" },
    slurm: { release: "25.05.8" },
  };
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method === "GET" && req.url === `/slurm/${API}/nodes`) {
      const list = [...nodes.values()].map((n, i) => ({
        architecture: "aarch64",
        boards: 1,
        hostname: n.name,
        address: `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        cpus: 144,
        cores: 72,
        sockets: 2,
        threads: 1,
        real_memory: 884_736,
        free_mem: { set: true, infinite: false, number: 800_000 },
        features: ["gb300", "ib"],
        active_features: ["gb300", "ib"],
        gres: "gpu:gb300:4",
        gres_used: "gpu:gb300:0",
        name: n.name,
        state: n.state,
        reason: n.reason,
        reason_set_by_user: n.reason ? "hpcadmin" : "",
        reason_changed_at: { set: Boolean(n.reason), infinite: false, number: n.reason ? 1_750_000_000 : 0 },
        partitions: n.partitions,
        operating_system: "Linux 6.8.0-60-generic",
        version: "25.05.8",
        weight: 1,
      }));
      return send(200, {
        nodes: list,
        last_update: { set: true, infinite: false, number: 1 },
        errors: [],
        warnings: [],
        meta,
      });
    }
    const update = new RegExp(`^/slurm/${API.replace(/\./g, "\\.")}/node/([^/]+)$`).exec(req.url ?? "");
    if (req.method === "POST" && update) {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const node = nodes.get(decodeURIComponent(update[1]!));
        const msg = JSON.parse(body) as { state: string[]; reason?: string };
        if (!node) return send(500, { errors: [{ error: "Invalid node name specified", error_number: 2015 }], meta });
        if (msg.state.includes("DRAIN"))
          nodes.set(node.name, { ...node, state: [node.state[0]!, "DRAIN"], reason: msg.reason ?? "" });
        else nodes.set(node.name, { ...node, state: [node.state[0]!], reason: "" });
        send(200, { errors: [], warnings: [], meta });
      });
      return;
    }
    send(404, { errors: [{ error: "Unable to find path", error_number: 404 }], meta });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The baseline's mapping: the same item, with no validation. */
function bareItem(raw: { name: string; state: string[]; reason: string; partitions: string[] }): SlurmItem {
  return {
    name: raw.name,
    device: PREFIX + raw.name,
    state: raw.state[0]!,
    flags: raw.state.slice(1),
    reason: raw.reason || null,
    partitions: raw.partitions,
  };
}

export async function slurmCycle(report: Report): Promise<void> {
  const nodeNames = Array.from({ length: NODES }, (_, i) => `gpu-${String(i + 1).padStart(5, "0")}`);
  const nodes = new Map<string, FixtureNode>(
    nodeNames.map((name) => [name, { name, state: ["IDLE"], reason: "", partitions: ["gpu", "all"] }]),
  );
  const fixture = await fixtureSlurmrestd(nodes);
  const db = await createTestDatabase();
  await migrate(db.url);
  const data = createDatabase(db.url, { poolMax: 2 });
  const siteId = await seedNetboxOnlyDevices(
    data.prisma,
    { slug: "bench" },
    nodeNames.map((n) => ({ name: PREFIX + n, role: "gpu-node" as const })),
  );
  // 10 devices cordoned: the first cycle drains their nodes through the REST node update.
  await data.prisma.device.updateMany({
    where: { name: { in: nodeNames.slice(0, 10).map((n) => PREFIX + n) } },
    data: { cordoned: true, cordonReason: "bench RMA" },
  });
  await data.prisma.$executeRawUnsafe("ANALYZE");
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
  try {
    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const hubClient = await agentHubClient(hub.url, admin, {
      satellite: "bench-sat",
      siteIds: [siteId],
      agent: "slurm",
    });
    const tokenFile = join(await mkdtemp(join(tmpdir(), "fm-bench-slurm-")), "jwt");
    await writeFile(tokenFile, "bench-jwt\n");
    const config = {
      SLURM_URL: fixture.url,
      SLURM_API_VERSION: API,
      SLURM_USER: "hpcadmin",
      SLURM_TOKEN_FILE: tokenFile,
      SLURM_DEVICE_NAME_PREFIX: PREFIX,
      SLURM_DRAIN_VIA: "auto" as const,
      SLURM_SCONTROL: "scontrol",
      FM_CORDON_SYNC: true,
      FM_HTTP_TIMEOUT_MS: 600_000,
    };
    const ctx = {
      config,
      log: pino({ level: "silent" }),
      hub: hubClient,
      site: { id: siteId, slug: "bench" },
      satellite: "bench-sat",
      metrics: createAgentMetrics({ agent: "slurm", site: "bench", satellite: "bench-sat" }),
      signal: new AbortController().signal,
    } as unknown as AgentContext<typeof config>;
    const client = new SlurmClient({
      baseUrl: fixture.url,
      apiVersion: API,
      user: "hpcadmin",
      token: () => "bench-jwt",
    });
    const spec = slurmReflector(ctx, client, restDrainer(client));
    const signal = new AbortController().signal;
    const cycle = async () => {
      const c0 = performance.now();
      let items = await spec.list(signal);
      const c1 = performance.now();
      items = await spec.reconcile!(items, signal);
      const c2 = performance.now();
      const result = await spec.push(items, new Date(), signal);
      const c3 = performance.now();
      return { list: c1 - c0, reconcile: c2 - c1, push: c3 - c2, total: c3 - c0, result };
    };
    const bareList = async () => {
      const res = await fetch(`${fixture.url}/slurm/${API}/nodes`, {
        headers: { "x-slurm-user-name": "hpcadmin", "x-slurm-user-token": "bench-jwt" },
      });
      return ((await res.json()) as { nodes: FixtureNode[] }).nodes.map(bareItem);
    };
    const baseline = async () => {
      const b0 = performance.now();
      const items = await bareList();
      const b1 = performance.now();
      const result = await hubClient.pushReflection(siteId, "slurm", { observedAt: new Date().toISOString(), items });
      const b2 = performance.now();
      return { list: b1 - b0, push: b2 - b1, total: b2 - b0, result };
    };
    // Both sides see the same nodes as the same items (the cordon step aside, which changes none yet).
    const same = JSON.stringify(await spec.list(signal)) === JSON.stringify(await bareList());
    if (!same) throw new Error("the agent's list and the baseline's differ");

    const first = await cycle();
    const drained = [...nodes.values()].filter((n) => n.state.includes("DRAIN")).length;
    report(
      `SLURM agent full cycle, ${NODES.toLocaleString("en")} nodes, first load`,
      ms(first.total),
      `list ${ms(first.list)}, cordon check ${ms(first.reconcile)} (${drained} drained), push+apply ${ms(first.push)}; updated ${String(first.result.updated)}`,
    );
    const steady = [await cycle(), await cycle(), await cycle()];
    const steadyBase = [await baseline(), await baseline(), await baseline()];
    report(
      `SLURM agent full cycle, ${NODES.toLocaleString("en")} nodes, nothing changed (median of 3)`,
      ms(median(steady.map((c) => c.total))),
      `list ${ms(median(steady.map((c) => c.list)))}, cordon check ${ms(median(steady.map((c) => c.reconcile)))}, push+apply ${ms(median(steady.map((c) => c.push)))}`,
    );
    report(
      "  baseline: bare list + one push, nothing changed (median of 3)",
      ms(median(steadyBase.map((c) => c.total))),
      `list ${ms(median(steadyBase.map((c) => c.list)))}, push+apply ${ms(median(steadyBase.map((c) => c.push)))}; agent / baseline ${(median(steady.map((c) => c.total)) / median(steadyBase.map((c) => c.total))).toFixed(2)}×`,
    );
    // 1 % changed before each run, on either side: 100 nodes drained by "an operator".
    const change = (round: number) => {
      const step = Math.max(1, Math.floor(NODES / 100));
      for (const name of nodeNames.slice(10 + round * step, 10 + (round + 1) * step)) {
        const n = nodes.get(name)!;
        nodes.set(name, { ...n, state: ["IDLE", "DRAIN"], reason: `operator: bench round ${round}` });
      }
    };
    const changed: Awaited<ReturnType<typeof cycle>>[] = [];
    const changedBase: Awaited<ReturnType<typeof baseline>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      change(2 * round);
      changed.push(await cycle());
      change(2 * round + 1);
      changedBase.push(await baseline());
    }
    report(
      `SLURM agent full cycle, ${NODES.toLocaleString("en")} nodes, 1 % changed (median of 3)`,
      ms(median(changed.map((c) => c.total))),
      `list ${ms(median(changed.map((c) => c.list)))}, cordon check ${ms(median(changed.map((c) => c.reconcile)))}, push+apply ${ms(median(changed.map((c) => c.push)))}; updated ${String(changed[0]!.result.updated)}`,
    );
    report(
      "  baseline: bare list + one push, 1 % changed (median of 3)",
      ms(median(changedBase.map((c) => c.total))),
      `list ${ms(median(changedBase.map((c) => c.list)))}, push+apply ${ms(median(changedBase.map((c) => c.push)))}; updated ${String(changedBase[0]!.result.updated)}; agent / baseline ${(median(changed.map((c) => c.total)) / median(changedBase.map((c) => c.total))).toFixed(2)}×`,
    );
  } finally {
    await hub.stop();
    await data.close();
    await db.drop();
    await fixture.close();
  }
}
