/**
 * `npm run agent -- <name>`: runs one satellite process — an agent or the Temporal worker — in
 * the process shell (./runtime/shell.ts). Each has its own OAuth2 client, port and Kubernetes
 * deployment. A process's module is loaded only when asked for: the worker's pulls in
 * Temporal's native core.
 */
import type { z } from "zod";
import { runProcess, type ProcessDefinition } from "./runtime/shell.ts";

const PROCESSES: Record<string, () => Promise<ProcessDefinition<z.ZodRawShape>>> = {
  openstack: async () => (await import("./openstack-agent/agent.ts")).openstackAgent,
  slurm: async () => (await import("./slurm-agent/agent.ts")).slurmAgent,
  netbox: async () => (await import("./netbox-agent/agent.ts")).netboxAgent,
  workflow: async () => (await import("./workflow-agent/agent.ts")).workflowAgent,
  "health-status": async () => (await import("./health-status-agent/agent.ts")).healthStatusAgent,
  "temporal-worker": async () => (await import("./temporal-worker/worker.ts")).temporalWorker,
};

const name = process.argv[2];
const load = name && Object.hasOwn(PROCESSES, name) ? PROCESSES[name] : undefined;
if (!load) {
  const names = Object.keys(PROCESSES).join("|");
  process.stderr.write(`usage: npm run agent -- <${names}>\n${name ? `unknown agent '${name}'\n` : ""}`);
  process.exit(2);
}
// Exit explicitly: idle keep-alive sockets to the hub must not hold a stopping process open.
process.exit(await runProcess(await load()));
