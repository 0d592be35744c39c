/** A hub client authenticated as one agent of a new satellite, as the benchmarks drive agents in-process. */
import { HubClient } from "@fm/clients";
import { agentScope, type AgentKind } from "@fm/domain";
import { TokenSource } from "../apps/satellite-agents/src/runtime/token.ts";
import { bearer } from "@fm/test-support/process";

export async function agentHubClient(
  hubUrl: string,
  adminToken: string,
  opts: { satellite: string; siteIds: string[]; agent: AgentKind },
): Promise<HubClient> {
  const res = await fetch(`${hubUrl}/api/v1/satellites/`, {
    method: "POST",
    headers: { ...bearer(adminToken), "content-type": "application/json" },
    body: JSON.stringify({ name: opts.satellite, siteIds: opts.siteIds, environment: "dev" }),
  });
  if (res.status !== 201) throw new Error(`creating satellite ${opts.satellite}: ${res.status} ${await res.text()}`);
  const creds = (
    (await res.json()) as { secrets: { agent: string; clientId: string; clientSecret: string }[] }
  ).secrets.find((s) => s.agent === opts.agent)!;
  const tokens = new TokenSource({
    issuer: hubUrl,
    clientId: creds.clientId,
    clientSecret: creds.clientSecret,
    scope: `fleet.read ${agentScope(opts.agent)}`,
  });
  // One attempt, long timeout: a benchmark measures a push, it does not retry one.
  return new HubClient({ baseUrl: hubUrl, token: () => tokens.get(), timeoutMs: 600_000, maxAttempts: 1 });
}
