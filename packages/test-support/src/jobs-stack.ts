/**
 * Everything a job runs through, as separate processes on real HTTP and gRPC: the hub on
 * PostgreSQL, the NetBox test server, a real Ironic (fake-hardware), a real SLURM (slurmrestd),
 * a real Temporal dev server, and the site's netbox agent (to fill the hub's inventory), workflow
 * agent and Temporal worker. Used by test/jobs.e2e.test.ts and bench/jobs.ts.
 *
 * The NetBox fleet is realisticFleet's site IAD1; the `staged` GPU devices it returns are
 * renamed after the SLURM nodes (gpu001...), so a burn-in pinned to a device runs on the SLURM
 * node of the same name.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Device, Job } from "@fm/domain";
import { startAgent, type AgentProcess } from "./agents.ts";
import { startIronic, type IronicPeer, type StartIronicOptions } from "./ironic.ts";
import { realisticFleet, startNetboxServer, type NetboxServer } from "./netbox-server.ts";
import { createTestDatabase, type TestDatabase } from "./postgres.ts";
import { ADMIN_SECRET, bearer, clientToken, startHub, type HubProcess } from "./process.ts";
import { startSlurm, type SlurmPeer } from "./slurm.ts";
import type { S3Endpoint } from "./s3.ts";
import { startTemporal, type TemporalPeer } from "./temporal.ts";
import { eventually } from "./wait.ts";

export const NETBOX_TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = JSON.stringify({
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
});
export const SITE = "iad1";

export interface JobsStack {
  hub: HubProcess;
  /** The hub's database (to read what the hub stored, e.g. with pg_dump). */
  db: TestDatabase;
  admin: string;
  siteId: string;
  nb: NetboxServer;
  ironic: IronicPeer;
  slurm: SlurmPeer | undefined;
  temporal: TemporalPeer;
  netboxAgent: AgentProcess;
  workflowAgent: AgentProcess;
  worker: AgentProcess;
  /** Hub ids of the staged devices, in the order of their names (gpu001, gpu002, ...). */
  staged: Device[];
  dhcpDir: string;
  /** FM_BURNIN_OUTPUT_DIR: the folder the burn-in tests write to and the worker reads. */
  burnInDir: string;
  workflowEnv: Record<string, string>;
  workerEnv: Record<string, string>;
  /** The hub URL, site and client credentials of one of the satellite's agents (to start another agent). */
  agentEnv(agent: string): Record<string, string>;
  startWorkflowAgent(): Promise<AgentProcess>;
  startWorker(): Promise<AgentProcess>;
  api<T = Job>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T & { code?: string; detail?: string } }>;
  /** Waits for the job to reach one of `statuses` (a terminal one by default). */
  waitForJob(id: string, statuses?: Job["status"][], timeoutMs?: number): Promise<Job>;
  /** Creates a job (it must be accepted) and waits for it to end. */
  runJob(body: { kind: Job["kind"]; deviceIds: string[]; params?: unknown }, timeoutMs?: number): Promise<Job>;
  stop(): Promise<void>;
}

export interface JobsStackOptions {
  /** Staged GPU devices to prepare (NetBox `staged`, named gpu001...). */
  stagedDevices: number;
  /** Start SLURM with that many nodes (named like the staged devices); 0: no SLURM. */
  slurmNodes: number;
  /** The last n SLURM nodes are configured without a running slurmd (servers SLURM adoption has yet to boot). */
  slurmStandbyNodes?: number;
  /** What a burn-in test runs on a node (FM_BURNIN_COMMAND), standing in for the Enroot images. */
  burnInCommand?: string;
  /** The object storage burn-in artifacts go to (the workflow agent's bucket); none: not uploaded. */
  s3?: S3Endpoint;
  pollIntervalMs?: number;
  concurrency?: number;
  /** Which hub log lines to keep (see startHub): a benchmark keeps only errors. */
  hubLogs?: "all" | "errors";
  /** More of the hub's environment (e.g. FM_IMAGE_ALLOW_HTTP and FM_IMAGE_HOSTS for a local image server). */
  hubEnv?: Record<string, string>;
  /** How the test Ironic runs (e.g. without automated cleaning, for redfish nodes). */
  ironic?: StartIronicOptions;
  /** The BMC address of the i-th staged device (NetBox oob_ip), instead of the fleet's 10.x one. */
  stagedBmcAddress?: (i: number) => string;
  /**
   * Worker environment to add or replace (another hardware type, a Keystone-fronted clouds.yaml,
   * BMC credentials), computed once the peers run; `dir` is the stack's scratch folder.
   */
  workerEnv?: (ctx: { ironic: IronicPeer; dir: string }) => Promise<Record<string, string>>;
}

