/**
 * The Temporal worker of one site (`npm run agent -- temporal-worker`), run in the process shell
 * like every agent: its work is Temporal's Worker.run(), polling the site's task queue and
 * running the job workflows (./workflows/) with activities built from this site's clients
 * (./activities/). It authenticates to the hub as the satellite's `temporal-worker` client.
 *
 * Nothing is lost when it stops: Temporal keeps every workflow's history, and a restarted
 * worker resumes each one where it was (runbook: FleetManagerTemporalWorkerDown). SIGTERM lets
 * running activities finish (up to FM_SHUTDOWN_TIMEOUT_MS), then exits 0; a worker that cannot
 * reach Temporal at start retries with backoff and then exits 1. It needs no hub to start.
 */
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from "@temporalio/worker";
import type { ProcessDefinition, Running } from "../runtime/shell.ts";
import { taskQueueOf } from "../runtime/temporal-env.ts";
import { createActivities } from "./activities/index.ts";
import { sourceClients } from "./clients.ts";
import { s3ArtifactStore } from "./activities/artifacts.ts";
import { directoryCredentials } from "./activities/bmc-credentials.ts";
import { checkWorkerConfig, redfishVerifyCa, workerEnv } from "./env.ts";
import { workflowCode } from "./workflow-bundle.ts";

export const temporalWorker: ProcessDefinition<typeof workerEnv> = {
  kind: "temporal-worker",
  title: "temporal worker",
  env: workerEnv,
  checkConfig: checkWorkerConfig,
  // Activities call the hub once per step: a retry there is cheaper than a Temporal retry.
  hubAttempts: { maxAttempts: 3 },
  // Worker.run() waits up to FM_SHUTDOWN_TIMEOUT_MS (shutdownGraceTime) for activities, then stops.
  shutdownSlackMs: 5000,
  async start(ctx): Promise<Running | undefined> {
    const { config, log, signal } = ctx;
    const clients = await sourceClients(config, ctx.retry);
    if (!clients) return undefined;
    const activities = createActivities({
      site: config.FM_SITE,
      hub: ctx.hub,
      ...clients,
      ironicDriver: config.IRONIC_ENROL_DRIVER,
      ironicBootInterface: config.IRONIC_ENROL_BOOT_INTERFACE,
      deployImages:
        config.IRONIC_DEPLOY_KERNEL && config.IRONIC_DEPLOY_RAMDISK
          ? { kernel: config.IRONIC_DEPLOY_KERNEL, ramdisk: config.IRONIC_DEPLOY_RAMDISK }
          : undefined,
      bmcCredentials: config.BMC_CREDENTIALS_DIR ? directoryCredentials(config.BMC_CREDENTIALS_DIR) : undefined,
      redfish: {
        addressTemplate: config.IRONIC_REDFISH_ADDRESS_TEMPLATE,
        systemId: config.IRONIC_REDFISH_SYSTEM_ID,
        verifyCa: redfishVerifyCa(config.IRONIC_REDFISH_VERIFY_CA),
      },
      dhcpHostsDir: config.FM_DHCP_HOSTS_DIR,
      slurmDeviceNamePrefix: config.SLURM_DEVICE_NAME_PREFIX,
      burnIn: {
        images: {
          defaultByArch: {
            ...(config.HARDWARE_TESTS_DEFAULT_IMAGE_X86_64
              ? { x86_64: config.HARDWARE_TESTS_DEFAULT_IMAGE_X86_64 }
              : {}),
            ...(config.HARDWARE_TESTS_DEFAULT_IMAGE_AARCH64
              ? { aarch64: config.HARDWARE_TESTS_DEFAULT_IMAGE_AARCH64 }
              : {}),
          },
          defaultScalar: config.HARDWARE_TESTS_DEFAULT_IMAGE,
          gpuFryer: config.HARDWARE_TESTS_GPU_FRYER_IMAGE,
          nvloom: config.HARDWARE_TESTS_NVLOOM_IMAGE,
        },
        command: config.FM_BURNIN_COMMAND,
        outputDir: config.FM_BURNIN_OUTPUT_DIR,
      },
      artifacts:
        config.S3_ENDPOINT && config.BUCKET_NAME && config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY
          ? s3ArtifactStore({
              endpoint: config.S3_ENDPOINT,
              bucket: config.BUCKET_NAME,
              region: config.AWS_REGION,
              accessKeyId: config.AWS_ACCESS_KEY_ID,
              secretAccessKey: config.AWS_SECRET_ACCESS_KEY,
            })
          : undefined,
      pollIntervalMs: config.FM_POLL_INTERVAL_MS,
    });
    // The SDK's own log lines (Rust core) go to stderr as warnings only.
    Runtime.install({
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: "WARN" }), forward: {} } },
    });
    const connection = await ctx.retry("connect to Temporal", () =>
      NativeConnection.connect({ address: config.TEMPORAL_ADDRESS }),
    );
    if (!connection) return undefined;
    const taskQueue = taskQueueOf(config, config.FM_SITE);
    const worker = await Worker.create({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      ...workflowCode(),
      activities,
      maxConcurrentActivityTaskExecutions: config.FM_MAX_CONCURRENT_ACTIVITIES,
      shutdownGraceTime: config.FM_SHUTDOWN_TIMEOUT_MS,
    });
    const shutdown = () => {
      log.info("finishing running activities");
      worker.shutdown();
    };
    if (signal.aborted) shutdown();
    else signal.addEventListener("abort", shutdown, { once: true });
    log.info(
      {
        taskQueue,
        namespace: config.TEMPORAL_NAMESPACE,
        temporal: config.TEMPORAL_ADDRESS,
        ironic: Object.keys(clients.ironic),
        netbox: Boolean(clients.netbox),
        slurm: Boolean(clients.slurm),
        bmcCredentials: Boolean(config.BMC_CREDENTIALS_DIR),
        enrolTargetProject: config.IRONIC_ENROL_TARGET_PROJECT_NAME ?? null,
      },
      "temporal worker running",
    );
    const done = (async () => {
      try {
        await worker.run();
      } finally {
        await connection.close();
      }
    })();
    return { loops: [], done };
  },
};
