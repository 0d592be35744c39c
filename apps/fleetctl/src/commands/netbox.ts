/**
 * `fleetctl netbox check`: the pre-rollout check of a site's NetBox data (the same check as
 * `npm run netbox:check`, one definition in @fm/clients). The cluster and the role mapping come
 * from the options, else the environment the netbox agent reads, else the hub's NetBox settings
 * (what the agent will actually use), which needs a login.
 */
import { z } from "zod";
import type { IbGuidRow } from "@fm/clients";
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

/**
 * `fleetctl netbox populate-ib-guids`: each Ironic node's InfiniBand port GUIDs (its inspection
 * inventory) into the label of the matching NetBox interface of the device of the same name
 * (planning and matching: @fm/clients `planIbGuids`). A dry run unless --apply. Exit 0 when
 * every port has or gets its GUID; 13 when some port cannot (no matching interface, or a
 * label holding other text), after writing the others with --apply.
 */
export async function populateIbGuids(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json"]);
  const url = (ctx.opts.netboxUrl as string | undefined) ?? ctx.env.NETBOX_URL;
  const token = ctx.env.NETBOX_TOKEN;
  if (!url) throw new UsageError("no NetBox URL: pass --netbox-url or set NETBOX_URL");
  if (!token) throw new UsageError("no NetBox token: set NETBOX_TOKEN");
  const site = ctx.opts.site as string | undefined;
  const only = ctx.opts.device as string | undefined;
  const apply = Boolean(ctx.opts.apply);
  const { deploymentCloud } = await import("./openstack.ts");
  const cloud = await deploymentCloud(ctx);
  const { NetboxClient, applyIbGuids, ironicClientFor, planIbGuids } = await import("@fm/clients");
  const netbox = new NetboxClient({ url, token, maxAttempts: 2 });
  const ironic = await ironicClientFor(cloud, { maxAttempts: 2 });
  const rows: IbGuidRow[] = [];
  const skipped: { device: string; reason: string }[] = [];
  let written = 0;
  try {
    const nodes = (await ironic.listNodes()).filter((n) => n.name && (!only || n.name === only));
    if (only && !nodes.length) throw new CliError(`Ironic has no node named ${JSON.stringify(only)}`, EXIT.NOT_FOUND);
    for (const node of nodes.sort((a, b) => a.name!.localeCompare(b.name!))) {
      const name = node.name!;
      const [device] = await netbox.devices({ name, ...(site ? { site } : {}) });
      if (!device) {
        skipped.push({ device: name, reason: site ? `no NetBox device of that name at ${site}` : "not in NetBox" });
        continue;
      }
      const inventory = await ironic.nodeInventory(node.uuid);
      if (!inventory) {
        skipped.push({ device: name, reason: "Ironic holds no inspection inventory for its node" });
        continue;
      }
      rows.push(
        ...planIbGuids(name, inventory.inventory.interfaces, await netbox.interfaces({ device_id: device.id })),
      );
    }
    if (apply) written = await applyIbGuids(netbox, rows);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`populate-ib-guids failed: ${(err as Error).message}`);
  }
  const unresolved = rows.filter((r) => r.action === "other-label" || r.action === "no-interface").length;
  if (out.format === "json") ctx.out(`${JSON.stringify({ apply, written, ports: rows, skipped }, null, 2)}\n`);
  else ctx.out(formatIbGuidPlan(rows, skipped, apply ? written : null));
  if (unresolved) process.exitCode = EXIT.CHECK_FAILED;
}

const ACTION_TEXT: Record<IbGuidRow["action"], [plan: string, applied: string]> = {
  write: ["would write", "written"],
  unchanged: ["unchanged", "unchanged"],
  "other-label": ["left alone: the label is not a GUID", "left alone: the label is not a GUID"],
  "no-interface": ["no matching NetBox interface", "no matching NetBox interface"],
};

/** The plan as a table; `written` is null for a dry run. */
function formatIbGuidPlan(rows: IbGuidRow[], skipped: { device: string; reason: string }[], written: number | null) {
  const apply = written !== null;
  const lines = rows.map((r) => [
    r.device,
    r.port,
    r.guid,
    r.interface?.name ?? "-",
    r.interface?.label || "-",
    ACTION_TEXT[r.action][apply ? 1 : 0],
  ]);
  const table = [["DEVICE", "PORT", "GUID", "INTERFACE", "LABEL", "ACTION"], ...lines];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((l) => l[c]!.length)));
  const text = table.map((l) =>
    l
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join("  ")
      .trimEnd(),
  );
  for (const s of skipped) text.push(`${s.device}: skipped, ${s.reason}`);
  const writes = rows.filter((r) => r.action === "write").length;
  text.push(
    rows.length || skipped.length
      ? apply
        ? `${written} label(s) written.`
        : `${writes} label(s) to write: run again with --apply to write them.`
      : "No Ironic node to look at.",
  );
  return `${text.join("\n")}\n`;
}
