/**
 * `npm run histories:record`: runs every job workflow on a real Temporal dev server with
 * canned activities and writes each event history to apps/satellite-agents/src/temporal-worker/histories/.
 * The replay test (temporal-worker/workflows/replay.test.ts) replays them against the current workflow code, so a
 * change that would break workflows already running in production fails the build.
 *
 * Record again only for a deliberate, compatible change (new scenarios, or after a `patched()`
 * migration), and keep the old files: they are what running workflows look like. Name the
 * scenarios to record as arguments to leave the others untouched.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from "@temporalio/client";
import { historyToJSON } from "@temporalio/common/lib/proto-utils";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from "@temporalio/worker";
import {
  JOB_WORKFLOWS,
  OPERATOR_SIGNAL,
  PROGRESS_QUERY,
  WAITING_FOR_OPERATOR,
  type DevicePlan,
  type JobPlan,
  type JobWorkflowInput,
  type OperatorSignal,
  type WorkflowKind,
  type WorkflowProgress,
} from "@fm/domain/workflows";
import type { Activities } from "../apps/satellite-agents/src/temporal-worker/activities/index.ts";
import { startTemporal } from "@fm/test-support/temporal";

const OUT = fileURLToPath(new URL("../apps/satellite-agents/src/temporal-worker/histories/", import.meta.url));
const TASK_QUEUE = "fleet-manager-histories";

const device = (n: number): DevicePlan => ({
  deviceId: `0190a5b4-0000-7000-8000-00000000000${n}`,
  name: `gpu00${n}`,
  netboxId: 100 + n,
  bmcAddress: `10.101.1.${10 + n}`,
  bmcMac: `02:00:00:00:00:0${n}`,
  ironicInstance: "overcloud",
  ironicNodeUuid: null,
  slurmNodeName: `gpu00${n}`,
  resourceClass: "GPU_COMPUTE",
  deviceRoleId: "0190a5b4-2222-7000-8000-000000000001",
});
const plan = (o: Partial<JobPlan["site"]> = {}): JobPlan => ({
  site: {
    slug: "iad1",
    slurmEnabled: true,
    openstackSlurmEnabled: true,
    configureDhcp: true,
    platformClassActivityReady: true,
    ...o,
  },
  devices: [device(1), device(2)],
});

interface Scenario {
  file: string;
  kind: WorkflowKind;
  params: Record<string, unknown>;
  activities: Partial<Activities>;
  /** Cancel the workflow once every device's burn-in is being waited for. */
  cancelWhileWaiting?: boolean;
  /** The operator's signal, sent once the workflow waits for it (REPAIR). */
  operator?: Pick<OperatorSignal, "outcome" | "note">;
}

const waitUntilCancelled = async (): Promise<never> => {
  for (;;) {
    Context.current().heartbeat();
    await Context.current().sleep(100);
  }
};

