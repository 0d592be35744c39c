/**
 * The health-status agent: every interval it runs each health rule (./rules.ts) as one instant
 * query against Prometheus or Mimir — one query per rule, never one per device — turns the
 * series into each device's health (./evaluate.ts) and pushes the site's whole view to
 * `PUT /sites/{id}/reflections/health/`. The hub derives the device's Healthy condition and
 * operational status from it, and cordons a device that stays critical (impairment).
 */
import { z } from "zod";
import { PrometheusApiError, PrometheusClient, PrometheusUnavailableError } from "@fm/clients";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { pushView, reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { evaluate, type RuleResult } from "./evaluate.ts";
import { DEFAULT_RULES, RulesFileError, loadRules, type HealthRule } from "./rules.ts";

const env = {
  MIMIR_BASE_URL: z
    .url()
    .describe("Prometheus or Mimir query base URL, with Mimir's /prometheus prefix (healthStatusAgent.mimir.baseUrl)"),
  MIMIR_USERNAME: z.string().min(1).optional().describe("Basic auth username (mimir-login username)"),
  MIMIR_PASSWORD: z.string().min(1).optional().describe("Basic auth password (mimir-login password)"),
  MIMIR_ORG_ID: z.string().min(1).optional().describe("Mimir tenant, sent as X-Scope-OrgID"),
  HEALTH_RULES_FILE: z.string().min(1).optional().describe("YAML or JSON rules file; default: the built-in rules"),
};
type HealthEnv = z.infer<z.ZodObject<typeof env>>;

/** One query per rule, in order; a failed query fails the whole read (no partial view is pushed). */
export async function readHealth(
  prometheus: Pick<PrometheusClient, "query">,
  rules: readonly HealthRule[],
  deviceNames: readonly string[],
): Promise<ReturnType<typeof evaluate>> {
  const results: RuleResult[] = [];
  for (const rule of rules) results.push({ rule, samples: await prometheus.query(rule.expr) });
  return evaluate(deviceNames, results);
}

/** The site's device names from the hub, then the rules against Prometheus. */
export function healthReflector(
  ctx: AgentContext<HealthEnv>,
  prometheus: Pick<PrometheusClient, "query">,
  rules: readonly HealthRule[],
): ReflectorSpec<unknown> {
  const { hub, site, log } = ctx;
  return {
    store: "health",
    list: async () => {
      const names: string[] = [];
      for await (const d of hub.allDevices({ site: site.id })) names.push(d.name);
      const { items, unmatchedSeries } = await readHealth(prometheus, rules, names);
      if (unmatchedSeries) log.debug({ store: "health", unmatchedSeries }, "series naming no device of the site");
      return items;
    },
    classifyListError: (err) =>
      err instanceof PrometheusUnavailableError
        ? "prometheus_unavailable"
        : err instanceof PrometheusApiError
          ? "prometheus_http_error"
          : "list_failed",
    push: (items, observedAt) => pushView(hub, site.id, "health", items, observedAt),
    // It reads Prometheus: a hub outage must not restart it at every site.
    hubOutage: "ride-out",
  };
}

export const healthStatusAgent = loopAgent({
  kind: "health-status",
  env,
  async setup(ctx) {
    const { config } = ctx;
    if (Boolean(config.MIMIR_USERNAME) !== Boolean(config.MIMIR_PASSWORD))
      throw new FatalSetupError("MIMIR_USERNAME and MIMIR_PASSWORD go together: set both or neither");
    let rules: readonly HealthRule[] = DEFAULT_RULES;
    if (config.HEALTH_RULES_FILE) {
      try {
        rules = await loadRules(config.HEALTH_RULES_FILE);
      } catch (err) {
        if (err instanceof RulesFileError) throw new FatalSetupError(`HEALTH_RULES_FILE: ${err.message}`);
        throw err;
      }
    }
    const prometheus = new PrometheusClient({
      baseUrl: config.MIMIR_BASE_URL,
      basicAuth:
        config.MIMIR_USERNAME && config.MIMIR_PASSWORD
          ? { username: config.MIMIR_USERNAME, password: config.MIMIR_PASSWORD }
          : undefined,
      orgId: config.MIMIR_ORG_ID,
      timeoutMs: config.FM_HTTP_TIMEOUT_MS,
    });
    ctx.log.info(
      { store: "health", rules: rules.map((r) => r.condition), baseUrl: prometheus.baseUrl },
      "Starting health reflector",
    );
    return [reflector(healthReflector(ctx, prometheus, rules))];
  },
});
