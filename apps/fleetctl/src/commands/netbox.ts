/**
 * `fleetctl netbox check`: the pre-rollout check of a site's NetBox data (the same check as
 * `npm run netbox:check`, one definition in @fm/clients). The cluster and the role mapping come
 * from the options, else the environment the netbox agent reads, else the hub's NetBox settings
 * (what the agent will actually use), which needs a login.
 */
import { z } from "zod";
import { DEVICE_CLASSES } from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import { output, session } from "./common.ts";

const Mapping = z.record(z.string().min(1), z.enum(DEVICE_CLASSES));

function parseMapping(text: string, from: string) {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`${from} is not JSON`);
  }
  const m = Mapping.safeParse(raw);
  if (!m.success) throw new UsageError(`${from} must map role slugs to ${DEVICE_CLASSES.join(", ")}`);
  return m.data;
}

export async function check(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json"]);
  const url = (ctx.opts.netboxUrl as string | undefined) ?? ctx.env.NETBOX_URL;
  const token = ctx.env.NETBOX_TOKEN;
  if (!url) throw new UsageError("no NetBox URL: pass --netbox-url or set NETBOX_URL");
  if (!token) throw new UsageError("no NetBox token: set NETBOX_TOKEN");
  const site = String(ctx.opts.site);
  const mappingText = (ctx.opts.mapping as string | undefined) ?? ctx.env.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING;
  let mapping = mappingText === undefined ? undefined : parseMapping(mappingText, "the role mapping");
  let cluster = ctx.opts.cluster as string | undefined;
  if (!mapping || !cluster) {
    const { hub } = await session(ctx);
    const settings = await hub.netboxSettings();
    mapping ??= settings.deviceRoleClassMapping;
    cluster ??= settings.deviceFilters.find((f) => f.site === site)?.clusters[0];
    if (!cluster) throw new UsageError(`the hub's NetBox settings name no cluster for site ${site}: pass --cluster`);
  }
  const { NetboxClient, checkNetboxSite, formatFindings } = await import("@fm/clients");
  const netbox = new NetboxClient({ url, token, maxAttempts: 2 });
  let findings;
  try {
    findings = await checkNetboxSite(netbox, { site, cluster, mapping });
  } catch (err) {
    throw new CliError(`netbox check failed: ${(err as Error).message}`);
  }
  const failed = findings.filter((f) => f.severity === "fail").length;
  ctx.out(
    out.format === "json" ? `${JSON.stringify({ ok: failed === 0, findings }, null, 2)}\n` : formatFindings(findings),
  );
  if (failed) process.exitCode = EXIT.CHECK_FAILED;
}
