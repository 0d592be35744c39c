/**
 * `npm run bench -- feed-snapshot`: the inventory snapshot of 50,000 demo devices (two sites of
 * 25,000) from a hub process, against the baseline in the same run: the same devices read through
 * the plain device list, 1,000 per page. Each side is read twice: with the hub client as a
 * connector does (every line or page parsed and validated with the domain schemas), and raw
 * (JSON.parse only), which shows the hub's own share. Reports the time of each (median of
 * BENCH_SNAPSHOT_ROUNDS, default 3, alternating) and the hub's RSS before and at its peak during
 * each, sampled every 100 ms. Checks that every side returned the same devices.
 */
import { readFile } from "node:fs/promises";
import { HubClient } from "@fm/clients";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { seedDemo } from "../apps/hub/src/seed/demo.ts";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, clientToken, startHub } from "@fm/test-support/process";
import { DEMO_DEVICES_PER_SITE, knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;

const ROUNDS = knob("BENCH_SNAPSHOT_ROUNDS", 3, 1);

async function rssMiB(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/** Runs `work`, sampling the process's RSS; returns seconds, the device ids seen and the peak. */
async function measured(pid: number, work: () => Promise<string[]>) {
  let peak = await rssMiB(pid);
  const sampler = setInterval(() => void rssMiB(pid).then((r) => (peak = Math.max(peak, r))), 100);
  const t0 = performance.now();
  try {
    const ids = await work();
    return { s: (performance.now() - t0) / 1000, ids, peak: Math.max(peak, await rssMiB(pid)) };
  } finally {
    clearInterval(sampler);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function feedSnapshot(report: Report): Promise<void> {
  const db = await createTestDatabase();
  try {
    await migrate(db.url);
    const data = createDatabase(db.url, { poolMax: 4 });
    const seeded = await seedDemo(data.prisma, { devicesPerSite: DEMO_DEVICES_PER_SITE });
    await data.close();
    const hub = await startHub({ DATABASE_URL: db.url, FM_DB_POOL_MAX: "10" }, undefined, { keepLogs: "errors" });
    try {
      const token = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET, "fleet.read");
      const client = new HubClient({ baseUrl: hub.url, token: async () => token, timeoutMs: 120_000 });
      const pid = hub.proc.pid!;
      const idle = await rssMiB(pid);
      const snapshot = async () => {
        const ids: string[] = [];
        for await (const line of client.readSnapshot()) if (line.kind === "device") ids.push(line.data.id);
        return ids;
      };
      const pages = async () => {
        const ids: string[] = [];
        for await (const d of client.allDevices()) ids.push(d.id);
        return ids;
      };
      const headers = { authorization: `Bearer ${token}` };
      const snapshotRaw = async () => {
        const text = await (await fetch(`${hub.url}/api/v1/feeds/inventory/snapshot`, { headers })).text();
        const lines = text
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l) as { kind: string; data?: { id: string } });
        return lines.filter((l) => l.kind === "device").map((l) => l.data!.id);
      };
      const pagesRaw = async () => {
        const ids: string[] = [];
        for (let cursor = ""; ;) {
          const url = `${hub.url}/api/v1/devices?limit=1000${cursor ? `&cursor=${cursor}` : ""}`;
          const page = (await (await fetch(url, { headers })).json()) as {
            items: { id: string }[];
            nextCursor: string | null;
          };
          ids.push(...page.items.map((d) => d.id));
          if (!page.nextCursor) return ids;
          cursor = page.nextCursor;
        }
      };
      const sides = {
        "baseline: GET /api/v1/devices pages of 1,000, hub client": pages,
        "inventory snapshot (NDJSON stream), hub client": snapshot,
        "baseline: GET /api/v1/devices pages of 1,000, raw": pagesRaw,
        "inventory snapshot (NDJSON stream), raw": snapshotRaw,
      };
      const runs = new Map<string, { s: number; peak: number }[]>();
      let expected: string | undefined;
      for (let round = 0; round < ROUNDS; round++)
        for (const [what, work] of Object.entries(sides)) {
          const run = await measured(pid, work);
          const ids = run.ids.join();
          expected ??= ids;
          if (run.ids.length !== seeded.devices || ids !== expected)
            throw new Error(`${what} returned other devices (${run.ids.length} of ${seeded.devices})`);
          runs.set(what, [...(runs.get(what) ?? []), run]);
        }
      for (const [what, xs] of runs) {
        const s = median(xs.map((x) => x.s));
        report(
          `${what}`,
          `${s.toFixed(2)} s`,
          `${Math.round(seeded.devices / s)} devices/s; hub RSS idle ${idle.toFixed(0)} MiB, peak ${Math.max(...xs.map((x) => x.peak)).toFixed(0)} MiB`,
        );
      }
    } finally {
      await hub.stop();
    }
  } finally {
    await db.drop();
  }
}