export async function startJobsStack(o: JobsStackOptions): Promise<JobsStack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    const dir = await mkdtemp(join(tmpdir(), "fm-jobs-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const dhcpDir = join(dir, "dhcp-hosts");
    const burnInDir = join(dir, "burn-in");

    // NetBox: site IAD1 with enough GPU trays; the first N become staged and are renamed.
    const data = realisticFleet({
      sites: 1,
      devicesPerSite: Math.max(24, Math.ceil(o.stagedDevices * 1.6) + 8),
      interfacesPerDevice: 4,
    });
    const gpuRole = data.deviceRoles.find((r) => r.slug === "gpu-node")!.id;
    const gpus = data.devices.filter((d) => d.role === gpuRole && d.oob_ip !== null && d.cluster === 1);
    if (gpus.length < o.stagedDevices) throw new Error(`the fleet has only ${gpus.length} GPU devices`);
    const stagedNames = gpus.slice(0, o.stagedDevices).map((d, i) => {
      d.status = "staged";
      d.name = `gpu${String(i + 1).padStart(3, "0")}`;
      if (o.stagedBmcAddress)
        data.ipAddresses.find((ip) => ip.id === d.oob_ip)!.address = `${o.stagedBmcAddress(i)}/32`;
      return d.name;
    });
    for (const d of gpus.slice(o.stagedDevices)) if (d.status === "staged") d.status = "planned";
    const [nb, ironic, temporal, slurm] = await Promise.all([
      startNetboxServer({ token: NETBOX_TOKEN, data }),
      startIronic(o.ironic),
      startTemporal(),
      o.slurmNodes
        ? startSlurm({ nodes: o.slurmNodes, nodePrefix: "gpu", standbyNodes: o.slurmStandbyNodes })
        : Promise.resolve(undefined),
    ]);
    cleanups.push(
      () => nb.stop(),
      () => ironic.stop(),
      () => temporal.stop(),
    );
    if (slurm) cleanups.push(() => slurm.stop());

    const db: TestDatabase = await createTestDatabase(await templateName());
    cleanups.push(() => db.drop());
    const hub = await startHub({ ...o.hubEnv, DATABASE_URL: db.url }, undefined, { keepLogs: o.hubLogs });
    cleanups.push(() => hub.stop("SIGKILL"));
    const admin = await clientToken(hub.url, "fleet-admin", ADMIN_SECRET);
    const api = async <T = Job>(method: string, path: string, body?: unknown) => {
      const res = await fetch(`${hub.url}${path}`, {
        method,
        headers: { ...bearer(admin), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as T & { code?: string; detail?: string } };
    };
    const site = (
      await api<{ id: string }>("POST", "/api/v1/sites/", {
        slug: SITE,
        name: "Ashburn (IAD1)",
        slurmEnabled: Boolean(slurm),
        openstackSlurmEnabled: Boolean(slurm),
        configureDhcp: true,
        platformClassActivityReady: true,
      })
    ).body;
    const sat = (
      await api<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
        "POST",
        "/api/v1/satellites/",
        { name: "sys3-iad1", siteIds: [site.id], environment: "dev" },
      )
    ).body;
    const creds = (agent: string) => {
      const c = sat.secrets.find((s) => s.agent === agent)!;
      return { FM_CLIENT_ID: c.clientId, FM_CLIENT_SECRET: c.clientSecret };
    };
    const common = {
      FM_HUB_URL: hub.url,
      FM_SITE: SITE,
      FM_REFLECT_INTERVAL_S: "1",
      FM_BACKOFF_BASE_MS: "250",
      FM_BACKOFF_MAX_S: "2",
      FM_HEARTBEAT_INTERVAL_S: "5",
    };

    const netboxAgent = await startAgent("netbox", {
      ...common,
      ...creds("netbox"),
      NETBOX_URL: nb.url,
      NETBOX_TOKEN,
      NETBOX_CLUSTER: "iad1-compute",
      NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: MAPPING,
      NETBOX_RESYNC_INTERVAL_S: "3600",
    });
    cleanups.push(() => netboxAgent.stop("SIGKILL"));
    const staged = await eventually(async () => {
      const all = (await api<{ items: Device[] }>("GET", `/api/v1/devices/?site=${SITE}&status=staged&limit=1000`)).body
        .items;
      const found = stagedNames.map((n) => all.find((d) => d.name === n));
      if (found.some((d) => !d))
        throw new Error(`staged devices not in the hub yet (${all.length} of ${stagedNames.length})`);
      return found as Device[];
    }, 60_000);

    const clouds = join(dir, "overcloud-clouds.yaml");
    await writeFile(
      clouds,
      `clouds:\n  overcloud:\n    auth_type: none\n    baremetal_endpoint_override: ${ironic.url}\n`,
    );
    const temporalEnv = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: "default" };
    const workflowEnv = {
      ...common,
      ...creds("workflow"),
      ...temporalEnv,
      FM_WORKFLOW_CONCURRENCY: String(o.concurrency ?? 10),
      FM_LOGS_EXPLORER_URL: `http://grafana.test/explore?left=${encodeURIComponent('{"queries":[{"expr":"{app=\\"fleet-manager\\"} |= \\"')}{jobId}${encodeURIComponent('\\""}]}')}`,
    };
    const workerEnv: Record<string, string> = {
      ...common,
      ...creds("temporal-worker"),
      ...temporalEnv,
      OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds,
      IRONIC_ENROL_DRIVER: "fake-hardware",
      NETBOX_URL: nb.url,
      NETBOX_TOKEN,
      FM_DHCP_HOSTS_DIR: dhcpDir,
      FM_POLL_INTERVAL_MS: String(o.pollIntervalMs ?? 250),
      FM_BURNIN_COMMAND: o.burnInCommand ?? "sleep 1",
      FM_BURNIN_OUTPUT_DIR: burnInDir,
      HARDWARE_TESTS_DEFAULT_IMAGE_X86_64: "/vast/enroot-cache/x86_64/hardware-tests-default.sqsh",
      HARDWARE_TESTS_DEFAULT_IMAGE_AARCH64: "/vast/enroot-cache/aarch64/hardware-tests-default.sqsh",
      HARDWARE_TESTS_GPU_FRYER_IMAGE: "/vast/enroot-cache/gpu-fryer.sqsh",
      HARDWARE_TESTS_NVLOOM_IMAGE: "/vast/enroot-cache/nvloom.sqsh",
      ...(o.s3
        ? {
            S3_ENDPOINT: o.s3.endpoint,
            BUCKET_NAME: o.s3.bucket,
            AWS_ACCESS_KEY_ID: o.s3.accessKeyId,
            AWS_SECRET_ACCESS_KEY: o.s3.secretAccessKey,
          }
        : {}),
      FM_SHUTDOWN_TIMEOUT_MS: "3000",
    };
    if (o.workerEnv) Object.assign(workerEnv, await o.workerEnv({ ironic, dir }));
    if (slurm) {
      const tokenFile = join(dir, "slurm-token");
      await writeFile(tokenFile, slurm.token, { mode: 0o600 });
      // SLURM_CONF: the scontrol that resumes nodes on 22.05 (whose REST API has no node update) finds the cluster.
      Object.assign(workerEnv, {
        SLURM_URL: slurm.url,
        SLURM_TOKEN_FILE: tokenFile,
        SLURM_USER: "root",
        SLURM_CONF: slurm.slurmConf,
      });
    }
    const processes: AgentProcess[] = [];
    cleanups.push(() => Promise.all(processes.map((p) => p.stop("SIGKILL"))));
    const startWorkflowAgent = async () => {
      const p = await startAgent("workflow", workflowEnv, 60_000);
      processes.push(p);
      return p;
    };
    const startWorker = async () => {
      const p = await startAgent("temporal-worker", workerEnv, 60_000);
      processes.push(p);
      await p.waitForLog((l) => l.msg === "temporal worker running", 60_000);
      return p;
    };
    const [worker, workflowAgent] = await Promise.all([startWorker(), startWorkflowAgent()]);

    const waitForJob = (
      id: string,
      statuses: Job["status"][] = ["SUCCEEDED", "FAILED", "CANCELLED"],
      timeoutMs = 60_000,
    ) =>
      eventually(
        async () => {
          const job = (await api("GET", `/api/v1/jobs/${id}/`)).body;
          if (!statuses.includes(job.status))
            throw new Error(
              `job ${job.name} is ${job.status} (steps: ${job.steps.map((s) => `${s.name}=${s.status}`).join(" ")}), waiting for ${statuses.join("|")}`,
            );
          return job;
        },
        timeoutMs,
        200,
      );

    const runJob = async (body: { kind: Job["kind"]; deviceIds: string[]; params?: unknown }, timeoutMs = 90_000) => {
      const created = await api("POST", "/api/v1/jobs/", body);
      if (created.status !== 201) throw new Error(`job refused: ${created.status} ${JSON.stringify(created.body)}`);
      return waitForJob(created.body.id, undefined, timeoutMs);
    };

    return {
      hub,
      db,
      admin,
      siteId: site.id,
      nb,
      ironic,
      slurm,
      temporal,
      netboxAgent,
      workflowAgent,
      worker,
      staged,
      dhcpDir,
      burnInDir,
      workflowEnv,
      workerEnv,
      agentEnv: (agent: string) => ({ ...common, ...creds(agent) }),
      startWorkflowAgent,
      startWorker,
      api,
      waitForJob,
      runJob,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The migrated template database of this run (vitest provides it; the bench builds its own). */
async function templateName(): Promise<string | undefined> {
  try {
    const { inject } = await import("vitest");
    return inject("templateDatabase");
  } catch {
    return undefined;
  }
}
