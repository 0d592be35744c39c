/**
 * What the workflow tests on a real Temporal dev server share (workflows/*.int.test.ts): the
 * server and its connections for a test file, the workflows' path for a Worker, and a device plan.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { Client, Connection } from "@temporalio/client";
import { NativeConnection, Runtime, makeTelemetryFilterString } from "@temporalio/worker";
import type { DevicePlan } from "@fm/domain/workflows";
import { startTemporal, type TemporalPeer } from "@fm/test-support/temporal";
import { plan } from "./activities/activity-testing.ts";

/** The workflows a test Worker runs (the bundle the worker process builds from them too). */
export const WORKFLOWS_PATH = fileURLToPath(new URL("./workflows/index.ts", import.meta.url));

export interface TemporalHarness {
  /** For Worker.create's `connection`. */
  native: NativeConnection;
  client: Client;
}

/** A Temporal dev server started before the file's tests (with the SDK's log quietened), stopped after them. */
export function useTemporal(): TemporalHarness {
  const harness = {} as TemporalHarness;
  let temporal: TemporalPeer | undefined;
  let connection: Connection | undefined;
  beforeAll(async () => {
    Runtime.install({
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: "ERROR" }), forward: {} } },
    });
    temporal = await startTemporal();
    harness.native = await NativeConnection.connect({ address: temporal.address });
    connection = await Connection.connect({ address: temporal.address });
    harness.client = new Client({ connection });
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await harness.native?.close();
    await temporal?.stop();
  });
  return harness;
}

/** Device `n` of a job's plan (activity-testing's plan() with fixed ids, as histories and assertions name them). */
export function testDevice(n: number, over: Partial<DevicePlan> = {}): DevicePlan {
  return plan({
    deviceId: `0190a5b4-0000-7000-8000-00000000000${n}`,
    name: `gpu00${n}`,
    netboxId: n,
    bmcAddress: `10.0.0.${n}`,
    ...over,
  });
}
