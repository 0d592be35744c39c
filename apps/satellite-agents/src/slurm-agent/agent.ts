/**
 * The SLURM agent (rollout guide, "Connect the Site to SLURM"): one reflector, store
 * `slurm-nodes`, that lists every node of the site's cluster from slurmrestd (state, flags,
 * reason, partitions), applies hub cordons as drains (./cordon.ts plans them, ./drain.ts makes
 * them) and pushes the whole view to `PUT /sites/{id}/reflections/slurm/`. Node names map to
 * devices through `SLURM_DEVICE_NAME_PREFIX` (./nodes.ts). The JWT is read from its file at every
 * request, so a rotated token needs no restart.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { SlurmApiError, SlurmClient, SlurmUnavailableError, canUpdateNode } from "@fm/clients";
import { SlurmDeviceNamePrefix, type SlurmItem } from "@fm/domain";
import { loopAgent, type AgentContext } from "../runtime/agent.ts";
import { describeError } from "../runtime/log.ts";
import { pushView, reflector, type ReflectorSpec } from "../runtime/reflector.ts";
import { FatalSetupError } from "../runtime/setup-retry.ts";
import { planDrains } from "./cordon.ts";
import { restDrainer, scontrolDrainer, type NodeDrainer } from "./drain.ts";
import { nodeNameOf, toReflectionItem } from "./nodes.ts";

export const SLURM_STORE = "slurm-nodes";

const env = {
  SLURM_URL: z.url().describe("slurmrestd base URL (temporalWorker.slurm.baseUrl)"),
  SLURM_API_VERSION: z
    .string()
    .regex(/^v0\.0\.\d+$/)
    .default("v0.0.38")
    .describe("slurmrestd OpenAPI plugin version (Debian's 22.05: v0.0.38; the guide's sites: v0.0.43)"),
  SLURM_USER: z
    .string()
    .min(1)
    .default("hpcadmin")
    .describe("X-SLURM-USER-NAME: the user the JWT was made for (the guide's hpcadmin)"),
  SLURM_TOKEN_FILE: z
    .string()
    .min(1)
    .describe("File holding the slurmrestd JWT (re-read on every request, so rotation needs no restart)"),
  SLURM_DEVICE_NAME_PREFIX: SlurmDeviceNamePrefix,
  SLURM_DRAIN_VIA: z
    .enum(["auto", "rest", "scontrol"])
    .default("auto")
    .describe("How cordons drain nodes: slurmrestd's node update (v0.0.40+), scontrol, or auto (by API version)"),
  SLURM_SCONTROL: z.string().min(1).default("scontrol").describe("The scontrol executable (SLURM_DRAIN_VIA scontrol)"),
  FM_CORDON_SYNC: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Mirror hub cordons as SLURM drains"),
};
type SlurmEnv = z.infer<z.ZodObject<typeof env>>;

/** Reads the JWT; never puts it in a message. */
export function tokenReader(file: string): () => string {
  return () => {
    const token = readFileSync(file, "utf8").trim();
    if (!token) throw new Error(`SLURM_TOKEN_FILE ${file} is empty`);
    return token;
  };
}

export function slurmDrainer(
  config: Pick<SlurmEnv, "SLURM_DRAIN_VIA" | "SLURM_SCONTROL" | "SLURM_TOKEN_FILE"> & { FM_HTTP_TIMEOUT_MS: number },
  client: SlurmClient,
): NodeDrainer {
  const via =
    config.SLURM_DRAIN_VIA === "auto"
      ? canUpdateNode(client.apiVersion)
        ? "rest"
        : "scontrol"
      : config.SLURM_DRAIN_VIA;
  if (via === "rest") {
    if (!canUpdateNode(client.apiVersion))
      throw new FatalSetupError(
        `SLURM_DRAIN_VIA=rest: slurmrestd ${client.apiVersion} has no node update (v0.0.40 and later); use scontrol or auto`,
      );
    return restDrainer(client);
  }
  return scontrolDrainer({
    command: config.SLURM_SCONTROL,
    token: tokenReader(config.SLURM_TOKEN_FILE),
    timeoutMs: config.FM_HTTP_TIMEOUT_MS,
  });
}

