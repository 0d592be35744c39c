/**
 * Jobs through the whole path (packages/test-support/src/jobs-stack.ts: hub, NetBox test server, real
 * Ironic, real Temporal, workflow agent and worker as processes):
 *  - time from job creation to SUCCEEDED of one ENROL, BENCH_ENROL_SINGLES (default 5) times in
 *    a row: the median, with every run listed;
 *  - BENCH_JOBS_DEVICES (default 50) ENROL jobs created at once, one device each: time until
 *    all ended, and SUCCEEDED jobs per minute (any other outcome is listed, not counted);
 * against a baseline in the same run: the same Ironic work the worker does for each device
 * (create with the BMC address, manage, its three ports (the trays' NICs with a MAC: their
 * node's ports listed, each MAC looked up, then created), inspect, validate the BMC, provide; each transition
 * asked for, then polled every 250 ms starting at once, a 409 asked again) driven directly on
 * the same Ironic for as many fresh nodes at once, with no hub, Temporal or NetBox in the way.
 * Both sides must end with their nodes `available` in Ironic: the benchmark stops if not.
 */
import { eventually } from "@fm/test-support/wait";
import { ironicRequest, type RawIronicNode } from "@fm/test-support/ironic";
import { startJobsStack, type JobsStack } from "@fm/test-support/jobs-stack";
import type { Job } from "@fm/domain";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const POLL_MS = 250;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sec = (ms: number) => (ms / 1000).toFixed(2);

export async function jobsThroughput(report: Report): Promise<void> {
  const n = knob("BENCH_JOBS_DEVICES", 50, 2);
  const singles = knob("BENCH_ENROL_SINGLES", 5, 1);
  const s = await startJobsStack({
    stagedDevices: n + singles,
    slurmNodes: 0,
    pollIntervalMs: POLL_MS,
    concurrency: Math.min(n, 100),
    hubLogs: "errors",
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
      `ENROL, one device: job creation to SUCCEEDED (median of ${singles})`,
      `${sec(median(latencies))} s`,
      `runs: ${latencies.map(sec).join(" / ")} s`,
    );

    const batch = s.staged.slice(singles);
    const t0 = performance.now();
    const { ended, shed } = await enrolAtOnce(
      s,
      batch.map((d) => d.id),
    );
    const fmS = (performance.now() - t0) / 1000;
    const succeeded = ended.filter((j) => j.status === "SUCCEEDED");
    const failed = ended.filter((j) => j.status !== "SUCCEEDED");
    await checkAvailable(s.ironic.url, new Set(batch.filter((d) => succeededFor(succeeded, d.id)).map((d) => d.name)));
    report(
      `${n} ENROL jobs at once: creation to all ended`,
      `${fmS.toFixed(1)} s`,
      `${((succeeded.length / fmS) * 60).toFixed(1)} SUCCEEDED jobs/min; ${failed.length} not SUCCEEDED; ${shed} creations retried after a 503`,
    );
    for (const j of failed) report(`  not SUCCEEDED: ${j.name}`, j.status, JSON.stringify(j.error).slice(0, 200));

    const base = await ironicOnly(s.ironic.url, n);
    report(
      `baseline: the same Ironic work for ${n} nodes, driven directly`,
      `${base.seconds.toFixed(1)} s`,
      `${((n / base.seconds) * 60).toFixed(1)} nodes/min; Fleet Manager path ${(fmS / base.seconds).toFixed(2)}x; both sides' nodes available in Ironic (checked)`,
    );
  } finally {
    await s.stop();
  }
}

const succeededFor = (jobs: Job[], deviceId: string) => jobs.some((j) => j.deviceIds.includes(deviceId));

/** Creates one ENROL per device at once, as a client should (a 503 retried after Retry-After), and waits for all to end. */
async function enrolAtOnce(s: JobsStack, deviceIds: string[]): Promise<{ ended: Job[]; shed: number }> {
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
  const created = await Promise.all(deviceIds.map(create));
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
  return { ended, shed: created.filter((c) => c.attempt > 1).length };
}

