/**
 * The price of a real BMC: BENCH_REDFISH_NODES (default 20) nodes enrolled at once on one real
 * Ironic through its `redfish` driver, each node's BMC a test Redfish server of its own (DMTF
 * mock-up, session login, out-of-band inspection), against a baseline in the same run: as many
 * `fake-hardware` nodes on the same Ironic doing the same transitions. Each node is created with
 * its driver_info, then manage → inspect → provide, each transition asked for and polled every
 * 250 ms; automated cleaning is off on both sides (nothing here boots the agent ramdisk). Both
 * sides must end with every node `available`: the benchmark stops if not. Printed: time until
 * all are available, nodes per minute, the median node's time, and BMC requests per node.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ironicRequest, startIronic, type RawIronicNode } from "@fm/test-support/ironic";
import { SYSTEM_PATH, startRedfishBmc, type RedfishBmc } from "@fm/test-support/redfish";
import { knob } from "./config.ts";

type Report = (what: string, value: string, note?: string) => void;
const POLL_MS = 250;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sec = (ms: number) => (ms / 1000).toFixed(2);

export async function redfishEnrol(report: Report): Promise<void> {
  const n = knob("BENCH_REDFISH_NODES", 20, 1);
  const ironic = await startIronic({ automatedClean: false });
  const bmcs: RedfishBmc[] = [];
  try {
    for (let i = 0; i < n; i++)
      bmcs.push(
        await startRedfishBmc({
          username: "admin",
          password: "bench-password",
          host: `127.0.1.${i + 1}`,
          port: bmcs[0]?.port,
        }),
      );
    const redfish = await enrolAll(ironic.url, n, (i) => ({
      name: `bench-redfish-${i}`,
      driver: "redfish",
      driver_info: {
        redfish_address: bmcs[i]!.url,
        redfish_system_id: SYSTEM_PATH,
        redfish_username: "admin",
        redfish_password: "bench-password",
        redfish_verify_ca: false,
      },
    }));
    const fake = await enrolAll(ironic.url, n, (i) => ({
      name: `bench-fake-${i}`,
      driver: "fake-hardware",
      driver_info: { bmc_address: `10.250.0.${i + 1}` },
    }));
    const requests = bmcs.reduce((sum, b) => sum + b.requests.length, 0);
    for (const [label, r] of [
      ["redfish (test BMCs)", redfish],
      ["fake-hardware (baseline)", fake],
    ] as const) {
      report(
        `${n} nodes enrolled at once, ${label}: all available`,
        `${sec(r.totalMs)} s`,
        `${((n / r.totalMs) * 60_000).toFixed(0)} nodes/min; median node ${sec(median(r.perNodeMs))} s`,
      );
    }
    report("redfish / fake-hardware time", `${((redfish.totalMs / fake.totalMs) * 100).toFixed(0)} %`);
    report("BMC requests per redfish node", (requests / n).toFixed(1), "manage, inspect, provide, power sync");
  } finally {
    await Promise.all(bmcs.map((b) => b.stop()));
    await ironic.stop();
  }
}

async function enrolAll(
  url: string,
  n: number,
  node: (i: number) => Record<string, unknown>,
): Promise<{ totalMs: number; perNodeMs: number[] }> {
  const t0 = performance.now();
  const perNodeMs = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const start = performance.now();
      const created = (await ironicRequest(url, "POST", "/v1/nodes", node(i))) as RawIronicNode;
      await transition(url, created.uuid, "manage", "manageable");
      await transition(url, created.uuid, "inspect", "manageable");
      await transition(url, created.uuid, "provide", "available");
      return performance.now() - start;
    }),
  );
  return { totalMs: performance.now() - t0, perNodeMs };
}

/** Asks for `target` (again after a 409: the node is locked) and polls until the node rests in `want`. */
async function transition(url: string, uuid: string, target: string, want: string): Promise<void> {
  for (;;) {
    try {
      await ironicRequest(url, "PUT", `/v1/nodes/${uuid}/states/provision`, { target });
      break;
    } catch (err) {
      if (!/-> 409/.test(String(err))) throw err;
      await sleep(POLL_MS);
    }
  }
  for (;;) {
    const n = (await ironicRequest(url, "GET", `/v1/nodes/${uuid}`)) as RawIronicNode;
    if (!n.target_provision_state) {
      if (n.provision_state === want) return;
      throw new Error(`node ${n.name} rests in ${n.provision_state} after ${target}: ${n.last_error}`);
    }
    await sleep(POLL_MS);
  }
}
