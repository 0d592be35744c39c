/**
 * The workflow agent, the Temporal client side of jobs: hands its site's jobs to Temporal and
 * reports them back to the hub. It runs one controller, the job dispatcher (./dispatcher.ts),
 * every FM_REFLECT_INTERVAL_S, under store `workflow` (FleetManagerWorkflowAgentStale reads
 * `fleet_manager_reflector_age_seconds{store="workflow"}`). The workflows themselves run in the
 * Temporal worker (../temporal-worker/).
 */
import { Client, Connection } from "@temporalio/client";
import { z } from "zod";
import { LogsUrlSchema } from "@fm/domain";
import { loopAgent } from "../runtime/agent.ts";
import { controller } from "../runtime/controller.ts";
import { TemporalEnv, taskQueueOf } from "../runtime/temporal-env.ts";
import { JobDispatcher } from "./dispatcher.ts";

/** The workflow agent's own variables, beyond CommonConfigSchema. */
export const workflowAgentEnv = {
  ...TemporalEnv,
  FM_WORKFLOW_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(10)
    .describe("Jobs handled at once per cycle"),
  FM_QUERY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(5000)
    .describe("How long a progress query may take (no worker running: it fails)"),
  FM_TEMPORAL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe("Deadline of Temporal calls for one job (without one, a call to a Temporal that is down can hang)"),
  FM_LOGS_EXPLORER_URL: LogsUrlSchema.optional().describe(
    "workflowAgent.logsExplorerUrl: the Grafana Explore URL linked from failed jobs; {jobId} in it becomes the job's id",
  ),
};

export const workflowAgent = loopAgent({
  kind: "workflow",
  env: workflowAgentEnv,
  // The interval is the delay before a new job is picked up, and between progress reports.
  envDefaults: { FM_REFLECT_INTERVAL_S: "5" },
  async setup(ctx) {
    const { config, site, log } = ctx;
    const connection = await Connection.connect({
      address: config.TEMPORAL_ADDRESS,
      connectTimeout: config.FM_HTTP_TIMEOUT_MS,
    });
    const taskQueue = taskQueueOf(config, site.slug);
    log.info(
      { temporal: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, taskQueue },
      "Starting job dispatcher",
    );
    const dispatcher = new JobDispatcher({
      hub: ctx.hub,
      temporal: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }),
      connection,
      site,
      taskQueue,
      namespace: config.TEMPORAL_NAMESPACE,
      log,
      now: ctx.now,
      concurrency: config.FM_WORKFLOW_CONCURRENCY,
      queryTimeoutMs: config.FM_QUERY_TIMEOUT_MS,
      temporalTimeoutMs: config.FM_TEMPORAL_TIMEOUT_MS,
      logsExplorerUrl: config.FM_LOGS_EXPLORER_URL,
    });
    return [controller(dispatcher)];
  },
});
