/**
 * Jobs through the whole path (packages/test-support/src/jobs-stack.ts: hub, NetBox test server, real
 * Ironic, real Temporal, workflow agent and worker as processes):
 *  - time from job creation to SUCCEEDED of one ENROL, three times in a row;
 *  - BENCH_JOBS_DEVICES (default 50) ENROL jobs created at once, one device each: time until
 *    all SUCCEEDED, and jobs per minute;
 * against a baseline in the same run: the same Ironic work (create, manage, inspect, provide,
 * each waited for with the same 250 ms poll) driven directly on the same Ironic for as many
 * fresh nodes at once, with no hub, Temporal or NetBox in the way.
 */
import { eventually } from "@fm/test-support/wait";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { startJobsStack } from "@fm/test-support/jobs-stack";
import type { Job } from "@fm/domain";

type Report = (what: string, value: string, note?: string) => void;
const POLL_MS = 250;

export async function jobsThroughput(report: Report): Promise<void> {
  const n = Number(process.env.BENCH_JOBS_DEVICES ?? 50);
  const singles = 3;
  const s = await startJobsStack({
    stagedDevices: n + singles,
    slurmNodes: 0,
    pollIntervalMs: POLL_MS,
    concurrency: Math.min(n, 100),
  });
  try {
    const latencies: number[] = [];
    for (const d of s.staged.slice(0, singles)) {
      const t0 = performance.now();
      const job = (await s.api("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [d.id] })).body;
      const done = await s.waitForJob(job.id, undefined, 120_000);
      if (done.status !== "SUCCEEDED")
        throw new Error(`ENROL ${job.name} ended ${done.status}: ${JSON.stringify(done.error)}`);
      latencies.push(performance.now() - t0);
    }
    report(
      "ENROL, one device: job creation to SUCCEEDED (3 in a row)",
      `${(Math.min(...latencies) / 1000).toFixed(2)} s`,
      latencies.map((l) => `${(l / 1000).toFixed(2)}`).join(" / ") + " s",
    );

    const batch = s.staged.slice(singles);
    const t0 = performance.now();
    // As a client should: a 503 (connection pool busy), or the key still marked in progress, is
    // retried with the same Idempotency-Key after Retry-After.
    const create = async (deviceId: string) => {
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(`${s.hub.url}/api/v1/jobs/`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${s.admin}`,
            "content-type": "application/json",
            "idempotency-key": `bench-${deviceId}`,
          },
          body: JSON.stringify({ kind: "ENROL", deviceIds: [deviceId] }),
        });
        const body = (await res.json()) as Job;
        const retry =
          res.status === 503 ||
          (res.status === 409 && (body as { code?: string }).code === "idempotency_key_in_progress");
        if (!retry || attempt >= 20) return { status: res.status, body, attempt };
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get("retry-after") ?? 1)));
      }
    };
    const created = await Promise.all(batch.map((d) => create(d.id)));
    if (created.some((c) => c.status !== 201))
      throw new Error(`job creation failed: ${JSON.stringify(created.find((c) => c.status !== 201)!.body)}`);
    const ids = new Set(created.map((c) => c.body.id));
    const ended = await eventually(
      async () => {
        const items: Job[] = [];
        let cursor: string | null = null;
        do {
          const page: { items: Job[]; nextCursor: string | null } = (
            await s.api<{ items: Job[]; nextCursor: string | null }>(
              "GET",
              `/api/v1/jobs/?active=false&kind=ENROL&limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
            )
          ).body;
          items.push(...page.items.filter((j) => ids.has(j.id)));
          cursor = page.nextCursor;
        } while (cursor);
        if (items.length < ids.size) throw new Error(`${items.length}/${ids.size} ended`);
        return items;
      },
      600_000,
      500,
    );
    const fmS = (performance.now() - t0) / 1000;
    const failed = ended.filter((j) => j.status !== "SUCCEEDED");
    const shed = created.filter((c) => c.attempt > 1).length;
    report(
      `${n} ENROL jobs at once: creation to all ended`,
      `${fmS.toFixed(1)} s`,
      `${((n / fmS) * 60).toFixed(1)} jobs/min; ${failed.length} not SUCCEEDED; ${shed} creations retried after a 503`,
    );

    const baseS = await ironicOnly(s.ironic.url, n);
    report(
      `baseline: the same Ironic enrolment of ${n} nodes, driven directly`,
      `${baseS.toFixed(1)} s`,
      `${((n / baseS) * 60).toFixed(1)} nodes/min; Fleet Manager path ${(fmS / baseS).toFixed(2)}x`,
    );
  } finally {
    await s.stop();
  }
}

/** create → manage → inspect → provide, each waited for, for n fresh nodes at once. */
async function ironicOnly(url: string, n: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const node = (await ironicRequest(url, "POST", "/v1/nodes", {
        name: `baseline-${i}`,
        driver: "fake-hardware",
        resource_class: "GPU_COMPUTE",
      })) as RawIronicNode;
      for (const [target, rest] of [
        ["manage", "manageable"],
        ["inspect", "manageable"],
        ["provide", "available"],
      ] as const) {
        await ironicRequest(url, "PUT", `/v1/nodes/${node.uuid}/states/provision`, { target });
        for (;;) {
          await new Promise((r) => setTimeout(r, POLL_MS));
          const now = (await ironicRequest(url, "GET", `/v1/nodes/${node.uuid}`)) as RawIronicNode;
          if (now.provision_state === rest && !now.target_provision_state) break;
          if (/failed|error/.test(now.provision_state))
            throw new Error(`baseline node ${i}: ${now.provision_state}: ${now.last_error}`);
        }
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}