const ok: Activities = {
  preflight: async () => plan(),
  netboxCheckStaged: async () => {},
  ironicEnroll: async (d) => `0190a5b4-1111-7000-8000-00000000000${d.name.slice(-1)}`,
  ironicRegister: async (d) => `0190a5b4-1111-7000-8000-00000000000${d.name.slice(-1)}`,
  ironicInspect: async () => {},
  configureBmc: async () => {},
  configureDhcp: async () => ({ written: true }),
  ironicProvide: async () => {},
  netboxActivate: async () => {},
  netboxStage: async () => {},
  recordOnHub: async () => {},
  slurmSubmitBurnIn: async (a) => Number(a.device.name.slice(-1)) + 40,
  slurmSubmitMultiNode: async () => 50,
  burnInCollect: async (a) => ({
    deviceId: a.deviceId,
    status: "PASSED",
    tests: a.tests.map((test) => ({
      test,
      passed: true,
      exitCode: 0,
      image: `/vast/enroot-cache/${test}.sqsh`,
      architecture: "aarch64",
      figures: { gpus: [{ index: 0, tflops: 51.494 }], xids: [], reasons: [] },
      artifacts: [{ name: `${test}.log`, url: `http://s3.test/fm/burn-in/${a.folder}/${test}.log`, bytes: 120 }],
    })),
  }),
  burnInReport: async () => {},
  slurmWait: async (a) => ({ device: a.device, slurmJobId: a.slurmJobId, state: "COMPLETED", exitCode: 0 }),
  slurmCancel: async () => {},
  slurmCheckNode: async () => "idle",
  ironicCheck: async () => "active",
  ironicTeardown: async () => {},
  ironicRebuild: async () => {},
  ironicPorts: async () => ({ created: 2, updated: 0, unchanged: 0 }),
  ironicDeploy: async () => {},
  ironicMaintenance: async (d) => `${d.name}: maintenance`,
  ironicEndMaintenance: async () => {},
  hubCordon: async () => {},
  hubTopologySync: async () => {},
  slurmCheckNodesExist: async () => {},
  slurmWaitDrain: async (d, drained) => `${d.name} ${drained ? "drained" : "back in service"}`,
  novaBootSlurmNode: async (d) => ({
    serverId: `0190a5b4-3333-7000-8000-00000000000${d.name.slice(-1)}`,
    nodeUuid: `0190a5b4-1111-7000-8000-00000000000${d.name.slice(-1)}`,
    server: d.name,
  }),
  slurmAwaitNode: async () => "IDLE",
  slurmResumeNode: async (d) => `${d.name} resumed (was idle+drain)`,
  swapPlan: async (a) => ({
    failed: a.failed,
    spare: { ...device(3), deviceId: a.spareDeviceId, ironicNodeUuid: null },
    target: { location: 1, rack: 2, position: 10, face: "front" },
    moved: false,
  }),
  swapBmcMacs: async () => [
    { id: "eth0", mac: "7C:FE:90:5A:00:01" },
    { id: "eth1", mac: "7C:FE:90:5A:00:02" },
  ],
  swapNetboxMacs: async () => "2 frontend MAC(s): 2 created, 0 reused, 2 primary set",
  swapNetboxRack: async (p) => `${p.spare.name} now at rack 2 U10 (front); ${p.failed.name} unracked, offline`,
  swapNetboxCables: async (p) => `${p.cables?.length ?? 0} cable(s) on ${p.spare.name}: 1 moved, 0 already there`,
};

