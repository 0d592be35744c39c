/**
 * The Temporal worker of one site (`npm run agent -- temporal-worker`): polls the site's task queue and runs
 * the job workflows (./workflows.ts) with activities built from this site's clients
 * (./activities.ts). It authenticates to the hub as the satellite's `temporal-worker` client.
 *
 * Nothing is lost when it stops: Temporal keeps every workflow's history, and a restarted
 * worker resumes each one where it was (runbook: FleetManagerTemporalWorkerDown). SIGTERM lets
 * running activities finish (up to FM_SHUTDOWN_TIMEOUT_MS), then exits 0; a worker that cannot
 * reach Temporal at start retries with backoff and then exits 1.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from "@temporalio/worker";
import { z } from "zod";
import type { IronicClient } from "@fm/clients";
import { CloudConfigError, HubClient, NetboxClient, SlurmClient, ironicClientFor, loadCloud } from "@fm/clients";
import { IRONIC_INSTANCES, agentScope, type IronicInstance } from "@fm/domain";
import { taskQueueFor } from "@fm/domain/workflows";
import { ConfigError, loadConfig, satelliteName } from "../runtime/config.ts";
import { createAgentMetrics } from "../runtime/metrics.ts";
import { TokenSource } from "../runtime/token.ts";
import { agentLogger, heartbeats, listen, withRetries } from "../runtime/agent.ts";
import { describe } from "../runtime/reflector.ts";
import { createActivities } from "./activities/index.ts";
import { TemporalEnv } from "../workflow-agent/temporal.ts";

export const workerEnv = {
  ...TemporalEnv,
  OPENSTACK_OVERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the overcloud Ironic"),
  OPENSTACK_UNDERCLOUD_CLOUDS_FILE: z.string().min(1).optional().describe("clouds.yaml of the undercloud Ironic"),
  OPENSTACK_OVERCLOUD_CLOUD: z.string().min(1).optional(),
  OPENSTACK_UNDERCLOUD_CLOUD: z.string().min(1).optional(),
  IRONIC_ENROL_DRIVER: z
    .string()
    .min(1)
    .default("redfish")
    .describe("Ironic hardware type of enrolled nodes (fake-hardware in tests)"),
  NETBOX_URL: z.url().optional().describe("NetBox base URL (enrolment, unenrolment)"),
  NETBOX_TOKEN: z.string().min(1).optional(),
  SLURM_URL: z.url().optional().describe("slurmrestd base URL (burn-in, release SLURM step)"),
  SLURM_API_VERSION: z
    .string()
    .regex(/^v0\.0\.\d+$/)
    .default("v0.0.38")
    .describe("slurmrestd OpenAPI plugin version"),
  SLURM_USER: z.string().min(1).default("root").describe("X-SLURM-USER-NAME"),
  SLURM_TOKEN_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("File holding the slurmrestd JWT (re-read on every request, so rotation needs no restart)"),
  FM_DHCP_HOSTS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("dnsmasq --dhcp-hostsdir where enrolment writes BMC reservations"),
  FM_BURNIN_COMMAND: z
    .string()
    .min(1)
    .default('/usr/local/bin/fm-burn-in --duration "$FM_BURNIN_DURATION_S"')
    .describe("Shell command a burn-in SLURM job runs"),
  FM_POLL_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .default(2000)
    .describe("How often waiting activities poll Ironic and SLURM"),
  FM_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).default(50),
};

export async function runWorker(): Promise<number> {
  let config: ReturnType<typeof loadConfig<typeof workerEnv>>;
  let satellite: string;
  try {
    config = loadConfig(workerEnv);
    satellite = satelliteName("temporal-worker", config);
    for (const [a, b] of [
      ["NETBOX_URL", "NETBOX_TOKEN"],
      ["SLURM_URL", "SLURM_TOKEN_FILE"],
    ] as const) {
      if (Boolean(config[a]) !== Boolean(config[b]))
        throw new ConfigError([`${config[a] ? b : a}: required together with ${config[a] ? a : b}`]);
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`temporal-worker: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = agentLogger("temporal-worker", config, satellite);
  const metrics = createAgentMetrics({ agent: "temporal-worker", site: config.FM_SITE, satellite });
  const tokens = new TokenSource({
    issuer: config.FM_TOKEN_ISSUER ?? config.FM_HUB_URL,
    clientId: config.FM_CLIENT_ID,
    clientSecret: config.FM_CLIENT_SECRET,
    scope: `fleet.read ${agentScope("temporal-worker")}`,
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });
  const hub = new HubClient({
    baseUrl: config.FM_HUB_URL,
    token: () => tokens.get(),
    onUnauthorized: () => tokens.invalidate(),
    maxAttempts: 3,
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });

  const ironic: Partial<Record<IronicInstance, IronicClient>> = {};
  for (const instance of IRONIC_INSTANCES) {
    const key = instance === "overcloud" ? "OVERCLOUD" : "UNDERCLOUD";
    const file = config[`OPENSTACK_${key}_CLOUDS_FILE`];
    if (!file) continue;
    try {
      ironic[instance] = await ironicClientFor(loadCloud(file, config[`OPENSTACK_${key}_CLOUD`]), {
        timeoutMs: config.FM_HTTP_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof CloudConfigError) {
        process.stderr.write(`temporal-worker: OPENSTACK_${key}_CLOUDS_FILE: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  }
  const netbox =
    config.NETBOX_URL && config.NETBOX_TOKEN
      ? new NetboxClient({ url: config.NETBOX_URL, token: config.NETBOX_TOKEN, timeoutMs: config.FM_HTTP_TIMEOUT_MS })
      : undefined;
  const slurmTokenFile = config.SLURM_TOKEN_FILE;
  const slurm =
    config.SLURM_URL && slurmTokenFile
      ? new SlurmClient({
          baseUrl: config.SLURM_URL,
          apiVersion: config.SLURM_API_VERSION,
          user: config.SLURM_USER,
          token: () => readFileSync(slurmTokenFile, "utf8").trim(),
          timeoutMs: config.FM_HTTP_TIMEOUT_MS,
        })
      : undefined;
  const activities = createActivities({
    site: config.FM_SITE,
    hub,
    netbox,
    ironic,
    slurm,
    ironicDriver: config.IRONIC_ENROL_DRIVER,
    dhcpHostsDir: config.FM_DHCP_HOSTS_DIR,
    burnInCommand: config.FM_BURNIN_COMMAND,
    pollIntervalMs: config.FM_POLL_INTERVAL_MS,
  });

  // The SDK's own log lines (Rust core) go to stderr as warnings only.
  Runtime.install({
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: "WARN" }), forward: {} } },
  });

  const stop = new AbortController();
  let worker: Worker | undefined;
  let ready = false;
  const server = await listen(config, metrics, () => ({ ready, reflectors: [] }), log);
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    log.info({ signal: sig }, "shutting down: finishing running activities");
    stop.abort();
    worker?.shutdown();
    setTimeout(() => {
      log.error({ timeoutMs: config.FM_SHUTDOWN_TIMEOUT_MS }, "shutdown timed out; exiting");
      process.exit(1);
    }, config.FM_SHUTDOWN_TIMEOUT_MS + 5000).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  let code = 0;
  let beating: Promise<void> | undefined;
  try {
    const taskQueue = config.TEMPORAL_TASK_QUEUE ?? taskQueueFor(config.FM_SITE);
    const connection = await withRetries(config, log, stop.signal, "connect to Temporal", () =>
      NativeConnection.connect({ address: config.TEMPORAL_ADDRESS }),
    );
    if (!connection) return 0;
    worker = await Worker.create({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      workflowsPath: fileURLToPath(new URL("./workflows/index.ts", import.meta.url)),
      activities,
      maxConcurrentActivityTaskExecutions: config.FM_MAX_CONCURRENT_ACTIVITIES,
      shutdownGraceTime: config.FM_SHUTDOWN_TIMEOUT_MS,
    });
    if (stop.signal.aborted) worker.shutdown();
    ready = true;
    log.info(
      {
        taskQueue,
        namespace: config.TEMPORAL_NAMESPACE,
        temporal: config.TEMPORAL_ADDRESS,
        ironic: Object.keys(ironic),
        netbox: Boolean(netbox),
        slurm: Boolean(slurm),
      },
      "temporal worker running",
    );
    beating = heartbeats(hub, "temporal-worker", satellite, [], config, log, stop.signal);
    await worker.run();
    await connection.close();
  } catch (err) {
    code = 1;
    log.fatal({ err: describe(err) }, "temporal worker failed");
  } finally {
    ready = false;
    stop.abort();
    await beating;
    await new Promise<void>((r) => server.close(() => r()));
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  log.info({ exitCode: code }, "temporal worker stopped");
  return code;
}
