/**
 * `npm run agent -- <name>`: runs one satellite agent as its own process. Each agent kind has
 * its own OAuth2 client, port and Kubernetes deployment; they share only this runtime.
 */
import { runAgent, type AgentDefinition } from "./runtime/agent.ts";
import { openstackAgent } from "./openstack/agent.ts";
import { netboxAgent } from "./netbox/agent.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const AGENTS: Record<string, AgentDefinition<any>> = { openstack: openstackAgent, netbox: netboxAgent };

const name = process.argv[2];
if (!name || !(name in AGENTS)) {
  process.stderr.write(`usage: npm run agent -- <${Object.keys(AGENTS).join("|")}>\n${name ? `unknown agent '${name}'\n` : ""}`);
  process.exit(2);
}
// Exit explicitly: idle keep-alive sockets to the hub must not hold a stopping agent open.
process.exit(await runAgent(AGENTS[name]!));