export function slurmReflector(
  ctx: AgentContext<SlurmEnv>,
  client: SlurmClient,
  drainer: NodeDrainer,
): ReflectorSpec<SlurmItem> {
  const { hub, site, config } = ctx;
  return {
    store: SLURM_STORE,
    list: async () => (await client.nodes()).map((n) => toReflectionItem(n, config.SLURM_DEVICE_NAME_PREFIX)),
    classifyListError: (err) =>
      err instanceof SlurmUnavailableError
        ? "slurm_unavailable"
        : err instanceof SlurmApiError
          ? "slurm_http_error"
          : "list_failed",
    ...(config.FM_CORDON_SYNC ? { reconcile: (items) => mirrorCordons(ctx, drainer, items) } : {}),
    push: (items, observedAt) => pushView(hub, site.id, "slurm", items, observedAt),
    // It reads SLURM: a hub outage must not restart it at every site, and its age is SLURM's.
    hubOutage: "ride-out",
  };
}

/**
 * The hub's cordons as SLURM drains; returns the nodes as they are now. One node failing does
 * not hold back the others or the push: it is retried next cycle.
 */
async function mirrorCordons(
  { hub, site, log, metrics, config }: AgentContext<SlurmEnv>,
  drainer: NodeDrainer,
  items: SlurmItem[],
): Promise<SlurmItem[]> {
  const cordoned = [];
  for await (const d of hub.allDevices({ site: site.id, cordoned: true })) {
    const node = nodeNameOf(d, config.SLURM_DEVICE_NAME_PREFIX);
    if (node) cordoned.push({ node, reason: d.cordonReason });
  }
  const plan = planDrains(items, cordoned);
  if (!plan.length) return items;
  const byName = new Map(items.map((i) => [i.name, i]));
  for (const step of plan) {
    try {
      const item = byName.get(step.node)!;
      if (step.action === "drain") {
        await drainer.drain(step.node, step.reason);
        byName.set(step.node, { ...item, flags: [...new Set([...item.flags, "DRAIN"])], reason: step.reason });
      } else {
        await drainer.undrain(step.node);
        byName.set(step.node, { ...item, flags: item.flags.filter((f) => f !== "DRAIN"), reason: null });
      }
      log.info(
        { store: SLURM_STORE, node: step.node, action: step.action, via: drainer.via },
        step.action === "drain" ? "cordon: SLURM node drained" : "uncordon: SLURM drain cleared",
      );
    } catch (err) {
      metrics.errors.inc({ store: SLURM_STORE, reason: "drain_failed" });
      log.error(
        { store: SLURM_STORE, node: step.node, action: step.action, via: drainer.via, err: describeError(err) },
        "could not change the SLURM drain",
      );
    }
  }
  return [...byName.values()];
}

export const slurmAgent = loopAgent({
  kind: "slurm",
  env,
  async setup(ctx) {
    const { config } = ctx;
    const token = tokenReader(config.SLURM_TOKEN_FILE);
    try {
      token();
    } catch (err) {
      // A missing or empty secret mount does not fix itself by retrying.
      throw new FatalSetupError(`SLURM_TOKEN_FILE: ${(err as Error).message}`);
    }
    let client: SlurmClient;
    try {
      client = new SlurmClient({
        baseUrl: config.SLURM_URL,
        apiVersion: config.SLURM_API_VERSION,
        user: config.SLURM_USER,
        token,
        timeoutMs: config.FM_HTTP_TIMEOUT_MS,
      });
    } catch (err) {
      throw new FatalSetupError(`SLURM_API_VERSION: ${(err as Error).message}`);
    }
    const drainer = slurmDrainer(config, client);
    ctx.log.info(
      {
        store: SLURM_STORE,
        apiVersion: client.apiVersion,
        user: config.SLURM_USER,
        drainVia: config.FM_CORDON_SYNC ? drainer.via : "off",
      },
      `Starting reflector for SLURM at ${client.baseUrl}`,
    );
    return [reflector(slurmReflector(ctx, client, drainer))];
  },
});
