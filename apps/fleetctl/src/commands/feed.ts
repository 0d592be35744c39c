/** `fleetctl api feed tail` and `fleetctl api discrepancy ...` */
import {
  DiscrepancyKind,
  DiscrepancyListSchema,
  DiscrepancySummarySchema,
  type Discrepancy,
  type InventoryEvent,
} from "@fm/domain";
import type { HubClient } from "@fm/clients";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { renderList, renderOne, type View } from "../output.ts";
import { collect, output, session, siteId, truncationNote } from "./common.ts";

/** The longest long-poll the hub allows; a quiet feed costs one request per this. */
const FOLLOW_WAIT_S = 30;

/** The feed's head (the last position given so far): a read from `latest` returns no event, only it. */
export async function headPosition(hub: HubClient): Promise<number> {
  return Number((await hub.readFeed({ after: "latest", limit: 1 })).head);
}

const eventName = (e: InventoryEvent) => {
  const d = e.data as { name?: unknown; slug?: unknown };
  return String(d.slug ?? d.name ?? e.resourceId);
};
export const eventLine = (e: InventoryEvent) =>
  `${e.position}  ${e.occurredAt}  ${e.type.padEnd(24)}  ${eventName(e)}\n`;

export async function feedTail(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json"]);
  const lines = Number(ctx.opts.lines ?? 10);
  if (!Number.isInteger(lines) || lines < 0 || lines > 1000) throw new UsageError("--lines must be from 0 to 1000");
  const given = ctx.opts.after as string | undefined;
  if (given !== undefined && !/^\d{1,15}$/.test(given)) throw new UsageError("--after must be a feed position");
  const site = ctx.opts.site as string[] | undefined;
  const { hub } = await session(ctx);
  let after = given ?? String(Math.max(0, (await headPosition(hub)) - lines));
  const print = (e: InventoryEvent) => ctx.out(out.format === "json" ? `${JSON.stringify(e)}\n` : eventLine(e));
  // Without --follow: what is there now (from --after, or the last --lines events), and stop.
  for (;;) {
    const page = await hub.readFeed({ after, limit: 1000, wait: ctx.opts.follow ? FOLLOW_WAIT_S : 0, site });
    page.items.forEach(print);
    after = page.nextAfter;
    if (!ctx.opts.follow && page.items.length < 1000) return;
  }
}

const DISCREPANCY_VIEW: View<Discrepancy> = {
  kind: "discrepancy",
  name: (d) => `${d.kind}/${d.name}`,
  columns: [
    { header: "kind", value: (d) => d.kind },
    { header: "name", value: (d) => d.name },
    { header: "since", value: (d) => d.since },
    {
      header: "observed",
      value: (d) =>
        Object.entries(d.observed)
          .map(([k, v]) => `${k}=${v ?? "null"}`)
          .join(" "),
      wide: true,
    },
  ],
};

export async function discrepancyList(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const kind = ctx.opts.kind as string | undefined;
  if (kind !== undefined && !DiscrepancyKind.safeParse(kind).success)
    throw new UsageError(
      `--kind ${JSON.stringify(kind)} is not a discrepancy kind`,
      DiscrepancyKind.options.join(", "),
    );
  const { hub } = await session(ctx);
  const site = await siteId(hub, String(ctx.opts.site));
  const r = await collect(
    ctx,
    async (p) =>
      (
        await hub.request("GET", `/api/v1/sites/${site}/discrepancies/`, DiscrepancyListSchema, {
          query: { ...p, kind },
        })
      ).body,
  );
  ctx.out(await renderList(DISCREPANCY_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function discrepancySummary(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const { hub } = await session(ctx);
  const s = (await hub.request("GET", "/api/v1/discrepancies/summary", DiscrepancySummarySchema)).body;
  if (out.format !== "table") {
    ctx.out(await renderOne({ kind: "summary", name: () => "summary", columns: [] }, s, out));
    return;
  }
  const rows = Object.entries(s.byKind).map(([kind, n]) => ({ kind, n }));
  ctx.out(
    await renderList(
      {
        kind: "kind",
        name: (r) => r.kind,
        columns: [
          { header: "kind", value: (r) => r.kind },
          { header: "open", value: (r) => r.n },
        ],
      },
      { items: rows, count: rows.length },
      out,
    ),
  );
  ctx.out(`total ${s.total}\n`);
}
