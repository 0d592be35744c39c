/**
 * `npm run bench -- fuzz`: the fuzz test's generator (apps/hub/src/testing/fuzz.ts) at a larger
 * scale, over HTTP against a hub process with real tokens: BENCH_FUZZ_REQUESTS requests (default
 * 20,000) over every operation in /openapi.json, 8 at a time, with a fresh seed printed first.
 * Reports the answers by status, every 5xx or 4xx without problem+json (distinct, with a request
 * that shows it), the hub's RSS before, at its peak and after; and, as the baseline in the same
 * run, the throughput of as many valid `GET /api/v1/sites/` requests at the same concurrency.
 */
import { readFile } from "node:fs/promises";
import { AGENT_KINDS, type AgentKind } from "@fm/domain";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { seedDemo } from "../apps/hub/src/seed/demo.ts";
import { distinctFailures, runFuzz, type FuzzRequest } from "../apps/hub/src/testing/fuzz.ts";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, bearer, clientToken, startHub } from "@fm/test-support/process";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const CONCURRENCY = 8;
const SOURCE_AGENT: Record<string, AgentKind> = {
  netbox: "netbox",
  "ironic-overcloud": "openstack",
  "ironic-undercloud": "openstack",
  slurm: "slurm",
  health: "health-status",
};

async function rssMiB(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

export async function fuzzRun(report: Report): Promise<void> {
  const requests = knob("BENCH_FUZZ_REQUESTS", 20_000, 300);
  const seed = Number(process.env.FM_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`fuzz: seed ${seed} (FM_FUZZ_SEED=${seed} repeats these requests)`);
  const db = await createTestDatabase();
  await migrate(db.url);
  const data = createDatabase(db.url, { poolMax: 2 });
  await seedDemo(data.prisma, { devicesPerSite: 200 });
  const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
  try {
    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const get = async <T>(path: string) =>
      (await (await fetch(`${hub.url}${path}`, { headers: bearer(admin) })).json()) as T;
    const sites = (await get<{ items: { id: string }[] }>("/api/v1/sites/?limit=1000")).items.map((s) => s.id);
    const devices = (await get<{ items: { id: string }[] }>("/api/v1/devices/?limit=20")).items.map((d) => d.id);
    const created = await fetch(`${hub.url}/api/v1/satellites/`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(admin) },
      body: JSON.stringify({ name: "fuzz-sat", siteIds: sites, environment: "dev" }),
    });
    const { secrets } = (await created.json()) as {
      secrets: { agent: AgentKind; clientId: string; clientSecret: string }[];
    };
    const agents = Object.fromEntries(
      await Promise.all(secrets.map(async (s) => [s.agent, await clientToken(hub.url, s.clientId, s.clientSecret)])),
    ) as Record<AgentKind, string>;
    /** Agent routes as the agent they belong to, everything else as the admin. */
    const tokenFor = (url: string): string => {
      const reflection = /\/reflections\/([^/?]+)/.exec(url)?.[1];
      if (reflection) return agents[SOURCE_AGENT[reflection] ?? "openstack"];
      const heartbeat = /\/agents\/([^/?]+)\/heartbeat/.exec(url)?.[1];
      if (heartbeat) return agents[(heartbeat in AGENT_KINDS ? heartbeat : "openstack") as AgentKind];
      if (/\/jobs\/[^/]+\/report/.test(url)) return agents.workflow;
      return admin;
    };
    const doc = await get<Parameters<typeof runFuzz>[0]>("/openapi.json");
    const fixtures = {
      params: {
        id: [...sites, ...devices],
        site_id: sites,
        name: ["fuzz-sat"],
        agent: Object.keys(AGENT_KINDS),
        source: Object.keys(SOURCE_AGENT),
      },
    };

    const pid = hub.proc.pid!;
    const rssBefore = await rssMiB(pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => void rssMiB(pid).then((r) => (rssPeak = Math.max(rssPeak, r))), 250);
    let clientErrors = 0;
    const send = async (req: FuzzRequest) => {
      try {
        const res = await fetch(`${hub.url}${req.url}`, {
          method: req.method,
          headers: { ...req.headers, ...bearer(tokenFor(req.url)) },
          ...(req.payload !== undefined ? { body: req.payload } : {}),
        });
        return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
      } catch {
        // What fetch itself refuses to send (a header it cannot encode): not the hub's answer.
        clientErrors++;
        return { statusCode: 0, headers: {}, body: "" };
      }
    };
    const t0 = performance.now();
    const result = await runFuzz(doc, fixtures, { seed, requests, concurrency: CONCURRENCY }, send);
    const fuzzS = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = await rssMiB(pid);

    const t1 = performance.now();
    let done = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (done < requests) {
          done++;
          await (await fetch(`${hub.url}/api/v1/sites/`, { headers: bearer(admin) })).text();
        }
      }),
    );
    const baselineS = (performance.now() - t1) / 1000;

    report(`fuzz: requests over ${result.operations} operations (seed ${seed})`, String(result.requests));
    report("fuzz: answers by status", JSON.stringify(result.byStatus));
    report("fuzz: 5xx answers, and 4xx without problem+json", String(result.failures.length));
    report("fuzz: requests fetch itself refused to send", String(clientErrors));
    for (const line of distinctFailures(result)) console.log(`  ${line}`);
    const unhandled = hub.logs.filter((l) => l.msg === "unhandled error").length;
    report("fuzz: 'unhandled error' lines in the hub's log", String(unhandled));
    report("fuzz: throughput (req/s)", (result.requests / fuzzS).toFixed(0), `${fuzzS.toFixed(1)} s`);
    report(
      "baseline: as many valid GET /api/v1/sites/ (req/s)",
      (requests / baselineS).toFixed(0),
      `${baselineS.toFixed(1)} s, same concurrency`,
    );
    report(
      "fuzz: hub RSS before / peak / 2 s after (MiB)",
      `${rssBefore.toFixed(0)}/${rssPeak.toFixed(0)}/${rssAfter.toFixed(0)}`,
    );
  } finally {
    await hub.stop();
    await data.close();
    await db.drop();
  }
}
