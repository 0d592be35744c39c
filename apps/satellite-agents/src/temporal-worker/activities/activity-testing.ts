/**
 * What the activity tests share: running one activity as Temporal would (under
 * MockActivityEnvironment, with its heartbeats), the two ways an activity fails (for good, or
 * retryably), device plans, and the NetBox test fleet. Each test file starts only the peers its
 * source needs.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { ApplicationFailure } from "@temporalio/common";
import { MockActivityEnvironment } from "@temporalio/testing";
import { DefaultLogger } from "@temporalio/worker";
import { NON_RETRYABLE_FAILURES, type DevicePlan } from "@fm/domain/workflows";
import { freePort } from "@fm/test-support/ports";
import { realisticFleet, type DeviceRecord, type NetboxServer } from "@fm/test-support/netbox-server";
import type { RedfishSettings } from "./driver-info.ts";

export const NETBOX_TOKEN = "0123456789abcdef0123456789abcdef01234567";
/** Tests that wait on Ironic's conductor or on SLURM jobs. */
export const WAITING = 90_000;
/** Activity failures are expected here: keep the SDK's "Activity failed" warnings out of the output. */
const quietLogger = new DefaultLogger("ERROR");

/** A fresh environment per run: a cancelled MockActivityEnvironment stays cancelled. */
export function activityEnv(): { env: MockActivityEnvironment; heartbeats: unknown[] } {
  const env = new MockActivityEnvironment(undefined, { logger: quietLogger });
  const heartbeats: unknown[] = [];
  env.on("heartbeat", (d: unknown) => heartbeats.push(d));
  return { env, heartbeats };
}

/** Runs one activity as Temporal would, with its heartbeats. */
export async function run<P extends unknown[], R>(
  fn: (...args: P) => Promise<R>,
  ...args: P
): Promise<{ result: R; heartbeats: unknown[] }> {
  const { env, heartbeats } = activityEnv();
  const result = await env.run<P, R, typeof fn>(fn, ...args);
  return { result, heartbeats };
}

/** What an activity rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("the activity succeeded; a failure was expected");
}

/** A failure retrying cannot fix, of this type (one the workflows' retry policy does not retry). */
export function expectFinal(
  err: unknown,
  type: (typeof NON_RETRYABLE_FAILURES)[number],
  message?: string | RegExp,
): ApplicationFailure {
  expect(err).toBeInstanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  expect(f.type).toBe(type);
  expect(f.nonRetryable).toBe(true);
  if (message !== undefined) expect(f.message).toMatch(message);
  return f;
}

/**
 * An error Temporal retries: not a non-retryable ApplicationFailure, and (as the worker turns
 * any other error into an ApplicationFailure typed by its name) no type the retry policy skips.
 */
export function expectRetryable(err: unknown, name: string): void {
  expect(err).toBeInstanceOf(Error);
  if (err instanceof ApplicationFailure) expect(err.nonRetryable).toBe(false);
  expect((err as Error).name).toBe(name);
  expect(NON_RETRYABLE_FAILURES as readonly string[]).not.toContain((err as Error).name);
}

let seq = 0;
/** A device as preflight plans it; a fresh name (and Ironic node name) per call. */
export function plan(over: Partial<DevicePlan> = {}): DevicePlan {
  const n = ++seq;
  return {
    deviceId: randomUUID(),
    name: `act-node-${n}`,
    netboxId: null,
    bmcAddress: `10.200.0.${n}`,
    bmcMac: null,
    ironicInstance: "overcloud",
    ironicNodeUuid: null,
    slurmNodeName: null,
    resourceClass: "GPU_COMPUTE",
    ...over,
  };
}

/** The redfish settings the worker has by default (env.ts). */
export const DEFAULT_REDFISH: RedfishSettings = { addressTemplate: "https://{address}", verifyCa: true };

/** The base URL of a port nothing listens on: a source that does not answer. */
export const deadEndpoint = async (): Promise<string> => `http://127.0.0.1:${await freePort()}`;

/** The NetBox fleet the activity tests use: one site of 24 devices, with a tag whose name differs from its slug. */
export function activityFleet(): ReturnType<typeof realisticFleet> {
  const data = realisticFleet({ sites: 1, devicesPerSite: 24 });
  // NetBox tag names are labels and their slugs the identifiers: make one differ, as in real NetBox.
  data.tags.find((t) => t.slug === "gpu")!.name = "GPU";
  return data;
}

/** The fleet's GPU servers, handed out one per test so that no two tests share a device. */
export function gpuServers(nb: NetboxServer) {
  const role = nb.data.deviceRoles.find((r) => r.slug === "gpu-node")!.id;
  const all: DeviceRecord[] = nb.data.devices.filter((d) => d.role === role && d.oob_ip !== null);
  let taken = 0;
  return {
    all,
    /** A GPU server no other test took, set to `status`. */
    take(status: string): DeviceRecord {
      const d = all[taken++];
      if (!d) throw new Error("the NetBox fleet has no GPU server left for this test");
      d.status = status;
      return d;
    },
    /** PATCH requests the NetBox server received for this device. */
    patches: (id: number) =>
      nb.requests.filter((r) => r.method === "PATCH" && r.path === `/api/dcim/devices/${id}/`).length,
  };
}