const SCENARIOS: Scenario[] = [
  { file: "enrol-succeeded", kind: "ENROL", params: { platformClass: "gb300", tags: ["burn-in"] }, activities: {} },
  { file: "enrol-dhcp-off", kind: "ENROL", params: { configureDhcp: false }, activities: {} },
  {
    file: "enrol-not-staged",
    kind: "ENROL",
    params: {},
    activities: {
      netboxCheckStaged: async (d) => {
        throw ApplicationFailure.nonRetryable(`${d.name} is active in NetBox; enrolment needs it staged`, "BadInput");
      },
    },
  },
  { file: "enrol-job-no-longer-active", kind: "ENROL", params: {}, activities: { preflight: async () => null } },
  { file: "unenrol-succeeded", kind: "UNENROL", params: {}, activities: {} },
  {
    file: "unenrol-topology-sync",
    kind: "UNENROL",
    params: { reason: "tray to RMA" },
    activities: { preflight: async () => plan({ topologyRegion: "us-east-1" }) },
  },
  { file: "burn-in-succeeded", kind: "BURN_IN", params: { durationMinutes: 60 }, activities: {} },
  {
    file: "burn-in-exit-code",
    kind: "BURN_IN",
    params: { durationMinutes: 60 },
    activities: {
      slurmWait: async (a) => ({ device: a.device, slurmJobId: a.slurmJobId, state: "FAILED", exitCode: 3 }),
    },
  },
  {
    file: "burn-in-submit-failed",
    kind: "BURN_IN",
    params: { durationMinutes: 60 },
    activities: {
      slurmSubmitBurnIn: async (a) => {
        if (a.device.name === "gpu001") return 41;
        await Context.current().sleep(200);
        throw ApplicationFailure.nonRetryable(`SLURM has no node ${a.device.name}`, "SourceRejected");
      },
    },
  },
  {
    file: "burn-in-results-passed",
    kind: "BURN_IN",
    params: { durationMinutes: 60, tests: ["hardware-tests", "gpu-fryer"] },
    activities: {},
  },
  {
    file: "burn-in-results-failed",
    kind: "BURN_IN",
    params: { durationMinutes: 60, tests: ["hardware-tests", "gpu-fryer"] },
    activities: {
      burnInCollect: async (a) => {
        const passed = !a.folder.endsWith("gpu002");
        return {
          deviceId: a.deviceId,
          status: passed ? "PASSED" : "FAILED",
          tests: a.tests.map((test) => ({
            test,
            passed: passed || test !== "gpu-fryer",
            exitCode: passed || test !== "gpu-fryer" ? 0 : 1,
            image: `/vast/enroot-cache/${test}.sqsh`,
            architecture: "aarch64",
            figures: { gpus: [], xids: [], reasons: [] },
            ...(passed || test !== "gpu-fryer" ? {} : { message: "gpu-fryer exited 1" }),
            artifacts: [],
          })),
        };
      },
    },
  },
  {
    file: "burn-in-nvloom",
    kind: "BURN_IN",
    params: { durationMinutes: 60, tests: ["hardware-tests", "nvloom"] },
    activities: { preflight: async () => plan({ topologyRegion: "glo1" }) },
  },
  {
    file: "burn-in-nvloom-no-region",
    kind: "BURN_IN",
    params: { durationMinutes: 60, tests: ["nvloom"] },
    activities: {},
  },
  {
    file: "burn-in-cancelled",
    kind: "BURN_IN",
    params: { durationMinutes: 60 },
    activities: {},
    cancelWhileWaiting: true,
  },
  { file: "release-slurm", kind: "RELEASE", params: {}, activities: {} },
  {
    file: "release-no-slurm",
    kind: "RELEASE",
    params: {},
    activities: { preflight: async () => plan({ slurmEnabled: false }) },
  },
  // Recorded after the SLURM step came to follow openstackSlurmEnabled (patched()).
  { file: "release-openstack-slurm", kind: "RELEASE", params: {}, activities: {} },
  {
    file: "release-slurm-without-openstack",
    kind: "RELEASE",
    params: {},
    activities: { preflight: async () => plan({ openstackSlurmEnabled: false }) },
  },
  { file: "slurm-adopt-succeeded", kind: "SLURM_ADOPT", params: {}, activities: {} },
  {
    file: "slurm-adopt-nova-fault",
    kind: "SLURM_ADOPT",
    params: {},
    activities: {
      novaBootSlurmNode: async (d) => {
        throw ApplicationFailure.nonRetryable(
          `Nova server ${d.name} failed: No valid host was found. There are not enough hosts available.`,
          "SourceRejected",
        );
      },
    },
  },
  { file: "teardown-succeeded", kind: "TEARDOWN", params: {}, activities: {} },
  {
    file: "repair-repaired",
    kind: "REPAIR",
    params: { ticket: "OPS-7", description: "GPU 3 off the bus", burnInMinutes: 30 },
    activities: {},
    operator: { outcome: "repaired", note: "reseated GPU 3" },
  },
  {
    file: "repair-operator-failed",
    kind: "REPAIR",
    params: { ticket: "OPS-8", burnInMinutes: 60 },
    activities: {},
    operator: { outcome: "failed", note: "board to RMA" },
  },
  {
    file: "repair-retest-failed",
    kind: "REPAIR",
    params: { ticket: "OPS-9", burnInMinutes: 60 },
    activities: {
      slurmWait: async (a) => ({
        device: a.device,
        slurmJobId: a.slurmJobId,
        state: a.device === "gpu002" ? "FAILED" : "COMPLETED",
        exitCode: a.device === "gpu002" ? 3 : 0,
      }),
    },
    operator: { outcome: "repaired", note: null },
  },
  { file: "reimage-succeeded", kind: "REIMAGE", params: { image: "ubuntu-24.04-gpu" }, activities: {} },
  { file: "enrol-with-ports", kind: "ENROL", params: {}, activities: {} },
  {
    file: "enrol-port-mac-taken",
    kind: "ENROL",
    params: {},
    activities: {
      ironicPorts: async (d) => {
        throw ApplicationFailure.nonRetryable(
          `the MAC address 02:00:00:00:01:0${d.name.slice(-1)} of ${d.name} eth1 is already a port of Ironic node gpu009`,
          "BadInput",
        );
      },
    },
  },
  {
    file: "image-node-succeeded",
    kind: "IMAGE_NODE",
    params: {
      image: "http://images.example/ubuntu-24.04-gpu.qcow2",
      osHash: { algo: "sha256", value: "ab".repeat(32) },
      userData: "#cloud-config\nhostname: gpu001\n",
    },
    activities: {},
  },
  {
    file: "image-node-deploy-failed",
    kind: "IMAGE_NODE",
    params: { image: "0190a5b4-3333-7000-8000-000000000001" },
    activities: {
      ironicDeploy: async (d) => {
        throw ApplicationFailure.nonRetryable(
          `deploy: node ${d.name} is deploy failed: image download failed`,
          "SourceRejected",
        );
      },
    },
  },
  // Since the repair-retest-guard patch: the re-test's results collected and reported, a failing
  // one judged on them (an Xid though the job exited 0), and a re-test that does not complete
  // cordoning the devices again.
  {
    file: "repair-retest-results-passed",
    kind: "REPAIR",
    params: { ticket: "OPS-10", burnInMinutes: 30 },
    activities: {},
    operator: { outcome: "repaired", note: "reseated GPU 3" },
  },
  {
    file: "repair-retest-results-xid",
    kind: "REPAIR",
    params: { ticket: "OPS-11", burnInMinutes: 30 },
    activities: {
      burnInCollect: async (a) => ({
        deviceId: a.deviceId,
        status: a.deviceId === device(2).deviceId ? "FAILED" : "PASSED",
        tests: a.tests.map((test) => ({
          test,
          passed: a.deviceId !== device(2).deviceId,
          exitCode: 0,
          image: `/vast/enroot-cache/${test}.sqsh`,
          architecture: "aarch64",
          figures: {
            gpus: [{ index: 0, tflops: 51.494 }],
            xids:
              a.deviceId === device(2).deviceId
                ? [{ pciAddress: "0000:1b:00", code: 79, message: "GPU has fallen off the bus." }]
                : [],
            reasons: [],
          },
          ...(a.deviceId === device(2).deviceId ? { message: `${test} exited 0; Xid 79 logged` } : {}),
          artifacts: [],
        })),
      }),
    },
    operator: { outcome: "repaired", note: null },
  },
  {
    file: "repair-retest-cancelled",
    kind: "REPAIR",
    params: { ticket: "OPS-12", burnInMinutes: 30 },
    activities: {},
    cancelWhileWaiting: true,
    operator: { outcome: "repaired", note: null },
  },
  // Since the enrol-bmc-verifies patch: ironic-enroll only registers the node, bmc-configure
  // manages it (Ironic verifies the BMC credentials) before inspection.
  { file: "enrol-bmc-verified", kind: "ENROL", params: {}, activities: {} },
  {
    file: "enrol-bmc-wrong-password",
    kind: "ENROL",
    params: {},
    activities: {
      configureBmc: async (d) => {
        throw ApplicationFailure.nonRetryable(
          `manage: node ${d.name} is enroll: Failed to get power state for node ${d.ironicNodeUuid}. Error: HTTP GET http://10.0.0.1/redfish/v1/Systems/1 returned code 401.`,
          "SourceRejected",
        );
      },
    },
  },
  {
    file: "node-swap-succeeded",
    kind: "NODE_SWAP",
    params: { spareDeviceId: "0190a5b4-0000-7000-8000-000000000003" },
    activities: { preflight: async () => ({ ...plan({ topologyRegion: "us-east-1" }), devices: [device(1)] }) },
  },
  {
    file: "node-swap-cabled",
    kind: "NODE_SWAP",
    params: { spareDeviceId: "0190a5b4-0000-7000-8000-000000000003" },
    activities: {
      preflight: async () => ({ ...plan({ topologyRegion: "us-east-1" }), devices: [device(1)] }),
      swapPlan: async (a) => ({
        failed: a.failed,
        spare: { ...device(3), deviceId: a.spareDeviceId },
        target: { location: 1, rack: 2, position: 10, face: "front" },
        moved: false,
        cables: [
          {
            cableId: 7,
            iface: "eth0",
            end: "A",
            far: [{ object_type: "dcim.interface", object_id: 900 }],
            status: "connected",
            type: "cat6",
            label: "",
            color: "",
            length: null,
            lengthUnit: null,
            description: "",
          },
        ],
      }),
    },
  },
  {
    file: "node-swap-mac-forbidden",
    kind: "NODE_SWAP",
    params: { spareDeviceId: "0190a5b4-0000-7000-8000-000000000003" },
    activities: {
      preflight: async () => ({ ...plan({ topologyRegion: "us-east-1" }), devices: [device(1)] }),
      swapNetboxMacs: async () => {
        throw ApplicationFailure.nonRetryable(
          "POST /api/dcim/mac-addresses/ -> 403: the NetBox token lacks dcim.add_macaddress",
          "SourceRejected",
        );
      },
    },
  },
];

