/**
 * `npm run agent -- <name>`: runs one satellite agent as its own process. Each agent kind has
 * its own OAuth2 client, port and Kubernetes deployment; they share only this runtime.
 */
import { runAgent, type AgentDefinition } from "./runtime/agent.ts";
import { openstackAgent } from "./openstack-agent/agent.ts";
import { netboxAgent } from "./netbox-agent/agent.ts";
import { workflowAgent } from "./workflow-agent/agent.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const AGENTS: Record<string, AgentDefinition<any>> = {
  openstack: openstackAgent,
  netbox: netboxAgent,
  workflow: workflowAgent,
};
const names = [...Object.keys(AGENTS), "temporal-worker"];

const name = process.argv[2];
if (!name || !names.includes(name)) {
  process.stderr.write(`usage: npm run agent -- <${names.join("|")}>\n${name ? `unknown agent '${name}'\n` : ""}`);
  process.exit(2);
}
// The Temporal worker is not a reflector: it runs workflows (imported only when asked for,
// since it loads Temporal's native core).
const run =
  name === "temporal-worker" ? (await import("./temporal-worker/main.ts")).runWorker() : runAgent(AGENTS[name]!);
// Exit explicitly: idle keep-alive sockets to the hub must not hold a stopping agent open.
process.exit(await run);