/** Every node named in `names` rests `available` in Ironic. */
async function checkAvailable(url: string, names: Set<string>): Promise<void> {
  const nodes = ((await ironicRequest(url, "GET", "/v1/nodes?detail=true&limit=1000")) as { nodes: RawIronicNode[] })
    .nodes;
  const ready = nodes.filter((x) => x.name && names.has(x.name) && x.provision_state === "available");
  if (ready.length !== names.size)
    throw new Error(`${names.size} jobs SUCCEEDED but ${ready.length} of their nodes are available in Ironic`);
}

/** The worker's Ironic work for n fresh nodes at once; returns its time and checks the outcome. */
async function ironicOnly(url: string, n: number): Promise<{ seconds: number }> {
  const t0 = performance.now();
  const names = Array.from({ length: n }, (_, i) => `baseline-${i}`);
  await Promise.all(
    names.map((name, i) => enrolDirectly(url, name, `10.99.${Math.floor(i / 250)}.${(i % 250) + 1}`, i)),
  );
  const seconds = (performance.now() - t0) / 1000;
  await checkAvailable(url, new Set(names));
  return { seconds };
}

async function enrolDirectly(url: string, name: string, bmcAddress: string, i: number): Promise<void> {
  const node = (await ironicRequest(url, "POST", "/v1/nodes", {
    name,
    driver: "fake-hardware",
    driver_info: { bmc_address: bmcAddress },
    resource_class: "GPU_COMPUTE",
    extra: { fleet_manager_device_id: name },
  })) as RawIronicNode;
  const path = `/v1/nodes/${node.uuid}`;
  const ask = async (target: string) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return void (await ironicRequest(url, "PUT", `${path}/states/provision`, { target }));
      } catch (err) {
        if (!/-> 409:/.test(String(err)) || attempt >= 30) throw err;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    }
  };
  /**
   * As the worker: asks for a transition (again on 409, the conductor holding the node), then
   * polls, the first time at once, until `done`; still resting where it started after 15 s, the
   * request was lost and is asked again.
   */
  const drive = async (target: string, from: string, done: (n: RawIronicNode) => boolean) => {
    await ask(target);
    let askedAt = Date.now();
    for (;;) {
      const now = (await ironicRequest(url, "GET", path)) as RawIronicNode;
      if (!now.target_provision_state && done(now)) return;
      if (/failed|error/.test(now.provision_state))
        throw new Error(`${name}: ${now.provision_state}: ${now.last_error}`);
      if (!now.target_provision_state && now.provision_state === from && Date.now() - askedAt > 15_000) {
        await ask(target);
        askedAt = Date.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  const rests = (state: string) => (n: RawIronicNode) => n.provision_state === state;
  await drive("manage", "enroll", rests("manageable"));
  // The ports step: the node's ports, then each MAC looked up and created.
  await ironicRequest(url, "GET", `/v1/ports?node=${node.uuid}&detail=true`);
  for (let nic = 0; nic < 3; nic++) {
    const address = `02:ba:${(i >> 8).toString(16).padStart(2, "0")}:${(i & 255).toString(16).padStart(2, "0")}:00:0${nic}`;
    await ironicRequest(url, "GET", `/v1/ports?address=${address}&detail=true`);
    await ironicRequest(url, "POST", "/v1/ports", { address, node_uuid: node.uuid, pxe_enabled: nic === 1 });
  }
  await drive("inspect", "manageable", (n) => rests("manageable")(n) && Boolean(n.inspection_finished_at));
  // The BMC step: read the node, check its address, have Ironic validate power and management.
  await ironicRequest(url, "GET", path);
  const validation = (await ironicRequest(url, "GET", `${path}/validate`)) as Record<
    string,
    { result: boolean | null }
  >;
  if (validation.power?.result === false || validation.management?.result === false)
    throw new Error(`${name}: Ironic cannot use the BMC: ${JSON.stringify(validation)}`);
  await drive("provide", "manageable", rests("available"));
}
