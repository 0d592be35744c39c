/** What the api commands share: the session, the output options, and names resolved to ids. */
import type { HubClient } from "@fm/clients";
import { DeviceBriefListSchema } from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { CliError, UsageError } from "../errors.ts";
import { EXIT } from "../exit-codes.ts";
import {
  COLUMN_FORMATS,
  colorWanted,
  outputFormat,
  parseOutput,
  type OutputFormat,
  type OutputOptions,
} from "../output.ts";
import { openSession, type Session } from "../session.ts";

export const session = (ctx: Ctx): Promise<Session> =>
  openSession({ profile: ctx.opts.profile as string | undefined, hub: ctx.opts.hub as string | undefined }, ctx.env);

export function output(ctx: Ctx, allowed?: readonly OutputFormat[]): OutputOptions {
  const parsed = parseOutput(ctx.opts, allowed);
  const columns = ctx.opts.column as string[] | undefined;
  if (columns?.length && !COLUMN_FORMATS.includes(parsed.format))
    throw new UsageError(
      `-c chooses columns of -o ${COLUMN_FORMATS.join(", ")}; -o ${parsed.format} shows every field`,
    );
  return {
    ...parsed,
    color: colorWanted(),
    noHeaders: ctx.opts.headers === false,
    ...(columns?.length ? { columns } : {}),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID.test(s);

/** A site's id from its slug or id (a slug that names no site is exit 3). */
export async function siteId(hub: HubClient, slugOrId: string): Promise<string> {
  if (isUuid(slugOrId)) return slugOrId;
  const site = await hub.findSite(slugOrId);
  if (!site) throw notFound("site", slugOrId);
  return site.id;
}

/** A device's id from its name or id. */
export async function deviceId(hub: HubClient, nameOrId: string): Promise<string> {
  if (isUuid(nameOrId)) return nameOrId;
  const page = await hub.request("GET", "/api/v1/devices/", DeviceBriefListSchema, {
    query: { nameExact: nameOrId, limit: 1, brief: true },
  });
  const item = page.body.items[0];
  if (!item) throw notFound("device", nameOrId);
  return item.id;
}

export const notFound = (kind: string, name: string): CliError =>
  new CliError(`no ${kind} named ${JSON.stringify(name)}`, EXIT.NOT_FOUND);

/** --limit as a page size: an integer from 1 to 1000. */
export function limitOption(ctx: Ctx): number {
  const raw = ctx.opts.limit;
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError(`--limit must be an integer from 1 to 1000`);
  return n;
}

/**
 * One page of a list (--limit), or every page (--all), with the total the hub counted. A
 * truncated table says so on stderr; json/yaml carry `count`.
 */
export async function collect<T>(
  ctx: Ctx,
  page: (q: { limit: number; cursor?: string }) => Promise<{ items: T[]; count: number; nextCursor?: string | null }>,
): Promise<{ items: T[]; count: number; truncated: boolean }> {
  // -o count needs only the hub's count: one item is fetched.
  const counting = outputFormat(ctx.opts) === "count";
  if (!ctx.opts.all || counting) {
    const p = await page({ limit: counting ? 1 : limitOption(ctx) });
    return { items: p.items, count: p.count, truncated: Boolean(p.nextCursor) };
  }
  const items: T[] = [];
  let cursor: string | undefined;
  let count = 0;
  do {
    const p = await page({ limit: 1000, cursor });
    items.push(...p.items);
    count = p.count;
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
  return { items, count, truncated: false };
}

/** What a table leaves unsaid, on stderr: that it is empty, or that it shows only part of the list. */
export function truncationNote(ctx: Ctx, o: OutputOptions, shown: number, count: number, truncated: boolean) {
  if (o.format !== "table" && o.format !== "wide") return;
  if (shown === 0) ctx.err("Nothing found.\n");
  else if (truncated) ctx.err(`(${shown} of ${count} shown: --limit or --all for more)\n`);
}

/** An option given as "true"/"false" (choices checked by the parser) as a boolean. */
export const bool = (v: unknown): boolean | undefined => (v === undefined ? undefined : v === "true");

/** Zod issues as a usage error naming the options (`deviceClass` → `--device-class`). */
export function usageFromIssues(issues: { path: PropertyKey[]; message: string }[], prefix = "--"): UsageError {
  const lines = issues.map((i) => {
    const name = i.path.map(String).join(".");
    return `${name ? `${prefix}${kebab(name)}` : "(input)"}: ${i.message}`;
  });
  return new UsageError(lines.join("; "));
}
export const kebab = (s: string): string => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
