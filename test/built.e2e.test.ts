/**
 * The built processes (`npm run build`): plain node, no tsx, runs the hub, an agent and the
 * Temporal worker's workflows as the charts and the image run them. Asserted over their public
 * interfaces: the hub's API, the agent's /healthz and what it brought into the hub, and the
 * committed workflow histories replayed against the workflow bundle the built worker loads.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { historyFromJSON } from "@temporalio/common/lib/proto-utils";
import { Worker } from "@temporalio/worker";
import { startAgent } from "@fm/test-support/agents";
import { realisticFleet, startNetboxServer } from "@fm/test-support/netbox-server";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, REPO_ROOT, bearer, clientToken, startHub, type HubProcess } from "@fm/test-support/process";
import { startTemporal } from "@fm/test-support/temporal";
import { eventually } from "@fm/test-support/wait";

const run = promisify(execFile);
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

let hub: HubProcess;
let admin: string;
let secrets: Record<string, { clientId: string; clientSecret: string }>;
beforeAll(async () => {
  await run("npm", ["run", "-s", "build"], { cwd: REPO_ROOT, timeout: 300_000 });
  const db = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => db.drop());
  hub = await startHub({ DATABASE_URL: db.url }, undefined, { built: true });
  cleanups.push(() => hub.stop("SIGKILL"));
  admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${hub.url}${path}`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return res.json();
  };
  const site = (await post("/api/v1/sites/", { slug: "iad1", name: "Ashburn (IAD1)" })) as { id: string };
  const sat = (await post("/api/v1/satellites/", { name: "sys3-iad1", siteIds: [site.id], environment: "stg" })) as {
    secrets: { agent: string; clientId: string; clientSecret: string }[];
  };
  secrets = Object.fromEntries(sat.secrets.map((s) => [s.agent, s]));
}, 360_000);

describe("built processes run on plain node", () => {
  it("the built hub is the hub that runs: no tsx in its command line, health, readiness, the API and its docs", async () => {
    const cmdline = readFileSync(`/proc/${hub.proc.pid}/cmdline`, "utf8").split("\0");
    expect(cmdline).toContain("apps/hub/dist/main.js");
    expect(cmdline.join(" ")).not.toMatch(/tsx|\.ts\b/);
    expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${hub.url}/readyz`)).status).toBe(200);
    const sites = (await (await fetch(`${hub.url}/api/v1/sites/`, { headers: bearer(admin) })).json()) as {
      items: { slug: string }[];
    };
    expect(sites.items.map((s) => s.slug)).toEqual(["iad1"]);
    expect((await fetch(`${hub.url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${hub.url}/docs/`)).status).toBe(200);
  });

  it("the built hub's Prisma client reads its query compiler from the .wasm file beside it, not from the base64 module", () => {
    // The queries above ran through it; the base64 module would stay in the heap twice.
    const dist = join(REPO_ROOT, "apps/hub/dist");
    expect(readdirSync(dist).filter((f) => f.endsWith(".wasm"))).toEqual(["query_compiler_fast_bg.postgresql.wasm"]);
    const code = readdirSync(dist)
      .filter((f) => f.endsWith(".js"))
      .map((f) => readFileSync(join(dist, f), "utf8"))
      .join("\n");
    expect(code).toContain('new URL("./query_compiler_fast_bg.postgresql.wasm", import.meta.url)');
    expect(code).not.toContain("wasm-base64");
  });

  it("a built agent serves /healthz and /metrics and brings its source into the built hub", async () => {
    const nb = await startNetboxServer({ token: TOKEN, data: realisticFleet({ sites: 1, devicesPerSite: 4 }) });
    cleanups.push(() => nb.stop());
    const agent = await startAgent(
      "netbox",
      {
        FM_HUB_URL: hub.url,
        FM_CLIENT_ID: secrets.netbox!.clientId,
        FM_CLIENT_SECRET: secrets.netbox!.clientSecret,
        FM_SITE: "iad1",
        FM_REFLECT_INTERVAL_S: "1",
        NETBOX_URL: nb.url,
        NETBOX_TOKEN: TOKEN,
        NETBOX_CLUSTER: "iad1-compute",
        NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify({
          "gpu-node": "GPU_COMPUTE",
          "cpu-node": "CPU_BAREMETAL",
        }),
      },
      30_000,
      { built: true },
    );
    cleanups.push(() => agent.stop("SIGKILL"));
    expect((await fetch(`${agent.metricsUrl}/healthz`)).status).toBe(200);
    const expected = nb.data.devices.filter((d) => d.site === 1 && d.cluster === 1).map((d) => d.name);
    expect(expected.length).toBeGreaterThan(0);
    await eventually(async () => {
      const res = await fetch(`${hub.url}/api/v1/devices/?site=iad1&limit=100`, { headers: bearer(admin) });
      const names = ((await res.json()) as { items: { name: string }[] }).items.map((d) => d.name);
      expect(names.sort()).toEqual([...expected].sort());
    }, 30_000);
    expect(
      await agent.metric("fleet_manager_reflector_last_success_timestamp_seconds", { store: "netbox-devices" }),
    ).toBeGreaterThan(0);
    expect(await agent.stop()).toBe(0);
  }, 90_000);

  it("the built Temporal worker starts on its prebuilt workflow bundle and polls a real Temporal", async () => {
    const temporal = await startTemporal();
    cleanups.push(() => temporal.stop());
    const worker = await startAgent(
      "temporal-worker",
      {
        FM_HUB_URL: hub.url,
        FM_CLIENT_ID: secrets["temporal-worker"]!.clientId,
        FM_CLIENT_SECRET: secrets["temporal-worker"]!.clientSecret,
        FM_SITE: "iad1",
        TEMPORAL_ADDRESS: temporal.address,
      },
      30_000,
      { built: true },
    );
    cleanups.push(() => worker.stop("SIGKILL"));
    const running = await worker.waitForLog((l) => l.msg === "temporal worker running", 60_000);
    expect(running).toMatchObject({ taskQueue: "fleet-manager-iad1" });
    expect(await worker.stop()).toBe(0);
  }, 120_000);

  it("the built workflow bundle replays every committed history", async () => {
    const dir = join(REPO_ROOT, "apps/satellite-agents/src/temporal-worker/histories");
    const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    const histories = files.map((f) => ({
      workflowId: f.replace(/\.json$/, ""),
      history: historyFromJSON(JSON.parse(readFileSync(join(dir, f), "utf8"))),
    }));
    const codePath = join(REPO_ROOT, "apps/satellite-agents/dist/workflow-bundle.js");
    const results: { workflowId: string; error?: Error }[] = [];
    for await (const r of Worker.runReplayHistories({ workflowBundle: { codePath }, replayName: "built" }, histories))
      results.push(r);
    expect(results.filter((r) => r.error).map((r) => `${r.workflowId}: ${r.error!.message}`)).toEqual([]);
    expect(results.map((r) => r.workflowId).sort()).toEqual(histories.map((h) => h.workflowId).sort());
  }, 120_000);
});
