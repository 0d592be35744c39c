/**
 * `fleetctl api device describe NAME`: kubectl's describe for a device, the page an operator
 * reads before acting. Its state and why (conditions with reasons), each source's view and how
 * old it is, Ironic's last error, the cordon and who set it, the active job, recent history.
 * Every value from a source is printed terminal-safe; -o json|yaml give the same facts as data.
 */
import {
  DeviceHistoryListSchema,
  DeviceSchema,
  JobListSchema,
  type Device,
  type DeviceHistoryEntry,
  type Job,
} from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { age, jsonText, renderTable, type OutputOptions } from "../output.ts";
import { terminalSafe } from "../terminal-text.ts";
import { cordonSummary } from "./devices.ts";
import { deviceId, output, session } from "./common.ts";

const HISTORY_SHOWN = 10;

export async function describe(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const { hub } = await session(ctx);
  const id = await deviceId(hub, String(ctx.args[0]));
  const [device, history, jobs] = await Promise.all([
    hub.request("GET", `/api/v1/devices/${id}/`, DeviceSchema),
    hub.request("GET", `/api/v1/devices/${id}/history/`, DeviceHistoryListSchema, {
      query: { order: "desc", limit: HISTORY_SHOWN },
    }),
    hub.request("GET", "/api/v1/jobs/", JobListSchema, { query: { device: id, active: "true", limit: 5 } }),
  ]);
  const facts = { device: device.body, activeJobs: jobs.body.items, recentHistory: history.body.items };
  if (out.format === "json") return ctx.out(jsonText(facts));
  if (out.format === "yaml") return ctx.out((await import("../yaml-text.ts")).yamlText(facts));
  ctx.out(await describeText(facts, out));
}

const safe = (v: unknown): string =>
  v === null || v === undefined || v === "" ? "-" : terminalSafe(typeof v === "string" ? v : String(v));
const observed = (at: string | null) => (at ? `${at} (${age(at)} ago)` : "never");

export async function describeText(
  f: { device: Device; activeJobs: Job[]; recentHistory: DeviceHistoryEntry[] },
  o: OutputOptions,
): Promise<string> {
  const d = f.device;
  const field = (k: string, v: unknown) => `${`${k}:`.padEnd(20)}${safe(v)}`;
  const lines = [
    field("Name", d.name),
    field("Site", d.site.slug),
    field("Serial", d.serial),
    field("Role", d.role ? `${d.role.slug} (${d.role.deviceClass})` : null),
    field("Status", `${d.operationalStatus}${d.stale ? " (stale)" : ""}`),
    field("Cordoned", d.cordoned ? `yes: ${cordonSummary(d)}` : "no"),
    field("Notes", d.notes),
    field("Burn-in", d.burnIn ? `${d.burnIn.status} (${age(d.burnIn.at)} ago)` : null),
    field("Created", `${d.createdAt} (${age(d.createdAt)} ago)`),
    "",
    "Conditions:",
  ];
  const plain = { ...o, format: "table" as const, noHeaders: false };
  const indent = (t: string) =>
    t
      .trimEnd()
      .split("\n")
      .map((l) => `  ${l}`)
      .join("\n");
  lines.push(
    indent(
      await renderTable(
        {
          kind: "condition",
          name: (c) => c.type,
          columns: [
            { header: "type", value: (c) => c.type },
            { header: "status", value: (c) => c.status },
            { header: "since", value: (c) => age(c.lastTransitionTime) },
            { header: "reason", value: (c) => c.reason },
            { header: "message", value: (c) => c.message },
          ],
        },
        d.conditions,
        plain,
      ),
    ) || "  (none)",
    "",
    "Sources:",
    `  NetBox:    ${safe(d.netbox.status)}${d.netbox.missing ? " (missing from NetBox)" : ""}; observed ${observed(d.netbox.observedAt)}`,
    `  Ironic:    ${safe(d.ironic.provisionState)}, power ${safe(d.ironic.powerState)}${d.ironic.maintenance ? `, maintenance: ${safe(d.ironic.maintenanceReason)}` : ""}; observed ${observed(d.ironic.observedAt)}`,
    `             last error: ${safe(d.ironic.lastError)}`,
    `  SLURM:     ${safe(d.slurm.state)}${d.slurm.reason ? `, reason: ${safe(d.slurm.reason)}` : ""}; observed ${observed(d.slurm.observedAt)}`,
    `  Health:    ${safe(d.health.status)}${d.health.conditions.length ? ` (${d.health.conditions.map((c) => `${safe(c.name)}=${safe(c.status)}${c.message ? `: ${safe(c.message)}` : ""}`).join("; ")})` : ""}; observed ${observed(d.health.observedAt)}`,
    "",
    "Active job:",
    ...(f.activeJobs.length
      ? f.activeJobs.map(
          (j) => `  ${safe(j.name)}  ${j.kind}  ${j.status}  ${Math.round(j.progress * 100)}%  ${age(j.createdAt)} ago`,
        )
      : ["  (none)"]),
    "",
    `Recent history (last ${HISTORY_SHOWN}):`,
    ...(f.recentHistory.length
      ? f.recentHistory.map(
          (h) =>
            `  ${age(h.changedAt)} ago  ${safe(h.field)}: ${safe(JSON.stringify(h.oldValue))} -> ${safe(JSON.stringify(h.newValue))}  (${safe(h.source)}${h.principal ? `, ${safe(h.principal)}` : ""})`,
        )
      : ["  (none)"]),
  );
  return `${lines.join("\n")}\n`;
}