/** Sends the operator's signal once the operator step waits for it, as the workflow agent would forward it. */
async function signalWhenWaiting(handle: WorkflowHandle, o: Pick<OperatorSignal, "outcome" | "note">): Promise<void> {
  for (;;) {
    const p = await handle.query<WorkflowProgress>(PROGRESS_QUERY);
    if (p.steps.some((st) => st.name === "operator" && st.message === WAITING_FOR_OPERATOR)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await handle.signal(OPERATOR_SIGNAL, {
    ...o,
    signalledBy: "fleet-admin",
    signalledAt: "2026-12-03T12:00:00.000Z",
  } satisfies OperatorSignal);
}

Runtime.install({
  telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: "WARN" }), forward: {} } },
});
const temporal = await startTemporal();
try {
  const nativeConnection = await NativeConnection.connect({ address: temporal.address });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  await mkdir(OUT, { recursive: true });
  // One worker per scenario: each has its own canned activities. With arguments, only the
  // scenarios named (e.g. `npm run histories:record -- burn-in-submit-failed`): the committed
  // histories of the others stay as recorded, which is what running workflows look like.
  const only = process.argv.slice(2);
  for (const [i, sc] of SCENARIOS.entries()) {
    if (only.length && !only.includes(sc.file)) continue;
    const taskQueue = `${TASK_QUEUE}-${i}`;
    const activities: Activities = { ...ok, ...sc.activities };
    let waiting = 0;
    let allWaiting!: () => void;
    const everyDeviceWaiting = new Promise<void>((resolve) => (allWaiting = resolve));
    if (sc.cancelWhileWaiting)
      activities.slurmWait = () => {
        if (++waiting === plan().devices.length) allWaiting();
        return waitUntilCancelled();
      };
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowsPath: fileURLToPath(
        new URL("../apps/satellite-agents/src/temporal-worker/workflows/index.ts", import.meta.url),
      ),
      activities,
    });
    const workflowId = `history-${sc.file}`;
    // Each scenario's params are written for its kind.
    const input = {
      jobId: `0190a5b4-2222-7000-8000-0000000000${String(i).padStart(2, "0")}`,
      jobName: `${sc.kind.toLowerCase()}-recorded-${i}`,
      kind: sc.kind,
      params: sc.params,
    } as JobWorkflowInput;
    await worker.runUntil(async () => {
      const handle = await client.workflow.start(JOB_WORKFLOWS[sc.kind], { workflowId, taskQueue, args: [input] });
      if (sc.cancelWhileWaiting) void everyDeviceWaiting.then(() => handle.cancel());
      if (sc.operator) await signalWhenWaiting(handle, sc.operator);
      const outcome = await handle.result().then(
        () => "completed",
        (err: unknown) => (err instanceof WorkflowFailedError ? `failed: ${err.cause?.message}` : String(err)),
      );
      const history = await handle.fetchHistory();
      await writeFile(`${OUT}${sc.file}.json`, JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + "\n");
      console.log(`${sc.file}: ${outcome} (${history.events?.length} events)`);
    });
  }
  await connection.close();
  await nativeConnection.close();
} finally {
  await temporal.stop();
}
