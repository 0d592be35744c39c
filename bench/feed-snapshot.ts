/**
 * `npm run bench -- feed-snapshot`: the inventory snapshot of 50,000 demo devices (two sites of
 * 25,000) from a hub process, read with the hub client as a connector does (every line parsed and
 * validated), against the baseline in the same run: the same devices read through the plain
 * device list, 1,000 per page, with the same client. Reports the time of each (median of
 * BENCH_SNAPSHOT_ROUNDS, default 3, alternating) and the hub's RSS before and at its peak during
 * each, sampled every 100 ms. Checks first that both sides returned the same devices.
 */
import { readFile } from "node:fs/promises";
import { HubClient } from "@fm/clients";
import { createDatabase } from "../apps/hub/src/db/client.ts";
import { migrate } from "../apps/hub/src/db/migrate.ts";
import { seedDemo } from "../apps/hub/src/seed/demo.ts";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, clientToken, startHub } from "@fm/test-support/process";

type Report = (what: string, value: string, note?: string) => void;

const ROUNDS = Number(process.env.BENCH_SNAPSHOT_ROUNDS ?? 3);

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
    const seeded = await seedDemo(data.prisma, { devicesPerSite: 25_000 });
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
      const runs = { snapshot: [] as { s: number; peak: number }[], pages: [] as { s: number; peak: number }[] };
      for (let round = 0; round < ROUNDS; round++) {
        const p = await measured(pid, pages);
        const s = await measured(pid, snapshot);
        if (p.ids.length !== seeded.devices || s.ids.join() !== p.ids.join())
          throw new Error(`the snapshot and the pages hold different devices (${s.ids.length} vs ${p.ids.length})`);
        runs.pages.push(p);
        runs.snapshot.push(s);
      }
      const line = (what: string, xs: { s: number; peak: number }[]) =>
        report(
          `${what} (${seeded.devices} devices, client-validated)`,
          `${median(xs.map((x) => x.s)).toFixed(2)} s`,
          `${Math.round(seeded.devices / median(xs.map((x) => x.s)))} devices/s; hub RSS idle ${idle.toFixed(0)} MiB, peak ${Math.max(...xs.map((x) => x.peak)).toFixed(0)} MiB`,
        );
      line("baseline: GET /api/v1/devices pages of 1,000", runs.pages);
      line("inventory snapshot (NDJSON stream)", runs.snapshot);
    } finally {
      await hub.stop();
    }
  } finally {
    await db.drop();
  }
}
